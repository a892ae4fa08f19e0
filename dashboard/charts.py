"""Plotly charts that redraw in place: the Explorer's per-move charts, the Frontier and the
figures of How it works.

``st.plotly_chart`` gives a chart an element id derived from its figure, so every slider
move that changes a figure unmounts the old chart and mounts a new one: Plotly builds it
from scratch, and Streamlit's wrapper then draws it a second time when it re-applies its
theme.  benchmarks/browser.py measured that double draw as about half of the browser's
time per move (results/browser.md).  This module draws a figure with a small
``st.components.v2`` component instead: its element keeps its key across reruns, so the
same chart div receives the new figure and Plotly's ``react`` updates it in one pass.

Plotly.js is not reachable from Streamlit's own bundle (it is private to a chunk), so the
component loads its own: Plotly.js's basic bundle, shipped in ``dashboard/vendor/``, or the
plotly package's full one (:mod:`dashboard.plotly_bundle` chooses), served by Streamlit's
static file serving (``server.enableStaticServing`` in ``.streamlit/config.toml``) from
``static/``, where :func:`ensure_plotly_js` copies it (the copy is git-ignored).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import streamlit as st

from dashboard import _compat as compat
from dashboard import live, plotly_bundle

#: Streamlit serves ``<app directory>/static`` at ``app/static/``.
STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
PLOTLY_JS = compat.PLOTLY_JS
#: The Plotly.js the charts load (``None``: the plotly package ships none).
BUNDLE = plotly_bundle.chosen()
#: Relative to the page, so it also works under a proxy's base path; the bundle's token
#: busts the browser's cache when the plotly package or the bundle changes.
PLOTLY_URL = f"./app/static/{PLOTLY_JS}?v={BUNDLE.token if BUNDLE else 'none'}"
#: Plotly's height when a figure sets none (Streamlit's default for st.plotly_chart).
DEFAULT_HEIGHT = 450
#: Replaces plotly.py's default template (~5 kB per figure): Plotly.js's own defaults,
#: with Streamlit's font so the charts match the page and the other pages' charts, and
#: axes that make room for their tick labels and titles (the figures' margins are small
#: and count on it, as plotly.py's template and Streamlit's theme both do).
TEMPLATE = {"layout": {"font": {"family": '"Source Sans", "Source Sans Pro", sans-serif',
                                "color": "#31333f"},
                       "hoverlabel": {"font": {"family": '"Source Sans", sans-serif'}},
                       "xaxis": {"automargin": True}, "yaxis": {"automargin": True}}}
# showTips: Plotly's "double-click on legend to isolate one trace" notice stayed on screen
# over the page after a legend click.  doubleClick and resetScale2d: Plotly resets the axes
# to the ranges of the first figure drawn in the div, not of the figure on screen (a chart
# updated in place keeps them), so the component resets them itself (_JS: ``home``).
# autoScale2d: Plotly's autorange ignores the ranges the figures set on purpose (accuracy
# above 1, the scrubber's edge bars cut in half); the reset shows the figure's own.
# sendChartToCloud (Plotly.js 4's "Share chart..."): it would upload the chart, and the
# data of an uploaded file behind it, to Plotly's cloud; with no server set it does nothing.
CONFIG = {"displaylogo": False, "responsive": False, "showTips": False, "doubleClick": False,
          "modeBarButtonsToRemove": ["lasso2d", "select2d", "sendDataToCloud",
                                     "sendChartToCloud", "resetScale2d", "autoScale2d"]}

#: The component's name, by which the tests and the benchmarks find these charts; its code
#: is :mod:`dashboard.live`'s, so that charts and the parts that follow the sliders share one
#: runtime in the page.
COMPONENT = "sdwec_plotly"
_component = st.components.v2.component(COMPONENT, js=live.JS, css=live.CSS,
                                         isolate_styles=False)


def ensure_plotly_js(static_dir=STATIC_DIR):
    """Copy the chosen Plotly.js (:data:`BUNDLE`) into ``static_dir`` as ``plotly.min.js``
    unless it is there.

    Returns the path, or ``None`` when the directory cannot be written (a read-only
    install) or the plotly package ships no Plotly.js (``dashboard._compat``, contract
    ``plotly_js``); the charts then say that they could not load Plotly.
    """
    if BUNDLE is None:
        return None
    source, target = Path(BUNDLE.path), Path(static_dir) / PLOTLY_JS
    try:
        if target.exists() and target.stat().st_size == source.stat().st_size:
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        # Written aside and renamed, so a concurrent request never reads half a file.
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".plotly-", suffix=".js")
        os.close(fd)
        shutil.copyfile(source, tmp)
        os.replace(tmp, target)
        return target
    except OSError:
        return None


def figure_spec(fig):
    """``fig`` as the component's JSON, with :data:`TEMPLATE` for plotly.py's template: what
    ``plotly.io.to_json(fig)`` gives, template aside, without its copies
    (``dashboard._compat``).  A trace's uid is kept where a figure sets one: with a
    fixed ``uirevision`` Plotly then keeps what the reader did to that trace (shown or hidden
    in the legend) across redraws that add or remove other traces."""
    return compat.figure_json(fig, TEMPLATE)


def plotly_chart(fig, key, on_click=None, view=None, link=None, live=None, views=None,
                 switches=None):
    """Draw ``fig`` under ``key``; on a rerun the same chart is updated in place.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
    key : str
    on_click : callable, optional
        Called (as a widget callback, before the rerun) when a point is clicked; it reads
        the click with :func:`clicked_point`.
    view : str, optional
        Where given and ``fig`` sets no ``uirevision``: the reader's legend choices are kept
        across the figures drawn under ``key`` with the same ``view`` (Plotly's
        ``uirevision``: traces matched by uid, else by position), and reset when it changes.
        A zoom is not kept (each axis gets a revision of its own per figure): a new figure's
        data may lie outside it.
    link : str, optional
        Charts drawn with the same ``link`` on a page share their x axis: a zoom, pan or
        reset of one is applied to the others, and so is a new figure's x range.
    live : dict, optional
        :func:`dashboard.explorer_answer.live_of`: ``fig`` is one figure of an answer, and
        the chart follows the sidebar's sliders in the browser with the other settings'
        answers (:mod:`dashboard.live`).
    views, switches : dict, list, optional
        The Frontier's views of ``fig`` and the buttons that choose them in the page
        (:func:`dashboard.frontier_view.views`).
    """
    plotly_bundle.check_drawable(fig, BUNDLE)
    ensure_plotly_js()
    height = fig.layout.height or DEFAULT_HEIGHT
    spec = figure_spec(fig)
    data = {"spec": spec, "height": height, "config": CONFIG, "src": PLOTLY_URL,
            "click": on_click is not None, "view": view, "link": link}
    if live is not None:
        data["live"] = {k: v for k, v in live.items() if k != "parts"}
        data["live"]["still"] = still_part(json.loads(spec), live["parts"])
    if views is not None:
        # The figure but its cross: after a λ release the server's figure differs from the
        # page's only by where the cross is, which the page already shows (no redraw).
        still = json.loads(spec)
        still["data"] = [t for t in still["data"] if t.get("uid") != views["cross"]]
        data.update(views=dict(views, hash=_digest(still)), switches=switches)
    callbacks = {} if on_click is None else {"on_click_change": on_click}
    _component(key=key, data=data, height=height, **callbacks)


def live_part(spec, parts):
    """The parts of figure ``spec`` (a dict of the chart's JSON) that change with a page's
    setting (``parts``: ``{"traces": uids, "layout": keys}``), with a hash of them:
    ``{"traces": {uid: trace}, "layout": {key: value}, "hash": str}``; a layout key the
    figure lacks is ``None`` (removed where it is applied)."""
    part = {"traces": {t["uid"]: t for t in spec["data"] if t.get("uid") in parts["traces"]},
            "layout": {k: spec["layout"].get(k) for k in parts["layout"]}}
    part["hash"] = _digest(part)
    return part


def still_part(spec, parts):
    """A hash of what does not change with the setting in figure ``spec``: a figure whose
    still part and live part hash as another's is that figure."""
    rest = {"data": [t if t.get("uid") not in parts["traces"] else t.get("uid")
                     for t in spec["data"]],
            "layout": {k: v for k, v in spec["layout"].items() if k not in parts["layout"]}}
    return _digest(rest)


def with_part(spec, part):
    """``spec`` with another setting's changing ``part`` (:func:`live_part`): what the browser
    draws (``dashboard/live.js``, ``withPart``)."""
    data = [part["traces"].get(t.get("uid"), t) for t in spec["data"]]
    layout = {**spec["layout"], **part["layout"]}
    return {**spec, "data": data,
            "layout": {k: v for k, v in layout.items() if part["layout"].get(k, v) is not None}}


def numbers(values):
    """A figure's array as numbers: Plotly's JSON carries numpy arrays as base64
    (``{"dtype", "bdata"}``)."""
    if isinstance(values, dict) and "bdata" in values:
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"])
    return np.asarray(values, dtype=float)


def attribute_diff(first, second):
    """What turns figure ``first`` into ``second`` (dicts of the chart's JSON with the same
    traces by uid): per trace the attributes that differ, and the layout keys that do; an
    attribute or key only ``first`` has is ``None`` (removed)."""
    if [t.get("uid") for t in first["data"]] != [t.get("uid") for t in second["data"]]:
        raise ValueError("the two figures must have the same traces (by uid), in order")

    def changed(a, b):
        return {k: b.get(k) for k in set(a) | set(b) if a.get(k) != b.get(k)}

    traces = {a["uid"]: changed(a, b) for a, b in zip(first["data"], second["data"])}
    return {"traces": {uid: attrs for uid, attrs in traces.items() if attrs},
            "layout": changed(first["layout"], second["layout"])}


def with_attributes(spec, diff):
    """``spec`` changed by ``diff`` (:func:`attribute_diff`): what ``dashboard/live.js``
    draws (``withAttributes``)."""
    def apply(old, new):
        out = {**old, **new}
        return {k: v for k, v in out.items() if not (k in new and v is None)}

    data = [apply(t, diff["traces"].get(t.get("uid"), {})) for t in spec["data"]]
    return {**spec, "data": data, "layout": apply(spec["layout"], diff["layout"])}


def _digest(value):
    return hashlib.blake2b(json.dumps(value, sort_keys=True).encode(), digest_size=8).hexdigest()


def clicked_point(key):
    """The point last clicked on the chart under ``key``: ``{"customdata": ..., "trace":
    name}``, or ``None``."""
    state = st.session_state.get(key)
    if state is None:
        return None
    click = state.get("click") if isinstance(state, dict) else getattr(state, "click", None)
    return click if isinstance(click, dict) else None
