"""Every use of Plotly's internals, in one module: a figure's JSON without ``to_dict``'s copies.

``fig.to_dict()`` deep-copies the figure and plotly.py's whole default template (~10 kB) that
the in-place charts throw away (``dashboard.charts``); reading the figure's own properties in
place (``fig._layout``, ``fig._data``, each frame's ``_props``) and packing numpy arrays as
``to_dict`` packs them (``_plotly_utils``' typed-array helpers) took the three charts of a
slider move from ~2.5 ms of its run to ~0.7.

Plotly is pinned to the minor version this was tested on (requirements.txt).  At import,
:func:`problem` checks the contract (the fast JSON of a probe figure equals the public
path's); where it does not hold, :func:`figure_json` takes the public path
(``fig.to_dict()``) and one log line says so.  ``tests/test_streamlit_compat.py`` checks the
same contract, also against the newest Plotly in CI.
"""

from __future__ import annotations

import base64
import json
import logging

import numpy as np
import plotly.graph_objects as go
from plotly.utils import PlotlyJSONEncoder

LOG = logging.getLogger("dashboard")

#: Typed arrays of plotly.js by numpy dtype; 64-bit integers are narrowed as plotly.py does.
_TYPED = {"int8": "i1", "uint8": "u1", "int16": "i2", "uint16": "u2", "int32": "i4",
          "uint32": "u4", "float32": "f4", "float64": "f8"}
_NARROWER = {"int64": ("int8", "int16", "int32"), "uint64": ("uint8", "uint16", "uint32")}


def _typed_array(array, to_typed_array_spec):
    """A 1-D numeric array as plotly.py's ``to_typed_array_spec`` gives it, without its
    copies and dataframe checks (most of a figure's serialization); anything else through
    it."""
    name = str(array.dtype)
    if array.ndim != 1 or not array.size or not array.dtype.isnative or (
            name not in _TYPED and name not in _NARROWER):
        return to_typed_array_spec(array)
    if name in _NARROWER:
        low, high = array.min(), array.max()
        name = next((n for n in _NARROWER[name]
                     if np.iinfo(n).min <= low and high <= np.iinfo(n).max), None)
        if name is None:
            return array
    return {"dtype": _TYPED[name],
            "bdata": base64.b64encode(np.ascontiguousarray(array, dtype=name)).decode("ascii")}


def _packed(value):
    """``value`` with its numpy arrays packed as plotly.py's ``to_dict`` packs them (base64
    typed arrays), built anew rather than copied and changed in place."""
    from _plotly_utils.utils import is_homogeneous_array, is_skipped_key, to_typed_array_spec

    def pack(item):
        if isinstance(item, dict):
            return {key: part if is_skipped_key(key)
                    else array(part) if is_homogeneous_array(part) else pack(part)
                    for key, part in item.items()}
        if isinstance(item, (list, tuple)):
            return [pack(part) for part in item]
        return item

    def array(item):
        return (_typed_array(item, to_typed_array_spec) if isinstance(item, np.ndarray)
                else to_typed_array_spec(item))

    return pack(value)


def _fast_dict(fig, template):
    layout = {key: template if key == "template" else _packed(value)
              for key, value in fig._layout.items()}
    layout.setdefault("template", template)
    spec = {"data": [_packed(trace) for trace in fig._data], "layout": layout}
    frames = [_packed(frame._props) for frame in fig._frame_objs]
    if frames:
        spec["frames"] = frames
    return spec


def _public_dict(fig, template):
    spec = fig.to_dict()
    spec["layout"]["template"] = template
    return spec


def _json(spec):
    return json.dumps(spec, cls=PlotlyJSONEncoder, separators=(",", ":"))


def _probe():
    """A figure with what the charts carry: typed arrays, narrowed integers, NaN, a uid,
    a template and frames."""
    y = np.array([0.5, np.nan, 0.25])
    return go.Figure([go.Bar(x=np.array([1, 2, 3]), y=y, uid="a"),
                      go.Scatter(x=[1, 2], y=np.array([3, 2**40]), name="s")],
                     layout={"title": "t", "height": 300, "xaxis": {"range": [0, 4]}},
                     frames=[go.Frame(data=[go.Bar(y=y * 2)], name="f")])


def problem():
    """What breaks the contract (the fast JSON of a probe figure differs from the public
    path's, or reading it raises), or ``None`` when it holds."""
    template = {"layout": {"font": {"size": 12}}}
    try:
        fast = _json(_fast_dict(_probe(), template))
    except Exception as exc:  # an internal moved
        return f"{type(exc).__name__}: {exc}"
    public = _json(_public_dict(_probe(), template))
    return None if fast == public else "the figure read in place differs from fig.to_dict()"


_PROBLEM = problem()
if _PROBLEM:
    LOG.warning("charts serialize through fig.to_dict() (slower): %s", _PROBLEM)


def figure_json(fig, template):
    """``fig`` as JSON with ``template`` for plotly.py's template: what ``fig.to_dict()``
    gives, read in place (the public path where the contract does not hold).  A trace's
    ``uid`` is kept (``plotly.io.to_json`` drops it)."""
    build = _public_dict if _PROBLEM else _fast_dict
    return _json(build(fig, template))
