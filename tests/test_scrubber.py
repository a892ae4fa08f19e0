"""The λ scrubber shows what the Explorer's headline shows: the mean over the page's splits.

Expected numbers come from :func:`sdwec.comparison.over_splits` of
:func:`~sdwec.comparison.compare_many` (the headline's path, one configuration at a time), from
the solver and the vote directly, or by hand; never from the scrubber's own code.
"""

import json
import math
import shutil
from pathlib import Path

import numpy as np
import plotly.io as pio
import pytest
from playwright import sync_api
from scipy import stats
from streamlit.testing.v1 import AppTest

from dashboard import plotly_bundle
from dashboard.config import LAMBDA_GRID, Config
from harness.apptest_charts import chart_figures
from sdwec import combiners, comparison, datasets, plots, solver
from sdwec.formatting import mean_interval
from sdwec.pool import build_pool, load_pool
from tests.test_browser import LAUNCH_ARGS

PLOTLY_JS = plotly_bundle.chosen().path  # what the app's charts load
N_TREES = 20
SPLITS = 3
PARAMS = {k: v for k, v in Config().params.items() if k != "lam"}


@pytest.fixture(scope="module")
def pools():
    data = datasets.load("sonar", "binary")
    return [build_pool(data.X, data.y, n_trees=N_TREES, seed=s) for s in range(SPLITS)]


@pytest.fixture(scope="module")
def paths(pools):
    return comparison.lambda_paths(pools, LAMBDA_GRID, **PARAMS)


@pytest.fixture(scope="module")
def headlines(pools):
    """The Explorer's SDWEC and bagging rows at every λ of the grid."""
    return [comparison.over_splits(comparison.compare_many(pools, **PARAMS, lam=lam))[:2]
            for lam in LAMBDA_GRID]


def _nan_equal(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


def _interval(trace, i=0, axis="error_y"):
    """The [lo, hi] an error bar draws around point ``i`` of ``trace`` (a dict)."""
    bar, value = trace[axis], trace["y" if axis == "error_y" else "x"][i]
    return value - bar["arrayminus"][i], value + bar["array"][i]


# --------------------------------------------------------------------------- the numbers


def test_every_lambda_holds_the_headline_s_numbers(pools, paths, headlines):
    keys = ("test", "test_lo", "test_hi", "validation", "validation_lo", "validation_hi")
    for j, (sdwec, bagging) in enumerate(headlines):
        for key in keys + ("n_selected", "n_selected_lo", "n_selected_hi"):
            assert _nan_equal(getattr(paths, key)[j], sdwec[key]), (LAMBDA_GRID[j], key)
        assert paths.abstaining_splits[j] == sdwec["abstaining_splits"]
        for key in keys:
            assert paths.bagging[key] == bagging[key], key
    # The weights are the headline's solutions, split by split.
    lam = Config().lam
    results = comparison.compare_many(pools, **PARAMS, lam=lam)
    for path, result in zip(paths.paths, results):
        np.testing.assert_array_equal(path.weights[:, LAMBDA_GRID.index(lam)],
                                      result.solution.weights)
    # Some λ of this grid keep no tree on some splits but not all: the case drawn hollow.
    assert any(0 < k < SPLITS for k in paths.abstaining_splits)
    assert paths.splits == SPLITS and paths.n_trees == N_TREES
    assert list(paths.n_test) == [len(p.y_test) for p in pools]


def test_one_split_has_binomial_accuracy_intervals_and_no_tree_interval(pools):
    pool = pools[0]
    one = comparison.lambda_paths([pool], LAMBDA_GRID, **PARAMS)
    for j, lam in enumerate(LAMBDA_GRID):
        sol = solver.solve(pool.votes("val"), None, **PARAMS, lam=lam)
        right = int(np.sum(combiners.vote(sol.weights, pool.P_test, pool.classes, pool.prior)
                           == pool.y_test))
        n = len(pool.y_test)
        assert one.test[j] == pytest.approx(right / n, abs=1e-12)
        # Clopper-Pearson from the beta distribution, written out here.
        lo = stats.beta.ppf(0.025, right, n - right + 1) if right else 0.0
        hi = stats.beta.ppf(0.975, right + 1, n - right) if right < n else 1.0
        assert (one.test_lo[j], one.test_hi[j]) == pytest.approx((lo, hi), abs=1e-12)
        assert one.n_selected[j] == sol.n_selected
        assert math.isnan(one.n_selected_lo[j]) and math.isnan(one.n_selected_hi[j])
    fig = plots.lambda_scrubber(one, lam=Config().lam)
    assert len(fig.frames[0].data) == 4  # no per-split dots for one split
    for frame in fig.frames:
        assert frame.data[2].error_x.array is None  # a count on one split: no interval
    # The single path is the same as lambda_path's.
    single = comparison.lambda_path(pool, LAMBDA_GRID, **PARAMS)
    np.testing.assert_array_equal(single.weights, one.paths[0].weights)


def test_lambda_paths_checks_its_input(pools):
    with pytest.raises(ValueError, match="fit_on"):
        comparison.lambda_paths(pools, LAMBDA_GRID, fit_on="train", **PARAMS)
    with pytest.raises(ValueError, match="at least one split"):
        comparison.lambda_paths([], LAMBDA_GRID, **PARAMS)


def test_sdwec_oob_paths_vote_with_the_support(pools):
    oob = comparison.lambda_paths(pools, [0.1, 10.0], fit_on="oob+validation", **PARAMS)
    for j, lam in enumerate((0.1, 10.0)):
        results = comparison.compare_many(pools, fit_on="oob+validation", **PARAMS, lam=lam)
        head = comparison.over_splits(results)[0]
        assert (oob.test[j], oob.test_lo[j], oob.test_hi[j]) == (
            head["test"], head["test_lo"], head["test_hi"])
        for path, result in zip(oob.paths, results):
            np.testing.assert_array_equal(path.weights[:, j],
                                          (result.solution.weights > 0).astype(float))


# --------------------------------------------------------------------------- the figure


def test_first_frame_at_the_sidebar_lambda_is_the_headline(paths, headlines):
    lam = Config().lam
    assert lam in LAMBDA_GRID  # the sidebar's λ is a frame of the scrubber, not a neighbour
    j = LAMBDA_GRID.index(lam)
    sdwec, bagging = headlines[j]
    fig = plots.lambda_scrubber(paths, lam=lam)
    assert fig.layout.sliders[0].active == j and fig.frames[j].name == f"{lam:g}"
    for data in (fig.data, fig.frames[j].data):  # drawn first, and the frame itself
        _, bars, here, heading = (data[i].to_plotly_json() for i in range(4))
        # SDWEC's test and validation bars, then bagging's (in every frame: a frame that
        # left them out removed them from the chart at the first move).
        assert list(bars["y"]) == [sdwec["test"], sdwec["validation"], bagging["test"],
                                   bagging["validation"]]
        for i, split in enumerate(("test", "validation")):
            assert _interval(bars, i) == pytest.approx(
                (sdwec[f"{split}_lo"], sdwec[f"{split}_hi"]), abs=1e-12)
            assert _interval(bars, 2 + i) == pytest.approx(
                (bagging[f"{split}_lo"], bagging[f"{split}_hi"]), abs=1e-12)
        assert list(here["x"]) == [sdwec["n_selected"]] and list(here["y"]) == [sdwec["test"]]
        assert _interval(here) == pytest.approx((sdwec["test_lo"], sdwec["test_hi"]), abs=1e-12)
        assert _interval(here, axis="error_x")[1] == pytest.approx(sdwec["n_selected_hi"])
        trees = mean_interval(sdwec["n_selected"], sdwec["n_selected_lo"],
                              sdwec["n_selected_hi"], decimals=1)
        test = mean_interval(sdwec["test"], sdwec["test_lo"], sdwec["test_hi"])
        assert heading["text"][0].startswith(
            f"λ = {lam:g}: {trees} of {N_TREES} trees, test accuracy {test}")
    # Every frame holds the same bagging bars.
    assert {tuple(f.data[1].y[2:]) for f in fig.frames} == {(bagging["test"],
                                                             bagging["validation"])}


def test_every_frame_stays_possible_and_marks_abstention(pools, paths):
    fig = plots.lambda_scrubber(paths, lam=1.0)
    assert len(fig.frames) == len(LAMBDA_GRID)
    per_split = [np.column_stack([p.test_accuracy for p in paths.paths]),
                 np.column_stack([p.val_accuracy for p in paths.paths])]
    for j, frame in enumerate(fig.frames):
        stems, bars, here, heading, dots = (t.to_plotly_json() for t in frame.data)
        k = int(sum(p.n_selected[j] == 0 for p in paths.paths))  # counted here, from weights
        for i in range(2):
            lo, hi = _interval(bars, i)
            assert 0.0 <= lo <= bars["y"][i] <= hi <= 1.0
        # Each split's accuracies as dots across the bars, in split order.
        np.testing.assert_array_equal(dots["y"], np.concatenate([per_split[0][j],
                                                                 per_split[1][j]]))
        assert all(-0.5 < x < 0.5 for x in dots["x"][:SPLITS])
        assert all(0.5 < x < 1.5 for x in dots["x"][SPLITS:])
        # Split 1's weights as stems.
        kept = np.flatnonzero(paths.paths[0].weights[:, j] > 0)
        assert list(stems["x"][1::3]) == kept.tolist()
        text = heading["text"][0]
        if k == SPLITS:  # no tree anywhere: no place on the log axis
            assert here["x"] == [None] and "every split abstains" in text
        else:
            lo, hi = _interval(here, axis="error_x")
            assert 0 < lo <= here["x"][0] <= hi <= N_TREES
            assert here["marker"]["symbol"] == ("circle-open" if k else "circle")
            assert (f"{k} of {SPLITS} splits keep no tree" in text) == (k > 0)
            assert (f"{k} of {SPLITS} splits keep no tree" in here["customdata"][0]) == (k > 0)
            # An empty weights panel says why: the split drawn there keeps no tree.
            empty = paths.paths[0].n_selected[j] == 0
            assert ("split 1 (its weights drawn) among them" in text) == empty
    # Every λ's place: partly abstaining ones hollow, fully abstaining ones left out.
    everything = next(t for t in fig.data if t.type == "scatter" and t.mode == "markers+lines")
    some = np.array([sum(p.n_selected[j] > 0 for p in paths.paths) for j in
                     range(len(LAMBDA_GRID))])
    assert len(everything.x) == int(np.sum(some > 0))
    assert list(everything.marker.symbol) == [
        "circle" if s == SPLITS else "circle-open" for s in some[some > 0]]
    # The slider restyles only the frames' traces; bagging and the titles stay.
    assert all(list(f.traces) == [0, 1, 2, 3, 4] for f in fig.frames)
    assert all(f.layout.to_plotly_json() == {} for f in fig.frames)
    steps = fig.layout.sliders[0].steps
    assert all(s.args[1]["frame"]["redraw"] is False for s in steps)


def test_headings_say_what_they_rest_on(pools, paths):
    fig = plots.lambda_scrubber(paths)
    notes = " | ".join(a.text for a in fig.layout.annotations)
    test_rows = sum(len(p.y_test) for p in pools)
    assert f"Means of {SPLITS} splits ({test_rows} test and " in notes
    # The weights are one split's trees: no row count (the rows say nothing of weights).
    assert f"Weights of split 1 of {SPLITS} by tree index (each split grows its own trees)" \
        in notes
    assert f"Accuracy: mean of {SPLITS} splits ({test_rows} test rows in all)" in notes
    assert f"Trees used and test accuracy: means of {SPLITS} splits" in notes
    one = plots.lambda_scrubber(comparison.lambda_paths(pools[:1], LAMBDA_GRID, **PARAMS))
    notes = " | ".join(a.text for a in one.layout.annotations)
    assert f"One split: {len(pools[0].y_test)} test and" in notes and "binomial" in notes


def test_by_hand():
    # Two splits of three trees, three λ. Split 1: abstains, keeps tree 1, keeps all; split 2
    # abstains at the first two λ and keeps trees 0 and 2 at the last.
    lams = np.array([0.01, 1.0, 100.0])
    first = comparison.LambdaPath(
        lams=lams, weights=np.array([[0.0, 0.0, 0.5], [0.0, 2.0, 1.0], [0.0, 0.0, 0.25]]),
        val_accuracy=np.array([0.5, 0.75, 1.0]), test_accuracy=np.array([0.4, 0.6, 0.8]),
        bagging={"validation": 0.9, "test": 0.7})
    second = comparison.LambdaPath(
        lams=lams, weights=np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 0.0], [0.0, 0.0, 3.0]]),
        val_accuracy=np.array([0.5, 0.5, 0.7]), test_accuracy=np.array([0.4, 0.4, 0.7]),
        bagging={"validation": 0.8, "test": 0.7})
    paths = comparison.paths_over_splits([first, second], n_val=[40, 40], n_test=[50, 50])
    assert list(paths.abstaining_splits) == [2, 1, 0]
    assert list(paths.n_selected) == [0.0, 0.5, 2.5]
    t = stats.t.ppf(0.975, 1)  # two splits: one degree of freedom
    half = t * np.std([0.6, 0.4], ddof=1) / np.sqrt(2)
    assert paths.test[1] == pytest.approx(0.5)
    assert (paths.test_lo[1], paths.test_hi[1]) == pytest.approx((max(0.0, 0.5 - half),
                                                                 min(1.0, 0.5 + half)))
    assert paths.n_selected_lo[1] == 0.0  # 0.5 ± 6.4: clipped at no tree
    assert paths.test_lo[0] == paths.test_hi[0] == 0.4  # no spread, no width
    assert (paths.bagging["test"], paths.bagging["validation"]) == pytest.approx((0.7, 0.85))

    fig = plots.lambda_scrubber(paths, lam=0.9)
    assert fig.layout.sliders[0].active == 1  # the grid's nearest λ
    assert fig.layout.yaxis2.range[0] == 0  # accuracy bars start at 0
    stems, bars, here, heading, dots = (fig.frames[1].data[i] for i in range(5))
    assert list(stems.x) == [1, 1, None] and list(stems.y) == [0.0, 2.0, None]
    assert list(bars.y) == pytest.approx([0.5, 0.625, 0.7, 0.85])
    assert list(bars.text) == ["0.500", "0.625", "0.700", "0.850"]
    assert list(dots.y) == [0.6, 0.4, 0.75, 0.5]
    assert list(here.x) == [0.5] and here.marker.symbol == "circle-open"
    lo, hi = paths.test_lo[1], paths.test_hi[1]
    assert heading.text[0] == (f"λ = 1: 0.5 [0.0, {paths.n_selected_hi[1]:.1f}] of 3 trees, "
                               f"test accuracy 0.500 [{lo:.3f}, {hi:.3f}]; 1 of 2 splits keep "
                               "no tree")
    # Both splits abstain: no marker on the log axis, and the heading says so.
    stems, _, here, heading, _ = (fig.frames[0].data[i] for i in range(5))
    assert list(stems.x) == [] and list(here.x) == [None]
    assert heading.text[0].startswith("λ = 0.01: every split abstains (no tree), test accuracy "
                                      "0.400")
    # Every split keeps trees: a filled marker; the line of every λ leaves out the first.
    assert fig.frames[2].data[2].marker.symbol == "circle"
    everything = next(t for t in fig.data if t.type == "scatter" and t.mode == "markers+lines")
    assert list(everything.x) == [0.5, 2.5]
    assert list(everything.marker.symbol) == ["circle-open", "circle"]
    # Validation pale and hatched where the weights were fitted on it, as on the Explorer.
    assert list(bars.marker.pattern.shape) == ["", "/", "", ""]
    assert list(bars.insidetextfont.color) == ["#ffffff", "#111111", "#ffffff", "#111111"]
    # The splits the other way round: split 1, whose weights are drawn, keeps no tree at
    # λ = 1 while split 2 does, and the heading says why the weights panel is empty.
    swapped = plots.lambda_scrubber(comparison.paths_over_splits(
        [second, first], n_val=[40, 40], n_test=[50, 50]), lam=0.9)
    stems, heading = swapped.frames[1].data[0], swapped.frames[1].data[3]
    assert list(stems.x) == []
    assert heading.text[0].endswith("; 1 of 2 splits keep no tree, split 1 (its weights drawn) "
                                    "among them")
    with pytest.raises(ValueError, match="same λ grid"):
        comparison.paths_over_splits([first, comparison.LambdaPath(
            lams=lams[:2], weights=first.weights[:, :2], val_accuracy=lams[:2],
            test_accuracy=lams[:2], bagging=first.bagging)], [40, 40], [50, 50])


# --------------------------------------------------------------------------- on the page


@pytest.mark.usefixtures("fresh_streamlit")
def test_explorer_scrubber_at_the_sidebar_lambda_is_the_headline():
    app = str(Path(__file__).resolve().parent.parent / "app.py")
    at = AppTest.from_file(app, default_timeout=180)
    at.query_params.update({"dataset": "sonar", "l": str(N_TREES), "r": str(SPLITS)})
    at.run()
    at.toggle(key="explorer_scrub").set_value(True).run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    (scrubber,) = [f for f in chart_figures(at) if f.get("frames")
                   and f["frames"][0]["name"] == f"{LAMBDA_GRID[0]:g}"]
    lam = Config().lam
    j = LAMBDA_GRID.index(lam)
    assert scrubber["layout"]["sliders"][0]["active"] == j
    # The headline, computed from the same pools without the dashboard.
    pools = [load_pool("sonar", "binary", n_trees=N_TREES, seed=s) for s in range(SPLITS)]
    sdwec = comparison.over_splits(comparison.compare_many(pools, **PARAMS, lam=lam))[0]
    frame = scrubber["frames"][j]["data"]
    bars, here, heading = frame[1], frame[2], frame[3]["text"][0]
    assert bars["y"][:2] == [sdwec["test"], sdwec["validation"]]
    assert here["x"][0] == sdwec["n_selected"]
    test = mean_interval(sdwec["test"], sdwec["test_lo"], sdwec["test_hi"])
    trees = mean_interval(sdwec["n_selected"], sdwec["n_selected_lo"], sdwec["n_selected_hi"],
                          decimals=1)
    assert heading.startswith(f"λ = {lam:g}: {trees} of {N_TREES} trees, test accuracy {test}")
    # The page's headline metric shows the same mean.
    (shown,) = [m.value for m in at.metric if m.label.startswith("Test accuracy")]
    assert shown.startswith(f"{sdwec['test']:.3f}")
    # The caption says so, with the rows it rests on.
    rows = sum(len(p.y_test) for p in pools)
    (note,) = [c.value for c in at.caption if "Scrub" not in c.value
               and "Like the headline" in c.value]
    assert f"mean over all {SPLITS} splits ({rows} test rows in all)" in note
    assert "its numbers are the headline's" in note


# --------------------------------------------------------------------------- drawn in Chromium

#: Step to one frame as the slider does; read back what is drawn: each accuracy bar's error
#: bar (data units), how many bars are drawn, the λ line, and the fill of the marker of this λ.
_STEP_JS = """async (name) => {
  const gd = document.getElementById('gd');
  await Plotly.animate(gd, [name], {mode: 'immediate', frame: {duration: 0, redraw: false},
                                    transition: {duration: 0}});
  await new Promise(r => requestAnimationFrame(r));
  const ya = gd._fullLayout.yaxis2;
  const bars = gd.querySelector('.barlayer .trace');
  const errors = [...bars.querySelectorAll('.errorbar path')].map(p => p.getBBox())
    .map(b => [ya.p2c(b.y + b.height), ya.p2c(b.y)]);
  const line = [...gd.querySelectorAll('.scatterlayer text')].map(t => t.textContent)
    .find(t => t.startsWith('λ'));
  const here = [...gd.querySelectorAll('.scatterlayer .trace')]
    .find(t => t.querySelectorAll('.point').length === 1 && t.querySelector('.errorbar'));
  const point = here && here.querySelector('.point');
  const drawn = [...gd.querySelectorAll('.barlayer .point path')]
    .filter(p => p.getAttribute('d') && p.getAttribute('d') !== 'M0,0Z').length;
  return {errors, line, fill: point ? point.style.fill : null, bars: drawn};
}"""


@pytest.mark.browser
def test_frames_drawn_by_plotly_show_each_lambda_s_intervals(paths):
    from dashboard.charts import figure_spec

    chromium = shutil.which("chromium")
    if chromium is None:  # as in test_browser.py: a missing browser is a broken setup
        pytest.fail("Debian's chromium is not installed: run `apt-get install chromium`")
    fig = plots.lambda_scrubber(paths, lam=Config().lam)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=LAUNCH_ARGS)
        try:
            tab = browser.new_page(viewport={"width": 1280, "height": 800})
            tab.set_content("<div id='gd' style='width: 880px'></div>")
            tab.add_script_tag(path=str(PLOTLY_JS))
            tab.evaluate("(spec) => { const f = JSON.parse(spec); return Plotly.newPlot('gd', "
                         "{data: f.data, layout: f.layout, frames: f.frames}); }",
                         figure_spec(fig))
            # Both ways through the grid: every frame restyles what the one before drew.
            order = list(range(len(LAMBDA_GRID)))
            for j in order + order[::-1]:
                drawn = tab.evaluate(_STEP_JS, f"{LAMBDA_GRID[j]:g}")
                assert drawn["line"] == fig.frames[j].data[3].text[0]
                expected = [(paths.test_lo[j], paths.test_hi[j]),
                            (paths.validation_lo[j], paths.validation_hi[j]),
                            (paths.bagging["test_lo"], paths.bagging["test_hi"]),
                            (paths.bagging["validation_lo"], paths.bagging["validation_hi"])]
                # Bagging's two bars stay beside SDWEC's at every step.
                assert drawn["bars"] == 4, (j, drawn)
                # Within a pixel of the interval (the axis is ~240 px for 0..1.03).
                assert np.allclose(drawn["errors"], expected, atol=0.006), (j, drawn)
                if paths.abstaining_splits[j] < SPLITS:
                    assert (drawn["fill"] == "none") == (paths.abstaining_splits[j] > 0)
        finally:
            browser.close()


def test_built_without_validation_it_equals_the_validated_figure(paths, monkeypatch):
    fast = json.loads(pio.to_json(plots.lambda_scrubber(paths, 1.0), validate=False))
    monkeypatch.setattr(plots, "VALIDATE", True)  # every property checked: a typo raises
    assert json.loads(pio.to_json(plots.lambda_scrubber(paths, 1.0), validate=False)) == fast
