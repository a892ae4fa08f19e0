"""The load test's websocket client (``harness/wsclient.py``).

Its encodings are checked against Streamlit's own protobuf classes and the values the
dashboard's widgets take; its error detection against a tiny app that shows each kind of
problem a user could see, served by a real ``streamlit run``.
"""

import asyncio
import json

import pytest
from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.Delta_pb2 import Delta
from streamlit.proto.Slider_pb2 import Slider

from harness import load
from harness.wsclient import Run, Session, Widget, widget_state


def _delta(kind, **fields):
    delta = Delta()
    body = getattr(delta.new_element, kind)
    for name, value in fields.items():
        if isinstance(value, (list, tuple)):
            getattr(body, name).extend(value)
        else:
            setattr(body, name, value)
    return delta


def _read(*deltas):
    run, widgets = Run(seconds=0.0, status="", query=""), {}
    for delta in deltas:
        Session._delta(delta, run, widgets)
    return run, widgets


def test_widget_states_are_encoded_as_the_browser_sends_them():
    lam = widget_state(Widget("select_slider", "a", "λ", ("0.5", "1", "2")), "2")
    assert lam.id == "a" and lam.WhichOneof("value") == "string_array_value"
    assert list(lam.string_array_value.data) == ["2"]
    beta = widget_state(Widget("slider", "b", "β", low=0, high=100, step=1), 16)
    assert beta.WhichOneof("value") == "double_array_value"
    assert list(beta.double_array_value.data) == [16.0]
    box = widget_state(Widget("selectbox", "c", "Dataset", ("wine", "sonar")), "sonar")
    assert box.WhichOneof("value") == "string_value" and box.string_value == "sonar"
    seed = widget_state(Widget("number_input", "d", "Split seed", integer=True), 3)
    assert seed.WhichOneof("value") == "int_value" and seed.int_value == 3
    with pytest.raises(ValueError, match="cannot set a button"):
        widget_state(Widget("button", "e", "SDWEC-A"), True)


def test_deltas_give_the_widgets_on_the_page():
    run, widgets = _read(
        _delta("slider", id="s1", label="λ", options=["0.5", "1"], type=Slider.SELECT_SLIDER),
        _delta("slider", id="s2", label="β", min=0, max=100, step=1, type=Slider.SLIDER),
        _delta("selectbox", id="s3", label="Dataset", options=["wine", "sonar"]))
    assert widgets["λ"] == Widget("select_slider", "s1", "λ", ("0.5", "1"))
    assert widgets["β"] == Widget("slider", "s2", "β", low=0, high=100, step=1)
    assert widgets["Dataset"].options == ("wine", "sonar")
    assert run.problems == [] and run.charts == 0


def test_deltas_show_every_problem_a_user_would_see():
    chart = json.dumps({"data": [{"type": "bar", "y": [1]}], "layout": {}})
    empty = json.dumps({"data": [], "layout": {}})
    run, _ = _read(_delta("plotly_chart", spec=chart), _delta("plotly_chart", spec=empty),
                   _delta("plotly_chart", spec="not json"),
                   _delta("alert", body="careful", format=Alert.WARNING))
    assert run.charts == 1 and run.problems == []  # empty or broken figures do not count
    run, _ = _read(_delta("alert", body="it broke", format=Alert.ERROR),
                   _delta("exception", type="ValueError", message="bad"),
                   _delta("markdown", body="Traceback (most recent call last):"))
    assert len(run.problems) == 3
    assert run.problems[0] == "st.error: it broke"
    assert run.problems[1].startswith("exception box: ValueError")
    assert "Traceback" in run.problems[2]


def test_next_value_takes_one_step_and_stays_in_range():
    lam = Widget("select_slider", "a", "λ", ("0.5", "1", "2"))
    assert load._next_value(lam, "1", "ArrowRight") == "2"
    assert load._next_value(lam, "1", "ArrowLeft") == "0.5"
    assert load._next_value(lam, "2", "ArrowRight") == "2"
    beta = Widget("slider", "b", "β", low=0.0, high=100.0, step=1.0)
    assert load._next_value(beta, "15", "ArrowLeft") == 14.0
    assert load._next_value(beta, "100", "ArrowRight") == 100.0


def test_served_flags_missing_charts_and_requests_not_applied():
    params = ("wine", "binary", "0", "20", "1", "15", "15", "1", "25", "paper")
    other = ("sonar",) + params[1:]
    n = load.N_CHARTS
    assert load._served("dataset", {"dataset": "wine"}, other, params, [], n) == []
    problems = load._served("dataset", {"dataset": "sonar"}, other, params, [], n - 1)
    assert f"{n - 1} of {n} charts arrived with data" in problems
    assert any("did not apply dataset" in p for p in problems)
    assert load._served("slider:lam", None, params, params, [], n) == [
        "the slider move changed nothing"]
    assert load._served("url", {}, None, None, ["st.error: x"], n) == [
        "st.error: x", "the page address lacks the configuration"]


BROKEN_APP = '''
import plotly.graph_objects as go
import streamlit as st

mode = st.query_params.get("mode", "fine")
st.selectbox("Mode", ["fine", "error", "raise"], key="mode_box")
st.plotly_chart(go.Figure(go.Bar(y=[1, 2])), key="chart")
if mode == "error" or st.session_state.mode_box == "error":
    st.error("something is wrong")
if mode == "raise" or st.session_state.mode_box == "raise":
    raise RuntimeError("boom")
'''


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_client_against_a_real_server_sees_what_a_user_sees(tmp_path):
    script = tmp_path / "broken_app.py"
    script.write_text(BROKEN_APP)

    async def scenario(url):
        async with Session(url, timeout=60) as client:
            fine = await client.open("mode=fine")
            error = await client.set("Mode", "error")
            raised = await client.set("Mode", "raise")
            back = await client.set("Mode", "fine")
            reopened = await client.open("mode=raise")
        return fine, error, raised, back, reopened

    with load.Server(script=script, log_dir=tmp_path) as server:
        fine, error, raised, back, reopened = asyncio.run(scenario(server.url))
    assert fine.status == "FINISHED_SUCCESSFULLY" and fine.problems == [] and fine.charts == 1
    assert fine.query == "mode=fine" and set(fine.widgets) == {"Mode"}
    assert fine.seconds > 0
    assert error.problems == ["st.error: something is wrong"]
    # The app's config hides the details of an uncaught exception; the box still shows.
    assert len(raised.problems) == 1 and raised.problems[0].startswith("exception box")
    assert back.problems == []
    assert reopened.problems and reopened.problems[0].startswith("exception box")
