"""dashboard.launch: a rerun asked of a fragment the session does not hold becomes a whole-page
rerun with the same widget states (a page reconnected to a restarted or failed-over server),
instead of being dropped as Streamlit drops it.  The end-to-end check is
tests/test_serve.py's failover test and tests/test_browser.py's restart test; what the
replacement relies on in Streamlit, and the start-up before the server listens, are checked
in tests/test_compat.py."""

import functools
import subprocess
import sys
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
