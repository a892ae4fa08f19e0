"""SDWEC on one pool beside the baselines it is judged against: what the Explorer shows.

:func:`compare` solves SDWEC once on a pool's validation votes and scores it, bagging, WMV
and the single tree on both splits.  The result is small and plain (floats, lists and the
:class:`~sdwec.solver.Solution`), so a dashboard can cache it per configuration.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sdwec import combiners, solver
from sdwec._util import plain

__all__ = ["Comparison", "LambdaPath", "compare", "lambda_path", "over_splits", "shared_members",
           "FITS"]



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
    """

    solution: object
    member_accuracy: np.ndarray
    methods: list
    abstain_label: object
    classes: list
    n_val: int
    n_test: int


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
        Keyword arguments of :func:`sdwec.solve` (``lam``, ``beta``, ``gamma``, ``eps``,
        ``iterations``, ``threshold``).

    Returns
    -------
    Comparison
        Its first method is ``"SDWEC"`` or ``"SDWEC-OOB"``; ``solution`` is the solver's
        (the equal-vote weights of SDWEC-OOB are its support).
    """
    if fit_on not in FITS:
        raise ValueError(f"fit_on must be one of {', '.join(FITS)}; got {fit_on!r}")
    val, test = pool.votes("val"), pool.votes("test")
    oob = fit_on == "oob+validation"
    sol = solver.solve(pool.votes("oob+val") if oob else val, None, **params)
    voting = (sol.weights > 0).astype(float) if oob else sol.weights
    W = np.column_stack([voting, combiners.majority(val), combiners.wmv(val)])
    acc_val = combiners.accuracies(W, val, pool.prior)
    acc_test = combiners.accuracies(W, test, pool.prior)
    l = pool.n_trees
    used = [f"{sol.n_selected} / {l}", f"{l} / {l}", f"{l} / {l}"]
    methods = [{"method": name, "test": float(acc_test[i]), "validation": float(acc_val[i]),
                "used": used[i]}
               for i, name in enumerate(("SDWEC-OOB" if oob else "SDWEC", "bagging", "WMV"))]
    methods.append({"method": "single",
                    "test": float(np.mean(pool.single_test == pool.y_test)),
                    "validation": float(np.mean(pool.single_val == pool.y_val)),
                    "used": "1 (own tree)"})
    return Comparison(solution=sol, member_accuracy=combiners.member_accuracies(val),
                      methods=methods, abstain_label=plain(pool.prior[0]),
                      classes=[plain(c) for c in pool.classes], n_val=len(pool.y_val),
                      n_test=len(pool.y_test))


def over_splits(results):
    """Mean and spread of :func:`compare`'s numbers over several splits of the same data.

    Parameters
    ----------
    results : sequence of Comparison
        One per split (the same methods in the same order).

    Returns
    -------
    list of dict
        One per method, in order: ``method``, ``test``, ``validation`` (means), ``test_sd``,
        ``validation_sd`` (sample standard deviations, 0 for one split), ``used`` and, for
        SDWEC, ``sparsity``, ``sparsity_sd``, ``n_selected``, ``n_selected_sd``; ``splits``.
    """
    results = list(results)
    if not results:
        raise ValueError("need at least one split")
    names = [row["method"] for row in results[0].methods]
    if any([row["method"] for row in r.methods] != names for r in results):
        raise ValueError("every split must compare the same methods in the same order")

    def stats(values):
        values = np.asarray(values, dtype=float)
        return float(values.mean()), float(values.std(ddof=1)) if len(values) > 1 else 0.0

    out = []
    for i, name in enumerate(names):
        row = {"method": name, "splits": len(results), "used": results[0].methods[i]["used"]}
        for split in ("test", "validation"):
            row[split], row[f"{split}_sd"] = stats([r.methods[i][split] for r in results])
        out.append(row)
    sparsity = [r.solution.sparsity for r in results]
    selected = [r.solution.n_selected for r in results]
    out[0]["sparsity"], out[0]["sparsity_sd"] = stats(sparsity)
    out[0]["n_selected"], out[0]["n_selected_sd"] = stats(selected)
    if len(results) > 1:
        l = len(results[0].solution.weights)
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


def lambda_path(pool, lams, fit_on="validation", lam=None, **params):
    """:func:`compare`'s SDWEC at every λ of ``lams`` (one solve each), scored on both splits.

    Parameters
    ----------
    pool : sdwec.pool.Pool
    lams : sequence of float
    fit_on : {"validation", "oob+validation"}, default="validation"
        As in :func:`compare`.
    lam : ignored
        Accepted so that a configuration's parameters can be passed as they are.
    **params
        The other keyword arguments of :func:`sdwec.solve`.

    Returns
    -------
    LambdaPath
    """
    if fit_on not in FITS:
        raise ValueError(f"fit_on must be one of {', '.join(FITS)}; got {fit_on!r}")
    oob = fit_on == "oob+validation"
    votes = pool.votes("oob+val") if oob else pool.votes("val")
    lams = np.asarray(lams, dtype=float)
    W = np.column_stack([solver.solve(votes, None, lam=float(x), **params).weights
                         for x in lams])
    if oob:
        W = (W > 0).astype(float)
    val, test = pool.votes("val"), pool.votes("test")
    ones = combiners.majority(val)
    return LambdaPath(lams=lams, weights=W,
                      val_accuracy=np.atleast_1d(combiners.accuracies(W, val, pool.prior)),
                      test_accuracy=np.atleast_1d(combiners.accuracies(W, test, pool.prior)),
                      bagging={"validation": float(combiners.accuracies(ones, val, pool.prior)),
                               "test": float(combiners.accuracies(ones, test, pool.prior))})
