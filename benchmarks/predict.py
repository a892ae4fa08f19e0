"""Prediction benchmark: the SDWEC-B-pruned ensemble against the full 200-tree ensemble.

Measured on each dataset's test split (the paper's "testing time" claim), with
``sdwec.timing.measure`` (interleaved runs, median of repeats).  The paper's formula predicts a
speed-up of 1 / (1 - sparsity); the measured ratio is full / pruned time.
"""

from benchmarks.common import table
from sdwec import datasets, solve, timing
from sdwec.pool import load_pool
from sdwec.solver import PRESETS


def run(quick=False, log=print):
    names = ["wine", "sonar"] if quick else datasets.names()
    rows = []
    for name in names:
        pool = load_pool(name, "binary", n_trees=200, seed=0, n_jobs=-1)
        sol = solve(pool.table, None, **PRESETS["SDWEC-B"])
        t = timing.measure(pool.estimators, sol.weights, pool.X_test, pool.classes, pool.prior,
                           repeats=5)
        formula = 1 / (1 - sol.sparsity) if sol.sparsity < 1 else float("inf")
        rows.append([name, t.n_rows, f"{sol.sparsity:.3f}", t.n_pruned,
                     f"{t.full_seconds * 1000:.1f}", f"{t.pruned_seconds * 1000:.1f}",
                     f"{t.speedup:.1f}x", f"{formula:.1f}x"])
        log(f"predict {name}: {rows[-1]}")
    text = table(["dataset", "test rows", "sparsity", "members kept", "full ms", "pruned ms",
                  "measured speed-up", "paper's formula"], rows)
    return "## Prediction time\n\n" + __doc__.strip() + "\n\n" + text + "\n"


if __name__ == "__main__":
    import sys

    print(run(quick="--quick" in sys.argv))
