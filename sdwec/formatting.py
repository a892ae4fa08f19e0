"""Numbers as the pages and reports print them: significant figures, never float noise.

A teaching page that prints ``0.0 points`` for a real difference, or ``0.00000000000003`` for
a difference that is zero up to rounding, misleads; every number shown goes through here.
"""

from __future__ import annotations

import math

__all__ = ["significant", "points", "mean_sd", "mean_interval"]


def significant(value, digits=3, zero_below=1e-12):
    """``value`` to ``digits`` significant figures, as plain text.

    Parameters
    ----------
    value : float
    digits : int, default 3
        Significant figures kept (trailing zeros dropped).
    zero_below : float, default 1e-12
        Magnitudes below this are float noise (a difference of equal sums, say) and print
        as ``"0"``.

    Returns
    -------
    str
        ``"0.0312"``, ``"1.25e+04"`` for large or small magnitudes, ``"0"``, ``"nan"``.
    """
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if abs(value) < zero_below:
        return "0"
    return f"{value:.{digits}g}"


def points(difference, digits=2, sign=True):
    """An accuracy difference (a fraction) in percentage points, to significant figures.

    Parameters
    ----------
    difference : float
        A difference of accuracies, as fractions (``0.029`` is 2.9 points).
    digits : int, default 2
        Significant figures; a small real difference keeps its leading figures
        (``0.0004`` is ``"+0.04"``, never ``"+0.0"``).
    sign : bool, default True
        Print ``+`` for positive values.

    Returns
    -------
    str
        The number of points without the unit, e.g. ``"-2.9"``, ``"+0.04"``, ``"0"``.
    """
    text = significant(100 * float(difference), digits)
    if sign and text not in ("0", "nan") and not text.startswith("-"):
        text = "+" + text
    return text.replace("-", "−")


def mean_sd(mean, sd, decimals=3):
    """``"0.783 ± 0.051"``; the spread is printed with the mean's decimals.

    Parameters
    ----------
    mean, sd : float
        A mean and its standard deviation (``sd`` may be NaN for one value: then the mean only).
    decimals : int, default 3

    Returns
    -------
    str
    """
    if sd is None or math.isnan(float(sd)):
        return f"{float(mean):.{decimals}f}"
    return f"{float(mean):.{decimals}f} ± {float(sd):.{decimals}f}"


def mean_interval(mean, lo, hi, decimals=3):
    """``"0.981 [0.957, 1.000]"``: a mean and its interval (:mod:`sdwec.intervals`).

    Parameters
    ----------
    mean, lo, hi : float
        ``lo`` and ``hi`` may be NaN (one split: no interval); then the mean only.
    decimals : int, default 3

    Returns
    -------
    str
    """
    text = f"{float(mean):.{decimals}f}"
    if lo is None or hi is None or math.isnan(float(lo)) or math.isnan(float(hi)):
        return text
    return f"{text} [{float(lo):.{decimals}f}, {float(hi):.{decimals}f}]"
