"""How methods are drawn: the plotting layer's styles, apart from the registry's fields."""

import itertools

import numpy as np
import pytest

from sdwec import datasets, frontier, methods, plots, pool, styles
from tests.test_plots import _lab


def _toy(pool):
    return np.ones(pool.n_trees)


def _toy_curve(pool, sizes=None):
    sizes = np.arange(1, pool.n_trees + 1) if sizes is None else np.asarray(sizes)
    return methods.Path(weights=(np.arange(pool.n_trees)[:, None] < sizes).astype(float),
                        param=sizes.astype(float), labels=tuple(f"k={k}" for k in sizes))


@pytest.fixture
def register():
    """Register toy methods (no style) for one test and remove them afterwards."""
    added = []

    def add(name, kind="point"):
        fit = _toy if kind == "point" else _toy_curve
        added.append(methods.register(name=name, label=name, kind=kind, fit=fit,
                                      description="a toy", reference="a toy", source="ours"))
        return added[-1]

    yield add
    for method in added:
        if method.name in methods.names():
            methods.unregister(method.name)


def test_every_shipped_method_has_a_shipped_style_and_nothing_else_does():
    assert set(styles.STYLES) == {m.name for m in methods.BUILTIN}
    assert all(styles.style(name) is look for name, look in styles.STYLES.items())
    # The registry's entries carry no look of their own.
    assert not {"color", "symbol", "dash"} & set(methods.Method.__dataclass_fields__)


def test_a_method_registered_without_a_style_gets_a_distinct_automatic_one(register):
    shipped = [styles.style(m.name) for m in methods.registered()]
    toys = [register(f"toy {i}") for i in range(12)]
    looks = [styles.style(t.name) for t in toys]
    colours = [look.color.lower() for look in looks]
    assert len(set(colours)) == len(colours)
    taken = {s.color.lower() for s in shipped} | {c.lower() for c in styles.ROLE_COLORS.values()}
    assert not set(colours) & taken
    # Not merely unequal: as far from every other colour as roles are from methods.
    others = taken | set(styles.sweep_colors(8))
    for colour in colours:
        assert min(np.linalg.norm(_lab(colour) - _lab(o)) for o in others) > 15, colour
    for a, b in itertools.combinations(colours, 2):
        assert np.linalg.norm(_lab(a) - _lab(b)) > 15, (a, b)
    # Markers no shipped method uses, one per method while they last.
    assert not {look.symbol for look in looks} & {s.symbol for s in shipped}
    n = len(styles.AUTOMATIC_SYMBOLS)
    assert len({look.symbol for look in looks[:n]}) == n
    # The sweeps' shades keep off them too; the same answer on every call.
    assert not set(styles.sweep_colors(12)) & set(colours)
    assert [styles.style(t.name) for t in toys] == looks


def test_a_method_registered_without_a_style_is_drawn_on_the_frontier(register):
    data = datasets.load("wine", "binary")
    small = pool.build_pool(data.X, data.y, n_trees=8, seed=0)
    register("toy point")
    register("toy curve", kind="curve")
    sweep = frontier.sweep(small, [0.1, 10.0])
    fig = plots.frontier(sweep, frontier.pareto(sweep), frontier.peers(small, 2, 0, 3),
                         shown=("toy point", "toy curve"))
    (point,) = [t for t in fig.data if t.name == "toy point"]
    look = styles.style("toy point")
    assert (point.marker.color, point.marker.symbol) == (look.color, look.symbol)
    assert point.visible is True
    (line,) = [t for t in fig.data if t.name == "toy curve"]
    assert line.line.color == styles.style("toy curve").color != look.color


def test_set_style_gives_a_method_its_own_look_and_keeps_colours_apart(register):
    register("mine")
    automatic = styles.style("mine")
    chosen = styles.set_style("mine", "#123456", symbol="star", dash="dash")
    assert styles.style("mine") == chosen == styles.Style("#123456", "star", "dash")
    assert styles.style("mine @B") == chosen
    with pytest.raises(ValueError, match="already 'bagging'"):
        styles.set_style("mine", styles.style("bagging").color.upper())
    with pytest.raises(ValueError, match="already the 'pareto' role"):
        styles.set_style("mine", styles.ROLE_COLORS["pareto"])
    register("other")
    with pytest.raises(ValueError, match="already 'mine'"):
        styles.set_style("other", "#123456")
    with pytest.raises(ValueError, match="hex colour"):
        styles.set_style("mine", "red")
    with pytest.raises(KeyError, match="no method named 'nope'"):
        styles.set_style("nope", "#654321")
    # A style belongs to the registered method: a new method of the same name starts without.
    methods.unregister("mine")
    with pytest.raises(KeyError, match="no method named 'mine'"):
        styles.style("mine")
    register("mine")
    assert styles.style("mine").color != "#123456"
    assert automatic.symbol in styles.AUTOMATIC_SYMBOLS


def test_register_refuses_a_look_and_says_where_it_goes():
    with pytest.raises(TypeError, match=r"look \(color, symbol\).*styles\.set_style"):
        methods.register(name="x", label="x", kind="point", fit=_toy, description="",
                         reference="", source="ours", color="#123456", symbol="star")
    assert "x" not in methods.names()
