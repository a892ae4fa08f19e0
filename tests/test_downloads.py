"""dashboard.downloads: a file built on a download click survives other sessions' runs."""

import pytest
from streamlit.runtime import media_file_manager as mfm
from streamlit.runtime.media_file_storage import MediaFileStorageError
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

from dashboard import downloads


@pytest.fixture
def manager(monkeypatch):
    session = {"id": "clicker"}
    monkeypatch.setattr(mfm, "_get_session_id", lambda: session["id"])
    mgr = mfm.MediaFileManager(MemoryMediaFileStorage("/media"))
    mgr.session = session
    return mgr


def _click(mgr):
    """The clicking session's run registers the button; the click builds the file."""
    placeholder = mgr.add_deferred(lambda: b"weight\n0.5\n", "text/csv", "1.(3.0).2",
                                   file_name="w.csv")
    return downloads.file_id_of(mgr.execute_deferred(placeholder))


def _exists(mgr, file_id):
    try:
        mgr._storage.get_file(file_id)
        return True
    except MediaFileStorageError:
        return False


def _other_runs_end(mgr, n=2):
    for _ in range(n):  # what every script run's end does, whoever's run it was
        mgr.remove_orphaned_files()


def test_without_the_wrapper_two_other_runs_delete_the_built_file(manager):
    # The race of issue 23, so that the next test can fail.
    file_id = _click(manager)
    _other_runs_end(manager)
    assert not _exists(manager, file_id)


def test_the_built_file_stays_until_the_clicking_session_runs_again(manager):
    assert downloads.keep_built_downloads(manager)
    assert downloads.keep_built_downloads(manager)  # idempotent: wrapped once
    file_id = _click(manager)
    _other_runs_end(manager, 5)
    assert _exists(manager, file_id)
    assert manager._storage.get_file(file_id).content == b"weight\n0.5\n"
    # The clicking session's next run starts (Streamlit clears its references): swept as before.
    manager.clear_session_refs("clicker")
    _other_runs_end(manager)
    assert not _exists(manager, file_id)


def test_a_session_that_has_gone_gets_no_reference(manager):
    downloads.keep_built_downloads(manager)
    placeholder = manager.add_deferred(lambda: b"x", "text/csv", "1.(3.0).2")
    manager.clear_session_refs("clicker")  # the session ends before the click is served
    file_id = downloads.file_id_of(manager.execute_deferred(placeholder))
    assert "clicker" not in manager._files_by_session_and_coord
    _other_runs_end(manager)
    assert not _exists(manager, file_id)


def test_file_id_of_a_media_url():
    assert downloads.file_id_of("/media/3f2a9c.csv") == "3f2a9c"
    assert downloads.file_id_of("/media/abc") == "abc"


def test_an_unknown_manager_is_left_alone():
    class Other:
        def execute_deferred(self, file_id):
            return "/media/x.csv"

    other = Other()
    assert not downloads.keep_built_downloads(other)
    assert other.execute_deferred("y") == "/media/x.csv"


def test_install_without_a_server_does_nothing():
    assert downloads.install() is False
