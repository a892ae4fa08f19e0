"""Plotly figure builders for the dashboard, one function per chart.

Every builder takes plain numbers or arrays (or a library result object) and returns a
:class:`plotly.graph_objects.Figure`; none of them touches Streamlit, so each can be tested
and reused outside the dashboard.  The teaching figures evaluate the solver's own relaxation
functions (:mod:`sdwec.solver`) rather than re-deriving the formulas.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from sdwec import methods, solver

#: One colour per role that is not a method (methods take theirs from :mod:`sdwec.methods`,
#: so a method keeps its colour across pages).
COLORS = {
    "exact": "#222222",
    "approx": "#d62728",
    "selected": "#1f77b4",
    "dropped": "#c7c7c7",
    "threshold": "#ff7f0e",
    "pareto": "#d62728",
}
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
            "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39")
_MARGIN = dict(l=10, r=10, t=100, b=10)


def _figure(traces, title, x_title, y_title, **layout):
    """A figure built in one constructor call from trace dicts.

    Plotly validates every ``add_trace``/``update_layout`` call separately; building the
    Explorer's figures in one call is about three times faster, which is most of a slider
    move's rerun time.
    """
    layout = dict(title=dict(text=title, y=0.98, yanchor="top", yref="container"),
                  xaxis=dict(title=dict(text=x_title), **layout.pop("xaxis", {})),
                  yaxis=dict(title=dict(text=y_title), **layout.pop("yaxis", {})),
                  margin=_MARGIN, legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0.0),
                  **layout)
    return go.Figure(data=traces, layout=layout)


def _layout(fig, title, xaxis, yaxis, **kwargs):
    # Title at the top of the canvas, legend rows between it and the plot area.
    fig.update_layout(title=dict(text=title, y=0.98, yanchor="top", yref="container"),
                      xaxis_title=xaxis, yaxis_title=yaxis, margin=_MARGIN,
                      legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0.0), **kwargs)
    return fig


# --------------------------------------------------------------------------- teaching


def sign_relaxation(expansion_points, eps, x_max=3.0, n=401):
    """The sign function and its convex relaxation (eq. 6) around several expansion points.

    Around a point where ``H_s ŵ = c`` the relaxation is the line ``x / (|c| + ε)``; it meets
    ``sgn`` near ``x = c`` and is exact there when ε → 0.

    Parameters
    ----------
    expansion_points : sequence of float
        Values ``c = H_s ŵ`` around which to draw the relaxation.
    eps : float
        ε > 0.
    x_max : float, default=3.0
        The plot spans ``[-x_max, x_max]``.
    n : int, default=401
        Samples per curve.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    x = np.linspace(-x_max, x_max, n)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=np.sign(x), name="sgn(x)", mode="lines",
                             line=dict(color=COLORS["exact"], width=3, shape="hv")))
    for i, c in enumerate(expansion_points):
        colour = _PALETTE[(i + 1) % len(_PALETTE)]
        fig.add_trace(go.Scatter(x=x, y=solver.sign_approximation(x, c, eps), mode="lines",
                                 name=f"x / (|{c:g}| + ε)", line=dict(color=colour, dash="dot")))
        fig.add_trace(go.Scatter(x=[c], y=[solver.sign_approximation(c, c, eps)], mode="markers",
                                 marker=dict(color=colour, size=10), showlegend=False,
                                 hovertemplate="H<sub>s</sub>ŵ = %{x:.3g}<br>relaxed = %{y:.3g}"
                                               "<extra></extra>"))
    fig.update_yaxes(range=[-2.0, 2.0])
    return _layout(fig, f"Sign relaxation (eq. 6), ε = {eps:g}", "x = H<sub>s</sub>w", "value")


def abs_approximation(gamma, eps_values, w_hat=None, w_max=2.0, n=401):
    """``|w|`` and its adaptive log-sum-exp approximation (eq. 7, the paper's Figure 2).

    Parameters
    ----------
    gamma : float
        γ > 0.
    eps_values : sequence of float
        One curve per ε.
    w_hat : float or None, default=None
        Expansion point of the adaptive ``γ_r = γ / (|ŵ| + ε)``.  ``None`` sets ``ŵ = w`` at
        every point, the curve of the paper's Figure 2; a number fixes ``γ_r`` as inside
        one iteration of Algorithm 1.
    w_max : float, default=2.0
        The plot spans ``[-w_max, w_max]``.
    n : int, default=401
        Samples per curve.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    w = np.linspace(-w_max, w_max, n)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=w, y=np.abs(w), name="|w|", mode="lines",
                             line=dict(color=COLORS["exact"], width=3)))
    for i, eps in enumerate(eps_values):
        centre = w if w_hat is None else w_hat
        fig.add_trace(go.Scatter(x=w, y=solver.abs_approximation(w, centre, gamma, eps),
                                 mode="lines", name=f"γ = {gamma:g}, ε = {eps:g}",
                                 line=dict(color=_PALETTE[(i + 1) % len(_PALETTE)], dash="dash")))
    where = "ŵ = w" if w_hat is None else f"ŵ = {w_hat:g}"
    return _layout(fig, f"Adaptive log-sum-exp approximation of |w| ({where})", "w", "value")


def penalty_threshold(beta, gamma, eps, w_max=None, n=401):
    """The non-negativity penalty ``P(w)`` (eq. 8) and the weight threshold it implies.

    ``P`` is drawn with the adaptive γ at ``w = 0``, ``g = γ/ε``, on a log scale, with the
    level 1e-3 at which Algorithm 1 (line 15) reads the threshold off it.

    Parameters
    ----------
    beta, gamma, eps : float
        β >= 0, γ > 0, ε > 0.
    w_max : float or None, default=None
        Right end of the plot; ``None`` picks a range that shows the threshold.
    n : int, default=401
        Samples.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    g = gamma / eps
    thr = solver.paper_threshold(beta, gamma, eps)
    if w_max is None:
        w_max = max(3.0 * thr, 10.0 / g, 0.1)
    w = np.linspace(-0.25 * w_max, w_max, n)
    p = solver.penalty(w, beta, g)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=w, y=np.maximum(p, 1e-12), mode="lines", name="P(w)",
                             line=dict(color=COLORS["approx"], width=3)))
    fig.add_hline(y=solver.PENALTY_LEVEL, line=dict(color="#999999", dash="dot"),
                  annotation_text=f"P = {solver.PENALTY_LEVEL:g}")
    fig.add_vline(x=thr, line=dict(color=COLORS["threshold"], dash="dash"),
                  annotation_text=f"threshold {thr:.3g}")
    fig.update_yaxes(type="log")
    return _layout(fig, f"Penalty P(w), β = {beta:g}, g = γ/ε = {g:.3g}", "w",
                   "P(w) (log scale)")


def taylor_model(w_hat, beta, gamma, eps, w_max=None, n=401):
    """The smooth per-weight cost and its second-order Taylor model ``A + B w + C w²`` at ``ŵ``.

    Parameters
    ----------
    w_hat : float
        Expansion point ŵ.
    beta, gamma, eps : float
        β >= 0, γ > 0, ε > 0.
    w_max : float or None, default=None
        Half-width of the plotted window around ŵ; ``None`` uses ``max(1, 2|ŵ|)``.
    n : int, default=401
        Samples.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    if w_max is None:
        w_max = max(1.0, 2.0 * abs(w_hat))
    w = np.linspace(w_hat - w_max, w_hat + w_max, n)
    exact = solver.relaxed_terms(w, w_hat, gamma, eps, beta)
    a, b, c = (float(v) for v in solver.taylor_coefficients(w_hat, gamma, eps, beta))
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=w, y=exact, mode="lines", name="|w| + P(w) (relaxed)",
                             line=dict(color=COLORS["exact"], width=3)))
    fig.add_trace(go.Scatter(x=w, y=a + b * w + c * w**2, mode="lines",
                             name="A + Bw + Cw² (Taylor)",
                             line=dict(color=COLORS["approx"], dash="dash")))
    fig.add_trace(go.Scatter(x=[w_hat], y=[a + b * w_hat + c * w_hat**2], mode="markers",
                             name="ŵ", marker=dict(color=COLORS["threshold"], size=11)))
    top = float(np.max(exact))
    fig.update_yaxes(range=[min(0.0, float(np.min(exact))) - 0.05 * top, 1.3 * top])
    return _layout(fig, f"Second-order Taylor model around ŵ = {w_hat:g}", "w", "cost")


# --------------------------------------------------------------------------- explorer


def convergence(history):
    """Non-convex cost (eq. 4) and convex-relaxed cost (eq. 10) per iteration (Figure 3).

    Parameters
    ----------
    history : sequence of IterationRecord
        ``Solution.history``.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    it = [r.iteration for r in history]
    traces = [
        dict(type="scatter", x=it, y=[r.nonconvex_cost for r in history], mode="lines+markers",
             name="non-convex cost (eq. 4)", line=dict(color=COLORS["exact"]),
             customdata=[r.n_selected for r in history],
             hovertemplate="iteration %{x}<br>cost %{y:.4g}<br>"
                           "%{customdata} non-zero weights<extra></extra>"),
        dict(type="scatter", x=it, y=[r.relaxed_cost for r in history], mode="lines+markers",
             name="convex-relaxed cost (eq. 10)",
             line=dict(color=COLORS["approx"], dash="dash")),
    ]
    return _figure(traces, "Cost per iteration", "iteration", "cost")


def member_weights(weights, member_accuracy, threshold=None):
    """Weight of every ensemble member, selected ones highlighted, with its own accuracy.

    Parameters
    ----------
    weights : array_like of shape (l,)
        Final weights (zeros are the dropped members).
    member_accuracy : array_like of shape (l,)
        Each member's validation accuracy, shown on hover and as a second axis.
    threshold : float or None, default=None
        Threshold the raw weights were cut at, drawn as a line when finite and positive.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    weights = np.asarray(weights, dtype=float)
    acc = np.asarray(member_accuracy, dtype=float)
    if weights.shape != acc.shape:
        raise ValueError(f"weights {weights.shape} and member_accuracy {acc.shape} differ in shape")
    idx = np.arange(weights.size)
    chosen = weights > 0
    traces = [dict(type="bar", x=idx[mask], y=weights[mask], name=f"{name} ({int(mask.sum())})",
                   marker=dict(color=colour), customdata=acc[mask],
                   hovertemplate="tree %{x}<br>weight %{y:.4g}<br>"
                                 "validation accuracy %{customdata:.3f}<extra></extra>")
              for mask, name, colour in ((chosen, "selected", COLORS["selected"]),
                                         (~chosen, "dropped", COLORS["dropped"]))]
    traces.append(dict(type="scatter", x=idx, y=acc, mode="markers",
                       name="tree's validation accuracy", yaxis="y2",
                       marker=dict(color=COLORS["threshold"], size=5),
                       hovertemplate="tree %{x}<br>accuracy %{y:.3f}<extra></extra>"))
    shapes, notes = [], []
    if threshold is not None and np.isfinite(threshold) and threshold > 0:
        shapes.append(dict(type="line", xref="x domain", x0=0, x1=1, yref="y", y0=threshold,
                           y1=threshold, line=dict(color=COLORS["threshold"], dash="dot")))
        notes.append(dict(xref="x domain", x=1, xanchor="right", yref="y", y=threshold,
                          yanchor="bottom", showarrow=False,
                          text=f"threshold {threshold:.3g}"))
    return _figure(traces, "Weights of the ensemble members", "tree index", "weight",
                   barmode="overlay", bargap=0.1, shapes=shapes, annotations=notes,
                   yaxis2=dict(title=dict(text="accuracy"), overlaying="y", side="right",
                               range=[0, 1.02], showgrid=False))


def method_comparison(rows):
    """Test and validation accuracy of several methods on the same split, as grouped bars.

    Parameters
    ----------
    rows : sequence of dict
        Each with ``"method"``, ``"test"`` and ``"validation"`` accuracies and optionally
        ``"used"`` (members used); the order is kept.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    methods = [r["method"] for r in rows]
    used = [r.get("used", "") for r in rows]
    traces = []
    for split, colour in (("test", "#1f77b4"), ("validation", "#aec7e8")):
        values = [r[split] for r in rows]
        traces.append(dict(type="bar", x=methods, y=values, name=split,
                           marker=dict(color=colour), text=[f"{v:.3f}" for v in values],
                           textposition="outside", customdata=used,
                           hovertemplate="%{x}<br>" + split + " accuracy %{y:.4f}<br>"
                                         "members used %{customdata}<extra></extra>"))
    low = min([r["test"] for r in rows] + [r["validation"] for r in rows])
    return _figure(traces, "Accuracy on the same split", "", "accuracy", barmode="group",
                   yaxis=dict(range=[max(0.0, low - 0.1), 1.05]))


def prediction_time(timing):
    """Measured prediction time of the pruned ensemble against the full one.

    Parameters
    ----------
    timing : sdwec.timing.PredictionTiming
        Result of :func:`sdwec.timing.measure`.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    labels = [f"full ({timing.n_full} trees)", f"pruned ({timing.n_pruned} trees)"]
    ms = [1e3 * timing.full_seconds, 1e3 * timing.pruned_seconds]
    bar = dict(type="bar", x=ms, y=labels, orientation="h",
               marker=dict(color=[methods.get("bagging").color, methods.get("SDWEC").color]),
               text=[f"{v:.2f} ms" for v in ms], textposition="auto",
               hovertemplate="%{y}: %{x:.3f} ms<extra></extra>")
    return _figure([bar], f"Prediction time on {timing.n_rows} test rows "
                          f"(median of {timing.repeats} runs)", "milliseconds", "", height=220)


# --------------------------------------------------------------------------- frontier


def __getattr__(name):
    # The frontier's peers, read from the registry when asked so that registered methods
    # are included: PEER_POINTS (one weight vector each) and PEER_CURVES (one per size/α).
    if name in ("PEER_POINTS", "PEER_CURVES"):
        chosen = methods.points() if name == "PEER_POINTS" else methods.curves()
        return tuple(m.name for m in chosen if m.frontier)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Columns of a sweep row carried as ``customdata`` so a clicked point can be re-created.
SWEEP_CUSTOMDATA = ("lam", "beta", "gamma", "eps", "n_selected", "val_accuracy",
                    "test_accuracy")


def frontier(sweep, front, peers, accuracy="test_accuracy", second=None):
    """Accuracy against sparsity: an SDWEC sweep, its Pareto front and the peers.

    Parameters
    ----------
    sweep : pandas.DataFrame
        :func:`sdwec.frontier.sweep` output (one row per parameter point); its
        ``select_*`` columns give the SDWEC-select trace (drawn when ``second`` is None).
    front : pandas.DataFrame
        :func:`sdwec.frontier.pareto` of ``sweep``.
    peers : pandas.DataFrame
        :func:`sdwec.frontier.peers` output.
    accuracy : {"test_accuracy", "val_accuracy"}, default="test_accuracy"
        The y axis.
    second : str or None, default=None
        Name of the second swept parameter; its values get one trace each.

    Returns
    -------
    plotly.graph_objects.Figure
        SDWEC traces are named ``"SDWEC ..."`` and carry :data:`SWEEP_CUSTOMDATA`.
    """
    if accuracy not in ("test_accuracy", "val_accuracy"):
        raise ValueError(f"accuracy must be 'test_accuracy' or 'val_accuracy'; got {accuracy!r}")
    fig = go.Figure()
    for method in methods.curves():
        rows = peers[peers["method"] == method.name].sort_values("sparsity")
        if rows.empty:
            continue
        fig.add_trace(go.Scatter(
            x=rows["sparsity"], y=rows[accuracy], mode="lines", name=method.name,
            line=dict(width=1.5, color=method.color, dash=method.dash),
            customdata=rows[["params", "n_selected"]].to_numpy(),
            hovertemplate=method.name + " %{customdata[0]}<br>%{customdata[1]} trees<br>"
                          "sparsity %{x:.3f}<br>accuracy %{y:.4f}<extra></extra>"))
    for method in methods.points():
        rows = peers[peers["method"] == method.name]
        if rows.empty:
            continue
        fig.add_trace(go.Scatter(
            x=rows["sparsity"], y=rows[accuracy], mode="markers", name=method.name,
            marker=dict(size=11, symbol=method.symbol, color=method.color,
                        line=dict(width=1, color="black")),
            customdata=rows[["n_selected"]].to_numpy(),
            hovertemplate=method.name + "<br>%{customdata[0]} trees<br>sparsity %{x:.3f}<br>"
                                        "accuracy %{y:.4f}<extra></extra>"))
    groups = [(None, sweep)] if second is None else list(sweep.groupby(second, sort=True))
    sdwec, select_style = methods.get("SDWEC"), methods.get("SDWEC-select")
    shades = methods.sweep_colors(len(groups))
    hover = ("SDWEC λ=%{customdata[0]:.4g} β=%{customdata[1]:.4g} γ=%{customdata[2]:.4g} "
             "ε=%{customdata[3]:.4g}<br>%{customdata[4]} trees<br>validation "
             "%{customdata[5]:.4f}, test %{customdata[6]:.4f}<extra></extra>")
    for i, (value, rows) in enumerate(groups):
        name = "SDWEC (λ sweep)" if value is None else f"SDWEC {second}={value:g}"
        fig.add_trace(go.Scatter(
            x=rows["sparsity"], y=rows[accuracy], mode="markers", name=name,
            marker=dict(size=9, symbol=sdwec.symbol,
                        color=sdwec.color if value is None else shades[i],
                        line=dict(width=1, color="white")),
            customdata=rows[list(SWEEP_CUSTOMDATA)].to_numpy(dtype=float),
            hovertemplate=hover))
    select = "select_" + accuracy
    if second is None and select in sweep:
        rows = sweep.sort_values("sparsity")
        fig.add_trace(go.Scatter(
            x=rows["sparsity"], y=rows[select], mode="markers", name="SDWEC-select",
            marker=dict(size=7, symbol=select_style.symbol, color=select_style.color),
            customdata=rows[["lam", "n_selected"]].to_numpy(dtype=float),
            hovertemplate="SDWEC-select (SDWEC's trees, equal votes) λ=%{customdata[0]:.4g}"
                          "<br>%{customdata[1]} trees<br>sparsity %{x:.3f}<br>accuracy "
                          "%{y:.4f}<extra></extra>"))
    if not front.empty:
        ordered = front.sort_values("sparsity")
        # Between two front points the best accuracy at least this sparse is the next
        # point's, hence the vertical-then-horizontal staircase.
        fig.add_trace(go.Scatter(x=ordered["sparsity"], y=ordered[accuracy], mode="lines",
                                 name="SDWEC Pareto front", hoverinfo="skip",
                                 line=dict(color=COLORS["pareto"], width=2, shape="vh")))
    label = "test accuracy" if accuracy == "test_accuracy" else "validation accuracy"
    fig.update_xaxes(range=[-0.02, 1.02])
    fig.update_layout(height=600, clickmode="event+select")
    return _layout(fig, f"Accuracy vs sparsity ({label})", "sparsity (1 − used / l)", label)


# --------------------------------------------------------------------------- paper


def _method_color(name, i):
    """A method's own colour; names outside the registry take the i-th palette colour."""
    try:
        return methods.style(str(name)).color
    except KeyError:
        return _PALETTE[i % len(_PALETTE)]


def paper_comparison(table):
    """Reproduced against published test accuracy, one point per (dataset, method).

    Parameters
    ----------
    table : pandas.DataFrame
        Columns ``dataset``, ``method``, ``paper`` and ``ours`` (accuracies).

    Returns
    -------
    plotly.graph_objects.Figure
        Points on the diagonal agree with the paper.
    """
    fig = go.Figure()
    for i, (method, rows) in enumerate(table.groupby("method", sort=False)):
        fig.add_trace(go.Scatter(
            x=rows["paper"], y=rows["ours"], mode="markers", name=str(method),
            marker=dict(size=10, color=_method_color(method, i)),
            customdata=rows[["dataset"]].to_numpy(),
            hovertemplate=str(method) + " on %{customdata[0]}<br>paper %{x:.4f}<br>"
                                        "ours %{y:.4f}<extra></extra>"))
    values = table[["paper", "ours"]].to_numpy(dtype=float)
    finite = values[np.isfinite(values)]
    low = float(finite.min()) - 0.02 if finite.size else 0.5
    fig.add_trace(go.Scatter(x=[low, 1.0], y=[low, 1.0], mode="lines", name="agreement",
                             line=dict(color="#999999", dash="dash"), hoverinfo="skip"))
    return _layout(fig, "Test accuracy: this reproduction vs the paper's Table 3",
                   "paper", "this reproduction")


def training_time(table):
    """Weight-finding time against the number of classifiers l, one line per dataset.

    Parameters
    ----------
    table : pandas.DataFrame
        Columns ``dataset``, ``m``, ``l``, ``seconds`` and optionally ``paper_seconds``.

    Returns
    -------
    plotly.graph_objects.Figure
        Measured times as solid lines, the paper's (when given) dashed, log-scaled.
    """
    fig = go.Figure()
    for i, (name, rows) in enumerate(table.groupby("dataset", sort=False)):
        rows = rows.sort_values("l")
        colour = _PALETTE[i % len(_PALETTE)]
        m = int(rows["m"].iloc[0])
        fig.add_trace(go.Scatter(x=rows["l"], y=rows["seconds"], mode="lines+markers",
                                 name=f"{name} (m={m}) measured", line=dict(color=colour),
                                 hovertemplate="l=%{x}<br>%{y:.4f} s<extra></extra>"))
        if "paper_seconds" in rows and rows["paper_seconds"].notna().any():
            fig.add_trace(go.Scatter(x=rows["l"], y=rows["paper_seconds"], mode="lines+markers",
                                     name=f"{name} paper", line=dict(color=colour, dash="dash"),
                                     hovertemplate="l=%{x}<br>paper %{y:.2f} s<extra></extra>"))
    fig.update_yaxes(type="log")
    return _layout(fig, "SDWEC weight-finding time (k = 25)", "classifiers l", "seconds (log)")
