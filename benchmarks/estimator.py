"""SDWECClassifier against scikit-learn's ensembles, on the same folds.

    python -m benchmarks.estimator                 # writes results/estimator.md
    python -m benchmarks.estimator --quick         # iris and wine, 2 folds, 50 trees: a smoke run

Datasets: scikit-learn's built-in breast_cancer, wine, digits, iris, and a 20,000-row
``make_classification`` set (20 features, 10 informative, 2 % label noise, seed 0).  Every model
is fitted on the same 5 stratified folds (shuffled, seed 0) with ``n_jobs=1``, so the times
compare single-core fits measured in one run on the same (shared, 2-core) machine; a fold's
model is fitted once and timed once.  Each cell is the mean over the folds with the 95 %
Student-t interval of that mean (``sdwec.intervals.mean_interval``), clipped to what the
quantity can be: accuracy and AUC in [0, 1], Brier score in [0, 2], log loss and times ≥ 0,
trees in [0, the model's pool size].  AUC is ROC AUC (one-vs-rest, macro, for more than two
classes) from ``predict_proba``; log loss likewise (probabilities clipped by scikit-learn).
Brier score: the mean over rows of the sum over classes of (p − one-hot)², from 0 to 2; for
two classes this is twice scikit-learn's ``brier_score_loss``.  Trees kept: the members that
vote at predict time (HistGradientBoosting: boosting iterations times trees per iteration).
Every library call runs on one thread (``threadpool_limits(1)``; HistGradientBoosting's OpenMP
threads included).  No soft-voting row: fully grown trees have pure leaves, so their
probabilities are their votes and ``voting="soft"`` predicts exactly as ``"hard"`` (checked on
the quick run).  SDWEC recommended, calibrated is SDWEC recommended with
``calibration="temperature"``: the same pool, weights and predictions (``predict`` stays the
weighted vote), its probabilities fitted on the pool's out-of-bag vote shares.
"""

import argparse
import datetime
import os
import pathlib
import re
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

from harness.common import load_average, machine, table
from sdwec import SDWECClassifier
from sdwec import formatting as fmt
from sdwec.intervals import mean_interval

N_TREES = 200
SEED = 0

RECOMMENDED = dict(estimator=DecisionTreeClassifier(max_features="sqrt"),
                   fit_on="oob+validation", n_members=0.2, vote="uniform")
"""SDWEC's recommended settings (docs/estimator.md): random-forest trees (a fresh draw of
sqrt(features) columns at each split), weights fitted on the out-of-bag + validation votes,
a fifth of the pool kept, one vote each."""

CALIBRATED = "SDWEC recommended, calibrated"
TRAILING = "## Multi-class data with weak members"
"""The section benchmarks/archive/multiclass.py appends to results/estimator.md; kept when rewriting."""


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
        CALIBRATED: SDWECClassifier(n_estimators=n_trees, random_state=SEED, n_jobs=1,
                                    **RECOMMENDED, calibration="temperature"),
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


def pool_size(model):
    """The most trees ``model`` can keep: the upper bound of its trees-kept interval."""
    if isinstance(model, HistGradientBoostingClassifier):
        return model.max_iter * model.n_trees_per_iteration_
    return model.n_estimators


def brier(y, proba, classes):
    """Mean over rows of the sum over classes of (p − one-hot)² (twice scikit-learn's
    ``brier_score_loss`` for two classes)."""
    onehot = (np.asarray(y)[:, None] == np.asarray(classes)[None, :]).astype(float)
    return float(((proba - onehot) ** 2).sum(axis=1).mean())


def scores(model, X, y):
    """Accuracy, AUC, log loss, Brier score and the predict time (predict + predict_proba)."""
    start = time.perf_counter()
    labels = model.predict(X)
    proba = model.predict_proba(X)
    elapsed = time.perf_counter() - start
    if len(model.classes_) == 2:
        auc = roc_auc_score(y, proba[:, 1])
    else:
        auc = roc_auc_score(y, proba, multi_class="ovr", average="macro", labels=model.classes_)
    return (accuracy_score(y, labels), auc, log_loss(y, proba, labels=model.classes_),
            brier(y, proba, model.classes_), elapsed)


def run(quick=False, log=print, large_trees=N_TREES):
    n_folds = 2 if quick else 5
    n_trees = 50 if quick else N_TREES
    folds = StratifiedKFold(n_folds, shuffle=True, random_state=SEED)
    load_start = load_average()
    started = time.perf_counter()
    records = []  # dicts: dataset, model, fold, acc, auc, loss, brier, fit_s, predict_s, ...
    for name, (X, y) in datasets(quick).items():
        trees = large_trees if len(y) > 10_000 else n_trees
        for fold, (train, test) in enumerate(folds.split(X, y)):
            for label, template in models(trees).items():
                model = clone(template)
                start = time.perf_counter()
                model.fit(X[train], y[train])
                fit_time = time.perf_counter() - start
                acc, auc, loss, bs, pred_time = scores(model, X[test], y[test])
                records.append(dict(dataset=name, model=label, fold=fold, acc=acc, auc=auc,
                                    loss=loss, brier=bs, fit_s=fit_time, predict_s=pred_time,
                                    trees=trees_kept(model), pool=pool_size(model)))
                log(f"{name} fold {fold} {label}: acc {acc:.4f} loss {loss:.3f} "
                    f"fit {fit_time:.1f} s kept {trees_kept(model)}")
    minutes = (time.perf_counter() - started) / 60
    return report(records, n_folds, n_trees, large_trees, quick, load_start, load_average(),
                  minutes)


def _values(records, name, label, key):
    return np.array([r[key] for r in sorted(records, key=lambda r: r["fold"])
                     if r["dataset"] == name and r["model"] == label], dtype=float)


def _interval(values, low, high, decimals):
    return fmt.mean_interval(*mean_interval(values, low, high), decimals=decimals)


def report(records, n_folds, n_trees, large_trees, quick, load_start, load_end, minutes):
    header = ["dataset", "rows", "model", "accuracy", "AUC", "log loss", "Brier", "fit s",
              "predict s", "trees kept"]
    rows = []
    names = list(dict.fromkeys(r["dataset"] for r in records))
    sizes = {"iris": 150, "wine": 178, "breast_cancer": 569, "digits": 1797,
             "make_classification 20k": 20_000}
    for name in names:
        labels = list(dict.fromkeys(r["model"] for r in records if r["dataset"] == name))
        for label in labels:
            def cell(key, low, high, decimals, name=name, label=label):
                return _interval(_values(records, name, label, key), low, high, decimals)
            pool = _values(records, name, label, "pool").max()
            rows.append([name, sizes.get(name, "?"), label, cell("acc", 0.0, 1.0, 4),
                         cell("auc", 0.0, 1.0, 4), cell("loss", 0.0, np.inf, 3),
                         cell("brier", 0.0, 2.0, 3), cell("fit_s", 0.0, np.inf, 2),
                         cell("predict_s", 0.0, np.inf, 3), cell("trees", 0.0, pool, 1)])
    wins = []
    for name in names:
        def mean(label, key="acc", name=name):
            return _values(records, name, label, key).mean()
        ratio = mean(CALIBRATED, "loss") / mean("RandomForest", "loss")
        wins.append([name,
                     f"{100 * (mean('SDWEC recommended') - mean('RandomForest')):+.2f}",
                     f"{100 * (mean('SDWEC recommended') - mean('Bagging (CART)')):+.2f}",
                     f"{100 * (mean('SDWEC recommended') - mean('SDWEC paper defaults')):+.2f}",
                     f"{ratio:.3f}"])
    settings = (f"{n_folds} stratified folds (shuffled, seed {SEED}), the same for every model; "
                f"{n_trees} trees per pool"
                + (f" ({large_trees} on the 20k-row set)" if large_trees != n_trees and not quick
                   else "")
                + "; mean over the folds [95 % t interval of the mean].")
    return "\n".join([
        "# SDWECClassifier against scikit-learn's ensembles",
        "",
        f"Machine: {machine()}",
        "",
        f"Run: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, "
        f"`python -m benchmarks.estimator{' --quick' if quick else ''}`, {minutes:.0f} min. "
        f"{settings} Load average (1 / 5 / 15 min) at the start {load_start}, at the end "
        f"{load_end}, on {os.cpu_count()} cores (a shared machine whose load changes during "
        "the run: the times are indicative, the scores and trees kept are not affected).",
        "",
        __doc__.strip().split("\n\n", 2)[2],
        "",
        "SDWEC recommended: `SDWECClassifier(estimator=DecisionTreeClassifier(max_features="
        "\"sqrt\"), fit_on=\"oob+validation\", n_members=0.2, vote=\"uniform\")`; SDWEC "
        "recommended, calibrated: the same with `calibration=\"temperature\"`; SDWEC paper "
        "defaults: `SDWECClassifier()` (fully grown trees on all columns, weights on the 10 % "
        "held-out rows, plus the out-of-bag votes where some class has fewer than 5 of "
        "them (`fit_on=\"auto\"`: iris and wine), λ = 10, weighted vote). All SDWEC rows use "
        "the default "
        "`multiclass=\"plurality\"` on iris, wine and digits. RandomForest, Bagging: "
        f"{n_trees} trees (scikit-learn's defaults otherwise); HistGradientBoosting: "
        "scikit-learn's defaults.",
        "",
        table(header, rows),
        "",
        "Accuracy difference of SDWEC recommended, in points (difference of the fold means), "
        "and the log loss of SDWEC recommended, calibrated over RandomForest's (ratio of the "
        "fold means; below 1: the calibrated probabilities score better):",
        "",
        table(["dataset", "− RandomForest", "− Bagging", "− SDWEC paper defaults",
               "log loss: calibrated / RandomForest"], wins),
        "",
    ])


def trailing_section(text):
    """The part of ``text`` from a ``TRAILING`` heading line to its end, or ``""``."""
    match = re.search(rf"^{re.escape(TRAILING)}[ \t]*$", text, flags=re.MULTILINE)
    return "" if match is None else text[match.start():]


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
    # benchmarks/archive/multiclass.py's section at the end of the file is its own: keep it as it is.
    kept = trailing_section(out.read_text()) if out.exists() else ""
    out.write_text(text.rstrip("\n") + "\n" + ("\n" + kept if kept else ""))
    print(text)
    print(f"wrote {out}" + (f" (kept its section {TRAILING!r})" if kept else ""))


if __name__ == "__main__":
    main()
