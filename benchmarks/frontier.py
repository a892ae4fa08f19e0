"""Frontier benchmark: a 50-point λ sweep plus every peer on a cached pool.

``sweep`` reuses the pool's compressed validation votes (``pool.votes("val")``, built with the
pool); the baseline in the same run is the same 50 solves each given the raw validation votes
(``solve(C, ones)``, compressing every time), as a caller without them would do.  Targets: under 1 s on every UCI dataset, under 5 s on NSL-KDD.
"""

import time

import numpy as np

from harness.common import table
from sdwec import correctness_matrix, datasets, frontier, solve
from sdwec.pool import load_pool
from sdwec.solver import PRESETS


def run(quick=False, log=print):
    names = ["wine", "sonar"] if quick else datasets.names()
    rows = []
    b = {k: v for k, v in PRESETS["SDWEC-B"].items() if k != "lam"}
    for name in names:
        pool = load_pool(name, "binary", n_trees=200, seed=0, n_jobs=-1)
        start = time.perf_counter()
        points = frontier.sweep(pool, lams=frontier.DEFAULT_LAMS)
        t_sweep = time.perf_counter() - start
        start = time.perf_counter()
        peers = frontier.peers(pool, names=frontier.paper_peers())  # as the Frontier page
        t_peers = time.perf_counter() - start
        C = correctness_matrix(pool.P_val, pool.y_val)
        ones = np.ones(len(C))
        start = time.perf_counter()
        for lam in frontier.DEFAULT_LAMS:
            solve(C, ones, lam=float(lam), **b)
        t_base = time.perf_counter() - start
        total = t_sweep + t_peers
        rows.append([name, len(pool.y_val), len(points), len(peers), f"{t_sweep:.3f}",
                     f"{t_peers:.3f}", f"{total:.3f}", f"{t_base:.3f}", f"{t_base / t_sweep:.1f}x"])
        log(f"frontier {name}: {rows[-1]}")
    text = table(["dataset", "validation rows", "SDWEC points", "peer points", "sweep s",
                  "peers s", "total s", "baseline sweep s", "sweep speed-up"], rows)
    return "## Frontier\n\n" + __doc__.strip() + "\n\n" + text + "\n"


if __name__ == "__main__":
    import sys

    print(run(quick="--quick" in sys.argv))
