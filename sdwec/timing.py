"""Measured prediction time of a pruned ensemble against the full one.

The paper reports testing time as ``(1 - sparsity) · T(l)`` (a formula).  Here the time is
measured: every member with a non-zero weight predicts the rows and the weighted plurality
vote combines them, exactly the work a deployed pruned ensemble does; the full ensemble does
the same with all ``l`` members.  Runs of the two are interleaved so that a burst of load on
the machine hits both, and the median of the repeats is reported.
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
           "table5"]


@dataclass(frozen=True)
class PredictionTiming:
    """Result of :func:`measure`.

    Attributes
    ----------
    full_seconds, pruned_seconds : float
        Median wall-clock seconds to predict all rows with the full and the pruned ensemble.
    n_full, n_pruned : int
        Members evaluated by each.
    n_rows : int
        Rows predicted.
    repeats : int
        Timed runs of each ensemble.
    """

    full_seconds: float
    pruned_seconds: float
    n_full: int
    n_pruned: int
    n_rows: int
    repeats: int

    @property
    def speedup(self):
        """``full_seconds / pruned_seconds`` (how many times faster the pruned ensemble is)."""
        return self.full_seconds / self.pruned_seconds if self.pruned_seconds > 0 else np.inf


def _predictor(estimators, weights, X, classes, prior):
    members = [estimators[i] for i in np.flatnonzero(weights)]
    kept = np.asarray(weights, dtype=float)[np.flatnonzero(weights)]

    def predict():
        P = prediction_matrix(members, X, classes) if members else np.empty((len(X), 0),
                                                                             classes.dtype)
        return combiners.vote(kept, P, classes, prior)

    return predict, len(members)


def _median_seconds(fn, repeats):
    fn()  # warm-up: the first call pays for imports and allocations
    times = []
    for _ in range(int(repeats)):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


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
    return _median_seconds(lambda: solve(H, y, **params), repeats)


def measure(estimators, weights, X, classes, prior, repeats=5):
    """Time the prediction of the pruned ensemble and of the full (equal-weight) ensemble.

    Parameters
    ----------
    estimators : list
        The pool's ``l`` fitted trees (predicting encoded class indices, as in a fitted
        ``BaggingClassifier``).
    weights : array_like of shape (l,)
        Weights of the pruned ensemble; members with weight 0 are not evaluated.
    X : ndarray of shape (n, d)
        Rows to predict (the test split).
    classes : ndarray
        Class labels, sorted.
    prior : ndarray
        Tie-breaking order of the classes (see :class:`sdwec.pool.Pool`).
    repeats : int, default=5
        Timed runs of each ensemble (after one untimed warm-up run each).

    Returns
    -------
    PredictionTiming
    """
    weights = _checked(estimators, weights, repeats)
    classes = np.asarray(classes)
    full, n_full = _predictor(estimators, np.ones(len(estimators)), X, classes, prior)
    pruned, n_pruned = _predictor(estimators, weights, X, classes, prior)
    full(), pruned()  # warm-up: first calls pay for imports and allocations
    t_full, t_pruned = [], []
    for _ in range(int(repeats)):
        for fn, sink in ((full, t_full), (pruned, t_pruned)):
            start = time.perf_counter()
            fn()
            sink.append(time.perf_counter() - start)
    return PredictionTiming(full_seconds=float(np.median(t_full)),
                            pruned_seconds=float(np.median(t_pruned)), n_full=n_full,
                            n_pruned=n_pruned, n_rows=len(X), repeats=int(repeats))


def table5(names, sizes, seed=0, repeats=3, load=None, progress=None):
    """Measure SDWEC's weight-finding time on real votes, in the shape of the paper's Table 5.

    For each dataset the pool of ``max(sizes)`` trees (seed ``seed``) votes on its training
    split; the first ``l`` trees' votes are the ``H`` that :func:`sdwec.solve` is timed on
    (compression included, k = 25; median of ``repeats`` runs), as the paper times its
    training rows.

    Parameters
    ----------
    names : sequence of str
        Shipped dataset names.
    sizes : sequence of int
        Pool sizes ``l`` to time.
    seed : int, default=0
        Seed of the pools.
    repeats : int, default=3
        Timed runs per cell (median reported, after one warm-up).
    load : callable, optional
        ``load(name, n_trees, seed) -> Pool``; default :func:`sdwec.pool.load_pool` (binary
        task, disk-cached).  A dashboard passes its own cached loader.
    progress : callable, optional
        ``progress(done, total, message)``.

    Returns
    -------
    pandas.DataFrame
        ``dataset``, ``m`` (training rows), ``l``, ``seconds``, and the paper's ``paper_m``
        and ``paper_seconds`` (NaN where Table 5 has no such cell).
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
            seconds = weight_finding_seconds(votes[:, :l], pool.y_train, repeats=repeats)
            paper_seconds = (published[1][paper.TABLE5_L.index(l)]
                             if published and l in paper.TABLE5_L else np.nan)
            out.append({"dataset": name, "m": len(pool.y_train), "l": l, "seconds": seconds,
                        "paper_m": published[0] if published else np.nan,
                        "paper_seconds": paper_seconds})
    report(len(names), len(names), "done")
    return pd.DataFrame(out)
