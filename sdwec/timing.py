"""Measured prediction time of a pruned ensemble against the full one, with its spread.

The paper reports testing time as ``(1 - sparsity) · T(l)`` (a formula).  Here the time is
measured: every member with a non-zero weight predicts the rows and the weighted plurality
vote combines them, exactly the work a deployed pruned ensemble does; the full ensemble does
the same with all ``l`` members.  A measurement is only worth showing with its noise, so:

* the rows are the given rows, repeated until there are at least ``min_rows`` of them when
  there are fewer (a validation or test split of 20-80 rows is predicted in well under a
  millisecond, where timer resolution and scheduling noise dominate);
* runs of the two ensembles are interleaved, so that a burst of load on the machine hits
  both, and each pair of runs gives one ratio; the ratio reported is the median of the pairs
  with their interquartile range;
* an ensemble that keeps every tree evaluates the same trees as the full one (ratio 1 by
  definition, not measured; its weights, and so its predictions, may still differ from the
  full ensemble's equal votes) and one that keeps none abstains (it predicts a constant:
  nothing to time).

The paper's formula ``(1 - sparsity) T(l)`` counts every tree alike. A measured ratio can
fall below it (work that does not shrink with the trees: each run's setup and the vote) or
rise above it (the kept trees are cheaper than the average tree: smaller trees to walk, a
smaller working set in the processor's caches); :attr:`PredictionTiming.against_formula`
says which, and the node counts say whether the kept trees are smaller.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sdwec import combiners, paper
from sdwec.pool import load_pool, prediction_matrix
from sdwec.solver import solve

__all__ = ["PredictionTiming", "measure", "prediction_seconds", "weight_finding_seconds",
           "weight_finding_runs",
           "table5", "estimated_training_seconds", "MIN_ROWS", "REPEATS"]

#: Rows predicted per timed run (the given rows, repeated).
MIN_ROWS = 2000
#: Paired runs per measurement (after one warm-up of each ensemble).
REPEATS = 9
#: Seconds per (row x log2 rows x feature) of one fully grown CART tree on its bootstrap
#: sample, predictions included; from NSL-KDD's 200-tree pool, 63 s on an idle core of this
#: project's 2-core machines (results/benchmarks.md).  Good to a factor of about two.
_TREE_SECONDS_PER_UNIT = 4.6e-9


@dataclass(frozen=True)
class PredictionTiming:
    """Result of :func:`measure`.

    Attributes
    ----------
    full_seconds, pruned_seconds : float
        Median wall-clock seconds to predict the rows with the full and the pruned ensemble
        (``pruned_seconds`` is NaN when the pruned ensemble was not timed, see ``status``).
    n_full, n_pruned : int
        Members evaluated by each.
    n_rows : int
        Rows predicted per run.
    repeats : int
        Paired runs timed (0 when nothing was timed).
    full_runs, pruned_runs : tuple of float
        Seconds of every timed run, in pairs (``pruned_runs`` is empty when only the full
        ensemble was timed).
    n_given : int or None
        Rows given, before any repetition up to ``n_rows`` (``None``: not recorded).
    full_nodes, pruned_nodes : float
        Mean node count of the members each ensemble evaluates (NaN when the members are not
        trees).
    """

    full_seconds: float
    pruned_seconds: float
    n_full: int
    n_pruned: int
    n_rows: int
    repeats: int
    full_runs: tuple = ()
    pruned_runs: tuple = ()
    n_given: int | None = None
    full_nodes: float = float("nan")
    pruned_nodes: float = float("nan")

    @property
    def repeated(self):
        """True when the given rows were repeated to reach ``n_rows``."""
        return self.n_given is not None and self.n_rows > self.n_given

    @property
    def ratios(self):
        """``full / pruned`` seconds of every paired run."""
        return tuple(f / p for f, p in zip(self.full_runs, self.pruned_runs))

    @property
    def status(self):
        """``"abstains"`` (no member kept), ``"every member"`` (all kept: the same trees as
        the full ensemble, though not necessarily the same weights) or ``"pruned"``."""
        if self.n_pruned == 0:
            return "abstains"
        if self.n_pruned == self.n_full:
            return "every member"
        return "pruned"

    @property
    def speedup(self):
        """Median over the paired runs of ``full / pruned`` seconds (1 when every member is
        kept; NaN when the ensemble abstains)."""
        if self.status == "every member":
            return 1.0
        if not self.ratios:
            return float("nan")
        return float(np.median(self.ratios))

    @property
    def speedup_interval(self):
        """Interquartile range ``(low, high)`` of the paired ratios (NaN when not timed)."""
        if self.status == "every member":
            return (1.0, 1.0)
        if not self.ratios:
            return (float("nan"), float("nan"))
        low, high = np.percentile(self.ratios, [25, 75])
        return float(low), float(high)

    @property
    def formula_speedup(self):
        """The paper's ``T(l) / ((1 - sparsity) T(l)) = l / n_pruned`` (inf when abstaining)."""
        return self.n_full / self.n_pruned if self.n_pruned else float("inf")

    @property
    def against_formula(self):
        """Where the measured ratio lies against :attr:`formula_speedup`: ``"above"`` (the
        whole interquartile range is above it), ``"below"`` (all of it below), ``"agrees"``
        (the range holds it) or ``None`` (not a paired measurement)."""
        if self.status != "pruned" or not self.ratios:
            return None
        low, high = self.speedup_interval
        if low > self.formula_speedup:
            return "above"
        if high < self.formula_speedup:
            return "below"
        return "agrees"


def _mean_nodes(members):
    counts = [getattr(getattr(m, "tree_", None), "node_count", np.nan) for m in members]
    return float(np.mean(counts)) if counts else float("nan")


def _predictor(estimators, weights, X, classes, prior):
    members = [estimators[i] for i in np.flatnonzero(weights)]
    kept = np.asarray(weights, dtype=float)[np.flatnonzero(weights)]

    def predict():
        P = prediction_matrix(members, X, classes) if members else np.empty((len(X), 0),
                                                                             classes.dtype)
        return combiners.vote(kept, P, classes, prior)

    return predict, len(members)


def _run_seconds(fn, repeats):
    """Seconds of each of ``repeats`` timed calls of ``fn`` (after one untimed warm-up)."""
    fn()  # warm-up: the first call pays for imports and allocations
    times = []
    for _ in range(int(repeats)):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return tuple(times)


def _median_seconds(fn, repeats):
    return float(np.median(_run_seconds(fn, repeats)))


def _checked(estimators, weights, repeats):
    """``weights`` as floats, after checking it and ``repeats`` against the estimators."""
    weights = np.asarray(weights, dtype=float)
    if weights.shape != (len(estimators),):
        raise ValueError(f"need one weight per estimator ({len(estimators)}); "
                         f"got shape {weights.shape}")
    if int(repeats) < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    return weights


def prediction_seconds(estimators, weights, X, classes, prior, repeats=3):
    """Median seconds for one ensemble (its members with non-zero weight) to predict ``X``.

    Parameters are those of :func:`measure`.

    Returns
    -------
    seconds : float
    n_members : int
        Members evaluated.
    """
    weights = _checked(estimators, weights, repeats)
    predict, n = _predictor(estimators, weights, X, np.asarray(classes), prior)
    return _median_seconds(predict, repeats), n


def weight_finding_seconds(H, y, repeats=1, **params):
    """Median seconds of :func:`sdwec.solve` on raw votes, compression included.

    This is what the paper's Table 5 times: finding the weights from a ready ``H``.

    Parameters
    ----------
    H : ndarray of shape (m, l)
        Votes in {-1, +1} (or a correctness matrix with ``y`` all ones).
    y : ndarray of shape (m,)
        Labels in {-1, +1}.
    repeats : int, default=1
        Timed runs (after one warm-up run).
    **params
        Passed to :func:`sdwec.solve`.

    Returns
    -------
    float
    """
    return float(np.median(weight_finding_runs(H, y, repeats, **params)))


def weight_finding_runs(H, y, repeats=1, **params):
    """Seconds of each timed run of :func:`sdwec.solve` on raw votes (after one warm-up):
    :func:`weight_finding_seconds`'s runs, for their spread.

    Returns
    -------
    tuple of float
        ``repeats`` run times, in the order run.
    """
    return _run_seconds(lambda: solve(H, y, **params), repeats)


def _tiled(X, min_rows):
    """``X`` repeated (whole copies, then a prefix) to at least ``min_rows`` rows."""
    X = np.asarray(X)
    if len(X) == 0:
        raise ValueError("need at least one row to time a prediction")
    copies = -(-int(min_rows) // len(X))
    return np.tile(X, (max(copies, 1), 1))[:max(int(min_rows), len(X))]


def measure(estimators, weights, X, classes, prior, repeats=REPEATS, min_rows=MIN_ROWS):
    """Time the prediction of the pruned ensemble against the full (equal-weight) ensemble.

    Parameters
    ----------
    estimators : list
        The pool's ``l`` fitted trees (predicting encoded class indices, as in a fitted
        ``BaggingClassifier``).
    weights : array_like of shape (l,)
        Weights of the pruned ensemble; members with weight 0 are not evaluated.
    X : ndarray of shape (n, d)
        Rows to predict (e.g. the test split); repeated to at least ``min_rows`` rows.
    classes : ndarray
        Class labels, sorted.
    prior : ndarray
        Tie-breaking order of the classes (see :class:`sdwec.pool.Pool`).
    repeats : int, default=REPEATS
        Paired runs of the two ensembles (after one untimed warm-up run each).
    min_rows : int, default=MIN_ROWS
        Rows predicted per run.

    Returns
    -------
    PredictionTiming
        When the pruned ensemble keeps every member or none, only the full ensemble is
        timed (see :attr:`PredictionTiming.status`).
    """
    weights = _checked(estimators, weights, repeats)
    classes = np.asarray(classes)
    rows = _tiled(X, min_rows)
    nodes = dict(n_given=len(X), full_nodes=_mean_nodes(estimators),
                 pruned_nodes=_mean_nodes([estimators[i] for i in np.flatnonzero(weights)]))
    full, n_full = _predictor(estimators, np.ones(len(estimators)), rows, classes, prior)
    pruned, n_pruned = _predictor(estimators, weights, rows, classes, prior)
    paired = 0 < n_pruned < n_full
    full()
    if paired:
        pruned()  # warm-up: first calls pay for imports and allocations
    t_full, t_pruned = [], []
    for _ in range(int(repeats)):
        for fn, sink in ((full, t_full), (pruned, t_pruned)) if paired else ((full, t_full),):
            start = time.perf_counter()
            fn()
            sink.append(time.perf_counter() - start)
    full_seconds = float(np.median(t_full))
    if not paired:
        same = n_pruned == n_full
        return PredictionTiming(full_seconds=full_seconds,
                                pruned_seconds=full_seconds if same else float("nan"),
                                n_full=n_full, n_pruned=n_pruned, n_rows=len(rows),
                                repeats=int(repeats), full_runs=tuple(t_full), **nodes)
    return PredictionTiming(full_seconds=full_seconds, pruned_seconds=float(np.median(t_pruned)),
                            n_full=n_full, n_pruned=n_pruned, n_rows=len(rows),
                            repeats=int(repeats), full_runs=tuple(t_full),
                            pruned_runs=tuple(t_pruned), **nodes)


def table5(names, sizes, seed=0, repeats=3, load=None, progress=None):
    """Measure SDWEC's weight-finding time on real votes, in the shape of the paper's Table 5.

    For each dataset the pool of ``max(sizes)`` trees (seed ``seed``) votes on its training
    split; the first ``l`` trees' votes are the ``H`` that :func:`sdwec.solve` is timed on
    (compression included, k = 25; ``repeats`` runs after one warm-up: their median, the
    fastest and the slowest), as the paper times its training rows.

    Parameters
    ----------
    names : sequence of str
        Shipped dataset names.
    sizes : sequence of int
        Pool sizes ``l`` to time.
    seed : int, default=0
        Seed of the pools.
    repeats : int, default=3
        Timed runs per cell (after one warm-up).
    load : callable, optional
        ``load(name, n_trees, seed) -> Pool``; default :func:`sdwec.pool.load_pool` (binary
        task, disk-cached).  A dashboard passes its own cached loader.
    progress : callable, optional
        ``progress(done, total, message)``.

    Returns
    -------
    pandas.DataFrame
        ``dataset``, ``m`` (training rows), ``l``, ``seconds`` (the runs' median),
        ``seconds_min`` and ``seconds_max`` (the fastest and the slowest run), ``runs``,
        and the paper's ``paper_m`` and ``paper_seconds`` (NaN where Table 5 has no such
        cell).
    """
    sizes = sorted(int(l) for l in sizes)
    names = list(names)
    if not names or not sizes:
        raise ValueError("choose at least one dataset and one pool size l")
    if load is None:
        def load(name, n_trees, seed):
            return load_pool(name, "binary", n_trees=n_trees, seed=seed)
    report = progress or (lambda done, total, message: None)
    out = []
    for i, name in enumerate(names):
        report(i, len(names), f"{name}: training {sizes[-1]} trees")
        pool = load(name, sizes[-1], seed)
        votes = prediction_matrix(pool.estimators, pool.X_train, pool.classes)
        published = paper.TABLE5.get(name)
        for l in sizes:
            report(i, len(names), f"{name}: solving with l = {l}")
            runs = weight_finding_runs(votes[:, :l], pool.y_train, repeats=repeats)
            paper_seconds = (published[1][paper.TABLE5_L.index(l)]
                             if published and l in paper.TABLE5_L else np.nan)
            out.append({"dataset": name, "m": len(pool.y_train), "l": l,
                        "seconds": float(np.median(runs)), "seconds_min": float(min(runs)),
                        "seconds_max": float(max(runs)), "runs": len(runs),
                        "paper_m": published[0] if published else np.nan,
                        "paper_seconds": paper_seconds})
    report(len(names), len(names), "done")
    return pd.DataFrame(out)


def estimated_training_seconds(n_rows, n_features, n_trees):
    """Rough wall-clock seconds to train a bagged pool of ``n_trees`` CART trees.

    CART sorts every feature at every level, about ``n log n`` per feature for a fully grown
    tree; the constant is calibrated on NSL-KDD (see ``_TREE_SECONDS_PER_UNIT``).  Meant for
    "this will take about a minute" notes, not for benchmarks.

    Parameters
    ----------
    n_rows : int
        Rows of the whole dataset (80 % of them train the trees).
    n_features : int
    n_trees : int

    Returns
    -------
    float
    """
    n_train = max(2.0, 0.8 * float(n_rows))
    return _TREE_SECONDS_PER_UNIT * n_train * np.log2(n_train) * max(1, int(n_features)) \
        * int(n_trees)
