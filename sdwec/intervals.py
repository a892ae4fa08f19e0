"""Intervals that stay inside what is possible: the one summary every page and CSV uses.

A number averaged over ``r`` splits is shown as its mean and a 95 % confidence interval **of
that mean**: Student's t interval, ``mean ± t(0.975, r − 1) · sd / √r``, clipped to the
quantity's bounds ([0, 1] for an accuracy or a sparsity, [0, l] for a tree count, [−1, 1] for
a difference of accuracies).  Why this one:

* Mean ± sd describes one split, not the mean, and on a bounded, skewed quantity it leaves
  the possible range ("193.8 ± 19.6 / 200" trees, "0.981 ± 0.034" accuracy).
* The t interval of the mean is what a reader of "mean over r splits" needs; clipping is
  exact where it bites (the mean itself never leaves the bounds, so the clipped interval still
  holds it), and it needs no random draws (a bootstrap would, and is poor at r = 3).
* One split has no spread to measure: its accuracy gets the exact (Clopper–Pearson) binomial
  interval over the split's rows, inside [0, 1] by construction; a tree count gets none.

Paired comparisons on one split use an exact McNemar test (:func:`mcnemar`): the rows where
exactly one of two classifiers is right are, under "no difference", as likely to favour
either.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = ["LEVEL", "mean_interval", "binomial_interval", "accuracy_interval", "mcnemar",
           "McNemar"]

#: Confidence level of every interval shown.
LEVEL = 0.95


def mean_interval(values, low, high, level=LEVEL):
    """Mean of ``values`` over their last axis and the t interval of that mean, clipped.

    Parameters
    ----------
    values : array_like of shape (..., r)
        ``r`` per-split values on the last axis.
    low, high : float or array_like
        What the quantity can be (the interval is clipped to it).
    level : float, default 0.95

    Returns
    -------
    mean, lo, hi : float or ndarray of shape (...)
        ``lo`` and ``hi`` are NaN when ``r == 1``.
    """
    values = np.asarray(values, dtype=float)
    if values.ndim == 0 or values.shape[-1] == 0:
        raise ValueError("need at least one value on the last axis")
    r = values.shape[-1]
    mean = values.mean(axis=-1)
    if r == 1:
        nan = np.full(np.shape(mean), np.nan)
        return _scalar(mean), _scalar(nan), _scalar(nan)
    half = stats.t.ppf((1 + level) / 2, r - 1) * values.std(axis=-1, ddof=1) / np.sqrt(r)
    lo = np.clip(mean - half, low, high)
    hi = np.clip(mean + half, low, high)
    return _scalar(mean), _scalar(lo), _scalar(hi)


def binomial_interval(successes, trials, level=LEVEL):
    """Exact (Clopper–Pearson) interval of a proportion: ``successes`` of ``trials``.

    Parameters
    ----------
    successes, trials : int or array_like of int
    level : float, default 0.95

    Returns
    -------
    lo, hi : float or ndarray
        Inside [0, 1]; ``lo`` is 0 when ``successes == 0`` and ``hi`` is 1 when
        ``successes == trials``.
    """
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    if np.any(n <= 0) or np.any(k < 0) or np.any(k > n):
        raise ValueError(f"need 0 <= successes <= trials and trials > 0; got {successes} of "
                         f"{trials}")
    tail = (1 - level) / 2
    with np.errstate(invalid="ignore"):
        lo = np.where(k > 0, stats.beta.ppf(tail, k, n - k + 1), 0.0)
        hi = np.where(k < n, stats.beta.ppf(1 - tail, k + 1, n - k), 1.0)
    return _scalar(lo), _scalar(hi)


def accuracy_interval(values, rows):
    """Mean accuracy over splits and its interval: the convention for an accuracy.

    Parameters
    ----------
    values : array_like of shape (..., r)
        Accuracies of ``r`` splits on the last axis.
    rows : array_like of int, shape (r,)
        The rows each split's accuracy is measured on.

    Returns
    -------
    mean, lo, hi : float or ndarray of shape (...)
        With several splits the t interval of the mean in [0, 1]
        (:func:`mean_interval`); with one, the exact binomial interval over
        its rows (:func:`binomial_interval`): one split has no spread, its
        rows still bound what its accuracy says.
    """
    values = np.asarray(values, dtype=float)
    rows = np.asarray(rows)
    if values.shape[-1] > 1:
        return mean_interval(values, 0.0, 1.0)
    mean = values[..., 0]
    # An accuracy is a count of right rows over the rows: its count is that, up to rounding.
    lo, hi = binomial_interval(np.rint(mean * rows[0]).astype(int), int(rows[0]))
    return (float(mean) if mean.ndim == 0 else mean), lo, hi


@dataclass(frozen=True)
class McNemar:
    """An exact McNemar test of two classifiers on the same rows.

    Attributes
    ----------
    better : int
        Rows the first classifier gets right and the second wrong.
    worse : int
        Rows the second gets right and the first wrong.
    p_value : float
        Two-sided exact binomial p over the ``better + worse`` discordant rows (1 when none).
    """

    better: int
    worse: int
    p_value: float


def mcnemar(first_right, second_right, counts=None):
    """Exact McNemar test: does the first classifier differ from the second on these rows?

    Parameters
    ----------
    first_right, second_right : array_like of bool, shape (n,)
        Whether each classifier is right on each row (the same rows, in the same order).
    counts : array_like of int, shape (n,), optional
        How many rows each entry stands for (compressed votes); default one each.

    Returns
    -------
    McNemar
    """
    a = np.asarray(first_right, dtype=bool)
    b = np.asarray(second_right, dtype=bool)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"need two equally long 1-d arrays; got {a.shape} and {b.shape}")
    w = np.ones(a.shape, dtype=np.int64) if counts is None else np.asarray(counts)
    better = int(round(float(w[a & ~b].sum())))
    worse = int(round(float(w[~a & b].sum())))
    p = 1.0 if better + worse == 0 else float(stats.binomtest(better, better + worse, 0.5).pvalue)
    return McNemar(better=better, worse=worse, p_value=p)


def _scalar(x):
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x
