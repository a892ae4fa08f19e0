"""The How-it-works page's stated numbers: by hand, and where its figures draw them."""

import math

import pytest

from sdwec import plots, teaching


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
