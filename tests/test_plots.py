"""Figure builders: the right traces, with values checked against hand-derived numbers."""

import json
import math
import re

import numpy as np
import plotly.io as pio
import pytest

from sdwec import methods, plots, styles
from sdwec.solver import IterationRecord


def _trace(fig, name):
    matches = [t for t in fig.data if t.name == name]
    assert len(matches) == 1, [t.name for t in fig.data]
    return matches[0]


def _drawn(fig):
    """The traces that draw something: a figure keeps the same traces at every setting (a
    page swaps them while a slider moves), hidden or empty where they have nothing to show."""
    return [t for t in fig.data if t.visible is not False and t.x is not None and len(t.x)]


def _value_at(trace, x):
    xs = np.asarray(trace.x, dtype=float)
    i = int(np.argmin(np.abs(xs - x)))
    assert abs(xs[i] - x) < 1e-9, "x is not a sample point"
    return float(np.asarray(trace.y, dtype=float)[i])


def test_sign_relaxation_lines_meet_hand_values():
    # Around H_s ŵ = 2 with ε = 1 the relaxation is x / 3: 2/3 at x = 2, -1 at x = -3.
    fig = plots.sign_relaxation([2.0, 0.5], eps=1.0, x_max=3.0, n=601)
    line = _trace(fig, "x / (|2| + ε)")
    assert _value_at(line, 2.0) == pytest.approx(2.0 / 3.0)
    assert _value_at(line, -3.0) == pytest.approx(-1.0)
    assert _value_at(_trace(fig, "x / (|0.5| + ε)"), 3.0) == pytest.approx(2.0)
    exact = _trace(fig, "sgn(x)")
    assert set(np.unique(exact.y)) == {-1.0, 0.0, 1.0}
    # One line and one marker per expansion point, plus sgn itself.
    assert len(fig.data) == 1 + 2 * 2


def test_abs_approximation_paper_limits():
    # ŵ = w (Figure 2): at w = 0 the curve is ε log 2 / γ; at w = ±2, γ_r = γ / (2 + ε) and
    # the curve is (2 + ε)/γ · log(e^(2γ_r) + e^(-2γ_r)), within 1e-6 of |w| = 2.
    gamma = 10.0
    fig = plots.abs_approximation(gamma, [0.1, 1.0], w_max=2.0, n=401)
    for eps in (0.1, 1.0):
        curve = _trace(fig, f"γ = {gamma:g}, ε = {eps:g}")
        assert _value_at(curve, 0.0) == pytest.approx(eps * math.log(2) / gamma)
        g = gamma / (2.0 + eps)
        hand = math.log(math.exp(2 * g) + math.exp(-2 * g)) / g
        assert _value_at(curve, 2.0) == pytest.approx(hand, rel=1e-12)
        assert _value_at(curve, -2.0) == pytest.approx(hand, rel=1e-12)
        assert hand == pytest.approx(2.0, abs=1e-6)
    assert _value_at(_trace(fig, "|w|"), -1.5) == pytest.approx(1.5)


def test_abs_approximation_fixed_expansion_point():
    # ŵ = 1, γ = 2, ε = 1: γ_r = 1, so the curve is log(e^-w + e^w) = log(2 cosh w).
    fig = plots.abs_approximation(2.0, [1.0], w_hat=1.0, w_max=2.0, n=401)
    curve = _trace(fig, "γ = 2, ε = 1")
    assert _value_at(curve, 0.0) == pytest.approx(math.log(2.0))
    assert _value_at(curve, 1.0) == pytest.approx(math.log(2.0 * math.cosh(1.0)))
    assert "ŵ = 1" in fig.layout.title.text


def test_penalty_threshold_line_at_hand_derived_root():
    # β = γ = 15, ε = 1: g = 15 and P(w) = 1e-3 at w = -ln(e^(1e-3·15/15) - 1) / 15.
    expected = -math.log(math.expm1(1e-3)) / 15.0
    fig = plots.penalty_threshold(15.0, 15.0, 1.0)
    vlines = [s for s in fig.layout.shapes if s.x0 == s.x1]
    hlines = [s for s in fig.layout.shapes if s.y0 == s.y1]
    assert len(vlines) == 1 and vlines[0].x0 == pytest.approx(expected, rel=1e-9)
    assert hlines[0].y0 == pytest.approx(1e-3)
    curve = _trace(fig, "P(w)")
    x, y = np.asarray(curve.x), np.asarray(curve.y)
    # P decreases through 1e-3 at the threshold (linear interpolation between samples).
    assert np.interp(expected, x, y) == pytest.approx(1e-3, rel=0.05)
    assert fig.layout.yaxis.type == "log"
    # β log 2 / g at w = 0.
    assert np.interp(0.0, x, y) == pytest.approx(15.0 * math.log(2) / 15.0, rel=0.02)


def test_penalty_threshold_zero_when_beta_zero():
    fig = plots.penalty_threshold(0.0, 15.0, 1.0)
    vline = [s for s in fig.layout.shapes if s.x0 == s.x1][0]
    assert vline.x0 == 0.0


def test_taylor_model_touches_and_is_quadratic():
    fig = plots.taylor_model(0.8, beta=15.0, gamma=5.0, eps=0.1, n=801)
    exact = _trace(fig, "|w| + P(w) (relaxed)")
    model = _trace(fig, "A + Bw + Cw² (Taylor)")
    x = np.asarray(exact.x)
    e, q = np.asarray(exact.y), np.asarray(model.y)
    i = int(np.argmin(np.abs(x - 0.8)))
    assert q[i] == pytest.approx(e[i], rel=1e-9)
    # Second-order contact: the gap shrinks like h³ (ratio ~8 when h halves).
    h = x[1] - x[0]
    gap = lambda k: abs(q[i + k] - e[i + k])  # noqa: E731
    assert gap(20) / max(gap(10), 1e-300) > 6.0
    # The model is an exact quadratic: constant second differences.
    second = np.diff(q, 2) / h**2
    assert np.allclose(second, second[0], rtol=1e-5, atol=1e-6)
    # And it agrees with |w| + P(w) written out by hand at w = ŵ:
    # γ_r = 5 / (0.8 + 0.1), x = γ_r ŵ.
    g = 5.0 / 0.9
    hand = (math.log(math.exp(-g * 0.8) + math.exp(g * 0.8))
            + 15.0 * math.log(math.exp(-g * 0.8) + 1.0)) / g
    assert e[i] == pytest.approx(hand)


def _records():
    return tuple(IterationRecord(iteration=i, nonconvex_cost=10.0 / i, relaxed_cost=9.0 / i,
                                 n_selected=20 - i) for i in range(1, 6))


def test_convergence_has_both_costs_per_iteration():
    fig = plots.convergence(_records())
    nonconvex = _trace(fig, "non-convex cost (eq. 4)")
    relaxed = _trace(fig, "convex-relaxed cost (eq. 10)")
    assert list(nonconvex.x) == [1, 2, 3, 4, 5]
    assert list(nonconvex.y) == pytest.approx([10.0, 5.0, 10 / 3, 2.5, 2.0])
    assert list(relaxed.y) == pytest.approx([9.0, 4.5, 3.0, 2.25, 1.8])
    assert list(nonconvex.customdata) == [19, 18, 17, 16, 15]


def test_member_weights_splits_selected_and_dropped():
    w = np.array([0.0, 0.5, 0.0, 1.5])
    acc = np.array([0.6, 0.7, 0.8, 0.9])
    fig = plots.member_weights(w, acc, threshold=0.1)
    sel = _trace(fig, "selected (2)")
    drop = _trace(fig, "dropped (2): weight 0 after the threshold")
    assert list(sel.x) == [1, 3] and list(sel.y) == [0.5, 1.5]
    assert list(sel.customdata) == [0.7, 0.9]
    assert list(drop.x) == [0, 2]
    # The trees' own accuracies are on hover here, and dots in the strip under the chart.
    assert "tree's validation accuracy" not in {t.name for t in fig.data}
    strip = _trace(plots.tree_accuracies(acc), "tree's validation accuracy")
    assert list(strip.x) == [0, 1, 2, 3] and list(strip.y) == [0.6, 0.7, 0.8, 0.9]
    # The threshold is a line across the four trees, its value in the legend (a label at
    # the line's right end sat over the last trees' bars).
    line = _trace(fig, "threshold 0.1")
    assert list(line.x) == [-0.5, 3.5] and list(line.y) == [0.1, 0.1]
    assert not fig.layout.annotations and not fig.layout.shapes
    # No threshold line for NaN (the adaptive rule) or zero.
    for none in (float("nan"), 0.0):
        names = [t.name for t in _drawn(plots.member_weights(w, acc, threshold=none))]
        assert not [n for n in names if n.startswith("threshold")]
    with pytest.raises(ValueError, match="shape"):
        plots.member_weights(w, acc[:3])


def test_member_weights_show_what_was_dropped():
    w = np.array([0.0, 0.5, 0.0, 1.5])
    acc = np.array([0.6, 0.7, 0.8, 0.9])
    fig = plots.member_weights(w, acc, threshold=0.1, raw=[0.04, 0.5, 0.08, 1.5])
    drop = _trace(fig, "dropped (2): weight before the threshold")
    # The dropped trees' weights before line 15, as thin bars under the threshold line.
    assert list(drop.x) == [0, 2] and list(drop.y) == [0.04, 0.08]
    assert drop.width < _trace(fig, "selected (2)").width
    assert not fig.layout.annotations[1:]  # trees were kept: no abstention note
    # The tree accuracies are a figure of their own (tree_accuracies), not a second axis.
    assert "yaxis2" not in fig.to_plotly_json()["layout"]
    assert all(t.yaxis in (None, "y") for t in fig.data)
    # Every tree dropped: the chart says that the ensemble abstains, and why.
    none = plots.member_weights([0.0, 0.0], [0.6, 0.7], threshold=0.25, raw=[0.1, 0.2])
    assert list(_trace(none, "dropped (2): weight before the threshold").y) == [0.1, 0.2]
    assert none.layout.annotations[-1].text == (
        "every weight fell below the threshold t = 0.25: the ensemble abstains")
    with pytest.raises(ValueError, match="raw weights"):
        plots.member_weights(w, acc, raw=[1.0])


def test_weights_near_zero_are_not_drawn_as_a_pixel():
    # Axis 0 to 4 * 1.05 (the largest weight plus 5 %); 0.5 % of 4 is 0.02: a weight before
    # the threshold under it is drawn at zero height (Plotly draws any non-zero bar at least
    # a pixel tall); hover keeps the weight itself.  A negative one is drawn at zero too.
    fig = plots.member_weights([0.0, 4.0, 0.0, 0.0, 0.0], [0.6, 0.7, 0.8, 0.9, 0.5],
                               threshold=0.5, raw=[0.01, 4.0, 0.03, -1.0, 0.0199])
    assert tuple(fig.layout.yaxis.range) == pytest.approx((0.0, 4.2))
    drop = _trace(fig, "dropped (4): weight before the threshold")
    assert list(drop.x) == [0, 2, 3, 4]
    # Single precision (what a bar and its 4-figure hover show).
    assert list(drop.y) == pytest.approx([0.0, 0.03, 0.0, 0.0], rel=1e-6)
    assert np.allclose(drop.customdata, [[0.6, 0.01], [0.8, 0.03], [0.9, 0.0], [0.5, 0.0199]],
                       rtol=1e-6, atol=0)
    assert "%{customdata[1]:.4g}" in drop.hovertemplate
    # The threshold and the pinned weights count in the axis: the line is on it.
    tall = plots.member_weights([0.0, 1.0], [0.6, 0.7], threshold=0.5, pinned=[3.0, 0.0])
    assert tuple(tall.layout.yaxis.range) == pytest.approx((0.0, 3.15))
    # Nothing above zero (an all-zero raw vector): Plotly's own range.
    assert plots.member_weights([0.0, 0.0], [0.6, 0.7]).layout.yaxis.range is None


def test_weights_legend_sits_under_the_title_not_under_the_plot():
    fig = plots.member_weights([0.5, 0.0, 1.2], [0.6, 0.7, 0.8], 0.3)
    legend, height = fig.layout.legend, fig.layout.height
    # Top-anchored in the chart's own coordinates, 58 px from its top (the title's line
    # ends above it), in the top margin, which is the title's 75 px and a 21 px row (more
    # rows push the plot down: tests/test_plots_drawn.py).
    assert (legend.orientation, legend.yref, legend.yanchor) == ("h", "container", "top")
    assert legend.y * height == pytest.approx(height - 58)
    assert fig.layout.margin.t == 75 + 21
    assert fig.layout.margin.b == 0  # the strip is drawn right under the plot


def test_tree_accuracy_axis_is_fitted_and_says_so():
    # Vehicle-like trees, 0.6 to 0.7: the axis is their range plus 8 % of it (at least 0.01
    # each side), not 0 to 1, where they were one flat line.
    strip = plots.tree_accuracies([0.6, 0.65, 0.7])
    assert tuple(strip.layout.yaxis.range) == pytest.approx((0.59, 0.71))
    assert "not from 0" in strip.layout.yaxis.title.text
    # A dashed line at the trees' mean, its value in the legend.
    mean = _trace(strip, "mean of the 3 trees 0.650")
    assert list(mean.y) == [0.65, 0.65] and list(mean.x) == [-0.5, 2.5]
    assert mean.line.dash == "dash"
    # Trees that all score alike: an axis 0.05 wide, not one magnifying nothing.
    assert tuple(plots.tree_accuracies([0.8, 0.8]).layout.yaxis.range) == pytest.approx(
        (0.775, 0.825))
    # Never past 1 or under 0.
    assert tuple(plots.tree_accuracies([0.98, 1.0]).layout.yaxis.range) == pytest.approx(
        (0.965, 1.0))
    from_zero = plots.tree_accuracies([0.0, 0.5]).layout.yaxis
    assert from_zero.range[0] == 0.0 and from_zero.title.text == "tree's accuracy"
    # The dots, not the line, are the strip's first legend entry.
    assert _trace(strip, "tree's validation accuracy").legendrank == 1


def test_tree_accuracy_strip_shares_the_weights_charts_tree_axis():
    # Two figures, one above the other: tree i must sit at the same x in both, so the
    # x range, the x domain and the left and right margins are the same and fixed (no
    # automatic margin beside an axis, which follows each chart's own tick labels).
    acc = np.array([0.5, 0.75, 1.0, 0.25, 0.5])
    weights = plots.member_weights([0.0, 1.0, 0.0, 2.0, 0.5], acc, threshold=0.4,
                                   pinned=[1.0, 0.0, 0.0, 0.0, 0.0])
    strip = plots.tree_accuracies(acc)
    for fig in (weights, strip):
        assert tuple(fig.layout.xaxis.range) == (-0.5, 4.5)  # trees 0..4, half a tree aside
        assert fig.layout.xaxis.domain is None  # Plotly's default, the whole plot width
        assert fig.layout.yaxis.automargin is False
        assert fig.layout.xaxis.automargin == "height"  # room below the axis, none beside
        assert fig.layout.yaxis.domain is None
        assert "yaxis2" not in fig.to_plotly_json()["layout"]
    assert (weights.layout.margin.l, weights.layout.margin.r) == (
        strip.layout.margin.l, strip.layout.margin.r)
    # The tree index's labels and title are under the strip, as they were under the strip
    # in one figure; the weights chart keeps its title and its legend.
    assert weights.layout.xaxis.showticklabels is False
    assert strip.layout.xaxis.title.text == "tree index"
    assert strip.layout.yaxis.title.text == "tree's accuracy<br>(axis not from 0)"
    dots = _trace(strip, "tree's validation accuracy")
    assert list(dots.x) == [0, 1, 2, 3, 4] and list(dots.y) == [0.5, 0.75, 1.0, 0.25, 0.5]
    assert dots.hovertemplate == "tree %{x}<br>accuracy %{y:.3f}<extra></extra>"
    assert strip.layout.showlegend is True  # its one trace is named in a legend
    assert weights.layout.title.text == "Weights of the ensemble members"
    with pytest.raises(ValueError, match="one accuracy per tree"):
        plots.tree_accuracies([[0.5, 0.6]])


def test_method_comparison_keeps_order_and_values():
    rows = [{"method": "SDWEC", "test": 0.9, "validation": 0.95, "used": "20 / 200"},
            {"method": "bagging", "test": 0.85, "validation": 0.9, "used": "200 / 200"}]
    fig = plots.method_comparison(rows)
    test = _trace(fig, "test")
    assert list(test.x) == ["SDWEC", "bagging"] and list(test.y) == [0.9, 0.85]
    assert list(_trace(fig, "validation").y) == [0.95, 0.9]
    # Each method in its registry colour, on this page as on the Frontier.
    assert list(test.marker.color) == [styles.style("SDWEC").color, styles.style("bagging").color]
    assert fig.layout.yaxis.range[1] == 1.0  # no 1.05 on an accuracy axis
    single = plots.method_comparison([{"method": "single", "test": 0.7, "validation": 0.8}])
    assert list(_trace(single, "test").x) == ["single tree"]  # the registry's label


def test_prediction_time_in_milliseconds_with_quartiles():
    from sdwec.timing import PredictionTiming

    timing = PredictionTiming(full_seconds=0.02, pruned_seconds=0.002, n_full=200, n_pruned=20,
                              n_rows=2000, repeats=5,
                              full_runs=(0.018, 0.019, 0.020, 0.021, 0.030),
                              pruned_runs=(0.001, 0.002, 0.002, 0.002, 0.004))
    fig = plots.prediction_time(timing)
    bar, labels = fig.data
    assert list(bar.x) == pytest.approx([20.0, 2.0])  # medians of the runs, in ms
    assert list(bar.y) == ["full (200 trees)", "pruned (20 trees)"]
    # Error bars reach the quartiles: full 19 to 21 ms, pruned 2 to 2 ms.
    assert list(bar.error_x.array) == pytest.approx([1.0, 0.0])
    assert list(bar.error_x.arrayminus) == pytest.approx([1.0, 0.0])
    assert "2,000 rows" in fig.layout.title.text and "5 runs" in fig.layout.title.text
    # The values sit right of the upper quartile's whisker (21 and 2 ms), never on it,
    # inside an axis that holds them.
    assert list(labels.x) == pytest.approx([21.0, 2.0]) and labels.textposition == "middle right"
    assert [t.strip() for t in labels.text] == ["20 ms", "2 ms"] and bar.text is None
    assert fig.layout.xaxis.range[1] > 21.0
    # Two short lines (one was cut at the chart's width in a 1280 px window).
    first, second = fig.layout.title.text.split("<br>")
    assert first == "Prediction time, 2,000 rows" and len(second) < 60


def test_prediction_time_of_the_same_ensemble_draws_one_bar():
    from sdwec.timing import PredictionTiming

    timing = PredictionTiming(full_seconds=0.02, pruned_seconds=0.02, n_full=10, n_pruned=10,
                              n_rows=100, repeats=2, full_runs=(0.02, 0.02))
    bar, _ = plots.prediction_time(timing).data
    assert list(bar.y) == ["full (10 trees)"]


def _sweep_frame(second=None):
    import pandas as pd

    rows = []
    for value in ([None] if second is None else [5.0, 35.0]):
        for lam, n_sel in ((0.1, 2), (1.0, 6), (10.0, 10)):
            rows.append({"method": "SDWEC", "params": f"λ={lam}", "param": lam,
                         "n_selected": n_sel, "sparsity": 1 - n_sel / 50,
                         "val_accuracy": 0.8 + n_sel / 100, "test_accuracy": 0.7 + n_sel / 100,
                         "abstains": False, "lam": lam, "beta": value or 15.0, "gamma": 15.0,
                         "eps": 1.0, "select_val_accuracy": 0.9 - n_sel / 100,
                         "select_test_accuracy": 0.6 + n_sel / 200})
    return pd.DataFrame(rows)


def _peers_frame():
    import pandas as pd

    rows = [{"method": "bagging", "params": "", "n_selected": 50, "sparsity": 0.0,
             "val_accuracy": 0.85, "test_accuracy": 0.81},
            {"method": "random", "params": "k=1", "n_selected": 1, "sparsity": 0.98,
             "val_accuracy": 0.6, "test_accuracy": 0.6},
            {"method": "random", "params": "k=2", "n_selected": 2, "sparsity": 0.96,
             "val_accuracy": 0.65, "test_accuracy": 0.62}]
    return pd.DataFrame(rows)


def test_frontier_carries_parameters_for_the_explorer():
    from sdwec.frontier import pareto

    sweep = _sweep_frame()
    fig = plots.frontier(sweep, pareto(sweep, "test_accuracy"), _peers_frame(), x="sparsity",
                         front_on="test_accuracy")
    sdwec = _trace(fig, "SDWEC (λ sweep)")
    assert [list(row[:4]) for row in sdwec.customdata] == [
        [0.1, 15.0, 15.0, 1.0], [1.0, 15.0, 15.0, 1.0], [10.0, 15.0, 15.0, 1.0]]
    assert list(sdwec.y) == pytest.approx([0.72, 0.76, 0.80])
    assert list(_trace(fig, "bagging").x) == [0.0]
    random_curve = _trace(fig, "random subsets")
    assert list(random_curve.x) == [0.98, 0.96]  # in the order of trees used
    # Every SDWEC point here is on the front (more trees, more accuracy).  Chosen on test,
    # its legend says so, "(chosen on …)" included.
    front = _trace(fig, "SDWEC Pareto front (chosen on test)")
    assert sorted(front.x) == pytest.approx([0.8, 0.88, 0.96]) and front.mode == "lines"
    # A front chosen on validation, drawn on test: its points, ringed, no staircase.
    held_out = plots.frontier(sweep, pareto(sweep), _peers_frame(), x="sparsity")
    rings = _trace(held_out, "SDWEC Pareto front (chosen on validation)")
    assert rings.mode == "markers" and sorted(rings.x) == pytest.approx([0.8, 0.88, 0.96])
    val = plots.frontier(sweep, pareto(sweep, "val_accuracy"), _peers_frame(), "val_accuracy",
                         x="sparsity")
    assert list(_trace(val, "SDWEC (λ sweep)").y) == pytest.approx([0.82, 0.86, 0.90])
    # SDWEC-select shares the sweep's sparsity and plots the equal-vote accuracy.
    select = _trace(fig, "SDWEC-select")
    order = np.argsort(select.x)  # drawn in the order of trees used
    assert list(np.asarray(select.x)[order]) == pytest.approx([0.8, 0.88, 0.96])
    assert list(np.asarray(select.y)[order]) == pytest.approx([0.65, 0.63, 0.61])
    assert sorted(_trace(val, "SDWEC-select").y) == pytest.approx([0.8, 0.84, 0.88])
    with pytest.raises(ValueError, match="accuracy"):
        plots.frontier(sweep, pareto(sweep), _peers_frame(), accuracy="sparsity")


def test_frontier_draws_every_method_in_its_registry_style():
    from sdwec.frontier import pareto

    sweep = _sweep_frame()
    fig = plots.frontier(sweep, pareto(sweep), _peers_frame())
    bagging, random_curve = styles.style("bagging"), styles.style("random")
    assert _trace(fig, "bagging").marker.color == bagging.color
    assert _trace(fig, "bagging").marker.symbol == bagging.symbol == "square"
    assert _trace(fig, "random subsets").line.color == random_curve.color
    assert _trace(fig, "random subsets").line.dash == random_curve.dash == "dot"
    assert _trace(fig, "SDWEC (λ sweep)").marker.color == styles.style("SDWEC").color
    select = _trace(fig, "SDWEC-select")
    assert (select.marker.color, select.marker.symbol) == (styles.style("SDWEC-select").color,
                                                          "circle-open")
    # Each method one colour; the frontier's own Pareto line is none of them.
    colours = [styles.style(m.name).color.lower() for m in methods.registered()]
    assert len(set(colours)) == len(colours)
    assert plots.COLORS["pareto"].lower() not in colours


def test_frontier_second_parameter_gets_one_trace_per_value():
    from sdwec.frontier import pareto

    sweep = _sweep_frame(second="beta")
    fig = plots.frontier(sweep, pareto(sweep), _peers_frame(), second="beta")
    assert len(_trace(fig, "SDWEC β=5").x) == 3  # named as the sidebar names it
    assert [row[1] for row in _trace(fig, "SDWEC β=35").customdata] == [35.0] * 3
    # SDWEC at several β: shades of SDWEC's own palette, light to dark, no method's colour.
    shades = [_trace(fig, f"SDWEC β={b}").marker.color for b in (5, 35)]
    assert shades == styles.sweep_colors(2) and shades[0] != shades[1]
    assert not set(shades) & {styles.style(m.name).color for m in methods.registered()}


def test_frontier_on_trees_used_leaves_abstaining_points_out():
    import pandas as pd

    from sdwec.frontier import pareto

    sweep = _sweep_frame()
    abstain = dict(sweep.iloc[0], lam=0.001, n_selected=0, sparsity=1.0, abstains=True,
                   val_accuracy=0.53, test_accuracy=0.52)
    sweep = pd.concat([pd.DataFrame([abstain]), sweep], ignore_index=True)
    front = pareto(sweep)
    assert 0 not in set(front["n_selected"])  # never on the front
    fig = plots.frontier(sweep, front, _peers_frame())  # x = trees used, log axis
    assert fig.layout.xaxis.type == "log"
    assert list(_trace(fig, "SDWEC (λ sweep)").x) == [2, 6, 10]
    # The abstaining 0.52 is in no trace, so the fitted axis does not reach down to it.
    assert min(min(np.asarray(t.y, dtype=float)) for t in _drawn(fig)) > 0.52
    # Said under the title (a note under the plot collided with the legend there).
    assert ("Not drawn, the ensemble keeps no tree: 1 SDWEC setting (λ ≤ 0.001: the most "
            "frequent class, test accuracy 0.520)") in fig.layout.title.text


def test_frontier_bands_are_the_interval_of_the_mean():
    from scipy import stats

    from sdwec import frontier as fr

    a, b = _sweep_frame(), _sweep_frame()
    b["test_accuracy"] = b["test_accuracy"] + 0.02
    mean = fr.over_splits([a, b])
    assert list(mean["test_accuracy"]) == pytest.approx(list(a["test_accuracy"] + 0.01))
    fig = plots.frontier(mean, fr.pareto(mean), _peers_frame())
    # A band, not a bar per point: the t interval of the mean of two values 0.02 apart is
    # mean ± t(0.975, 1) · sd / √2, sd = 0.02 / √2, at 2, 6 and 10 trees (means 0.73, 0.77,
    # 0.81).
    sweep = _trace(fig, "SDWEC (λ sweep)")
    assert sweep.error_y.array is None
    band = _trace(fig, "SDWEC (λ sweep): 95% interval of the mean (shaded; dashed on other "
                       "curves)")
    half = stats.t.ppf(0.975, 1) * (0.02 / np.sqrt(2)) / np.sqrt(2)
    # The band has its own legend entry, right after its curve's, in the same group.
    assert band.fill == "toself" and band.showlegend is not False
    assert band.legendrank == sweep.legendrank + 1 and band.legendgroup == sweep.legendgroup
    assert list(band.x) == [2, 6, 10, 10, 6, 2]
    expected = [min(m + half, 1) for m in (0.73, 0.77, 0.81)] + \
        [max(m - half, 0) for m in (0.81, 0.77, 0.73)]
    assert list(band.y) == pytest.approx(expected)
    assert "mean over 2 splits, 95% interval of the mean" in fig.layout.title.text


def test_paper_comparison_and_training_time():
    import pandas as pd

    table = pd.DataFrame({"dataset": ["wine", "sonar", "wine"],
                          "method": ["SDWEC-B", "SDWEC-B", "bagging"],
                          "paper": [0.9605, 0.8126, 0.9719], "ours": [0.95, 0.80, 0.97]})
    fig = plots.paper_comparison(table)
    assert list(_trace(fig, "SDWEC-B").x) == [0.9605, 0.8126]
    assert _trace(fig, "SDWEC-B").marker.color == styles.style("SDWEC-B").color
    assert _trace(fig, "bagging").customdata[0][0] == "wine"
    assert list(_trace(fig, "agreement").y) == pytest.approx([0.80 - 0.02, 1.0])  # lowest value
    times = pd.DataFrame({"dataset": ["wine", "wine"], "m": [142, 142], "l": [200, 100],
                          "seconds": [0.02, 0.01], "paper_seconds": [0.05, 0.03]})
    fig = plots.training_time(times)
    measured = _trace(fig, "wine (m=142) measured")
    assert list(measured.x) == [100, 200] and list(measured.y) == [0.01, 0.02]
    assert list(_trace(fig, "wine paper").y) == [0.03, 0.05]
    assert fig.layout.yaxis.type == "log"


def test_member_weights_marks_the_pinned_weights():
    fig = plots.member_weights([0.5, 0.0, 1.2], [0.6, 0.7, 0.8], 0.3, pinned=[0.0, 0.4, 0.9])
    pinned = _trace(fig, "pinned: its 2 kept trees (its own threshold)")
    assert list(pinned.x) == [1, 2] and list(pinned.y) == [0.4, 0.9]
    # Light, thin ticks: another configuration's, not this one's.
    assert pinned.marker.line.width == 1 and "0.45" in pinned.marker.color
    with pytest.raises(ValueError, match="differ in shape"):
        plots.member_weights([0.5, 0.0], [0.6, 0.7], pinned=[1.0])


# --------------------------------------------------------------------------- sizes


def test_method_comparison_bars_start_at_zero_with_interval_and_dots():
    from sdwec import intervals

    sdwec_values = [1.0] * 9 + [0.81]  # mean 0.981: mean ± sd would pass 1
    mean, lo, hi = intervals.mean_interval(sdwec_values, 0, 1)
    rows = [{"method": "SDWEC", "test": mean, "validation": 0.9, "test_lo": lo, "test_hi": hi,
             "test_values": sdwec_values, "validation_values": [0.9] * 10,
             "validation_lo": 0.9, "validation_hi": 0.9, "splits": 10, "used": "28 / 200"},
            {"method": "single", "test": 0.6, "validation": 0.55, "test_lo": 0.55,
             "test_hi": 0.65, "test_values": [0.6] * 10, "splits": 10, "used": "1"}]
    fig = plots.method_comparison(rows)
    # From 0: 0.600 is drawn 0.600 / 0.783 of SDWEC's height, not a quarter of it.
    assert tuple(fig.layout.yaxis.range) == (0.0, 1.0)
    test = _trace(fig, "test")
    # The error bar reaches the interval's ends, never past 1.
    assert test.error_y.array[0] + mean == pytest.approx(1.0)
    assert mean - test.error_y.arrayminus[0] == pytest.approx(lo)
    assert [row[1] for row in test.customdata] == [f"{mean:.3f} [{lo:.3f}, 1.000]",
                                                   "0.600 [0.550, 0.650]"]
    assert "10 splits" in fig.layout.title.text and "interval" in fig.layout.title.text
    # Each split is a dot on its bar.
    dots = _trace(fig, "test, per split")
    assert len(dots.y) == 20 and max(dots.y) <= 1.0


def test_method_comparison_labels_clear_of_whiskers_and_in_sample_bars_marked():
    rows = [{"method": "SDWEC", "test": 0.783, "validation": 1.0, "test_sd": 0.05,
             "validation_sd": 0.0, "splits": 10, "used": "25"},
            {"method": "bagging", "test": 0.812, "validation": 0.841, "test_sd": 0.04,
             "validation_sd": 0.02, "splits": 10, "used": "200"}]
    fig = plots.method_comparison(rows)
    # The value labels sit at the bars' base; the whiskers are at their tops.
    for name in ("test", "validation"):
        trace = _trace(fig, name)
        assert (trace.textposition, trace.insidetextanchor) == ("inside", "start")
    # SDWEC's validation bar is hatched and says it is fitted on these rows; bagging's not.
    validation = _trace(fig, "validation")
    assert list(validation.marker.pattern.shape) == ["/", ""]
    assert validation.marker.pattern.fillmode == "overlay"  # the bar's colour stays under it
    assert "fitted on these rows" in validation.customdata[0][2]
    assert validation.customdata[1][2] == ""
    assert "hatched: fit on validation" in fig.layout.title.text
    assert _trace(fig, "test").marker.pattern.shape is None
    # Nothing fitted on the validation rows: no hatching, no note.
    plain = plots.method_comparison(rows[1:])
    assert "hatched" not in plain.layout.title.text


def test_weight_bars_have_one_width_per_tree():
    # Two kept trees 20 apart: two bars 0.8 wide, on an axis holding all 21 trees.
    w = np.zeros(21)
    w[[0, 20]] = [1.0, 2.0]
    fig = plots.member_weights(w, np.full(21, 0.7), threshold=0.5)
    for name in ("selected (2)", "dropped (19): weight 0 after the threshold"):
        assert _trace(fig, name).width == 0.8
    assert tuple(fig.layout.xaxis.range) == (-0.5, 20.5)
    assert _trace(fig, "selected (2)").marker.color == styles.style("SDWEC").color
    oob = plots.member_weights(w, np.full(21, 0.7), method="SDWEC-OOB")
    assert _trace(oob, "selected (2)").marker.color == styles.style("SDWEC-OOB").color
    history = [IterationRecord(iteration=1, nonconvex_cost=1.0, relaxed_cost=1.0,
                               n_selected=2, weights=w)]
    frames = plots.weights_over_iterations(history, [np.full(21, 0.5)])
    assert frames.data[0].width == 0.8 and tuple(frames.layout.xaxis.range) == (-0.5, 20.5)


def _peers_with(*extra):
    import pandas as pd

    return pd.concat([_peers_frame(), pd.DataFrame(list(extra))], ignore_index=True)


def test_frontier_opens_with_the_core_set():
    from sdwec.frontier import pareto

    sweep = _sweep_frame()
    wmv = {"method": "WMV", "params": "", "n_selected": 50, "sparsity": 0.0,
           "val_accuracy": 0.85, "test_accuracy": 0.81}
    reduce = {"method": "reduce-error", "params": "k=3", "n_selected": 3, "sparsity": 0.94,
              "val_accuracy": 0.8, "test_accuracy": 0.7}
    lasso = {"method": "lasso", "params": "α=0.1", "n_selected": 4, "sparsity": 0.92,
             "val_accuracy": 0.8, "test_accuracy": 0.7}
    fig = plots.frontier(sweep, pareto(sweep), _peers_with(wmv, reduce, lasso))
    shown = {t.name for t in _drawn(fig) if t.visible in (None, True) and t.showlegend is not False}
    hidden = {t.name for t in fig.data if t.visible == "legendonly"}
    assert shown == {"SDWEC (λ sweep)", "SDWEC Pareto front (chosen on validation)", "bagging",
                     "random subsets", "reduce-error ordering"}
    assert hidden == {"WMV", "positive Lasso stacking", "SDWEC-select"}
    # WMV ties bagging here (same place): bagging is drawn first and larger, WMV on top.
    names = [t.name for t in fig.data]
    assert names.index("bagging") < names.index("WMV")
    assert _trace(fig, "bagging").marker.size > _trace(fig, "WMV").marker.size
    # The legend lists SDWEC and its front first, then what is shown, then the rest.
    rank = {t.name: t.legendrank for t in fig.data if t.showlegend is not False}
    assert rank["SDWEC (λ sweep)"] < rank["SDWEC Pareto front (chosen on validation)"] \
        < rank["bagging"] == rank["random subsets"] < rank["WMV"] == rank["SDWEC-select"]
    # A legend in rows under the plot, not a column taking a third of the width.
    assert fig.layout.legend.orientation == "h" and fig.layout.legend.yref == "container"
    assert fig.layout.legend.y == 0 and fig.layout.legend.yanchor == "bottom"
    everything = plots.frontier(sweep, pareto(sweep), _peers_with(wmv), shown=("WMV",))
    assert _trace(everything, "WMV").visible is True
    assert _trace(everything, "bagging").visible == "legendonly"


def test_a_one_point_front_is_a_marker():
    from sdwec.frontier import pareto

    sweep = _sweep_frame().iloc[[2]]
    front = pareto(sweep, "test_accuracy")
    assert len(front) == 1
    fig = plots.frontier(sweep, front, _peers_frame(), front_on="test_accuracy")
    trace = _trace(fig, "SDWEC Pareto front (chosen on test)")
    assert trace.mode == "markers" and trace.marker.size >= 10
    two = plots.frontier(_sweep_frame(), pareto(_sweep_frame(), "test_accuracy"),
                         _peers_frame(), front_on="test_accuracy")
    assert _trace(two, "SDWEC Pareto front (chosen on test)").mode == "lines"  # a staircase
    # Chosen on validation and drawn on it, the plain name is true.
    on_val = plots.frontier(_sweep_frame(), pareto(_sweep_frame(), "val_accuracy"),
                            _peers_frame(), "val_accuracy")
    assert _trace(on_val, "SDWEC Pareto front").mode == "lines"


def near_one():
    """NSL-KDD-like rows: a sweep and peers near accuracy 1, averaged over two splits, with
    a spread that would pass 1 (bagging 0.9985 ± 0.0021, SDWEC up to 0.999 ± 0.0028)."""
    from sdwec import frontier as fr

    a, b = _sweep_frame(), _sweep_frame()
    for frame, shift in ((a, 0.0), (b, 0.004)):
        frame["test_accuracy"] = 0.992 + frame["n_selected"] / 2000 + shift
        frame["val_accuracy"] = frame["test_accuracy"]
    p, q = _peers_frame(), _peers_frame()
    p["test_accuracy"], q["test_accuracy"] = [0.997, 0.99, 0.991], [1.0, 0.99, 0.993]
    p["abstains"] = q["abstains"] = False
    return fr.over_splits([a, b]), fr.over_splits([p, q])


def test_frontier_axis_holds_every_band_and_stops_at_one():
    from sdwec import frontier as fr

    mean, peers = near_one()
    fig = plots.frontier(mean, fr.pareto(mean), peers)
    # bagging's error bar stops at 1, 0.0015 above its mean (its interval is clipped there).
    assert list(_trace(fig, "bagging").error_y.array) == pytest.approx([0.0015])
    assert list(peers.loc[peers["method"] == "bagging", "test_accuracy_hi"]) == [1.0]
    # Plotly fits the axis to what is shown, bands and error bars included, clipped to
    # [0, 1] (tests/test_plots_drawn.py reads the range Chromium draws).
    axis = fig.layout.yaxis
    assert axis.autorange is True and axis.range is None
    assert (axis.autorangeoptions.clipmin, axis.autorangeoptions.clipmax) == (0.0, 1.0)
    band = _trace(fig, "SDWEC (λ sweep): 95% interval of the mean (shaded; dashed on other "
                       "curves)")
    # The interval of the mean near 0.999 passes 1 unclipped; the band stops there, as does
    # every error bar.
    assert max(band.y) == 1.0
    for trace in _drawn(fig):
        ys = np.asarray(trace.y, dtype=float)
        bar = trace.error_y
        top = ys + (np.asarray(bar.array) if bar.array is not None else 0)
        bottom = ys - (np.asarray(bar.arrayminus) if bar.arrayminus is not None else 0)
        assert 0.0 <= np.nanmin(bottom) and np.nanmax(top) <= 1.0, trace.name


def test_frontier_hovers_hold_no_float_noise():
    from sdwec import frontier as fr

    a, b = _sweep_frame(), _sweep_frame()
    a["lam"] = [0.1 + 0.2, 1.0, 10.0]  # 0.30000000000000004
    b["lam"] = a["lam"]
    b["test_accuracy"] = b["test_accuracy"] + 1e-14
    mean = fr.over_splits([a, b])
    fig = plots.frontier(mean, fr.pareto(mean), _peers_frame())
    _assert_no_noise(fig)
    hover = _trace(fig, "SDWEC (λ sweep)").text[0]
    assert hover.startswith("SDWEC λ=0.3 β=15 γ=15 ε=1")
    assert "test 0.720 [0.720, 0.720]" in hover and "±" not in hover


def _texts(fig):
    """Every string a reader sees in ``fig``: hover labels, texts, titles, notes, ticks."""
    out = [fig.layout.title.text or ""]
    out += [a.text for a in fig.layout.annotations or ()]
    for axis in ("xaxis", "yaxis"):
        out += [str(t) for t in (fig.layout[axis].ticktext or ())]
    for t in fig.data:
        for field in ("hovertemplate", "text", "hovertext", "customdata"):
            value = getattr(t, field, None)
            if value is None:
                continue
            items = np.asarray(value, dtype=object).ravel() if not isinstance(value, str) \
                else [value]
            out += [v for v in items if isinstance(v, str)]
    return out


def _assert_no_noise(fig):
    import re

    noise = re.compile(r"\d\.\d{7,}|\de-1\d")  # 0.30000000000000004, 1e-14
    found = [t for t in _texts(fig) if noise.search(t)]
    assert not found, found


def test_training_time_log_axis_labels_any_range():
    import pandas as pd

    # Hand-chosen ticks: inside one decade, the 1-2-5 steps bracketing the values.
    assert plots.log_ticks(0.011, 0.014) == [0.01, 0.02]
    assert plots.log_ticks(0.012, 0.09) == [0.01, 0.02, 0.05, 0.1]
    assert plots.log_ticks(0.5, 0.5) == [0.2, 0.5, 1.0]
    # Over more than three decades, the powers of ten only.
    assert plots.log_ticks(0.003, 40) == [0.001, 0.01, 0.1, 1.0, 10.0, 100.0]
    with pytest.raises(ValueError):
        plots.log_ticks(0.0, 1.0)
    times = pd.DataFrame({"dataset": ["wine", "wine", "sonar"], "m": [142, 142, 166],
                          "l": [100, 200, 100], "seconds": [0.011, 0.014, 0.0125],
                          "paper_seconds": [np.nan, np.nan, np.nan]})
    fig = plots.training_time(times)
    axis = fig.layout.yaxis
    assert axis.type == "log" and list(axis.tickvals) == [0.01, 0.02]
    assert list(axis.ticktext) == ["0.01", "0.02"]
    # The range (log10 units) runs from the first tick to the last: both are labelled.
    assert tuple(axis.range) == pytest.approx((-2.0, np.log10(0.02)))
    # Datasets in SDWEC's shades, never a method's colour.
    colours = {t.line.color for t in fig.data}
    assert colours == set(styles.sweep_colors(3)[1:])
    assert not colours & {styles.style(m.name).color for m in methods.registered()}
    _assert_no_noise(fig)


# --------------------------------------------------------------------------- colours


def _lab(colour):
    """CIELAB (D65) of a ``#rrggbb`` colour, written out from the sRGB definition."""
    rgb = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    x = (0.4124 * lin[0] + 0.3576 * lin[1] + 0.1805 * lin[2]) / 0.95047
    y = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    z = (0.0193 * lin[0] + 0.1192 * lin[1] + 0.9505 * lin[2]) / 1.08883
    f = [t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116 for t in (x, y, z)]
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def test_role_colours_are_never_a_methods():
    roles = styles.ROLE_COLORS
    method_colours = {styles.style(m.name).color.lower() for m in methods.registered()}
    assert not {c.lower() for c in roles.values()} & method_colours
    assert len(set(roles.values())) == len(roles)  # one colour, one role
    # Not just unequal: at least 15 CIELAB units from every method's colour and every sweep
    # shade (reduce-error's #ff7f0e and the old threshold orange were the same colour).
    for role, colour in roles.items():
        for other in method_colours | set(styles.sweep_colors(6)):
            assert np.linalg.norm(_lab(colour) - _lab(other)) > 15, (role, other)
    assert plots.COLORS is roles
    # The trees' accuracy dots sit under the Explorer's accuracy bars: far from every method
    # drawn there, not merely 15 units (a bright green 29 units from WMV's read as WMV).
    for name in ("SDWEC", "bagging", "WMV", "single", "SDWEC-OOB"):
        colour = styles.style(name).color
        assert np.linalg.norm(_lab(roles["accuracy"]) - _lab(colour)) > 50, name
    for shade in styles.role_shades("approx", 4) + styles.sweep_colors(8):
        assert shade.lower() not in method_colours | {c.lower() for c in roles.values()}
    methods.register(name="tmp-role", label="tmp", kind="point", fit=lambda pool: None,
                     description="", reference="", source="ours")
    try:
        with pytest.raises(ValueError, match="role"):
            styles.set_style("tmp-role", roles["pareto"])
    finally:
        methods.unregister("tmp-role")
    assert "tmp-role" not in methods.names()


def _colours(fig):
    out = set()
    for t in fig.data:
        for part in (t.line, t.marker):
            colour = getattr(part, "color", None) if part is not None else None
            if isinstance(colour, str):
                out.add(colour.lower())
    for shape in fig.layout.shapes or ():
        out.add(shape.line.color.lower())
    return out


def test_figures_use_role_colours_for_roles():
    method_colours = {styles.style(m.name).color.lower() for m in methods.registered()}
    teaching = [plots.sign_relaxation([0.5, 2.0], 1.0), plots.abs_approximation(5, [0.1, 1]),
                plots.penalty_threshold(15, 15, 1), plots.taylor_model(0.8, 15, 5, 0.1),
                plots.convergence(_records())]
    for fig in teaching:  # no method on these figures: no method's colour either
        assert not _colours(fig) & method_colours, fig.layout.title.text
    penalty = plots.penalty_threshold(15, 15, 1)
    assert [s.line.color for s in penalty.layout.shapes if s.x0 == s.x1] == [
        plots.COLORS["threshold"]]
    taylor = plots.taylor_model(0.8, 15, 5, 0.1)
    assert _trace(taylor, "ŵ").marker.color == plots.COLORS["what"]
    weights = plots.member_weights([0.5, 0.0, 1.2], [0.6, 0.7, 0.8], 0.3)
    assert _trace(plots.tree_accuracies([0.6, 0.7, 0.8]),
                  "tree's validation accuracy").marker.color == plots.COLORS["accuracy"]
    assert _trace(weights, "threshold 0.3").line.color == plots.COLORS["threshold"]
    mean = _trace(plots.tree_accuracies([0.6, 0.7, 0.8]), "mean of the 3 trees 0.700")
    assert mean.line.color == plots.COLORS["guide"]
    from sdwec.frontier import pareto

    sweep = _sweep_frame()
    front = _trace(plots.frontier(sweep, pareto(sweep), _peers_frame()),
                   "SDWEC Pareto front (chosen on validation)")
    assert front.marker.color == plots.COLORS["pareto"] != styles.style("SDWEC-OOB").color


def test_paper_comparison_keeps_every_methods_colour():
    import pandas as pd

    names = ["QFWEC", "SDWEC-A", "SDWEC-B", "WMV", "bagging", "single"]
    table = pd.DataFrame({"dataset": ["wine"] * 6, "method": names,
                          "paper": [0.9] * 6, "ours": [0.8] * 6})
    fig = plots.paper_comparison(table)
    for name in names:  # legends say the registry's label ("single tree", not "single")
        assert _trace(fig, methods.get(name).label).marker.color == styles.style(name).color
    assert _trace(fig, "agreement").line.color == plots.COLORS["guide"]
    # A name outside the registry gets a colour no method has.
    other = plots.paper_comparison(pd.DataFrame({"dataset": ["wine"], "method": ["mine"],
                                                 "paper": [0.9], "ours": [0.8]}))
    assert _trace(other, "mine").marker.color.lower() not in {
        styles.style(m.name).color.lower() for m in methods.registered()}


def test_titles_start_left_and_fit():
    # Left-aligned titles leave the right end, where the toolbar shows, free; the
    # Explorer's two-column charts keep their first line under 45 characters.
    rows = [{"method": "SDWEC", "test": 0.8, "validation": 0.9, "splits": 10}]
    explorer = [plots.method_comparison(rows),
                plots.member_weights([0.5, 0.0, 1.2], [0.6, 0.7, 0.8], 0.3),
                plots.convergence(_records())]
    for fig in explorer:
        title = fig.layout.title
        assert (title.x, title.xanchor) == (0, "left")
        assert len(title.text.split("<br>")[0]) <= 45, title.text


def test_prediction_time_labels_keep_small_times():
    from sdwec.timing import PredictionTiming

    # 40 µs is "0.04 ms", not "0.0 ms".
    timing = PredictionTiming(full_seconds=4e-5, pruned_seconds=4e-5, n_full=10, n_pruned=10,
                              n_rows=100, repeats=1, full_runs=(4e-5,))
    _, labels = plots.prediction_time(timing).data
    assert [t.strip() for t in labels.text] == ["0.04 ms"]


def test_no_role_is_pink_where_methods_are():
    # A magenta Pareto front and deep-pink cost rises would read as QFWEC (pink) on a
    # projector.  Pink/red/magenta hues (CIELAB hue 320-40 degrees, chroma > 30) belong to
    # methods only.
    def pinkish(colour):
        _, a, b = _lab(colour)
        hue = np.degrees(np.arctan2(b, a)) % 360
        return np.hypot(a, b) > 30 and (hue >= 320 or hue < 40)

    assert pinkish(styles.style("QFWEC").color)  # the premise: a method is pink
    assert pinkish("#cc00cc") and pinkish("#ff1493")  # the old role colours were
    assert not [role for role, colour in styles.ROLE_COLORS.items() if pinkish(colour)]


def test_paper_comparison_draws_the_interval_of_our_mean_as_error_bars():
    import pandas as pd

    # wine: mean 0.98 in [0.95, 1.00] (clipped at 1 by the interval); sonar: one repeat.
    table = pd.DataFrame({"dataset": ["wine", "sonar"], "method": ["bagging", "bagging"],
                          "paper": [0.97, 0.80], "ours": [0.98, 0.78],
                          "ours_lo": [0.95, np.nan], "ours_hi": [1.0, np.nan],
                          "repeats": [10, 1], "tolerance": [0.0304, np.nan],
                          "agreement": ["agrees", "too few repeats"]})
    trace = _trace(plots.paper_comparison(table), "bagging")
    # Asymmetric bars from the interval, in the method's colour; no bar for one repeat.
    assert trace.error_y.type == "data" and trace.error_y.symmetric is False
    assert list(trace.error_y.array) == pytest.approx([0.02, 0.0])
    assert list(trace.error_y.arrayminus) == pytest.approx([0.03, 0.0])
    assert trace.error_y.color == styles.style("bagging").color
    # No bar reaches past a perfect score.
    tops = np.asarray(trace.y, dtype=float) + np.asarray(trace.error_y.array, dtype=float)
    assert tops.max() <= 1.0
    wine, sonar = (row[1] for row in trace.customdata)
    assert "95% interval of our mean over 10 repeats: [0.950, 1.000]" in wine
    assert "gap 0.010, allowed 0.030" in wine and wine.endswith(": agrees")
    assert "one repeat gives no interval" in sonar and "not judged: too few repeats" in sonar
    # Without the interval's columns (an older table) there are no bars.
    plain = _trace(plots.paper_comparison(table.drop(columns=["ours_lo", "ours_hi"])),
                   "bagging")
    assert plain.error_y.array is None


def test_sdwec_a_and_b_are_told_apart_by_hue():
    # Navy SDWEC-A beside periwinkle SDWEC-B would read as one colour.  Their
    # CIELAB hues must be at least 60 degrees apart, besides their different markers.
    def hue(colour):
        _, a, b = _lab(colour)
        return np.degrees(np.arctan2(b, a)) % 360

    a, b = styles.style("SDWEC-A"), styles.style("SDWEC-B")
    gap = abs(hue(a.color) - hue(b.color))
    assert min(gap, 360 - gap) >= 60
    assert a.symbol != b.symbol
    assert abs(hue("#393b79") - hue("#6b6ecf")) < 10  # the old pair failed this


def test_frontier_fills_one_band_and_draws_the_others_as_lines():
    # Two splits of a random-subsets curve: its interval is two dashed lines in its own
    # colour (not bagging's grey), in its curve's legend group; only SDWEC's band is filled,
    # so no two fills overlap into one colour.
    from sdwec import frontier as fr

    a, b = _peers_frame(), _peers_frame()
    b["test_accuracy"] = b["test_accuracy"] + 0.02
    a["abstains"] = b["abstains"] = False
    peers = fr.over_splits([a, b])
    sweep = fr.over_splits([_sweep_frame(), _sweep_frame()])
    sweep["test_accuracy_hi"] = sweep["test_accuracy"] + 0.01  # some width to draw
    sweep["select_test_accuracy_hi"] = sweep["select_test_accuracy"] + 0.01
    fig = plots.frontier(sweep, fr.pareto(sweep), peers, shown=("random", "SDWEC-select"))
    curve = _trace(fig, "random subsets")
    edges = _trace(fig, "random subsets: 95% interval of the mean")
    assert edges.legendgroup == curve.legendgroup and edges.visible == curve.visible
    assert edges.fill is None and edges.line.dash == "dash"
    # Its outline, unfilled: above the means 0.61 and 0.63 at k = 1 and 2, then back below.
    assert list(edges.x) == [1, 2, 2, 1]
    ys = list(edges.y)
    assert ys[0] > 0.61 > ys[3] and ys[1] > 0.63 > ys[2]
    colour = styles.style("random").color.lower()
    r, g, b_ = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    assert colour != styles.style("bagging").color.lower()
    assert max(r, g, b_) - min(r, g, b_) > 60  # a hue, not a grey or black
    assert edges.line.color.startswith("rgba({}, {}, {},".format(r, g, b_))
    filled = [t for t in fig.data if t.fill == "toself"]
    assert [t.legendgroup for t in filled] == ["SDWEC (λ sweep)"]
    assert _trace(fig, "SDWEC-select: 95% interval of the mean").fill is None
    # bagging, a single ensemble, keeps an error bar and no band.
    assert _trace(fig, "bagging").error_y.array is not None
    assert not [t for t in fig.data if t.name.startswith("bagging:")]


def test_frontier_title_sits_lower_than_other_figures_clear_of_the_toolbar():
    from sdwec.frontier import pareto

    sweep = _sweep_frame()
    fig = plots.frontier(sweep, pareto(sweep), _peers_frame())
    # Other figures: title 34 px under the top and a 75 px top margin (plots._title and
    # plots._MARGIN); the Frontier adds room for the toolbar row above both.
    assert fig.layout.title.pad.t >= 34 + 20
    assert fig.layout.margin.t >= 75 + 20
    assert fig.layout.margin.t - fig.layout.title.pad.t == 75 - 34


def _every_figure_of_figure():
    """One figure of each function built by ``plots._figure``, on small hand-made inputs."""
    records = _records()
    w, acc = np.array([0.0, 0.5, 0.0, 1.5]), np.array([0.6, 0.7, 0.8, 0.9])
    rows = [{"method": "SDWEC", "test": 0.8, "validation": 0.9, "used": "3.5 / 200 (mean)",
             "test_sd": 0.05, "validation_sd": 0.02, "splits": 10},
            {"method": "bagging", "test": 0.82, "validation": 0.85, "used": "200 / 200",
             "test_sd": 0.04, "validation_sd": 0.03, "splits": 10}]
    return [plots.convergence(records), plots.convergence(records, log_y=True),
            plots.member_weights(w, acc, threshold=0.1, raw=[0.04, 0.5, 0.08, 1.5],
                                 pinned=[0.2, 0.0, 0.0, 1.0]),
            plots.member_weights([0.0, 0.0], [0.6, 0.7], threshold=0.25),
            plots.tree_accuracies(acc), plots.method_comparison(rows)]


def test_figures_built_without_validation_equal_validated_ones(monkeypatch):
    """The Explorer's figures skip plotly.py's property checks (:data:`plots.VALIDATE`):
    checked, every property is valid (a typo raises) and the figure is the same."""
    def sent(figures):  # what the page receives
        return [json.loads(pio.to_json(fig, validate=False)) for fig in figures]

    fast = sent(_every_figure_of_figure())
    monkeypatch.setattr(plots, "VALIDATE", True)
    assert sent(_every_figure_of_figure()) == fast
    with pytest.raises(ValueError, match="colour"):
        plots._figure([dict(type="bar", x=[1], y=[1], colour="red")], "t", "x", "y")


def test_values_on_the_pale_validation_bars_stay_dark():
    # The pale bars are pale through their fill alone: a trace opacity paled the printed
    # value with them, and white-on-pale digits under the hatching were unreadable.
    rows = [dict(method="SDWEC", test=0.8, validation=0.95),
            dict(method="bagging", test=0.82, validation=0.84)]
    test, validation = plots.method_comparison(rows).data
    assert validation.opacity is None and validation.marker.opacity == 0.45
    assert validation.insidetextfont.color == "#111111"
    assert test.opacity is None and test.marker.opacity == 1.0
    assert test.insidetextfont.color is None  # Plotly's contrast on the solid colours


def test_every_method_fitted_on_the_validation_rows_is_hatched():
    # The registry says which methods fit on the validation rows: QFWEC and NNLS too, not
    # only WMV and SDWEC; bagging, the single tree and random subsets fit nothing there.
    names = ["SDWEC", "QFWEC", "NNLS", "WMV", "bagging", "single", "random"]
    fig = plots.method_comparison([dict(method=n, test=0.8, validation=0.9) for n in names])
    validation = fig.data[1]
    assert list(validation.marker.pattern.shape) == ["/", "/", "/", "/", "", "", ""]


def test_the_rule_none_is_not_called_a_threshold():
    """Threshold 0 (rule "none") drops only the weights at or below zero, which the solver
    leaves slightly negative: the legend says so and speaks of no cut."""
    w = np.array([0.0, 0.5, 0.0, 1.5])
    acc = np.array([0.6, 0.7, 0.8, 0.9])
    for raw in (None, [-0.01, 0.5, -1e-6, 1.5]):
        fig = plots.member_weights(w, acc, threshold=0.0, raw=raw)
        names = [t.name for t in _drawn(fig)]
        assert "dropped (2): weight 0 or below (rule “none” keeps every positive weight)" \
            in names
        assert not [n for n in names if "threshold" in n]
        assert "threshold" not in _trace(fig, names[1]).hovertemplate
    fig = plots.member_weights([0.0, 0.0], [0.6, 0.7], threshold=0.0, raw=[-0.1, -0.2])
    assert list(_trace(fig, fig.data[1].name).y) == [0.0, 0.0]
    assert fig.layout.annotations[-1].text == "no weight above 0: the ensemble abstains"


def _three_splits_one_abstaining():
    """Three splits of the sweep and the peers where split 2 keeps no tree at λ = 0.1 (and
    at size 1 of random subsets), and every split keeps none at λ = 0.01."""
    import pandas as pd

    sweeps, peers = [], []
    for split in range(3):
        sweep = _sweep_frame()
        empty = dict(sweep.iloc[0], lam=0.01, params="λ=0.01", n_selected=0, sparsity=1.0,
                     abstains=True, val_accuracy=0.55, test_accuracy=0.54)
        sweep = pd.concat([pd.DataFrame([empty]), sweep], ignore_index=True)
        sweep["test_accuracy"] += 0.01 * split
        peer = _peers_frame()
        peer["abstains"] = False
        if split == 1:
            sweep.loc[1, ["n_selected", "sparsity", "abstains", "test_accuracy"]] = \
                [0, 1.0, True, 0.54]
            peer.loc[1, ["n_selected", "sparsity", "abstains"]] = [0, 1.0, True]
        sweeps.append(sweep)
        peers.append(peer)
    return sweeps, peers


def test_frontier_draws_partly_abstaining_settings_hollow_and_off_the_front():
    from sdwec import frontier as fr

    sweeps, peers = _three_splits_one_abstaining()
    sweep, peer = fr.over_splits(sweeps), fr.over_splits(peers)
    front = fr.pareto(sweep, "test_accuracy")
    assert 0.1 not in list(front["lam"])  # one split of three keeps no tree there
    fig = plots.frontier(sweep, front, peer, front_on="test_accuracy")
    points = _trace(fig, "SDWEC (λ sweep)")
    lams = [row[0] for row in points.customdata]
    assert 0.01 not in lams  # every split abstains: not drawn
    at = lams.index(0.1)
    assert points.marker.symbol[at] == "circle-open"
    assert [s for i, s in enumerate(points.marker.symbol) if i != at] == ["circle"] * 2
    # The legend shows a trace's first marker: the filled one.
    assert points.marker.symbol[0] == "circle"
    assert "1 of 3 splits keep no tree" in points.text[at]
    assert not [t for i, t in enumerate(points.text) if i != at and "keep no tree" in t]
    # Its mean mixes in the constant guess: (2 + 0 + 2) / 3 trees.
    assert np.asarray(points.x, dtype=float)[at] == pytest.approx(4 / 3)
    # Never on (or ringed as) the front, even when handed a front that holds it.
    ring = _trace(fig, "SDWEC Pareto front (chosen on test)")
    assert pytest.approx(4 / 3) not in list(ring.x)
    forced = plots.frontier(sweep, sweep, peer, front_on="test_accuracy")
    assert pytest.approx(4 / 3) not in list(_trace(forced, "SDWEC Pareto front (chosen on "
                                                          "test)").x)
    select = _trace(fig, "SDWEC-select")
    assert select.marker.symbol[-1] == "circle-open-dot"  # hollow, told apart from its ring
    # The peers' curve: the size-1 random subsets get a hollow ring in the curve's group.
    rings = _trace(fig, "random subsets: some splits keep no tree")
    assert rings.legendgroup == _trace(fig, "random subsets").legendgroup
    assert rings.showlegend is False and rings.marker.symbol == "circle-open"
    assert "1 of 3 splits keep no tree" in rings.customdata[0][3]
    title = fig.layout.title.text
    assert "Not drawn, every split keeps no tree: 1 SDWEC setting (λ ≤ 0.01" in title
    assert "Hollow: 2 settings where some splits keep no tree" in title  # SDWEC + random


def test_frontier_labels_the_trees_axis_down_to_its_hollow_points():
    from sdwec import frontier as fr

    sweeps, peers = _three_splits_one_abstaining()
    sweeps[1].loc[sweeps[1]["lam"] == 0.1, "n_selected"] = 0
    for sweep in sweeps:
        sweep.loc[sweep["lam"] == 0.1, "n_selected"] = sweep["n_selected"].clip(upper=1)
    sweep, peer = fr.over_splits(sweeps), fr.over_splits(peers)
    fig = plots.frontier(sweep, fr.pareto(sweep, "test_accuracy"), peer)
    drawn = [float(v) for t in fig.data if t.x is not None for v in t.x]
    assert min(drawn) == pytest.approx(2 / 3)  # (1 + 0 + 1) / 3 trees at λ = 0.1
    ticks = sorted(fig.layout.xaxis.tickvals)
    # A label at or below every point, and one between each pair of neighbours a decade apart.
    assert ticks[0] <= min(drawn)
    assert all(b / a <= 10 for a, b in zip(ticks, ticks[1:]))
    # The axis starts at the label under the smallest point (0.5 for 0.67), so that label is
    # drawn, and ends past the largest (bagging's 50 trees).
    start, end = fig.layout.xaxis.range
    assert start <= np.log10(0.5) < np.log10(min(drawn))
    assert start > np.log10(0.2)
    assert np.log10(max(drawn)) < end < np.log10(max(drawn)) + 0.1


def test_frontier_single_ensemble_with_an_abstaining_split_is_hollow():
    from sdwec import frontier as fr

    splits = []
    for split in range(3):
        peer = _peers_frame()
        peer["abstains"] = False
        if split == 0:
            peer.loc[0, ["n_selected", "sparsity", "abstains"]] = [0, 1.0, True]
        splits.append(peer)
    peer = fr.over_splits(splits)
    sweep = fr.over_splits([_sweep_frame()] * 3)
    bagging = _trace(plots.frontier(sweep, fr.pareto(sweep), peer), "bagging")
    assert list(bagging.marker.symbol) == ["square-open"]
    assert "1 of 3 splits keep no tree" in bagging.customdata[0][2]


def test_frontier_intervals_stay_inside_what_is_possible():
    from sdwec import frontier as fr

    # Tree counts 1, 1, 12 of l = 50: mean ± t · sd / √3 would pass below 0.
    splits = []
    for n in (1, 1, 12):
        sweep = _sweep_frame()
        sweep.loc[0, ["n_selected", "sparsity"]] = [n, 1 - n / 50]
        sweep["test_accuracy"] = [0.99, 1.0, 1.0] if n == 12 else [1.0, 0.95, 1.0]
        splits.append(sweep)
    sweep = fr.over_splits(splits)
    fig = plots.frontier(sweep, fr.pareto(sweep), _peers_frame(), x="sparsity")
    for trace in _drawn(fig):
        ys = np.asarray(trace.y, dtype=float)
        assert np.nanmin(ys) >= 0 and np.nanmax(ys) <= 1, trace.name
        xs = np.asarray(trace.x, dtype=float)
        assert np.nanmin(xs) >= 0 and np.nanmax(xs) <= 1, trace.name
    hover = _trace(fig, "SDWEC (λ sweep)").text[0]
    trees = hover.split("<br>")[1]
    low = float(trees.split("[")[1].split(",")[0])
    assert low == 0.0 and trees.startswith("4.7 [")  # clipped at 0, not negative


def test_frontier_title_says_which_splits_it_shows():
    from sdwec import frontier as fr

    one = plots.frontier(_sweep_frame(), fr.pareto(_sweep_frame()), _peers_frame())
    assert "(test accuracy; one split)" in one.layout.title.text
    ten = fr.over_splits([_sweep_frame()] * 10)
    fig = plots.frontier(ten, fr.pareto(ten), _peers_frame(), "val_accuracy")
    assert "(validation accuracy; mean over 10 splits, 95% interval of the mean)" in \
        fig.layout.title.text


def test_frontier_keeps_the_legend_choices_across_figures():
    # Plotly keeps what a reader toggled in the legend when a new figure has the same
    # uirevision, matching traces by uid: the same for every λ and second-sweep state.
    from sdwec import frontier as fr

    plain = plots.frontier(_sweep_frame(), fr.pareto(_sweep_frame()), _peers_frame())
    moved = _sweep_frame(second="beta")
    moved["lam"] = moved["lam"] * 10
    other = plots.frontier(moved, fr.pareto(moved), _peers_frame(), second="beta",
                           accuracy="val_accuracy", x="sparsity")
    assert plain.layout.uirevision is not None
    assert plain.layout.uirevision == other.layout.uirevision
    assert _trace(plain, "bagging").uid == _trace(other, "bagging").uid == "bagging"
    assert _trace(plain, "random subsets").uid == _trace(other, "random subsets").uid
    for fig in (plain, other):
        uids = [t.uid for t in fig.data]
        assert None not in uids and len(set(uids)) == len(uids)
        # Plotly builds CSS selectors from uids (".cb" + uid for a colour bar): a space or
        # a parenthesis broke the second sweep's chart in the browser.
        assert all(re.fullmatch(r"[A-Za-z0-9_-]+", uid) for uid in uids), uids


def test_frontier_counts_what_it_leaves_out_per_method():
    # Five SDWEC settings and one Lasso point keep no tree on any split: the title names
    # each, so the SDWEC count matches the CSV's rows for SDWEC.
    import pandas as pd

    from sdwec import frontier as fr

    sweep = _sweep_frame()
    zeros = [dict(sweep.iloc[0], params=f"λ={lam}", param=lam, lam=lam, n_selected=0,
                  sparsity=1.0, val_accuracy=0.53, test_accuracy=0.52, abstains=True)
             for lam in (0.001, 0.002, 0.005, 0.01, 0.02)]
    sweep = pd.concat([pd.DataFrame(zeros), sweep], ignore_index=True)
    lasso = fr._frame("lasso", ["α=1", "α=0.1"], [1.0, 0.1], [0, 4], 50, [0.5, 0.8],
                      [0.5, 0.78])
    peers = pd.concat([_peers_frame(), lasso], ignore_index=True)
    fig = plots.frontier(sweep, fr.pareto(sweep), peers)
    title = fig.layout.title.text
    assert "5 SDWEC settings (λ ≤ 0.02" in title
    assert f"1 {methods.get('lasso').label} setting" in title


def test_scoped_names_the_split_in_every_title_line_one():
    history = [IterationRecord(iteration=i, nonconvex_cost=1.0 / i, relaxed_cost=2.0 / i,
                               n_selected=3, weights=np.array([1.0, 0.5, 0.0]))
               for i in range(1, 4)]
    fig = plots.weights_over_iterations(history, [np.full(3, 0.3)] * 3)
    first = fig.layout.title.text
    assert plots.scoped(fig, "") is fig and fig.layout.title.text == first
    plots.scoped(fig, "split 1 of 10")
    assert fig.layout.title.text.split("<br>")[0].endswith(" · split 1 of 10")
    assert all(f.layout.title.text.split("<br>")[0].endswith(" · split 1 of 10")
               for f in fig.frames)


def test_frontier_marks_the_sidebars_setting():
    from sdwec import frontier as fr

    sweep = _sweep_frame()
    row = sweep.iloc[1]
    here = dict(lam=row["lam"], beta=row["beta"], gamma=row["gamma"], eps=row["eps"])
    fig = plots.frontier(sweep, fr.pareto(sweep), _peers_frame(), current=here)
    mark = _trace(fig, "the sidebar's setting (the Explorer's)")
    assert list(mark.x) == [row["n_selected"]] and list(mark.y) == [row["test_accuracy"]]
    # A setting the sweep does not hold (another β) is not marked.
    other = plots.frontier(sweep, fr.pareto(sweep), _peers_frame(),
                           current=dict(here, beta=here["beta"] + 1))
    assert not [t for t in _drawn(other) if t.name.startswith("the sidebar's setting")]
