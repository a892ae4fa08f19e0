"""How the figures draw each method and each role: colours, marker symbols and dashes.

The registry (:mod:`sdwec.methods`) says what a method *is*; this module says how
:mod:`sdwec.plots` draws it.  It imports no plotting library, so the colour rules hold and are
tested without the dashboard extra.

* :data:`STYLES`: the shipped methods' styles, by name, every colour distinct.
* :func:`style`: a method's style, by name or by reproduction row name (``"random @B"``).  A
  method registered without a style gets an automatic one: the colour farthest (CIELAB) from
  every other method's, role's and SDWEC sweep shade, and a marker no shipped method uses, so
  a new method shows on the Frontier with no line of this module.
* :func:`set_style`: a registered method's own colour, marker and dash, chosen at run time;
  the colour must be no other method's and no role's.
* :data:`ROLE_COLORS` and :func:`role_shades`: what is drawn that is not a method.
* :func:`sweep_colors`: SDWEC swept over a second parameter takes shades of SDWEC's blue, so
  a sweep never borrows another method's colour.
"""

from __future__ import annotations

import functools
import re
import weakref
from dataclasses import dataclass

import numpy as np

from sdwec import methods

__all__ = ["Style", "STYLES", "ROLE_COLORS", "AUTOMATIC_SYMBOLS", "style", "set_style",
           "sweep_colors", "role_shades"]


@dataclass(frozen=True)
class Style:
    """How a method is drawn: one colour, one marker symbol (points), one dash (curves).

    Attributes
    ----------
    color : str
        Hex colour ``"#rrggbb"``.
    symbol : str, default="circle"
        Plotly marker symbol.
    dash : str, default="solid"
        Plotly line dash.
    """

    color: str
    symbol: str = "circle"
    dash: str = "solid"


STYLES = {
    # The paper's Table 3.  SDWEC-A (dark teal) and SDWEC-B (periwinkle) sit in different
    # hue families: navy beside periwinkle read as one colour.
    "QFWEC": Style("#e377c2", symbol="triangle-up"),
    "SDWEC-A": Style("#006666", symbol="star"),
    "SDWEC-B": Style("#6b6ecf", symbol="star-diamond"),
    "WMV": Style("#2ca02c", symbol="diamond"),
    "bagging": Style("#7f7f7f", symbol="square"),
    "single": Style("#8c564b", symbol="x"),
    # SDWEC beyond the two presets.
    "SDWEC": Style("#1f77b4", symbol="circle"),
    "SDWEC-select": Style("#17becf", symbol="circle-open"),
    "SDWEC-B select": Style("#5ab4ac", symbol="star-open"),
    # Pruning and stacking peers.
    "reduce-error": Style("#ff7f0e", symbol="triangle-down"),
    "orientation": Style("#9467bd", symbol="triangle-left"),
    "random": Style("#555500", symbol="circle-dot", dash="dot"),
    "lasso": Style("#b8860b", symbol="hexagon"),
    "NNLS": Style("#bcbd22", symbol="cross"),
    # Out-of-bag SDWEC and its peers: reds and pinks.
    "SDWEC-OOB": Style("#e41a1c", symbol="star-triangle-up"),
    "SDWEC-OOB weighted": Style("#fb9a99", symbol="star-triangle-up-open"),
    "SDWEC-val K": Style("#b15928", symbol="diamond-open"),
    "SDWEC-stable": Style("#7b4173", symbol="star-square"),
    "SDWEC-OOB path": Style("#a50f15", symbol="triangle-up"),
    "reduce-error OOB": Style("#fdae6b", symbol="triangle-down-open", dash="dash"),
}
"""The shipped methods' styles (:data:`sdwec.methods.BUILTIN`), by name."""

ROLE_COLORS = {
    "exact": "#404040",      # the function being approximated; the non-convex cost (eq. 4)
    "approx": "#006837",     # its relaxation or model; the convex-relaxed cost (eq. 10)
    "threshold": "#8a2be2",  # line 15's weight threshold
    "what": "#99aa66",       # ŵ, the expansion point of the How-it-works models
    "pareto": "#111111",     # SDWEC's Pareto front
    "rise": "#ffd700",       # iterations where the non-convex cost rose
    "accuracy": "#4b0082",   # each tree's own validation accuracy (indigo: not WMV's green)
    "dropped": "#d9d9d9",    # trees the ensemble does not use
    "guide": "#b0b0b0",      # reference lines (agreement diagonal, the level P = 1e-3)
}
"""One colour per role that is not a method, none of them a method's colour.

Picked away from every method's colour (and the sweep shades) in CIELAB, so a role never
reads as a method: a dashed line in reduce-error's orange looked like reduce-error.  No role
is pink, red or magenta: QFWEC and the SDWEC-OOB family own those hues, and a magenta Pareto
front and deep-pink cost rises read as QFWEC on a projector.  The roles are greys, near-black
(the front), gold (the rises), a dark green, a sage, a violet and an indigo.  The trees'
accuracies sit under the Explorer's accuracy chart: they are indigo, far from every method
drawn there (a green read as WMV's).
"""

AUTOMATIC_SYMBOLS = ("pentagon", "hexagram", "bowtie", "hourglass", "triangle-right",
                     "octagon", "star-triangle-down", "diamond-wide", "square-x", "circle-x")
"""Markers of methods registered without a style, in turn: none is a shipped method's."""

# Shades of SDWEC's blue, light to dark, for SDWEC swept over a second parameter.
_SWEEP_LIGHT, _SWEEP_DARK = "#9ecae1", "#08306b"
_HEX = re.compile(r"#[0-9a-fA-F]{6}")

# Styles chosen at run time: name -> (a weak reference to the Method it was chosen for, the
# style).  It holds for that very Method only, so a later method of the same name (even one
# with equal fields) starts without it.
_CHOSEN: dict[str, tuple] = {}


def _own(method) -> Style | None:
    """The style given to ``method`` (chosen at run time, else shipped); None if none."""
    ref, chosen = _CHOSEN.get(method.name, (None, None))
    if ref is not None and ref() is method:
        return chosen
    return STYLES.get(method.name)


def _method(name):
    """The registered method a name or a reproduction row name (``"random @B"``) refers to."""
    if name not in methods.names():
        for pick in methods.PICKS[1:]:
            if name.endswith(" " + pick):
                return methods.get(name[: -len(pick) - 1])
    return methods.get(name)


def style(name) -> Style:
    """How a method is drawn, by name or by reproduction row name (``"random @B"``).

    Parameters
    ----------
    name : str
        A registered method's name, or a row name ``"<name> <pick>"``.

    Returns
    -------
    Style
        Its own style, or its automatic one if it was registered without a style.

    Raises
    ------
    KeyError
        If no registered method has that name.
    """
    method = _method(name)
    own = _own(method)
    return own if own is not None else _automatic()[method.name]


def set_style(name, color, symbol="circle", dash="solid") -> Style:
    """Give a registered method its own style (instead of an automatic one).

    Parameters
    ----------
    name : str
        A registered method's name.
    color : str
        Hex colour ``"#rrggbb"``, no other registered method's and no role's.
    symbol : str, default="circle"
        Plotly marker symbol (its points).
    dash : str, default="solid"
        Plotly line dash (its curves).

    Returns
    -------
    Style

    Raises
    ------
    KeyError
        If no method of that name is registered.
    ValueError
        If the colour is not ``"#rrggbb"``, or is another method's or a role's
        (:data:`ROLE_COLORS`).
    """
    method = methods.get(name)
    if not isinstance(color, str) or not _HEX.fullmatch(color):
        raise ValueError(f"color must be a hex colour '#rrggbb'; got {color!r}")
    clash = [repr(m.name) for m in methods.registered()
             if m.name != name and _taken(m) == color.lower()]
    clash += [f"the {role!r} role" for role, colour in ROLE_COLORS.items()
              if colour.lower() == color.lower()]
    if clash:
        raise ValueError(f"colour {color} is already {clash[0]}'s; every method "
                         "needs its own colour")
    _CHOSEN[name] = (weakref.ref(method), Style(color, symbol, dash))
    return _CHOSEN[name][1]


def _taken(method):
    own = _own(method)
    return None if own is None else own.color.lower()


def _automatic() -> dict:
    """Name -> automatic style of each registered method without a style of its own."""
    unstyled = tuple(m.name for m in methods.registered() if _own(m) is None)
    if not unstyled:
        return {}
    taken = tuple(sorted({c for c in map(_taken, methods.registered()) if c is not None}))
    return dict(zip(unstyled, _automatic_styles(taken, len(unstyled))))


@functools.lru_cache(maxsize=16)
def _automatic_styles(taken, n) -> tuple:
    # Greedy farthest point: each new colour is the candidate farthest (CIELAB) from every
    # colour in use and every one picked before it.  Candidates are mid-lightness and
    # saturated, so an automatic colour is neither a grey nor lost on the white background.
    levels = np.arange(0, 256, 17)
    grid = np.stack(np.meshgrid(levels, levels, levels, indexing="ij"), axis=-1).reshape(-1, 3)
    lab = _lab(grid)
    usable = (lab[:, 0] >= 35) & (lab[:, 0] <= 70) & (np.hypot(lab[:, 1], lab[:, 2]) >= 35)
    grid, lab = grid[usable], lab[usable]
    sweep = [_hex(c) for c in _line(_rgb(_SWEEP_LIGHT), _rgb(_SWEEP_DARK), 8)]
    used = _lab(np.array([_rgb(c) for c in (*taken, *ROLE_COLORS.values(), *sweep)]))
    distance = np.linalg.norm(lab[:, None, :] - used[None, :, :], axis=2).min(axis=1)
    out = []
    for i in range(n):
        best = int(np.argmax(distance))
        out.append(Style(_hex(grid[best]), AUTOMATIC_SYMBOLS[i % len(AUTOMATIC_SYMBOLS)]))
        distance = np.minimum(distance, np.linalg.norm(lab - lab[best], axis=1))
        distance[best] = -1.0  # never picked twice, even past the grid's size
    return tuple(out)


def _lab(rgb):
    """CIELAB (D65) of sRGB rows ``(..., 3)`` in 0-255."""
    c = np.asarray(rgb, dtype=float) / 255.0
    linear = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    to_xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                       [0.0193, 0.1192, 0.9505]])
    xyz = linear @ to_xyz.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 216 / 24389, np.cbrt(xyz), (24389 / 27 * xyz + 16) / 116)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]),
                     200 * (f[..., 1] - f[..., 2])], axis=-1)


def _rgb(colour):
    return np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=float)


def _hex(rgb):
    return "#" + "".join(f"{int(round(c)):02x}" for c in rgb)


def _line(light, dark, n):
    """``n`` RGB points from ``light`` to ``dark``."""
    return [light + t * (dark - light) for t in np.linspace(0.0, 1.0, max(n, 2))[:n]]


def _shades(light, dark, n):
    """``n`` colours from ``light`` to ``dark`` (RGB arrays), none a method's or role's."""
    taken = {style(m.name).color.lower() for m in methods.registered()} | {
        c.lower() for c in ROLE_COLORS.values()}
    out = []
    for rgb in _line(light, dark, n):
        colour = _hex(rgb)
        # A shade may only coincide with a taken colour by accident; nudge it off.
        while colour in taken:
            colour = "#" + "".join(f"{max(0, int(colour[i:i + 2], 16) - 1):02x}" for i in (1, 3, 5))
        out.append(colour)
    return out


def sweep_colors(n) -> list:
    """``n`` shades of SDWEC's blue, light to dark, for SDWEC at several values of a parameter.

    None of them is any method's or role's colour.
    """
    return _shades(_rgb(_SWEEP_LIGHT), _rgb(_SWEEP_DARK), n)


def role_shades(role, n) -> list:
    """``n`` shades of a role's colour (:data:`ROLE_COLORS`), from half-way to white to
    half-way to black: several curves of one role (the relaxation around several points).

    None of them is any method's or role's colour.
    """
    base = _rgb(ROLE_COLORS[role])
    return _shades(base + 0.5 * (255.0 - base), 0.5 * base, n)
