"""Contracts of the app's uses of Streamlit's and Plotly's internals (dashboard/_compat.py):
one test per use, on the real installed packages.

CI runs this file a second time against the newest Streamlit and Plotly (.ci/run): a failure
names the use that broke and where to look.  Each use whose upstream behaviour it works
around also has a test that the behaviour is still there, so an upgrade that fixes it says
the use can go.
"""

import asyncio
import logging
import re
import types
from pathlib import Path

import pytest
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime.app_session import AppSession, AppSessionState
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.media_file_storage import MediaFileStorageError
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.uploaded_file_manager import UploadedFileRec
from streamlit.testing.v1 import AppTest

from dashboard import _compat as compat


def _holds(name):
    check, use, where = compat.CONTRACTS[name]
    why = compat.problem(name)
    assert why is None, (f"contract {name!r} breaks ({use}): {why}. Check {where}; until it "
                         f"is adapted the server runs without it (plain Streamlit).")


# ------------------------------------------------------------------------------- rerun
class _Session:
    """What AppSession.request_rerun reads of its session: the state, the fragments it
    holds, the client state; the runs it would start are recorded."""

    def __init__(self, fragments=()):
        self._state = AppSessionState.APP_NOT_RUNNING
        self._client_state = ClientState()
        self._scriptrunner = None
        self.fragments = set(fragments)
        self.runs = []

    def has_fragment(self, fragment_id):
        return fragment_id in self.fragments

    def _create_scriptrunner(self, rerun_data):
        self.runs.append(rerun_data)


def _streamlits_request_rerun():
    method = AppSession.request_rerun
    return getattr(method, "__wrapped__", method)


def _moved(fragment_id):
    state = ClientState(query_string="lam=100", page_script_hash="abc", fragment_id=fragment_id)
    widget = state.widget_states.widgets.add()
    widget.id, widget.double_value = "$$ID-lam", 2.0
    return state


def test_rerun_contract():
    _holds("rerun")


def test_streamlit_still_drops_a_rerun_of_a_fragment_the_session_does_not_hold():
    # What the launcher's replacement is for; when this fails, re-measure the failover
    # (results/serve.md) and delete the replacement if pages survive without it.
    request = _streamlits_request_rerun()
    fresh = _Session()
    request(fresh, _moved("frag-1"))
    assert fresh.runs == []
    known = _Session({"frag-1"})
    request(known, _moved("frag-1"))
    assert [r.fragment_id for r in known.runs] == ["frag-1"]


def test_the_replacement_turns_it_into_a_whole_page_run_through_streamlits_own_method(
        monkeypatch):
    monkeypatch.setattr(AppSession, "request_rerun", _streamlits_request_rerun())
    assert compat.rerun_unknown_fragments_whole() and compat.reruns_unknown_fragments_whole()
    fresh = _Session()
    AppSession.request_rerun(fresh, _moved("frag-1"))
    (run,) = fresh.runs
    assert run.fragment_id is None and run.query_string == "lam=100"
    assert run.widget_states.widgets[0].double_value == 2.0  # the move goes with it


# ------------------------------------------------------------------------ server start
def test_server_start_contract():
    _holds("server_start")


@pytest.mark.timeout(180)
def test_the_launcher_installs_everything_before_the_server_listens(tmp_path):
    from harness import load

    with load.Server(log_dir=tmp_path, start_timeout=150) as server:  # dashboard.launch
        text = server.log()
    # Logged by the start-up, which runs inside Server.start before it listens: both lines
    # precede the server's own "started" line, and no contract fell back.
    lines = text.splitlines()
    started = next(i for i, line in enumerate(lines) if "server started" in line.lower())
    policy = next(i for i, line in enumerate(lines) if "uploads: one pending file" in line)
    imported = next(i for i, line in enumerate(lines) if "app modules imported" in line)
    read = next(i for i, line in enumerate(lines) if "shipped datasets read" in line)
    assert policy < started and imported < started and read < started, text
    assert "did not import" not in text and "not kept" not in text and "not governed" not in text
    assert "could not be read" not in text


# ---------------------------------------------------------------------------- downloads
@pytest.fixture
def media(monkeypatch):
    """A real media file manager whose callers are the session ``session["id"]``."""
    from streamlit.runtime import media_file_manager as mfm

    session = {"id": "clicker"}
    monkeypatch.setattr(mfm, "_get_session_id", lambda: session["id"])
    return MediaFileManager(MemoryMediaFileStorage("/media"))


def _click(manager):
    """The clicking session's run registers the button; the click builds the file."""
    placeholder = manager.add_deferred(lambda: b"weight\n0.5\n", "text/csv", "1.(3.0).2",
                                       file_name="w.csv")
    return compat.file_id_of(manager.execute_deferred(placeholder))


def _exists(manager, file_id):
    try:
        manager._storage.get_file(file_id)
        return True
    except MediaFileStorageError:
        return False


def _other_runs_end(manager, n=2):
    for _ in range(n):  # what every script run's end does, whoever's run it was
        manager.remove_orphaned_files()


def test_downloads_contract(media):
    _holds("downloads")
    assert compat.problem("downloads", media) is None


def test_streamlit_still_sweeps_a_built_file_after_two_other_runs(media):
    # What keep_built_downloads is for; when this fails, it may go.
    file_id = _click(media)
    _other_runs_end(media)
    assert not _exists(media, file_id)


def test_a_kept_file_stays_until_the_clicking_session_runs_again(media):
    assert compat.keep_built_downloads(media)
    assert compat.keep_built_downloads(media)  # idempotent: wrapped once
    file_id = _click(media)
    _other_runs_end(media, 5)
    assert media._storage.get_file(file_id).content == b"weight\n0.5\n"
    media.clear_session_refs("clicker")  # its next run starts: swept as before
    _other_runs_end(media)
    assert not _exists(media, file_id)


def test_a_session_that_has_gone_gets_no_reference(media):
    compat.keep_built_downloads(media)
    placeholder = media.add_deferred(lambda: b"x", "text/csv", "1.(3.0).2")
    media.clear_session_refs("clicker")  # the session ends before the click is served
    file_id = compat.file_id_of(media.execute_deferred(placeholder))
    _other_runs_end(media)
    assert not _exists(media, file_id)


def test_file_id_of_a_media_url():
    assert compat.file_id_of("/media/3f2a9c.csv") == "3f2a9c"
    assert compat.file_id_of("/media/abc") == "abc"


# ------------------------------------------------------------------------------ uploads
def test_uploads_contract():
    _holds("uploads")


def test_streamlit_still_keeps_every_upload_of_a_connected_session():
    # What the upload policy is for: no widget asked for these files.
    manager = MemoryUploadedFileManager("/_stcore/upload_file")
    for name in ("a", "b", "c"):
        manager.add_file("s1", UploadedFileRec(file_id=name, name=name, type="text/csv",
                                               data=b"x"))
    assert compat.stored_uploads(manager) == {"s1": ["a", "b", "c"]}
    manager.remove_file("s1", "b")
    assert compat.stored_uploads(manager) == {"s1": ["a", "c"]}


def test_a_sessions_running_state_is_read_from_its_app_session(monkeypatch):
    sessions = {"busy": types.SimpleNamespace(_state=AppSessionState.APP_IS_RUNNING),
                "idle": types.SimpleNamespace(_state=AppSessionState.APP_NOT_RUNNING)}
    server = types.SimpleNamespace(get_app_session=sessions.get,
                                   is_active_session=lambda s: s == "busy")
    monkeypatch.setattr(compat, "runtime", lambda: server)
    assert compat.session_script_running("busy") and compat.session_is_active("busy")
    assert not compat.session_script_running("idle") and not compat.session_is_active("idle")
    assert not compat.session_script_running("gone")


# ------------------------------------------------------------------------------ session
def test_session_contract():
    _holds("session")


def test_a_script_run_knows_its_session_and_nothing_else_does():
    assert compat.session_id() is None
    at = AppTest.from_string(
        "import streamlit as st\nfrom dashboard import _compat as c\n"
        "st.text(repr(c.session_id()))").run()
    assert not at.exception
    shown = at.text[0].value
    assert shown not in ("None", "''") and shown.startswith("'")


# ----------------------------------------------------------------------------- test ids
def test_test_ids_contract():
    _holds("test_ids")


def test_only_vouched_test_ids_are_given():
    assert compat.testid("stMetricValue") == '[data-testid="stMetricValue"]'
    with pytest.raises(ValueError, match="stButton"):
        compat.testid("stButton")


# ------------------------------------------------------------------------------- plotly
def test_plotly_figure_contract():
    _holds("plotly_json")


# ----------------------------------------------------------------------------- frontend
def test_frontend_contract():
    _holds("frontend")


def test_every_file_the_page_names_is_in_the_frontend_folder():
    # nginx answers /static/... from this folder (deploy/render_nginx.py): each asset
    # index.html loads by its relative URL must be the file at that path under it.
    folder = Path(compat.frontend_folder())
    page = (folder / "index.html").read_text()
    named = set(re.findall(r'(?:src|href)="\./(static/[^"]+)"', page))
    assert len(named) > 10, named  # the entry script, its modulepreloads, the font
    missing = sorted(n for n in named if not (folder / n).is_file())
    assert not missing, (f"index.html loads {missing} that {folder} does not hold: nginx's "
                         f"/static/ location would send them to a replica")


def _none_and_said_once(find, monkeypatch, caplog):
    """``find()`` gives ``None`` twice, with one warning between them: its text."""
    monkeypatch.setattr(compat, "_logged", set())
    with caplog.at_level(logging.WARNING, logger="dashboard"):
        assert find() is None
        assert find() is None
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1, said
    return said[0]


def test_a_frontend_laid_out_otherwise_is_left_to_the_replicas_and_said_once(
        monkeypatch, tmp_path, caplog):
    (tmp_path / "index.html").write_text('<script type="module" src="./assets/app.js">')
    (tmp_path / "manifest.json").write_text('{"index.html": {"file": "assets/app.js"}}')
    monkeypatch.setattr(compat, "_frontend_candidate", lambda: str(tmp_path))
    said = _none_and_said_once(compat.frontend_folder, monkeypatch, caplog)
    assert "no script under static/" in said, said
    (tmp_path / "manifest.json").write_text('{"index.html": {"file": "static/js/app.js"}}')
    assert "not in" in compat.problem("frontend")
    (tmp_path / "static" / "js").mkdir(parents=True)
    (tmp_path / "static" / "js" / "app.js").write_text("")
    assert "no longer loads ./static/js/app.js" in compat.problem("frontend")
    (tmp_path / "index.html").write_text('<script type="module" src="./static/js/app.js">')
    assert compat.frontend_folder() == str(tmp_path)


# ---------------------------------------------------------------------------- plotly_js
def test_plotly_js_contract():
    _holds("plotly_js")


def test_plotly_js_is_the_installed_plotly_packages_bundle():
    import plotly

    path = Path(compat.plotly_js_file())
    assert path.parent.parent == Path(plotly.__file__).parent
    # Its banner names the version plotly.py ships.
    assert f"plotly.js v{plotly.offline.get_plotlyjs_version()}" in path.read_text()[:200]


def test_a_missing_or_foreign_plotly_js_is_refused_and_said_once(monkeypatch, tmp_path, caplog):
    where = tmp_path / "package_data" / compat.PLOTLY_JS
    monkeypatch.setattr(compat, "_plotly_js_candidate", lambda: str(where))
    said = _none_and_said_once(compat.plotly_js_file, monkeypatch, caplog)
    assert "no readable" in said, said
    where.parent.mkdir()
    where.write_text("window.somethingElse = 1;")
    assert "banner" in compat.problem("plotly_js")
    where.write_text("/**\n* plotly.js v9.0.0\n*/\n(function(){})();")
    assert compat.plotly_js_file() == str(where)


def test_the_shipped_basic_bundle_is_the_plotly_packages_plotly_js_version():
    # When the plotly pin moves to another Plotly.js, the charts fall back to the full
    # bundle (slower for a new visitor) until dashboard/vendor/ is updated: this says so.
    import plotly

    from dashboard import plotly_bundle

    wanted = plotly.offline.get_plotlyjs_version()
    assert plotly_bundle.banner_version(plotly_bundle.BASIC) == wanted, (
        "replace dashboard/vendor/plotly-basic.min.js with plotly.js-basic-dist-min@"
        f"{wanted} (dashboard/vendor/README.md)")
    assert plotly_bundle.chosen().path == plotly_bundle.BASIC


def test_a_selectbox_gives_back_a_label_no_option_has_as_its_value():
    # What dashboard/sidebar.py (_as_dataset) and pages/your_data.py (the target column)
    # are written against: a browser still holding a label the page drew before (an upload's
    # file name, the previous file's column) sends it, and the selectbox's value is that
    # label itself, not an option.
    from streamlit.elements.widgets.selectbox import SelectboxSerde

    options = ["sonar", "your data"]
    labels = ["sonar", "your data (180 rows): mine.csv"]
    serde = SelectboxSerde(options, formatted_options=labels,
                           formatted_option_to_option_index={t: i for i, t in enumerate(labels)})
    assert serde.deserialize(labels[1]) == "your data"
    stale = "your data (250 rows): the-file-before.csv"
    assert serde.deserialize(stale) == stale


# ------------------------------------------------------------------- the self-check
def test_a_broken_contract_leaves_plain_streamlit_and_says_so_once(monkeypatch, media, caplog):
    broken = {name: (lambda _=None: "moved upstream", use, where)
              for name, (_, use, where) in compat.CONTRACTS.items()}
    monkeypatch.setattr(compat, "CONTRACTS", broken)
    monkeypatch.setattr(compat, "_logged", set())
    monkeypatch.setattr(AppSession, "request_rerun", _streamlits_request_rerun())
    from streamlit.web.server.server import Server

    start = Server.start
    with caplog.at_level(logging.WARNING, logger="dashboard"):
        for _ in range(2):
            assert compat.keep_built_downloads(media) is False
            assert compat.rerun_unknown_fragments_whole() is False
            assert compat.before_server_listens(lambda: None) is False
    assert not hasattr(media.execute_deferred, "__wrapped__") and "execute_deferred" not in vars(
        media)
    assert AppSession.request_rerun is _streamlits_request_rerun()
    assert Server.start is start
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 3 and all("moved upstream" in line for line in said), said


def test_start_up_work_runs_once_each_before_the_server_starts(monkeypatch):
    """Several start-up functions share one wrapper: each runs once, in the order given, then
    Streamlit's own start; giving one again adds nothing."""
    from streamlit.web.server.server import Server

    done = []

    async def start(self):
        done.append("server")

    monkeypatch.setattr(Server, "start", start)
    first, second = (lambda: done.append("first")), (lambda: done.append("second"))
    for work in (first, second, first):
        assert compat.before_server_listens(work) is True
    asyncio.run(Server.start(None))
    assert done == ["first", "second", "server"]
