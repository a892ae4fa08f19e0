"""Files the dashboard offers for download: weights as CSV and JSON, the pruned model as joblib.

Every function returns ``bytes`` ready for ``st.download_button``.  The weight files carry
their provenance (parameters, dataset, seed, metrics, what the weights were fitted on and how
the kept trees vote) so that a downloaded file says how it was produced;
:func:`read_weights_csv` reads a CSV back.  The model file holds a fitted
:class:`~sdwec.estimator.SDWECClassifier` that keeps only the selected trees, so
``joblib.load(path).predict(X)`` works directly (with ``sdwec`` importable).

Every function takes Algorithm 1's weights and the fit they come from (``fit_on``); files and
model hold the weights the ensemble *votes* with (:func:`sdwec.voting.voting_weights`): for
SDWEC-OOB, 1 on each kept tree, Algorithm 1's weights kept beside them as ``solver_weight``.
"""

import io
import json
import re

import joblib
import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier

import sdwec
from sdwec import voting
from sdwec._util import plain_json
from sdwec.estimator import SDWECClassifier

__all__ = ["weights_frame", "weights_csv", "weights_json", "read_weights_csv", "pruned_model",
           "model_joblib", "file_stem", "FORMAT"]

FORMAT = "sdwec-weights/2"
"""Identifies the layout of the weight files; bump it when the layout changes (2: the
``weight`` column holds the voting weights, ``solver_weight`` Algorithm 1's; ``fit`` and
``vote`` in the provenance)."""

_SOLVER_PARAMS = ("lam", "beta", "gamma", "eps", "iterations", "threshold")


def _check_weights(weights):
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or w.size == 0:
        raise ValueError(f"weights must be a non-empty 1-D array; got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError("weights contain NaN or infinite values")
    return w


def weights_frame(weights, fit_on="validation"):
    """The weights as a table: one row per pool member.

    Parameters
    ----------
    weights : array-like of shape (l,)
        Algorithm 1's weights (zeros for the pruned members).
    fit_on : {"validation", "oob+validation"}, default="validation"
        The fit the weights come from (:mod:`sdwec.voting`).

    Returns
    -------
    pandas.DataFrame
        Columns ``member`` (pool index), ``weight`` (what the member votes with),
        ``solver_weight`` (Algorithm 1's weight; equal to ``weight`` for a weighted vote) and
        ``selected`` (weight non-zero).
    """
    w = _check_weights(weights)
    vote = voting.voting_weights(w, fit_on)
    return pd.DataFrame({"member": np.arange(len(w)), "weight": vote, "solver_weight": w,
                         "selected": vote != 0})


def file_stem(dataset, *, params, n_trees, seed, fit_on="validation", task=None):
    """A file name stem that tells one configuration's downloads from another's.

    Every setting that changes the weights is in it, so two configurations never overwrite
    each other's files: ``sdwec_sonar_binary_l200_s0_lam10_b15_g15_e1_k25_paper_val``
    (dataset, task, pool size ``l``, seed ``s``, λ, β, γ, ε, iterations ``k``, threshold
    rule, fit ``val`` or ``oob``).  Only letters, digits, ``.``, ``-`` and ``_`` remain.

    Parameters
    ----------
    dataset : str
    params : dict
        ``lam``, ``beta``, ``gamma``, ``eps``, ``iterations``, ``threshold``.
    n_trees, seed : int
    fit_on : {"validation", "oob+validation"}, default="validation"
    task : str, optional

    Returns
    -------
    str
    """
    parts = ["sdwec", str(dataset)] + ([str(task)] if task else []) + [
        f"l{n_trees}", f"s{seed}", f"lam{params['lam']:g}", f"b{params['beta']:g}",
        f"g{params['gamma']:g}", f"e{params['eps']:g}", f"k{params['iterations']}",
        str(params["threshold"]), "oob" if voting.fit_name(fit_on) == "oob" else "val"]
    # Within a part anything else becomes "-", so "_" only ever separates parts.
    return "_".join(re.sub(r"[^A-Za-z0-9.\-]+", "-", part).strip("-.") or "x"
                    for part in parts)


def _provenance(weights, fit_on, params, dataset, seed, metrics, scope=None):
    w = voting.voting_weights(_check_weights(weights), fit_on)
    n_selected = int(np.count_nonzero(w))
    return {
        "format": FORMAT,
        "sdwec_version": sdwec.__version__,
        "fit": voting.fit_name(fit_on),
        "vote": voting.vote_of(fit_on),
        "dataset": plain_json(dataset),
        "seed": plain_json(seed),
        "scope": plain_json(scope),
        "params": plain_json(dict(params or {})),
        "metrics": plain_json(dict(metrics or {})),
        "n_members": len(w),
        "n_selected": n_selected,
        "sparsity": 1.0 - n_selected / len(w),
    }


def weights_csv(weights, *, fit_on="validation", params=None, dataset=None, seed=None,
                metrics=None, scope=None):
    """The weights as CSV, preceded by ``# key: <JSON value>`` provenance lines.

    Read it back with :func:`read_weights_csv`, or with
    ``pandas.read_csv(path, comment="#")`` for the table alone.

    Parameters
    ----------
    weights : array-like of shape (l,)
        Algorithm 1's weight of every pool member (zeros for the pruned ones).
    fit_on : {"validation", "oob+validation"}, default="validation"
        What the weights were fitted on; it decides how the kept members vote
        (:mod:`sdwec.voting`), recorded as ``fit`` (``"validation"``/``"oob"``) and ``vote``
        (``"weighted"``/``"equal"``).
    params : dict, optional
        Parameters that produced the weights (λ, β, γ, ε, iterations, threshold, pool size...).
    dataset : str, optional
        Dataset name.
    seed : int, optional
        Seed of the pool and split.
    metrics : dict, optional
        Scores of the weights, e.g. ``{"test_accuracy": 0.95}``.
    scope : str, optional
        What the weights and metrics are of, recorded as ``scope``: e.g. "split 1 of 10
        (seed 0); the page's headline is the mean over 10 splits", so that a file's metrics
        are not mistaken for a mean shown elsewhere.

    Returns
    -------
    bytes
        UTF-8 text.
    """
    header = _provenance(weights, fit_on, params, dataset, seed, metrics, scope)
    lines = [f"# {key}: {json.dumps(value, allow_nan=False)}" for key, value in header.items()]
    table = weights_frame(weights, fit_on).to_csv(index=False, float_format="%.17g",
                                                 lineterminator="\n")
    return ("\n".join(lines) + "\n" + table).encode("utf-8")


def read_weights_csv(data):
    """Read a file written by :func:`weights_csv`.

    Parameters
    ----------
    data : bytes

    Returns
    -------
    table : pandas.DataFrame
        Columns ``member``, ``weight`` (the voting weights), ``solver_weight``, ``selected``.
    provenance : dict
        The ``# key: value`` lines, values decoded from JSON.

    Raises
    ------
    ValueError
        If a provenance line is not ``# key: <JSON>``.
    """
    text = data.decode("utf-8")
    provenance = {}
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        key, sep, value = line[1:].partition(":")
        try:
            if not sep:
                raise ValueError("no ':'")
            provenance[key.strip()] = json.loads(value)
        except ValueError as exc:
            raise ValueError(f"malformed provenance line {line!r} ({exc}); expected "
                             "'# key: <JSON value>'") from None
    # pandas < 3 parses floats to within an ulp unless asked; pandas 3 round-trips by default
    # (and deprecates the option).
    exact = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}
    table = pd.read_csv(io.StringIO(text), comment="#", **exact)
    return table, provenance


def weights_json(weights, *, fit_on="validation", params=None, dataset=None, seed=None,
                 metrics=None, scope=None):
    """The weights and their provenance as one JSON document.

    Parameters are those of :func:`weights_csv`.  The document has the provenance keys
    (``format``, ``sdwec_version``, ``fit``, ``vote``, ``dataset``, ``seed``, ``scope``,
    ``params``, ``metrics``, ``n_members``, ``n_selected``, ``sparsity``) plus ``weights`` (the voting
    weights, all ``l`` of them), ``solver_weights`` (Algorithm 1's) and ``selected`` (indices
    of the non-zero ones).  NaN and infinite values become ``null``.

    Returns
    -------
    bytes
        UTF-8 JSON.
    """
    document = _provenance(weights, fit_on, params, dataset, seed, metrics, scope)
    w = _check_weights(weights)
    vote = voting.voting_weights(w, fit_on)
    document["weights"] = vote.tolist()
    document["solver_weights"] = w.tolist()
    document["selected"] = np.flatnonzero(vote).tolist()
    return json.dumps(document, indent=2, allow_nan=False).encode("utf-8")


def pruned_model(pool, weights, *, fit_on="validation", params=None, solution=None,
                 feature_names=None):
    """A fitted :class:`SDWECClassifier` made of a pool's trees, voting as the fit says.

    No solver run and no training: the weights (typically the dashboard's current
    ``Solution.weights``) become the voting weights of ``fit_on``
    (:func:`sdwec.voting.voting_weights`: as given for ``"validation"``, 1 on each kept tree
    for SDWEC-OOB) and only the trees with a non-zero weight are kept
    (:meth:`SDWECClassifier.from_weights`).  The model predicts exactly like
    :func:`sdwec.combiners.vote` with these voting weights over the whole pool, ties going to
    the pool's most frequent validation class first (``pool.prior``).

    Parameters
    ----------
    pool : sdwec.pool.Pool
        The pool the weights belong to.
    weights : array-like of shape (l,)
        Non-negative member weights (Algorithm 1's).
    fit_on : {"validation", "oob+validation"}, default="validation"
        The fit the weights come from; recorded in the model's ``fit_on`` and ``vote``
        parameters (``"weighted"`` or ``"uniform"``), so ``clone(model).fit(X, y)`` fits the
        same way.
    params : dict, optional
        Solver parameters that produced the weights; the entries named like
        :class:`SDWECClassifier` parameters (``lam``, ``beta``, ``gamma``, ``eps``,
        ``iterations``, ``threshold``) are recorded in the model's ``get_params()``.
    solution : sdwec.solver.Solution, optional
        Kept as ``solution_`` (the solver's history).
    feature_names : sequence of str, optional
        Column names; when given, ``predict`` checks them on DataFrames.

    Returns
    -------
    SDWECClassifier
        Fitted; ``n_estimators`` and ``random_state`` record the pool's size and seed and
        ``estimator`` its tree parameters, so ``clone(model).fit(X, y)`` trains a similar
        model from scratch.

    Raises
    ------
    ValueError
        If the weights do not match the pool or are negative or not finite.
    """
    chosen = {k: v for k, v in dict(params or {}).items() if k in _SOLVER_PARAMS}
    tree_params = pool.meta.get("tree_params") or {}
    vote = voting.vote_of(fit_on)
    return SDWECClassifier.from_weights(
        pool.ensemble, voting.voting_weights(_check_weights(weights), fit_on),
        fit_on=fit_on, vote="uniform" if vote == "equal" else "weighted", tie_order=pool.prior,
        feature_names=feature_names, solution=solution,
        estimator=DecisionTreeClassifier(**tree_params) if tree_params else None,
        n_estimators=len(pool.estimators), random_state=pool.meta.get("seed"), **chosen)


def model_joblib(model, compress=3):
    """A fitted model serialised with :func:`joblib.dump`.

    Parameters
    ----------
    model : estimator
        Typically the result of :func:`pruned_model`.
    compress : int, default=3
        joblib's zlib compression level.

    Returns
    -------
    bytes
        Load with ``joblib.load(path_or_file)``; like any pickle, only load trusted files.
    """
    buffer = io.BytesIO()
    joblib.dump(model, buffer, compress=compress)
    return buffer.getvalue()
