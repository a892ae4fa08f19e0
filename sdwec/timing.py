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

__all__ = ["PredictionTiming", "measure", "prediction_seconds", "weight_finding_seconds"]


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
    from sdwec import combiners
    from sdwec.pool import prediction_matrix

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
    from sdwec.solver import solve

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
