"""The numbers the "How it works" page states beside its figures, from the solver's formulas.

Each sentence on that page that names a value of a relaxation (where the relaxed sign line
reaches ±1, how far the smooth |w| sits above the corner, where the penalty crosses its
level) takes it from here, and here from :mod:`sdwec.solver`, so the sentence and the figure
drawn by :mod:`sdwec.plots` cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from sdwec import solver

__all__ = ["SignLine", "sign_line", "abs_gap_at_zero", "PenaltyCut", "penalty_cut"]


@dataclass(frozen=True)
class SignLine:
    """The relaxed sign of eq. 6 around one expansion point ``c = H_s ŵ``.

    Attributes
    ----------
    point : float
        ``c``.
    value_at_point : float
        The line's value at ``H_s w = c``: ``c / (|c| + ε)``, short of ``sgn(c)`` by
        ``ε / (|c| + ε)``.
    reaches_one_at : float
        Where the line reaches ``sgn(c)`` (±1): ``H_s w = sgn(c) (|c| + ε)``, ε beyond ``c``
        (``+ε`` for ``c = 0``, where it reaches +1).
    """

    point: float
    value_at_point: float
    reaches_one_at: float


def sign_line(point, eps) -> SignLine:
    """Where the relaxed sign around ``point`` stands at the point, and where it reaches ±1.

    Parameters
    ----------
    point : float
        The expansion point ``H_s ŵ``.
    eps : float
        ε > 0.

    Returns
    -------
    SignLine
    """
    point = float(point)
    slope = float(solver.sign_approximation(1.0, point, eps))
    value = float(solver.sign_approximation(point, point, eps))
    return SignLine(point=point, value_at_point=value,
                    reaches_one_at=(-1.0 if point < 0 else 1.0) / slope)


def abs_gap_at_zero(gamma, eps, w_hat=None) -> float:
    """How far the smooth ``|w|`` (eq. 7) sits above the corner of ``|w|`` at ``w = 0``.

    Parameters
    ----------
    gamma, eps : float
        γ > 0, ε > 0.
    w_hat : float or None, default=None
        The ŵ that sets ``γ_r = γ / (|ŵ| + ε)``; ``None`` means ŵ follows w (the paper's
        Figure 2), so ŵ = 0 there.

    Returns
    -------
    float
        ``(|ŵ| + ε) log 2 / γ``.
    """
    w_hat = 0.0 if w_hat is None else float(w_hat)
    return float(solver.abs_approximation(0.0, w_hat, gamma, eps))


@dataclass(frozen=True)
class PenaltyCut:
    """The threshold of Algorithm 1, line 15, under the paper's reading.

    Attributes
    ----------
    g : float
        The sharpness the penalty is read at, ``γ / ε`` (the adaptive ``γ_r`` at ``ŵ_r = 0``).
    threshold : float
        Where ``P(w) = β/g · log(e^{-g w} + 1)`` falls to the level; 0 when it never does
        for ``w >= 0``.
    level : float
        The level, 10⁻³.
    """

    g: float
    threshold: float
    level: float


def penalty_cut(beta, gamma, eps) -> PenaltyCut:
    """The sharpness, level and threshold the penalty figure draws (``threshold="paper"``)."""
    return PenaltyCut(g=float(gamma) / float(eps),
                      threshold=solver.paper_threshold(beta, gamma, eps),
                      level=float(solver.PENALTY_LEVEL))
