"""The method registry: one name and one colour per method, and a new method is one entry."""

from pathlib import Path as FilePath

import numpy as np
import pandas as pd
import pytest

from sdwec import combiners, datasets, experiments, frontier, methods, paper, plots, pool, styles

RESULTS = FilePath(__file__).resolve().parents[1] / "results" / "reproduction" / "results.csv"


def first_half(pool):
    """The toy of docs/methods.md: weight 1 on the first half of the members."""
    w = np.zeros(pool.n_trees)
    w[: pool.n_trees // 2] = 1.0
    return w


def prefix(pool, sizes=None):
    """A toy curve: the first k members, for every size k."""
    sizes = np.arange(1, pool.n_trees + 1) if sizes is None else np.asarray(sizes)
    W = combiners.ordered_weights(np.arange(pool.n_trees), sizes)
    return methods.Path(weights=W, param=sizes.astype(float), labels=tuple(f"k={k}" for k in sizes))


@pytest.fixture
def toys():
    """Register the toy methods for one test and remove them afterwards."""
    added = [
        methods.register(name="first-half", label="first half of the trees", kind="point",
                         fit=first_half, description="weight 1 on the first half",
                         reference="a toy", source="ours"),
        methods.register(name="prefix", label="first k trees", kind="curve", fit=prefix,
                         description="the first k trees", reference="a toy", source="ours",
                         picks=("@B", "(val)")),
    ]
    styles.set_style("first-half", "#ff00aa", symbol="star")
    styles.set_style("prefix", "#00aa55", dash="dash")
    yield added
    for method in added:
        methods.unregister(method.name)


@pytest.fixture(scope="module")
def small_pool():
    data = datasets.load("wine", "binary")
    return pool.build_pool(data.X, data.y, n_trees=12, seed=0)


def test_a_registered_method_appears_in_the_frontier_with_its_weights(toys, small_pool):
    df = frontier.peers(small_pool, random_draws=2, lasso_alphas=5)
    row = df[df["method"] == "first-half"]
    assert len(row) == 1 and row["n_selected"].item() == 6
    assert row["test_accuracy"].item() == pytest.approx(combiners.accuracy(
        first_half(small_pool), small_pool.P_test, small_pool.y_test, small_pool.classes,
        small_pool.prior))
    curve = df[df["method"] == "prefix"]
    assert list(curve["n_selected"]) == list(range(1, 13))
    assert "first-half" in plots.PEER_POINTS and "prefix" in plots.PEER_CURVES


def test_a_registered_method_is_drawn_in_its_colour(toys, small_pool):
    sweep = frontier.sweep(small_pool, [0.1, 10.0])
    fig = plots.frontier(sweep, frontier.pareto(sweep), frontier.peers(small_pool, 2, 0, 5))
    (point,) = [t for t in fig.data if t.name == methods.get("first-half").label]
    assert point.marker.color == "#ff00aa" and point.marker.symbol == "star"
    (line,) = [t for t in fig.data if t.name == methods.get("prefix").label]
    assert line.line.color == "#00aa55" and line.line.dash == "dash"


def test_a_registered_method_is_reproduced_and_reported(toys, cache, tmp_path):
    assert {"first-half", "prefix @B", "prefix (val)"} <= set(experiments.METHODS)
    rows = pd.DataFrame(experiments.run_job("wine", 0, n_trees=10))
    assert list(rows["method"]) == experiments.METHODS
    toy = rows.set_index("method")
    assert toy.loc["first-half", "n_selected"] == 5
    # "@B": the same size as SDWEC-B; "(val)": the best validation accuracy, ties smaller.
    assert toy.loc["prefix @B", "n_selected"] == toy.loc["SDWEC-B", "n_selected"]
    pool_ = pool.load_pool("wine", n_trees=10, seed=0)
    val_curve = combiners.ordered_curve(np.arange(10), pool_.votes("val"), pool_.prior)
    assert toy.loc["prefix (val)", "n_selected"] == 1 + int(np.argmax(val_curve))
    assert toy.loc["prefix (val)", "val_accuracy"] == pytest.approx(val_curve.max())

    df = experiments.reproduce(["wine"], repeats=1, n_trees=10, backend="threading", n_jobs=1,
                               progress=False)
    report = experiments.write_report(df, tmp_path / "out", "test", 1.0)["report"].read_text()
    summary = report.split("## All methods")[1].split("##")[0]
    assert "first-half" in summary and "prefix (val)" in summary
    assert "prefix @B" in report.split("## The fair comparison")[1]


def test_the_paper_methods_are_table_3s_and_the_stored_results_keep_their_names():
    assert experiments.PAPER_METHODS == list(paper.TABLE3_METHODS)
    # The Paper page reads results/reproduction/results.csv by these names.
    stored = set(pd.read_csv(RESULTS, usecols=["method"])["method"])
    assert stored == set(experiments.METHODS)


def test_every_method_has_its_own_colour_and_sweeps_have_theirs():
    colours = [styles.style(m.name).color.lower() for m in methods.registered()]
    assert len(set(colours)) == len(colours)
    for n in range(1, 13):
        shades = styles.sweep_colors(n)
        assert len(set(shades)) == n and not set(shades) & set(colours)


def test_lookups():
    assert methods.get("single").label == "single tree"
    assert styles.style("random @B") == styles.style("random")
    assert styles.style("lasso (val)").color == styles.style("lasso").color
    assert {m.kind for m in methods.points()} == {"point"}
    assert {m.kind for m in methods.curves()} == {"curve"}
    assert list(methods.names()) == [m.name for m in methods.registered()]
    with pytest.raises(KeyError, match="no method named 'nope'"):
        methods.get("nope")


def test_registration_is_checked():
    fields = dict(name="x", label="x", kind="point", fit=first_half, description="", reference="",
                  source="ours")
    with pytest.raises(ValueError, match="already registered"):
        methods.register(**dict(fields, name="bagging"))
    with pytest.raises(ValueError, match="kind must be one of"):
        methods.Method(**dict(fields, kind="surface"))
    with pytest.raises(ValueError, match="source must be one of"):
        methods.Method(**dict(fields, source="mine"))
    with pytest.raises(ValueError, match="must accept a sizes= option"):
        methods.Method(**dict(fields, kind="curve", picks=("@B",)))
    with pytest.raises(ValueError, match="picks of a point"):
        methods.Method(**dict(fields, picks=("(val)",)))
    assert "x" not in methods.names()


def test_positional_fields_are_refused_with_the_keywords_to_use():
    """docs/methods.md: register takes a Method or its fields as keywords."""
    fields = dict(name="x", label="x", kind="point", fit=first_half, description="", reference="",
                  source="ours")
    keywords = ("register(name=..., label=..., kind=..., fit=..., description=..., "
                "reference=..., source=...)")
    for args, kwargs in [(tuple(fields.values()), {}), (("x",), dict(fields, name=None))]:
        kwargs.pop("name", None)
        with pytest.raises(TypeError, match="Pass the fields as keywords") as raised:
            methods.register(*args, **kwargs)
        assert keywords in str(raised.value)
    assert "x" not in methods.names()
    # A Method given positionally is still accepted.
    added = methods.register(methods.Method(**fields))
    try:
        assert methods.get("x") is added
    finally:
        methods.unregister("x")


def test_a_method_returning_the_wrong_shape_is_named(small_pool):
    broken = methods.Method(name="broken", label="broken", kind="point",
                            fit=lambda pool: np.ones(3), description="", reference="",
                            source="ours")
    with pytest.raises(ValueError, match="'broken' returned weights of shape \\(3,\\)"):
        broken.run(small_pool)


def test_the_registry_says_which_methods_are_fitted_on_the_validation_rows():
    # Written out from the methods' definitions: equal votes (bagging), seeded random draws
    # and a tree of its own fit nothing on the validation rows; every weighting, ordering
    # and stacking method does, and the out-of-bag variants fit on them stacked with OOB rows.
    untouched = {"bagging", "single", "random"}
    assert {m.name for m in methods.registered() if not m.fits_validation} == untouched
    for name in ("QFWEC", "WMV", "NNLS", "lasso", "reduce-error", "orientation", "SDWEC"):
        assert methods.get(name).weights_from == "validation"
    assert methods.get("SDWEC-OOB").weights_from == "oob+validation"
    assert methods.get("SDWEC-OOB").fits_validation
    with pytest.raises(ValueError, match="weights_from must be one of"):
        methods.Method(name="x", label="x", kind="point", fit=lambda pool: None,
                       description="", reference="", source="ours", weights_from="test")


def test_methods_of_a_module_named_in_the_environment_are_registered(tmp_path, monkeypatch):
    (tmp_path / "lab_pruning.py").write_text(
        "import numpy as np\n"
        "from sdwec import methods\n"
        "def _first(pool):\n"
        "    w = np.zeros(pool.n_trees)\n"
        "    w[0] = 1.0\n"
        "    return w\n"
        "methods.register(name='first-tree', label='the first tree', kind='point', fit=_first,\n"
        "                 description='weight 1 on tree 0', reference='a toy', source='ours')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(methods.PLUGINS_ENV, " lab_pruning , ")
    try:
        assert methods.load_plugins() == ("lab_pruning",)
        assert methods.get("first-tree").label == "the first tree"
        assert methods.load_plugins() == ("lab_pruning",)  # imported once: no second entry
    finally:
        methods.unregister("first-tree")
    monkeypatch.setenv(methods.PLUGINS_ENV, "no_such_module_here")
    with pytest.raises(ImportError, match="'no_such_module_here'.*SDWEC_METHODS"):
        methods.load_plugins()
    assert methods.load_plugins("") == ()
