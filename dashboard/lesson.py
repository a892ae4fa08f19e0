"""A view: the lesson, for a projector.

On one 1280 × 720 screen: the solver's four sliders on top (λ the widest), the headline
that follows them in the browser (the Explorer's answers, :mod:`dashboard.explorer_answer`),
and one row of small multiples per parameter β, γ, ε: for a few values of it, the trees
kept and the test accuracy against every λ of the sidebar's grid, each row with one measured
sentence.  While λ is dragged a line marks it in every panel and the sentences say what the
panels show there; the rows' own values are fixed, the others are the sidebar's.
"""

from __future__ import annotations

import html
from dataclasses import replace

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from dashboard import charts, explorer_answer, explorer_cache, live, page_pools
from dashboard.config import LAMBDA_GRID
from dashboard.explorer import INTERVAL_HELP
from sdwec import comparison, styles
from sdwec.formatting import mean_interval, significant

#: The values of each row's panels (the other two of β, γ, ε are the sidebar's): where the
#: measured effects turn (sdwec.teaching.EFFECTS): β = 0 keeps the most trees; γ = 1 against
#: 5 and above; ε across two decades.
PANELS = {"beta": (0.0, 15.0, 50.0), "gamma": (1.0, 5.0, 30.0), "eps": (0.1, 1.0, 5.0)}
GREEK = {"lam": "λ", "beta": "β", "gamma": "γ", "eps": "ε"}
PANEL_HEIGHT = 126
#: What of a row's figure moves while λ is dragged: the line at λ.
LINE = {"traces": (), "layout": ("shapes",)}
#: The page's own type sizes and spacing: large enough to read from the back of a room, tight
#: enough that everything fits one 1280 × 720 screen.
CSS = """<style>
.stMainBlockContainer { padding-top: 3.9rem; padding-bottom: 0; }
.stMainBlockContainer [data-testid="stVerticalBlock"] { gap: 0.35rem; }
.st-key-lesson_head .sdwec-value { font-size: 1.45rem; line-height: 1.25; }
.st-key-lesson_head .sdwec-label { font-size: 1rem; }
.st-key-lesson_head .sdwec-delta, .st-key-lesson_head .sdwec-vs { font-size: 0.95rem; }
[class*="st-key-lesson_says_"] .sdwec-text { font-size: 1rem; line-height: 1.3; }
/* A slot always there, one line high: an abstention appearing while a slider moves does not
   push the panels down (and off the screen). */
.st-key-lesson_abstain { min-height: 1.9rem; }
.st-key-lesson_abstain .sdwec-text { padding: 0.2rem 0.8rem; font-size: 0.95rem; }
</style>"""


def lambda_key(config, lam):
    """The setting key of ``config`` with λ = ``lam`` (what the sliders show)."""
    return explorer_answer.setting_key(lam, config.beta, config.gamma, config.eps)


def _panel_paths(refs, config):
    """Every row's λ paths: ``{param: [(value, LambdaPaths), ...]}``."""
    return {param: [(v, explorer_cache.lambda_paths(refs, replace(config, **{param: v})))
                    for v in values] for param, values in PANELS.items()}


def _row_figure(param, rows, lam):
    """One row of panels: for each value of ``param``, the mean share of trees kept and the
    mean test accuracy (with its interval) against λ, bagging's accuracy dashed, and a line
    at the sidebar's λ."""
    colours = {"kept": styles.style("SDWEC").color, "test": styles.ROLE_COLORS["approx"]}
    traces, layout = [], {}
    n = len(rows)
    for i, (value, paths) in enumerate(rows):
        axis = "" if i == 0 else str(i + 1)
        x, y = f"x{axis}", f"y{axis}"
        lams, l = paths.lams, paths.n_trees
        kept = paths.n_selected / l
        hover = [f"λ = {lam_:g}<br>trees kept {mean_interval(n_, lo, hi, 1)} / {l}"
                 + (f" ({k} of {paths.splits} splits keep none)" if k else "")
                 + f"<br>test {mean_interval(t, tlo, thi)}"
                 for lam_, n_, lo, hi, k, t, tlo, thi in zip(
                     lams, paths.n_selected, paths.n_selected_lo, paths.n_selected_hi,
                     paths.abstaining_splits, paths.test, paths.test_lo, paths.test_hi)]
        first = i == 0
        traces += [
            dict(type="scatter", x=np.r_[lams, lams[::-1]],
                 y=np.r_[paths.test_hi, paths.test_lo[::-1]], xaxis=x, yaxis=y,
                 fill="toself", fillcolor="rgba(0, 104, 55, 0.15)", line=dict(width=0),
                 hoverinfo="skip", showlegend=False, uid=f"band{i}"),
            dict(type="scatter", x=lams, y=paths.test, xaxis=x, yaxis=y, mode="lines",
                 name="test accuracy (band: 95 % interval)", legendgroup="test",
                 showlegend=first, line=dict(color=colours["test"], width=2.5),
                 text=hover, hovertemplate="%{text}<extra></extra>", uid=f"test{i}"),
            dict(type="scatter", x=lams, y=kept, xaxis=x, yaxis=y, mode="lines+markers",
                 name=f"share of the {l} trees kept", legendgroup="kept", showlegend=first,
                 line=dict(color=colours["kept"], width=2.5), marker=dict(size=4),
                 text=hover, hovertemplate="%{text}<extra></extra>", uid=f"kept{i}"),
            dict(type="scatter", x=[lams[0], lams[-1]], y=[paths.bagging["test"]] * 2,
                 xaxis=x, yaxis=y, mode="lines", name="bagging's test accuracy",
                 legendgroup="bagging", showlegend=first, hoverinfo="skip",
                 line=dict(color=styles.style("bagging").color, dash="dash", width=1.5),
                 uid=f"bagging{i}"),
        ]
        gap = 0.04
        domain = [i / n + (gap if i else 0), (i + 1) / n - (gap if i < n - 1 else 0)]
        layout[f"xaxis{axis}"] = dict(type="log", domain=domain, anchor=y,
                                      tickvals=[1e-3, 1e-1, 10, 1e3],
                                      ticktext=["0.001", "0.1", "10", "1000"],
                                      tickfont=dict(size=13))
        layout[f"yaxis{axis}"] = dict(range=[0, 1.02], anchor=x, tickvals=[0, 0.5, 1],
                                      tickfont=dict(size=13), showticklabels=first)
        layout.setdefault("annotations", []).append(dict(
            text=f"{GREEK[param]} = {value:g}", xref=f"{x} domain", yref=f"{y} domain",
            x=0.02, y=1.0, xanchor="left", yanchor="bottom", showarrow=False,
            font=dict(size=15)))
    layout["shapes"] = _lam_lines(lam, n)
    layout.update(height=PANEL_HEIGHT, margin=dict(l=36, r=8, t=22, b=22), showlegend=False,
                  hovermode="closest")
    return go.Figure(data=traces, layout=layout)


def _lam_lines(lam, n):
    """A line at ``lam`` in each of ``n`` panels (what moves while λ is dragged)."""
    return [dict(type="line", xref="x" if i == 0 else f"x{i + 1}",
                 yref="y domain" if i == 0 else f"y{i + 1} domain", x0=lam, x1=lam, y0=0,
                 y1=1, line=dict(color="#111111", width=2)) for i in range(n)]


def _legend():
    """The panels' key, once for all rows (the panels have no room for a legend)."""
    kept, test = styles.style("SDWEC").color, styles.ROLE_COLORS["approx"]
    bag = styles.style("bagging").color
    return (f"<span style='color:{kept}'>━</span> share of the trees kept  "
            f"<span style='color:{test}'>━</span> test accuracy (shaded: 95 % interval)  "
            f"<span style='color:{bag}'>╌</span> bagging's test accuracy  "
            "<span>┃</span> the sidebar's λ")


def _sentence(param, rows, at, splits):
    """What a row shows at λ index ``at``: the trees kept and the test accuracy at each value
    of ``param``, and which way the trees go as it rises (Markdown)."""
    name = GREEK[param]
    parts, kept = [], []
    for i, (value, paths) in enumerate(rows):
        n, acc, k = paths.n_selected[at], paths.test[at], paths.abstaining_splits[at]
        kept.append(n)
        none = ("" if not k else ", none kept" if k == splits else
                f", none on {k} of {splits} splits")
        parts.append(f"{name} = {value:g} {'keeps ' if i == 0 else ''}**{significant(n, 3)}**"
                     f"{' trees' if i == 0 else ''} (test {acc:.3f}{none})")
    lam = rows[0][1].lams[at]
    return (f"At λ = {lam:g} ({f'mean of {splits} splits' if splits > 1 else 'one split'}): "
            + ", ".join(parts) + f". Raising {name} here keeps {_way(kept)}.")


def _way(kept):
    """Which way the trees kept go along ``kept`` (one count per rising value)."""
    step = np.sign(np.round(np.diff(kept), 6))
    if not step.any():
        return "as many trees"
    if (step >= 0).all():
        return "more trees"
    if (step <= 0).all():
        return "fewer trees"
    return "fewer trees, then more" if step[step != 0][0] < 0 else "more trees, then fewer"


def _rows(results):
    """What the numbers rest on: the splits and their test rows."""
    n = sum(r.n_test for r in results)
    return (f"one split of {n:,} test rows" if len(results) == 1
            else f"{len(results)} splits, {n:,} test rows in all")


def show_lesson(config):
    """Draw the lesson for ``config``."""
    st.html(CSS)
    refs = page_pools.pool_refs(config)
    results = explorer_cache.compare_splits(refs, config)
    answer = explorer_cache.answer(refs, config, results)
    family, files = explorer_cache.ahead_files(refs, config)
    summary = comparison.over_splits(results)
    method = results[0].methods[0]["method"]
    st.html(f"<div style='font-size:0.95rem'><b>{html.escape(refs[0].label)}</b>, "
            f"{_rows(results)}, l = {len(results[0].solution.weights)} trees. Drag a "
            "slider: the numbers, the sentences and the line at λ follow.</div>")
    with st.container(key="lesson_head"):
        live.headline(family, answer, [
            ("test", f"Test accuracy ({method})", INTERVAL_HELP),
            ("used", "Trees kept", None),
            ("validation", "Validation accuracy", "The weights are fitted on these rows."),
            ("sparsity", "Sparsity", "1 − (trees kept) / l.")], files,
            fine=explorer_answer.fine(summary[0]))
    with st.container(key="lesson_abstain"):
        live.text("lesson_abstain_text", family, answer, "abstain", style="warning")
    paths = _panel_paths(refs, config)
    splits = len(refs)
    keys = {lambda_key(config, lam): i for i, lam in enumerate(LAMBDA_GRID)}
    released = lambda_key(config, config.lam)
    st.html(f"<div style='font-size:0.95rem'>{_legend()}</div>")
    for param, rows in paths.items():
        fig = _row_figure(param, rows, config.lam)
        # The line at λ is the one part that changes while λ is dragged.
        variants = {key: charts.live_part({"data": [], "layout": {
            "shapes": _lam_lines(LAMBDA_GRID[i], len(rows))}}, LINE) for key, i in keys.items()}
        left, right = st.columns([3.3, 1], vertical_alignment="center")
        with left:
            charts.plotly_chart(fig, key=f"lesson_{param}", view=f"{config.dataset} {param}",
                                live={"family": family, "released": released, "name": param,
                                      "hash": variants[released]["hash"],
                                      "variants": variants, "parts": LINE})
        with right:
            sentences = {key: explorer_answer.html_of(_sentence(param, rows, i, splits))
                         for key, i in keys.items()}
            live.says(f"lesson_says_{param}", family, released, sentences)
