"""The numbers the "How it works" page states beside its figures, from the solver's formulas.

Each sentence on that page that names a value of a relaxation (where the relaxed sign line
reaches ±1, how far the smooth |w| sits above the corner, where the penalty crosses its
level) takes it from here, and here from :mod:`sdwec.solver`, so the sentence and the figure
drawn by :mod:`sdwec.plots` cannot disagree.  Its "move this, watch that" prompts
(:data:`PROMPTS`) are data, so that a test can sweep each one's control over the page's range
and check the direction it states on the figure drawn.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sdwec import solver
from sdwec.formatting import significant

__all__ = ["SignLine", "sign_line", "sign_caption", "abs_gap_at_zero", "PenaltyCut",
           "penalty_cut", "penalty_caption", "TaylorView", "taylor_view", "taylor_caption",
           "Prompt", "PROMPTS", "Effect", "EFFECTS", "THRESHOLD_MOVES", "THRESHOLD_ORDER"]


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


def _apart(value, other, digits=3):
    """``value`` and ``other`` as text, with enough significant figures to tell them apart.

    Three figures print 2/2.001 = 0.9995 as ``1`` and 2.001 as ``2``: a sentence would then
    say the line is at 1 where it falls short of it.  Figures are added until the two texts
    differ (they always do for two different floats).
    """
    value, other = float(value), float(other)
    for d in range(digits, 18):
        a, b = significant(value, d), significant(other, d)
        if a != b or value == other:
            break
    return _minus(a), _minus(b)


def _minus(text):
    return "−" + text[1:] if text.startswith("-") else text


def _signed(text):
    return text if text.startswith("−") else "+" + text


#: The sign figure spans ``[-SIGN_X_MAX, SIGN_X_MAX]``; a line reaching ±1 further out says so.
SIGN_X_MAX = 3.0


def sign_caption(points, eps, x_max=SIGN_X_MAX) -> str:
    """The sentence beside the sign figure (section 1): where each line stands and goes.

    The wording comes from the unrounded values (the line falls short of ±1 at its point by
    ``ε / (|c| + ε)`` and reaches it ``ε`` beyond), and every number is printed with enough
    figures that it never reads as the value it differs from.

    Parameters
    ----------
    points : sequence of float
        Expansion points ``H_s ŵ``; an empty sequence asks for one.
    eps : float
        ε > 0.
    x_max : float, default=SIGN_X_MAX
        The figure's half-width: a line that reaches ±1 outside it is said to.

    Returns
    -------
    str
    """
    if not len(points):
        return "Choose an expansion point to draw its relaxation."
    parts = []
    for c in sorted(float(p) for p in points):
        line = sign_line(c, eps)
        one = -1.0 if c < 0 else 1.0
        value, one_text = _apart(line.value_at_point, one)
        reach, point = _apart(line.reaches_one_at, c)
        short = one - line.value_at_point  # > 0 towards +1, < 0 towards −1, for any ε > 0
        if short == 0:
            at = f"the line is at {_signed(one_text)} there"
        else:
            at = (f"the line is at {value} there, {significant(abs(short))} short of "
                  f"{_signed(one_text)},")
        off = " (off the plot)" if abs(line.reaches_one_at) > x_max else ""
        parts.append(f"around {point} {at} and reaches {_signed(one_text)} at {reach}{off}")
    return (f"Each dotted line is the relaxation around one expansion point (the dot). With "
            f"ε = {eps:g}: " + "; ".join(parts) + ". Away from its point each line leaves the "
            "step: past ±(|H_s ŵ| + ε) it runs on beyond ±1, and towards the origin it goes to 0 "
            "while the step stays at ±1. The relaxation is only right near the current "
            "H_s ŵ, which is why it is redrawn around the new ŵ at every iteration.")


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
    at_zero : float
        ``P(0) = β log 2 / g``, the most ``P`` is for ``w >= 0``.
    """

    g: float
    threshold: float
    level: float
    at_zero: float

    @property
    def meets(self):
        """Whether ``P`` falls to the level at some ``w > 0`` (else the threshold is 0)."""
        return self.at_zero > self.level


def penalty_cut(beta, gamma, eps) -> PenaltyCut:
    """The sharpness, level and threshold the penalty figure draws (``threshold="paper"``)."""
    g = float(gamma) / float(eps)
    return PenaltyCut(g=g, threshold=solver.paper_threshold(beta, gamma, eps),
                      level=float(solver.PENALTY_LEVEL),
                      at_zero=float(solver.penalty(0.0, beta, g)))


def penalty_caption(cut) -> str:
    """What the penalty figure (:func:`sdwec.plots.penalty_threshold`) of :func:`penalty_cut`
    ``cut`` shows: where ``P`` meets the level, or why the threshold is 0."""
    g = f"g = {significant(cut.g)}"
    if cut.meets:
        return (f"The dotted horizontal line is the level P = 10⁻³; the dashed vertical line "
                f"is where P meets it, the threshold t = {significant(cut.threshold)} ({g}). "
                f"Every final weight at or left of the dashed line is set to zero.")
    if cut.at_zero <= 0:  # β = 0
        why = ("At β = 0 there is no penalty: P(w) = 0 for every w, which a log axis cannot "
               "draw.")
    else:
        why = (f"Here P stays below the level P = 10⁻³ (the dotted line) for every w ≥ 0: "
               f"at most P(0) = β·log 2 / g = {significant(cut.at_zero)} ({g}).")
    return (f"{why} So the threshold is t = 0 (the dashed line): only weights at or below 0 "
            f"are set to zero.")


#: What the eye can tell apart on the Taylor figure: a fraction of its y-axis span.
VISIBLE = 0.02


@dataclass(frozen=True)
class TaylorView:
    """The Taylor figure of section 4 in numbers: what it draws and what that looks like.

    Attributes
    ----------
    w_hat : float
        The expansion point ŵ.
    w : ndarray
        The plotted weights, a window around ŵ.
    cost : ndarray
        The smooth per-weight cost ``|w| + P(w)`` (relaxed) at ``w``.
    model : ndarray
        Its second-order Taylor model ``A + B w + C w²`` at ``w``.
    coefficients : tuple of float
        ``(A, B, C)``.
    slope : float
        The cost's slope at ŵ, ``B + 2 C ŵ``.
    y_range : tuple of float
        The figure's y-axis range.
    tolerance : float
        ``VISIBLE`` times the y-axis span: closer than this, the two curves look as one.
    bend : float
        How far the model leaves its own tangent line at ŵ inside the window,
        ``C · (half-width)²``: under ``tolerance`` the parabola looks straight.
    close : tuple of float
        The interval around ŵ (within the window) where the model is within ``tolerance`` of
        the cost.
    beta : float
        β: with β > 0 the penalty bends the cost near 0 too.
    corner : float
        ``1/γ_r = (|ŵ| + ε)/γ``: the cost bends (its corner at 0 is rounded) over about
        this distance from ``w = 0`` and is nearly straight further away.
    """

    w_hat: float
    w: np.ndarray
    cost: np.ndarray
    model: np.ndarray
    coefficients: tuple
    slope: float
    y_range: tuple
    tolerance: float
    bend: float
    close: tuple
    beta: float
    corner: float

    @property
    def looks_straight(self):
        return self.bend < self.tolerance


def taylor_view(w_hat, beta, gamma, eps, w_max=None, n=401) -> TaylorView:
    """The cost, its Taylor model at ŵ and the window the figure of section 4 draws.

    Parameters
    ----------
    w_hat : float
        Expansion point ŵ.
    beta, gamma, eps : float
        β >= 0, γ > 0, ε > 0.
    w_max : float or None, default=None
        Half-width of the window around ŵ; ``None`` uses ``max(1, 2|ŵ|)``.
    n : int, default=401
        Samples.

    Returns
    -------
    TaylorView
    """
    w_hat = float(w_hat)
    if w_max is None:
        w_max = max(1.0, 2.0 * abs(w_hat))
    w = np.linspace(w_hat - w_max, w_hat + w_max, n)
    cost = solver.relaxed_terms(w, w_hat, gamma, eps, beta)
    a, b, c = (float(v) for v in solver.taylor_coefficients(w_hat, gamma, eps, beta))
    model = a + b * w + c * w**2
    top = float(np.max(cost))
    y_range = (min(0.0, float(np.min(cost))) - 0.05 * top, 1.3 * top)
    tolerance = VISIBLE * (y_range[1] - y_range[0])
    near = np.abs(model - cost) <= tolerance
    centre = int(np.argmin(np.abs(w - w_hat)))
    lo = hi = centre
    while lo > 0 and near[lo - 1]:
        lo -= 1
    while hi < n - 1 and near[hi + 1]:
        hi += 1
    return TaylorView(w_hat=w_hat, w=w, cost=cost, model=model, coefficients=(a, b, c),
                      slope=b + 2.0 * c * w_hat, y_range=y_range, tolerance=tolerance,
                      bend=c * w_max**2, close=(float(w[lo]), float(w[hi])),
                      beta=float(beta), corner=1.0 / float(solver.adaptive_gamma(w_hat, gamma, eps)))


def _figures(value):
    """Three significant figures, a true minus sign, and no rounding of tiny values to 0."""
    return _minus(significant(value, zero_below=0.0))


def _side(view, index):
    return "above" if view.model[index] > view.cost[index] else "below"


def taylor_caption(view) -> str:
    """The sentence beside the Taylor figure (section 4), worded from what it draws.

    At ŵ = 1 with the sidebar's defaults the cost is almost straight near ŵ, and so is its
    quadratic model: the sentence says so instead of promising a visible parabola, and says
    where the two curves part and why.
    """
    c = view.coefficients[2]
    lo, hi = view.close
    n = len(view.w)
    i_lo, i_hi = int(np.searchsorted(view.w, lo)), int(np.searchsorted(view.w, hi))
    text = f"At ŵ = {_figures(view.w_hat)} "
    if view.looks_straight:
        text += (f"the cost is nearly straight around ŵ (slope {_figures(view.slope)}), so its "
                 f"quadratic model is too: its curvature C = {_figures(c)} bends it by only "
                 f"{_figures(view.bend)} across the plot, less than the eye can see, and the "
                 "dashed curve looks like a line.")
    else:
        text += f"the quadratic model is a visible parabola (curvature C = {_figures(c)})."
    whole = i_lo == 0 and i_hi == n - 1
    if i_lo == i_hi:  # so sharp that the model leaves the cost at the next drawn sample
        step = float(view.w[1] - view.w[0])
        sides = [f"left of ŵ it runs {_side(view, i_lo - 1)} the cost"] if i_lo > 0 else []
        sides += [f"right of ŵ it runs {_side(view, i_hi + 1)} it"] if i_hi < n - 1 else []
        text += (f" It touches the cost at ŵ and leaves it (by more than {VISIBLE:.0%} of the "
                 f"plot's height) within {_figures(step)} on either side: "
                 + " and ".join(sides) + ".")
    elif whole:
        text += " It touches the cost at ŵ and stays on it across the whole plot."
    else:
        to = _figures(hi) if i_hi < n - 1 else f"the plot's right edge, {_figures(hi)}"
        frm = _figures(lo) if i_lo > 0 else f"the plot's left edge, {_figures(lo)}"
        ends = []
        if i_lo > 0:
            ends.append(f"left of w = {_figures(lo)} it runs {_side(view, i_lo - 1)} the cost")
        if i_hi < n - 1:
            ends.append(f"right of w = {_figures(hi)} it runs {_side(view, i_hi + 1)} it")
        text += (f" It touches the cost at ŵ and lies on it (within {VISIBLE:.0%} of the "
                 f"plot's height) from w = {frm} to {to}; " + " and ".join(ends) + ".")
    if view.looks_straight:
        if abs(view.w_hat) > view.corner:
            text += (" The cost bends only within about (|ŵ| + ε)/γ = "
                     f"{_figures(view.corner)} of w = 0, where the corner of |w| "
                     + ("and the penalty are" if view.beta > 0 else "is")
                     + "; move ŵ towards 0 to see the parabola curve.")
        else:
            text += (" The corner of |w| is rounded over about (|ŵ| + ε)/γ = "
                     f"{_figures(view.corner)} here, so the cost barely bends in this window; "
                     "raise γ or lower ε to see the parabola curve.")
    if whole:
        return text + (" Here the model is good over the whole window; in general it is right "
                       "only near ŵ, which is why the slow-step term (w − ŵ)²/l keeps each "
                       "iteration's step small.")
    return text + (" The model is right only near ŵ, which is why the slow-step term "
                   "(w − ŵ)²/l keeps each iteration's step small.")


# --------------------------------------------------------------------------- prompts


@dataclass(frozen=True)
class Prompt:
    """One "move this, watch that" prompt of How it works: one control, one thing in the
    figure of its section, and which way that thing goes.

    ``tests/test_how_prompts.py`` finds the control on the page, sweeps it over the page's
    own range and reads ``measure`` off the figure drawn at each value, to check ``rises``.

    Attributes
    ----------
    control : str
        The control: the page's widget key is ``how_{section}_{control}``.
    name : str
        The control's label on the page.
    up : bool
        The control is moved to larger values (else to smaller ones).
    watch, does : str
        What to look at in the figure, and what it does then.
    measure : str
        The number of the figure that ``does`` is about (named for the test that reads it).
    rises : bool
        Whether that number rises as the control moves so (never the other way).
    """

    control: str
    name: str
    up: bool
    watch: str
    does: str
    measure: str
    rises: bool


#: The prompts of each section of How it works, keyed as its widgets are (``how_{key}_…``).
PROMPTS = {
    "sign": (
        Prompt("eps", "ε", False, "each dot", "move towards the step at ±1", "dot height", True),
        Prompt("eps", "ε", False, "where each dotted line meets ±1", "close in on its dot",
               "meets ±1 beyond the dot", False),
    ),
    "abs": (
        Prompt("gamma", "γ", True, "the dashed curves at w = 0",
               "sink towards the corner of |w|", "gap at 0", False),
        Prompt("eps", "ε", True, "its dashed curve", "sit higher above the corner at w = 0",
               "gap at 0", True),
    ),
    "pen": (
        Prompt("beta", "β", True, "the threshold (the number on the dashed line)", "grow",
               "threshold", True),
        Prompt("gamma", "γ", True, "the threshold", "shrink", "threshold", False),
        Prompt("eps", "ε", True, "the threshold", "grow", "threshold", True),
    ),
    "tay": (
        Prompt("what", "ŵ", False, "the dashed parabola", "bend more sharply (C, in the title, "
               "grows)", "curvature", True),
        Prompt("what", "ŵ", True, "the dashed model", "drop below the solid cost (at ŵ = 0 it "
               "lies above it)", "runs below the cost", True),
    ),
}


# --------------------------------------------------------------------------- effects


@dataclass(frozen=True)
class Effect:
    """What moving one solver parameter does to the number of trees kept, as measured.

    The sentence a page shows (``text``) and the claim it makes (``direction``,
    ``how_often``) live together so that ``tests/test_effects.py`` can sweep the parameter
    on the shipped datasets and check the very claim the text makes.

    Attributes
    ----------
    parameter : str
        The :func:`sdwec.solve` keyword: ``"lam"``, ``"beta"``, ``"gamma"``, ``"eps"``,
        ``"iterations"`` or ``"threshold"``.
    direction : {"more", "fewer", "depends"}
        Trees kept as the parameter rises (for the threshold rule: along
        :data:`THRESHOLD_ORDER`); ``"depends"``: either way, by dataset and λ or by where
        the parameter starts (the text then says which way where, each part tested).
    how_often : {"always", "almost always", "usually", "either way"}
        How often the direction holds where the count changes: every time, in at least
        nine in ten cases, in at least two in three, or each way in at least one in four
        (the rules are in the test).
    text : str
        The sentence shown (a tooltip in the sidebar, a caption on How it works).
    """

    parameter: str
    direction: str
    how_often: str
    text: str


#: The threshold rules from the strictest to the most lenient: each keeps at least the trees
#: the one before it keeps (the ``"threshold"`` effect).
THRESHOLD_ORDER = ("adaptive", "paper", "none")

#: What moves the paper's threshold (line 15) and which way: exact, from its closed form.
THRESHOLD_MOVES = ("Raising β or ε moves the threshold right and raising γ moves it left: were "
                   "the weights held fixed, raising β or ε could only cut more of them and "
                   "raising γ fewer. But the weights move too, so what happens to the number "
                   "of trees kept is measured.")

#: Measured on the shipped datasets by tests/test_effects.py (every direction and quantifier
#: below is checked there, at several λ, on the mean over splits).
EFFECTS = {
    "lam": Effect("lam", "more", "usually",
                  "A larger λ usually keeps more trees. With the default β, γ and ε, a λ of "
                  "0.01 or less switches every tree off on the ten UCI datasets (the "
                  "ensemble abstains); how far up every tree stays off depends on the "
                  "dataset."),
    "beta": Effect("beta", "depends", "either way",
                   "β = 0 puts the threshold at 0 and keeps the most trees. Above 0, whether a "
                   "larger β keeps more trees or fewer depends on the dataset and on λ."),
    "gamma": Effect("gamma", "depends", "either way",
                    "Whether a larger γ keeps more trees or fewer depends on where γ starts. "
                    "At λ up to the default 10, γ = 1 keeps at least twice as many trees as "
                    "γ = 5 (every tree at λ = 2 or less); above γ = 5 a larger γ usually "
                    "keeps more, so the count is lowest in between. At λ = 200 or more, "
                    "γ = 1 keeps fewer trees than γ = 5 on most datasets."),
    "eps": Effect("eps", "fewer", "almost always",
                  "A larger ε almost always keeps fewer trees; a smaller ε keeps more."),
    "iterations": Effect("iterations", "fewer", "usually",
                         "More iterations usually keep fewer trees: as they go on, weights "
                         "fall under the threshold."),
    "threshold": Effect("threshold", "more", "always",
                        "In the order *adaptive*, *paper*, *none* each rule keeps more trees "
                        "than the one before or as many: *none* keeps every positive weight, "
                        "*paper* cuts those under one threshold set by β, γ and ε, *adaptive* "
                        "gives each weight its own threshold, never below *paper*'s."),
}
