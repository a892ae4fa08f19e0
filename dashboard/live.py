"""The parts of a page that follow the sidebar's sliders in the browser.

A Streamlit slider sends its value only when it is released; while it is dragged (mouse,
touch or keys) the browser alone knows where it is.  The elements drawn here read the
sliders' values as they move (``dashboard/live.js``: the values Streamlit prints on the
sliders) and redraw from answers computed ahead for the settings around the page's own
(:mod:`dashboard.ahead`, :mod:`dashboard.explorer_answer`): the headline, the sentences
that go with it and, through :func:`dashboard.charts.plotly_chart`'s ``live``, the charts.
No message reaches the server while a slider moves; on release Streamlit reruns the page as
always, and an element whose new data is what it already shows is not drawn again.

Where the answer for the sliders' setting is not computed yet, the page says so and dims
what it cannot update; the parts of the page that the browser does not redraw (the pin,
prediction time, downloads) are dimmed while the sliders show another setting than the
server's: they sit in containers keyed ``released_...`` (:func:`released`).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

#: The component's source and style, shared with the charts' component (one runtime per
#: page).
JS = (Path(__file__).with_name("live.js")).read_text(encoding="utf-8")

CSS = """
/* The first column holds the comparison with bagging under its value: wider, so that one
   split's "+5 of 12,597 test rows (+0.04 points)" stays on one line at 1280 px. */
.sdwec-headline .sdwec-metrics { display: grid; gap: 0.8rem;
  grid-template-columns: minmax(0, 1.55fr) repeat(3, minmax(0, 1fr)); }
.sdwec-headline .sdwec-label { font-size: 0.875rem; color: rgb(49, 51, 63);
  display: flex; gap: 0.3rem; align-items: center; min-height: 1.5rem; }
.sdwec-headline .sdwec-help { display: inline-flex; width: 1rem; height: 1rem;
  border-radius: 50%; border: 1.5px solid rgba(49, 51, 63, 0.6); color: rgba(49, 51, 63, 0.6);
  font-size: 0.7rem; align-items: center; justify-content: center; cursor: help; }
.sdwec-headline .sdwec-value { font-size: 1.3rem; line-height: 1.6; color: rgb(49, 51, 63); }
.sdwec-headline.sdwec-fine .sdwec-value { font-size: 1.1rem; }
.sdwec-headline .sdwec-delta { display: inline-block; font-size: 0.8rem; white-space: nowrap;
  border-radius: 0.5rem; padding: 0.05rem 0.45rem; margin-top: 0.1rem; }
.sdwec-headline .sdwec-vs { font-size: 0.8rem; color: rgba(49, 51, 63, 0.6); }
.sdwec-headline .sdwec-green { color: rgb(21, 130, 55); background: rgba(33, 195, 84, 0.1); }
.sdwec-headline .sdwec-red { color: rgb(189, 64, 67); background: rgba(255, 43, 43, 0.09); }
.sdwec-headline .sdwec-gray { color: rgba(49, 51, 63, 0.75); background: rgba(49, 51, 63, 0.06); }
/* Over the other three numbers (stale while it shows), not under them: the page below does
   not move when it comes and goes. */
.sdwec-headline { position: relative; }
.sdwec-headline .sdwec-missing-note { position: absolute; right: 0; top: 0; width: 70%;
  z-index: 2; padding: 0.35rem 0.7rem; border-radius: 0.5rem; font-size: 0.9rem;
  background: rgb(255, 249, 212); color: rgb(146, 108, 5);
  box-shadow: 0 1px 4px rgba(0, 0, 0, 0.15); }
.sdwec-text { font-size: 1rem; line-height: 1.6; color: rgb(49, 51, 63); }
.sdwec-text.sdwec-caption { font-size: 0.875rem; color: rgba(49, 51, 63, 0.6); }
.sdwec-text.sdwec-warning { padding: 0.75rem 1rem; border-radius: 0.5rem;
  background: rgba(255, 227, 18, 0.1); color: rgb(146, 108, 5); }
.sdwec-text code { font-size: 0.85em; background: rgba(49, 51, 63, 0.06);
  border-radius: 0.25rem; padding: 0.1em 0.25em; }
.sdwec-chart { contain: layout paint; }
body.sdwec-ahead [class*="st-key-released_"] { opacity: 0.3; transition: opacity 0.1s; }
.sdwec-waiting { opacity: 0.3; }
/* In the room the chart leaves above its title for Plotly's toolbar (at the right). */
.sdwec-switches { position: absolute; top: 0; left: 0; z-index: 3; display: flex; gap: 1.5rem;
  font-size: 0.875rem; color: rgb(49, 51, 63); }
.sdwec-switch { display: inline-flex; align-items: center; }
.sdwec-switch-label { margin-right: 0.5rem; }
.sdwec-switch button { font: inherit; color: inherit; background: #ffffff; cursor: pointer;
  border: 1px solid rgba(49, 51, 63, 0.25); padding: 0.15rem 0.7rem; margin-left: -1px; }
.sdwec-switch button:first-of-type { border-radius: 0.5rem 0 0 0.5rem; }
.sdwec-switch button:last-of-type { border-radius: 0 0.5rem 0.5rem 0; }
.sdwec-switch button[aria-pressed="true"] { background: rgba(255, 75, 75, 0.12);
  border-color: rgb(255, 75, 75); position: relative; }
"""

COMPONENT = "sdwec_live"
_component = st.components.v2.component(COMPONENT, js=JS, css=CSS, isolate_styles=False)


def _live(family, released, name=None):
    return {"family": family, "released": released, "name": name}


def ahead(family, released, files, key="live_ahead"):
    """Hand the page the files of answers computed ahead (``files``: ``[{"url", "done"}]``
    in the order the server computes them) for configuration ``family`` at the setting
    ``released`` (the one the server draws), on a page without a :func:`headline`."""
    _component(key=key, data={"kind": "ahead", "live": _live(family, released),
                              "files": files})


def headline(family, answer, labels, files=(), fine=False, key="live_headline"):
    """The headline: ``labels`` (``[(name, label, help), ...]`` for ``test``,
    ``validation``, ``sparsity``, ``used``) with ``answer``'s values (its ``headline``),
    the comparison with bagging under the first; ``files`` as in :func:`ahead`."""
    _component(key=key, data={"kind": "headline", "live": _live(family, answer["key"]),
                              "labels": [list(label) for label in labels],
                              "values": answer["headline"], "fine": fine,
                              "files": list(files)})


def text(key, family, answer, name, style="body"):
    """``answer``'s sentence ``name`` (its ``text[name]``, HTML) shown as ``style``
    (``body``, ``caption`` or ``warning``; hidden while empty), following the sliders."""
    _component(key=key, data={"kind": "text", "html": answer["text"][name], "style": style,
                              "live": _live(family, answer["key"], name)})


def says(key, family, released, variants, style="body"):
    """A sentence per setting (``variants``: ``{setting key: HTML}``, the page's own setting
    ``released`` among them) that follows the sliders; where they show a setting it lacks,
    it is dimmed until the server draws that setting."""
    _component(key=key, data={"kind": "text", "html": variants[released], "style": style,
                              "live": {"family": family, "released": released,
                                       "variants": variants}})


def released(key):
    """A container for what the browser does not redraw while the sliders move: dimmed
    while they show another setting than the server's (its key starts ``released_``)."""
    return st.container(key=f"released_{key}")
