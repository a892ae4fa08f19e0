"""Pool training off the page, as a session sees it: when training runs in a worker process
(:data:`OFF_PAGE_SECONDS`), this server's :class:`~dashboard.jobs.JobRegistry`, and what a
session remembers of its trainings (cancelled pools, the pools a training began with).

Draws nothing: the progress line and the Cancel button are
:mod:`dashboard.training_panel`'s.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time

import streamlit as st

from dashboard import _compat as compat
from dashboard import jobs

LOG = logging.getLogger("dashboard")

#: Training from this many seconds (the estimate's high end) runs off the page (below).
OFF_PAGE_DEFAULT_SECONDS = 10.0


#: Training whose estimate (the range's high end) reaches this runs in a worker process
#: (dashboard/jobs.py) with a Cancel button; shorter training runs in the page, where
#: starting a process (about 2 s) would cost more than it saves.  ``$SDWEC_OFF_PAGE_SECONDS``
#: overrides it (``inf``: always in the page; benchmarks/jobs.py measures both).
def _off_page_seconds(default=OFF_PAGE_DEFAULT_SECONDS):
    text = os.environ.get("SDWEC_OFF_PAGE_SECONDS")
    try:
        return default if text is None else float(text)
    except ValueError:  # a typo in the server's environment must not take the pages down
        LOG.warning("SDWEC_OFF_PAGE_SECONDS=%r is not a number of seconds; using %g",
                    text, default)
        return default


OFF_PAGE_SECONDS = _off_page_seconds()
#: How often the page's progress fragment reads the workers' progress.
JOB_POLL_SECONDS = 1.0
_JOBS = None
_JOBS_LOCK = threading.Lock()


def pool_jobs():
    """This server process's :class:`~dashboard.jobs.JobRegistry` (created on first use)."""
    global _JOBS
    with _JOBS_LOCK:
        if _JOBS is None:
            _JOBS = jobs.JobRegistry(alive=compat.session_is_active)
            atexit.register(_JOBS.stop_all)
        return _JOBS

def session_id():
    """This script run's session, or ``None`` outside a page run."""
    return compat.session_id()


def cancelled():
    """Pool keys whose training this session cancelled (until it asks again)."""
    return st.session_state.setdefault("_cancelled_pools", set())


def cancel_training(keys, session):
    """Button callback: stop ``session``'s interest in the trainings of ``keys``."""
    registry = pool_jobs()
    for key in keys:
        registry.cancel(key, session)
    cancelled().update(keys)


def train_again(keys):
    """Button callback: let the pools of ``keys`` train again after a cancel or a failure."""
    cancelled().difference_update(keys)
    st.session_state.pop(_BATCH_STATE, None)  # a new training: its bar and time anew
    for key in keys:
        pool_jobs().forget(key)


#: Session key of the pools one off-page training started with (see :func:`batch`).
_BATCH_STATE = "_off_page_batch"


def batch(todo, refs):
    """``(pools, started)``: how many pools the training that ``todo`` is left of started
    with, and when (``time.time()``).  Each pool lands in a run of its own, so the
    progress line counts over the pools the training began with, not those left: its bar
    goes on from where the last pool ended instead of restarting at every pool."""
    state = st.session_state
    keys, left = tuple(r.key for r in refs), frozenset(r.key for r in todo)
    kept = state.get(_BATCH_STATE)
    if kept is None or kept[0] != keys or not left <= kept[1]:
        kept = state[_BATCH_STATE] = (keys, left, time.time())
    return len(kept[1]), kept[2]


def continues_batch(refs, splits):
    """Whether the pools of ``refs`` are the rest of an off-page training of ``splits``
    (all the refs) that this session began."""
    kept = st.session_state.get(_BATCH_STATE)
    return (kept is not None and kept[0] == tuple(r.key for r in splits)
            and {r.key for r in refs} < kept[1])
