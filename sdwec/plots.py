"""Plotly figure builders for the dashboard, one function per chart.

Every builder takes plain numbers or arrays (or a library result object) and returns a
:class:`plotly.graph_objects.Figure`; none of them touches Streamlit, so each can be tested
and reused outside the dashboard.  The teaching figures evaluate the solver's own relaxation
functions (:mod:`sdwec.solver`) rather than re-deriving the formulas.  How each method and
role is drawn (colour, marker, dash) is :mod:`sdwec.styles`'s, one look per method on every
figure.
"""

from __future__ import annotations

import re

import numpy as np

try:
    import plotly.graph_objects as go
except ImportError as exc:  # plotly is the dashboard's, not part of the base install
    raise ImportError("sdwec.plots needs plotly: pip install 'sdwec[dashboard]'") from exc

from sdwec import intervals, methods, solver, styles, teaching
from sdwec.convergence import describe
from sdwec.formatting import mean_interval, significant

#: The colour of each role that is not a method (:data:`sdwec.styles.ROLE_COLORS`, defined
#: beside the methods' own colours so that none of them is a method's).
COLORS = styles.ROLE_COLORS
_MARGIN = dict(l=10, r=10, t=75, b=10)
#: Legends in rows under the plot (Plotly makes room for them): above it they met the title
#: in a narrow chart, and on the right a dozen entries took 40 % of the width at 1280 px.
_LEGEND = dict(orientation="h", x=0, xanchor="left", y=0, yanchor="bottom", yref="container",
               tracegroupgap=0)
#: Width of one tree's bar, in tree-index units: two kept trees are two thin bars, never a
#: block spanning the gap between them.
BAR_WIDTH = 0.8
#: Titles start at the left edge, under the row of the toolbar (which shows on hover at the
#: top right and covered the titles' ends); a long title is two lines (``<br>``).
_TITLE = dict(x=0.0, xref="paper", xanchor="left", y=1.0, yanchor="top", yref="container")


def _title(text):
    # Plotly centres a title's extra lines on its anchor, so each one moves it up by ~12 px.
    return dict(text=text, pad=dict(t=34 + 12 * text.count("<br>")), **_TITLE)


def scoped(fig, scope):
    """``fig`` with ``scope`` (which splits it shows, e.g. ``"split 1 of 10"``) added to the
    first line of its title and of every frame's title; nothing when ``scope`` is empty.

    Changes ``fig`` in place (a copy of a 200-bar figure cost 20 ms of a slider move): call
    it on a figure just built, never on one a cache shares.
    """
    if not scope:
        return fig

    def add(text):
        head, sep, tail = (text or "").partition("<br>")
        return f"{head} · {scope}{sep}{tail}" if head else scope

    fig.layout.title.text = add(fig.layout.title.text)
    for frame in fig.frames:
        if frame.layout.title.text:
            frame.layout.title.text = add(frame.layout.title.text)
    return fig


def _margin(title, **changes):
    """The margins with room at the top for ``title``'s lines."""
    return dict(_MARGIN, t=_MARGIN["t"] + 22 * title.count("<br>"), **changes)


#: Whether :func:`_figure` has plotly.py check every property.  Off: the checks cost about
#: two thirds of building a figure (1 ms of a slider move's three), and the figure they give is
#: the same (tests/test_plots.py builds every figure with them on and compares).
VALIDATE = False


def _figure(traces, title, x_title, y_title, **layout):
    """A figure built in one constructor call from trace dicts.

    Plotly validates every ``add_trace``/``update_layout`` call separately; building the
    Explorer's figures in one call is about three times faster, which is most of a slider
    move's rerun time.  Unvalidated (:data:`VALIDATE`), it is three times faster again.
    """
    layout = dict(title=_title(title),
                  xaxis=dict(title=dict(text=x_title), **layout.pop("xaxis", {})),
                  yaxis=dict(title=dict(text=y_title), **layout.pop("yaxis", {})),
                  margin=layout.pop("margin", _margin(title)),
                  legend=layout.pop("legend", _LEGEND), **layout)
    return go.Figure(data=traces, layout=layout, _validate=VALIDATE)


def _layout(fig, title, xaxis, yaxis, **kwargs):
    fig.update_layout(title=_title(title), xaxis_title=xaxis, yaxis_title=yaxis,
                      margin=_margin(title), legend=_LEGEND, **kwargs)
    return fig


# --------------------------------------------------------------------------- teaching


def sign_relaxation(expansion_points, eps, x_max=teaching.SIGN_X_MAX, n=401):
    """The sign function and its convex relaxation (eq. 6) around several expansion points.

    Around a point where ``H_s ŵ = c`` the relaxation is the line ``x / (|c| + ε)``; it meets
    ``sgn`` near ``x = c`` and is exact there when ε → 0.

    Parameters
    ----------
    expansion_points : sequence of float
        Values ``c = H_s ŵ`` around which to draw the relaxation.
    eps : float
        ε > 0.
    x_max : float, default=teaching.SIGN_X_MAX
        The plot spans ``[-x_max, x_max]`` (the page's sentence says which lines reach ±1
        outside it).
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
    shades = styles.role_shades("approx", len(expansion_points))
    for c, colour in zip(expansion_points, shades):
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
    for eps, colour in zip(eps_values, styles.role_shades("approx", len(eps_values))):
        centre = w if w_hat is None else w_hat
        fig.add_trace(go.Scatter(x=w, y=solver.abs_approximation(w, centre, gamma, eps),
                                 mode="lines", name=f"γ = {gamma:g}, ε = {eps:g}",
                                 line=dict(color=colour, dash="dash")))
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
    if beta > 0:
        # Below the floor the curve leaves the axis (a gap), rather than running along it.
        shown = np.where(p >= _PENALTY_FLOOR, p, np.nan)
        fig.add_trace(go.Scatter(x=w, y=shown, mode="lines", name="P(w)",
                                 line=dict(color=COLORS["approx"], width=3)))
    else:
        # Right of the threshold's line at w = 0 (a fifth of the way in), on white: the
        # dashed line through "β = 0" read as "β ≠ 0".
        fig.add_annotation(xref="x domain", x=0.98, xanchor="right", yref="y domain", y=0.75,
                           showarrow=False, bgcolor="white",
                           text="β = 0: P(w) = 0 for every w<br>(no penalty; not drawable on "
                                "a log axis)")
    fig.add_hline(y=solver.PENALTY_LEVEL, line=dict(color=COLORS["guide"], dash="dot"))
    # Placed by hand: on a log axis Plotly reads an annotation's y as log10 of the value, and
    # add_hline's own label gives it the value (it sat at 10^0.001, near 1).
    fig.add_annotation(xref="x domain", x=1, yref="y", y=np.log10(solver.PENALTY_LEVEL),
                       text=f"P = {solver.PENALTY_LEVEL:g}", showarrow=False,
                       xanchor="right", yanchor="bottom")
    fig.add_vline(x=thr, line=dict(color=COLORS["threshold"], dash="dash"),
                  annotation_text=f"threshold {significant(thr)}")
    fig.update_yaxes(type="log", exponentformat="power", dtick=1,
                     **({} if beta > 0 else {"range": [-6, 0]}))
    fig.update_xaxes(range=[float(w[0]), float(w[-1])])
    return _layout(fig, f"Penalty P(w), β = {beta:g}, g = γ/ε = {g:.3g}", "w",
                   "P(w) (log scale)")


#: The penalty figure's floor: smaller values of P are not drawn (its log axis would stretch
#: to 10⁻³⁰⁰ and flatten the part that matters, around the level 10⁻³).
_PENALTY_FLOOR = 1e-12


def taylor_model(w_hat, beta, gamma, eps, w_max=None, n=401):
    """The smooth per-weight cost and its second-order Taylor model ``A + B w + C w²`` at ``ŵ``.

    The curves, window and axis range are :func:`sdwec.teaching.taylor_view`'s (same
    parameters), the numbers the page's sentence about this figure is worded from.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    view = teaching.taylor_view(w_hat, beta, gamma, eps, w_max=w_max, n=n)
    a, b, c = view.coefficients
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=view.w, y=view.cost, mode="lines", name="|w| + P(w) (relaxed)",
                             line=dict(color=COLORS["exact"], width=3)))
    fig.add_trace(go.Scatter(x=view.w, y=view.model, mode="lines",
                             name="A + Bw + Cw² (Taylor)",
                             line=dict(color=COLORS["approx"], dash="dash")))
    fig.add_trace(go.Scatter(x=[w_hat], y=[a + b * w_hat + c * w_hat**2], mode="markers",
                             name="ŵ", marker=dict(color=COLORS["what"], size=12,
                                                  line=dict(width=1.5, color=COLORS["exact"]))))
    fig.update_yaxes(range=list(view.y_range))
    # C in the title: the axes follow ŵ, so how sharply the parabola bends is read there.
    return _layout(fig, f"Second-order Taylor model around ŵ = {w_hat:g}, C = "
                   f"{significant(c, zero_below=0.0)}", "w", "cost")


# --------------------------------------------------------------------------- explorer


def convergence(history, log_y=False):
    """Non-convex cost (eq. 4) and convex-relaxed cost (eq. 10) per iteration (Figure 3).

    Iterations where the non-convex cost rises are marked (see :mod:`sdwec.convergence`:
    Algorithm 1 does not promise a decrease).

    Parameters
    ----------
    history : sequence of IterationRecord
        ``Solution.history``.
    log_y : bool, default=False
        A log-scale cost axis (the first iterations' costs can dwarf the rest).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    it = [r.iteration for r in history]
    rises = describe(history).rises
    # The same traces (by uid) at every setting, the rises' hidden when there are none: a
    # page redraws another setting's figure by swapping these traces (LIVE_PARTS).
    traces = [
        dict(type="scatter", x=it, y=[r.nonconvex_cost for r in history], mode="lines+markers",
             name="non-convex cost (eq. 4)", line=dict(color=COLORS["exact"]),
             customdata=[r.n_selected for r in history], uid="nonconvex",
             hovertemplate="iteration %{x}<br>cost %{y:.4g}<br>"
                           "%{customdata} non-zero weights<extra></extra>"),
        dict(type="scatter", x=it, y=[r.relaxed_cost for r in history], mode="lines+markers",
             name="convex-relaxed cost (eq. 10)", uid="relaxed",
             line=dict(color=COLORS["approx"], dash="dash")),
        dict(type="scatter", x=[r.iteration for r in rises], y=[r.after for r in rises],
             mode="markers", name="cost rises", uid="rises", visible=bool(rises),
             marker=dict(symbol="triangle-up", size=11, color=COLORS["rise"]),
             hovertemplate="iteration %{x}: the cost rose to %{y:.4g}<extra></extra>"),
    ]
    yaxis = dict(type="log", exponentformat="power") if log_y else {}
    return _figure(traces, "Cost per iteration", "iteration", "cost", yaxis=yaxis,
                   xaxis=dict(dtick=5 if len(it) > 10 else 1), height=FIRST_ROW_HEIGHT)


def weights_over_iterations(history, thresholds, member_accuracy=None):
    """The raw weights after each iteration, with the threshold, as Plotly frames.

    A slider (and a play button) moves through iterations ``1 .. k`` in the browser, with
    no server round trip: each frame shows that iteration's weights before line 15, the
    threshold line 15 would apply to them, and which trees it would keep.

    Parameters
    ----------
    history : sequence of IterationRecord
        ``Solution.history`` (with ``weights``).
    thresholds : sequence of ndarray of shape (l,)
        Per iteration, each weight's threshold (:func:`sdwec.solver.line15_thresholds`).
    member_accuracy : array_like of shape (l,), optional
        Shown on hover.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    history = list(history)
    if not history or any(r.weights is None for r in history):
        raise ValueError("the history holds no weights; solve again with this version")
    if len(thresholds) != len(history):
        raise ValueError(f"need one threshold vector per iteration ({len(history)}); "
                         f"got {len(thresholds)}")
    l = len(history[0].weights)
    idx = np.arange(l)
    acc = np.full(l, np.nan) if member_accuracy is None else np.asarray(member_accuracy)
    top = max(float(np.max(r.weights)) for r in history)
    kept_colour, dropped_colour = styles.style("SDWEC").color, COLORS["dropped"]

    def frame_data(record, thr):
        kept = record.weights > thr
        # One tree, one bar of fixed width: a bar's width never depends on its neighbours.
        bars = dict(type="bar", x=idx, y=record.weights, name="weight", width=BAR_WIDTH,
                    marker=_two_colours(kept, kept_colour, dropped_colour),
                    customdata=acc,
                    hovertemplate="tree %{x}<br>weight %{y:.4g}<br>validation accuracy "
                                  "%{customdata:.3f}<extra></extra>")
        line = dict(type="scatter", x=idx, y=thr, mode="lines", name="threshold (line 15)",
                    line=dict(color=COLORS["threshold"], dash="dot", shape="hvh"),
                    hoverinfo="skip")
        return [bars, line], int(kept.sum())

    frames, steps = [], []
    for record, thr in zip(history, thresholds):
        data, kept = frame_data(record, np.asarray(thr, dtype=float))
        name = str(record.iteration)
        frames.append(dict(name=name, data=data, layout=dict(title=dict(
            text=f"Iteration {record.iteration}: {kept} of {l} trees above the threshold, "
                 f"weights sum to {significant(record.weights.sum())}"))))
        steps.append(dict(method="animate", label=name,
                          args=[[name], dict(mode="immediate", frame=dict(duration=0, redraw=True),
                                             transition=dict(duration=0))]))
    first, _ = frame_data(history[0], np.asarray(thresholds[0], dtype=float))
    fig = _figure(first, frames[0]["layout"]["title"]["text"], "tree index",
                  "weight before thresholding", showlegend=False,
                  xaxis=dict(range=[-0.5, l - 0.5]),
                  yaxis=dict(range=[0, 1.05 * top if top > 0 else 1]),
                  sliders=[dict(active=0, steps=steps, x=0.1, len=0.9, y=-0.12,
                                currentvalue=dict(prefix="iteration ", visible=True))],
                  updatemenus=[dict(type="buttons", x=0, y=-0.12, xanchor="left",
                                    yanchor="top", direction="left", showactive=False,
                                    buttons=[dict(label="▶", method="animate", args=[
                                        None, dict(frame=dict(duration=300, redraw=True),
                                                   fromcurrent=True, mode="immediate",
                                                   transition=dict(duration=0))])])],
                  margin=_margin(frames[0]["layout"]["title"]["text"], b=90), height=430)
    fig.frames = [go.Frame(**f) for f in frames]
    return fig


def _two_colours(mask, on, off):
    """Marker colours from a boolean mask, as numbers on a two-colour scale (a list of colour
    strings is validated one by one, which makes figures with many frames slow to build)."""
    return dict(color=np.asarray(mask, dtype=float), cmin=0, cmax=1,
                colorscale=[[0, off], [1, on]])


#: The pinned configuration's weight ticks: light, so they do not read as this one's.
PINNED = "rgba(0, 0, 0, 0.45)"


def _asymmetric(mean, lo, hi, floor=None, **style):
    """A Plotly error bar from ``mean`` down to ``lo`` and up to ``hi`` (an interval, a
    range of runs): no bar where an end is NaN; a lower end below ``floor`` (the edge of a
    log axis, where 0 has no place) is drawn to it. ``style``: color, thickness, width."""
    mean, lo, hi = (np.atleast_1d(np.asarray(v, dtype=float)) for v in (mean, lo, hi))
    if floor is not None:
        lo = np.maximum(lo, floor)
    lo, hi = np.where(np.isnan(lo), mean, lo), np.where(np.isnan(hi), mean, hi)
    return dict(type="data", symmetric=False, array=np.maximum(hi - mean, 0.0).tolist(),
                arrayminus=np.maximum(mean - lo, 0.0).tolist(), **style)


#: The weights chart and the tree-accuracy strip under it (:func:`tree_accuracies`) are two
#: figures drawn one above the other: equal fixed left/right margins and no automatic
#: margin on their y axes keep tree i at the same pixel x in both (an automatic margin
#: follows each chart's own tick labels).  ``l`` leaves room for the y tick labels and the
#: strip's two-line axis title.
TREE_AXIS_MARGIN = dict(l=80, r=10)
#: Heights of the weights chart and of the strip under it (pixels).  The strip is tall
#: enough for its fitted accuracy axis to separate trees a point apart.
WEIGHTS_HEIGHT = 360
STRIP_HEIGHT = 170
#: The weights chart's legend sits right under its title, above the plot, in rows of its own
#: (under the plot it split the chart from the strip of the same trees drawn right under
#: it).  The top margin holds the title and :data:`_WEIGHTS_LEGEND_ROWS` row (the three
#: entries at 1280 px); when the entries wrap (a pin adds one, a narrow chart), Plotly moves
#: the plot down to make room (its automatic margin for a legend outside the plot).
_WEIGHTS_LEGEND_ROWS = 1
_LEGEND_ROW = 21
#: Pixels from the top of the chart to the top of its legend: under the title's line.
_WEIGHTS_LEGEND_TOP = 58
_WEIGHTS_LEGEND = dict(orientation="h", x=0, xanchor="left", yref="container",
                       y=1 - _WEIGHTS_LEGEND_TOP / WEIGHTS_HEIGHT, yanchor="top",
                       tracegroupgap=0)
#: A weight drawn as a bar shorter than this fraction of the weights axis is drawn at zero
#: height: about one pixel of the ~260 px plot.  Plotly draws any non-zero bar at least a
#: pixel tall, so weights near zero thickened the baseline as if each were a small bar (a
#: dark stretch of baseline; vehicle's multi-class pool has 15 of them); hover gives them.
VISIBLE_FRACTION = 0.005
#: Headroom above the largest weight (fraction of it): the axis range is set, not left to
#: Plotly, so that :data:`VISIBLE_FRACTION` is a fraction of the drawn axis.
_WEIGHT_HEADROOM = 0.05


def _tree_axis(l, **axis):
    """The tree-index x axis of the weights chart and of the strip under it: the same range,
    and room made below it only (never beside it, which would shift the trees)."""
    return dict(range=[-0.5, l - 0.5], automargin="height", **axis)


def member_weights(weights, member_accuracy, threshold=None, pinned=None, method="SDWEC",
                   raw=None):
    """Weight of every ensemble member, selected ones highlighted.

    The members' own accuracies are a separate figure drawn right under this one,
    :func:`tree_accuracies`, on the same x axis, which carries the tree index's labels:
    they do not change with λ, β, γ, ε or k, so a slider move does not redraw them.

    Parameters
    ----------
    weights : array_like of shape (l,)
        Final weights (zeros are the dropped members).
    member_accuracy : array_like of shape (l,)
        Each member's validation accuracy, shown on hover.
    threshold : float or None, default=None
        Threshold the raw weights were cut at, drawn as a line when finite and positive;
        the legend gives its value.  0 is the rule "none" (only weights at or below zero
        are dropped), which the legend says.
    pinned : array_like of shape (l,), optional
        Another configuration's weights, drawn as grey ticks over the bars (non-zero only);
        that configuration applied its own threshold.
    method : str, default="SDWEC"
        The registry method whose weights these are; the kept trees' bars take its colour.
    raw : array_like of shape (l,), optional
        The weights before the threshold (:attr:`sdwec.solver.Solution.raw_weights`): the
        dropped trees' are drawn as thin grey bars, so that what was dropped shows (one
        under about a pixel, :data:`VISIBLE_FRACTION` of the axis, at zero height; hover
        gives its value).

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
    dropped = ~chosen
    # Threshold 0 is the rule "none": nothing is cut but the weights at or below zero (the
    # solver's penalty leaves many slightly negative), and the legend must not speak of a cut.
    no_cut = threshold is not None and threshold == 0
    if raw is None:
        drop_y, drop_width = weights[dropped], BAR_WIDTH
        drop_name = "weight 0 or below" if no_cut else "weight 0 after the threshold"
    else:
        raw = np.asarray(raw, dtype=float)
        if raw.shape != weights.shape:
            raise ValueError(f"raw weights {raw.shape} and weights {weights.shape} differ in "
                             f"shape")
        drop_y = np.clip(raw[dropped], 0.0, None)
        drop_name = "weight 0 or below" if no_cut else "weight before the threshold"
        drop_width = BAR_WIDTH / 2
    if no_cut:
        drop_name += " (rule “none” keeps every positive weight)"
    if pinned is not None:
        pinned = np.asarray(pinned, dtype=float)
        if pinned.shape != weights.shape:
            raise ValueError(f"pinned weights {pinned.shape} and weights {weights.shape} "
                             f"differ in shape")
    line = threshold is not None and np.isfinite(threshold) and threshold > 0
    top = float(np.concatenate([[0.0], weights, drop_y, [threshold] if line else [],
                                [] if pinned is None else pinned]).max())
    # What hover reports is the weight itself; what is drawn is zero below a pixel.
    drop_value = drop_y
    drop_y = np.where(drop_y < VISIBLE_FRACTION * top, 0.0, drop_y)
    # Fixed-width bars on a fixed axis: Plotly's automatic width follows the spacing of the
    # bars drawn, which turned two kept trees into one block from the first to the second.
    hover = ("tree %{x}<br>weight %{y:.4g}<br>validation accuracy %{customdata:.3f}"
             "<extra></extra>")
    drop_hover = ("tree %{x}<br>dropped, weight"
                  + (" before the threshold" if raw is not None and not no_cut else "")
                  + " %{customdata[1]:.4g}<br>validation accuracy %{customdata[0]:.3f}"
                    "<extra></extra>")
    # The same traces (by uid) at every setting, the threshold's hidden where there is no
    # line to draw: a page redraws another setting's figure by swapping them (LIVE_PARTS).
    # Single precision: what a bar and its hover (4 figures) show, in half the bytes a page
    # fetches for each setting it can redraw.
    f4 = np.float32
    traces = [dict(type="bar", x=idx[chosen], y=weights[chosen].astype(f4),
                   name=f"selected ({int(chosen.sum())})", width=BAR_WIDTH, uid="selected",
                   marker=dict(color=styles.style(method).color),
                   customdata=acc[chosen].astype(f4), hovertemplate=hover),
              dict(type="bar", x=idx[dropped], y=drop_y.astype(f4), uid="dropped",
                   name=f"dropped ({int(dropped.sum())}): {drop_name}", width=drop_width,
                   marker=dict(color=COLORS["dropped"]),
                   customdata=np.column_stack([acc[dropped], drop_value]).astype(f4),
                   hovertemplate=drop_hover)]
    if pinned is not None:
        kept = pinned > 0
        # Light and thin: the pinned configuration cut its weights at its own threshold, not
        # at the line drawn here.
        traces.append(dict(type="scatter", x=idx[kept], y=pinned[kept], mode="markers",
                           name=f"pinned: its {int(kept.sum())} kept trees "
                                f"(its own threshold)", uid="pinned",
                           marker=dict(symbol="line-ew-open", size=10, color=PINNED,
                                       line=dict(width=1, color=PINNED)),
                           hovertemplate="tree %{x}<br>pinned weight %{y:.4g}<extra></extra>"))
    notes = []
    # A line across the trees, named (with its value) in the legend: a label at the line's
    # end sat over the last trees' bars.
    rule = dict(type="scatter", x=[], y=[], mode="lines", uid="threshold", visible=False,
                name="threshold", line=dict(color=COLORS["threshold"], dash="dot", width=2))
    if line:
        rule.update(x=[-0.5, weights.size - 0.5], y=[threshold, threshold], visible=True,
                    name=f"threshold {significant(threshold)}",
                    hovertemplate=f"threshold {threshold:.4g}<extra></extra>")
    traces.append(rule)
    if weights.size and not chosen.any():
        cause = (f"every weight fell below the threshold t = {significant(threshold)}"
                 if line else "no weight above 0" if no_cut else "no tree kept")
        notes.append(dict(xref="x domain", x=0.5, yref="y domain", y=0.6, showarrow=False,
                          text=f"{cause}: the ensemble abstains", font=dict(size=15)))
    title = "Weights of the ensemble members"
    yaxis = dict(automargin=False)
    if top > 0:
        yaxis["range"] = [0.0, top * (1 + _WEIGHT_HEADROOM)]
    margin = _margin(title, b=0, **TREE_AXIS_MARGIN)
    margin["t"] += _WEIGHTS_LEGEND_ROWS * _LEGEND_ROW
    # No tick labels: the strip under this chart has them, on the same axis.
    return _figure(traces, title, "", "weight",
                   barmode="overlay", height=WEIGHTS_HEIGHT,
                   **({"annotations": notes} if notes else {}),
                   # Hover by tree, not by bar: a weight drawn at zero height has no bar to
                   # point at.
                   hovermode="x",
                   margin=margin, legend=_WEIGHTS_LEGEND,
                   xaxis=_tree_axis(weights.size, showticklabels=False), yaxis=yaxis)


#: Smallest span of the strip's fitted accuracy axis: trees that all score alike still get
#: an axis a few points wide, not one that magnifies a rounding difference.
_STRIP_MIN_SPAN = 0.05


def _strip_range(acc):
    """The strip's accuracy axis: the dots' range with a margin, within [0, 1]."""
    low, high = (float(acc.min()), float(acc.max())) if acc.size else (0.0, 1.0)
    pad = max(0.08 * (high - low), (_STRIP_MIN_SPAN - (high - low)) / 2, 0.01)
    low, high = max(0.0, low - pad), min(1.0, high + pad)
    return [low, high]


def tree_accuracies(member_accuracy):
    """Each ensemble member's own validation accuracy as a dot: the strip drawn under
    :func:`member_weights`, tree i at the same pixel x as its weight's bar.

    It depends on the pool only, so a slider move leaves it as it is (on a second axis of
    the weights chart it was redrawn at every move).

    The accuracy axis is fitted to the dots (and says so in its title), not drawn from 0:
    a dot's position, not a length, carries its value, and from 0 vehicle's multi-class
    trees (0.55 to 0.75) were one flat line.  A dashed line marks the trees' mean, its value in the legend.

    Parameters
    ----------
    member_accuracy : array_like of shape (l,)
        Each member's validation accuracy.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    acc = np.asarray(member_accuracy, dtype=float)
    if acc.ndim != 1:
        raise ValueError(f"member_accuracy holds one accuracy per tree, not shape {acc.shape}")
    low, high = _strip_range(acc)
    traces = []
    if acc.size:  # the line under the dots
        mean = float(acc.mean())
        traces.append(dict(type="scatter", x=[-0.5, acc.size - 0.5], y=[mean, mean],
                           mode="lines", name=f"mean of the {acc.size} trees {mean:.3f}",
                           line=dict(color=COLORS["guide"], dash="dash", width=1.5),
                           hoverinfo="skip"))
    traces.append(dict(type="scatter", x=np.arange(acc.size), y=acc, mode="markers",
                   name="tree's validation accuracy", showlegend=True, legendrank=1,
                   marker=dict(color=COLORS["accuracy"], size=5),
                   hovertemplate="tree %{x}<br>accuracy %{y:.3f}<extra></extra>"))
    return go.Figure(data=traces, _validate=VALIDATE, layout=dict(
        height=STRIP_HEIGHT, margin=dict(_MARGIN, t=6, **TREE_AXIS_MARGIN), legend=_LEGEND,
        showlegend=True, xaxis=_tree_axis(acc.size, title=dict(text="tree index")),
        yaxis=dict(title=dict(text="tree's accuracy" + ("" if low == 0 else
                                                        "<br>(axis not from 0)")),
                   range=[low, high], showgrid=True, nticks=4, automargin=False)))


def _fitted_on_validation(name):
    """Whether method ``name``'s weights are fitted on the validation rows (the registry
    says; a name it does not know: only SDWEC's own variants)."""
    try:
        return methods.get(name).fits_validation
    except KeyError:
        return str(name).startswith("SDWEC")


def method_comparison(rows):
    """Test and validation accuracy of several methods on the same splits, as grouped bars.

    Bars start at 0, so a bar's height is its accuracy (an axis cut at the lowest value drew
    0.600 a quarter the height of 0.714).  Over several splits a bar is the mean, its error
    bar the 95 % interval of that mean (:mod:`sdwec.intervals`, never past [0, 1]) and dots
    on it every split's value; one split's bars carry the binomial interval over its rows
    when the rows give one.  Each method keeps its registry colour (:mod:`sdwec.methods`), as
    on every page: test bars solid, validation bars pale.

    Parameters
    ----------
    rows : sequence of dict
        Each with ``"method"`` (a registry id; other names take a colour no method has),
        ``"test"`` and ``"validation"`` accuracies (means over the splits), optionally
        ``"<split>_lo"``/``"<split>_hi"`` (the interval drawn as an error bar),
        ``"<split>_values"`` (per-split values, drawn as dots when there are several),
        ``"splits"``, ``"used"`` (members used) and ``"fitted_on_validation"`` (default:
        every method the registry says is fitted on them; their validation bars are
        hatched: in-sample); the order is kept.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    def label(name):
        try:
            return methods.get(name).label.replace(" (λ path)", "")
        except KeyError:
            return str(name)

    names = [label(r["method"]) for r in rows]
    colours = _method_colors([r["method"] for r in rows])
    used = [r.get("used", "") for r in rows]
    splits = rows[0].get("splits", 1) if rows else 1
    fitted = [r.get("fitted_on_validation", _fitted_on_validation(r["method"])) for r in rows]
    traces, dots, has_interval = [], [], False
    for split, opacity in (("test", 1.0), ("validation", 0.45)):
        values = np.array([r[split] for r in rows], dtype=float)
        lo = np.array([r.get(f"{split}_lo", np.nan) for r in rows], dtype=float)
        hi = np.array([r.get(f"{split}_hi", np.nan) for r in rows], dtype=float)
        has = ~(np.isnan(lo) | np.isnan(hi))
        shown = [mean_interval(v, a, b) if ok else significant(v, 4)
                 for v, a, b, ok in zip(values, lo, hi, has)]
        # Pale through the bar's fill only: a trace's opacity also paled the value printed
        # on it, which a projector then lost in the hatching.
        marker = dict(color=colours, opacity=opacity, line=dict(width=1, color="#444444"))
        notes = [""] * len(rows)
        if split == "validation":
            # In-sample: these methods' weights were fitted on the validation rows.
            # Over the bar's colour (the default replaces it, and on a white page the value
            # label turned white on white).
            marker["pattern"] = dict(shape=["/" if f else "" for f in fitted], solidity=0.25,
                                     fillmode="overlay", fgcolor="#333333")
            notes = ["<br>(fitted on these rows)" if f else "" for f in fitted]
        what = "95 % interval of the mean" if splits > 1 else "95 % binomial interval"
        trace = dict(type="bar", x=names, y=values, name=split, marker=marker,
                     offsetgroup=split, uid=split,
                     # At the bar's base, where the error bar's whisker never reaches.
                     text=[f"{v:.3f}" for v in values], textposition="inside",
                     insidetextanchor="start",
                     # Dark on the pale bars (Plotly's automatic contrast picks white from
                     # the full colour); its own contrast on the solid ones.
                     insidetextfont=dict(color="#111111") if opacity < 1 else None,
                     customdata=np.column_stack([used, shown, notes]),
                     hovertemplate="%{x}<br>" + split + " accuracy %{customdata[1]}"
                                   "%{customdata[2]}<br>"
                                   "members used %{customdata[0]}<extra>" + what
                                   + "</extra>")
        if has.any():
            trace["error_y"] = _asymmetric(values, lo, hi, color="#444444")
        traces.append(trace)
        has_interval = has_interval or has.any()
        if splits > 1:
            x, y = [], []
            for name, row in zip(names, rows):
                for value in row.get(f"{split}_values", []):
                    x.append(name)
                    y.append(value)
            if x:
                dots.append(dict(type="scatter", mode="markers", x=x, y=y, offsetgroup=split,
                                 name=f"{split}, per split", uid=f"{split}-splits",
                                 marker=dict(size=5, color="#222222", opacity=0.6,
                                             symbol="circle-open"),
                                 hovertemplate="%{x}: one split's " + split
                                               + " accuracy %{y:.3f}<extra></extra>"))
    # Short lines: the chart is half the page at 1280 px, and Plotly cuts a long title.
    if splits == 1:
        title = "Accuracy, one split"
        subtitle = "whisker: 95 % binomial interval<br>" if has_interval else ""
    else:
        title = f"Accuracy, mean of {splits} splits"
        subtitle = "whisker: 95 % interval of the mean; dots: splits<br>"
    subtitle += "test solid, validation pale"
    if any(fitted):
        subtitle += "; hatched: fit on validation"
    # From 0 to 1: every bar, interval and dot is an accuracy.
    return _figure(traces + dots, title + f"<br><sup>{subtitle}</sup>", "",
                   "accuracy", barmode="group", scattermode="group", showlegend=False,
                   yaxis=dict(range=[0.0, 1.0]), height=FIRST_ROW_HEIGHT)


#: Height of the Explorer's first row of charts (accuracy, costs): under the headline, the
#: whole first chart fits a 1280×720 screen.
FIRST_ROW_HEIGHT = 320


def prediction_time(timing):
    """Measured prediction time of the pruned ensemble against the full one, with spread.

    Bars are the median milliseconds of the timed runs; the error bars span their
    interquartile range.  An ensemble that keeps every tree is drawn as the same bar twice;
    one that keeps none is not drawn (it predicts a constant).

    Parameters
    ----------
    timing : sdwec.timing.PredictionTiming
        Result of :func:`sdwec.timing.measure`.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    runs = [np.asarray(timing.full_runs) * 1e3]
    labels = [f"full ({timing.n_full} trees)"]
    colours = [styles.style("bagging").color]
    if timing.status == "pruned":
        runs.append(np.asarray(timing.pruned_runs) * 1e3)
        labels.append(f"pruned ({timing.n_pruned} trees)")
        colours.append(styles.style("SDWEC").color)
    median = [float(np.median(r)) for r in runs]
    q1 = [float(np.percentile(r, 25)) for r in runs]
    q3 = [float(np.percentile(r, 75)) for r in runs]
    bar = dict(type="bar", x=median, y=labels, orientation="h", marker=dict(color=colours),
               error_x=dict(type="data", symmetric=False,
                            array=[h - m for h, m in zip(q3, median)],
                            arrayminus=[m - lo for m, lo in zip(median, q1)]),
               hovertemplate="%{y}: median %{x:.3g} ms<extra></extra>")
    # The values right of the upper quartile's whisker: inside a short bar they ran into it.
    values = dict(type="scatter", mode="text", x=q3, y=labels,
                  text=[f"  {significant(v)} ms" for v in median],
                  textposition="middle right", hoverinfo="skip", showlegend=False)
    # Two lines: on one, the title was cut at the chart's width in a 1280 px window.
    return _figure([bar, values], f"Prediction time, {timing.n_rows:,} rows<br><sup>median "
                                  f"and quartiles of {timing.repeats} runs</sup>",
                   "milliseconds", "", height=260, showlegend=False,
                   xaxis=dict(range=[0, 1.3 * max(q3)]))


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


#: Greek names of the parameters a sweep can vary, as the sidebar shows them.
GREEK = {"lam": "λ", "beta": "β", "gamma": "γ", "eps": "ε"}
X_AXES = {"trees": "trees used (log scale)", "sparsity": "sparsity (1 − used / l)"}


#: The methods the Frontier shows when it opens, besides SDWEC's sweep and its front: the
#: reference, the sanity baseline, the strongest pruning peer and, when added, SDWEC-OOB with
#: reduce-error on the same votes.  Every other method is one legend click away.
FRONTIER_CORE = ("bagging", "random", "reduce-error", "SDWEC-OOB", "reduce-error OOB")


def _interval(rows, column):
    """``(lo, hi)`` of ``column`` (its ``<column>_lo``/``_hi``: the interval of the mean over
    splits, clipped to what the column can be) when some of it is known, else None."""
    lo, hi = column + "_lo", column + "_hi"
    if lo not in rows or hi not in rows:
        return None
    low, high = rows[lo].to_numpy(dtype=float), rows[hi].to_numpy(dtype=float)
    if np.isnan(low).all() or np.isnan(high).all():
        return None
    return low, high


def _accuracy_text(rows, column):
    """Each row's accuracy as hover text: ``0.783 [0.741, 0.825]`` (the mean and its
    interval) over splits, else ``0.7830``."""
    values = rows[column].to_numpy(dtype=float)
    interval = _interval(rows, column)
    if interval is None:
        return [significant(v, 4) for v in values]
    return [mean_interval(v, lo, hi) for v, lo, hi in zip(values, *interval)]


def _trees_text(rows):
    """Each row's tree count as hover text: ``8.3 [5.1, 11.5] trees`` over splits."""
    values = rows["n_selected"].to_numpy(dtype=float)
    interval = _interval(rows, "n_selected")
    if interval is None:
        return [f"{significant(v)} trees" for v in values]
    return [f"{mean_interval(v, lo, hi, decimals=1)} trees" for v, lo, hi in
            zip(values, *interval)]


def _splits(rows):
    """``(k, r)`` per row: the splits where the setting keeps no tree, of how many."""
    n = len(rows)
    r = rows["splits"].to_numpy(dtype=int) if "splits" in rows else np.ones(n, dtype=int)
    if "abstaining_splits" in rows:
        k = rows["abstaining_splits"].to_numpy(dtype=int)
    elif "abstains" in rows:
        k = rows["abstains"].to_numpy(dtype=bool) * r
    elif "n_selected" in rows:
        k = (rows["n_selected"].to_numpy(dtype=float) == 0) * r
    else:
        k = np.zeros(n, dtype=int)
    return k, r


def _partly(rows):
    """Rows where some splits, not all, keep no tree: drawn hollow, never on the front."""
    k, r = _splits(rows)
    return (k > 0) & (k < r)


def _abstain_notes(rows):
    """Hover lines of the partly abstaining rows (``""`` for the others)."""
    k, r = _splits(rows)
    return [f"<br>{a} of {b} splits keep no tree (their constant guesses are in this mean)"
            if 0 < a < b else "" for a, b in zip(k, r)]


def _hollow_last(rows):
    """``rows`` with the partly abstaining ones last, in their order otherwise."""
    partly = _partly(rows)
    return rows if not partly.any() else rows.iloc[np.argsort(partly, kind="stable")]


def _hollow(symbol):
    """The open form of a marker symbol (an open one gains a dot: still told apart)."""
    return f"{symbol}-dot" if symbol.endswith("-open") else f"{symbol}-open"


def _markers(rows, symbol, line_width=1):
    """``symbol`` and line width per row: hollow (and a thicker line, which is then its only
    ink) where some splits keep no tree; plain scalars when none does."""
    partly = _partly(rows)
    if not partly.any():
        return symbol, line_width
    # Plotly's legend shows a trace's first marker: callers put the hollow ones last.
    return ([_hollow(symbol) if p else symbol for p in partly],
            [2 if p else line_width for p in partly])


def _band_name(rows, filled):
    """A band's legend entry: what it is (the filled one also names the dashed ones)."""
    level = f"{intervals.LEVEL:.0%}"
    _, r = _splits(rows)
    what = f"{level} interval of the mean" if len(r) and r.max() > 1 else \
        f"{level} interval (this split's rows)"
    return f"{what} (shaded; dashed on other curves)" if filled else what


def _uid(name):
    """A trace's uid from its name: Plotly builds CSS selectors from uids (a colour bar's
    ``.cb<uid>``), so only letters, digits, ``-`` and ``_`` (``"SDWEC (λ sweep)"`` broke the
    chart of a second sweep)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")


#: A second sweep's values: marker and interval dash of each (in its shade of SDWEC's blue).
_SWEEP_LOOKS = (("circle", "dash"), ("square", "dot"), ("diamond", "dashdot"))


def _band(rows, x, column, colour, group, visible, rank, filled=True, dash="dash"):
    """The interval of ``column`` (``<column>_lo`` to ``<column>_hi``) along a curve, or None.

    Where several rows share an x (SDWEC at several λ keeping as many trees), the band spans
    all of them.  One band per curve instead of an error bar per point: at ten splits the
    bars of every point of every curve made a wall.  ``filled``: a shaded band, with its own
    legend entry saying what it is and that the dashed lines are the same (listed right after
    its curve's, ``rank`` + 1): an unexplained shading read as a method of its own.  Else
    its outline as a thin dashed line, so that bands never overlap into one colour; those
    share their curve's legend entry (same group: one click shows or hides both) to keep the
    legend short enough for the chart to fit a projector's screen.  The interval is clipped
    to what the column can be when it is computed, so the band never leaves it.
    """
    interval = _interval(rows, column)
    if interval is None:
        return None
    spans = {}
    for at, low, high in zip(rows[x].to_numpy(dtype=float), *interval):
        if np.isnan(low) or np.isnan(high):
            continue
        old = spans.get(at, (low, high))
        spans[at] = (min(old[0], low), max(old[1], high))
    if not spans:
        return None
    xs = sorted(spans)
    upper, lower = [spans[v][1] for v in xs], [spans[v][0] for v in xs]
    trace = dict(type="scatter", mode="lines",
                 # Never a hover or click target: a click inside a band is for the points.
                 hoverinfo="skip", hoveron="points", legendgroup=group, legendrank=rank + 1,
                 visible=visible, name=f"{group}: {_band_name(rows, filled)}",
                 showlegend=filled, uid=_uid(f"band {group}"))
    if filled:
        return dict(trace, x=xs + xs[::-1], y=upper + lower[::-1], fill="toself",
                    fillcolor=_rgba(colour, 0.12), line=dict(width=0, color=colour))
    # Its outline, unfilled: one trace with no gap (a null y reads as 0 to code that sums up
    # what is drawn).
    return dict(trace, x=xs + xs[::-1], y=upper + lower[::-1],
                line=dict(width=1, color=_rgba(colour, 0.7), dash=dash))


def _rgba(colour, alpha):
    return "rgba({}, {}, {}, {})".format(*(int(colour[i:i + 2], 16) for i in (1, 3, 5)), alpha)


def _splits_title(sweep, peers):
    """Which splits the chart shows, for its title."""
    r = max([int(_splits(f)[1].max()) for f in (sweep, peers) if len(f)], default=1)
    if r > 1:
        return f"mean over {r} splits, {intervals.LEVEL:.0%} interval of the mean"
    return "one split"


def current_row(sweep, current):
    """The row of ``sweep`` at the setting ``current`` (λ, β, γ, ε), or None."""
    if current is None or sweep.empty or not {"lam", "beta", "gamma", "eps"} <= set(sweep):
        return None
    match = np.ones(len(sweep), dtype=bool)
    for name in ("lam", "beta", "gamma", "eps"):
        match &= np.isclose(sweep[name].to_numpy(float), float(current[name]), rtol=1e-9)
    return sweep[match].iloc[0] if match.any() else None


def _not_drawn(sweep, peers, label, accuracy):
    """Lines under the title: settings not drawn (every split keeps no tree) and those drawn
    hollow (some splits keep none), counted per method over SDWEC and every peer."""
    counted = [f for f in (sweep, peers) if len(f)]
    if not counted:
        return []
    k = np.concatenate([_splits(f)[0] for f in counted])
    r = np.concatenate([_splits(f)[1] for f in counted])
    # The sweep's rows are SDWEC's settings whatever the registry calls the method.
    names = np.concatenate([np.full(len(f), "SDWEC", dtype=object) if f is sweep
                            else _method_names(f) for f in counted])
    empty, some = (k == r) & (k > 0), (k > 0) & (k < r)
    lines = []
    if empty.any():
        where = "every split keeps" if r.max() > 1 else "the ensemble keeps"
        parts = []
        for name in dict.fromkeys(names[empty]):
            n = int((empty & (names == name)).sum())
            part = f"{n} {name} setting{'s' if n > 1 else ''}"
            if len(sweep) and "lam" in sweep and name == "SDWEC":
                k_sweep, r_sweep = _splits(sweep)
                rows = sweep[(k_sweep == r_sweep) & (k_sweep > 0)]
                part += (f" (λ ≤ {significant(rows['lam'].max())}: the most frequent class, "
                         f"{label} {rows[accuracy].iloc[0]:.3f})")
            parts.append(part)
        lines.append(f"Not drawn, {where} no tree: " + "; ".join(parts) + ".")
    if some.any():
        n = int(some.sum())
        lines.append(f"Hollow: {n} setting{'s' if n > 1 else ''} where some splits keep no "
                     "tree (never on the front).")
    return lines


def _method_names(frame):
    """Each row's method as the legend names it."""
    def name(method):
        try:
            return methods.get(str(method)).label
        except KeyError:
            return str(method)

    return np.array([name(m) for m in frame["method"]], dtype=object)


def frontier(sweep, front, peers, accuracy="test_accuracy", second=None, x="trees",
             front_on="val_accuracy", shown=FRONTIER_CORE, current=None):
    """Accuracy against ensemble size: an SDWEC sweep, its Pareto front and the peers.

    Settings where every split abstains (every weight zero, a constant guess of the most
    frequent class) are not drawn: they are not a point of the trade-off, and their accuracy
    would stretch the axis.  Settings where only some splits abstain are drawn hollow, with
    "k of r splits keep no tree" in their hover, and are never on the front (their mean
    mixes constant guesses into the accuracy and the tree count).  A line under the title
    counts both.  With rows averaged over several splits (:func:`sdwec.frontier.over_splits`)
    curves carry the interval of the mean (``<column>_lo``/``_hi``: only SDWEC's sweep as a
    shaded band, every other as dashed edges) and single ensembles an error bar of it.
    Plotly fits the y axis to what is shown, bands included, and never past 1
    (:data:`_ACCURACY_AXIS`).  The figure's ``uirevision`` is constant, so a legend choice
    (a method shown or hidden) survives a new figure drawn in the same chart.

    Parameters
    ----------
    sweep : pandas.DataFrame
        :func:`sdwec.frontier.sweep` output (one row per parameter point) or its
        :func:`sdwec.frontier.over_splits`; its ``select_*`` columns give the SDWEC-select
        trace (drawn when ``second`` is None).
    front : pandas.DataFrame
        :func:`sdwec.frontier.pareto` of ``sweep`` (chosen on whichever accuracy the caller
        decided; it is drawn at ``accuracy``).
    peers : pandas.DataFrame
        :func:`sdwec.frontier.peers` output or its :func:`sdwec.frontier.over_splits`.
    accuracy : {"test_accuracy", "val_accuracy"}, default="test_accuracy"
        The y axis.
    second : str or None, default=None
        Name of the second swept parameter; its values get one trace each.
    x : {"trees", "sparsity"}, default="trees"
        Trees used on a log axis (where SDWEC's sparse end is readable), or sparsity with the
        axis fitted to the points drawn.
    front_on : {"val_accuracy", "test_accuracy"}, default="val_accuracy"
        The accuracy ``front`` was chosen on. Drawn on that accuracy the front is a
        staircase; drawn on the other one it is only its points (ringed): the held-out check
        of a front chosen elsewhere need not be monotone.
    shown : collection of str, default=FRONTIER_CORE
        Methods visible when the figure opens; the others are ``visible="legendonly"``.
        SDWEC's sweep and front are always shown.
    current : dict, optional
        The sidebar's setting (``lam``, ``beta``, ``gamma``, ``eps``): its point of the
        sweep, if the sweep holds it, is marked "you are here" (the Explorer's setting), so
        a reader sees where the Explorer's numbers sit on the trade-off.

    Returns
    -------
    plotly.graph_objects.Figure
        SDWEC traces are named ``"SDWEC ..."`` and carry :data:`SWEEP_CUSTOMDATA`.
    """
    if accuracy not in ("test_accuracy", "val_accuracy"):
        raise ValueError(f"accuracy must be 'test_accuracy' or 'val_accuracy'; got {accuracy!r}")
    if x not in X_AXES:
        raise ValueError(f"x must be one of {', '.join(X_AXES)}; got {x!r}")
    # Drawn on trees used; the sparsity view is the same figure with every x turned into
    # 1 − x / l (sparsity_x), so that a page can switch between the two without the server.
    column = "n_selected"

    def drawn(rows):
        k, r = _splits(rows)
        return rows[~((k == r) & (k > 0))]

    def visible(name):
        return True if name in shown else "legendonly"

    def rank(name):
        # The legend lists SDWEC first, then what is shown, then what is one click away.
        return 200 if name in shown else 300

    bands, traces = [], []
    for method in methods.curves():
        rows = drawn(peers[peers["method"] == method.name]).sort_values(column)
        if rows.empty:
            continue
        look = styles.style(method.name)
        bands.append(_band(rows, column, accuracy, look.color, method.label,
                           visible(method.name), rank(method.name), filled=False))
        hover = dict(customdata=np.column_stack([rows["params"], _trees_text(rows),
                                                 _accuracy_text(rows, accuracy),
                                                 _abstain_notes(rows)]),
                     hovertemplate=method.label + " %{customdata[0]}<br>%{customdata[1]}<br>"
                                   "accuracy %{customdata[2]}%{customdata[3]}<extra></extra>")
        traces.append(dict(
            type="scatter", x=rows[column], y=rows[accuracy], mode="lines",
            name=method.label, legendgroup=method.label, visible=visible(method.name),
            legendrank=rank(method.name), uid=_uid(method.label),
            line=dict(width=1.5, color=look.color, dash=look.dash), **hover))
        partly = _partly(rows)
        if partly.any():
            # Hollow rings on the curve where some splits keep no tree; in the curve's
            # legend group (one click shows or hides both), with no entry of their own.
            ringed = rows[partly]
            traces.append(dict(
                type="scatter", x=ringed[column], y=ringed[accuracy], mode="markers",
                name=f"{method.label}: some splits keep no tree", legendgroup=method.label,
                showlegend=False, visible=visible(method.name), cliponaxis=False,
                uid=_uid(f"{method.label} hollow"),
                marker=dict(size=9, symbol="circle-open", color=look.color,
                            line=dict(width=2)),
                customdata=hover["customdata"][partly],
                hovertemplate=hover["hovertemplate"]))
    # Bagging, the reference, first and larger: an ensemble drawn at the same place (WMV
    # often ties it with every tree) then shows on top of it instead of hiding under it.
    for method in sorted(methods.points(), key=lambda m: m.name != "bagging"):
        rows = _hollow_last(drawn(peers[peers["method"] == method.name]))
        if rows.empty:
            continue
        look = styles.style(method.name)
        symbol, width = _markers(rows, look.symbol)
        traces.append(dict(
            type="scatter", x=rows[column], y=rows[accuracy], mode="markers",
            name=method.label, visible=visible(method.name), cliponaxis=False,
            legendrank=rank(method.name), uid=_uid(method.label),
            error_y=_error_bar(rows, accuracy, look.color),
            marker=dict(size=16 if method.name == "bagging" else 11, symbol=symbol,
                        color=look.color, line=dict(width=width, color="black")),
            customdata=np.column_stack([_trees_text(rows), _accuracy_text(rows, accuracy),
                                        _abstain_notes(rows)]),
            hovertemplate=method.label + "<br>%{customdata[0]}<br>"
                                         "accuracy %{customdata[1]}%{customdata[2]}"
                                         "<extra></extra>"))
    groups = [(None, sweep)] if second is None else list(sweep.groupby(second, sort=True))
    sdwec, select_style = styles.style("SDWEC"), styles.style("SDWEC-select")
    shades = styles.sweep_colors(len(groups))
    for i, (value, rows) in enumerate(groups):
        rows = _hollow_last(drawn(rows))
        name = "SDWEC (λ sweep)" if value is None else \
            f"SDWEC {GREEK.get(second, second)}={value:g}"
        colour = sdwec.color if value is None else shades[i]
        # A second sweep's values also differ in marker and dash, not only in shade: three
        # blues alone were hard to tell apart on a projector.
        look = (sdwec.symbol, "dash") if value is None else _SWEEP_LOOKS[i % len(_SWEEP_LOOKS)]
        # One filled band at most: SDWEC's own; a second sweep's bands are edges only.
        bands.append(_band(rows, column, accuracy, colour, name, True, 100,
                           filled=value is None, dash=look[1]))
        hover = [f"SDWEC λ={significant(r.lam, 4)} β={significant(r.beta, 4)} "
                 f"γ={significant(r.gamma, 4)} ε={significant(r.eps, 4)}<br>"
                 f"{n}<br>validation {v}, test {t}{note}"
                 for r, n, v, t, note in zip(rows.itertuples(), _trees_text(rows),
                                             _accuracy_text(rows, "val_accuracy"),
                                             _accuracy_text(rows, "test_accuracy"),
                                             _abstain_notes(rows))]
        symbol, width = _markers(rows, look[0])
        traces.append(dict(
            type="scatter", x=rows[column], y=rows[accuracy], mode="markers", name=name,
            legendgroup=name, cliponaxis=False, legendrank=100, uid=_uid(name),
            marker=dict(size=9, symbol=symbol, color=colour,
                        line=dict(width=width, color="white")),
            customdata=rows[list(SWEEP_CUSTOMDATA)].to_numpy(dtype=float),
            text=hover, hovertemplate="%{text}<extra></extra>"))
    select = "select_" + accuracy
    if second is None and select in sweep:
        rows = drawn(sweep).sort_values(column)
        bands.append(_band(rows, column, select, select_style.color, "SDWEC-select",
                           visible("SDWEC-select"), rank("SDWEC-select"), filled=False))
        rows = _hollow_last(rows)
        name = "SDWEC-select"
        symbol, width = _markers(rows, select_style.symbol)
        traces.append(dict(
            type="scatter", x=rows[column], y=rows[select], mode="markers", name=name,
            legendgroup=name, visible=visible(name), cliponaxis=False,
            legendrank=rank(name), uid=_uid(name),
            marker=dict(size=7, symbol=symbol, color=select_style.color,
                        line=dict(width=width)),
            customdata=np.column_stack([[significant(v, 4) for v in rows["lam"]],
                                        _trees_text(rows), _accuracy_text(rows, select),
                                        _abstain_notes(rows)]),
            hovertemplate="SDWEC-select (SDWEC's trees, equal votes) λ=%{customdata[0]}"
                          "<br>%{customdata[1]}<br>accuracy %{customdata[2]}%{customdata[3]}"
                          "<extra></extra>"))
    # Never on the front, even from a front chosen before the rule: a mean that mixes in
    # constant guesses is no point of the trade-off.
    front = drawn(front)
    front = front[~_partly(front)]
    chosen = "validation" if front_on == "val_accuracy" else "test"
    # Chosen on test, the legend says so on either axis: a front that flatters its settings
    # must not pass for the honest one.
    front_name = "SDWEC Pareto front" + ("" if front_on == accuracy == "val_accuracy"
                                         else f" (chosen on {chosen})")
    if not front.empty and front_on == accuracy:
        ordered = front.sort_values(column)
        # Between two front points the best accuracy at least this sparse is the next
        # point's, hence the staircase (its direction follows the x axis).  A front of one
        # point has no line to draw: it is a ring.
        single = len(ordered) == 1
        traces.append(dict(type="scatter", x=ordered[column], y=ordered[accuracy],
                           mode="markers" if single else "lines", name=front_name,
                           hoverinfo="skip", cliponaxis=False, legendrank=110,
                           uid=_uid("SDWEC Pareto front"),
                           marker=dict(symbol="circle-open", size=16, color=COLORS["pareto"],
                                       line=dict(width=2.5)),
                           line=dict(color=COLORS["pareto"], width=2.5, shape="hv")))
    elif not front.empty:
        traces.append(dict(type="scatter", x=front[column], y=front[accuracy],
                           mode="markers", name=front_name, uid=_uid("SDWEC Pareto front"),
                           hoverinfo="skip", cliponaxis=False, legendrank=110,
                           marker=dict(symbol="circle-open", size=16, color=COLORS["pareto"],
                                       line=dict(width=2.5))))
    here = current_row(drawn(sweep), current)
    # Always there (empty where the sweep lacks the setting), so a page can move it.
    traces.append(dict(
        type="scatter", x=[] if here is None else [float(here[column])],
        y=[] if here is None else [float(here[accuracy])], mode="markers",
        name="the sidebar's setting (the Explorer's)", uid=CROSS,
        cliponaxis=False, legendrank=105, hoverinfo="skip",
        # A black cross over the point: the front's near-black, in a shape no method has.
        marker=dict(symbol="x-thin-open", size=22, color=COLORS["pareto"],
                    line=dict(width=3, color=COLORS["pareto"]))))
    label = "test accuracy" if accuracy == "test_accuracy" else "validation accuracy"
    title = f"Accuracy vs ensemble size ({label}; {_splits_title(sweep, peers)})"
    for line in _not_drawn(sweep, peers, label, accuracy):
        title += f"<br><sup>{line}</sup>"
    bands = [b for b in bands if b is not None]
    if x == "sparsity":
        l = pool_size(sweep, peers)
        for trace in bands + traces:
            trace["x"] = sparsity_x(trace["x"], l)
    xaxis = dict(type="log", tickvals=_TREE_TICKS, **_trees_axis_start(traces)) \
        if x == "trees" else dict(fitted_range(traces))
    fig = _figure(bands + traces, title, X_AXES[x], label,
                  height=FRONTIER_HEIGHT, clickmode="event+select", xaxis=xaxis,
                  yaxis=_ACCURACY_AXIS, uirevision=FRONTIER_REVISION)
    # Extra room above the title: the toolbar (top right) sat on a long title's end.
    fig.layout.title.pad.t += _TOOLBAR_ROOM
    fig.layout.margin.t += _TOOLBAR_ROOM
    return fig


#: The uid of the cross at the sidebar's setting (:func:`frontier`).
CROSS = "sidebar-setting"


def sparsity_x(x, l):
    """Trees used ``x`` as sparsity, ``1 − x / l`` (what ``dashboard/live.js`` computes)."""
    return 1.0 - np.asarray(x, dtype=float) / l


def pool_size(*frames):
    """``l``, from a row that keeps some trees and not all: ``n_selected / (1 − sparsity)``."""
    for frame in frames:
        rows = frame[(frame["sparsity"] < 1) & (frame["n_selected"] > 0)]
        if len(rows):
            row = rows.iloc[0]
            return int(round(row["n_selected"] / (1.0 - row["sparsity"])))
    raise ValueError("no row keeps a tree: l is unknown")


#: The trees-used axis's labels.  Below 1: a hollow point's mean counts its empty splits as 0
#: trees (1 of 3 splits with 2 trees: 0.67), and without labels there it sat left of the axis's
#: first one.  Plotly draws only the labels inside the range it fits to the points.
_TREE_TICKS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]
#: Pixels the Frontier's title and plot sit lower than other figures', clear of the toolbar.
_TOOLBAR_ROOM = 24
#: The Frontier's height: with its legend, under the page's title and one row of controls
#: in a 1280 × 720 window.
FRONTIER_HEIGHT = 500
#: The Frontier's ``uirevision``: the same for every figure it draws, so Plotly keeps the
#: reader's legend choices (and zoom) when a control draws a new figure in the chart.
FRONTIER_REVISION = "frontier"


#: The Frontier's y axis: fitted by Plotly to the traces shown, their error bars and bands
#: (again when a legend click shows or hides one), and clipped to [0, 1]: a spread never
#: draws the axis past 1, and a method shown from the legend is never off the axis.
_ACCURACY_AXIS = dict(autorange=True, autorangeoptions=dict(clipmin=0.0, clipmax=1.0))


def _error_bar(rows, column, colour):
    """``error_y`` from the mean to ``<column>_lo`` and ``<column>_hi`` (the interval of the
    mean, inside what the column can be by construction), or None."""
    interval = _interval(rows, column)
    if interval is None:
        return None
    # A row without an interval (one split among several) gets no bar, not a NaN one.
    return _asymmetric(rows[column], *interval, thickness=1, width=3, color=colour)


def _trees_axis_start(traces):
    """The trees axis's range (log10 units): from the label at or below its smallest point,
    so that a mean of 0.8 trees is read against a "0.5", not left of the first "1", to its
    largest point, over every trace (those shown from the legend too).  Set whole: Plotly.js
    3.8 drops a range fixed at one end (``autorange="max"``) when a template styles the axis.
    """
    xs = [v for t in traces for v in np.asarray(t["x"], dtype=float) if v > 0]
    if not xs:
        return {}
    start = max([t for t in _TREE_TICKS if t <= min(xs)], default=_TREE_TICKS[0])
    return {"range": [float(np.log10(start)) - _LOG_PAD, float(np.log10(max(xs))) + _LOG_PAD]}


#: Room beyond the trees axis's end points (decades): about a marker's width.
_LOG_PAD = 0.05


def fitted_range(traces):
    """An x range around the points of ``traces`` (sparsity lives mostly in [0.8, 1])."""
    xs = [v for t in traces for v in np.asarray(t["x"], dtype=float)]
    if not xs:
        return {}
    low, high = min(xs), max(xs)
    pad = 0.03 * max(high - low, 0.01)
    return {"range": [low - pad, high + pad]}


# --------------------------------------------------------------------------- paper


def _method_colors(names):
    """Each method's colour (a row name such as ``"random @B"`` takes its method's); names
    outside the registry take shades that are no method's or role's colour."""
    colours, unknown = [], []
    for name in names:
        try:
            colours.append(styles.style(str(name)).color)
        except KeyError:
            colours.append(None)
            unknown.append(name)
    others = iter(styles.role_shades("guide", len(unknown)) if unknown else [])
    return [c if c is not None else next(others) for c in colours]


def paper_comparison(table):
    """Reproduced against published test accuracy, one point per (dataset, method).

    Parameters
    ----------
    table : pandas.DataFrame
        Columns ``dataset``, ``method``, ``paper`` and ``ours`` (accuracies), optionally
        ``ours_lo`` and ``ours_hi`` (the 95 % interval of our mean, drawn as vertical error
        bars; none where NaN), ``repeats`` and the verdict of
        :func:`sdwec.experiments.paper_agreement` (``agreement``, ``tolerance``) for the
        hover.

    Returns
    -------
    plotly.graph_objects.Figure
        Each method in its registry colour and under its registry label, as on every page.
        The bars are our mean's uncertainty only: agreement with the paper is judged on the
        difference of two means (``tolerance``), which is wider.
    """
    groups = list(table.groupby("method", sort=False))
    colours = _method_colors([method for method, _ in groups])
    traces = []
    for (method, rows), colour in zip(groups, colours):
        try:
            label = methods.get(str(method)).label
        except KeyError:
            label = str(method)
        lines = [_paper_hover(row) for row in rows.to_dict("records")]
        trace = dict(type="scatter", x=rows["paper"], y=rows["ours"], mode="markers",
                     name=label, marker=dict(size=10, color=colour),
                     customdata=np.column_stack([rows["dataset"].to_numpy(dtype=object),
                                                 np.asarray(lines, dtype=object)]),
                     hovertemplate=label + " on %{customdata[0]}<br>paper %{x:.3f}<br>"
                                           "%{customdata[1]}<extra></extra>")
        if {"ours_lo", "ours_hi"} <= set(rows):
            # Asymmetric: the interval is clipped at 1, so a bar never passes a perfect score.
            trace["error_y"] = _asymmetric(rows["ours"], rows["ours_lo"], rows["ours_hi"],
                                           color=colour, thickness=1.5, width=3)
        traces.append(trace)
    values = table[["paper", "ours"]].to_numpy(dtype=float)
    finite = values[np.isfinite(values)]
    low = float(finite.min()) - 0.02 if finite.size else 0.5
    traces.append(dict(type="scatter", x=[low, 1.0], y=[low, 1.0], mode="lines",
                       name="agreement", line=dict(color=COLORS["guide"], dash="dash"),
                       hoverinfo="skip"))
    repeats = (sorted({int(r) for r in table["repeats"]}) if "repeats" in table
               else [])
    over = ("" if not repeats else f" (mean of {repeats[0]} splits each)" if len(repeats) == 1
            else f" (mean of {repeats[0]}–{repeats[-1]} splits each)")
    return _figure(traces, "Test accuracy: this reproduction vs the paper's Table 3" + over,
                   "paper", "this reproduction (mean over our repeats)")


def _paper_hover(row):
    """The hover's lines about our value: the mean, its interval over the repeats, and the
    verdict against the paper when the row has one."""
    def missing(value):
        return value is None or (isinstance(value, float) and np.isnan(value))

    repeats = row.get("repeats")
    count = None if missing(repeats) else int(repeats)
    over = "" if count is None else f" over {count} repeat{'s' if count != 1 else ''}"
    lo, hi = row.get("ours_lo"), row.get("ours_hi")
    if missing(lo) or missing(hi):
        text = f"ours {row['ours']:.3f} (mean{over}"
        text += "; one repeat gives no interval)" if count == 1 else ")"
    else:
        text = (f"ours {row['ours']:.3f}, 95% interval of our mean{over}: "
                f"[{lo:.3f}, {hi:.3f}]")
    verdict = row.get("agreement")
    if verdict in ("agrees", "off"):
        gap = abs(row["ours"] - row["paper"])
        text += (f"<br>gap {gap:.3f}, allowed {row['tolerance']:.3f} (95% interval of the "
                 f"difference of two means): {verdict}")
    elif isinstance(verdict, str) and not missing(row.get("paper")):
        text += f"<br>not judged: {verdict}"
    return text


def log_ticks(low, high):
    """Tick values for a log axis over ``[low, high]`` (> 0): at least two labelled ticks.

    Over more than three decades the powers of ten; otherwise the 1-2-5 steps of each
    decade.  Two ticks always bracket the data, so a range inside one decade (0.011 to
    0.014 s, say) still gets a label below and above it.

    Parameters
    ----------
    low, high : float
        The smallest and largest value drawn (``0 < low <= high``).

    Returns
    -------
    list of float
        Increasing tick values; the first is <= ``low``, the last >= ``high``.
    """
    if not (np.isfinite(low) and np.isfinite(high) and 0 < low <= high):
        raise ValueError(f"need 0 < low <= high; got {low!r}, {high!r}")
    first, last = int(np.floor(np.log10(low))), int(np.ceil(np.log10(high)))
    steps = (1,) if last - first > 3 else (1, 2, 5)
    # Parsed from text, so a tick is 0.2, not 2 * 0.1 = 0.20000000000000001.
    candidates = [float(f"{m}e{e}") for e in range(first, last + 1) for m in steps]
    below = max(v for v in candidates if v <= low * (1 + 1e-12))
    above = min(v for v in candidates if v >= high * (1 - 1e-12))
    ticks = [v for v in candidates if below <= v <= above]
    if len(ticks) == 1:  # low == high on a tick: one step either side
        i = candidates.index(ticks[0])
        ticks = candidates[max(i - 1, 0):i + 2]
    return ticks


def training_time(table):
    """Weight-finding time against the number of classifiers l, one line per dataset.

    Parameters
    ----------
    table : pandas.DataFrame
        Columns ``dataset``, ``m``, ``l``, ``seconds`` and optionally ``seconds_min``,
        ``seconds_max`` and ``runs`` (the spread of the timed runs, drawn as error bars from
        the fastest to the slowest) and ``paper_seconds``.

    Returns
    -------
    plotly.graph_objects.Figure
        Measured times (the runs' median) as solid lines, the paper's (when given) dashed,
        log-scaled, with tick
        labels from :func:`log_ticks`.  Datasets take shades of SDWEC's blue (these are all
        SDWEC's times), never another method's colour, and a marker symbol each.
    """
    groups = list(table.groupby("dataset", sort=False))
    shades = styles.sweep_colors(len(groups) + 1)[1:]  # the palest is faint as a line
    traces = []
    for i, ((name, rows), colour) in enumerate(zip(groups, shades)):
        rows = rows.sort_values("l")
        symbol = _DATASET_SYMBOLS[i % len(_DATASET_SYMBOLS)]
        m = int(rows["m"].iloc[0])
        trace = dict(type="scatter", x=rows["l"], y=rows["seconds"], mode="lines+markers",
                     name=f"{name} (m={m}) measured", line=dict(color=colour),
                     marker=dict(symbol=symbol, size=8),
                     customdata=[significant(v) for v in rows["seconds"]],
                     hovertemplate=f"{name}<br>l=%{{x}}<br>%{{customdata}} s"
                                   "<extra></extra>")
        if {"seconds_min", "seconds_max"} <= set(rows):
            seconds = rows["seconds"].to_numpy(dtype=float)
            fastest = rows["seconds_min"].to_numpy(dtype=float)
            slowest = rows["seconds_max"].to_numpy(dtype=float)
            runs = rows["runs"] if "runs" in rows else [None] * len(rows)
            trace["error_y"] = _asymmetric(seconds, fastest, slowest, color=colour,
                                           thickness=1.5, width=3)
            trace["customdata"] = [
                f"median {significant(v)} s{'' if n is None else f' of {int(n)} runs'} "
                f"(fastest {significant(a)}, slowest {significant(b)})"
                for v, a, b, n in zip(seconds, fastest, slowest, runs)]
            trace["hovertemplate"] = f"{name}<br>l=%{{x}}<br>%{{customdata}}<extra></extra>"
        traces.append(trace)
        if "paper_seconds" in rows and rows["paper_seconds"].notna().any():
            traces.append(dict(type="scatter", x=rows["l"], y=rows["paper_seconds"],
                               mode="lines+markers", name=f"{name} paper",
                               line=dict(color=colour, dash="dash"),
                               marker=dict(symbol=symbol + "-open", size=8),
                               customdata=[significant(v) for v in rows["paper_seconds"]],
                               hovertemplate=f"{name}<br>l=%{{x}}<br>paper %{{customdata}} s"
                                             "<extra></extra>"))
    values = [v for t in traces for v in np.asarray(t["y"], dtype=float)]
    for column in ("seconds_min", "seconds_max"):  # the error bars' ends are drawn too
        if column in table:
            values += list(table[column].to_numpy(dtype=float))
    values = [v for v in values if np.isfinite(v) and v > 0]
    yaxis = dict(type="log")
    if values:
        ticks = log_ticks(min(values), max(values))
        yaxis.update(tickvals=ticks, ticktext=[significant(v) for v in ticks],
                     range=[np.log10(ticks[0]), np.log10(ticks[-1])])
    return _figure(traces, "SDWEC weight-finding time (k = 25)", "classifiers l",
                   "seconds (log scale)", yaxis=yaxis)


#: One marker symbol per dataset line (each has an ``-open`` variant for the paper's times).
_DATASET_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "triangle-down", "star",
                    "hexagon", "pentagon", "cross", "x", "hourglass")
