"""Which Plotly.js the charts load: the basic bundle shipped in ``dashboard/vendor/``, or the
plotly package's full one.

The charts (:mod:`dashboard.charts`) draw scatter and bar traces only.  Plotly.js's basic
bundle (scatter, bar, pie, and every layout component: legends, shapes, annotations,
sliders, frames) is a quarter of the full bundle's size, and a new visitor's browser
evaluates it in about a quarter of the time (0.33 s against 1.28 s in Chromium on this
project's 2-core machine; results/serve.md).  The plotly package ships only the full one.

The basic bundle is used only while its version is the full bundle's, the Plotly.js version
plotly.py writes figures for; otherwise the full bundle is loaded, and the log says why once.
Found without importing plotly or Streamlit: nginx's configuration is rendered from it too.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
from pathlib import Path

from dashboard import _compat as compat

#: The shipped basic bundle (dashboard/vendor/README.md says where it comes from).
BASIC = Path(__file__).resolve().parent / "vendor" / "plotly-basic.min.js"
#: The trace types the basic bundle draws.
BASIC_TRACES = frozenset({"scatter", "bar", "pie"})


@dataclasses.dataclass(frozen=True)
class Bundle:
    """A Plotly.js file the charts can load.

    ``token`` names it in the charts' URL (``?v=``), so a browser's cached copy of another
    bundle or version is never used; ``traces`` is the set of trace types it draws, or
    ``None`` for all of them.
    """

    path: Path
    token: str
    traces: frozenset | None


def banner_version(path):
    """The Plotly.js version a built bundle's opening comment names
    (``dashboard._compat.PLOTLY_JS_BANNER``), or ``None``."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            head = handle.read(200)
    except OSError:
        return None
    match = compat.PLOTLY_JS_BANNER.search(head)
    return match[1] if match else None


@functools.cache
def chosen():
    """The bundle the charts load, or ``None`` where the plotly package has no Plotly.js
    (``dashboard._compat``, contract ``plotly_js``; logged there)."""
    full = compat.plotly_js_file()
    if full is None:
        return None
    try:
        package = importlib.metadata.version("plotly")
    except importlib.metadata.PackageNotFoundError:
        package = "unknown"
    wanted, basic = banner_version(full), banner_version(BASIC)
    if wanted is not None and basic == wanted:
        return Bundle(BASIC, f"{package}-basic", BASIC_TRACES)
    compat.log_once("plotly_bundle", f"the charts load the full Plotly.js ({full}): the basic "
                    f"bundle in {BASIC.parent} is {basic or 'missing'}, the plotly package's "
                    f"is {wanted}")
    return Bundle(Path(full), package, None)


def trace_types(fig):
    """The trace types ``fig`` and its frames draw."""
    traces = list(fig.data) + [t for frame in (fig.frames or ()) for t in frame.data]
    return {t.type for t in traces}


def check_drawable(fig, bundle):
    """Raise ``ValueError`` naming what to change when ``bundle`` cannot draw ``fig``."""
    if bundle is None or bundle.traces is None:
        return
    missing = trace_types(fig) - bundle.traces
    if missing:
        raise ValueError(f"this figure draws {', '.join(sorted(missing))}, which Plotly.js's "
                         f"basic bundle ({BASIC}) lacks: draw it with st.plotly_chart, or add "
                         f"the trace module to the bundle dashboard.plotly_bundle chooses")
