"""A page's pools: the :class:`~dashboard.pools.PoolRef` of each split of a configuration,
loaded or trained under one progress bar (in the page, or in a worker off the page with
:mod:`dashboard.training_panel`), the sidebar's note on pools not trained yet, and the
redraw of its notes once pools land."""

from __future__ import annotations

import time

import numpy as np
import streamlit as st

from dashboard import estimates, pool_memory, pools, training, upload_plans
from dashboard.config import USER_DATA
from dashboard.echo import plain
from dashboard.progress import Progress, hold_place
from dashboard.training_panel import train_off_page
from sdwec import pool
from sdwec.errors import DataError


def pool_ref(config):
    """The :class:`~dashboard.pools.PoolRef` of ``config``; raises if "your data" has no
    upload yet."""
    if config.dataset != USER_DATA:
        key = pool.PoolKey.for_dataset(config.dataset, config.task, config.n_trees, config.seed)
        return pools.PoolRef(key, None, config.dataset)
    upload = upload_plans.user_dataset()
    refused = upload_plans.refused_upload()
    if upload is None and refused is not None:
        raise DataError(f"the file uploaded on \"Your data\" ({refused[0]}) could not be "
                        f"read. {refused[1]} Open \"Your data\" to upload another file, or "
                        f"pick a shipped dataset.")
    if upload is None:
        raise DataError("this page address points to an uploaded file, and uploads are not "
                        "kept after a reload or in a new session. Open \"Your data\" and upload "
                        "the file again, or pick a shipped dataset.")
    dataset = upload[1]
    key = pool.PoolKey.for_dataset(
        dataset, dataset.task, config.n_trees, config.seed,
        max_samples=upload_plans.upload_max_samples(dataset, config.n_trees, config.seed))
    return pools.PoolRef(key, dataset, dataset.name)


def pool_refs(config):
    """One :class:`~dashboard.pools.PoolRef` per split of ``config`` (seeds ``seed ..
    seed + splits - 1``)."""
    first = pool_ref(config)
    return [first.with_seed(config.seed + i) for i in range(config.splits)]


def _waiting_report(record, before, weight, total, prefix=""):
    """``(done, total, message, seconds left)`` of a pool another process trains (its
    progress file), placed at ``before .. before + weight`` of a bar over ``total``.

    The time left is timed on that process since it started, and assumes the pools after
    this one go at the same pace per unit of ``weight``; ``None`` until a twentieth is done.
    """
    if record is None:
        return (before, total, f"{prefix}waiting for this pool: another session or process "
                               f"is loading or training it (no progress reported yet)", None)
    running = max(0.0, time.time() - record.started)
    done = before + weight * record.fraction
    left = (running / (weight * record.fraction) * (total - done)
            if record.fraction >= 0.05 else None)
    return (done, total,
            f"{prefix}another process is training this pool, running for "
            f"{estimates.duration(running)}: {plain(record.message)}; this page uses it "
            f"when it is done",
            left)


def get_pool(ref):
    """The trained pool of ``ref``, with a progress bar while it is being trained."""
    return get_pools([ref])[0]


def get_pools(refs):
    """The pools of ``refs`` (the splits of a configuration), with one progress bar.

    Pools already in this process come back at once.  The others are read from disk or
    trained (or waited for, when another process trains them), one bar over all of them
    that says "split i of r" and moves by each pool's estimated cost, so it does not
    restart per pool.  When pools were trained or read from disk (a training worker may
    have written them since the sidebar's notes were drawn), the notes are redrawn
    (:func:`on_pools_landed`).
    """
    held = [pools.in_memory(ref) for ref in refs]
    if all(p is not None for p in held):
        pool_memory.POOL_MEMORY.touch([ref.key for ref in refs])
        # The slot the progress bar takes when pools are read or trained: without it the
        # first run after a load (pools read from disk) has one element more above the
        # charts than the next, and the browser rebuilds every chart at the first move.
        hold_place()
        return held
    untrained = pools.untrained(refs)
    if untrained and _trains_off_page(untrained, refs):
        train_off_page(untrained, refs)  # stops this run until the pools are on disk
    todo = set(pools.untrained(refs))
    # Weights: each pool's estimated training seconds (the range's middle); reading one from
    # disk counts as a small fraction of that.
    weights = [float(np.sqrt(np.prod(estimates.training_range([ref]))))
               * (1.0 if ref in todo else 0.02) for ref in refs]
    total = sum(weights)
    first = refs[0]
    r = len(refs)
    if todo:
        count = "" if r == 1 else f"{len(todo)} pools of " if len(todo) == r else \
            f"{len(todo)} of {r} pools of "
        label = f"Training {count}{first.n_trees} trees on {first.shown}"
        factor = estimates.load_factor(first)
        estimate = tuple(factor * t
                         for t in estimates.training_range([first], pools=len(todo)))
    else:
        label, estimate = f"Loading {r} pools of {first.shown} from disk", None
    progress = Progress(label, estimate)
    held, before = [], 0.0
    try:
        for i, (ref, weight) in enumerate(zip(refs, weights)):
            prefix = f"split {i + 1} of {r}: " if r > 1 else ""

            def report(done, whole, message, before=before, weight=weight, prefix=prefix):
                fraction = done / whole if whole else 1.0
                progress(before + weight * fraction, total, prefix + message)

            def waiting(record, before=before, weight=weight, prefix=prefix):
                progress(*_waiting_report(record, before, weight, total, prefix))

            held.append(pools.pool_of(ref, report, waiting, keep={r.key for r in refs}))
            before += weight
    finally:
        progress.close()
    # Trained here, or by a training worker since this run's notes were drawn (counted
    # from a cache that lives for seconds): the notes are counted and drawn again.
    _pools_landed()
    return held


def _trains_off_page(refs, splits=None):
    """Whether the pools of ``refs`` train in a worker: in a page run, when long, or when
    they are the rest of a training of ``splits`` (all the refs) that began in a worker (its
    last pool, short on its own, would otherwise restart the bar in the page)."""
    if training.session_id() is None:
        return False
    if estimates.training_range(refs)[1] >= training.OFF_PAGE_SECONDS:
        return True
    return splits is not None and training.continues_batch(refs, splits)


def cold_start_note(config):
    """A note when pools of ``config`` are not trained yet: how many, roughly how long
    (a range), and whether another process is training them now.  ``None`` when every
    pool is ready.

    However short the training, a move of the seed, the splits or l says how many pools it
    trains before they start (a one-step seed move after an upload trains a new pool too).
    The note is redrawn away when the pools land (:func:`on_pools_landed`)."""
    try:
        refs = pool_refs(config)
    except DataError:
        return None
    todo = pools.untrained(refs)
    if not todo:
        return None
    low, high = estimates.training_range(todo)
    busy = sum(pool.training_progress(r.key) is not None for r in todo)
    first = todo[0]
    if len(refs) == 1:
        count = "This pool is not trained yet"
    elif len(todo) == len(refs):
        count = f"The {len(refs)} pools (one per split) are not trained yet"
    else:
        count = (f"{len(todo)} of the {len(refs)} pools (one per split) "
                 f"{'is' if len(todo) == 1 else 'are'} not trained yet")
    if busy == len(todo):
        # One estimate on the page: the training's own progress bar, with its time left.
        them = "it" if busy == 1 else "them"
        return (f"{count}: another process (a training worker of this dashboard, the "
                f"background warm-up or another replica) is training {them} now; the page "
                f"shows its progress and time left, and uses {them} when done. Trained pools "
                f"are kept on disk, so later visits are instant.")
    trees = (f"{first.n_trees:,} trees" if len(todo) == 1 else
             f"{len(todo)} × {first.n_trees:,} trees in all")
    note = (f"{count}: {trees} on {first.shown} take roughly "
            f"{estimates.duration_range(low, high)}")
    if first.dataset is not None:
        each = estimates.training_range([first])
        note += ((f" ({estimates.duration_range(*each)} a pool)" if len(todo) > 1 else "") +
                 ", timed on one tree grown on a sample of this file (the estimate *Your "
                 "data* shows). ")
    else:
        note += " on this 2-core machine (longer when busy). " + estimates.busy_note()
    if busy:
        note += (f"Another process (a training worker of this dashboard, the background "
                 f"warm-up or another replica) is training "
                 f"{'it' if busy == 1 == len(todo) else f'{busy} of them'} now: the page "
                 f"shows its progress and uses it when it is done. ")
    return note + "Trained pools are kept on disk, so later visits are instant."


def on_pools_landed(callback):
    """Register ``callback()`` for this run: called after :func:`get_pools` trained pools
    (the sidebar redraws its "on disk" and "not trained yet" notes); ``None`` clears it."""
    st.session_state["_pools_landed"] = callback


def _pools_landed():
    pools.warm_pools.clear()
    callback = st.session_state.get("_pools_landed")
    if callback is not None:
        callback()
