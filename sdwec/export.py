"""Files the dashboard offers for download: weights as CSV and JSON, the pruned model as joblib.

Every function returns ``bytes`` ready for ``st.download_button``.  The weight files carry
their provenance (parameters, dataset, seed, metrics) so that a downloaded file says how it
was produced; :func:`read_weights_csv` reads a CSV back.  The model file holds a fitted
:class:`~sdwec.estimator.SDWECClassifier` that keeps only the selected trees, so
``joblib.load(path).predict(X)`` works directly (with ``sdwec`` importable).
"""

import io
import json

import joblib
import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier

import sdwec
from sdwec._util import plain_json
from sdwec.estimator import SDWECClassifier

__all__ = ["weights_frame", "weights_csv", "weights_json", "read_weights_csv", "pruned_model",
           "model_joblib", "FORMAT"]

FORMAT = "sdwec-weights/1"
"""Identifies the layout of the weight files; bump it when the layout changes."""

_SOLVER_PARAMS = ("lam", "beta", "gamma", "eps", "iterations", "threshold")


def _check_weights(weights):
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or w.size == 0:
        raise ValueError(f"weights must be a non-empty 1-D array; got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError("weights contain NaN or infinite values")
    return w


def weights_frame(weights):
    """The weights as a table: one row per pool member.

    Parameters
    ----------
    weights : array-like of shape (l,)

    Returns
    -------
    pandas.DataFrame
        Columns ``member`` (pool index), ``weight`` and ``selected`` (weight non-zero).
    """
    w = _check_weights(weights)
    return pd.DataFrame({"member": np.arange(len(w)), "weight": w, "selected": w != 0})


def _provenance(weights, params, dataset, seed, metrics):
    w = _check_weights(weights)
    n_selected = int(np.count_nonzero(w))
    return {
        "format": FORMAT,
        "sdwec_version": sdwec.__version__,
        "dataset": plain_json(dataset),
        "seed": plain_json(seed),
        "params": plain_json(dict(params or {})),
        "metrics": plain_json(dict(metrics or {})),
        "n_members": len(w),
        "n_selected": n_selected,
        "sparsity": 1.0 - n_selected / len(w),
    }


def weights_csv(weights, *, params=None, dataset=None, seed=None, metrics=None):
    """The weights as CSV, preceded by ``# key: <JSON value>`` provenance lines.

    Read it back with :func:`read_weights_csv`, or with
    ``pandas.read_csv(path, comment="#")`` for the table alone.

    Parameters
    ----------
    weights : array-like of shape (l,)
        Weight of every pool member (zeros for the pruned ones).
    params : dict, optional
        Parameters that produced the weights (λ, β, γ, ε, iterations, threshold, pool size...).
    dataset : str, optional
        Dataset name.
    seed : int, optional
        Seed of the pool and split.
    metrics : dict, optional
        Scores of the weights, e.g. ``{"test_accuracy": 0.95}``.

    Returns
    -------
    bytes
        UTF-8 text.
    """
    header = _provenance(weights, params, dataset, seed, metrics)
    lines = [f"# {key}: {json.dumps(value, allow_nan=False)}" for key, value in header.items()]
    table = weights_frame(weights).to_csv(index=False, float_format="%.17g", lineterminator="\n")
    return ("\n".join(lines) + "\n" + table).encode("utf-8")


def read_weights_csv(data):
    """Read a file written by :func:`weights_csv`.

    Parameters
    ----------
    data : bytes

    Returns
    -------
    table : pandas.DataFrame
        Columns ``member``, ``weight``, ``selected``.
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


def weights_json(weights, *, params=None, dataset=None, seed=None, metrics=None):
    """The weights and their provenance as one JSON document.

    Parameters are those of :func:`weights_csv`.  The document has the provenance keys
    (``format``, ``sdwec_version``, ``dataset``, ``seed``, ``params``, ``metrics``,
    ``n_members``, ``n_selected``, ``sparsity``) plus ``weights`` (all ``l`` of them) and
    ``selected`` (indices of the non-zero ones).  NaN and infinite values become ``null``.

    Returns
    -------
    bytes
        UTF-8 JSON.
    """
    document = _provenance(weights, params, dataset, seed, metrics)
    w = _check_weights(weights)
    document["weights"] = w.tolist()
    document["selected"] = np.flatnonzero(w).tolist()
    return json.dumps(document, indent=2, allow_nan=False).encode("utf-8")


def pruned_model(pool, weights, *, params=None, solution=None, feature_names=None):
    """A fitted :class:`SDWECClassifier` made of a pool's trees with the given weights.

    No solver run and no training: the weights are used as given (typically the dashboard's
    current ``Solution.weights``) and only the trees with a non-zero weight are kept
    (:meth:`SDWECClassifier.from_weights`).  The model predicts exactly like
    :func:`sdwec.combiners.vote` with these weights over the whole pool, ties going to the
    pool's most frequent validation class first (``pool.prior``).

    Parameters
    ----------
    pool : sdwec.pool.Pool
        The pool the weights belong to.
    weights : array-like of shape (l,)
        Non-negative member weights.
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
    return SDWECClassifier.from_weights(
        pool.ensemble, _check_weights(weights), tie_order=pool.prior,
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
