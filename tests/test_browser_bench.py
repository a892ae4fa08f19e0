"""The browser latency benchmark (``harness/browser.py``), reduced to a correctness check.

The browser part runs the benchmark's own functions on sonar (l = 20, 1 sample per control,
this checkout) in Debian's Chromium and checks what every sample saw: the charts the run changed
were drawn with the figure the server sent, every chart shows its run's figure, the page's
address followed each move, no error box.  No timing is asserted (speed lives in
``results/browser.md``).  The pure parts (trace and profile accounting, the slider walk, the
message decoding, the report) are checked against hand-built inputs without a browser.

The floor page (``--floor``) is timed by the same code as the app, so the browser run leaves it
out (it would double the run); what is its own is checked apart: the page draws the Explorer's
four charts (AppTest), it is served from its checkout, and the report sets it beside its app.
"""

import json
import os
import shutil

import pytest

from dashboard.config import LAMBDA_GRID, config_from_query
from harness import browser, load

N_CHARTS = load.N_CHARTS  # Plotly charts on the Explorer (timing is drawn on request)
# One timed sample per control exercises each control's path; the λ and k sliders still move
# twice (the warm-up move, the move before each switch), and every move is compared with the
# address shown before it.
MOVES = 1


@pytest.fixture(scope="module")
def outcome(tmp_path_factory):
    # A missing browser is a failure, not a skip: scripts/test.sh installs Debian's chromium.
    if shutil.which("chromium") is None:
        pytest.fail("Debian's chromium is not installed: run `apt-get install chromium` "
                    "(scripts/test.sh does this)")
    settings = browser.Settings(app_dirs=(str(browser.ROOT),), datasets=("sonar",), n_trees=20,
                                moves=MOVES, warmup=1, trace=True, floor=False,
                                cache_dir=str(tmp_path_factory.mktemp("pools")))
    raw = tmp_path_factory.mktemp("raw") / "browser.json"
    result = browser.measure(settings, log=lambda *args: None, out_json=raw)
    result.raw_path = raw
    return result


def _labels(outcome):
    return [app.label for app in outcome.apps]


@pytest.mark.browser
def test_the_app_is_traced_and_scrubbed(outcome):
    (app,) = outcome.apps
    assert app.script == "app.py" and not app.floor
    assert [t["app"] for t in outcome.traces] == [s["app"] for s in outcome.scrubs] == [app.label]


@pytest.mark.browser
def test_every_control_is_sampled(outcome):
    for label in _labels(outcome):
        timed = [s for s in outcome.samples if s.timed and s.app == label]
        for control in browser.CONTROLS:
            assert sum(s.control == control for s in timed) == MOVES, (label, control)
        assert [s.dataset for s in timed if s.control == "first"] == ["sonar"]
    # The first sonar page at l = 20 read its pool from disk (the warm-up used l = 10).
    assert [s.cold for s in outcome.samples if s.timed and s.control == "first"] == [True]


@pytest.mark.browser
def test_every_sample_drew_every_changed_chart(outcome):
    for s in outcome.samples:  # the untimed set-up steps too
        where = (s.control, s.value, s.problems)
        assert s.problems == [], where
        assert s.charts == N_CHARTS, where
        assert len(s.chart_bytes) == N_CHARTS, where
        assert s.changed, where  # every action here changes at least one chart
        assert s.drawn == s.changed, where
        assert s.ms is not None and s.ok, where
        # The phases are in causal order (no speed is asserted); a key press comes before the
        # run it starts.
        assert s.start_ms <= s.finished_ms <= s.ms, where
        if s.control in browser.SLIDERS or s.control == "switch":
            assert s.start_ms >= 0, where
        assert s.charts_ms <= s.painted_ms <= s.ms, where
        assert s.bytes >= sum(s.chart_bytes) > 0, where


@pytest.mark.browser
def test_a_new_session_redraws_every_chart(outcome):
    for s in outcome.samples:
        if s.control in ("load", "first", "warm-up", "switch"):
            assert s.changed == list(range(N_CHARTS)), (s.control, s.value)


@pytest.mark.browser
def test_the_address_followed_every_action(outcome):
    for label in _labels(outcome):
        last, before = {}, {}
        for s in (s for s in outcome.samples if s.app == label):
            shown = browser.query_of(s.url)
            for key, value in s.expected.items():
                assert browser._same(shown.get(key), value), (label, s.control, key, shown)
            if s.control in browser.SLIDERS:
                # Each move reached a new value of its slider: not its last move's, nor the
                # value the address showed before the move.
                assert s.value != last.get(s.control), (label, s.control, s.value)
                assert not browser._same(before.get(s.control), s.value), (label, s.control,
                                                                           before, s.value)
                last[s.control] = s.value
            if s.control == "load":
                # The shared link set another configuration than the page showed before it.
                assert any(not browser._same(before.get(key), value)
                           for key, value in s.expected.items()), (label, before, shown)
            before = shown
        loads = [s for s in outcome.samples if s.control == "load" and s.app == label]
        assert len({s.url for s in loads}) == MOVES  # distinct shared links


@pytest.mark.browser
def test_trace_and_profile_of_a_move(outcome):
    (trace,) = outcome.traces
    assert "error" not in trace and "error" not in trace["trace"], trace
    assert trace["dataset"] == "sonar"
    # From the link to TRACE_START (λ = 5) and two untimed moves: λ 20 -> 50, then 50 -> 100.
    for move, value in ((trace["traced"], "50"), (trace["profiled"], "100")):
        assert move["problems"] == [] and move["control"] == "lam", move
        assert move["value"] == value and move["changed"], move
    kinds = trace["trace"]["kinds"]
    assert set(kinds) == set(browser.KIND_NAMES)
    assert kinds["scripting"] > 0  # the move ran JavaScript on the page's main thread
    assert trace["trace"]["busy_ms"] == pytest.approx(sum(kinds.values()))
    scripts = trace["profile"]["scripts"]
    assert scripts.get(browser.PLOTLY_SCRIPT, 0) > 0  # Plotly.js ran
    assert trace["json_parse_ms"] >= 0


@pytest.mark.browser
def test_the_scrubber_is_dragged_without_the_server(outcome):
    (scrub,) = outcome.scrubs
    assert "error" not in scrub, scrub
    assert scrub["dataset"] == "sonar" and scrub["frames"] == len(LAMBDA_GRID)
    assert len(scrub["passes"]) == browser.SCRUB_PASSES
    for drag in scrub["passes"]:
        # Every drag ends on the last λ; each redraw showed a λ the drag asked for.
        assert 1 <= drag["redraws"] <= len(LAMBDA_GRID) - 1 and drag["ms"] > 0
        assert len(drag["lag"]) <= drag["redraws"]
    assert scrub["messages"] == 0  # no rerun, no round trip
    assert scrub["fps"] > 0


@pytest.mark.browser
def test_report_and_raw_samples(outcome, tmp_path):
    text = browser.report(outcome, "python -m benchmarks.browser --datasets sonar")
    assert "| sonar |" in text and "## Against the latency targets" in text
    assert "## Scrubbing λ in the page" in text
    assert "python -m benchmarks.browser --datasets sonar" in text
    again = browser.read_json(outcome.raw_path)
    assert len(again.samples) == len(outcome.samples)
    assert again.apps == outcome.apps
    assert browser.report(again, "python -m benchmarks.browser --datasets sonar") == text


# --------------------------------------------------------------------------- the floor page


def test_the_floor_follows_its_checkout_and_is_served_from_it(tmp_path):
    app, floor = browser.make_apps([browser.ROOT], floor=True)
    assert (app.script, floor.script) == ("app.py", browser.FLOOR_SCRIPT)
    assert floor.label == f"{app.label} floor" and floor.directory == app.directory
    assert not app.floor and floor.floor
    server = browser.AppServer(floor, tmp_path / "pools", tmp_path)
    # Its script is below the checkout, which the page imports from.
    assert server.command()[3:5] == ["run", browser.FLOOR_SCRIPT]
    assert server.cwd == app.directory and server.env["PYTHONPATH"] == str(app.directory)
    app_env = browser.AppServer(app, tmp_path / "pools", tmp_path).env
    assert app_env.get("PYTHONPATH") == os.environ.get("PYTHONPATH")


def test_the_floor_page_draws_the_explorers_four_charts(fresh_streamlit):
    from streamlit.testing.v1 import AppTest

    from harness.apptest_charts import chart_figures

    query = {"dataset": "wine", "l": "10", "r": "1"}
    figures = {}
    for script in ("app.py", browser.FLOOR_SCRIPT):
        at = AppTest.from_file(str(browser.ROOT / script), default_timeout=120)
        at.query_params.update(query)
        at.run()
        assert not at.exception and not at.error, (script, at.exception, at.error)
        figures[script] = chart_figures(at)
    # The same sidebar, computation and charts: its figures are the Explorer's first four.
    assert len(figures[browser.FLOOR_SCRIPT]) == N_CHARTS
    assert figures[browser.FLOOR_SCRIPT] == figures["app.py"][:N_CHARTS]


def test_the_report_sets_the_floor_beside_its_app(outcome):
    import dataclasses

    (app,) = outcome.apps
    floor = browser.App(f"{app.label} floor", app.directory, app.commit, browser.FLOOR_SCRIPT)
    # The app's own samples, as if its floor had drawn them.
    with_floor = dataclasses.replace(
        outcome, apps=[app, floor],
        samples=outcome.samples + [dataclasses.replace(s, app=floor.label)
                                   for s in outcome.samples])
    text = browser.report(with_floor, "python -m benchmarks.browser --datasets sonar --floor")
    assert f"### Ratio {floor.label} / {app.label}" in text
    assert f"its floor page `{browser.FLOOR_SCRIPT}`" in text


# --------------------------------------------------------------------------- no browser


def test_self_times_of_nested_events():
    # A [0, 100] holds B [10, 40] (which holds D [20, 30]) and C [50, 60].
    events = [{"name": "A", "ts": 0, "dur": 100}, {"name": "B", "ts": 10, "dur": 30},
              {"name": "C", "ts": 50, "dur": 10}, {"name": "D", "ts": 20, "dur": 10}]
    assert browser._self_times(events) == {"A": 60, "B": 20, "C": 10, "D": 10}


def test_kinds_of_trace_events():
    assert browser.kind_of("V8.GC_SCAVENGER_SCAVENGE_PARALLEL") == "garbage collection"
    assert browser.kind_of("FunctionCall") == "scripting"
    assert browser.kind_of("RunMicrotasks") == "scripting"
    assert browser.kind_of("Document::recalcStyle") == "style and layout"
    assert browser.kind_of("LocalFrameView::RunPrePaintLifecyclePhase") == "style and layout"
    assert browser.kind_of("Paint") == "paint and composite"
    assert browser.kind_of("RunTask") == "other"


def test_trace_window_starts_at_the_key_press():
    mark = {"name": "bench-input", "ph": "I", "pid": 1, "tid": 1, "ts": 1000}
    events = [
        {"name": "thread_name", "ph": "M", "pid": 1, "tid": 1,
         "args": {"name": "CrRendererMain"}},
        mark,
        {"name": "FunctionCall", "ph": "X", "pid": 1, "tid": 1, "ts": 500, "dur": 1000},
        {"name": "Layout", "ph": "X", "pid": 1, "tid": 1, "ts": 3000, "dur": 4000},
        {"name": "Paint", "ph": "X", "pid": 1, "tid": 1, "ts": 9000, "dur": 1000},
        {"name": "FunctionCall", "ph": "X", "pid": 2, "tid": 1, "ts": 2000, "dur": 5000},
        {"name": "RasterTask", "ph": "X", "pid": 1, "tid": 7, "ts": 2000, "dur": 2000},
    ]
    out = browser.summarise_trace({"traceEvents": events}, window_ms=5.0)  # 1000..6000 µs
    # FunctionCall is cut to 1000..1500, Layout to 3000..6000; Paint and pid 2 are outside.
    assert out["kinds"]["scripting"] == pytest.approx(0.5)
    assert out["kinds"]["style and layout"] == pytest.approx(3.0)
    assert out["kinds"]["paint and composite"] == 0
    assert out["busy_ms"] == pytest.approx(3.5)
    assert out["raster_ms"] == pytest.approx(2.0)


def test_profile_counts_a_native_call_with_its_script():
    url = "http://127.0.0.1/static/js/"
    nodes = [
        {"id": 1, "callFrame": {"functionName": "(root)", "url": ""}, "children": [2, 4, 5]},
        {"id": 2, "callFrame": {"functionName": "draw", "url": url + "PlotlyChart.ab12.js"},
         "children": [3]},
        {"id": 3, "callFrame": {"functionName": "getBoundingClientRect", "url": ""}},
        {"id": 4, "callFrame": {"functionName": "(idle)", "url": ""}},
        {"id": 5, "callFrame": {"functionName": "render", "url": url + "react-dom.cd34.js"}},
    ]
    # A sample's time is the gap to the next one: 100, 200, 300, 400, 0 µs.
    profile = {"nodes": nodes, "samples": [2, 3, 3, 4, 5],
               "timeDeltas": [0, 100, 200, 300, 400]}
    out = browser.summarise_profile(profile)
    assert out["scripts"] == pytest.approx({browser.PLOTLY_SCRIPT: 0.6, "(idle)": 0.4,
                                            "react-dom": 0.0})
    assert out["native"] == pytest.approx({browser.PLOTLY_SCRIPT: 0.5})
    assert out["busy_ms"] == pytest.approx(0.6)


def test_sliders_walk_one_way_and_turn_at_the_end():
    assert browser.slider_step("lam", "0.1") == ("0.2", "ArrowRight", 1)
    assert browser.slider_step("lam", "1000", 1) == ("500", "ArrowLeft", -1)
    assert browser.slider_step("eps", "1") == ("0.5", "ArrowLeft", -1)  # more room below
    assert browser.slider_step("k", "25") == ("26", "ArrowRight", 1)
    assert browser.slider_step("beta", "100") == ("99", "ArrowLeft", -1)
    # From START, with the default 10 samples, every move reaches a value not seen before:
    # λ also takes the 2 warm-up moves, k 10 more before the dataset switches.
    values = dict(browser.START)
    for key, moves in {"lam": 12, "beta": 10, "gamma": 10, "eps": 10, "k": 20}.items():
        step, seen = None, {values[key]}
        for _ in range(moves):
            values[key], _, step = browser.slider_step(key, values[key], step)
            seen.add(values[key])
        assert len(seen) == moves + 1, key


def test_shared_links_are_valid_and_reproducible():
    for i in range(5):
        query = browser.link_query("wine", i, 200)
        assert query == browser.link_query("wine", i, 200)
        config, problems = config_from_query({"dataset": "wine", **query})
        assert problems == [] and config.n_trees == 200
    assert browser.link_query("wine", 0, 200) != browser.link_query("wine", 1, 200)


def test_partner_datasets():
    assert browser.partner_of("sonar", ("sonar",)) == "wine"
    assert browser.partner_of("wine", ("wine",)) == "sonar"
    names = ("breast", "heart", "nsl_kdd")
    assert [browser.partner_of(d, names) for d in names] == ["heart", "breast", "heart"]


def test_chart_messages_resolve_cached_references():
    import base64

    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    def message(path, hash_=None, spec=None, ref=None, kind="plotly_chart"):
        msg = ForwardMsg()
        msg.metadata.delta_path[:] = path
        if ref is not None:
            msg.ref_hash = ref
        else:
            msg.hash = hash_
            element = msg.delta.new_element
            if kind == "plotly_chart":
                element.plotly_chart.spec = spec
            else:
                element.markdown.body = "text"
        data = msg.SerializeToString()
        return {"data": base64.b64encode(data).decode(), "n": len(data)}

    spec = json.dumps({"data": [{"x": [1, 2], "y": [3, 4]}]})
    msgs = [message([0, 5, 0, 0], "h1", spec), message([0, 4], "m1", kind="markdown"),
            message([1, 2], "s1", spec)]  # a sidebar chart is not the Explorer's
    known = {}
    charts, unknown = browser._chart_messages(msgs, 0, known)
    assert unknown == 0 and list(charts) == [(0, 5, 0, 0)]
    assert charts[(0, 5, 0, 0)][:2] == ("h1", spec)
    # The next run sends the same chart as a reference, one place further down.
    again = [message([0, 6, 0, 0], ref="h1"), message([0, 7], ref="nope")]
    charts, unknown = browser._chart_messages(again, 0, known)
    assert unknown == 1 and charts[(0, 6, 0, 0)][:2] == ("h1", spec)


def test_a_chart_is_compared_with_its_own_previous_message():
    import base64

    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    def chart(path, hash_, spec, key):
        msg = ForwardMsg()
        msg.metadata.delta_path[:] = path
        msg.hash = hash_
        element = msg.delta.new_element.bidi_component
        element.component_name = browser.CHART_COMPONENT
        element.json = json.dumps({"spec": spec})
        element.id = f"$$ID-77e1c0-{key}"  # Streamlit's id: prefix, hash, user key
        data = msg.SerializeToString()
        return {"data": base64.b64encode(data).decode(), "n": len(data)}

    def ref(path, hash_):
        msg = ForwardMsg()
        msg.metadata.delta_path[:] = path
        msg.ref_hash = hash_
        data = msg.SerializeToString()
        return {"data": base64.b64encode(data).decode(), "n": len(data)}

    known = {}
    first, _ = browser._chart_messages(
        [chart([0, 8, 0, 0], "a1", "A1", "explorer-methods"),
         chart([0, 8, 1, 1], "b1", "B1", "cost"), chart([0, 11], "c1", "C1", "weights")],
        0, known)
    assert [v[3] for _, v in sorted(first.items())] == [
        ("key", "explorer-methods"), ("key", "cost"), ("key", "weights")]
    previous = {v[3]: v[0] for v in first.values()}
    # A warning above the charts went away: every chart moved up one place; only the cost
    # chart's figure changed (the others are sent as references to their cached messages).
    moved, _ = browser._chart_messages(
        [ref([0, 7, 0, 0], "a1"), chart([0, 7, 1, 1], "b2", "B2", "cost"),
         ref([0, 10], "c1")], 0, known)
    assert browser.changed_charts(moved, previous) == [1]
    # The weights chart took the place where the costs' chart was: by place, it would count
    # as changed.
    swapped, _ = browser._chart_messages(
        [chart([0, 7, 0, 0], "a2", "A2", "explorer-methods"), ref([0, 7, 1, 1], "b1"),
         chart([0, 8], "c2", "C2", "weights")], 0, known)
    assert browser.changed_charts(swapped, previous) == [0, 2]
    assert browser.changed_charts(swapped, None) == [0, 1, 2]


def test_charts_without_a_key_are_compared_by_place():
    import base64

    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    def chart(path, hash_, spec):
        msg = ForwardMsg()
        msg.metadata.delta_path[:] = path
        msg.hash = hash_
        msg.delta.new_element.plotly_chart.spec = spec
        msg.delta.new_element.plotly_chart.id = f"$$ID-{hash_}-None"  # st.plotly_chart, no key
        data = msg.SerializeToString()
        return {"data": base64.b64encode(data).decode(), "n": len(data)}

    known = {}
    first, _ = browser._chart_messages([chart([0, 3], "x1", "X1"), chart([0, 4], "y1", "Y1")],
                                       0, known)
    previous = {v[3]: v[0] for v in first.values()}
    assert set(previous) == {("path", (0, 3)), ("path", (0, 4))}
    again, _ = browser._chart_messages([chart([0, 3], "x1", "X1"), chart([0, 4], "y2", "Y2")],
                                       0, known)
    assert browser.changed_charts(again, previous) == [1]
