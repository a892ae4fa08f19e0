"""What uploaded files may hold in this server's memory: one pending upload per session.

Streamlit keeps every file PUT to ``/_stcore/upload_file/<session>/<file>`` in its
``MemoryUploadedFileManager`` until the session is removed, which happens only after its
websocket has been closed for ``server.disconnectedSessionTTL`` (120 s by default).  The
upload address is open to any connected session, whether or not a widget ever asks for the
file: eight raw 150 MiB uploads into one session were all kept (+1.2 GiB), and still held
150 s after the websocket closed.

:func:`install` puts an :class:`UploadPolicy` on the running server's manager (its
instance's methods are wrapped; Streamlit's classes are not touched).  It tells two kinds of
file apart:

* **pending**: uploaded, not yet fetched by a script run (``get_files``, which the
  ``st.file_uploader`` widget calls when it reads its value).  A session has at most one: a
  new upload drops the session's earlier pending file, and a pending file that no widget
  fetches within :data:`PENDING_ENV` seconds (default :data:`DEFAULT_PENDING_SECONDS`) is
  dropped.  The browser asks for a rerun that fetches its upload as soon as the file is sent,
  so the window only catches uploads no widget wants; while the session's script is still
  running (the rerun waits for it to stop), a pending file gets up to
  :data:`BUSY_WINDOWS` windows, so that a slow run does not cost a real upload.  (A
  multiple-file uploader sends all its files before that rerun: it would need more than one
  pending file.)
* **held**: fetched by a widget.  Untouched while the session is connected: a rerun fetches
  the file again, and a dropped file would turn into a ``DeletedFile`` under the widget.  A
  session holds at most :data:`MAX_HELD` (the dashboard has one single-file uploader): a
  widget fetching a new file drops the older held one, which the browser deletes on its own
  when a file is replaced; a client that does not is bounded all the same.

When a session's websocket closes, its pending file is dropped at the next sweep (a pending
file only becomes useful through a widget rerun, which needs a websocket); its held file is
kept for the same window, so that a reconnect after a network blip finds its widget's file
(Streamlit resumes a session with its widget values, which name the file), and dropped after
it, well before Streamlit's own session TTL; then the listeners of :func:`on_session_end`
let go of what the process derived from the file (its parsed data, previews and pools:
:mod:`dashboard.upload_plans`).  So one session's uploads hold at most
``(1 + MAX_HELD) x`` the upload limit, and nothing once it has been gone for the window.

A background thread sweeps every few seconds.  The policy starts with the server, before it
accepts a connection (``dashboard.launch``; under a plain ``streamlit run`` at the first
script run, ``app.py``, files uploaded before are then adopted as pending).  The server's
internals are read through ``dashboard._compat``: where they are not as it
expects (another manager class, a future version) :func:`install` does nothing and logs it
once; under ``AppTest`` there is no server to govern.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from dashboard import _compat as compat

LOG = logging.getLogger("dashboard")

#: Environment variable: seconds an upload may wait for a widget to fetch it (and a closed
#: session's held file waits for a reconnect).
PENDING_ENV = "SDWEC_UPLOAD_PENDING_SECONDS"
DEFAULT_PENDING_SECONDS = 60.0
#: How many windows a pending file may wait while its session's script is running.
BUSY_WINDOWS = 5
#: Files the widgets of one session hold at once: the dashboard has one single-file uploader
#: (*Your data*).  Raise it if a page gets another uploader.
MAX_HELD = 1
#: The manager's methods the policy wraps; without any of them it stays off.
WRAPPED = compat.UPLOAD_METHODS
_ATTRIBUTE = "_sdwec_upload_policy"  # the policy, on the manager instance it governs
_install_lock = threading.Lock()
_session_end_listeners = []


def on_session_end(listener):
    """Call ``listener(session_id)`` whenever a session's upload ends with the session: its
    held file dropped after the session closed, or Streamlit removing the session's files
    (so that what the process derived from the file goes too)."""
    _session_end_listeners.append(listener)


def _session_ended(session_id):
    for listener in _session_end_listeners:
        try:
            listener(session_id)
        except Exception as exc:  # one listener's failure must not stop the sweep
            compat.log_once("session-end", f"releasing an ended session failed: {exc!r}")


def pending_seconds():
    """The window from :data:`PENDING_ENV` (a positive number of seconds), else the default."""
    raw = os.environ.get(PENDING_ENV, "").strip()
    if not raw:
        return DEFAULT_PENDING_SECONDS
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        compat.log_once("window", f"{PENDING_ENV}={raw!r} is not a positive number of "
                                  f"seconds; using {DEFAULT_PENDING_SECONDS:g}")
        return DEFAULT_PENDING_SECONDS
    return value


@dataclass
class _SessionFiles:
    pending: dict = field(default_factory=dict)  # file id -> arrival time (at most one)
    held: OrderedDict = field(default_factory=OrderedDict)  # file id -> None, oldest fetch first
    closed_at: float | None = None  # when a sweep first saw the websocket closed


class UploadPolicy:
    """The per-session limits on one ``MemoryUploadedFileManager`` (see the module's text).

    Parameters
    ----------
    manager : MemoryUploadedFileManager
        The manager to govern; :meth:`attach` wraps its instance's methods.
    is_active : callable
        ``is_active(session_id) -> bool``: whether the session's websocket is connected
        (the runtime's ``is_active_session``).
    window : float
        Seconds a pending file waits for a widget, and a closed session's held file for a
        reconnect.
    clock : callable
        Monotonic seconds (injected by tests).
    is_busy : callable
        ``is_busy(session_id) -> bool``: whether the session's script is running now
        (a pending file then waits up to :data:`BUSY_WINDOWS` windows).
    """

    def __init__(self, manager, is_active, window=DEFAULT_PENDING_SECONDS, clock=time.monotonic,
                 is_busy=lambda session_id: False):
        self.manager = manager
        self.is_active = is_active
        self.is_busy = is_busy
        self.window = float(window)
        self.clock = clock
        self._original = {name: getattr(manager, name) for name in WRAPPED}
        self._sessions = {}
        self._lock = threading.RLock()  # held around the manager's own calls too
        self._stop = threading.Event()

    # ------------------------------------------------------------------ the wrapped methods
    def attach(self):
        """Route the manager's calls through this policy (on this instance only)."""
        for name in WRAPPED:
            setattr(self.manager, name, getattr(self, name))
        setattr(self.manager, _ATTRIBUTE, self)
        return self

    def add_file(self, session_id, file):
        with self._lock:
            files = self._sessions.setdefault(session_id, _SessionFiles())
            for earlier in [f for f in files.pending if f != file.file_id]:
                self._drop(session_id, earlier, "a newer upload arrived")
            files.held.pop(file.file_id, None)  # new bytes under a held id: pending again
            self._original["add_file"](session_id, file)
            files.pending = {file.file_id: self.clock()}

    def get_files(self, session_id, file_ids):
        with self._lock:
            records = self._original["get_files"](session_id, file_ids)
            if not records:
                return records
            files = self._sessions.setdefault(session_id, _SessionFiles())
            fetched = {record.file_id for record in records}
            for file_id in fetched:
                files.pending.pop(file_id, None)
                files.held[file_id] = None
                files.held.move_to_end(file_id)
            for file_id in [f for f in files.held if f not in fetched]:
                if len(files.held) <= MAX_HELD:
                    break
                self._drop(session_id, file_id, "its widget fetched a newer file")
            return records

    def remove_file(self, session_id, file_id):
        with self._lock:
            self._original["remove_file"](session_id, file_id)
            self._forget(session_id, file_id)

    def remove_session_files(self, session_id):
        with self._lock:
            self._original["remove_session_files"](session_id)
            self._sessions.pop(session_id, None)
        _session_ended(session_id)

    # ------------------------------------------------------------------------- the sweep
    def sweep(self):
        """Drop expired pending files and the files of sessions closed for the window;
        return how many files were dropped."""
        dropped, ended = 0, []
        with self._lock:
            now = self.clock()
            self._adopt(now)
            for session_id, files in list(self._sessions.items()):
                try:
                    active = bool(self.is_active(session_id))
                except Exception:  # the runtime is shutting down: leave it to Streamlit
                    active = True
                if active:
                    files.closed_at = None
                elif files.closed_at is None:
                    files.closed_at = now
                for file_id, arrived in list(files.pending.items()):
                    waited = now - arrived
                    if not active or waited >= BUSY_WINDOWS * self.window or (
                            waited >= self.window and not self._busy(session_id)):
                        dropped += self._drop(session_id, file_id, "no widget fetched it")
                if not active and now - files.closed_at >= self.window:
                    for file_id in list(files.held):
                        dropped += self._drop(session_id, file_id, "its session closed")
                    ended.append(session_id)
                if not files.pending and not files.held:
                    del self._sessions[session_id]
        for session_id in ended:  # outside the lock: uploads go on meanwhile
            _session_ended(session_id)
        return dropped

    def _busy(self, session_id):
        try:
            return bool(self.is_busy(session_id))
        except Exception:
            return False

    def _adopt(self, now):
        """Track files the manager holds that the policy has not seen (uploaded before it
        was installed): pending from now, the latest of a session kept."""
        for session_id, records in compat.stored_uploads(self.manager).items():
            files = self._sessions.setdefault(session_id, _SessionFiles())
            unseen = [f for f in records if f not in files.pending and f not in files.held]
            if unseen:
                files.pending.update(dict.fromkeys(unseen, now))
                for file_id in list(files.pending)[:-1]:
                    self._drop(session_id, file_id, "a newer upload arrived")

    def _drop(self, session_id, file_id, why):
        self._original["remove_file"](session_id, file_id)
        self._forget(session_id, file_id)
        LOG.debug("upload %s of session %s dropped: %s", file_id, session_id, why)
        return 1

    def _forget(self, session_id, file_id):
        files = self._sessions.get(session_id)
        if files is not None:
            files.pending.pop(file_id, None)
            files.held.pop(file_id, None)

    def tracked(self, session_id):
        """``(pending ids, held ids)`` of a session, for tests and logs."""
        with self._lock:
            files = self._sessions.get(session_id, _SessionFiles())
            return list(files.pending), list(files.held)

    # ------------------------------------------------------------------- the background
    def start(self, period=None):
        """Sweep every ``period`` seconds (default: a quarter of the window, 0.2-5 s) in a
        daemon thread."""
        period = period or min(5.0, max(0.2, self.window / 4))

        def loop():
            while not self._stop.wait(period):
                try:
                    self.sweep()
                except Exception as exc:  # keep sweeping; say it once
                    compat.log_once("sweep", f"the upload sweep failed: {exc!r}")

        threading.Thread(target=loop, name="sdwec-upload-sweep", daemon=True).start()
        return self

    def stop(self):
        self._stop.set()


def install():
    """Govern the running Streamlit server's uploads with an :class:`UploadPolicy` (once per
    server; later calls return the same policy).  ``None`` where there is no server or its
    upload manager is not the one the compat module knows, which is logged once."""
    manager = compat.upload_manager()
    if manager is None:
        return None
    policy = getattr(manager, _ATTRIBUTE, None)
    if policy is not None:
        return policy
    why = compat.problem("uploads", manager)
    if why:
        compat.log_once("uploads", f"uploads are not governed: {why}")
        return None
    with _install_lock:
        policy = getattr(manager, _ATTRIBUTE, None)
        if policy is None:
            policy = UploadPolicy(manager, compat.session_is_active, pending_seconds(),
                                  is_busy=compat.session_script_running).attach().start()
            LOG.info("uploads: one pending file per session, dropped after %g s unfetched",
                     policy.window)
        return policy
