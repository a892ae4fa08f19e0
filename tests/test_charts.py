"""The Explorer's in-place charts (dashboard/charts.py): the Plotly.js copy, the figure JSON,
and the element identity that lets a rerun update a chart instead of replacing it."""

import base64
import json
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest

from dashboard import charts, live
from harness.apptest_charts import chart_nodes
from harness.common import CHART_COMPONENT, CHARTS

APP = str(Path(__file__).resolve().parent.parent / "app.py")
SOURCE = Path(charts.BUNDLE.path)


def test_plotly_js_is_copied_once(tmp_path):
    target = charts.ensure_plotly_js(tmp_path / "static")
    assert target == tmp_path / "static" / charts.PLOTLY_JS
    assert target.read_bytes() == SOURCE.read_bytes()
    stamp = target.stat().st_mtime_ns
    assert charts.ensure_plotly_js(tmp_path / "static") == target
    assert target.stat().st_mtime_ns == stamp  # not written again
    assert [p.name for p in target.parent.iterdir()] == [charts.PLOTLY_JS]  # no temp file left


def test_a_stale_copy_is_replaced(tmp_path):
    (tmp_path / charts.PLOTLY_JS).write_text("old plotly")
    target = charts.ensure_plotly_js(tmp_path)
    assert target.stat().st_size == SOURCE.stat().st_size


def test_an_unwritable_place_gives_none(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert charts.ensure_plotly_js(blocker / "static") is None


def test_the_benchmarks_find_these_charts():
    assert CHART_COMPONENT == charts.COMPONENT
    assert ".sdwec-chart.js-plotly-plot" in CHARTS  # the div the component's script draws into
    assert "gd.className = 'sdwec-chart'" in live.JS


def test_the_static_copy_is_ignored_by_git():
    ignore = (Path(charts.STATIC_DIR) / ".gitignore").read_text().split()
    assert charts.PLOTLY_JS in ignore


def test_figure_spec_keeps_the_data_and_replaces_the_template():
    y = np.array([0.5, 0.25, 0.125])
    fig = go.Figure(go.Bar(x=[1, 2, 3], y=y, name="w"), layout=dict(title="t", height=300))
    spec = json.loads(charts.figure_spec(fig))
    assert spec["layout"]["template"] == charts.TEMPLATE
    # The figures' margins are small: the axes must make room for their labels.
    assert charts.TEMPLATE["layout"]["xaxis"]["automargin"] is True
    assert charts.TEMPLATE["layout"]["yaxis"]["automargin"] is True
    assert spec["layout"]["title"]["text"] == "t" and spec["layout"]["height"] == 300
    (trace,) = spec["data"]
    assert trace["type"] == "bar" and trace["x"] == [1, 2, 3]
    # plotly.py may pack numpy arrays as base64 typed arrays; either way the values survive.
    values = trace["y"]
    if isinstance(values, dict):
        values = np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"])
    np.testing.assert_array_equal(values, y)
    assert fig.layout.template.layout.font.family != charts.TEMPLATE["layout"]["font"]["family"]



def _explorer_figures():
    """Every figure the Explorer draws in place, with NaN, typed arrays and frames."""
    from sdwec import plots
    from sdwec.solver import IterationRecord

    rng = np.random.default_rng(0)
    weights = np.where(rng.random(60) < 0.2, rng.random(60), 0.0)
    accuracy = rng.random(60)
    accuracy[3] = np.nan
    history = [IterationRecord(iteration=i, nonconvex_cost=3.0 / i + (i == 3),
                               relaxed_cost=2.0 / i, n_selected=30 - i,
                               weights=weights * i) for i in range(1, 5)]
    rows = [dict(method=m, test=0.8, validation=0.9, test_sd=0.05, validation_sd=0.0,
                 splits=10, used="200 / 200") for m in ("SDWEC", "bagging", "WMV", "single")]
    return [plots.member_weights(weights, accuracy, 0.3, pinned=weights / 2,
                                 raw=weights + 0.01),
            plots.tree_accuracies(accuracy), plots.method_comparison(rows), plots.convergence(history),
            plots.convergence(history, log_y=True),
            plots.weights_over_iterations(history, [np.full(60, 0.3)] * 4, accuracy),
            go.Figure([go.Bar(x=[1, 2], y=np.array([0.5, np.inf])),
                       # Integers narrowed as plotly.py narrows them, or left as they are.
                       go.Scatter(x=np.arange(300), y=np.array([3, 300, 2**40]),
                                  customdata=np.array([1, 70000], dtype=np.uint64),
                                  text=np.arange(3, dtype=np.float32)[::-1])])]


def test_figure_spec_is_plotly_s_own_json_with_the_template_replaced():
    import plotly.io as pio

    for fig in _explorer_figures():
        # The reference: plotly.py's serialization, its template swapped for ours.
        expected = json.loads(pio.to_json(fig, validate=False))
        expected["layout"]["template"] = charts.TEMPLATE
        for sent, trace in zip(expected["data"], fig.data):  # uids kept (the next test)
            if trace.uid is not None:
                sent["uid"] = trace.uid
        spec = charts.figure_spec(fig)
        assert json.loads(spec) == expected, fig.layout.title.text
        assert "NaN" not in spec and "Infinity" not in spec  # strict JSON for JSON.parse


def test_figure_spec_keeps_a_trace_uid_for_plotly_to_match_traces_by():
    # plotly.py's JSON drops uids; the in-place charts keep them, so a fixed uirevision
    # keeps a trace's legend state when other traces come or go.
    fig = go.Figure([go.Bar(x=[1], y=[2], uid="SDWEC"), go.Bar(x=[1], y=[3])],
                    layout=dict(uirevision="frontier"))
    spec = json.loads(charts.figure_spec(fig))
    assert [t.get("uid") for t in spec["data"]] == ["SDWEC", None]
    assert spec["layout"]["uirevision"] == "frontier"


def _chart_elements(at):
    """The in-place charts' element messages, in page order."""
    return [node.proto for node in chart_nodes(at) if node.type == "bidi_component"]


@pytest.mark.usefixtures("fresh_streamlit")
def test_a_slider_move_updates_the_same_chart_elements():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"dataset": "wine", "l": "10"})
    at.run()
    assert not at.exception
    before = _chart_elements(at)
    assert len(before) == 4  # accuracy, costs, weights, the trees' accuracies
    at.select_slider(key="cfg_lam").set_value(1000.0).run()
    assert not at.exception
    after = _chart_elements(at)
    # Same element ids (so the page keeps the chart and Plotly updates it in place) ...
    assert [e.id for e in after] == [e.id for e in before]
    # ... carrying the new figures: the weights changed with λ.
    weights = [json.loads(json.loads(e.json)["spec"]) for e in (before[2], after[2])]
    assert weights[0]["data"] != weights[1]["data"]
    # The trees' own accuracies under the weights do not depend on λ: the same figure,
    # which the in-place chart does not draw again.
    assert json.loads(after[3].json)["spec"] == json.loads(before[3].json)["spec"]
    data = json.loads(after[0].json)
    assert data["src"] == charts.PLOTLY_URL and data["height"] > 0

