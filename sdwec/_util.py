"""Small helpers shared by several modules (private: not part of the public API)."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

__all__ = ["plain", "plain_json"]


def plain(value):
    """A numpy scalar as the matching Python scalar; any other value unchanged.

    Labels and counts read from arrays are numpy scalars (``np.int64(4)``, ``np.str_("M")``);
    as dict keys, in messages or in JSON they should be ``4`` and ``"M"``.

    Parameters
    ----------
    value : object

    Returns
    -------
    object
        ``value.item()`` for a numpy scalar, else ``value`` itself.
    """
    return value.item() if isinstance(value, np.generic) else value


def plain_json(value):
    """``value`` as plain JSON data (for files that carry their provenance).

    Dicts keep their structure with ``str`` keys; lists, tuples and arrays become lists;
    numpy scalars are unwrapped by :func:`plain`; NaN and infinities become ``None``
    (JSON has no NaN); any other object becomes its ``str``.

    Parameters
    ----------
    value : object

    Returns
    -------
    object
        ``None``, ``bool``, ``int``, ``float``, ``str``, or lists and dicts of these.
    """
    if isinstance(value, dict):
        return {str(k): plain_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain_json(v) for v in value]
    value = plain(value)
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real):
        value = float(value)
        return value if math.isfinite(value) else None
    return str(value)
