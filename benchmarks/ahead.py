"""What computing ahead costs, per shipped dataset: ``python -m benchmarks.ahead``.

For each dataset at its default splits and l = 200, from the Explorer's default setting
(the paper's SDWEC-B), every block of answers around it (:func:`dashboard.ahead.cross`: the
19 λ, the 101 β, the 100 γ and the 13 ε of the sliders, each with the others fixed) is
computed by the background thread's own code, one block after another as the thread does,
and written to a folder: the CPU seconds (this process, one thread), the bytes of the files
(what a browser reads, once), the answers, and the process's peak resident memory over the
pools it holds.  Writes ``results/ahead.md``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from dashboard import ahead, explorer_answer
from dashboard.config import Config, dataset_splits
from dashboard.explorer_cache import GRIDS
from harness.common import machine, table
from sdwec import comparison, datasets, pool


def _rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(name, n_trees=200, folder=None):
    """One dataset's cross from the default setting: a dict of its costs."""
    config = Config(dataset=name, n_trees=n_trees)
    splits = dataset_splits(name)
    pools = [pool.load_pool(name, datasets.tasks(name)[0], n_trees=n_trees, seed=s)
             for s in range(splits)]
    rss_pools = _rss_mib()
    store = ahead.Ahead(folder or tempfile.mkdtemp(prefix="sdwec-ahead-"))
    store.usable()
    setting = {"lam": config.lam, "beta": config.beta, "gamma": config.gamma,
               "eps": config.eps}
    blocks = ahead.cross(name, setting, GRIDS)

    def compute(changes):
        results = comparison.compare_many(pools, config.fit_on,
                                          params=config.params.replace(**changes))
        return explorer_answer.answer(results, config.fit_on)

    start, cpu0 = time.perf_counter(), time.process_time()
    first = None
    answers = 0
    for block in blocks:
        found = {}
        for value in block.values:
            answer = compute({block.param: value})
            found[answer["key"]] = answer
        store._write(block, found)
        answers += len(found)
        if first is None:
            first = time.perf_counter() - start  # the λ line: the first file a page reads
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    sizes = [store.path(b).stat().st_size for b in blocks]
    return {"dataset": name, "splits": splits, "answers": answers, "blocks": len(blocks),
            "lambda_s": first, "wall_s": wall, "cpu_s": cpu, "bytes": sum(sizes),
            "lambda_bytes": sizes[0], "rss_pools": rss_pools, "rss_peak": _rss_mib()}


def report(rows, command):
    lines = [f"# Computing ahead: what it costs per dataset\n\nRun: "
             f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, `{command}`; "
             f"machine: {machine()}; load average at the end "
             f"{' / '.join(f'{v:.2f}' for v in os.getloadavg())}.\n",
             "From the Explorer's default setting (SDWEC-B, l = 200, the dataset's default "
             "splits), every answer a slider can reach with the others fixed: the 19 λ of "
             "the grid, then the 101 β, 100 γ and 13 ε in blocks of ten, nearest first. "
             "**λ line**: the time until the first file, which a λ drag reads, is written. "
             "**CPU**: one thread, as the server's background thread runs (it yields to the "
             "pages: a lower CPU priority). **bytes**: gzip files a browser reads once (the "
             "static route sends them as they are); the websocket carries only their names. "
             "**memory**: the process's peak resident memory, over what it held with the pools "
             "loaded (the answers go to disk block by block).\n"]
    body = []
    for r in rows:
        body.append([r["dataset"], str(r["splits"]), str(r["answers"]),
                     f"{r['lambda_s']:.1f}", f"{r['wall_s']:.1f}", f"{r['cpu_s']:.1f}",
                     f"{r['lambda_bytes'] / 1024:.0f}", f"{r['bytes'] / 1024:.0f}",
                     f"{r['rss_peak'] - r['rss_pools']:.0f}"])
    lines.append(table(["dataset", "splits", "answers", "λ line (s)", "all (s)", "CPU (s)",
                        "λ line (KiB)", "all (KiB)", "memory over the pools (MiB)"], body))
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ahead", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="*", default=list(datasets.names()))
    parser.add_argument("--trees", type=int, default=200)
    parser.add_argument("--out", default="results/ahead.md")
    args = parser.parse_args(argv)
    rows = []
    for name in args.datasets:
        rows.append(measure(name, args.trees))
        print(rows[-1], flush=True)
    text = report(rows, " ".join(["python -m benchmarks.ahead",
                                  *(sys.argv[1:] if argv is None else argv)]))
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
