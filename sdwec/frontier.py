"""Accuracy-vs-sparsity: SDWEC parameter sweeps, the peers' curves, and the Pareto front.

Every row of the returned frames is one weighted ensemble of the same pool, on the same axes:
``method``, ``params`` (a short text), ``param`` (the swept value, when there is one),
``n_selected`` (members with a non-zero weight), ``sparsity`` (1 - n_selected / l, the paper's
eq. 10), ``val_accuracy`` and ``test_accuracy`` (weighted plurality vote, ties and abstentions
to the most frequent validation class), and ``abstains`` (every weight is zero).
Sweeps reuse the pool's compressed votes (:meth:`sdwec.pool.Pool.votes`, whose correctness
form the solver reads) and score all weight vectors in one batched call, which keeps a
50-point sweep with every peer well under a second on UCI pools. The peers are every method
of :mod:`sdwec.methods` drawn on the frontier.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from sdwec import combiners, intervals, methods
from sdwec.methods import DEFAULT_LAMS
from sdwec.solver import PRESETS

__all__ = ["sweep", "peers", "pareto", "drawable", "over_splits", "paper_peers", "COLUMNS", "DEFAULT_LAMS",
           "OOB_PEERS"]

#: The frontier's methods fitted on every training row's out-of-bag votes: far
#: slower than the rest on large pools (NSL-KDD: minutes), so callers add them on request.
OOB_PEERS = ("SDWEC-OOB", "SDWEC-OOB path", "reduce-error OOB")


def paper_peers():
    """Names of the frontier's methods that fit on the validation votes (not :data:`OOB_PEERS`)."""
    return [m.name for m in methods.registered() if m.frontier and m.name not in OOB_PEERS]

COLUMNS = ["method", "params", "param", "n_selected", "sparsity", "val_accuracy",
           "test_accuracy", "abstains"]
_SWEEPABLE = ("lam", "beta", "gamma", "eps")


def _frame(method, params, param, n_selected, l, val_accuracy, test_accuracy):
    n_selected = np.asarray(n_selected, dtype=int)
    return pd.DataFrame({
        "method": method,
        "params": list(params),
        "param": np.asarray(param, dtype=float),
        "n_selected": n_selected,
        "sparsity": 1.0 - n_selected / l,
        "val_accuracy": np.asarray(val_accuracy, dtype=float),
        "test_accuracy": np.asarray(test_accuracy, dtype=float),
        "abstains": n_selected == 0,
    }, columns=COLUMNS)


def _rows(method, params, param, W, pool):
    """Frame of the weight columns ``W`` (l, n) scored on both splits."""
    W = np.asarray(W, dtype=float)
    return _frame(method, params, param, (W != 0).sum(axis=0), W.shape[0],
                  combiners.accuracies(W, pool.votes("val"), pool.prior),
                  combiners.accuracies(W, pool.votes("test"), pool.prior))


def sweep(pool, lams=DEFAULT_LAMS, beta=PRESETS["SDWEC-B"]["beta"],
          gamma=PRESETS["SDWEC-B"]["gamma"], eps=PRESETS["SDWEC-B"]["eps"], second=None,
          iterations=25, threshold="paper", method="SDWEC", params=None):
    """SDWEC over a grid of λ (and optionally a second parameter) on one pool.

    Parameters
    ----------
    pool : sdwec.pool.Pool
    lams : array-like, default=50 values log-spaced over [1e-3, 1e3]
    beta, gamma, eps : float, default=SDWEC-B's values
        The parameters held fixed.
    second : tuple (name, values), optional
        A second parameter to sweep (``"beta"``, ``"gamma"`` or ``"eps"``): the grid is the
        product of ``lams`` and ``values``.
    iterations, threshold
        As in :func:`sdwec.solve`.
    method : str, default="SDWEC"
        Label of the rows.
    params : SolverParams, optional
        ``beta``, ``gamma``, ``eps``, ``iterations`` and ``threshold`` as one value (its λ is
        ignored: ``lams`` are swept), instead of giving them one by one.

    Returns
    -------
    pandas.DataFrame
        One row per grid point (columns :data:`COLUMNS` plus ``lam``, ``beta``, ``gamma``,
        ``eps``, and ``select_val_accuracy``, ``select_test_accuracy``: the accuracy of
        SDWEC-select, the point's selected trees voting with equal weights).
    """
    if params is not None:
        beta, gamma, eps = params.beta, params.gamma, params.eps
        iterations, threshold = params.iterations, params.threshold
    fixed = {"beta": beta, "gamma": gamma, "eps": eps}
    grid = [dict(fixed, lam=float(lam)) for lam in np.atleast_1d(lams)]
    if second is not None:
        name, values = second
        if name not in _SWEEPABLE or name == "lam":
            raise ValueError(f"second must sweep one of beta, gamma, eps; got {name!r}")
        grid = [dict(point, **{name: float(value)}) for value in np.atleast_1d(values)
                for point in grid]
    if not grid:
        raise ValueError("the sweep grid is empty; give at least one λ")
    # l x l systems gain nothing from BLAS threads, and on a busy machine threads make each
    # small factorisation orders of magnitude slower.
    with threadpool_limits(1):
        W = combiners.sdwec_grid(pool.votes("val"), grid, iterations, threshold)
    labels = [f"λ={p['lam']:.4g} β={p['beta']:.4g} γ={p['gamma']:.4g} ε={p['eps']:.4g}"
              for p in grid]
    df = _rows(method, labels, [p["lam"] for p in grid], W, pool)
    for name in _SWEEPABLE:
        df[name] = [p[name] for p in grid]
    # SDWEC-select (relaxed-lasso style): the same support voting with equal weights.
    support = (W != 0).astype(float)
    df["select_val_accuracy"] = combiners.accuracies(support, pool.votes("val"), pool.prior)
    df["select_test_accuracy"] = combiners.accuracies(support, pool.votes("test"), pool.prior)
    return df


def peers(pool, random_draws=10, seed=0, lasso_alphas=50, names=None):
    """Every method of :mod:`sdwec.methods` drawn on the frontier, on :func:`sweep`'s axes.

    Built in: points for bagging, ``WMV``, ``QFWEC``, ``NNLS`` and the ``single`` tree (its
    validation and test accuracy; one member); curves, one row per ensemble size or
    regularisation value, for the ``reduce-error`` and ``orientation`` orderings
    (``param`` = size), ``random`` subsets (mean of ``random_draws`` seeded draws per size)
    and the positive ``lasso`` path (``param`` = alpha). A registered method appears here
    unless it says ``frontier=False``.

    Parameters
    ----------
    pool : sdwec.pool.Pool
    random_draws, seed, lasso_alphas
        Options of the randomised methods and of the Lasso path.
    names : iterable of str, optional
        Only these methods (default: every method drawn on the frontier).

    Returns
    -------
    pandas.DataFrame
    """
    options = {"seed": seed, "random_draws": random_draws, "lasso_alphas": lasso_alphas}
    frames = []
    with threadpool_limits(1):  # small dense algebra: threads only add contention
        for method in methods.registered():
            if method.frontier and (names is None or method.name in names):
                path = method.evaluate(pool, **options)
                frames.append(_frame(method.name, path.labels, path.param, path.n_selected,
                                     pool.n_trees, path.val_accuracy, path.test_accuracy))
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    return pd.concat(frames, ignore_index=True)


def drawable(df):
    """Rows of ``df`` where some split keeps a tree (a row where every split keeps none is
    a constant guess, not a point of the trade-off)."""
    if "abstaining_splits" in df:
        splits = df["splits"] if "splits" in df else 1
        return df[df["abstaining_splits"] < splits]
    return df[~df["abstains"]] if "abstains" in df else df


def pareto(df, accuracy="val_accuracy"):
    """Rows of ``df`` not dominated in (accuracy, sparsity), both to be maximised.

    A row is dominated when another row is at least as good on both axes and strictly better
    on one. Duplicated (accuracy, sparsity) pairs keep their first row. Abstaining rows
    (every weight zero: a constant guess of the most frequent class) are never on the
    front: an ensemble of no trees is not a point of the trade-off, and its accuracy (the
    majority class's share) would otherwise anchor the front's sparse end.  Over several
    splits the same holds for a row where *any* split abstains (``abstains_any``): its mean
    mixes constant guesses into the accuracy and the tree count.

    Parameters
    ----------
    df : pandas.DataFrame
        With columns ``accuracy`` and ``sparsity`` (and ``abstains``, if any).
    accuracy : str, default="val_accuracy"
        The accuracy the front is chosen on. Validation by default: choosing on the test
        split picks the points that happened to do well on those few rows, which flatters
        them as a result.

    Returns
    -------
    pandas.DataFrame
        The front, sorted by increasing sparsity (hence decreasing accuracy).
    """
    for column in ("abstains", "abstains_any"):
        if column in df:
            df = df[~df[column].astype(bool)]
    if df.empty:
        return df.copy()
    acc = df[accuracy].to_numpy(dtype=float)
    sp = df["sparsity"].to_numpy(dtype=float)
    # Sort by sparsity descending, then accuracy descending; a row is on the front when its
    # accuracy beats every row that is at least as sparse.
    order = np.lexsort((-acc, -sp))
    keep, best = [], -np.inf
    for i in order:
        if acc[i] > best:
            keep.append(i)
            best = acc[i]
    front = df.iloc[keep]
    return front.iloc[::-1].reset_index(drop=True)


_NUMERIC = ("n_selected", "sparsity", "val_accuracy", "test_accuracy", "select_val_accuracy",
            "select_test_accuracy")


def over_splits(frames, n_val=None, n_test=None):
    """Mean of the same sweep (or peers) on several splits, with intervals that stay possible.

    Parameters
    ----------
    frames : sequence of pandas.DataFrame
        :func:`sweep` or :func:`peers` output, one per split, with the same methods in the
        same order and as many rows each (the same grid; curves over sizes have one row per
        size on every split of the same pool size). Rows are matched by position: the
        Lasso path's α grid depends on each split's data, so its ``params`` differ between
        splits while its i-th point is the i-th of each path; the first split's labels are
        kept.
    n_val, n_test : int, optional
        Rows of the validation and test split. With one split they give its accuracies the
        exact binomial interval over those rows (a single split has no spread to measure).

    Returns
    -------
    pandas.DataFrame
        The first frame's identifying columns; for every numeric column its mean over the
        splits, ``<column>_lo`` and ``<column>_hi`` (the 95 % t interval of the mean,
        clipped to what the column can be: :mod:`sdwec.intervals`; NaN for one split except
        the accuracies when their rows are given) and ``<column>_sd`` (the splits' sample
        standard deviation, 0 for one split; not a summary to show). ``splits``;
        ``abstaining_splits``, the splits where the setting keeps no tree; ``abstains``
        where every split abstains and ``abstains_any`` where at least one does.
    """
    frames = list(frames)
    if not frames:
        raise ValueError("need at least one split")
    first = frames[0].reset_index(drop=True)
    if any(len(f) != len(first) or list(f["method"]) != list(first["method"]) for f in frames):
        raise ValueError("every split must have the same rows (methods in the same order)")
    out = first.copy()
    trees = _pool_size(first)
    rows = {"val_accuracy": n_val, "test_accuracy": n_test, "select_val_accuracy": n_val,
            "select_test_accuracy": n_test}
    for column in _NUMERIC:
        if column not in first:
            continue
        values = np.column_stack([f[column].to_numpy(dtype=float) for f in frames])
        if rows.get(column):
            mean, lo, hi = intervals.accuracy_interval(values, [rows[column]] * len(frames))
        else:
            high = trees if column == "n_selected" else 1.0
            mean, lo, hi = intervals.mean_interval(values, 0.0, high)
        out[column] = mean
        out[column + "_lo"] = lo
        out[column + "_hi"] = hi
        out[column + "_sd"] = values.std(axis=1, ddof=1) if len(frames) > 1 else 0.0
    abstain = np.column_stack([f["abstains"].to_numpy(dtype=bool) for f in frames])
    out["abstaining_splits"] = abstain.sum(axis=1)
    out["abstains"] = abstain.all(axis=1)
    out["abstains_any"] = abstain.any(axis=1)
    out["splits"] = len(frames)
    return out


def _pool_size(frame):
    """Trees in the pool (l) of a frame of :data:`COLUMNS`, from a row's count and sparsity."""
    n, sparsity = frame["n_selected"].to_numpy(float), frame["sparsity"].to_numpy(float)
    usable = sparsity < 1
    if usable.any():
        return float(np.round(np.median(n[usable] / (1 - sparsity[usable]))))
    return np.inf
