"""Result frames as the pages show them: labels for people, numbers without float noise.

The library's frames keep code names (``n_selected``, ``val_accuracy``) because scripts and
CSV files read them; a page shows the same rows through :func:`for_people`, which renames
the columns (:data:`COLUMN_LABELS`), names methods by their registry label, prints
``mean [lo, hi]`` where a column has an interval (``mean ± sd`` where it has only a
spread over splits), and prints accuracy differences in
points to significant figures (:mod:`sdwec.formatting`), never ``0.00000000000003``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sdwec import methods
from sdwec.formatting import mean_interval, points, significant

__all__ = ["COLUMN_LABELS", "for_people"]

#: Code name -> what a table's header says.
COLUMN_LABELS = {
    "method": "method",
    "dataset": "dataset",
    "params": "parameters",
    "n_selected": "trees used",
    "sparsity": "sparsity",
    "val_accuracy": "validation accuracy",
    "test_accuracy": "test accuracy",
    "select_val_accuracy": "equal-vote validation accuracy",
    "select_test_accuracy": "equal-vote test accuracy",
    "paper": "paper",
    "ours": "this reproduction",
    "repeats": "splits",
    "splits": "splits",
    "m": "training rows m",
    "l": "classifiers l",
    "seconds": "seconds (measured)",
    "paper_m": "paper's m",
    "paper_seconds": "paper's seconds",
    "seconds_min": "fastest run (s)",
    "seconds_max": "slowest run (s)",
    "runs": "timed runs",
    "tolerance": "gap allowed",
    "agreement": "against the paper",
    "lam": "λ",
    "beta": "β",
    "gamma": "γ",
    "eps": "ε",
}

# How many decimals a column's values keep (others: 3 significant figures).
_ACCURACY = {"val_accuracy", "test_accuracy", "select_val_accuracy", "select_test_accuracy",
             "paper", "ours", "mean accuracy"}
_DECIMALS = {**dict.fromkeys(_ACCURACY, 4), "paper": 3, "ours": 3, "sparsity": 3}
# Columns folded into the column they belong to (its spread or its interval's ends).
_FOLDED = ("_sd", "_lo", "_hi")
# Accuracy differences already in points (a column named "... (points)").
_POINTS_SUFFIX = "(points)"


def _label(name):
    try:
        return methods.get(str(name)).label
    except KeyError:
        return str(name)


def _column(frame, name):
    """One column as the page prints it (strings), with its spread if it has one."""
    values = frame[name]
    if name == "method":
        return [_label(v) for v in values]
    if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        return list(values)
    numbers = values.to_numpy(dtype=float)
    if name.endswith(_POINTS_SUFFIX):
        return [points(v / 100) for v in numbers]
    if name + "_lo" in frame and name + "_hi" in frame:
        # The interval of the mean (sdwec.intervals) wins over an sd: it stays in range.
        lo = frame[name + "_lo"].to_numpy(dtype=float)
        hi = frame[name + "_hi"].to_numpy(dtype=float)
        if name in _DECIMALS:
            return ["nan" if np.isnan(v) else mean_interval(v, a, b, 3)
                    for v, a, b in zip(numbers, lo, hi)]
        return [significant(v) if np.isnan(a) or np.isnan(b) else
                f"{significant(v)} [{significant(a)}, {significant(b)}]"
                for v, a, b in zip(numbers, lo, hi)]
    sd = frame[name + "_sd"].to_numpy(dtype=float) if name + "_sd" in frame else None
    if name in _DECIMALS:
        if sd is not None and (sd > 0).any():
            return [f"{v:.3f} (sd {e:.3f})" for v, e in zip(numbers, sd)]
        decimals = _DECIMALS[name]
        return ["nan" if np.isnan(v) else f"{v:.{decimals}f}" for v in numbers]
    if sd is not None and (sd > 0).any():
        return [f"{significant(v)} (sd {significant(e, 2)})" for v, e in zip(numbers, sd)]
    if pd.api.types.is_integer_dtype(values):
        return [f"{int(v):,}" for v in values]
    return [significant(v) for v in numbers]


def for_people(frame, columns=None):
    """``frame`` as a page's table: labelled columns, formatted numbers.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of a library function (code-named columns).  ``<column>_lo`` and
        ``<column>_hi`` beside a column are its interval (:mod:`sdwec.intervals`), folded
        into it as ``mean [lo, hi]`` (the mean alone where they are NaN); failing those, a
        ``<column>_sd`` is printed beside it as ``mean (sd …)`` (a spread, never
        ``mean ± sd``, which leaves the possible range).
    columns : sequence of str, optional
        The columns to show, in order; default every column that is not an ``_sd``,
        ``_lo`` or ``_hi``.

    Returns
    -------
    pandas.DataFrame
        Same rows, columns renamed by :data:`COLUMN_LABELS` (others unchanged), values as
        text: accuracies to 4 decimals (3 beside a spread), differences in points to
        significant figures,
        other numbers to 3 significant figures, NaN as ``"nan"``.
    """
    if columns is None:
        columns = [c for c in frame.columns if not str(c).endswith(_FOLDED)]
    missing = [c for c in columns if c not in frame]
    if missing:
        raise ValueError(f"no column {', '.join(map(repr, missing))}; the frame has "
                         f"{', '.join(map(str, frame.columns))}")
    return pd.DataFrame({COLUMN_LABELS.get(c, c): _column(frame, c) for c in columns},
                        index=range(len(frame)))
