"""SDWEC on one pool beside the baselines it is judged against: what the Explorer shows.

:func:`compare` solves SDWEC once on a pool's validation votes and scores it, bagging, WMV
and the single tree on both splits.  The result is small and plain (floats, lists and the
:class:`~sdwec.solver.Solution`), so a dashboard can cache it per configuration.

What a comparison rests on is part of it: :func:`default_splits` says over how many splits
a dataset's numbers must be averaged before they mean anything, and :func:`paired` /
:func:`paired_sentence` compare two methods split by split (the mean paired difference, its
spread, better/tied/worse counts and a sign test), so a page never shows noise as a finding.
"""

from __future__ import annotations

import functools
import math
import threading
import weakref
from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest

from sdwec import combiners, intervals, solver
from sdwec._util import plain
from sdwec.formatting import points, significant
from sdwec.params import SolverParams

__all__ = ["Comparison", "LambdaPath", "LambdaPaths", "PairedDifference", 
           "compare", "compare_many", "default_splits", "lambda_paths", "paths_over_splits",
           "interval_points", "lambda_path", "over_splits", "paired", "paired_difference",
           "paired_sentence",
           "rows_change",
           "scores", "shared_members", "sign_test_needs", "split_spread", "SplitSpread",
           "OUTLIER_SD", "FITS", "SPLIT_STEPS",
           "TARGET_TEST_ROWS", "ALPHA"]


@dataclass(frozen=True)
class Comparison:
    """SDWEC and the baselines on one pool.

    Attributes
    ----------
    solution : sdwec.solver.Solution
    member_accuracy : ndarray of shape (l,)
        Each tree's validation accuracy.
    methods : list of dict
        ``method`` (its id in :mod:`sdwec.methods`), ``test``, ``validation``, ``used`` for
        SDWEC and the baselines, SDWEC first and bagging second.
    abstain_label : object
        What the ensemble predicts when every weight is zero (the most frequent
        validation class).
    classes : list
        Class labels of the task.
    n_val, n_test : int
        Rows in the validation and test splits.
    test_right : ndarray of bool, shape (u, 3), optional
        Whether SDWEC, bagging and WMV (in that order) are right on each unique test row,
        for paired tests on one split (the single tree is not one of the pool's members, so
        its rows are not among the compressed votes).
    test_counts : ndarray of shape (u,), optional
        The original test rows each unique row stands for.
    """

    solution: object
    member_accuracy: np.ndarray
    methods: list
    abstain_label: object
    classes: list
    n_val: int
    n_test: int
    test_right: object = None
    test_counts: object = None


FITS = ("validation", "oob+validation")


def compare(pool, fit_on="validation", **params):
    """Solve SDWEC on ``pool`` and score it beside bagging, WMV and the single tree.

    Parameters
    ----------
    pool : sdwec.pool.Pool
    fit_on : {"validation", "oob+validation"}, default="validation"
        ``"validation"``: the paper's SDWEC, weights fitted on the validation votes and used
        as they are. ``"oob+validation"``: SDWEC-OOB (ours, ``docs/oob.md``): fitted on the
        training rows' out-of-bag votes stacked with the validation votes, and the selected
        trees vote with equal weights.
    **params
        Keyword arguments of :func:`sdwec.solve`: ``lam``, ``beta``, ``gamma``, ``eps``,
        ``iterations``, ``threshold``, ``multiclass``, or all of them as one
        ``params=SolverParams(...)``.

    Returns
    -------
    Comparison
        Its first method is ``"SDWEC"`` or ``"SDWEC-OOB"``; ``solution`` is the solver's
        (the equal-vote weights of SDWEC-OOB are its support).
    """
    return compare_many([pool], fit_on, **params)[0]


def compare_many(pools, fit_on="validation", **params):
    """:func:`compare` on the pools of several splits, their solves run together
    (:func:`sdwec.solver.solve_many`: ten splits cost a few single solves).

    Parameters
    ----------
    pools : sequence of sdwec.pool.Pool
        Pools of the same ``l`` trees (one per split).
    fit_on, **params
        As in :func:`compare`.

    Returns
    -------
    list of Comparison
        One per pool, in order.
    """
    if fit_on not in FITS:
        raise ValueError(f"fit_on must be one of {', '.join(FITS)}; got {fit_on!r}")
    oob = fit_on == "oob+validation"
    solutions = solver.solve_many([p.votes("oob+val" if oob else "val") for p in pools],
                                  **params)
    return [_scored(p, sol, oob) for p, sol in zip(pools, solutions)]


def _scored(pool, sol, oob):
    """SDWEC's solution ``sol`` on ``pool`` scored beside bagging, WMV and the single tree."""
    base = _baselines(pool)
    voting = (sol.weights > 0).astype(float) if oob else sol.weights
    val, test = pool.votes("val"), pool.votes("test")
    acc_val = [float(combiners.accuracies(voting, val, pool.prior))] + base["validation"]
    acc_test = [float(combiners.accuracies(voting, test, pool.prior))] + base["test"]
    l = pool.n_trees
    used = [f"{sol.n_selected} / {l}", f"{l} / {l}", f"{l} / {l}"]
    methods = [{"method": name, "test": acc_test[i], "validation": acc_val[i], "used": used[i]}
               for i, name in enumerate(("SDWEC-OOB" if oob else "SDWEC", "bagging", "WMV"))]
    methods.append({"method": "single", "test": base["single_test"],
                    "validation": base["single_validation"], "used": "1 (own tree)"})
    right = np.column_stack([combiners.right(voting[:, None], test, pool.prior)[:, 0],
                             base["test_right"]])
    right.setflags(write=False)
    return Comparison(solution=sol, member_accuracy=base["member_accuracy"],
                      methods=methods, abstain_label=plain(pool.prior[0]),
                      classes=[plain(c) for c in pool.classes], n_val=len(pool.y_val),
                      n_test=len(pool.y_test), test_right=right, test_counts=test.counts)


#: Per pool (by identity, dropped with the pool): its scores that no SDWEC parameter changes.
_BASELINES = {}
_BASELINES_LOCK = threading.Lock()


def _baselines(pool):
    """Bagging's and WMV's accuracies, the single tree's and every member's, on ``pool``.

    They are the same at every slider move; computed once per pool (a ten-split move then
    scores only SDWEC).  Each accuracy is the one :func:`sdwec.combiners.accuracies` gives
    for that weight vector alone (it scores every column on its own).
    """
    key = id(pool)
    with _BASELINES_LOCK:
        hit = _BASELINES.get(key)
        if hit is not None and hit[0]() is pool:
            return hit[1]
    val, test = pool.votes("val"), pool.votes("test")
    W = np.column_stack([combiners.majority(val), combiners.wmv(val)])
    member = combiners.member_accuracies(val)
    member.setflags(write=False)  # shared by every result on this pool
    test_right = combiners.right(W, test, pool.prior)
    value = {"validation": [float(a) for a in combiners.accuracies(W, val, pool.prior)],
             "test": [float(a) for a in combiners.accuracies(W, test, pool.prior)],
             "single_test": float(np.mean(pool.single_test == pool.y_test)),
             "single_validation": float(np.mean(pool.single_val == pool.y_val)),
             "member_accuracy": member, "test_right": test_right}
    with _BASELINES_LOCK:
        # The entry goes when the pool does (before its id can be reused).
        _BASELINES[key] = (weakref.ref(pool, lambda _, k=key: _BASELINES.pop(k, None)), value)
    return value


def over_splits(results):
    """Mean of :func:`compare`'s numbers over several splits, with intervals that stay possible.

    Parameters
    ----------
    results : sequence of Comparison
        One per split (the same methods in the same order).

    Returns
    -------
    list of dict
        One per method, in order: ``method``, ``test``, ``validation`` (means),
        ``test_lo``/``test_hi`` and ``validation_lo``/``validation_hi`` (the 95 % t interval
        of the mean over the splits, clipped to [0, 1]; with one split the exact binomial
        interval over its rows: :mod:`sdwec.intervals`), ``test_values`` and
        ``validation_values`` (per split), ``test_rows`` and ``validation_rows`` (in all),
        ``test_sd``, ``validation_sd`` (sample standard deviations, 0 for one split: not a
        summary to show), ``used`` and, for SDWEC,
        ``sparsity``, ``n_selected`` with their ``_lo``/``_hi`` (NaN for one split: a count
        has no sampling interval) and ``_sd``, and ``abstaining_splits``; ``splits``.
    """
    results = list(results)
    if not results:
        raise ValueError("need at least one split")
    names = [row["method"] for row in results[0].methods]
    if any([row["method"] for row in r.methods] != names for r in results):
        raise ValueError("every split must compare the same methods in the same order")
    r = len(results)

    def stats(row, name, values, high, rows=None):
        values = np.asarray(values, dtype=float)
        mean, lo, hi = (intervals.mean_interval(values, 0.0, high) if rows is None
                        else intervals.accuracy_interval(values, [rows]))
        row[name], row[f"{name}_lo"], row[f"{name}_hi"] = mean, lo, hi
        row[f"{name}_sd"] = float(values.std(ddof=1)) if r > 1 else 0.0
        row[f"{name}_values"] = [float(v) for v in values]

    out = []
    for i, name in enumerate(names):
        row = {"method": name, "splits": r, "used": results[0].methods[i]["used"]}
        for split, rows in (("test", results[0].n_test), ("validation", results[0].n_val)):
            stats(row, split, [res.methods[i][split] for res in results], 1.0, rows)
            row[f"{split}_rows"] = sum(res.n_test if split == "test" else res.n_val
                                       for res in results)
        out.append(row)
    l = len(results[0].solution.weights)
    stats(out[0], "sparsity", [res.solution.sparsity for res in results], 1.0)
    stats(out[0], "n_selected", [res.solution.n_selected for res in results], l)
    out[0]["abstaining_splits"] = sum(res.solution.n_selected == 0 for res in results)
    if r > 1:
        out[0]["used"] = f"{out[0]['n_selected']:.1f} / {l} (mean)"
    return out


def shared_members(first, second):
    """How many members two weight vectors keep in common and apart.

    Returns
    -------
    dict
        ``both``, ``only_first``, ``only_second`` (counts of members with a non-zero weight).
    """
    a, b = np.asarray(first) != 0, np.asarray(second) != 0
    if a.shape != b.shape:
        raise ValueError(f"weight vectors differ in length: {a.shape} and {b.shape}")
    return {"both": int((a & b).sum()), "only_first": int((a & ~b).sum()),
            "only_second": int((~a & b).sum())}


@dataclass(frozen=True)
class LambdaPath:
    """SDWEC at every λ of a grid on one pool, the other parameters fixed.

    Attributes
    ----------
    lams : ndarray of shape (n,)
    weights : ndarray of shape (l, n)
        The weights each λ's ensemble votes with (the support, for SDWEC-OOB).
    val_accuracy, test_accuracy : ndarray of shape (n,)
    bagging : dict
        ``{"validation": float, "test": float}`` of the full ensemble, for reference.
    """

    lams: np.ndarray
    weights: np.ndarray
    val_accuracy: np.ndarray
    test_accuracy: np.ndarray
    bagging: dict

    @property
    def n_selected(self):
        return (self.weights != 0).sum(axis=0)


def lambda_path(pool, lams, fit_on="validation", lam=None, params=None, **kwargs):
    """:func:`compare`'s SDWEC at every λ of ``lams`` (one solve each), scored on both splits.

    Parameters
    ----------
    pool : sdwec.pool.Pool
    lams : sequence of float
    fit_on : {"validation", "oob+validation"}, default="validation"
        As in :func:`compare`.
    lam : ignored
        Accepted so that a configuration's parameters can be passed as they are.
    params : SolverParams, optional
        The other parameters as one value (its λ is ignored); or give them as ``**kwargs``.
    **kwargs
        The other keyword arguments of :func:`sdwec.solve`.

    Returns
    -------
    LambdaPath
    """
    return lambda_paths([pool], lams, fit_on, params=params, **kwargs).paths[0]


@dataclass(frozen=True)
class LambdaPaths:
    """SDWEC at every λ of a grid on the pools of ``r`` splits, and what :func:`over_splits`
    makes of them at each λ: the Explorer's headline numbers for every λ of the grid.

    Accuracy intervals are those of :func:`sdwec.intervals.accuracy_interval`; the interval
    of the trees used is the t interval of the mean in [0, l] (NaN with one split).

    Attributes
    ----------
    paths : tuple of LambdaPath
        One per split, in order.
    lams : ndarray of shape (n,)
    n_trees : int
        The pools' ``l``.
    n_val, n_test : ndarray of int, shape (r,)
        Each split's validation and test rows.
    test, test_lo, test_hi, validation, validation_lo, validation_hi : ndarray of shape (n,)
        SDWEC's mean accuracy over the splits at each λ and its interval.
    n_selected, n_selected_lo, n_selected_hi : ndarray of shape (n,)
        Mean trees kept over the splits and its interval.
    abstaining_splits : ndarray of int, shape (n,)
        How many splits keep no tree at each λ (their ensemble predicts one class).
    bagging : dict
        ``test``, ``test_lo``, ``test_hi``, ``validation``, ``validation_lo``,
        ``validation_hi`` of the full ensemble (the same at every λ).
    """

    paths: tuple
    lams: np.ndarray
    n_trees: int
    n_val: np.ndarray
    n_test: np.ndarray
    test: np.ndarray
    test_lo: np.ndarray
    test_hi: np.ndarray
    validation: np.ndarray
    validation_lo: np.ndarray
    validation_hi: np.ndarray
    n_selected: np.ndarray
    n_selected_lo: np.ndarray
    n_selected_hi: np.ndarray
    abstaining_splits: np.ndarray
    bagging: dict

    @property
    def splits(self):
        return len(self.paths)


def lambda_paths(pools, lams, fit_on="validation", lam=None, params=None, **kwargs):
    """:func:`lambda_path` on the pools of several splits, summarised over them at each λ.

    Each λ is one :func:`sdwec.solver.solve_many` over every split, the call
    :func:`compare_many` makes at that λ: the numbers at the configuration's λ are exactly
    those of its :func:`over_splits`, and ten splits cost a few single solves per λ.

    Parameters
    ----------
    pools : sequence of sdwec.pool.Pool
        Pools of the same ``l`` trees (one per split).
    lams, fit_on, lam, params, **kwargs
        As in :func:`lambda_path`.

    Returns
    -------
    LambdaPaths
    """
    if fit_on not in FITS:
        raise ValueError(f"fit_on must be one of {', '.join(FITS)}; got {fit_on!r}")
    pools = list(pools)
    if not pools:
        raise ValueError("need at least one split")
    oob = fit_on == "oob+validation"
    lams = np.asarray(lams, dtype=float)
    votes = [p.votes("oob+val" if oob else "val") for p in pools]
    if params is None:
        params = SolverParams(**kwargs)
    elif kwargs:
        raise ValueError("pass either params or the individual parameters, not both")
    solved = [solver.solve_many(votes, params=params.replace(lam=float(x))) for x in lams]
    paths = []
    for i, p in enumerate(pools):
        W = np.column_stack([solutions[i].weights for solutions in solved])
        if oob:  # SDWEC-OOB's kept trees vote once each, as in compare
            W = (W > 0).astype(float)
        base = _baselines(p)
        paths.append(LambdaPath(
            lams=lams, weights=W,
            val_accuracy=np.atleast_1d(combiners.accuracies(W, p.votes("val"), p.prior)),
            test_accuracy=np.atleast_1d(combiners.accuracies(W, p.votes("test"), p.prior)),
            bagging={"validation": base["validation"][0], "test": base["test"][0]}))
    return paths_over_splits(paths, [len(p.y_val) for p in pools],
                             [len(p.y_test) for p in pools])


def paths_over_splits(paths, n_val, n_test):
    """The per-split paths of :func:`lambda_paths`, summarised over the splits at each λ.

    Parameters
    ----------
    paths : sequence of LambdaPath
        One per split, on the same λ grid and ``l``.
    n_val, n_test : sequence of int
        Each split's validation and test rows.

    Returns
    -------
    LambdaPaths
    """
    paths = tuple(paths)
    if not paths:
        raise ValueError("need at least one split")
    lams = np.asarray(paths[0].lams, dtype=float)
    if any(not np.array_equal(p.lams, lams) for p in paths):
        raise ValueError("every split's path must be on the same λ grid")
    n_val, n_test = np.asarray(n_val, dtype=int), np.asarray(n_test, dtype=int)
    l = paths[0].weights.shape[0]
    used = np.column_stack([p.n_selected for p in paths])  # (n, r)
    interval = intervals.accuracy_interval
    test = interval(np.column_stack([p.test_accuracy for p in paths]), n_test)
    val = interval(np.column_stack([p.val_accuracy for p in paths]), n_val)
    kept = intervals.mean_interval(used, 0, l)
    bag_test = interval([p.bagging["test"] for p in paths], n_test)
    bag_val = interval([p.bagging["validation"] for p in paths], n_val)
    bagging = dict(zip(("test", "test_lo", "test_hi"), map(float, bag_test)))
    bagging.update(zip(("validation", "validation_lo", "validation_hi"), map(float, bag_val)))
    return LambdaPaths(paths=tuple(paths), lams=lams, n_trees=l, n_val=n_val, n_test=n_test,
                       **{name: np.asarray(v, dtype=float)
                          for name, v in zip(("test", "test_lo", "test_hi", "validation",
                                              "validation_lo", "validation_hi", "n_selected",
                                              "n_selected_lo", "n_selected_hi"),
                                             (*test, *val, *kept))},
                       abstaining_splits=(used == 0).sum(axis=1), bagging=bagging)


# --------------------------------------------------------------------------- what it rests on

#: Numbers of splits a page may average over (the dashboard's *Splits* choices).
SPLIT_STEPS = (1, 3, 5, 10)
#: Test rows that the default number of splits adds up to, at least (see :func:`default_splits`).
TARGET_TEST_ROWS = 1000
#: Level below which the paired sign test counts as supporting a difference.
ALPHA = 0.05


def default_splits(n_rows):
    """How many stratified splits a dataset of ``n_rows`` rows is averaged over by default.

    The rule: the fewest of :data:`SPLIT_STEPS` (1, 3, 5, 10) whose test splits hold at
    least :data:`TARGET_TEST_ROWS` (1,000) rows together, and 10 where even ten do not.  A
    test split holds a tenth of the rows (80/10/10).  Shipped datasets: 10 splits for the
    nine UCI sets under 1,000 rows (17 to 85 test rows a split), 3 for waveform (500), 1
    for NSL-KDD (12,597).

    Why: an accuracy measured on ``n`` test rows has a standard error of up to
    ``0.5 / sqrt(n)``, 11 points on sonar's 21 rows, while the differences the paper's
    tables argue about are about 2 points; one such split is noise.  Over ``r`` splits with
    ``r * n >= 1000`` the mean's standard error is at most about 1.6 points (a floor: the
    splits share training rows).  Ten splits is also the fewest of the steps with which
    the paired sign test (:func:`paired_difference`) can show a difference at all (it needs
    six splits that differ), and the paper's own number of repeats; more pools than that
    cost training time for little gain.

    Parameters
    ----------
    n_rows : int
        Rows of the dataset (at least 10, the fewest that split 80/10/10).

    Returns
    -------
    int
        One of :data:`SPLIT_STEPS`.
    """
    n_rows = int(n_rows)
    if n_rows < 10:
        raise ValueError(f"need at least 10 rows to split 80/10/10, got {n_rows}")
    wanted = math.ceil(TARGET_TEST_ROWS / (n_rows // 10))
    return next((r for r in SPLIT_STEPS if r >= wanted), SPLIT_STEPS[-1])


@dataclass(frozen=True)
class PairedDifference:
    """Two methods compared split by split on the same splits (:func:`paired_difference`).

    Attributes
    ----------
    first, second : str
        The methods' names; differences are ``first − second``.
    differences : ndarray of shape (r,)
        Per split, as accuracy fractions.
    n_rows : ndarray of shape (r,) or None
        Rows each split's accuracy is measured on.
    mean, sd : float
        Mean paired difference and its sample standard deviation (NaN for one split).
    better, tied, worse : int
        Splits where ``first`` is right on more, as many, fewer rows than ``second``.
    p_value : float or None
        Two-sided sign test over the splits that differ; on one split the exact McNemar
        test over its paired rows when they were given (``mcnemar``), else ``None``.
    alpha : float
        Level below which the test supports a difference.
    lo, hi : float
        95 % t interval of the mean difference over the splits, clipped to [−1, 1] (NaN for
        one split).
    mcnemar : sdwec.intervals.McNemar or None
        One split's paired rows: where only ``first`` is right, where only ``second`` is.
    """

    first: str
    second: str
    differences: np.ndarray
    n_rows: object
    mean: float
    sd: float
    better: int
    tied: int
    worse: int
    p_value: object
    alpha: float
    lo: float = math.nan
    hi: float = math.nan
    mcnemar: object = None

    @property
    def test(self):
        """Which test gave ``p_value``: ``"sign"``, ``"McNemar"`` or ``None``."""
        if self.p_value is None:
            return None
        return "McNemar" if self.mcnemar is not None else "sign"

    @property
    def splits(self):
        return len(self.differences)

    @property
    def supported(self):
        """Whether the sign test supports a difference (``p < alpha``)."""
        return self.p_value is not None and self.p_value < self.alpha

    @property
    def rows(self):
        """The first split's difference in rows (``None`` without row counts)."""
        if self.n_rows is None:
            return None
        return int(round(self.differences[0] * self.n_rows[0]))


@functools.lru_cache(maxsize=256)
def _sign_test(successes, trials):
    """Two-sided sign test's p-value (a pure function of two counts, asked at every rerun:
    scipy's binomtest takes about 0.2 ms)."""
    return float(binomtest(successes, trials, 0.5).pvalue)


def paired_difference(first, second, n_rows=None, names=("SDWEC", "bagging"), alpha=ALPHA,
                      mcnemar=None):
    """Compare two methods' accuracies measured on the same splits, split by split.

    The test is a two-sided **sign test** (``scipy.stats.binomtest``) on the splits where
    the two differ: under "no difference" each of them is as likely to favour either
    method.  Chosen for few splits: it is exact, it assumes nothing about the size or the
    shape of the differences (on a 21-row test split they move in steps of one row, often
    tie, and a t-test would take ten equal differences for certainty), and its evidence is
    exactly the better/worse counts the page prints.  It needs at least six splits that
    differ to reach ``p < 0.05``.  The splits share training rows, so they are less
    independent than the test assumes; a p-value near the level is weak evidence.

    Parameters
    ----------
    first, second : array_like of shape (r,)
        Per-split accuracies (fractions) of the two methods, split ``i`` the same split in
        both.
    n_rows : int or array_like of shape (r,), optional
        Rows each accuracy is measured on; ties are then counted in whole rows (immune to
        float rounding), and one split's difference can be said in rows.
    names : (str, str), default ("SDWEC", "bagging")
    alpha : float, default 0.05
    mcnemar : sdwec.intervals.McNemar, optional
        With one split: the exact McNemar test on its paired rows, which then gives the
        p-value (one split has no spread over splits, but its rows can still decide).

    Returns
    -------
    PairedDifference
    """
    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if first.shape != second.shape or first.ndim != 1 or len(first) == 0:
        raise ValueError(f"need two equally long, non-empty lists of per-split accuracies; "
                         f"got shapes {first.shape} and {second.shape}")
    differences = first - second
    if n_rows is not None:
        n_rows = np.broadcast_to(np.asarray(n_rows, dtype=int), differences.shape).copy()
        steps = np.rint(differences * n_rows).astype(int)
    else:
        steps = np.where(np.abs(differences) < 1e-12, 0, np.sign(differences))
    better, worse = int(np.sum(steps > 0)), int(np.sum(steps < 0))
    r = len(differences)
    if r == 1:
        p_value = None if mcnemar is None else mcnemar.p_value
    elif better + worse == 0:
        p_value = 1.0
    else:
        p_value = _sign_test(better, better + worse)
    _, lo, hi = intervals.mean_interval(differences, -1.0, 1.0)
    return PairedDifference(first=names[0], second=names[1], differences=differences,
                            n_rows=n_rows, mean=float(differences.mean()),
                            sd=float(differences.std(ddof=1)) if r > 1 else math.nan,
                            better=better, tied=r - better - worse, worse=worse,
                            p_value=p_value, alpha=float(alpha), lo=float(lo), hi=float(hi),
                            mcnemar=mcnemar if r == 1 else None)


def scores(results, method=None, split="test"):
    """Per-split accuracies of one method of :func:`compare`'s results.

    Parameters
    ----------
    results : sequence of Comparison
    method : str, optional
        A method's name (default: the first, SDWEC or SDWEC-OOB).
    split : {"test", "validation"}

    Returns
    -------
    accuracies : ndarray of shape (r,)
    n_rows : ndarray of shape (r,)
        The rows of that split in each result.
    """
    accuracies, rows = [], []
    for result in results:
        row = result.methods[0] if method is None else next(
            (m for m in result.methods if m["method"] == method), None)
        if row is None:
            raise ValueError(f"no method {method!r} in the comparison")
        accuracies.append(row[split])
        rows.append(result.n_test if split == "test" else result.n_val)
    return np.asarray(accuracies, dtype=float), np.asarray(rows, dtype=int)


def paired(results, baseline="bagging", split="test", alpha=ALPHA):
    """SDWEC (the first method of each result) against ``baseline``, split by split.

    Parameters
    ----------
    results : sequence of Comparison
        One per split.
    baseline : str, default "bagging"
    split : {"test", "validation"}
    alpha : float, default 0.05

    Returns
    -------
    PairedDifference
    """
    results = list(results)
    if not results:
        raise ValueError("need at least one split")
    ours, rows = scores(results, None, split)
    theirs, _ = scores(results, baseline, split)
    return paired_difference(ours, theirs, rows, (results[0].methods[0]["method"], baseline),
                             alpha, mcnemar=_rows_test(results, baseline, split))


def _rows_test(results, baseline, split):
    """One split's exact McNemar test of SDWEC against ``baseline`` on its paired test rows
    (None with several splits, on validation, or for a method not among the pool's votes)."""
    first = results[0]
    names = [m["method"] for m in first.methods]
    if len(results) != 1 or split != "test" or first.test_right is None \
            or baseline not in names or names.index(baseline) >= first.test_right.shape[1]:
        return None
    right = first.test_right
    return intervals.mcnemar(right[:, 0], right[:, names.index(baseline)], first.test_counts)


def sign_test_needs(alpha=ALPHA):
    """The fewest differing splits with which a two-sided sign test can reach ``p < alpha``
    (all of them on one side: ``p = 2 * 0.5**n``); 6 at 0.05."""
    n = 1
    while 2 * 0.5 ** n >= alpha:
        n += 1
    return n


def rows_change(diff, rows_name="test rows"):
    """A one-split difference in whole rows and in points: ``"−13 of 12,597 test rows
    (−0.1 points)"``.  ``diff`` is a :class:`PairedDifference` of one split with ``n_rows``."""
    sign = "+" if diff.rows > 0 else "−" if diff.rows < 0 else ""
    return (f"{sign}{abs(diff.rows):,} of {int(diff.n_rows[0]):,} {rows_name} "
            f"({points(diff.mean)} points)")


def interval_points(diff):
    """The mean paired difference with its 95 % interval, in points:
    ``"−2.9 points [−7.3, +1.5]"`` (the mean only for one split)."""
    text = f"{points(diff.mean)} points"
    if math.isnan(diff.lo) or math.isnan(diff.hi):
        return text
    return f"{text} [{points(diff.lo)}, {points(diff.hi)}]"


def paired_sentence(diff, rows_name="test rows"):
    """One sentence saying what :func:`paired_difference` found, and no more.

    ``"vs bagging: −2.9 points [−7.3, +1.5] over 10 splits (SDWEC better on 3, tied 2,
    worse 5): no clear difference (sign test p = 0.51)."``  A direction is stated only when
    the test supports it; one split is said in rows (``"+1 of 21 test rows"``) and judged by
    the exact McNemar test on its paired rows when they were given.

    Parameters
    ----------
    diff : PairedDifference
    rows_name : str, default "test rows"
        What the rows are, for one split.

    Returns
    -------
    str
    """
    if diff.splits == 1:
        if diff.n_rows is None:
            change = f"{points(diff.mean)} points"
        else:
            change = rows_change(diff, rows_name)
        test = diff.mcnemar
        if test is None:
            return f"vs {diff.second}: {change} (one split: no test over splits)."
        text = (f"vs {diff.second}: {change} on one split ({diff.first} alone right on "
                f"{test.better:,} rows, {diff.second} alone on {test.worse:,})")
        p = f"p = {significant(diff.p_value, 2)}" if diff.p_value >= 1e-4 else "p < 0.0001"
        if diff.supported:
            verdict = "better" if test.better > test.worse else "worse"
            return (f"{text}: {diff.first} is {verdict} on these rows (exact McNemar test on "
                    f"the paired rows, {p}).")
        if test.better + test.worse == 0:
            return f"{text}: they agree on every row."
        return f"{text}: no clear difference (exact McNemar test on the paired rows, {p})."
    text = (f"vs {diff.second}: {interval_points(diff)} over {diff.splits} splits "
            f"({diff.first} better on {diff.better}, tied {diff.tied}, worse {diff.worse})")
    differing = diff.better + diff.worse
    if diff.supported:
        verdict = "better" if diff.better > diff.worse else "worse"
        # The splits redraw rows of one dataset (test rows recur across splits), so they
        # are not independent samples: the test's p is a lower bound on the real one.
        return (f"{text}: {diff.first} is {verdict} (sign test over the splits, "
                f"p = {significant(diff.p_value, 2)}; the splits share rows, so they are not "
                f"independent and the real p is larger).")
    if differing == 0:
        return f"{text}: no difference on any split."
    # The t interval and the sign test can disagree: say which one the verdict follows.
    excludes = diff.lo > 0 or diff.hi < 0
    needed = sign_test_needs(diff.alpha)
    if differing < needed:
        return (f"{text}: no clear difference (a sign test needs at least {needed} splits that "
                f"differ to show one at p < {diff.alpha:g}; "
                f"{differing} {'differs' if differing == 1 else 'differ'} here)."
                + (" The interval of the mean excludes 0, but it takes the differences for "
                   "smooth and roughly normal, which a few splits moving in whole rows are "
                   "not: " + ("choose more splits to test it." if diff.splits < SPLIT_STEPS[-1]
                              else f"{diff.splits} splits, the most the page offers, are too "
                                   f"few to test it (python -m sdwec reproduce runs more).")
                   if excludes else ""))
    return (f"{text}: no clear difference (sign test over the splits, "
            f"p = {significant(diff.p_value, 2)})."
            + (" The interval of the mean excludes 0, but it takes the differences for smooth "
               "and roughly normal, which splits moving in whole rows are not; the verdict "
               "follows the sign test, which assumes neither." if excludes else ""))


#: How far (in the other splits' standard deviations, floored at one test row) a split's
#: accuracy must lie from the other splits' mean before :func:`split_spread` says it drives
#: the spread. 5, not the textbook 3: the farthest of ten splits passes 3 of the others' sd
#: in about 20% of pure binomial noise (ten splits of 21–100 test rows, simulated), 5 in
#: about 1% (up to 9% with five splits); an abstaining split lies 9–10 sd away on iris and
#: vote.
OUTLIER_SD = 5.0


@dataclass(frozen=True)
class SplitSpread:
    """What lies under a mean ± sd over splits (:func:`split_spread`).

    Attributes
    ----------
    accuracies : ndarray of shape (r,)
        SDWEC's test accuracy on each split, in order.
    abstaining : list of int
        Indices of the splits whose ensemble kept no tree (``n_selected == 0``): they predict
        one class for every row, and their accuracy is that constant guess's.
    outlier : int or None
        The split that drives the spread, if one does: the farthest from the mean of the
        others, when it lies more than ``outlier_sd`` of the others' standard deviations from
        it, that deviation floored at one test row (``1 / n_test``: accuracies differ in whole
        rows, and others that agree exactly do not make a one-row difference an outlier).
        ``None`` under four splits.
    others_mean, others_sd : float or None
        The other splits' mean and sample standard deviation (not floored), when there is an
        outlier.
    """

    accuracies: np.ndarray
    abstaining: list
    outlier: object
    others_mean: object
    others_sd: object


def split_spread(results, outlier_sd=OUTLIER_SD):
    """Which splits abstain and whether a single split drives the spread of SDWEC's test
    accuracy.

    A mean over splits hides both: an abstaining split (every weight thresholded to zero)
    scores the constant guess of the most frequent class and is averaged in like any other,
    and one such split can make the standard deviation several times what the rest show.
    The outlier rule is deliberately simple: leave each split out in turn, and flag the one
    farthest from the others' mean if it is more than ``outlier_sd`` of their sample standard
    deviations (at least one test row's worth) away.  It needs at least three other splits
    (so ``r >= 4``).

    Parameters
    ----------
    results : sequence of Comparison
        One per split.
    outlier_sd : float, default :data:`OUTLIER_SD`

    Returns
    -------
    SplitSpread
    """
    results = list(results)
    if not results:
        raise ValueError("need at least one split")
    acc, rows = scores(results, None, "test")
    abstaining = [i for i, r in enumerate(results) if r.solution.n_selected == 0]
    outlier = others_mean = others_sd = None
    if len(acc) >= 4:
        distances = []
        for i in range(len(acc)):
            others = np.delete(acc, i)
            mean, sd = float(others.mean()), float(others.std(ddof=1))
            distances.append((abs(acc[i] - mean) / max(sd, 1 / rows[i]), mean, sd))
        i = int(np.argmax([d[0] for d in distances]))
        if distances[i][0] > outlier_sd:
            outlier, (_, others_mean, others_sd) = i, distances[i]
    return SplitSpread(accuracies=acc, abstaining=abstaining, outlier=outlier,
                       others_mean=others_mean, others_sd=others_sd)
