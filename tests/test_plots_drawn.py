"""What Chromium draws from sdwec.plots' figures: axis ranges, tick labels, bar and legend sizes.

The figures are drawn by the Plotly.js the app's charts load (dashboard.plotly_bundle: the
basic bundle shipped in dashboard/vendor/, of the plotly package's Plotly.js version), in Debian's
Chromium (nothing downloaded), on a blank page: no Streamlit server, so each check takes a
fraction of a second.  What Plotly computes in the browser (an automatic range, the tick
labels it keeps, the pixel width of a bar) is read back from the drawn chart.
"""

import shutil

import numpy as np
import plotly.io as pio
import pytest
from playwright import sync_api

from dashboard import live, plotly_bundle
from sdwec import frontier as fr
from sdwec import plots
from tests.test_plots import _peers_frame, _sweep_frame, near_one

PLOTLY_JS = plotly_bundle.chosen().path
WIDTH = 1100  # a Frontier chart's width in a 1280 px window (sidebar open)

pytestmark = pytest.mark.browser

_DRAW = """async ([spec, width, show]) => {
  const fig = JSON.parse(spec);
  const gd = document.getElementById('gd');
  Plotly.purge(gd);
  fig.layout.width = width;
  await Plotly.newPlot(gd, fig.data, fig.layout, {displayModeBar: true});
  if (show.length) await Plotly.restyle(gd, {visible: true}, show);
  const box = (el) => { const r = el.getBoundingClientRect(); return [r.width, r.height]; };
  const rect = (el) => { const r = el.getBoundingClientRect(); return [r.top, r.bottom]; };
  const edges = (el) => { const r = el.getBoundingClientRect();
                          return [r.left, r.top, r.right, r.bottom]; };
  const legend = gd.querySelector('.legend');
  const size = gd._fullLayout._size, top = gd.getBoundingClientRect().top;
  const left = gd.getBoundingClientRect().left;
  return {
    y: gd._fullLayout.yaxis.range,
    yticks: [...gd.querySelectorAll('.ytick text')].map((t) => t.textContent)
      .filter((t) => t.length),
    plot: [gd._fullLayout._size.w, gd._fullLayout._size.h],
    legend: legend ? box(legend) : null,
    bars: [...gd.querySelectorAll('.bars .point path')].map(box),
    title: rect(gd.querySelector('.gtitle')),
    modebar: rect(gd.querySelector('.modebar')),
    plot_top: top + size.t,
    plot_box: [left + size.l, top + size.t, left + size.l + size.w, top + size.t + size.h],
    legend_top: legend ? rect(legend)[0] : null,
    legend_box: legend ? edges(legend.querySelector('.bg')) : null,
    legend_texts: [...gd.querySelectorAll('.legendtext')].map((t) => t.textContent),
    texts: [...gd.querySelectorAll('svg text')].filter((t) => t.textContent.length)
      .map((t) => [t.textContent, edges(t)]),
    bar_boxes: [...gd.querySelectorAll('.bars .point path')].map(edges),
  };
}"""


@pytest.fixture(scope="module")
def page():
    chromium = shutil.which("chromium")
    if chromium is None:  # as in test_browser.py: a missing browser is a broken setup
        pytest.fail("Debian's chromium is not installed: run `apt-get install chromium`")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium,
                                    args=["--headless", "--no-sandbox", "--disable-gpu"])
        tab = browser.new_page(viewport={"width": 1280, "height": 720})
        tab.set_content("<div id='gd'></div>")
        tab.add_script_tag(path=str(PLOTLY_JS))
        yield tab
        browser.close()


def _draw(page, fig, width=WIDTH, show=()):
    return page.evaluate(_DRAW, [pio.to_json(fig, validate=False), width, list(show)])


def _extent(trace):
    ys = np.asarray(trace.y, dtype=float)
    bar = trace.error_y
    top = ys + (np.asarray(bar.array) if bar.array is not None else 0.0)
    bottom = ys - (np.asarray(bar.arrayminus) if bar.arrayminus is not None else 0.0)
    return np.nanmin(bottom), np.nanmax(top)  # nan: the gap between an interval's edges


def test_frontier_axis_holds_what_is_shown_and_stops_at_one(page):
    sweep, peers = near_one()
    fig = plots.frontier(sweep, fr.pareto(sweep), peers)
    drawn = _draw(page, fig)
    low, high = drawn["y"]
    assert high <= 1.0  # 0.999 + 0.0028 would have passed it
    shown = [t for t in fig.data if t.visible in (None, True) and len(t.x)]
    for trace in shown:  # every shown point, band and error bar is on the axis
        bottom, top = _extent(trace)
        assert low <= bottom and top <= high, trace.name
    # Fitted, not padded by a fixed amount: close under the lowest value shown (here an
    # interval's lower edge).
    lowest = min(_extent(t)[0] for t in shown)
    assert lowest - 0.1 * (high - lowest) < low <= lowest  # Plotly pads for its markers
    # SDWEC-select (0.61 to 0.65) is one legend click away; shown, the axis takes it in.
    hidden = [i for i, t in enumerate(fig.data) if t.name == "SDWEC-select"]
    low_after, _ = _draw(page, fig, show=hidden)["y"]
    assert low_after <= 0.61


_REACT = """async ([js, specs, height, config]) => {
  // dashboard/charts.py's own component code, given each figure in turn in one parent, as
  // Streamlit gives it a rerun's figure: the chart div is kept and Plotly.react updates it.
  const component = (await import('data:text/javascript,' + encodeURIComponent(js))).default;
  const parent = document.getElementById('parent');
  parent.replaceChildren();
  const drawn = [];
  for (const [spec, show] of specs) {
    component({data: {spec, height, config, src: ''}, parentElement: parent});
    const gd = parent.querySelector('div.sdwec-chart');
    await gd.__sdwecQueue;
    if (show.length) await Plotly.restyle(gd, {visible: true}, show);
    drawn.push({range: gd._fullLayout.yaxis.range.slice(),
                visible: gd._fullData.map((t) => t.visible === true)});
  }
  return drawn;
}"""


def _spread(shift):
    """Two splits ``shift`` apart: bands and error bars of about ``shift`` / sqrt(2) each."""
    sweeps, peers = [], []
    for offset in (0.0, shift):
        sweep, peer = _sweep_frame(), _peers_frame()
        for frame in (sweep, peer):
            frame["test_accuracy"] += offset
        peer["abstains"] = False
        sweeps.append(sweep)
        peers.append(peer)
    sweep, peer = fr.over_splits(sweeps), fr.over_splits(peers)
    return plots.frontier(sweep, fr.pareto(sweep), peer)


def test_frontier_axis_refits_after_in_place_updates(page):
    from dashboard import charts

    one_split = plots.frontier(_sweep_frame(), fr.pareto(_sweep_frame()), _peers_frame())
    sweep, peers = near_one()
    near, wide = plots.frontier(sweep, fr.pareto(sweep), peers), _spread(0.16)
    select = [i for i, t in enumerate(wide.data) if t.name.startswith("SDWEC-select")]
    # One split (no spread) -> ten splits' bands -> accuracies near 1 -> the bands again with
    # SDWEC-select (0.6 + n / 200, its band below every other) shown from the legend: each
    # update fits the axis again instead of keeping the previous figure's range.
    steps = [(one_split, []), (wide, []), (near, []), (wide, select)]
    specs = [[charts.figure_spec(fig), show] for fig, show in steps]
    tab = page.context.browser.new_page()  # the module's page keeps its div for the others
    try:
        tab.set_content(f"<div id='parent' style='width: {WIDTH}px'></div>")
        tab.add_script_tag(path=str(PLOTLY_JS))
        drawn = tab.evaluate(_REACT, [live.JS, specs, one_split.layout.height, charts.CONFIG])
    finally:
        tab.close()
    for (fig, _), after in zip(steps, drawn):
        low, high = after["range"]
        assert 0.0 <= low and high <= 1.0
        shown = [t for t, on in zip(fig.data, after["visible"]) if on and len(t.x)]
        assert any(t.error_y.array is not None for t in shown) == (fig is not one_split)
        for trace in shown:
            bottom, top = _extent(trace)
            assert low <= bottom and top <= high, (fig.layout.title.text, trace.name)
    # The wide figure's axis is the one it gets drawn fresh, not one left by the others.
    assert drawn[1]["range"] == pytest.approx(_draw(page, wide)["y"])


def test_frontier_legend_leaves_the_plot_its_width(page):
    sweep, peers = near_one()
    drawn = _draw(page, plots.frontier(sweep, fr.pareto(sweep), peers))
    plot_width, _ = drawn["plot"]
    legend_width, legend_height = drawn["legend"]
    # Under the plot in rows: the plot keeps most of the width (on the right, the legend
    # took 40 % of it at 1280 px), and the legend's rows stay short.
    assert plot_width >= 0.85 * WIDTH
    assert legend_width <= WIDTH and legend_height <= 120


def test_training_time_labels_a_one_decade_range(page):
    import pandas as pd

    times = pd.DataFrame({"dataset": ["wine", "wine"], "m": [142, 142], "l": [100, 200],
                          "seconds": [0.011, 0.014]})
    labels = _draw(page, plots.training_time(times), width=800)["yticks"]
    assert labels == ["0.01", "0.02"]  # dtick=1 left this range with no label at all


def test_two_kept_trees_are_two_thin_bars(page):
    w = np.zeros(21)
    w[[0, 20]] = [1.0, 2.0]
    drawn = _draw(page, plots.member_weights(w, np.full(21, 0.7)), width=800)
    bars = [b for b in drawn["bars"] if b[1] > 0]  # the dropped trees' bars have no height
    assert len(bars) == 2
    one_tree = drawn["plot"][0] / 21  # the x axis spans 21 trees
    assert [b[0] for b in bars] == pytest.approx([0.8 * one_tree] * 2, abs=1.5)


def test_accuracy_bars_start_at_zero(page):
    rows = [{"method": "SDWEC", "test": 0.714, "validation": 0.8},
            {"method": "single", "test": 0.6, "validation": 0.55}]
    drawn = _draw(page, plots.method_comparison(rows), width=500)
    assert drawn["y"] == [0, 1]
    heights = {round(b[1]) for b in drawn["bars"]}
    # 0.600 is drawn 0.600 / 0.714 of the 0.714 bar's height (a cut axis made it a quarter).
    tall, short = max(heights), min(h for h in heights if h > 0)
    assert short / tall == pytest.approx(0.55 / 0.8, abs=0.02)


def test_titles_meet_neither_the_toolbar_nor_the_plot(page):
    from tests.test_plots import _records

    sweep = _sweep_frame_with_abstaining()
    figures = [plots.frontier(sweep, fr.pareto(sweep), _peers_frame()),
               plots.convergence(_records()),
               plots.method_comparison([{"method": "SDWEC", "test": 0.8, "validation": 0.9,
                                         "splits": 10}]),
               plots.member_weights([0.5, 0.0, 1.2], [0.6, 0.7, 0.8], 0.3)]
    for fig in figures:
        drawn = _draw(page, fig, width=500)
        (title_top, _), (_, toolbar_bottom) = drawn["title"], drawn["modebar"]
        # The toolbar (shown on hover, top right) sat over the titles' right end; in a
        # narrow chart the legend's rows above the plot ran into the title.
        assert title_top >= toolbar_bottom, fig.layout.title.text
        assert drawn["title"][1] <= drawn["plot_top"], fig.layout.title.text
        if drawn["legend_top"] is not None:
            # Under the title, and not on the plot: under it, or (the weights chart, whose
            # plot the strip of the same trees continues below) between title and plot.
            legend, plot = drawn["legend_box"], drawn["plot_box"]
            assert legend[1] >= drawn["title"][1], fig.layout.title.text
            assert legend[1] >= plot[3] or legend[3] <= plot[1], fig.layout.title.text


def _sweep_frame_with_abstaining():
    import pandas as pd

    sweep = _sweep_frame()
    abstain = dict(sweep.iloc[0], lam=0.001, n_selected=0, sparsity=1.0, abstains=True)
    return pd.concat([pd.DataFrame([abstain]), sweep], ignore_index=True)


_DRAW_BOTH = """async ([weights, strip, width]) => {
  const draw = async (id, spec) => {
    let gd = document.getElementById(id);
    if (!gd) {
      gd = document.createElement('div');
      gd.id = id;
      document.body.appendChild(gd);
    }
    Plotly.purge(gd);
    const fig = JSON.parse(spec);
    fig.layout.width = width;
    await Plotly.newPlot(gd, fig.data, fig.layout);
    return gd;
  };
  const centre = (el) => { const r = el.getBoundingClientRect(); return r.left + r.width / 2; };
  const bars = await draw('weights', weights);
  const dots = await draw('strip', strip);
  return {
    bars: [...bars.querySelectorAll('.bars .point path')].map(centre),
    dots: [...dots.querySelectorAll('.scatterlayer .point')].map(centre),
    left: [bars, dots].map((gd) => gd.getBoundingClientRect().left),
  };
}"""


@pytest.mark.parametrize("width", [700, 1100])
def test_tree_accuracy_dots_sit_under_their_trees_bars(page, width):
    # Every tree kept (one bar each, in tree order) with weights whose tick labels are wide
    # ("0.0001"), and accuracies whose strip has narrow ones: each chart's own automatic
    # margin would have moved its plot area, and the trees apart.
    l = 40
    weights = np.linspace(1e-4, 2e-4, l)
    acc = np.linspace(0.5, 1.0, l)
    drawn = page.evaluate(_DRAW_BOTH, [pio.to_json(plots.member_weights(weights, acc),
                                                   validate=False),
                                       pio.to_json(plots.tree_accuracies(acc), validate=False),
                                       width])
    assert drawn["left"][0] == drawn["left"][1]  # the two charts start at the same x
    assert len(drawn["bars"]) == len(drawn["dots"]) == l
    one_tree = (width - 90) / l  # the plot width between the fixed margins, per tree
    np.testing.assert_allclose(drawn["dots"], drawn["bars"], atol=0.5)
    assert np.diff(drawn["bars"]) == pytest.approx(np.full(l - 1, one_tree), abs=0.5)


def _overlap(a, b):
    """Whether two [left, top, right, bottom] boxes share more than a pixel's edge."""
    return min(a[2], b[2]) - max(a[0], b[0]) > 1 and min(a[3], b[3]) - max(a[1], b[1]) > 1


def _crowded_weights(pinned=False):
    """200 trees, the last ten and every tenth kept with weights over the 0.476 threshold
    (the old label sat at the line's right end), the others' raw weights under it."""
    l = 200
    w = np.zeros(l)
    kept = np.r_[np.arange(0, l, 10), np.arange(190, l)]
    w[kept] = np.linspace(0.6, 6.0, kept.size)
    raw = np.where(w > 0, w, 0.3)
    pin = np.where(np.arange(l) % 7 == 0, 2.0, 0.0) if pinned else None
    return plots.member_weights(w, np.full(l, 0.7), 0.476, raw=raw, pinned=pin)


@pytest.mark.parametrize("width", [500, 810, 1100])  # narrow; the Explorer at 1280, 1920 px
@pytest.mark.parametrize("pinned", [False, True])
def test_weights_legend_and_threshold_value_stay_off_the_bars(page, width, pinned):
    drawn = _draw(page, _crowded_weights(pinned), width=width)
    plot, legend = drawn["plot_box"], drawn["legend_box"]
    # The threshold's value is in the legend, and no text is drawn on a bar.
    assert "threshold 0.476" in drawn["legend_texts"]
    assert len(drawn["bar_boxes"]) == 200
    for text, box in drawn["texts"]:
        assert not any(_overlap(box, bar) for bar in drawn["bar_boxes"]), text
        if "threshold" in text:
            assert not _overlap(box, plot), text
    # The legend is between the title and the plot: nothing of it under the plot, where
    # it split the weights from the strip of the same trees drawn right under them.
    assert drawn["title"][1] <= legend[1] and legend[3] <= plot[1]


def test_weights_under_a_pixel_are_not_drawn(page):
    # An axis up to 8 * 1.05 on a ~260 px plot: one pixel is about 0.032.  Raw weights of
    # 0.01 (Plotly drew each a pixel tall, a row of them a thick baseline) draw nothing;
    # 0.3 draws about 8 px.
    l = 40
    w = np.zeros(l)
    w[0] = 8.0
    raw = np.where(np.arange(l) < 20, 0.3, 0.01)
    raw[0] = 8.0
    drawn = _draw(page, plots.member_weights(w, np.full(l, 0.7), 0.476, raw=raw), width=810)
    heights = [b[1] for b in drawn["bars"]]
    one_unit = drawn["plot"][1] / 8.4
    assert sorted(h > 0 for h in heights).count(True) == 20  # tree 0 and the 19 raw 0.3s
    assert sorted(heights)[-2] == pytest.approx(0.3 * one_unit, abs=1)
    # Hover still gives a weight drawn at zero height: pointing at its tree's x.
    x0, y0 = drawn["plot_box"][:2]
    page.mouse.move(x0 + (30 + 0.5) / l * drawn["plot"][0], y0 + drawn["plot"][1] - 2)
    page.wait_for_timeout(200)
    hover = page.evaluate("() => [...document.querySelectorAll('.hoverlayer text')]"
                          ".map((t) => t.textContent).join(' ')")
    page.mouse.move(0, 0)
    assert "tree 30" in hover and "before the threshold 0.01" in hover, hover


def test_frontier_legend_choices_survive_a_new_figure_in_the_same_chart(page):
    # A reader shows WMV and hides random subsets from the legend; a new figure (another
    # second sweep and accuracy) drawn into the same chart by Plotly.react keeps both
    # choices, as the figures share their uirevision and their traces' uids.
    import pandas as pd

    wmv = {"method": "WMV", "params": "", "n_selected": 50, "sparsity": 0.0,
           "val_accuracy": 0.85, "test_accuracy": 0.8}
    peers = pd.concat([_peers_frame(), pd.DataFrame([wmv])], ignore_index=True)
    first = plots.frontier(_sweep_frame(), fr.pareto(_sweep_frame()), peers)
    moved = _sweep_frame(second="beta")
    second = plots.frontier(moved, fr.pareto(moved), peers, second="beta",
                            accuracy="val_accuracy")
    tab = page.context.browser.new_page()
    try:
        tab.set_content(f"<div id='gd' style='width: {WIDTH}px'></div>")
        tab.add_script_tag(path=str(PLOTLY_JS))
        tab.evaluate("async (spec) => { const f = JSON.parse(spec); "
                     "await Plotly.newPlot('gd', f.data, f.layout); }",
                     pio.to_json(first, validate=False))
        legend = tab.locator(".legend .traces")
        for name in ("WMV", "random subsets"):
            legend.filter(has_text=name).first.locator(".legendtoggle").click()
            tab.wait_for_timeout(600)  # two quick clicks would be a double click
        visible = """(name) => document.getElementById('gd')._fullData
            .filter((t) => t.name === name).map((t) => t.visible)"""
        assert tab.evaluate(visible, "WMV") == [True]
        tab.evaluate("async (spec) => { const f = JSON.parse(spec); "
                     "await Plotly.react('gd', f.data, f.layout); }",
                     pio.to_json(second, validate=False))
        assert tab.evaluate("() => document.getElementById('gd').layout.yaxis.title.text") \
            == "validation accuracy"
        assert tab.evaluate(visible, "WMV") == [True]
        assert tab.evaluate(visible, "random subsets") == ["legendonly"]
    finally:
        tab.close()


def test_explorer_legend_choices_last_while_the_view_does(page):
    # The reader hides the dropped trees from the weights chart's legend and zooms; the next
    # λ's figure (other counts in the trace names) keeps them hidden and is drawn whole;
    # another dataset's view shows them.
    from dashboard import charts

    acc = np.array([0.6, 0.7, 0.8, 0.9])
    first = plots.member_weights(np.array([0.5, 0.0, 1.2, 0.3]), acc, 0.3)
    moved = plots.member_weights(np.array([0.5, 0.4, 0.0, 0.0]), acc, 0.3)
    draw = """async ([js, spec, height, config, view]) => {
      window.__component = window.__component ||
        (await import('data:text/javascript,' + encodeURIComponent(js))).default;
      const parent = document.getElementById('parent');
      window.__component({data: {spec, height, config, src: '', view}, parentElement: parent});
      const gd = parent.querySelector('div.sdwec-chart');
      await gd.__sdwecQueue;
      return gd._fullData.map((t) => t.visible);
    }"""
    tab = page.context.browser.new_page()
    try:
        tab.set_content(f"<div id='parent' style='width: {WIDTH}px'></div>")
        tab.add_script_tag(path=str(PLOTLY_JS))

        def shown(fig, view):
            return tab.evaluate(draw, [live.JS, charts.figure_spec(fig), 300, charts.CONFIG,
                                       view])

        assert shown(first, "sonar binary") == [True, True, True]
        tab.locator(".legend .traces").filter(has_text="dropped").locator(
            ".legendtoggle").click()
        tab.wait_for_timeout(600)  # two quick clicks would be a double click
        assert tab.evaluate("() => document.querySelector('div.sdwec-chart')._fullData"
                            ".map((t) => t.visible)") == [True, "legendonly", True]
        # The reader zooms; the next figure is drawn whole again, the legend choice kept.
        x_range = "() => document.querySelector('div.sdwec-chart')._fullLayout.xaxis.range"
        whole = tab.evaluate(x_range)
        box = tab.locator("div.sdwec-chart .nsewdrag").first.bounding_box()
        tab.mouse.move(box["x"] + 10, box["y"] + 10)
        tab.mouse.down()
        tab.mouse.move(box["x"] + box["width"] / 3, box["y"] + box["height"] / 2, steps=5)
        tab.mouse.up()
        assert tab.evaluate(x_range)[1] < whole[1] - 1  # zoomed in
        assert shown(moved, "sonar binary") == [True, "legendonly", True]
        assert tab.evaluate(x_range) == whole
        assert shown(first, "wine binary") == [True, True, True]
        # No Plotly notice is left over the page after the legend click.
        assert tab.locator(".notifier-note").count() == 0
    finally:
        tab.close()
