"""Tree learners side by side for large uploads: the paper's exact CART on a row
budget against faster variants, by pool time and test accuracy over several splits.

Usage::

    nice python -m benchmarks.learners                      # 1.2M-row synthetic file
    nice python -m benchmarks.learners --data nsl_kdd       # NSL-KDD (binary)

Learners (every pool: l = 200 bagged trees on the same 80/10/10 split of each seed, the same
row budget unless said; SDWEC with the library's default parameters, the paper's):

* ``exact CART``: scikit-learn's ``DecisionTreeClassifier()``, fully grown, the default;
* ``random splits``: ``splitter="random"``, one random threshold per feature at each node
  (equal rows, and a larger budget at about the same time);
* ``binned CART``: exact CART on features cut into at most 255 quantile bins, the edges taken
  from the training split only (what histogram-based learners do).

"pool s" is the pool's own fit + predict time (``build_pool``'s meta), on one core, at the
load printed beside it; the machine is shared, so the load average matters.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from harness.common import load_average, machine, table
from sdwec import comparison, datasets, pool

N_BINS = 255


def quantile_bins(X, train_rows, n_bins=N_BINS):
    """``X`` with every feature replaced by its bin index among at most ``n_bins`` quantile
    bins whose edges come from the rows ``train_rows`` only."""
    out = np.empty(X.shape, dtype=np.float32)
    qs = np.linspace(0, 1, n_bins + 1)[1:-1]
    for j in range(X.shape[1]):
        edges = np.unique(np.quantile(X[train_rows, j], qs))
        out[:, j] = np.searchsorted(edges, X[:, j], side="right")
    return out


LEARNERS = {
    "exact CART": (None, False),
    "random splits": ({"splitter": "random"}, False),
    "binned CART": (None, True),
}


def run(X, y, seeds, cases):
    """Rows of the report: one per (learner, budget), means and sds over ``seeds``."""
    rows = []
    for name, budget in cases:
        tree_params, binned = LEARNERS[name]
        scores = {"SDWEC": [], "bagging": []}
        seconds, kept = [], []
        for seed in seeds:
            Xs = X
            if binned:
                Xs = quantile_bins(X, pool.split_indices(y, seed)[0])
            p = pool.build_pool(Xs, y, n_trees=200, seed=seed, tree_params=tree_params,
                                max_samples=budget)
            seconds.append(p.meta["fit_seconds"] + p.meta["predict_seconds"])
            result = comparison.compare(p)
            for method in result.methods:
                if method["method"] in scores:
                    scores[method["method"]].append(100 * method["test"])
            kept.append(result.solution.n_selected)
            print(f"{name} budget={budget} seed={seed}: pool {seconds[-1]:.1f} s, "
                  f"SDWEC {scores['SDWEC'][-1]:.2f} (kept {kept[-1]}), bagging "
                  f"{scores['bagging'][-1]:.2f}, load {load_average()}", flush=True)
        rows.append([name, f"{budget:,}" if budget else "full",
                     f"{np.mean(seconds):.1f} ± {np.std(seconds, ddof=1):.1f}",
                     *(f"{np.mean(v):.2f} ± {np.std(v, ddof=1):.2f}" for v in scores.values()),
                     f"{min(kept)}–{max(kept)}"])
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="synthetic",
                        help="'synthetic' (benchmarks/upload.py's 1.2M-row file) or a shipped "
                             "dataset's name")
    parser.add_argument("--rows", type=int, default=1_200_000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--budget", type=int, default=5_000)
    parser.add_argument("--random-budget", type=int, default=20_000,
                        help="a second, larger budget for random splits (about equal time)")
    parser.add_argument("--exact-budgets", default="",
                        help="more budgets for exact CART, comma-separated (equal time with "
                             "random splits on the larger budget)")
    parser.add_argument("--only-extra", action="store_true",
                        help="run only the --exact-budgets cases")
    args = parser.parse_args(argv)
    print(machine())
    print(f"load average at start: {load_average()}")
    if args.data == "synthetic":
        from benchmarks.upload import synthetic_csv

        data = datasets.from_csv(synthetic_csv(args.rows))
    else:
        data = datasets.load(args.data, "binary")
    X, y = np.asarray(data.X, dtype=float), np.asarray(data.y)
    cases = [("exact CART", args.budget), ("random splits", args.budget),
             ("random splits", args.random_budget), ("binned CART", args.budget)]
    extra = [("exact CART", int(b)) for b in args.exact_budgets.split(",") if b]
    cases = extra if args.only_extra else cases + extra
    start = time.perf_counter()
    rows = run(X, y, range(args.seeds), cases)
    print(f"{args.data}: {X.shape[0]:,} rows x {X.shape[1]} features, l = 200, splits (seeds) "
          f"{list(range(args.seeds))}; test accuracy in %, mean ± sd over the splits; "
          f"{time.perf_counter() - start:.0f} s in all; load at the end {load_average()}")
    print(table(["learner", "rows per tree", "pool s", "SDWEC", "bagging", "SDWEC kept"], rows))


if __name__ == "__main__":
    main()
