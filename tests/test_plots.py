"""Figure builders: the right traces, with values checked against hand-derived numbers."""

import math
from types import SimpleNamespace

import numpy as np
import plotly.graph_objects as go
import pytest

from sdwec import comparison, methods, plots
from sdwec.solver import IterationRecord


def _trace(fig, name):
    matches = [t for t in fig.data if t.name == name]
    assert len(matches) == 1, [t.name for t in fig.data]
    return matches[0]


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
    drop = _trace(fig, "dropped (2)")
    assert list(sel.x) == [1, 3] and list(sel.y) == [0.5, 1.5]
    assert list(sel.customdata) == [0.7, 0.9]
    assert list(drop.x) == [0, 2]
    assert list(_trace(fig, "tree's validation accuracy").y) == [0.6, 0.7, 0.8, 0.9]
    assert [s.y0 for s in fig.layout.shapes] == [0.1]
    # No threshold line for NaN (the adaptive rule) or zero.
    assert len(plots.member_weights(w, acc, threshold=float("nan")).layout.shapes) == 0
    with pytest.raises(ValueError, match="shape"):
        plots.member_weights(w, acc[:3])


def test_method_comparison_keeps_order_and_values():
    rows = [{"method": "SDWEC", "test": 0.9, "validation": 0.95, "used": "20 / 200"},
            {"method": "bagging", "test": 0.85, "validation": 0.9, "used": "200 / 200"}]
    fig = plots.method_comparison(rows)
    test = _trace(fig, "test")
    assert list(test.x) == ["SDWEC", "bagging"] and list(test.y) == [0.9, 0.85]
    assert list(_trace(fig, "validation").y) == [0.95, 0.9]
    # Each method in its registry colour, on this page as on the Frontier.
    assert list(test.marker.color) == [methods.get("SDWEC").color, methods.get("bagging").color]
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
    (bar,) = fig.data
    assert list(bar.x) == pytest.approx([20.0, 2.0])  # medians of the runs, in ms
    assert list(bar.y) == ["full (200 trees)", "pruned (20 trees)"]
    # Error bars reach the quartiles: full 19 to 21 ms, pruned 2 to 2 ms.
    assert list(bar.error_x.array) == pytest.approx([1.0, 0.0])
    assert list(bar.error_x.arrayminus) == pytest.approx([1.0, 0.0])
    assert "2,000 rows" in fig.layout.title.text and "5 runs" in fig.layout.title.text


def test_prediction_time_of_the_same_ensemble_draws_one_bar():
    from sdwec.timing import PredictionTiming

    timing = PredictionTiming(full_seconds=0.02, pruned_seconds=0.02, n_full=10, n_pruned=10,
                              n_rows=100, repeats=2, full_runs=(0.02, 0.02))
    (bar,) = plots.prediction_time(timing).data
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
    assert list(random_curve.x) == [0.96, 0.98]  # sorted by sparsity
    # Every SDWEC point here is on the front (more trees, more accuracy).
    front = _trace(fig, "SDWEC Pareto front")
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
    assert list(select.x) == pytest.approx([0.8, 0.88, 0.96])
    assert list(select.y) == pytest.approx([0.65, 0.63, 0.61])
    assert list(_trace(val, "SDWEC-select").y) == pytest.approx([0.8, 0.84, 0.88])
    with pytest.raises(ValueError, match="accuracy"):
        plots.frontier(sweep, pareto(sweep), _peers_frame(), accuracy="sparsity")


def test_frontier_draws_every_method_in_its_registry_style():
    from sdwec.frontier import pareto

    sweep = _sweep_frame()
    fig = plots.frontier(sweep, pareto(sweep), _peers_frame())
    bagging, random_curve = methods.get("bagging"), methods.get("random")
    assert _trace(fig, "bagging").marker.color == bagging.color
    assert _trace(fig, "bagging").marker.symbol == bagging.symbol == "square"
    assert _trace(fig, "random subsets").line.color == random_curve.color
    assert _trace(fig, "random subsets").line.dash == random_curve.dash == "dot"
    assert _trace(fig, "SDWEC (λ sweep)").marker.color == methods.get("SDWEC").color
    select = _trace(fig, "SDWEC-select")
    assert (select.marker.color, select.marker.symbol) == (methods.get("SDWEC-select").color,
                                                          "circle-open")
    # Each method one colour; the frontier's own Pareto line is none of them.
    colours = [m.color.lower() for m in methods.registered()]
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
    assert shades == methods.sweep_colors(2) and shades[0] != shades[1]
    assert not set(shades) & {m.color for m in methods.registered()}


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
    # The y axis is set by the points drawn, not by the abstaining 0.52, and stops at 1.
    low, high = fig.layout.yaxis.range
    assert 0.52 < low < 0.6 and high <= 1.0
    (note,) = fig.layout.annotations
    assert "1 SDWEC setting(s) with every weight zero" in note.text and "0.520" in note.text


def test_frontier_error_bars_over_splits():
    from sdwec import frontier as fr

    a, b = _sweep_frame(), _sweep_frame()
    b["test_accuracy"] = b["test_accuracy"] + 0.02
    mean = fr.over_splits([a, b])
    assert list(mean["test_accuracy"]) == pytest.approx(list(a["test_accuracy"] + 0.01))
    assert list(mean["test_accuracy_sd"]) == pytest.approx([0.02 / np.sqrt(2)] * 3)
    fig = plots.frontier(mean, fr.pareto(mean), _peers_frame())
    assert list(_trace(fig, "SDWEC (λ sweep)").error_y.array) == pytest.approx(
        [0.02 / np.sqrt(2)] * 3)
    assert _trace(fig, "bagging").error_y.array is None  # one split: no bars


def test_paper_comparison_and_training_time():
    import pandas as pd

    table = pd.DataFrame({"dataset": ["wine", "sonar", "wine"],
                          "method": ["SDWEC-B", "SDWEC-B", "bagging"],
                          "paper": [0.9605, 0.8126, 0.9719], "ours": [0.95, 0.80, 0.97]})
    fig = plots.paper_comparison(table)
    assert list(_trace(fig, "SDWEC-B").x) == [0.9605, 0.8126]
    assert _trace(fig, "SDWEC-B").marker.color == methods.get("SDWEC-B").color
    assert list(_trace(fig, "bagging").customdata[0]) == ["wine"]
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
    pinned = _trace(fig, "pinned (2)")
    assert list(pinned.x) == [1, 2] and list(pinned.y) == [0.4, 0.9]
    assert fig.layout.yaxis2.dtick == 0.25  # accuracy ticks at 0, 0.25, ..., not 0.126
    with pytest.raises(ValueError, match="differ in shape"):
        plots.member_weights([0.5, 0.0], [0.6, 0.7], pinned=[1.0])


def test_lambda_scrubber_by_hand():
    # Three trees, three λ: the first abstains, the second keeps tree 1, the third all three.
    W = np.array([[0.0, 0.0, 0.5], [0.0, 2.0, 1.0], [0.0, 0.0, 0.25]])
    path = comparison.LambdaPath(lams=np.array([0.01, 1.0, 100.0]), weights=W,
                                 val_accuracy=np.array([0.5, 0.75, 1.0]),
                                 test_accuracy=np.array([0.4, 0.6, 0.8]),
                                 bagging={"validation": 0.9, "test": 0.7})
    fig = plots.lambda_scrubber(path, lam=0.9)
    assert fig.layout.sliders[0].active == 1  # the grid's nearest λ
    assert tuple(fig.layout.yaxis2.range) == (0, 1.0)  # accuracy bars start at 0
    stems, bars, here, heading = (fig.frames[2].data[i] for i in range(4))
    assert list(stems.x) == [0, 0, None, 1, 1, None, 2, 2, None]
    assert list(stems.y) == [0.0, 0.5, None, 0.0, 1.0, None, 0.0, 0.25, None]
    assert list(bars.y) == [0.8, 1.0, 0.7, 0.9] and list(bars.text) == [
        "0.800", "1.000", "0.700", "0.900"]
    assert (list(here.x), list(here.y)) == ([3], [0.8])
    assert heading.text == ("λ = 100: 3 of 3 trees, test accuracy 0.8000",)
    assert list(fig.frames[1].data[2].x) == [1]
    # The abstaining λ: no stem, no marker on the log axis, and the heading says so.
    stems, _, here, heading = (fig.frames[0].data[i] for i in range(4))
    assert list(stems.x) == [] and list(here.x) == [None] and list(here.y) == [None]
    assert heading.text == ("λ = 0.01: abstains (no tree kept), test accuracy 0.4000",)
    # The line of every λ leaves the abstaining one out.
    assert list(fig.data[4].x) == [1, 3]
