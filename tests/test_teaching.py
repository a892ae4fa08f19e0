"""The How-it-works page's stated numbers: by hand, and where its figures draw them."""

import math
import re

import numpy as np
import pytest

from sdwec import plots, solver, teaching


@pytest.mark.parametrize("point,eps,value,reach", [
    (0.5, 1.0, 1 / 3, 1.5), (2.0, 1.0, 2 / 3, 3.0), (-0.5, 0.1, -0.5 / 0.6, -0.6),
    (0.0, 0.1, 0.0, 0.1),
])
def test_sign_line_by_hand(point, eps, value, reach):
    line = teaching.sign_line(point, eps)
    assert line.value_at_point == pytest.approx(value, rel=1e-12)
    assert line.reaches_one_at == pytest.approx(reach, rel=1e-12)


def test_sign_line_is_where_the_figure_puts_its_dot():
    fig = plots.sign_relaxation([0.5, 2.0], 1.0)
    dots = [t for t in fig.data if t.mode == "markers"]
    assert [t.x[0] for t in dots] == [0.5, 2.0]
    assert [t.y[0] for t in dots] == pytest.approx(
        [teaching.sign_line(c, 1.0).value_at_point for c in (0.5, 2.0)])


def test_abs_gap_at_zero_by_hand():
    assert teaching.abs_gap_at_zero(3.0, 0.1) == pytest.approx(0.1 * math.log(2) / 3)
    assert teaching.abs_gap_at_zero(10.0, 1.0, w_hat=-1.0) == pytest.approx(2 * math.log(2) / 10)


def test_penalty_cut_by_hand_and_on_the_figure():
    cut = teaching.penalty_cut(15.0, 15.0, 1.0)
    assert cut.g == 15.0 and cut.level == 1e-3
    assert cut.threshold == pytest.approx(-math.log(math.exp(1e-3) - 1) / 15, rel=1e-9)
    assert teaching.penalty_cut(35.0, 5.0, 0.1).threshold == pytest.approx(0.131, abs=5e-4)
    fig = plots.penalty_threshold(15.0, 15.0, 1.0)
    vertical = [s for s in fig.layout.shapes if s.x0 == s.x1]
    assert vertical and vertical[0].x0 == pytest.approx(cut.threshold)
    assert vertical[0].line.dash == "dash"  # the page calls it the dashed vertical line


def test_penalty_caption_says_where_p_meets_the_level_or_why_the_threshold_is_zero():
    """Over the page's sliders (β 0…100, γ and ε on their grids): the caption names a
    crossing exactly where P falls to 10⁻³ at t > 0, and otherwise says why t = 0."""
    from dashboard.config import BETA_RANGE, EPS_GRID, GAMMA_RANGE

    seen = set()
    for beta in np.arange(BETA_RANGE[0], BETA_RANGE[1] + 1, 7 * BETA_RANGE[2]):
        for gamma in np.arange(GAMMA_RANGE[0], GAMMA_RANGE[1] + 1, 5 * GAMMA_RANGE[2]):
            for eps in EPS_GRID:
                cut = teaching.penalty_cut(beta, gamma, eps)
                text = teaching.penalty_caption(cut)
                at_zero = beta * math.log(2) * eps / gamma  # P(0) = β log 2 / g, by hand
                assert cut.at_zero == pytest.approx(at_zero, rel=1e-12, abs=1e-300)
                if at_zero > 1e-3:
                    assert cut.threshold > 0 and "where P meets it" in text
                    assert solver.penalty(cut.threshold, beta, gamma / eps) == \
                        pytest.approx(1e-3, rel=1e-6)
                else:
                    assert cut.threshold == 0 and "where P meets it" not in text
                    assert "threshold is t = 0" in text
                    assert ("no penalty" in text) == (beta == 0)
                seen.add((at_zero > 1e-3, beta == 0))
    assert seen == {(True, False), (False, False), (False, True)}


def test_penalty_figure_labels_its_level_at_the_level():
    fig = plots.penalty_threshold(15.0, 15.0, 1.0)
    (label,) = [a for a in fig.layout.annotations if a.text == "P = 0.001"]
    assert label.yref == "y" and label.y == pytest.approx(-3)  # log10 of 10⁻³: a log axis
    sharp = plots.penalty_threshold(15.0, 100.0, 0.1)  # g = 1000: P falls to 10⁻⁴⁰ and less
    (curve,) = sharp.data
    y = np.asarray(curve.y, dtype=float)
    assert np.nanmin(y) >= 1e-12  # nothing drawn along the floor ...
    assert np.isnan(y).any()  # ... the curve leaves the axis there
    empty = plots.penalty_threshold(0.0, 15.0, 1.0)
    assert not empty.data  # β = 0: P is 0 everywhere, nothing to draw on a log axis
    assert any("β = 0" in a.text for a in empty.layout.annotations)


# --------------------------------------------------------------------------- section 1's sentence

SIGN_POINTS = [-2.0, -1.0, -0.5, 0.5, 1.0, 2.0]  # the page's choices of H_s ŵ
EPS_SLIDER = [a * 10.0**k for k in range(-3, 2) for a in (1, 2, 5)][:-2]  # 0.001 … 10
LINE = re.compile(r"around (\S+) the line is at (\S+) there, (\S+) short of ([+−]1), and "
                  r"reaches ([+−]1) at (\S+?)( \(off the plot\))?(?:;|\. )")


def _number(text):
    return float(text.replace("−", "-"))


def test_the_eps_grid_here_is_the_slider_s():
    from dashboard.config import EPS_GRID
    assert list(EPS_GRID) == pytest.approx(EPS_SLIDER)


@pytest.mark.parametrize("eps", EPS_SLIDER)
def test_sign_caption_never_rounds_onto_what_it_falls_short_of(eps):
    caption = teaching.sign_caption(SIGN_POINTS, eps)
    found = LINE.findall(caption)
    assert [_number(f[0]) for f in found] == SIGN_POINTS, caption
    for point, value, short, one, one_again, reach, off in found:
        c, sign = _number(point), (-1.0 if _number(point) < 0 else 1.0)
        assert _number(one) == _number(one_again) == sign
        # By hand: the line x / (|c| + ε) is at c / (|c| + ε) at c, short of ±1 by
        # ε / (|c| + ε), and reaches ±1 at ±(|c| + ε).
        assert _number(value) == pytest.approx(c / (abs(c) + eps), rel=5e-3)
        assert _number(short) == pytest.approx(eps / (abs(c) + eps), rel=5e-3)
        assert _number(reach) == pytest.approx(sign * (abs(c) + eps), rel=5e-3)
        # The printed numbers keep the order of the true ones: never "at 1", never
        # "reaches +1 at 2" for the point 2.
        assert abs(_number(value)) < 1.0, (value, caption)
        assert abs(_number(reach)) > abs(c), (reach, caption)
        assert bool(off) == (abs(c) + eps > plots_x_max())
    assert "there and reaches" not in caption and " at 1 there" not in caption
    assert "the step part." not in caption and "leaves the step" in caption


def plots_x_max():
    fig = plots.sign_relaxation([0.5], 1.0)
    return float(max(fig.data[0].x))


def test_sign_caption_at_the_smallest_eps_by_hand():
    caption = teaching.sign_caption([2.0, 0.5], 0.001)
    # 2 / 2.001 = 0.99950…, 0.5 / 0.501 = 0.99800…
    assert "around 2 the line is at 0.9995 there, 0.0005 short of +1, and reaches +1 at 2.001" \
        in caption
    assert "around 0.5 the line is at 0.998 there, 0.002 short of +1, and reaches +1 at 0.501" \
        in caption
    assert teaching.sign_caption([], 1.0) == "Choose an expansion point to draw its relaxation."


# --------------------------------------------------------------------------- section 4's sentence

SPAN = re.compile(r"from w = (?:the plot's left edge, )?(\S+) to (?:the plot's right edge, )?"
                  r"(\S+?);")


def _drawn(fig):
    cost, model = (np.asarray(t.y, dtype=float) for t in fig.data[:2])
    x = np.asarray(fig.data[0].x, dtype=float)
    low, high = fig.layout.yaxis.range
    return x, cost, model, high - low


@pytest.mark.parametrize("beta,gamma,eps", [(15.0, 15.0, 1.0), (50.0, 5.0, 0.1)] + [
    (b, g, e) for b in (0.0, 100.0) for g in (1.0, 100.0) for e in (0.001, 10.0)])  # corners
def test_taylor_caption_says_what_the_figure_draws(beta, gamma, eps):
    for w_hat in np.round(np.arange(0.0, 3.0001, 0.05), 2):  # every stop of the ŵ slider
        fig = plots.taylor_model(w_hat, beta, gamma, eps)
        caption = teaching.taylor_caption(teaching.taylor_view(w_hat, beta, gamma, eps))
        x, cost, model, span = _drawn(fig)
        seen = 0.02 * span  # what the caption calls "within 2% of the plot's height"
        # How far the dashed curve leaves a straight line, measured on the drawn samples:
        # the line through its two ends (a parabola leaves its chord by C·h², as its tangent).
        chord = model[0] + (model[-1] - model[0]) * (x - x[0]) / (x[-1] - x[0])
        straight = np.max(np.abs(model - chord)) < seen
        assert ("looks like a line" in caption) == straight, (w_hat, caption)
        assert ("visible parabola" in caption) == (not straight), (w_hat, caption)
        gap = np.abs(model - cost)
        step = x[1] - x[0]
        if "across the whole plot" in caption:
            assert np.all(gap <= seen), (w_hat, caption)
            continue
        if "leaves it (by more than 2% of the plot's height) within" in caption:
            at = int(np.argmin(np.abs(x - w_hat)))
            assert gap[at] <= seen and gap[at - 1] > seen and gap[at + 1] > seen
            continue
        lo, hi = (_number(v) for v in SPAN.search(caption).groups())
        rounding = 5e-3 * max(abs(lo), abs(hi))  # three significant figures
        inside = (x >= lo + rounding) & (x <= hi - rounding)
        assert inside.any() and np.all(gap[inside] <= seen), (w_hat, caption)
        slack = rounding + step
        for end, side, edge in ((lo, x < lo - rounding, "left"), (hi, x > hi + rounding,
                                                                  "right")):
            if not side.any() or abs(end - (x[0] if edge == "left" else x[-1])) < slack:
                assert f"{edge} of w" not in caption
                continue
            near = side & (np.abs(x - end) <= 2 * slack)
            assert np.any(gap[near] > seen), (w_hat, edge, caption)
            where = np.flatnonzero(near)[-1 if edge == "left" else 0]
            above = model[where] > cost[where]
            assert f"{edge} of w = " in caption
            said = caption.split(f"{edge} of w = ")[1].split(" it runs ")[1].split()[0]
            assert said == ("above" if above else "below"), (w_hat, edge, caption)


def test_taylor_caption_at_the_page_default():
    # ŵ = 1, β = γ = 15, ε = 1: γ_r = 15/2, so the cost's curvature at ŵ is tiny
    # (C = γ_r (sech²(7.5) + β σ(7.5) σ(−7.5)) / 2 ≈ 0.031) and the model looks straight.
    view = teaching.taylor_view(1.0, 15.0, 15.0, 1.0)
    x = 7.5
    c = 7.5 * (1 / math.cosh(x) ** 2 + 15 * math.exp(-x) / (1 + math.exp(-x)) ** 2) / 2
    assert view.coefficients[2] == pytest.approx(c, rel=1e-9)
    caption = teaching.taylor_caption(view)
    assert f"C = {c:.3g}" in caption and "looks like a line" in caption
    assert "move ŵ towards 0" in caption and "runs below the cost" in caption
    assert "(|ŵ| + ε)/γ = 0.133" in caption  # 2 / 15
    assert "visible parabola" in teaching.taylor_caption(teaching.taylor_view(0.0, 15, 15, 1))


def test_taylor_title_gives_the_curvature_the_page_asks_to_watch():
    # ŵ = 1, β = γ = 15, ε = 1: C = 7.5 (sech²(7.5) + 15 σ(7.5) σ(−7.5)) / 2 (by hand), and
    # the dashed curve's second differences are 2 C h².
    x = 7.5
    c = 7.5 * (1 / math.cosh(x) ** 2 + 15 * math.exp(-x) / (1 + math.exp(-x)) ** 2) / 2
    fig = plots.taylor_model(1.0, 15.0, 15.0, 1.0)
    assert fig.layout.title.text.endswith(f", C = {c:.3g}")
    w, model = (np.asarray(v, dtype=float) for v in (fig.data[1].x, fig.data[1].y))
    h = w[1] - w[0]
    assert np.diff(model, 2) / (2 * h * h) == pytest.approx(c, rel=1e-6)
    # At ŵ = 0, γ_r = 15: C = 15 (1 + 15/4) / 2 = 35.625, printed to three figures.
    assert plots.taylor_model(0.0, 15.0, 15.0, 1.0).layout.title.text.endswith(", C = 35.6")
