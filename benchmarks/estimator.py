"""SDWECClassifier against scikit-learn's ensembles, on the same folds.

    python -m benchmarks.estimator                 # writes results/estimator.md
    python -m benchmarks.estimator --quick         # iris and wine, 2 folds, 50 trees: a smoke run

Datasets: scikit-learn's built-in breast_cancer, wine, digits, iris, and a 20,000-row
``make_classification`` set (20 features, 10 informative, 2 % label noise, seed 0).  Every model
is fitted on the same 5 stratified folds (shuffled, seed 0) with ``n_jobs=1``, so the times
compare single-core fits measured in one run on the same (shared, 2-core) machine; a fold's
model is fitted once and timed once.  AUC is ROC AUC (one-vs-rest, macro, for more than two
classes) from ``predict_proba``; log loss likewise (probabilities clipped by scikit-learn).
Trees kept: the members that vote at predict time (HistGradientBoosting: boosting iterations
times trees per iteration).  Every library call runs on one thread (``threadpool_limits(1)``;
HistGradientBoosting's OpenMP threads included).  No soft-voting row: fully grown trees have
pure leaves, so their probabilities are their votes and ``voting="soft"`` predicts exactly as
``"hard"`` (checked on the quick run).
"""

import argparse
import datetime
import os
import pathlib
import time

import numpy as np
from sklearn.base import clone
from sklearn.datasets import (
    load_breast_cancer,
    load_digits,
    load_iris,
    load_wine,
    make_classification,
)
from sklearn.ensemble import (
    BaggingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.metrics import accuracy_score, log_loss, roc_auc_score
from sklearn.model_selection import StratifiedKFold
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

from benchmarks.common import machine, table
from sdwec import SDWECClassifier

N_TREES = 200
SEED = 0

RECOMMENDED = dict(estimator=DecisionTreeClassifier(max_features="sqrt"),
                   fit_on="oob+validation", n_members=0.2, vote="uniform")
"""SDWEC's recommended settings (docs/estimator.md): random-forest trees (a fresh draw of
sqrt(features) columns at each split), weights fitted on the out-of-bag + validation votes,
a fifth of the pool kept, one vote each."""


def datasets(quick):
    data = {"iris": load_iris(return_X_y=True), "wine": load_wine(return_X_y=True)}
    if quick:
        return data
    data["breast_cancer"] = load_breast_cancer(return_X_y=True)
    data["digits"] = load_digits(return_X_y=True)
    data["make_classification 20k"] = make_classification(
        n_samples=20_000, n_features=20, n_informative=10, flip_y=0.02, random_state=SEED)
    return data


def models(n_trees):
    return {
        "SDWEC recommended": SDWECClassifier(n_estimators=n_trees, random_state=SEED,
                                             n_jobs=1, **RECOMMENDED),
        "SDWEC paper defaults": SDWECClassifier(n_estimators=n_trees, random_state=SEED,
                                                n_jobs=1),
        "RandomForest": RandomForestClassifier(n_estimators=n_trees, random_state=SEED,
                                               n_jobs=1),
        "Bagging (CART)": BaggingClassifier(DecisionTreeClassifier(), n_estimators=n_trees,
                                            random_state=SEED, n_jobs=1),
        "HistGradientBoosting": HistGradientBoostingClassifier(random_state=SEED),
    }


def trees_kept(model):
    if isinstance(model, SDWECClassifier):
        return model.n_selected_
    if isinstance(model, HistGradientBoostingClassifier):
        return model.n_iter_ * model.n_trees_per_iteration_
    return len(model.estimators_)


def scores(model, X, y):
    """Accuracy, AUC, log loss and the predict time (predict + predict_proba) on ``X``."""
    start = time.perf_counter()
    labels = model.predict(X)
    proba = model.predict_proba(X)
    elapsed = time.perf_counter() - start
    if len(model.classes_) == 2:
        auc = roc_auc_score(y, proba[:, 1])
    else:
        auc = roc_auc_score(y, proba, multi_class="ovr", average="macro", labels=model.classes_)
    return accuracy_score(y, labels), auc, log_loss(y, proba, labels=model.classes_), elapsed


def run(quick=False, log=print, large_trees=N_TREES):
    n_folds = 2 if quick else 5
    n_trees = 50 if quick else N_TREES
    folds = StratifiedKFold(n_folds, shuffle=True, random_state=SEED)
    records = []  # (dataset, model, fold, acc, auc, loss, fit s, predict s, kept)
    for name, (X, y) in datasets(quick).items():
        trees = large_trees if len(y) > 10_000 else n_trees
        for fold, (train, test) in enumerate(folds.split(X, y)):
            for label, template in models(trees).items():
                model = clone(template)
                start = time.perf_counter()
                model.fit(X[train], y[train])
                fit_time = time.perf_counter() - start
                acc, auc, loss, pred_time = scores(model, X[test], y[test])
                records.append((name, label, fold, acc, auc, loss, fit_time, pred_time,
                                trees_kept(model)))
                log(f"{name} fold {fold} {label}: acc {acc:.4f} fit {fit_time:.1f} s "
                    f"kept {trees_kept(model)}")
    return report(records, n_folds, n_trees, large_trees, quick)


def _mean_sd(values, digits):
    values = np.asarray(values, dtype=float)
    return f"{values.mean():.{digits}f} ± {values.std(ddof=1):.{digits}f}"


def report(records, n_folds, n_trees, large_trees, quick):
    header = ["dataset", "rows", "model", "accuracy", "AUC", "log loss", "fit s", "predict s",
              "trees kept"]
    rows = []
    names = list(dict.fromkeys(r[0] for r in records))
    sizes = {"iris": 150, "wine": 178, "breast_cancer": 569, "digits": 1797,
             "make_classification 20k": 20_000}
    for name in names:
        labels = list(dict.fromkeys(r[1] for r in records if r[0] == name))
        for label in labels:
            mine = [r for r in records if r[0] == name and r[1] == label]
            cols = list(zip(*mine))
            rows.append([name, sizes.get(name, "?"), label, _mean_sd(cols[3], 4),
                         _mean_sd(cols[4], 4), _mean_sd(cols[5], 3), _mean_sd(cols[6], 2),
                         _mean_sd(cols[7], 3), _mean_sd(cols[8], 1)])
    wins = []
    for name in names:
        def mean_acc(label):
            return np.mean([r[3] for r in records if r[0] == name and r[1] == label])
        wins.append([name, f"{100 * (mean_acc('SDWEC recommended') - mean_acc('RandomForest')):+.2f}",
                     f"{100 * (mean_acc('SDWEC recommended') - mean_acc('Bagging (CART)')):+.2f}",
                     f"{100 * (mean_acc('SDWEC recommended') - mean_acc('SDWEC paper defaults')):+.2f}"])
    settings = (f"{n_folds} stratified folds (shuffled, seed {SEED}), the same for every model; "
                f"{n_trees} trees per pool"
                + (f" ({large_trees} on the 20k-row set)" if large_trees != n_trees else "")
                + "; mean ± sd over the folds.")
    return "\n".join([
        "# SDWECClassifier against scikit-learn's ensembles",
        "",
        f"Machine: {machine()}",
        "",
        f"Run: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, "
        f"`python -m benchmarks.estimator{' --quick' if quick else ''}`. {settings} "
        f"Load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (a shared "
        "machine whose load changed during the run: the times are indicative, the accuracies "
        "are not affected).",
        "",
        __doc__.strip().split("\n\n", 2)[2],
        "",
        "SDWEC recommended: `SDWECClassifier(estimator=DecisionTreeClassifier(max_features="
        "\"sqrt\"), fit_on=\"oob+validation\", n_members=0.2, vote=\"uniform\")`; SDWEC paper "
        "defaults: `SDWECClassifier()` (fully grown trees on all columns, weights on the 10 % "
        "held-out rows, λ = 10, weighted vote). RandomForest, Bagging: 200 trees "
        "(scikit-learn's defaults otherwise); HistGradientBoosting: scikit-learn's defaults.",
        "",
        table(header, rows),
        "",
        "Accuracy difference of SDWEC recommended, in points (mean over the folds):",
        "",
        table(["dataset", "− RandomForest", "− Bagging", "− SDWEC paper defaults"], wins),
        "",
    ])


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.estimator", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="iris and wine, 2 folds, 50 trees")
    parser.add_argument("--large-trees", type=int, default=N_TREES,
                        help="trees per pool on the 20k-row set (default %(default)s)")
    parser.add_argument("--out", default="results/estimator.md", help="Markdown report path")
    args = parser.parse_args(argv)
    with threadpool_limits(1):
        text = run(quick=args.quick, large_trees=args.large_trees)
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
