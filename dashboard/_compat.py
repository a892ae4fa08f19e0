"""Every use of Streamlit's and Plotly's internals, in one module; the app calls only the
functions here.

Streamlit and Plotly are pinned to the minor versions these uses were tested on
(requirements.txt); each use has a *contract* here (:data:`CONTRACTS`): what it relies on,
checked at server start (:func:`problem`), and in ``tests/test_compat.py``, which CI also
runs against the newest releases.  A use whose contract does not hold is not installed:
that part of the server behaves as plain Streamlit or Plotly does, and one log line says
so.  Pages never break.

The uses:

``rerun``
    :func:`rerun_unknown_fragments_whole`: a rerun a page asks of a fragment its session does
    not hold becomes a rerun of the whole page (``dashboard.launch`` says why), by replacing
    ``AppSession.request_rerun``.
``server_start``
    :func:`before_server_listens` runs the app's start-up (its policies installed, its heavy
    modules imported) inside ``Server.start`` before the server listens: a public hook
    (``st.App(lifespan=...)``) exists only for the ASGI serving mode, which the served
    deployment does not use.
``downloads``
    :func:`keep_built_downloads` makes the session that clicked reference the file its
    download button built (``dashboard.downloads`` says why).
``uploads``
    The upload manager, the sessions' state and the files the manager stores, for the
    upload policy (``dashboard.uploads``).
``session``
    :func:`session_id`: the running script's session, and :func:`session_is_active`.
``cli``
    :func:`streamlit_cli`: Streamlit's command line, as its ``streamlit`` script runs it.
``test_ids``
    The ``data-testid`` names of ``st.metric``'s parts that the Explorer's headline styles
    (:func:`testid`); no public API sets a metric's font size.  A name that is gone styles
    nothing: the headline keeps Streamlit's own look.
``plotly_json``
    :func:`figure_json`: a figure's JSON read from its own properties (``fig._layout``,
    ``fig._data``, each frame's ``_props``, ``_plotly_utils``' typed-array helpers) instead of
    ``fig.to_dict()``, which deep-copies the figure and plotly.py's whole default template
    (~10 kB) that the in-place charts throw away: the three charts of a slider move took
    ~0.7 ms of its run instead of ~2.5.  Where the contract does not hold (the JSON of a probe
    figure differs from the public path's), the public path.
``frontend``
    :func:`frontend_folder`: the installed Streamlit's built frontend, whose content-hashed
    files (``/static/...``: the page's scripts, styles and fonts) nginx serves from disk
    instead of a replica (``deploy/render_nginx.py``).  Found without importing Streamlit;
    where the contract does not hold, the replicas serve them, as before.
``plotly_js``
    :func:`plotly_js_file`: the built Plotly.js inside the installed plotly package, which
    the charts load (``dashboard.charts`` copies it to the app's ``static/``) and nginx
    serves from there (``deploy/render_nginx.py``).  Found without importing plotly; where
    the contract does not hold, the charts say they could not load Plotly.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import importlib.util
import inspect
import json
import logging
import os
import re
import sys
import threading

import numpy as np

LOG = logging.getLogger("dashboard")

_lock = threading.Lock()
_logged = set()


def log_once(key, message):
    """Log ``message`` as a warning the first time ``key`` is seen in this process."""
    if key not in _logged:
        _logged.add(key)
        LOG.warning(message)


# ------------------------------------------------------------------------- the runtime
def runtime():
    """The running server's ``Runtime``, or ``None`` (AppTest, a bare import)."""
    from streamlit import runtime as _runtime

    return _runtime.get_instance() if _runtime.exists() else None


def session_id():
    """The session whose script is running on this thread, or ``None`` (also where the
    contract does not hold: logged once)."""
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        ctx = get_script_run_ctx(suppress_warning=True)
        return None if ctx is None else ctx.session_id
    except Exception as exc:  # an internal moved
        log_once("session", f"the running script's session is unknown: {problem('session')}"
                            f" ({type(exc).__name__})")
        return None


def session_is_active(session):
    """Whether ``session``'s websocket is connected to this server (a closed tab is not)."""
    server = runtime()
    return server is not None and server.is_active_session(session)


def session_script_running(session):
    """Whether ``session``'s script is running now (``False`` when unknown)."""
    server = runtime()
    app_session = None if server is None else server.get_app_session(session)
    state = getattr(app_session, "_state", None)
    return getattr(state, "name", "") == "APP_IS_RUNNING"


# ------------------------------------------------------------------------------- rerun
_WHOLE = "_sdwec_unknown_fragment_reruns_whole"
_RAN_WHOLE = "_sdwec_ran_whole_page"


def rerun_unknown_fragments_whole():
    """Replace ``AppSession.request_rerun`` (once; idempotent), which drops a rerun of a
    fragment the session does not hold ("The fragment with id ... does not exist anymore"),
    so that such a rerun reruns the whole page with the same widget states: always for
    a user's rerun, and for an automatic one (``run_every``) only in a session that has
    never run the whole page (in one that has, the fragment was removed by a full run and
    the poll is stale).  ``False`` when the contract does not hold; then nothing changes."""
    from streamlit.runtime.app_session import AppSession

    original = AppSession.request_rerun
    if getattr(original, _WHOLE, False):
        return True
    why = problem("rerun")
    if why:
        log_once("rerun", f"a reconnected page's fragment reruns are dropped as Streamlit "
                          f"drops them (its pages rerun whole instead): {why}")
        return False

    @functools.wraps(original)
    def request_rerun(self, client_state):
        if client_state is not None:
            fragment_id = client_state.fragment_id
            if not fragment_id:
                setattr(self, _RAN_WHOLE, True)
            elif not self.has_fragment(fragment_id) and (
                    not client_state.is_auto_rerun or not getattr(self, _RAN_WHOLE, False)):
                whole = type(client_state)()
                whole.CopyFrom(client_state)
                whole.ClearField("fragment_id")
                whole.is_auto_rerun = False
                setattr(self, _RAN_WHOLE, True)
                client_state = whole
        else:
            setattr(self, _RAN_WHOLE, True)  # None reruns the whole page with the last state
        return original(self, client_state)

    setattr(request_rerun, _WHOLE, True)
    AppSession.request_rerun = request_rerun
    return True


def reruns_unknown_fragments_whole():
    """Whether :func:`rerun_unknown_fragments_whole` is in force in this process."""
    from streamlit.runtime.app_session import AppSession

    return bool(getattr(AppSession.request_rerun, _WHOLE, False))


# ------------------------------------------------------------------------- server start
def streamlit_cli(argv):
    """Run Streamlit's command line (``python -m streamlit``) with ``argv``."""
    from streamlit.web import cli

    sys.argv = ["streamlit", *argv]
    cli.main(prog_name="streamlit")


def before_server_listens(start):
    """Call ``start()`` in ``Server.start``, after the runtime exists and before the server
    accepts its first connection (once per server; idempotent per ``start``).  Returns
    ``False`` when the contract does not hold; then nothing is wrapped."""
    why = problem("server_start")
    if why:
        log_once("server_start", f"start-up work runs at the first page instead: {why}")
        return False
    from streamlit.web.server.server import Server

    original = Server.start
    starts = getattr(original, "_sdwec_starts", None)
    if starts is not None:  # wrapped already: one more call in the same wrapper
        if start not in starts:
            original._sdwec_starts = (*starts, start)
        return True

    @functools.wraps(original)
    async def started(self):
        for run in started._sdwec_starts:
            try:
                run()
            except Exception:  # the server starts all the same; what is missing is logged
                LOG.exception("start-up work failed; the server starts without it")
        await original(self)

    started._sdwec_starts = (start,)
    Server.start = started
    return True


# ---------------------------------------------------------------------------- downloads
#: Suffix of the coordinate under which a session references the file its click built.
BUILT_SUFFIX = ".built"
_KEPT = "_sdwec_keeps_built_downloads"


def media_file_manager():
    """The running server's media file manager, or ``None``."""
    server = runtime()
    return None if server is None else server.media_file_mgr


def file_id_of(url):
    """The stored file's id in a media URL (``/media/<id>.<ext>``)."""
    return os.path.splitext(url.rsplit("/", 1)[-1])[0]


def keep_built_downloads(manager):
    """Wrap ``manager.execute_deferred`` (this instance) so the file it builds is referenced
    by the session whose button registered it, until that session's next run.  ``True``
    when wrapped (now or before), ``False`` when the contract does not hold."""
    if getattr(manager, _KEPT, False):
        return True
    why = problem("downloads", manager)
    if why:
        log_once("downloads", f"built downloads are not kept: {why}")
        return False
    with _lock:
        if getattr(manager, _KEPT, False):
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
                        refs[session][f"{coordinates}{BUILT_SUFFIX}"] = file_id_of(url)
            return url

        manager.execute_deferred = execute_deferred
        setattr(manager, _KEPT, True)
    return True


# ------------------------------------------------------------------------------ uploads
#: The upload manager's methods the upload policy wraps.
UPLOAD_METHODS = ("add_file", "get_files", "remove_file", "remove_session_files")


def upload_manager():
    """The running server's upload manager, or ``None``."""
    server = runtime()
    return None if server is None else server.uploaded_file_mgr


def stored_uploads(manager):
    """``{session id: [file ids]}`` the manager holds (empty when it does not say)."""
    storage = getattr(manager, "file_storage", None)
    if not isinstance(storage, dict):
        return {}
    return {session: list(records) for session, records in list(storage.items())}


# ----------------------------------------------------------------------------- test ids
#: The parts of ``st.metric`` the Explorer's headline styles.
METRIC_TESTIDS = ("stMetricValue", "stMetricDelta", "stMetricDeltaDescription")


def testid(name):
    """The CSS selector of Streamlit's element part ``name`` (one of :data:`METRIC_TESTIDS`)."""
    if name not in METRIC_TESTIDS:
        raise ValueError(f"{name!r} is not a test id this module vouches for")
    return f'[data-testid="{name}"]'


def frontend_testids(names=METRIC_TESTIDS):
    """Which of ``names`` the installed Streamlit's frontend bundle still contains."""
    import streamlit

    folder = os.path.join(os.path.dirname(streamlit.__file__), "static", "static", "js")
    found = set()
    for entry in os.scandir(folder):
        if entry.name.endswith(".js"):
            with open(entry.path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
            found.update(n for n in names if re.search(f"[`'\"]{n}[`'\"]", text))
    return found


# ---------------------------------------------------------------------------- contracts
def _missing(obj, names):
    return [n for n in names if not hasattr(obj, n)]


def _rerun_contract(_=None):
    from streamlit.proto.ClientState_pb2 import ClientState
    from streamlit.runtime.app_session import AppSession

    request = getattr(AppSession, "request_rerun", None)
    request = getattr(request, "__wrapped__", request)  # our own replacement, if installed
    if request is None or list(inspect.signature(request).parameters) != [
            "self", "client_state"]:
        return "AppSession.request_rerun is not (self, client_state)"
    if not callable(getattr(AppSession, "has_fragment", None)) or list(
            inspect.signature(AppSession.has_fragment).parameters) != ["self", "fragment_id"]:
        return "AppSession.has_fragment(self, fragment_id) is gone"
    fields = set(ClientState.DESCRIPTOR.fields_by_name)
    gone = sorted({"fragment_id", "is_auto_rerun", "widget_states"} - fields)
    if gone:
        return f"ClientState lacks {', '.join(gone)}"
    # The rule this replaces: an unknown fragment's rerun is dropped before the script runs.
    source = inspect.getsource(request)
    if "has_fragment(fragment_id)" not in source:
        return "request_rerun no longer drops an unknown fragment's rerun: see if the " \
               "replacement is still needed"
    return None


def _server_start_contract(_=None):
    from streamlit.web.server.server import Server

    if not inspect.iscoroutinefunction(getattr(Server, "start", None)):
        return "streamlit.web.server.server.Server.start is not a coroutine function"
    if list(inspect.signature(Server.start).parameters) != ["self"]:
        return f"Server.start takes {inspect.signature(Server.start)}, not (self)"
    # The runtime (and its managers) must exist before start(): created in __init__.
    source = inspect.getsource(Server.__init__)
    if "Runtime(" not in source:
        return "Server.__init__ no longer creates the Runtime"
    return None


def _downloads_contract(manager=None):
    from streamlit.runtime.media_file_manager import MediaFileManager

    if manager is None:
        from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

        manager = MediaFileManager(MemoryMediaFileStorage("/media"))
    gone = _missing(manager, ("execute_deferred", "add_deferred", "clear_session_refs",
                              "_deferred_callables", "_files_by_session_and_coord", "_lock"))
    if gone:
        return f"{type(manager).__name__} lacks {', '.join(gone)}"
    if list(inspect.signature(manager.execute_deferred).parameters) != ["file_id"]:
        return f"execute_deferred takes {inspect.signature(manager.execute_deferred)}"
    if not isinstance(manager._deferred_callables, dict) or not isinstance(
            manager._files_by_session_and_coord, dict):
        return "the deferred callables or the session references are not dicts"
    # The deferred entry's keys the wrapper reads.
    source = inspect.getsource(MediaFileManager.add_deferred)
    gone = [k for k in ('"session_id"', '"coordinates"') if k not in source]
    if gone:
        return f"add_deferred no longer stores {', '.join(gone)} with the deferred callable"
    return None


def _uploads_contract(manager=None):
    from streamlit.runtime.app_session import AppSession, AppSessionState
    from streamlit.runtime.runtime import Runtime

    if manager is None:
        from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager

        manager = MemoryUploadedFileManager("/_stcore/upload_file")
    gone = [n for n in UPLOAD_METHODS if not callable(getattr(manager, n, None))]
    if gone:
        return f"{type(manager).__name__} lacks {', '.join(gone)}"
    if not isinstance(getattr(manager, "file_storage", None), dict):
        return f"{type(manager).__name__}.file_storage is not a dict of the stored files"
    gone = _missing(Runtime, ("uploaded_file_mgr", "is_active_session", "get_app_session"))
    if gone:
        return f"Runtime lacks {', '.join(gone)}"
    if "APP_IS_RUNNING" not in AppSessionState.__members__:
        return "AppSessionState has no APP_IS_RUNNING"
    if "self._state" not in inspect.getsource(AppSession.__init__):
        return "AppSession keeps its state elsewhere than _state"
    return None


def _session_contract(_=None):
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx
        from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext
    except ImportError as exc:
        return f"get_script_run_ctx moved ({exc})"
    if "suppress_warning" not in inspect.signature(get_script_run_ctx).parameters:
        return "get_script_run_ctx takes no suppress_warning"
    if "session_id" not in {f.name for f in dataclasses.fields(ScriptRunContext)}:
        return "ScriptRunContext has no session_id"
    return None


def _test_ids_contract(_=None):
    gone = sorted(set(METRIC_TESTIDS) - frontend_testids())
    return f"the frontend has no data-testid {', '.join(gone)}" if gone else None


# ------------------------------------------------------------------- plotly figures
#: Typed arrays of plotly.js by numpy dtype; 64-bit integers are narrowed as plotly.py does.
_TYPED = {"int8": "i1", "uint8": "u1", "int16": "i2", "uint16": "u2", "int32": "i4",
          "uint32": "u4", "float32": "f4", "float64": "f8"}
_NARROWER = {"int64": ("int8", "int16", "int32"), "uint64": ("uint8", "uint16", "uint32")}


def _typed_array(array, to_typed_array_spec):
    """A 1-D numeric array as plotly.py's ``to_typed_array_spec`` gives it, without its
    copies and dataframe checks (most of a figure's serialization); anything else through
    it."""
    name = str(array.dtype)
    if array.ndim != 1 or not array.size or not array.dtype.isnative or (
            name not in _TYPED and name not in _NARROWER):
        return to_typed_array_spec(array)
    if name in _NARROWER:
        low, high = array.min(), array.max()
        name = next((n for n in _NARROWER[name]
                     if np.iinfo(n).min <= low and high <= np.iinfo(n).max), None)
        if name is None:
            return array
    return {"dtype": _TYPED[name],
            "bdata": base64.b64encode(np.ascontiguousarray(array, dtype=name)).decode("ascii")}


def _packed(value):
    """``value`` with its numpy arrays packed as plotly.py's ``to_dict`` packs them (base64
    typed arrays), built anew rather than copied and changed in place."""
    from _plotly_utils.utils import is_homogeneous_array, is_skipped_key, to_typed_array_spec

    def pack(item):
        if isinstance(item, dict):
            return {key: part if is_skipped_key(key)
                    else array(part) if is_homogeneous_array(part) else pack(part)
                    for key, part in item.items()}
        if isinstance(item, (list, tuple)):
            return [pack(part) for part in item]
        return item

    def array(item):
        return (_typed_array(item, to_typed_array_spec) if isinstance(item, np.ndarray)
                else to_typed_array_spec(item))

    return pack(value)


def _fast_dict(fig, template):
    layout = {key: template if key == "template" else _packed(value)
              for key, value in fig._layout.items()}
    layout.setdefault("template", template)
    spec = {"data": [_packed(trace) for trace in fig._data], "layout": layout}
    frames = [_packed(frame._props) for frame in fig._frame_objs]
    if frames:
        spec["frames"] = frames
    return spec


def _public_dict(fig, template):
    spec = fig.to_dict()
    spec["layout"]["template"] = template
    return spec


def _json(spec):
    from plotly.utils import PlotlyJSONEncoder

    return json.dumps(spec, cls=PlotlyJSONEncoder, separators=(",", ":"))


def _probe():
    """A figure with what the charts carry: typed arrays, narrowed integers, NaN, a uid,
    a template and frames."""
    y = np.array([0.5, np.nan, 0.25])
    import plotly.graph_objects as go

    return go.Figure([go.Bar(x=np.array([1, 2, 3]), y=y, uid="a"),
                      go.Scatter(x=[1, 2], y=np.array([3, 2**40]), name="s")],
                     layout={"title": "t", "height": 300, "xaxis": {"range": [0, 4]}},
                     frames=[go.Frame(data=[go.Bar(y=y * 2)], name="f")])


def _plotly_json_contract(_=None):
    template = {"layout": {"font": {"size": 12}}}
    fast = _json(_fast_dict(_probe(), template))
    public = _json(_public_dict(_probe(), template))
    return None if fast == public else "the figure read in place differs from fig.to_dict()"


@functools.cache
def _figures_in_place():
    """Whether the ``plotly_json`` contract holds (checked once per process, logged if not)."""
    why = problem("plotly_json")
    if why:
        log_once("plotly_json", f"charts serialize through fig.to_dict() (slower): {why}")
    return why is None


def figure_json(fig, template):
    """``fig`` as JSON with ``template`` for plotly.py's template: what ``fig.to_dict()``
    gives, read in place (the public path where the contract does not hold).  A trace's
    ``uid`` is kept (``plotly.io.to_json`` drops it)."""
    build = _fast_dict if _figures_in_place() else _public_dict
    return _json(build(fig, template))


# ---------------------------------------------------------------- the frontend's files
def _package_folder(name):
    """Where the installed package ``name`` lives, found without importing it (a proxy
    renders its configuration without the app's start-up), or ``None``."""
    spec = importlib.util.find_spec(name)
    places = list(spec.submodule_search_locations or ()) if spec is not None else []
    return places[0] if places else None


def _frontend_candidate():
    """``<streamlit package>/static``, or ``None`` when Streamlit is not installed."""
    folder = _package_folder("streamlit")
    return None if folder is None else os.path.join(folder, "static")


def _where_it_holds(name, candidate, otherwise):
    """``candidate()`` where contract ``name`` holds, else ``None``, logged once as
    ``otherwise`` and why."""
    why = problem(name)
    if why:
        log_once(name, f"{otherwise}: {why}")
        return None
    return candidate()


def frontend_folder():
    """The installed Streamlit's built frontend: the folder holding its ``index.html``, whose
    ``static/`` subfolder is what the page loads as ``./static/...`` (content-hashed names).
    ``None`` where the contract does not hold (logged once): then only the replicas serve
    those files."""
    return _where_it_holds("frontend", _frontend_candidate,
                           "Streamlit's frontend files are left to the replicas")


def _frontend_contract(folder=None):
    folder = _frontend_candidate() if folder is None else os.fspath(folder)
    if folder is None:
        return "streamlit is not installed for this interpreter"
    try:
        with open(os.path.join(folder, "manifest.json"), encoding="utf-8") as handle:
            manifest = json.load(handle)
        with open(os.path.join(folder, "index.html"), encoding="utf-8") as handle:
            page = handle.read()
    except (OSError, ValueError) as exc:
        return f"{folder} has no readable manifest.json and index.html ({exc})"
    entry = manifest.get("index.html") if isinstance(manifest, dict) else None
    script = entry.get("file") if isinstance(entry, dict) else None
    if not isinstance(script, str) or not script.startswith("static/"):
        return "manifest.json's 'index.html' entry names no script under static/"
    if not os.path.isfile(os.path.join(folder, script)):
        return f"the page's script {script} is not in {folder}"
    # The page's own URL for it: nginx maps /static/... to this folder's static/... .
    if f'src="./{script}"' not in page:
        return f"index.html no longer loads ./{script}: its URLs may not map to the folder"
    return None


# ---------------------------------------------------------------- Plotly.js
#: The file's name, in the plotly package's ``package_data/``.
PLOTLY_JS = "plotly.min.js"
#: A built Plotly.js's opening comment and the version it names (``plotly.js v4.1.1``,
#: ``plotly.js (basic - minified) v4.1.1``).
PLOTLY_JS_BANNER = re.compile(r"plotly\.js (?:\([^)]*\) )?v(\d+\.\d+\.\d+\S*)")


def _plotly_js_candidate():
    """``<plotly package>/package_data/plotly.min.js``, or ``None`` when plotly is not
    installed."""
    folder = _package_folder("plotly")
    return None if folder is None else os.path.join(folder, "package_data", PLOTLY_JS)


def plotly_js_file():
    """The built Plotly.js the installed plotly package ships, or ``None`` where the contract
    does not hold (logged once)."""
    return _where_it_holds("plotly_js", _plotly_js_candidate,
                           "the charts cannot load Plotly.js")


def _plotly_js_contract(path=None):
    path = _plotly_js_candidate() if path is None else os.fspath(path)
    if path is None:
        return "plotly is not installed for this interpreter"
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            head = handle.read(200)
    except OSError as exc:
        return f"no readable {path} ({exc})"
    if not PLOTLY_JS_BANNER.search(head):
        return f"{path} does not start with Plotly.js's banner ('plotly.js v<version>')"
    return None


#: name -> (check, what uses it, what to look at when it breaks).
CONTRACTS = {
    "rerun": (_rerun_contract, "a reconnected page's fragment rerun run as a whole-page rerun",
              "streamlit/runtime/app_session.py: AppSession.request_rerun, has_fragment"),
    "server_start": (_server_start_contract, "start-up work before the server listens",
                     "streamlit/web/server/server.py: Server.__init__ and Server.start"),
    "downloads": (_downloads_contract, "built downloads kept until the clicking session's "
                  "next run", "streamlit/runtime/media_file_manager.py: execute_deferred, "
                  "add_deferred, the private dicts"),
    "uploads": (_uploads_contract, "one pending upload per session",
                "streamlit/runtime/memory_uploaded_file_manager.py and "
                "runtime.py/app_session.py: is_active_session, get_app_session, _state"),
    "session": (_session_contract, "the running script's session id",
                "streamlit/runtime/scriptrunner_utils/script_run_context.py"),
    "test_ids": (_test_ids_contract, "the Explorer headline's metric sizes",
                 "the data-testid names of st.metric in streamlit/static"),
    "plotly_json": (_plotly_json_contract, "charts' JSON read from the figure in place",
                    "plotly/basedatatypes.py (_layout, _data, _frame_objs, _props) and "
                    "_plotly_utils/utils.py (to_typed_array_spec, is_homogeneous_array, "
                    "is_skipped_key)"),
    "frontend": (_frontend_contract, "Streamlit's frontend files served by nginx from disk",
                 "streamlit/static: index.html (its module script), manifest.json (the "
                 "'index.html' entry's file) and static/ beside them"),
    "plotly_js": (_plotly_js_contract, "Plotly.js loaded by the charts, served by nginx",
                  "plotly/package_data/plotly.min.js in the plotly package"),
}


def problem(name, obj=None):
    """What breaks contract ``name`` (on ``obj`` where it checks an instance), or ``None``
    when it holds; a check that raises counts as broken."""
    check = CONTRACTS[name][0]
    try:
        return check(obj)
    except Exception as exc:  # an internal moved in a way the check did not foresee
        return f"{type(exc).__name__}: {exc}"
