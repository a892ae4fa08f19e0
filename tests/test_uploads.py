"""Uploads no widget holds are dropped; a session holds at most one pending upload.

Unit tests drive :class:`dashboard.uploads.UploadPolicy` on a real
``MemoryUploadedFileManager`` with a hand-moved clock; the live tests start ``streamlit run
app.py`` and PUT raw files into a session, reading what the server holds from its
``/_stcore/metrics`` (the manager's byte count, exact) and its resident memory.
"""

import asyncio
import http.client
import logging
import re
import time
import urllib.request
import uuid

import pytest
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.uploaded_file_manager import UploadedFileRec

from dashboard import _compat as compat
from dashboard import uploads

MB = 1_000_000


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def world():
    """A manager with the policy attached, a clock, and the set of connected sessions."""
    manager = MemoryUploadedFileManager("/_stcore/upload_file")
    clock = Clock()
    connected = {"s1", "s2"}
    policy = uploads.UploadPolicy(manager, connected.__contains__, window=60, clock=clock)
    policy.attach()
    return manager, policy, clock, connected


def _rec(file_id, size=10):
    return UploadedFileRec(file_id=file_id, name=f"{file_id}.csv", type="text/csv",
                           data=b"x" * size)


def _stored(manager, session="s1"):
    return sorted(manager.file_storage.get(session, {}))


def _bytes(manager):
    stats = manager.get_stats()
    return sum(s.byte_length for family in stats.values() for s in family)


def test_a_new_upload_drops_the_sessions_earlier_pending_one(world):
    manager, policy, _, _ = world
    for name in ("a", "b", "c"):
        manager.add_file("s1", _rec(name, 100))
    assert _stored(manager) == ["c"]
    assert _bytes(manager) == 100  # the manager's own count follows the drops
    # Another session's pending upload is its own.
    manager.add_file("s2", _rec("z", 7))
    assert _stored(manager) == ["c"] and _stored(manager, "s2") == ["z"]
    assert _bytes(manager) == 107


def test_a_fetched_file_is_held_and_a_later_upload_does_not_drop_it(world):
    manager, policy, clock, _ = world
    manager.add_file("s1", _rec("a"))
    assert [r.file_id for r in manager.get_files("s1", ["a"])] == ["a"]
    manager.add_file("s1", _rec("b"))
    manager.add_file("s1", _rec("c"))  # drops b (pending), not a (held)
    assert _stored(manager) == ["a", "c"]
    assert policy.tracked("s1") == (["c"], ["a"])
    # Held files outlive the window while the session is connected: reruns fetch them again.
    clock.now += 3600
    policy.sweep()
    assert _stored(manager) == ["a"]  # c expired unfetched
    assert [r.file_id for r in manager.get_files("s1", ["a"])] == ["a"]


def test_a_pending_file_expires_after_the_window_and_not_before(world):
    manager, policy, clock, _ = world
    manager.add_file("s1", _rec("a"))
    clock.now += 59
    assert policy.sweep() == 0 and _stored(manager) == ["a"]
    clock.now += 1
    assert policy.sweep() == 1 and _stored(manager) == []
    assert _bytes(manager) == 0
    assert manager.get_files("s1", ["a"]) == []


def test_a_running_script_buys_a_pending_file_time_within_a_bound():
    # The browser's rerun that fetches an upload waits for the running script to stop.
    manager = MemoryUploadedFileManager("/_stcore/upload_file")
    clock, busy = Clock(), {"s1"}
    policy = uploads.UploadPolicy(manager, lambda sid: True, window=60, clock=clock,
                                  is_busy=busy.__contains__).attach()
    manager.add_file("s1", _rec("a"))
    clock.now += 200
    policy.sweep()
    assert _stored(manager) == ["a"]
    busy.clear()  # the run ended without fetching it
    policy.sweep()
    assert _stored(manager) == []
    busy.add("s1")  # a script that never stops does not keep a file for ever
    manager.add_file("s1", _rec("b"))
    clock.now += 5 * 60 - 1
    policy.sweep()
    assert _stored(manager) == ["b"]
    clock.now += 1
    policy.sweep()
    assert _stored(manager) == []


def test_a_fetch_inside_the_window_keeps_the_file(world):
    manager, policy, clock, _ = world
    manager.add_file("s1", _rec("a"))
    clock.now += 59
    manager.get_files("s1", ["a"])
    clock.now += 600
    policy.sweep()
    assert _stored(manager) == ["a"]


def test_a_widget_fetching_a_new_file_drops_the_file_it_held_before(world):
    # The browser deletes a replaced file itself; a client that does not is bounded too.
    manager, policy, _, _ = world
    manager.add_file("s1", _rec("a"))
    manager.get_files("s1", ["a"])
    manager.add_file("s1", _rec("b"))
    manager.get_files("s1", ["b"])
    assert _stored(manager) == ["b"]
    assert policy.tracked("s1") == ([], ["b"])


def test_the_browsers_delete_and_streamlits_session_removal_pass_through(world):
    manager, policy, _, _ = world
    manager.add_file("s1", _rec("a"))
    manager.get_files("s1", ["a"])
    manager.remove_file("s1", "a")  # the widget's x
    assert _stored(manager) == [] and policy.tracked("s1") == ([], [])
    manager.add_file("s1", _rec("b"))
    manager.remove_session_files("s1")  # Streamlit ends the session
    assert "s1" not in manager.file_storage and policy.tracked("s1") == ([], [])
    assert _bytes(manager) == 0


def test_a_closed_sessions_pending_file_goes_at_once_its_held_file_after_the_window(world):
    manager, policy, clock, connected = world
    manager.add_file("s1", _rec("held"))
    manager.get_files("s1", ["held"])
    manager.add_file("s1", _rec("pending"))
    connected.discard("s1")
    assert policy.sweep() == 1
    assert _stored(manager) == ["held"]  # kept for a reconnect
    clock.now += 30
    connected.add("s1")  # the browser came back within the window
    policy.sweep()
    clock.now += 600
    policy.sweep()
    assert _stored(manager) == ["held"]
    connected.discard("s1")  # gone for good this time
    policy.sweep()
    clock.now += 59
    policy.sweep()
    assert _stored(manager) == ["held"]
    clock.now += 1
    assert policy.sweep() == 1
    assert _stored(manager) == [] and _bytes(manager) == 0


def test_a_session_ends_for_its_listeners_when_its_held_file_goes_or_streamlit_drops_it(
        world, monkeypatch):
    manager, policy, clock, connected = world
    ended = []
    monkeypatch.setattr(uploads, "_session_end_listeners", [])
    uploads.on_session_end(ended.append)
    uploads.on_session_end(lambda session: 1 / 0)  # a failing listener stops nothing
    manager.add_file("s1", _rec("held"))
    manager.get_files("s1", ["held"])
    connected.discard("s1")
    policy.sweep()
    clock.now += 59
    policy.sweep()
    assert ended == []  # within the window a reconnect finds its data
    clock.now += 1
    policy.sweep()
    assert ended == ["s1"]
    policy.sweep()
    assert ended == ["s1"]  # once
    manager.remove_session_files("s2")
    assert ended == ["s1", "s2"]


def test_files_uploaded_before_the_policy_are_adopted_as_pending():
    manager = MemoryUploadedFileManager("/_stcore/upload_file")
    for name in ("a", "b", "c"):
        manager.add_file("s1", _rec(name))
    clock = Clock()
    policy = uploads.UploadPolicy(manager, lambda sid: True, window=10, clock=clock).attach()
    policy.sweep()
    assert _stored(manager) == ["c"]  # the latest
    clock.now += 10
    policy.sweep()
    assert _stored(manager) == []


def test_re_uploading_a_held_id_makes_it_pending_again(world):
    manager, policy, clock, _ = world
    manager.add_file("s1", _rec("a", 5))
    manager.get_files("s1", ["a"])
    manager.add_file("s1", _rec("a", 9))  # new bytes under the same address
    assert policy.tracked("s1") == (["a"], [])
    assert _bytes(manager) == 9
    clock.now += 60
    policy.sweep()
    assert _stored(manager) == []


def test_the_window_comes_from_the_environment(monkeypatch, caplog):
    monkeypatch.delenv(uploads.PENDING_ENV, raising=False)
    assert uploads.pending_seconds() == uploads.DEFAULT_PENDING_SECONDS == 60
    monkeypatch.setenv(uploads.PENDING_ENV, "2.5")
    assert uploads.pending_seconds() == 2.5
    for bad in ("0", "-3", "soon", "nan", "inf"):
        monkeypatch.setenv(uploads.PENDING_ENV, bad)
        assert uploads.pending_seconds() == 60


def test_install_without_a_server_does_nothing():
    # AppTest and bare imports have no runtime: nothing is wrapped, nothing raises.
    assert compat.runtime() is None
    assert uploads.install() is None


class FakeServer:
    """What install() reads of Streamlit's runtime (through dashboard._compat)."""

    def __init__(self, manager):
        self.uploaded_file_mgr = manager

    def is_active_session(self, session_id):
        return True

    def get_app_session(self, session_id):
        return None


def _with_server(monkeypatch, server):
    monkeypatch.setattr(compat, "runtime", lambda: server)


def test_install_wraps_the_servers_manager_once(monkeypatch):
    manager = MemoryUploadedFileManager("/_stcore/upload_file")
    _with_server(monkeypatch, FakeServer(manager))
    policy = uploads.install()
    try:
        assert policy is not None and uploads.install() is policy  # idempotent
        assert manager.add_file == policy.add_file  # this instance only, not the class
        assert MemoryUploadedFileManager.add_file is not policy.add_file
        assert policy.window == uploads.pending_seconds()
        manager.add_file("s1", _rec("a"))
        manager.add_file("s1", _rec("b"))
        assert _stored(manager) == ["b"]
        other = MemoryUploadedFileManager("/_stcore/upload_file")
        for name in ("a", "b"):
            other.add_file("s1", _rec(name))
        assert _stored(other) == ["a", "b"]  # an ungoverned manager is untouched
    finally:
        policy.stop()


def test_install_leaves_an_unknown_manager_alone(monkeypatch, caplog):
    class Other:
        def get_files(self, session_id, file_ids):
            return []

    manager = Other()
    _with_server(monkeypatch, FakeServer(manager))
    monkeypatch.setattr(compat, "_logged", set())
    with caplog.at_level(logging.WARNING, logger="dashboard"):
        assert uploads.install() is None
        assert uploads.install() is None
    assert not hasattr(manager, "add_file") and manager.get_files("s", ["f"]) == []
    assert sum("lacks" in r.getMessage() for r in caplog.records) == 1


def test_the_sweeper_thread_drops_expired_files():
    manager = MemoryUploadedFileManager("/_stcore/upload_file")
    policy = uploads.UploadPolicy(manager, lambda sid: True, window=0.2).attach().start(0.05)
    try:
        manager.add_file("s1", _rec("a"))
        deadline = time.monotonic() + 30
        while _stored(manager) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _stored(manager) == []
    finally:
        policy.stop()


# ------------------------------------------------------------------------- the live server
FILE_BYTES = 8 * MB
UPLOADS = 8
WINDOW = 10  # seconds, the server's SDWEC_UPLOAD_PENDING_SECONDS


METRICS_TTL = 5.0  # Streamlit serves cache_memory_bytes from a 5 s cache
_last_read = [float("-inf")]


def _metric_bytes(url, fresh=False):
    """Bytes the server's upload manager holds, from ``/_stcore/metrics`` (``fresh``: wait
    out the endpoint's cache first)."""
    if fresh:
        time.sleep(max(0.0, _last_read[0] + METRICS_TTL + 0.2 - time.monotonic()))
    _last_read[0] = time.monotonic()
    with urllib.request.urlopen(url + "/_stcore/metrics?families=cache_memory_bytes",
                                timeout=30) as answer:
        text = answer.read().decode()
    total = 0
    for line in text.splitlines():
        if "UploadedFileManager" in line and not line.startswith("#"):
            total += int(float(line.rsplit(" ", 1)[1]))
    return total


def _xsrf_token(url):
    with urllib.request.urlopen(url + "/_stcore/health", timeout=30) as answer:
        cookies = answer.headers.get_all("Set-Cookie") or []
    for cookie in cookies:
        found = re.match(r"_streamlit_xsrf=([^;]+)", cookie)
        if found:
            return found.group(1)
    raise AssertionError(f"no XSRF cookie in {cookies}")


def _put(port, token, session_id, size, tag):
    body = (b"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.csv\"\r\n"
            b"Content-Type: text/csv\r\n\r\n" + tag * size + b"\r\n--b--\r\n")
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("PUT", f"/_stcore/upload_file/{session_id}/{uuid.uuid4()}", body,
                     {"Content-Type": "multipart/form-data; boundary=b",
                      "Cookie": f"_streamlit_xsrf={token}", "X-Xsrftoken": token})
        return conn.getresponse().status
    finally:
        conn.close()


def _wait_for(condition, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.25)
    return condition()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from harness import load

    folder = tmp_path_factory.mktemp("uploads")
    with load.Server(cache_dir=folder / "cache", log_dir=folder,
                     env={uploads.PENDING_ENV: str(WINDOW)}) as running:
        yield running


def test_a_live_session_holds_one_unattached_upload_and_not_for_long(server):
    token = _xsrf_token(server.url)

    async def scenario():
        from harness.wsclient import Session

        async with Session(server.url, timeout=180) as client:
            first = await client.open("dataset=wine&task=binary&seed=0&l=10&r=1")
            assert first.problems == []
            before = server.rss()
            codes = [await asyncio.to_thread(_put, server.port, token, client.session_id,
                                             FILE_BYTES, bytes([65 + i]))
                     for i in range(UPLOADS)]
            held, grown = _metric_bytes(server.url, fresh=True), server.rss() - before
            # Well before BUSY_WINDOWS x WINDOW: the session's script is not running.
            gone = await asyncio.to_thread(_wait_for, lambda: _metric_bytes(server.url) == 0,
                                           2 * WINDOW + METRICS_TTL + 5)
            # After the window, a new upload, then the websocket closes.
            await asyncio.sleep(METRICS_TTL + 0.2)
            assert _put(server.port, token, client.session_id, FILE_BYTES, b"Z") == 204
            late = _metric_bytes(server.url, fresh=True)
        return codes, held, grown, gone, late

    codes, held, grown, gone, late = asyncio.run(scenario())
    assert codes == [204] * UPLOADS  # accepted: the limit is per session, not per request
    assert held == FILE_BYTES  # the last one only, not UPLOADS x FILE_BYTES
    # Resident memory grew by about one file, not eight (17.4 MB measured: the allocator
    # keeps a freed file's memory for the next one).
    assert grown < 4 * FILE_BYTES, grown
    assert gone  # dropped once the window passed without a widget fetching it
    assert late == FILE_BYTES
    # The session closed: its pending file goes at the next sweep, long before Streamlit's
    # 120 s session TTL.
    assert _wait_for(lambda: _metric_bytes(server.url) == 0, 30)


def _your_data_csv():
    """300 rows, two features and a label that depends on them (as tests/test_your_data.py)."""
    import numpy as np

    rng = np.random.default_rng(0)
    lines = ["x,y,label"]
    for x, y in rng.normal(size=(300, 2)):
        lines.append(f"{x:.6f},{y:.6f},{'yes' if x + y > 0 else 'no'}")
    return "\n".join(lines).encode()


async def _rerun(client, states=(), page_name=None):
    """One script run as the browser asks for it: its widget values, and a page by its URL
    name (``page_name``) or the current one."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    message = BackMsg()
    message.rerun_script.query_string = client.query
    if page_name is None:
        message.rerun_script.page_script_hash = client.page_hash
    else:
        message.rerun_script.page_name = page_name
    message.rerun_script.widget_states.widgets.extend(states)
    start = time.perf_counter()
    await client._send(message)
    return await client._receive(start)


async def _browser_upload(client, port, token, widget, name, data):
    """What the browser does: ask for an address, PUT the file there; return the widget
    state naming the file."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    message = BackMsg()
    message.file_urls_request.request_id = "upload-1"
    message.file_urls_request.session_id = client.session_id
    message.file_urls_request.file_names.append(name)
    await client._send(message)
    limit = time.perf_counter() + client.timeout
    while True:
        answer = ForwardMsg.FromString(await client._next(limit, "upload address"))
        if answer.WhichOneof("type") == "file_urls_response":
            urls = answer.file_urls_response.file_urls[0]
            break
    body = (f"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
            "Content-Type: text/csv\r\n\r\n").encode() + data + b"\r\n--b--\r\n"

    def put():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        try:
            conn.request("PUT", urls.upload_url, body,
                         {"Content-Type": "multipart/form-data; boundary=b",
                          "Cookie": f"_streamlit_xsrf={token}", "X-Xsrftoken": token})
            return conn.getresponse().status
        finally:
            conn.close()

    assert await asyncio.to_thread(put) == 204
    state = WidgetState(id=widget.id)
    info = state.file_uploader_state_value.uploaded_file_info.add()
    info.file_id, info.name, info.size = urls.file_id, name, len(data)
    info.file_urls.CopyFrom(urls)
    return state


def test_the_your_data_upload_survives_the_window_reruns_and_a_page_switch(server):
    token = _xsrf_token(server.url)
    data = _your_data_csv()

    async def scenario():
        from harness.wsclient import Session

        async with Session(server.url, timeout=180) as client:
            explorer = await client.open("dataset=wine&task=binary&seed=0&l=10&r=1")
            explorer_hash = client.page_hash
            page = await _rerun(client, page_name="your_data")
            state = await _browser_upload(client, server.port, token,
                                          page.widgets["CSV file"], "mine.csv", data)
            read = await _rerun(client, [state], page_name="your_data")
            await asyncio.sleep(WINDOW + METRICS_TTL)  # longer than a pending file may wait
            held = _metric_bytes(server.url, fresh=True)
            again = await _rerun(client, [state], page_name="your_data")  # the browser resends its widget values
            away = await _rerun(client, page_name="")
            client.page_hash = explorer_hash
            back = await _rerun(client, page_name="your_data")
            return explorer, page, read, held, again, away, back

    explorer, page, read, held, again, away, back = asyncio.run(scenario())
    for run in (explorer, page, read, again, away, back):
        assert run.status == "FINISHED_SUCCESSFULLY" and run.problems == [], run.problems
    assert "CSV file" in page.widgets and page.charts == 0  # no file yet
    # The file was read: its preview's widgets, and the Explorer on it.
    for run in (read, again):
        assert {"Target column", "Missing values"} <= set(run.widgets) and run.charts > 0
    assert held == len(data)  # the widget's file outlived the pending window
    assert away.charts > 0 and "CSV file" not in away.widgets
    # Back on Your data: the uploader is empty, the file read earlier is still explored.
    assert "CSV file" in back.widgets and "Target column" not in back.widgets
    assert back.charts > 0
