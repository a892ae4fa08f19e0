"""A minimal Streamlit websocket client: one dashboard session without a browser.

It speaks the protocol the browser speaks, over ``ws://HOST:PORT/_stcore/stream``: binary
``BackMsg`` protobufs up (``rerun_script`` with the page's query string and the widget values
the user changed) and ``ForwardMsg`` protobufs down (the run's deltas, query-string updates,
``script_finished``).  The load test uses it so that ten sessions cost the server what ten
users cost it, without ten software-rendered Chromium instances competing with the server for
the same two cores.  What it leaves out is the browser's own work: parsing the JavaScript
bundle and drawing the charts.

Behind a proxy it keeps the cookies it is given and those the websocket's answer sets (as
a browser does: ``scripts/serve.sh``'s proxy names the replica holding the session in a
cookie), and it can ask for a deferred download's address (the browser's
``backend_operation_request``), which the caller then fetches over HTTP with those cookies.

A :class:`Run` is one script run as the client received it: how long it took from the request
to ``script_finished``, the widgets on the page (label -> :class:`Widget`), how many Plotly
charts arrived with data, and anything that would show an error to a user (an exception box,
an ``st.error`` box, the word "Traceback", a compile error).
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field

from harness.common import CHART_COMPONENT

#: Deltas for elements drawn by a run: element type -> field holding the user-visible text.
_TEXT_FIELDS = {"markdown": "body", "alert": "body", "exception": "message", "text": "body",
                "caption": "body"}


class ProtocolError(RuntimeError):
    """The server closed the session or answered something the client cannot follow."""


@dataclass
class Widget:
    """An input element as the server described it in a run's deltas."""

    kind: str  # "slider", "select_slider", "selectbox", "number_input", ...
    id: str
    label: str
    options: tuple = ()
    low: float | None = None
    high: float | None = None
    step: float | None = None
    integer: bool = False  # a number input holding integers
    file_id: str = ""  # a download button's deferred file (built on request)


@dataclass
class Run:
    """One script run as received by the client."""

    seconds: float  # from sending ``rerun_script`` to receiving ``script_finished``
    status: str  # the ``script_finished`` status name
    query: str  # the page's query string after the run
    widgets: dict = field(default_factory=dict)  # label -> Widget
    charts: int = 0  # Plotly charts whose figure has at least one trace
    problems: list = field(default_factory=list)
    messages: int = 0
    bytes: int = 0
    progress: list = field(default_factory=list)  # texts of the progress bars received


def _widget(kind, element):
    """A :class:`Widget` from an element proto (``None`` for elements that are not inputs)."""
    if kind == "slider":
        from streamlit.proto.Slider_pb2 import Slider

        if element.type == Slider.SELECT_SLIDER:
            return Widget("select_slider", element.id, element.label, tuple(element.options))
        return Widget("slider", element.id, element.label, low=element.min, high=element.max,
                      step=element.step)
    if kind == "selectbox":
        return Widget("selectbox", element.id, element.label, tuple(element.options))
    if kind == "number_input":
        from streamlit.proto.NumberInput_pb2 import NumberInput

        return Widget("number_input", element.id, element.label, low=element.min,
                      high=element.max, step=element.step,
                      integer=element.data_type == NumberInput.INT)
    if kind == "download_button":
        return Widget(kind, element.id, element.label, file_id=element.deferred_file_id)
    if kind in ("button", "checkbox", "radio", "file_uploader"):
        return Widget(kind, element.id, element.label)
    return None


def widget_state(widget, value):
    """The ``WidgetState`` proto that sets ``widget`` to ``value``, as the browser encodes it.

    Select sliders and select boxes send the option's text; sliders send a one-element list of
    floats; number inputs an integer or a float.
    """
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    state = WidgetState(id=widget.id)
    if widget.kind == "select_slider":
        state.string_array_value.data.append(str(value))
    elif widget.kind == "slider":
        state.double_array_value.data.append(float(value))
    elif widget.kind == "selectbox":
        state.string_value = str(value)
    elif widget.kind == "number_input" and widget.integer:
        state.int_value = int(value)
    elif widget.kind == "number_input":
        state.double_value = float(value)
    else:
        raise ValueError(f"cannot set a {widget.kind} widget")
    return state


def _chart_has_data(spec):
    try:
        figure = json.loads(spec)
    except ValueError:
        return False
    return bool(figure.get("data"))


class Session:
    """One dashboard session over a websocket (an ``async`` context manager).

    Parameters
    ----------
    url : str
        The server's address, ``http://HOST:PORT``.
    timeout : float
        Seconds a run may take before :class:`TimeoutError`.
    headers : dict, optional
        Extra HTTP headers of the websocket handshake.  A ``Cookie`` header seeds
        :attr:`cookies`.

    Attributes
    ----------
    session_id : str
        The server's id of the session (from its ``new_session`` message), as the browser
        puts it in upload addresses.
    response_headers : dict
        Headers of the server's (or proxy's) answer to the last websocket handshake (names
        in lower case).
    opened_at : float or None
        ``time.monotonic()`` when the last handshake was answered (the socket opened, before
        the page's first run).
    cookies : dict
        The cookies sent with the next handshake: those given, updated by every
        ``Set-Cookie`` of a handshake's answer.
    """

    def __init__(self, url, timeout=60.0, headers=None):
        self.url = url
        self.timeout = timeout
        self.headers = dict(headers or {})
        self.cookies = {}
        self.add_cookies(self.headers.pop("Cookie", ""))
        self.socket = None
        self.query = ""
        self.page_hash = ""
        self.widgets = {}
        self.session_id = ""
        self.response_headers = {}
        self.opened_at = None

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()

    async def close(self):
        if self.socket is not None:
            await self.socket.close()
            self.socket = None

    def add_cookies(self, header):
        """Keep the cookies of a ``Cookie`` header (``"a=1; b=2"``)."""
        for part in header.split(";"):
            name, sep, value = part.strip().partition("=")
            if sep:
                self.cookies[name] = value

    def cookie_header(self):
        """The ``Cookie`` header this client sends."""
        return "; ".join(f"{name}={value}" for name, value in self.cookies.items())

    async def open(self, query=""):
        """Load the app at ``/?query`` in a new session, as a page load does; return its run."""
        from http.cookies import SimpleCookie

        import websockets

        await self.close()
        address = self.url.replace("http://", "ws://", 1) + "/_stcore/stream"
        headers = dict(self.headers, **({"Cookie": self.cookie_header()} if self.cookies else {}))
        self.socket = await websockets.connect(address, subprotocols=["streamlit"],
                                               max_size=None, open_timeout=self.timeout,
                                               additional_headers=headers or None)
        self.opened_at = time.monotonic()
        raw = self.socket.response.headers
        self.response_headers = {name.lower(): value for name, value in raw.raw_items()}
        for value in raw.get_all("Set-Cookie"):
            jar = SimpleCookie()
            jar.load(value)
            self.cookies.update({name: morsel.value for name, morsel in jar.items()})
        self.query, self.page_hash, self.widgets = query, "", {}
        return await self._run([])

    async def set(self, label, value):
        """Change the widget labelled ``label`` to ``value`` (one user action); return the run."""
        if label not in self.widgets:
            raise ProtocolError(f"no widget labelled {label!r} on the page")
        return await self._run([widget_state(self.widgets[label], value)])

    async def deferred_url(self, label):
        """Ask the server to build the file of the download button labelled ``label`` (as a
        click does); return the address to fetch it from."""
        import uuid

        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        widget = self.widgets.get(label)
        if widget is None or not widget.file_id:
            raise ProtocolError(f"no deferred download labelled {label!r} on the page")
        message = BackMsg()
        request = message.backend_operation_request
        request.request_id = str(uuid.uuid4())
        request.session_id = self.session_id
        request.deferred_file.file_id = widget.file_id
        await self._send(message)
        limit = time.perf_counter() + self.timeout
        while True:
            msg = ForwardMsg.FromString(await self._next(limit, "answer to the download"))
            if msg.WhichOneof("type") != "backend_operation_response":
                continue
            answer = msg.backend_operation_response
            if answer.request_id != request.request_id:
                continue
            if answer.error_msg:
                raise ProtocolError(f"download refused: {answer.error_msg}")
            return answer.deferred_file.url

    async def _run(self, states):
        from streamlit.proto.BackMsg_pb2 import BackMsg

        if self.socket is None:
            raise ProtocolError("the session is not open")
        message = BackMsg()
        message.rerun_script.query_string = self.query
        message.rerun_script.page_script_hash = self.page_hash
        message.rerun_script.widget_states.widgets.extend(states)
        start = time.perf_counter()
        await self._send(message)
        return await self._receive(start)

    async def _send(self, message):
        try:
            await self.socket.send(message.SerializeToString())
        except Exception as exc:  # the server closed the socket
            raise ProtocolError(f"websocket closed: {type(exc).__name__}: {exc}") from None

    async def _next(self, limit, what):
        """The next message, before ``time.perf_counter()`` reaches ``limit``."""
        remaining = limit - time.perf_counter()
        try:
            if remaining <= 0:
                raise TimeoutError
            return await asyncio.wait_for(self.socket.recv(), timeout=remaining)
        except TimeoutError:
            raise TimeoutError(f"no {what} within {self.timeout:.0f} s") from None
        except Exception as exc:  # the server closed the socket
            raise ProtocolError(f"websocket closed: {type(exc).__name__}: {exc}") from None

    async def _receive(self, start):
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        run = Run(seconds=float("nan"), status="", query=self.query)
        widgets = {}
        limit = start + self.timeout
        while True:
            payload = await self._next(limit, "script_finished")
            run.messages += 1
            run.bytes += len(payload)
            msg = ForwardMsg.FromString(payload)
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                self.page_hash = msg.new_session.page_script_hash
                self.session_id = msg.new_session.initialize.session_id or self.session_id
            elif kind == "page_info_changed":
                self.query = run.query = msg.page_info_changed.query_string
            elif kind == "delta":
                self._delta(msg.delta, run, widgets)
            elif kind == "ref_hash":
                # Only sent for messages the client says it holds; this client holds none.
                run.problems.append("the server referred to a cached message")
            elif kind == "session_event":
                event = msg.session_event.WhichOneof("type")
                if event == "script_compilation_exception":
                    run.problems.append("script compilation error")
            elif kind == "script_finished":
                status = ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished)
                if status == "FINISHED_EARLY_FOR_RERUN":
                    continue  # a rerun the server started itself follows
                run.seconds = time.perf_counter() - start
                run.status = status
                if status != "FINISHED_SUCCESSFULLY":
                    run.problems.append(f"script finished with {status}")
                self.widgets = run.widgets = widgets
                return run

    @staticmethod
    def _delta(delta, run, widgets):
        from streamlit.proto.Alert_pb2 import Alert

        if delta.WhichOneof("type") != "new_element":
            return
        element = delta.new_element
        kind = element.WhichOneof("type")
        body = getattr(element, kind)
        if kind == "exception":
            run.problems.append(f"exception box: {body.type}: {body.message[:200]}")
        elif kind == "alert" and body.format == Alert.ERROR:
            run.problems.append(f"st.error: {body.body[:200]}")
        elif kind == "plotly_chart" and _chart_has_data(body.spec):
            run.charts += 1
        elif (kind == "bidi_component" and body.component_name == CHART_COMPONENT
              and _chart_has_data(json.loads(body.json)["spec"])):
            run.charts += 1  # an in-place chart of dashboard/charts.py
        elif kind == "progress":
            run.progress.append(body.text)
        text = getattr(body, _TEXT_FIELDS[kind]) if kind in _TEXT_FIELDS else ""
        if "Traceback" in text:
            run.problems.append(f"'Traceback' in a {kind}")
        found = _widget(kind, body)
        if found is not None:
            widgets[found.label] = found
