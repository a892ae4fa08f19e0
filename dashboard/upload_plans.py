"""This session's upload and the plan of training its pool.

An uploaded file is previewed and parsed once per (bytes, options) and kept for the session
(:func:`upload_preview`, :func:`read_upload`, :func:`user_dataset`); an :class:`UploadPlan`
says what training its pool costs, on full bootstraps or on a row budget per tree, and which
one the session chose (:func:`upload_max_samples`).

A session holds one upload's data: a new file lets go of the previous one's previews, parsed
data and pools in memory (not of its disk cache entries); the session's end lets go of its
previews and pools (:data:`SESSIONS`, told by :mod:`dashboard.uploads` when a closed
session's file goes) and its parsed data goes with its state when Streamlit drops it.
Reading a file and bringing its pools into memory are admitted by the replica's memory
budget first (:mod:`dashboard.memory_budget`).
"""

from __future__ import annotations

import hashlib
import io
import threading
import weakref
from dataclasses import dataclass

import streamlit as st

from dashboard import estimates, memory_budget, pool_memory, pools, training, uploads
from sdwec import budget, datasets, pool


def _digest(data):
    return hashlib.sha256(bytes(data)).hexdigest()


class _Held:
    """One session's upload: the file's digest, its previews, its parsed data's fingerprint
    (which names its pools); the parsed data itself is in the session's state
    (``"user_dataset"``, which the sidebar reads)."""

    def __init__(self, session=None):
        self.session = session
        self.file = None       # digest of the file's bytes
        self.previews = None   # ((digest, sample rows), {target: preview})
        self.source = None     # its pools' PoolKey.source (the parsed data's fingerprint)


#: Seconds after a session's end before its freed memory is handed back (see
#: :meth:`SessionUploads.end`).
TRIM_DELAY_SECONDS = 5.0


class SessionUploads:
    """Each session's :class:`_Held`, and what letting go of one releases.

    The holder lives in the session's state (so it goes with the session whatever
    happens); this keeps a weak reference per session id, so that the upload policy can
    empty it when the session has closed, before Streamlit drops the session itself.

    Parameters
    ----------
    memory : dashboard.pool_memory.PoolMemory
        The pools held in memory; an upload's are let go once no session holds it.
    trim : callable
        Hands freed memory back to the system
        (:func:`dashboard.memory_budget.release_free_memory`).
    stop_training : callable
        ``stop_training(source, session)``: the session no longer wants the trainings of
        the upload ``source`` (a queued training holds the upload's data).
    """

    def __init__(self, memory=pool_memory.POOL_MEMORY, trim=memory_budget.release_free_memory,
                 stop_training=None):
        self.memory = memory
        self.trim = trim
        self.stop_training = _stop_training if stop_training is None else stop_training
        self._lock = threading.Lock()
        self._held = weakref.WeakValueDictionary()  # session id -> _Held

    def holder(self, session, state):
        """The :class:`_Held` of ``session``, kept in its ``state`` (a mapping)."""
        held = state.get("_upload_held")
        if held is None:
            held = state["_upload_held"] = _Held(session)
        with self._lock:
            self._held[session] = held
        return held

    def replace(self, held, file, state):
        """A new file (digest ``file``) in ``held``: let go of the previous one's data
        (its parsed data in ``state`` too)."""
        if held.file != file:
            state.pop("user_dataset", None)
            self._let_go(held)
            held.file = file

    def end(self, session):
        """``session`` has ended: let go of its previews and pools, and a few seconds later
        hand back the memory of its state, which Streamlit drops after telling the upload
        policy."""
        with self._lock:
            held = self._held.pop(session, None)
        if held is not None:
            self._let_go(held)
        later = threading.Timer(TRIM_DELAY_SECONDS, self.trim)
        later.daemon = True
        later.start()

    def _let_go(self, held):
        source = held.source
        held.file = held.previews = held.source = None
        self.let_go_pools(source, held.session)

    def let_go_pools(self, source, session):
        """``session`` is done with the upload ``source`` (its pools' key source): its
        trainings of it are stopped unless others want them, and its pools in memory let
        go unless another session holds the same data; the freed memory is handed back."""
        if source is None:
            return
        self.stop_training(source, session)
        with self._lock:
            in_use = {h.source for h in self._held.values()}
        if source not in in_use:
            self.memory.release(source)
        self.trim()


def _stop_training(source, session):
    registry = training.pool_jobs()
    for job in registry.running() + registry.queued():
        if job.key.source == source and session in job.sessions:
            registry.cancel(job.key, session)


#: This process's sessions' uploads.
SESSIONS = SessionUploads()
uploads.on_session_end(SESSIONS.end)


def _held():
    return SESSIONS.holder(training.session_id(), st.session_state)


def _read_admitted(data, read):
    """``read()`` once the replica's memory budget has room to read ``data``."""
    need = memory_budget.READ_BYTES_PER_FILE_BYTE * len(data)
    with memory_budget.REPLICA.reserve(need, "reading this file"):
        return read()


def _named(data, file_name):
    """``data`` as a file the loader reads under ``file_name``."""
    source = io.BytesIO(bytes(data))
    source.name = file_name or ""
    return source


def upload_preview(data, target, sample_rows=None, file_name=None):
    """:func:`sdwec.datasets.inspect_csv` of an uploaded file, once per (bytes, target,
    sample size: ``sample_rows`` reads a seeded random sample of that many rows).
    ``file_name``, the file's name, lets the loader tell a damaged ``.gz`` from a damaged
    CSV.

    The previews of the current file are kept in the session (one per target tried); a new
    file replaces them.

    Raises
    ------
    sdwec.DataError
        The loader's message, for the page to show.
    """
    held = _held()
    file = _digest(data)
    SESSIONS.replace(held, file, st.session_state)
    kept = held.previews
    if kept is None or kept[0] != (file, sample_rows):
        kept = held.previews = ((file, sample_rows), {})
    if target not in kept[1]:
        preview = _read_admitted(data, lambda: datasets.inspect_csv(
            _named(data, file_name), target=target, max_bytes=datasets.MAX_UPLOAD_BYTES,
            sample_rows=sample_rows))
        # The default target (None) is a named column too: one parse serves both keys.
        kept[1][target] = kept[1][preview.target] = preview
    return kept[1][target]


def read_upload(data, file_name, target, task, exclude=(), missing="drop", sample_rows=None):
    """Parse an uploaded CSV once per (bytes, options) and remember it for the session.

    Parameters
    ----------
    data : bytes
    file_name : str
    target, task, exclude, missing, sample_rows
        :func:`sdwec.datasets.from_csv`'s options.

    Returns
    -------
    key : tuple
        Digest of the bytes and the reading options.
    dataset : sdwec.datasets.Dataset

    Raises
    ------
    sdwec.DataError
        The loader's message, for the page to show.
    """
    # The bytes' digest spares re-parsing the same file on every rerun; the pool itself is
    # keyed by the parsed data's fingerprint (same data, same pool, whatever the file name).
    file = _digest(data)
    key = (file, target, task, tuple(sorted(exclude)), missing, sample_rows)
    held = _held()
    SESSIONS.replace(held, file, st.session_state)
    current = user_dataset()
    if current is not None and current[0] == key:
        return current
    # Other options of the same file: the earlier parse goes before the new one is made.
    st.session_state.pop("user_dataset", None)
    dataset = _read_admitted(data, lambda: datasets.from_csv(
        bytes(data), target=target, task=task, name=file_name, exclude=tuple(exclude),
        missing=missing, max_bytes=datasets.MAX_UPLOAD_BYTES, sample_rows=sample_rows))
    earlier, held.source = held.source, pool.PoolKey.for_dataset(dataset).source
    if earlier != held.source:
        SESSIONS.let_go_pools(earlier, held.session)
    st.session_state["user_dataset"] = (key, dataset)
    return key, dataset


def user_dataset():
    """``(key, Dataset)`` of this session's upload, or ``None``."""
    return st.session_state.get("user_dataset")


def note_refused(file_name, reason):
    """The file in Your data's uploader could not be read (``reason``, the loader's
    message): kept in the session's state, where other pages find it (the uploader's own
    state is gone once another page runs)."""
    st.session_state["upload_refused"] = (str(file_name), str(reason))


def forget_refused():
    st.session_state.pop("upload_refused", None)


def refused_upload():
    """``(file name, reason)`` of this session's last upload when the loader refused it and
    no file was read since, or ``None``."""
    return st.session_state.get("upload_refused")


def pools_memory_need(dataset, config):
    """Bytes that bringing ``dataset``'s pools of ``config`` (every split) into this process
    takes: a pool on disk its entry's size, one trained in the page its training's peak;
    nothing for pools held already or trained in a worker (the run that stores them ends,
    and a later run reads them back from disk)."""
    m = upload_max_samples(dataset, config.n_trees, config.seed)
    missing = [r for r in _split_refs(dataset, config, m) if pools.in_memory(r) is None]
    todo = [r for r in missing if not pool.is_cached(r.key)]
    need = sum(pools.entry_bytes(r.key) for r in missing if r not in todo)
    if todo and (training.session_id() is None
                 or estimates.training_range(todo)[1] < training.OFF_PAGE_SECONDS):
        full, budgeted, _ = estimates.upload_estimates(dataset, config.n_trees, m)
        # Trained one after the other, each kept: every one's peak counted, an upper bound.
        need += len(todo) * (budgeted if m is not None and budgeted else full).peak_bytes
    return need


def _split_refs(dataset, config, max_samples):
    """The :class:`~dashboard.pools.PoolRef` of each split of ``config`` on ``dataset``."""
    key = pool.PoolKey.for_dataset(dataset, dataset.task, config.n_trees, config.seed,
                                   max_samples=max_samples)
    first = pools.PoolRef(key, dataset, dataset.name)
    return [first.with_seed(config.seed + i) for i in range(config.splits)]


@dataclass(frozen=True)
class UploadPlan:
    """What training an upload's pool costs, the choices offered, and the one in force.

    Attributes
    ----------
    full : sdwec.budget.PoolEstimate
        ``n_trees`` trees on full bootstraps.
    budgeted : sdwec.budget.PoolEstimate or None
        The same trees on the row budget that fits :data:`sdwec.budget.TARGET_SECONDS`
        (``None`` when the full pool fits it already).
    fewer : sdwec.budget.PoolEstimate or None
        The largest pool size (of the sidebar's) whose full bootstraps fit the target, if
        smaller than ``n_trees``.
    choice : {"budget", "full"}
    key : sdwec.pool.PoolKey
        The pool the choice trains (first split).
    splits : int
        The configuration's splits: one pool each (seeds ``seed .. seed + splits - 1``).
    untrained : int
        How many of those pools are neither in memory nor on disk: what a run trains.
        Every split counts, not only the first: a seed moved by one, or more splits, leave
        the first split's pool on disk and still train new ones.
    """

    full: object
    budgeted: object
    fewer: object
    choice: str
    key: object
    splits: int = 1
    untrained: int = 1

    @property
    def chosen(self):
        """The estimate of the pool the choice trains."""
        return self.budgeted if self.choice == "budget" and self.budgeted else self.full

    @property
    def cached(self):
        """Whether every split's pool is ready (nothing to train)."""
        return self.untrained == 0


def upload_max_samples(dataset, n_trees, seed=0):
    """The row budget per tree this session trains ``dataset``'s pools with (or ``None``).

    The choice made on *Your data* (``st.session_state["upload_choice"]``, default
    ``"budget"``), applied to ``n_trees``: a budget only when full bootstraps do not fit
    the target wait. Of the budgets offered, one already on disk is used first: the
    budget follows a rate measured in this session, so a revisit must not retrain for a
    slightly different one.
    """
    if st.session_state.get("upload_choice", "budget") == "full":
        return None
    _, budgeted, _ = estimates.upload_estimates(dataset, n_trees)
    if budgeted is None:
        return None
    for m in sorted(budget.BUDGET_STEPS, reverse=True):
        if m < budgeted.n_rows and pool.is_cached(pool.PoolKey.for_dataset(
                dataset, dataset.task, n_trees, seed, max_samples=m)):
            return m
    return budgeted.max_samples


def budget_note(ref):
    """A sentence for pages that show an upload's pool grown on a row budget ('' otherwise):
    its trees saw fewer rows than full bootstraps, and the budget followed this server's
    speed, so the same file can get another pool elsewhere."""
    m = ref.key.max_samples
    if m is None:
        return ""
    return (f" Each tree of this upload's pool grew on at most {m:,} rows: a row budget "
            f"chosen from this server's measured speed to keep training short (on a less "
            f"busy server the same file may get another budget, or full bootstraps, and "
            f"other numbers); *Your data* offers full bootstraps, the paper's.")


def upload_plan(dataset, config):
    """The :class:`UploadPlan` of ``dataset`` under ``config`` (pool size, seed, splits)."""
    m = upload_max_samples(dataset, config.n_trees, config.seed)
    full, budgeted, fewer = estimates.upload_estimates(dataset, config.n_trees, m)
    choice = st.session_state.get("upload_choice", "budget")
    refs = _split_refs(dataset, config, m)
    return UploadPlan(full, budgeted, fewer, choice, refs[0].key, len(refs),
                      len(pools.untrained(refs)))
