"""Prediction benchmark: the SDWEC-B-pruned ensemble against the full 200-tree ensemble.

Measured on each dataset's test split (the paper's "testing time" claim), with
``sdwec.timing.measure`` (interleaved runs, median of repeats).  The paper's formula predicts a
speed-up of 1 / (1 - sparsity); the measured ratio is full / pruned time.

A second table times ``sdwec.pool.prediction_matrix`` (each tree's leaf looked up in a
per-node class table) against asking each tree's own ``predict`` (what it did before), all
200 trees on the same test split, median of interleaved repeats; both give the same labels
(checked here, and in ``tests/test_pool.py``).
"""

import time

import numpy as np

from harness.common import table
from sdwec import datasets, solve, timing
from sdwec.pool import load_pool, prediction_matrix
from sdwec.solver import PRESETS


def _predict_each(estimators, X, classes):
    """The reference: every tree's own ``predict`` (sklearn's validation skipped)."""
    X = np.ascontiguousarray(X, dtype=np.float32)
    codes = np.column_stack([tree.predict(X, check_input=False) for tree in estimators])
    return np.asarray(classes)[codes.astype(np.intp)]


def _lookup_vs_predict(pool, repeats=7):
    """Median seconds of the reference and of ``prediction_matrix`` (interleaved)."""
    args = (pool.estimators, pool.X_test[:2000], pool.classes)
    if not np.array_equal(_predict_each(*args), prediction_matrix(*args)):
        raise AssertionError("leaf lookup and predict() disagree")
    times = {_predict_each: [], prediction_matrix: []}
    for _ in range(repeats):
        for fn in times:
            start = time.perf_counter()
            fn(*args)
            times[fn].append(time.perf_counter() - start)
    return float(np.median(times[_predict_each])), float(np.median(times[prediction_matrix]))


def run(quick=False, log=print):
    names = ["wine", "sonar"] if quick else datasets.names()
    rows, lookup = [], []
    for name in names:
        pool = load_pool(name, "binary", n_trees=200, seed=0, n_jobs=-1)
        sol = solve(pool.votes("val"), None, **PRESETS["SDWEC-B"])
        t = timing.measure(pool.estimators, sol.weights, pool.X_test, pool.classes, pool.prior,
                           repeats=5)
        formula = 1 / (1 - sol.sparsity) if sol.sparsity < 1 else float("inf")
        rows.append([name, t.n_rows, f"{sol.sparsity:.3f}", t.n_pruned,
                     f"{t.full_seconds * 1000:.1f}", f"{t.pruned_seconds * 1000:.1f}",
                     f"{t.speedup:.1f}x", f"{formula:.1f}x"])
        log(f"predict {name}: {rows[-1]}")
        before, after = _lookup_vs_predict(pool)
        lookup.append([name, min(len(pool.X_test), 2000), f"{before * 1000:.1f}",
                       f"{after * 1000:.1f}", f"{before / after:.1f}x"])
    text = table(["dataset", "test rows", "sparsity", "members kept", "full ms", "pruned ms",
                  "measured speed-up", "paper's formula"], rows)
    text += "\n\n" + table(["dataset", "rows", "each tree's predict() ms",
                          "prediction_matrix ms", "ratio"], lookup)
    return "## Prediction time\n\n" + __doc__.strip() + "\n\n" + text + "\n"


if __name__ == "__main__":
    import sys

    print(run(quick="--quick" in sys.argv))
