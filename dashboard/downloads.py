"""A file built on a download click stays until its page's next script run.

The Explorer builds its downloads only when clicked (``st.download_button`` with a callable:
a file handed over at every rerun would be stored and sent on every slider move).  Streamlit
1.67 stores the built file unreferenced by any session, and every script run that ends, of
*any* session, sweeps unreferenced files: the first sweep marks the file, the second deletes
it.  In a class of fifteen sessions two runs end within a fraction of a second, so the
browser's fetch of the file could meet a 404 (the fault benchmark saw it on 1 to 4 of 15
downloads, with or without the proxy).

:func:`install` wraps the running server's media file manager (its instance, not
Streamlit's class) so that the built file is referenced by the session that clicked, at a
coordinate of its own.  Streamlit drops a session's references when that session's next run
starts, so the file is then swept as before: a download click (``on_click="ignore"``) starts
no run, and a later slider move frees the file.  Where the internals are not as expected
(AppTest, another Streamlit) nothing is wrapped and that is logged once.
"""

from __future__ import annotations

import logging
import os
import threading

LOG = logging.getLogger("dashboard")

#: Marks a manager whose ``execute_deferred`` is wrapped (so :func:`install` runs once).
_ATTRIBUTE = "_sdwec_keeps_built_downloads"
#: Suffix of the coordinate under which a session references the file its click built.
COORDINATE_SUFFIX = ".built"
_lock = threading.Lock()
_logged = set()


def _log_once(key, message):
    if key not in _logged:
        _logged.add(key)
        LOG.warning(message)


def file_id_of(url):
    """The stored file's id in a media URL (``/media/<id>.<ext>``)."""
    return os.path.splitext(url.rsplit("/", 1)[-1])[0]


def keep_built_downloads(manager):
    """Wrap ``manager.execute_deferred`` so the file it builds is referenced by the session
    whose button registered it, until that session's next run.  Returns ``True`` when wrapped
    (now or before), ``False`` when the manager lacks what the wrapper needs."""
    if getattr(manager, _ATTRIBUTE, False):
        return True
    needed = ("execute_deferred", "_deferred_callables", "_files_by_session_and_coord", "_lock")
    if not all(hasattr(manager, name) for name in needed):
        _log_once("manager", f"built downloads are not kept: {type(manager).__name__} lacks "
                             f"{', '.join(n for n in needed if not hasattr(manager, n))}")
        return False
    with _lock:
        if getattr(manager, _ATTRIBUTE, False):
            return True
        build = manager.execute_deferred

        def execute_deferred(file_id):
            with manager._lock:
                entry = dict(manager._deferred_callables.get(file_id) or {})
            url = build(file_id)
            session, coordinates = entry.get("session_id"), entry.get("coordinates")
            if session and coordinates is not None:
                with manager._lock:
                    refs = manager._files_by_session_and_coord
                    # A session that has gone (its refs cleared and not re-created by a run)
                    # gets no new entry: its file is swept as Streamlit would.
                    if session in refs:
                        refs[session][f"{coordinates}{COORDINATE_SUFFIX}"] = file_id_of(url)
            return url

        manager.execute_deferred = execute_deferred
        setattr(manager, _ATTRIBUTE, True)
    return True


def install():
    """Keep built downloads on the running Streamlit server (idempotent); ``False`` where
    there is no server or its media manager is not the one this module knows."""
    try:
        from streamlit import runtime

        if not runtime.exists():
            _log_once("runtime", "no Streamlit server runtime: built downloads are not kept")
            return False
        manager = runtime.get_instance().media_file_mgr
    except Exception as exc:  # an internal moved
        _log_once("runtime", f"built downloads are not kept: Streamlit's runtime is not as "
                             f"expected ({type(exc).__name__}: {exc})")
        return False
    return keep_built_downloads(manager)
