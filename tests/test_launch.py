"""dashboard.launch: a rerun asked of a fragment the session does not hold becomes a whole-page
rerun with the same widget states (a page reconnected to a restarted or failed-over server),
instead of being dropped as Streamlit drops it.  The end-to-end check is
tests/test_serve.py's failover test and tests/test_browser.py's restart test; what the
replacement relies on in Streamlit, and the start-up before the server listens, are checked
in tests/test_compat.py."""

import functools
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime.app_session import AppSession

from dashboard import launch


class _Session:
    """What the patch reads of an AppSession: the fragments it holds."""

    def __init__(self, fragments=()):
        self.fragments = set(fragments)

    def has_fragment(self, fragment_id):
        return fragment_id in self.fragments


@pytest.fixture
def passed(monkeypatch):
    """Install the patch over a stand-in for Streamlit's request_rerun that records what it
    is given; the real method is restored afterwards."""
    seen = []
    original = AppSession.request_rerun
    original = getattr(original, "__wrapped__", original)
    monkeypatch.setattr(AppSession, "request_rerun", functools.wraps(original)(
        lambda self, client_state: seen.append(client_state)))
    assert not launch.installed()
    launch.install()
    assert launch.installed()
    return seen


def _state(fragment_id="", auto=False):
    state = ClientState(query_string="dataset=sonar&lam=100", page_script_hash="abc",
                        fragment_id=fragment_id, is_auto_rerun=auto)
    widget = state.widget_states.widgets.add()
    widget.id = "$$ID-lam"
    widget.double_value = 2.0
    return state


def test_a_user_rerun_of_an_unknown_fragment_reruns_the_whole_page(passed):
    sent = _state("frag-1")
    AppSession.request_rerun(_Session(), sent)
    (got,) = passed
    assert got.fragment_id == "" and not got.is_auto_rerun
    assert got.query_string == sent.query_string and got.page_script_hash == "abc"
    assert got.widget_states == sent.widget_states  # the moved slider's value goes with it
    assert sent.fragment_id == "frag-1"  # the caller's message is not changed


def test_a_known_fragment_and_a_whole_page_rerun_pass_unchanged(passed):
    session = _Session({"frag-1"})
    for sent in (_state("frag-1"), _state(""), _state("frag-1", auto=True)):
        AppSession.request_rerun(session, sent)
        assert passed[-1] is sent
    AppSession.request_rerun(session, None)
    assert passed[-1] is None


def test_a_stale_poll_is_dropped_once_the_session_ran_the_page(passed):
    """An automatic rerun (run_every) of a fragment that a full run removed is left for
    Streamlit to drop; in a session that never ran the page (after a failover) it reruns
    the page."""
    fresh = _Session()
    AppSession.request_rerun(fresh, _state("poll", auto=True))
    assert passed[-1].fragment_id == "" and not passed[-1].is_auto_rerun
    ran = _Session()
    AppSession.request_rerun(ran, _state(""))
    stale = _state("poll", auto=True)
    AppSession.request_rerun(ran, stale)
    assert passed[-1] is stale


def test_install_is_idempotent(passed):
    patched = AppSession.request_rerun
    launch.install()
    assert AppSession.request_rerun is patched


def test_the_pages_use_their_fragment_only_under_the_launcher(passed, monkeypatch):
    from dashboard import sidebar

    calls = []
    monkeypatch.setattr(sidebar, "_live_fragment", lambda *a: calls.append("fragment"))
    monkeypatch.setattr(sidebar, "_live_view", lambda *a: calls.append("whole"))
    assert sidebar._live_runner() is sidebar._live_fragment
    monkeypatch.setattr(AppSession, "request_rerun", AppSession.request_rerun.__wrapped__)
    assert not launch.installed()
    assert sidebar._live_runner() is sidebar._live_view


def test_the_launcher_runs_streamlits_command_line():
    """By module and by path (as ``sdwec dashboard`` runs the installed app's copy)."""
    for command in ([sys.executable, "-m", "dashboard.launch", "--version"],
                    [sys.executable, str(launch.__file__), "--version"]):
        done = subprocess.run(command, capture_output=True, text=True, timeout=120,
                              cwd=Path(launch.__file__).parents[1])
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("Streamlit, version ")


def test_the_start_up_reads_what_every_pages_sidebar_needs(monkeypatch):
    # A replica's first page must not read the datasets: after the start-up every dataset's
    # default splits come from memory (no file opened), and agree with the dataset's rows.
    from dashboard import config
    from sdwec import datasets

    config._shipped_rows.cache_clear()
    launch.read_shipped_datasets()
    opened = []
    monkeypatch.setattr(datasets, "_read_raw", lambda key: opened.append(key))
    monkeypatch.setattr(datasets, "_load_cached", lambda key, task: opened.append(key))
    splits = {name: config.dataset_splits(name) for name in datasets.names()}
    assert opened == []
    assert config._shipped_rows.cache_info().currsize == len(datasets.names())
    monkeypatch.undo()
    assert splits["nsl_kdd"] == 1 and splits["sonar"] == 10  # 12,597 and 42 test rows


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_server_starts_without_reaching_outside_and_says_where_to_look(tmp_path):
    """Started headless (a machine without a display), plain Streamlit looks up the machine's
    external address on the internet (checkip.amazonaws.com) for its banner, and offline
    warns "Did not auto detect external IP".  Every request is sent to a proxy here that
    counts connections: none may come, and the banner still names the local address, once
    the server answers."""
    proxy = socket.socket()
    proxy.bind(("127.0.0.1", 0))
    proxy.listen()
    proxy.settimeout(0.2)
    port = _free_port()
    env = dict(os.environ, SDWEC_CACHE_DIR=str(tmp_path), NO_PROXY="", no_proxy="",
               **{name: f"http://127.0.0.1:{proxy.getsockname()[1]}"
                  for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")})
    log = tmp_path / "server.log"
    with open(log, "wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "dashboard.launch", "run", "app.py",
             "--server.headless", "true", "--server.port", str(port),
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=Path(launch.__file__).parents[1], env=env, stdout=out, stderr=subprocess.STDOUT)
    connections = 0
    try:
        deadline = time.monotonic() + 120
        while f"http://localhost:{port}" not in log.read_text() and server.poll() is None:
            assert time.monotonic() < deadline, log.read_text()
            try:
                proxy.accept()[0].close()
                connections += 1
            except TimeoutError:
                pass
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass  # the banner came once the server listens
        quiet = time.monotonic() + 3  # Streamlit's lookup came after its banner, in 1 s
        while time.monotonic() < quiet:
            try:
                proxy.accept()[0].close()
                connections += 1
            except TimeoutError:
                pass
    finally:
        server.terminate()
        server.wait(timeout=30)
        proxy.close()
    text = log.read_text()
    assert connections == 0, text
    assert "Did not auto detect external IP" not in text
    assert f"Local URL: http://localhost:{port}" in text


def test_the_banner_names_the_address_the_server_listens_on():
    assert launch.serving_urls(8501, "", "", "10.1.2.3") == [
        ("Local URL", "http://localhost:8501"), ("Network URL", "http://10.1.2.3:8501")]
    assert launch.serving_urls(8501, "0.0.0.0", "/sdwec/", None) == [
        ("Local URL", "http://localhost:8501/sdwec")]
    assert launch.serving_urls(8600, "127.0.0.1", "", "10.1.2.3", "https") == [
        ("URL", "https://127.0.0.1:8600")]
