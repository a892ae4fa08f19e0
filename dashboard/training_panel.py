"""A view: an off-page training's progress line and its Cancel, Train again and Try again
buttons (the worker itself: :mod:`dashboard.jobs`; the session's side:
:mod:`dashboard.training`)."""

from __future__ import annotations

import time

import streamlit as st

from dashboard import estimates, jobs, training
from dashboard.echo import plain
from sdwec import pool


def train_off_page(todo, refs=None):
    """Start (or attach to) the worker training the first of ``todo``'s pools (one at a time,
    as the page trained them: one low-priority core per session), show its progress with a
    Cancel button, and stop this run; the progress fragment reruns the page when the pool is
    on disk.  ``refs``: all the splits ``todo`` belongs to (default ``todo``), for "split i
    of r".  A cancelled or failed training says so and offers to start again."""
    session, registry = training.session_id(), training.pool_jobs()
    refs = list(todo) if refs is None else list(refs)
    keys = tuple(ref.key for ref in todo)
    first = todo[0]
    pools, started = training.batch(todo, refs)

    def trees(n):
        # "9 of 10 pools" beside "split 2 of 10": "9 pools" read as a miscount.
        of = f" of {len(refs)}" if 1 < n < len(refs) else ""
        return (f"{first.n_trees:,} trees on {first.shown}" if n == 1 else
                f"{n}{of} pools of {first.n_trees:,} trees on {first.shown}")

    what = trees(len(todo))   # what a cancel or a failure leaves untrained
    if training.cancelled() & set(keys):
        st.info(f"Training of {what} cancelled: its worker process was stopped and nothing "
                f"was stored. (If another session asked for the same pool, it goes on "
                f"training for that session.)")
        st.button("Train again", on_click=training.train_again, args=(keys,), key="_train_again")
        st.stop()
    job = registry.get(first.key)
    if job is not None and job.state == "failed":
        reason = job.error.splitlines()[-1] if job.error else "no message"
        st.error(f"Training {what} stopped with an error ({plain(reason)}). Try again, or choose "
                 f"fewer trees.")
        st.button("Try again", on_click=training.train_again, args=(keys,), key="_train_again")
        st.stop()
    if job is not None and job.state != "running":  # finished, yet not on disk: again
        registry.forget(first.key)
    registry.want(first.key, first.dataset, session)
    split = (refs.index(first) + 1, len(refs)) if first in refs else (1, 1)
    _training_panel(todo, trees(pools), session, split, pools, started)
    st.stop()


@st.fragment(run_every=training.JOB_POLL_SECONDS)
def _training_panel(todo, what, session, split=(1, 1), pools=None, started=None):
    """The worker's progress and the Cancel button, redrawn every second; reruns the whole
    page once the pool is on disk (or the worker stopped).

    ``split``: ``(i, r)``, the split whose pool trains now; ``pools`` and ``started``: the
    training's pools and start (:func:`dashboard.training.batch`), over which the bar and
    the time left run.
    """
    registry = training.pool_jobs()
    keys = tuple(ref.key for ref in todo)
    registry.touch(session, keys)
    job = registry.get(keys[0])
    # On disk while the job still runs: the worker's last moments (it stores the pool, drops
    # its progress record, then exits); the next split's training can start now.
    if (training.cancelled() & set(keys) or job is None
            or job.state not in ("queued", "running") or pool.is_cached(keys[0])):
        st.rerun(scope="app")
    record = pool.training_progress(keys[0])
    standing = registry.standing(keys[0])
    if standing is not None and record is None:
        # Waiting for a free worker slot (the machine's cap): say where it stands.
        st.progress(0.0, text=f"Training {what}: {standing.text}")
        _caption_and_cancel(keys, session)
        return
    # Between two records the line keeps the last one it showed: falling back to
    # "starting" at 0 would move the bar back and the time left up.
    shown = st.session_state.setdefault("_training_shown", {})
    if record is not None:
        shown.clear()
        shown[keys[0]] = record
    else:
        record = shown.get(keys[0])
    fraction = record.fraction if record is not None else 0.0
    # The worker may wait for another process training the same pool (the background
    # warm-up, another replica): the record is then that process's.
    pid = record.pid if record is not None else job.pid
    who = "a background process" if pid == job.pid else "another process"
    pools = len(todo) if pools is None else pools
    # Time counts from the training's start (the first worker's imports included), or, for
    # one pool that another process trains, from that process's start.
    if started is None or pools == 1:
        started = job.started if pid == job.pid else record.started
    elapsed = max(0.0, time.time() - started)
    done = min(1.0, (pools - len(todo) + fraction) / pools)  # over the training's pools
    i, r = split
    message = plain(record.message) if record is not None else "starting"
    # No pid on the page: it tells a visitor nothing and an attacker which process to aim at
    # (the worker's pid is in the server's log).
    text = (f"Training {what} in {who}: "
            f"{f'split {i} of {r}: ' if r > 1 else ''}{message} · "
            f"{estimates.duration(elapsed)} elapsed")
    if done >= 0.05:
        text += f", about {estimates.duration(elapsed * (1.0 - done) / done)} left"
    else:
        factor = estimates.load_factor(todo[0])
        low, high = estimates.training_range(todo)
        text += f" (roughly {estimates.duration_range(factor * low, factor * high)} in all)"
    st.progress(done, text=text)
    _caption_and_cancel(keys, session)


def _caption_and_cancel(keys, session):
    st.caption("You may switch pages meanwhile: the pool in training goes on, and with several "
               "splits the next one starts when you are back on this page. Other sessions are "
               "not slowed. A training stops if you cancel, or once this tab has been closed "
               f"for {jobs.INTEREST_TIMEOUT_SECONDS:.0f} s and no other session wants the pool.")
    st.button("Cancel training", on_click=training.cancel_training, args=(keys, session),
              key="_cancel_training")
