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

import os
import shutil
import tempfile
from pathlib import Path

import streamlit as st

from dashboard import _compat as compat
from dashboard import plotly_bundle

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
CONFIG = {"displaylogo": False, "responsive": True, "showTips": False, "doubleClick": False,
          "modeBarButtonsToRemove": ["lasso2d", "select2d", "sendDataToCloud",
                                     "sendChartToCloud", "resetScale2d", "autoScale2d"]}

# Draws are chained per chart and only the newest figure is drawn, so a burst of moves
# never draws a stale figure last.  Errors are shown in the chart's place, not thrown.
_JS = """
const load = (src) => {
  window.__sdwecPlotly = window.__sdwecPlotly || new Promise((resolve, reject) => {
    if (window.Plotly) return resolve(window.Plotly);
    const script = document.createElement('script');
    script.src = src;
    script.onload = () => resolve(window.Plotly);
    script.onerror = () => {
      window.__sdwecPlotly = null;
      reject(new Error('could not load ' + src));
    };
    document.head.appendChild(script);
  });
  return window.__sdwecPlotly;
};
// Charts of one link (the weights chart and the tree-accuracy strip under it: the same trees)
// share their x axis: a zoom, pan or reset of one is applied to the others.  A chart being
// set this way does not pass it on (no echo back and forth).
const linkX = (source, range) => {
  if (!source.__sdwecLink || source.__sdwecFollowing) return;
  for (const gd of document.querySelectorAll('div.sdwec-chart')) {
    if (gd === source || gd.__sdwecLink !== source.__sdwecLink || !gd.layout) continue;
    const now = gd.layout.xaxis && gd.layout.xaxis.range;
    if (now && +now[0] === +range[0] && +now[1] === +range[1]) continue;
    gd.__sdwecFollowing = true;
    window.Plotly.relayout(gd, {'xaxis.range': [+range[0], +range[1]]})
      .finally(() => { gd.__sdwecFollowing = false; });
  }
};
export default function ({ data, parentElement, setTriggerValue }) {
  let gd = parentElement.querySelector('div.sdwec-chart');
  if (!gd) {
    gd = document.createElement('div');
    gd.className = 'sdwec-chart';
    gd.style.width = '100%';
    parentElement.appendChild(gd);
  }
  gd.style.minHeight = data.height + 'px';
  gd.__sdwecLatest = data.spec;
  const queue = gd.__sdwecQueue || Promise.resolve();
  gd.__sdwecQueue = queue.then(() => load(data.src)).then((Plotly) => {
    if (gd.__sdwecLatest !== data.spec || gd.__sdwecDrawn === data.spec) return;
    const figure = JSON.parse(data.spec);
    // One view (a dataset, an axis scale): Plotly keeps the reader's legend choices across
    // its figures, matching traces by uid, else by position (the names carry counts that
    // change with λ). Not the zoom: a new figure's curves may lie outside the old one.
    if (data.view != null && figure.layout.uirevision === undefined) {
      const draw = gd.__sdwecDraws = (gd.__sdwecDraws || 0) + 1;
      figure.layout.uirevision = data.view;
      const axes = Object.keys(figure.layout).filter((k) => /^[xy]axis[0-9]*$/.test(k));
      for (const axis of new Set(['xaxis', 'yaxis', ...axes])) {
        figure.layout[axis] = Object.assign({}, figure.layout[axis], {uirevision: draw});
      }
    }
    figure.layout.height = data.height;
    delete figure.layout.width;
    figure.layout.autosize = true;
    gd.__sdwecDrawn = data.spec;
    // A double-click or the reset button brings back the axes of the figure on screen: its
    // own ranges (copied: Plotly keeps the reader's zoom in the layout object it is given),
    // or autorange where it sets none.
    gd.__sdwecRanges = {};
    for (const [axis, value] of Object.entries(figure.layout)) {
      if (/^[xy]axis[0-9]*$/.test(axis) && value && value.autorange !== true &&
          Array.isArray(value.range)) gd.__sdwecRanges[axis] = value.range.slice();
    }
    if (!gd.__sdwecConfig) {
      gd.__sdwecHome = () => {
        const update = {};
        for (const axis of Object.keys(gd.layout).filter((k) => /^[xy]axis[0-9]*$/.test(k))) {
          const range = gd.__sdwecRanges[axis];
          if (range) update[axis + '.range'] = range.slice();
          else update[axis + '.autorange'] = true;
        }
        return Plotly.relayout(gd, update);
      };
      // Made once per div: a config that changes makes Plotly.react draw the chart anew.
      gd.__sdwecConfig = Object.assign({}, data.config, {modeBarButtonsToAdd: [
        {name: 'resetAxes', title: 'Reset axes', icon: Plotly.Icons.home,
         click: gd.__sdwecHome}]});
    }
    gd.__sdwecLink = data.link;
    return Plotly.react(gd, {data: figure.data, layout: figure.layout, frames: figure.frames,
                             config: gd.__sdwecConfig}).then(() => {
      if (!gd.__sdwecDoubleClicks) {
        gd.__sdwecDoubleClicks = true;
        gd.on('plotly_doubleclick', gd.__sdwecHome);
        gd.on('plotly_relayout', (event) => {
          const range = event && (event['xaxis.range'] ||
            ('xaxis.range[0]' in event ? [event['xaxis.range[0]'], event['xaxis.range[1]']]
                                       : null));
          if (range) linkX(gd, range);
        });
      }
      // A new figure's x axis (its zoom gone) is the linked charts' too.
      if (gd.layout.xaxis && Array.isArray(gd.layout.xaxis.range)) linkX(gd, gd.layout.xaxis.range);
      // A click on a point is sent to the server as a trigger (once per chart div).
      if (data.click && !gd.__sdwecClicks) {
        gd.__sdwecClicks = true;
        gd.on('plotly_click', (event) => {
          const point = event && event.points && event.points[0];
          if (point) setTriggerValue('click', {customdata: point.customdata ?? null,
                                               trace: point.data.name ?? null});
        });
      }
    });
  }).catch((err) => {
    gd.textContent = 'This chart could not be drawn (' + err.message + '). Reload the page.';
  });
}
"""

# Layout containment: Plotly measures text while it draws, which forces a layout; contained,
# that layout stays inside the chart instead of walking the whole page.
_CSS = ".sdwec-chart { contain: layout paint; }"

#: The component's name, by which the tests and the benchmarks find these charts.
COMPONENT = "sdwec_plotly"
_component = st.components.v2.component(COMPONENT, js=_JS, css=_CSS, isolate_styles=False)


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


def plotly_chart(fig, key, on_click=None, view=None, link=None):
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
    """
    plotly_bundle.check_drawable(fig, BUNDLE)
    ensure_plotly_js()
    height = fig.layout.height or DEFAULT_HEIGHT
    data = {"spec": figure_spec(fig), "height": height, "config": CONFIG, "src": PLOTLY_URL,
            "click": on_click is not None, "view": view, "link": link}
    callbacks = {} if on_click is None else {"on_click_change": on_click}
    _component(key=key, data=data, height=height, **callbacks)


def clicked_point(key):
    """The point last clicked on the chart under ``key``: ``{"customdata": ..., "trace":
    name}``, or ``None``."""
    state = st.session_state.get(key)
    if state is None:
        return None
    click = state.get("click") if isinstance(state, dict) else getattr(state, "click", None)
    return click if isinstance(click, dict) else None
