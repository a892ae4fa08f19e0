"""One pool built here and on a Dask cluster, side by side.

    dask scheduler --host 127.0.0.1 --port 18786 --no-dashboard &
    dask worker tcp://127.0.0.1:18786 --host 127.0.0.1 --nthreads 1 --no-dashboard &   # twice
    python -m benchmarks.dask_pool --scheduler tcp://127.0.0.1:18786 --dataset waveform

Builds the same pool (no disk cache) three ways, in turn, ``--repeats`` times: on one local
core (the dashboard's default), on every local core (``n_jobs=-1``), and on the cluster
(``$SDWEC_DASK_SCHEDULER``); prints the median and range of each, the ratios to the one-core
build, and whether the cluster's votes equal the local ones.  The first cluster build of the
process also connects the client and has the workers import scikit-learn: it is reported
apart, and not in the median.
"""

import argparse
import os
import time

import numpy as np

from harness.common import machine, median, table
from sdwec import cluster, datasets, pool


def _build(data, trees, n_jobs, scheduler):
    os.environ.pop(cluster.DASK_ENV, None)
    if scheduler:
        os.environ[cluster.DASK_ENV] = scheduler
    try:
        start = time.perf_counter()
        built = pool.build_pool(data.X, data.y, n_trees=trees, seed=0, n_jobs=n_jobs)
        return time.perf_counter() - start, built
    finally:
        os.environ.pop(cluster.DASK_ENV, None)


def run(scheduler, name="waveform", trees=200, repeats=3):
    data = datasets.load(name)
    load = os.getloadavg()
    ways = {"this machine, 1 core": (None, None), "this machine, every core": (-1, None),
            "Dask cluster": (None, scheduler)}
    first, reference = _build(data, trees, None, scheduler)  # connect, warm the workers
    times = {way: [] for way in ways}
    same = True
    for _ in range(repeats):
        for way, (n_jobs, address) in ways.items():
            seconds, built = _build(data, trees, n_jobs, address)
            times[way].append(seconds)
            same &= bool(np.array_equal(built.P_val, reference.P_val)
                         and np.array_equal(built.in_bag_bits, reference.in_bag_bits))
    base = median(times["this machine, 1 core"])
    rows = [[way, f"{median(t):.1f}", f"{min(t):.1f}–{max(t):.1f}", f"{median(t) / base:.2f}"]
            for way, t in times.items()]
    rows.append(["Dask cluster, first build (connect + warm-up)", f"{first:.1f}", "", ""])
    return (f"### {name}, l = {trees}: one pool built three ways\n\n"
            f"Machine: {machine()}; load average (1, 5, 15 min) before / after: "
            f"{', '.join(f'{v:.1f}' for v in load)} / "
            f"{', '.join(f'{v:.1f}' for v in os.getloadavg())}\n\n"
            + table(["build", "median s", "range s", "÷ 1 core"], rows)
            + f"\n\n{repeats} builds each, interleaved. Same votes and bootstrap samples on "
              f"every build: {'yes' if same else 'NO'}.\n")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.dask_pool", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scheduler", required=True, help="e.g. tcp://127.0.0.1:18786")
    parser.add_argument("--dataset", default="waveform")
    parser.add_argument("--trees", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(run(args.scheduler, args.dataset, args.trees, args.repeats))


if __name__ == "__main__":
    main()
