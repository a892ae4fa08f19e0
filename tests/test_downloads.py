"""dashboard.downloads: installed only on a running server (the wrapper itself and what it
relies on: tests/test_compat.py)."""

from dashboard import _compat as compat
from dashboard import downloads


def test_install_without_a_server_does_nothing():
    assert compat.runtime() is None
    assert downloads.install() is False


def test_install_keeps_the_running_servers_downloads(monkeypatch):
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    manager = MediaFileManager(MemoryMediaFileStorage("/media"))
    monkeypatch.setattr(compat, "media_file_manager", lambda: manager)
    assert downloads.install() is True
    assert "execute_deferred" in vars(manager)  # this instance wrapped, not the class
    assert downloads.install() is True
