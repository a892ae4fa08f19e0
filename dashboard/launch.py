"""Start the dashboard's server: ``python -m dashboard.launch run app.py [streamlit options]``
(or ``python path/to/dashboard/launch.py run ...``).

The same command line as ``python -m streamlit``, with one change to the server made before
it starts: a rerun that a page asks of a fragment the server's session does not hold becomes
a rerun of the whole page, with the same widget states, instead of being dropped.

Why: the Explorer's solver controls rerun only a fragment (``dashboard.sidebar.page_setup``),
so a slider move neither runs nor sends the sidebar's pool widgets and notes.  A page whose
server process went away (a replica killed and failed over, a restarted server) reconnects
to a new session that has never run the page, and its next slider move asks that session
for a fragment rerun.  Streamlit 1.67 discards such a request in
``AppSession.request_rerun`` ("The fragment with id ... does not exist anymore") before any
of the app's code runs, so without this every slider move after a failover was lost.  The
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

import functools
import logging
import sys
from pathlib import Path

if __name__ == "__main__" and sys.path and Path(sys.path[0]).resolve() == Path(__file__).parent:
    # Run by its path (``python .../dashboard/launch.py``, as ``sdwec dashboard`` does for the
    # installed app): its folder's modules must not shadow others (config, docs, jobs).
    del sys.path[0]

from streamlit.runtime.app_session import AppSession  # noqa: E402

_MARK = "_sdwec_unknown_fragment_reruns_whole"
_RAN_WHOLE = "_sdwec_ran_whole_page"


def install():
    """Patch ``AppSession.request_rerun`` (once; idempotent) as the module docstring says."""
    original = AppSession.request_rerun
    if getattr(original, _MARK, False):
        return

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

    setattr(request_rerun, _MARK, True)
    AppSession.request_rerun = request_rerun


def installed():
    """Whether this process's server turns unknown fragment reruns into whole-page reruns
    (started by :func:`main`, or :func:`install` called before the first session)."""
    return bool(getattr(AppSession.request_rerun, _MARK, False))


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
    """``python -m streamlit`` with :func:`install` done first; ``argv`` defaults to the
    command line after the program name."""
    install()
    _log_to_stderr()
    from streamlit.web import cli

    sys.argv = ["streamlit", *(sys.argv[1:] if argv is None else argv)]
    cli.main(prog_name="streamlit")


if __name__ == "__main__":
    main()
