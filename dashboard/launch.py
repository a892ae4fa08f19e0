"""Start the dashboard's server: ``python -m dashboard.launch run app.py [streamlit options]``
(or ``python path/to/dashboard/launch.py run ...``).

The same command line as ``python -m streamlit``, with two changes to the server, both made
before it accepts a connection:

- a rerun that a page asks of a fragment the server's session does not hold becomes a rerun
  of the whole page, with the same widget states, instead of being dropped;
- :func:`start_up`: the upload policy and kept downloads are installed on the server's
  managers, the app's heavy modules imported, the shipped datasets read, and the modules
  of ``$SDWEC_METHODS`` (methods of the user's own) imported.  Done at the first script
  run instead, a replica no browser had opened yet ran without the upload policy, and a
  restarted replica's first page waited for the imports and the reads (results/serve.md).

Under ``run`` it also prints the addresses to open itself, once the server listens
(:func:`announce_when_serving`), with Streamlit's banner turned off (:data:`_NO_BANNER`)
unless the command line sets that flag.

Every touch of Streamlit's internals is in ``dashboard._compat``, which checks
each against its contract first and leaves plain Streamlit behaviour (logged) where one
does not hold.

Why: the Explorer's solver controls rerun only a fragment (``dashboard.sidebar.page_setup``),
so a slider move neither runs nor sends the sidebar's pool widgets and notes.  A page whose
server process went away (a replica killed and failed over, a restarted server) reconnects
to a new session that has never run the page, and its next slider move asks that session
for a fragment rerun.  Streamlit 1.67 discards such a request ("The fragment with id ...
does not exist anymore") before any of the app's code runs, so without this every slider
move after a failover is lost (where, and how it is replaced:
:func:`dashboard._compat.rerun_unknown_fragments_whole`).  (Since
mid-2025 the browser asks for a whole run on reconnecting only when its last run was a
fragment's; after a whole-page run it does not, and the Explorer's λ moves after a replica
was killed were all dropped with this off: measured on 1.67, results/serve.md.)  The
app cannot fix that from its script: the request is dropped before the script runs, and in
a new process before it has ever been imported.  Hence a start-up hook, and the pages use
their fragment only when it is installed (:func:`installed`); under a plain
``streamlit run app.py`` they rerun whole, which is correct, only slower.

What is converted, and what is still dropped as Streamlit drops it:

- a user's rerun (a widget moved) of an unknown fragment: always converted, since dropping
  it loses what the user did;
- an automatic rerun (``st.fragment(run_every=...)``, the training panel's poll): converted
  only in a session that has never run the whole page (the failover case); in a session
  that has, the fragment was removed by a full run and the poll in flight is stale, and a
  full rerun for it would only repeat the run that removed it.
"""

import importlib
import logging
import pkgutil
import socket
import sys
import threading
import time
from pathlib import Path

if __name__ == "__main__" and sys.path and Path(sys.path[0]).resolve() == Path(__file__).parent:
    # Run by its path (``python .../dashboard/launch.py``, as ``sdwec dashboard`` does for the
    # installed app): its folder's modules must not shadow others (config, docs, jobs), and
    # its package must be importable as ``dashboard``, as Streamlit will make it for app.py.
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from dashboard import _compat as compat  # noqa: E402

LOG = logging.getLogger("dashboard")
#: What a page's first run would import: the app's modules and the library behind them.
HEAVY = ("sdwec", "sklearn", "plotly", "pandas")


def install():
    """The reconnected pages' fix (module docstring); ``True`` when in force."""
    return compat.rerun_unknown_fragments_whole()


def installed():
    """Whether this process's server turns unknown fragment reruns into whole-page reruns
    (started by :func:`main`, or :func:`install` called before the first session)."""
    return compat.reruns_unknown_fragments_whole()


def import_app_modules():
    """Import :data:`HEAVY` and every module of the ``dashboard`` package, so that no page's
    first run does; return the seconds it took.  A module that fails to import is logged
    and left for the page, which shows its error as it would have."""
    import dashboard

    start = time.perf_counter()
    names = [*HEAVY, *(f"dashboard.{m.name}" for m in pkgutil.iter_modules(dashboard.__path__)
                       if m.name != "launch")]
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:  # the page will say what is wrong, where it is read
            LOG.warning("start-up: %s did not import (%s: %s)", name, type(exc).__name__, exc)
    return time.perf_counter() - start


def read_shipped_datasets():
    """Read every shipped dataset once, so that no page's first run does; return the seconds
    it took.  Every page's sidebar shows how many of each dataset's default pools are on
    disk, which needs each dataset's rows (:func:`dashboard.config.dataset_splits`, kept for
    the process): left to the first page, reading the eleven files (NSL-KDD's most) was
    most of a restarted replica's first run (results/serve.md)."""
    from dashboard import config
    from sdwec import datasets

    start = time.perf_counter()
    for name in datasets.names():
        try:
            config.dataset_splits(name)
        except Exception as exc:  # the page will say what is wrong with it
            LOG.warning("start-up: dataset %s could not be read (%s: %s)", name,
                        type(exc).__name__, exc)
    return time.perf_counter() - start


def start_up():
    """What the server does before it accepts its first connection: the upload policy and
    kept downloads installed on its managers, the app's modules imported (the cache
    decorators need the runtime, so this runs once it exists), the shipped datasets read."""
    from dashboard import downloads, uploads

    uploads.install()
    downloads.install()
    LOG.info("start-up: app modules imported in %.1f s", import_app_modules())
    LOG.info("start-up: shipped datasets read in %.1f s", read_shipped_datasets())
    try:
        from sdwec import methods

        loaded = methods.load_plugins()
        if loaded:
            LOG.info("start-up: methods of %s registered", ", ".join(loaded))
    except ImportError as exc:  # app.py says so on the page
        LOG.warning("start-up: %s", exc)


#: The command-line flag that turns Streamlit's own banner off.  Started headless (the default
#: on a machine without a display) Streamlit looks the machine's external address up on the
#: internet (checkip.amazonaws.com) for its banner, and offline warns "Did not auto detect
#: external IP": a request out of the machine at every start, and a warning that reads like
#: a fault.  The launcher prints the local and network addresses itself instead.
_NO_BANNER = "--logger.hideWelcomeMessage"
#: Addresses the server listens on everywhere: the banner names localhost and the network's.
_EVERYWHERE = {"", "0.0.0.0", "::"}


def serving_urls(port, address="", base_path="", network_ip=None, scheme="http"):
    """The banner's ``(name, url)`` pairs for a server on ``port``: its one address where it
    listens on one, else localhost and ``network_ip`` (where known)."""
    path = f"/{base_path.strip('/')}" if base_path.strip("/") else ""
    if address not in _EVERYWHERE:
        return [("URL", f"{scheme}://{address}:{port}{path}")]
    urls = [("Local URL", f"{scheme}://localhost:{port}{path}")]
    if network_ip:
        urls.append(("Network URL", f"{scheme}://{network_ip}:{port}{path}"))
    return urls


def network_ip():
    """This machine's address on its network, or ``None``: the source address of a route out
    (a UDP socket's connect sends nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: any routed address will do
            return probe.getsockname()[0]
        except OSError:
            return None


def announce_when_serving(timeout=600):
    """Print :func:`serving_urls` once the server accepts connections (in a thread of its own:
    called before the server listens)."""
    import streamlit as st

    port, address = st.get_option("server.port"), st.get_option("server.address") or ""
    if address.startswith("unix://"):
        return
    scheme = "https" if st.get_option("server.sslCertFile") else "http"
    urls = serving_urls(port, address, st.get_option("server.baseUrlPath") or "",
                        network_ip(), scheme)

    def wait_then_print():
        host = "127.0.0.1" if address in _EVERYWHERE else address
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with socket.create_connection((host, port), timeout=1):
                    break
            except OSError:
                time.sleep(0.2)
        else:
            return
        lines = ["", "  You can now view SDWEC Explorer in your browser.", "",
                 *(f"  {name}: {url}" for name, url in urls), ""]
        print("\n".join(lines), flush=True)

    threading.Thread(target=wait_then_print, name="banner", daemon=True).start()


def _log_to_stderr():
    """The app's and the library's log lines, INFO and up, on stderr (the replica's log):
    what the page leaves out (a training worker's pid, a refused cache entry) is there."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    for name in ("dashboard", "sdwec"):
        logger = logging.getLogger(name)
        if not logger.handlers:
            logger.addHandler(handler)
            logger.setLevel(logging.INFO)
            logger.propagate = False


def main(argv=None):
    """``python -m streamlit`` with :func:`install` done first and :func:`start_up` before
    the server listens; ``argv`` defaults to the command line after the program name."""
    _log_to_stderr()
    install()
    compat.before_server_listens(start_up)
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["run"] and not any(a.split("=")[0] == _NO_BANNER for a in argv):
        argv += [_NO_BANNER, "true"]
        compat.before_server_listens(announce_when_serving)
    compat.streamlit_cli(argv)


if __name__ == "__main__":
    main()
