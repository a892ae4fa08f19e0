"""The pools this process holds, each named by a frozen :class:`PoolRef`.

A :class:`PoolRef` names a pool by a small hashable key (the dataset name or an upload's
fingerprint, task, pool size, seed) and carries the data to build it from without that
data being hashed; every cached call on a pool takes one.  Pools are held per process by
``st.cache_resource`` (bounded in count, and in bytes by :mod:`dashboard.pool_memory`) and
on disk by :func:`sdwec.pool.load_pool`.  Draws nothing: the progress bars are the
caller's (:mod:`dashboard.page_pools`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace

import streamlit as st

from dashboard import pool_memory
from dashboard.config import dataset_splits
from dashboard.echo import literal
from sdwec import datasets, pool
from sdwec.params import SolverParams

#: Pools held (a count): two datasets' 10 default splits and a few more, so that a
#: 10-split configuration never evicts its own pools, nor a switch back and forth between
#: two small datasets (with 6, every slider move on sonar's default reloaded four pools
#: from disk: ~0.6 s a move). A small dataset's pool is about 1 MB.
POOL_CACHE_ENTRIES = 24


@dataclass(frozen=True)
class PoolRef:
    """A pool's cache key, and the uploaded data to build it from (not part of the key).

    Attributes
    ----------
    key : sdwec.pool.PoolKey
        Frozen and hashable: a shipped dataset's name or an upload's fingerprint, task,
        pool size, seed.
    dataset : sdwec.datasets.Dataset or None
        An upload's data (``None`` for a shipped dataset).
    label : str
        The dataset's name, for messages and files (:attr:`shown` on the page).
    """

    key: pool.PoolKey
    dataset: object = field(default=None, compare=False, hash=False)
    label: str = field(default="", compare=False, hash=False)

    @property
    def n_trees(self):
        return self.key.n_trees

    @property
    def shown(self):
        """The label in the page's Markdown: an upload's is its file's name, a user's text,
        shown literally."""
        return self.label if self.dataset is None else literal(self.label)

    def with_seed(self, seed):
        """The same pool on another split."""
        return replace(self, key=replace(self.key, seed=int(seed)))


# Streamlit hashes a PoolRef by its key only: the uploaded data it carries stays unhashed.
# The key's repr (every field, in order) hashes as one string: Streamlit's generic path for
# a dataclass (pickle, then every part) cost ~0.3 ms per call, and a 10-split Explorer run
# makes ~90 cached calls on refs.
HASH_FUNCS = {PoolRef: lambda ref: repr(ref.key)}


# A configuration's solver parameters hash as their repr (every field, in order; one
# string): Streamlit's generic path took ~90 µs a call, and a run makes about 14 cached
# calls with them.
HASH_FUNCS[SolverParams] = repr
#: For caches whose entry covers every λ (paths, sweeps): λ left out of the key.
HASH_FUNCS_BUT_LAM = {**HASH_FUNCS, SolverParams: lambda params: repr(params.replace(lam=0.0))}


class _Slot(dict):
    """A pool's box: a dict (``"lock"``, ``"pool"``) that can be weakly referenced, so that
    the byte count never keeps a pool alive after the resource cache dropped its slot."""


@st.cache_resource(max_entries=POOL_CACHE_ENTRIES, show_spinner=False, hash_funcs=HASH_FUNCS)
def _pool_slot(ref):
    """A per-pool box (bounded by the cache) that holds the pool once it is trained.

    The training itself happens outside the cached function so that its progress bar is
    drawn live instead of being recorded and replayed by Streamlit's cache; the box's lock
    makes concurrent sessions asking for the same pool train it once.
    """
    return _Slot(lock=threading.Lock(), pool=None)


def pool_of(ref, progress=None, waiting=None, keep=()):
    """The pool of ``ref``: from this process, the disk cache, or trained now.

    If another session of this process or another process (the background warm-up, another
    replica) is training the same pool, this one waits for it instead of training it again,
    reporting that training's progress to ``waiting(record)``
    (see :func:`sdwec.pool.load_pool`).  A pool brought into memory may let go of others
    (:class:`~dashboard.pool_memory.PoolMemory`), never of those of ``keep`` (the same
    request's pools).
    """
    slot = _pool_slot(ref)
    held = slot["pool"]
    if held is not None:
        pool_memory.POOL_MEMORY.touch([ref.key])
        return held
    while not slot["lock"].acquire(timeout=POLL_SECONDS):
        if waiting is not None:
            waiting(pool.training_progress(ref.key))
    try:
        held = slot["pool"]
        if held is None:
            # A pool in memory takes about its cache entry's size (114 MB against 113.9 MB
            # for NSL-KDD at l = 200): room is made before it is read.
            pool_memory.POOL_MEMORY.make_room(entry_bytes(ref.key), {ref.key, *keep})
            held = slot["pool"] = pool.load_pool(ref.key, dataset=ref.dataset,
                                                 progress=progress, waiting=waiting)
            pool_memory.POOL_MEMORY.hold(ref.key, slot, keep)
        return held
    finally:
        slot["lock"].release()


def entry_bytes(key):
    """Size of ``key``'s disk cache entry (0 when it is not on disk yet)."""
    try:
        return pool.cache_path(key).stat().st_size
    except OSError:
        return 0


#: How often a page waiting for another session's training reads its progress.
POLL_SECONDS = 0.5


def in_memory(ref):
    """``ref``'s pool if this process holds it, else ``None`` (nothing is read or trained)."""
    return _pool_slot(ref)["pool"]


def untrained(refs):
    """The refs whose pool is neither in this process nor on disk."""
    return [r for r in refs if in_memory(r) is None and not pool.is_cached(r.key)]


def needs_training(refs):
    """Whether any pool of ``refs`` is neither in this process nor on disk."""
    return bool(untrained(refs))


@st.cache_data(ttl=5, show_spinner=False)
def warm_pools(n_trees, seed=0, task="binary"):
    """``(name, pools on disk, pools needed)`` of every shipped dataset whose ``task`` is
    its own: how many of the pools its default view needs (``n_trees`` trees, its default
    number of splits :func:`dashboard.config.dataset_splits`, seeds ``seed`` onward) are on
    disk.  A two-class dataset's multi-class view is its binary task under other labels,
    so under ``"multiclass"`` only the datasets with more than two classes are listed."""
    rows = []
    for name in datasets.names():
        if task not in datasets.tasks(name) or task == "multiclass" and _n_classes(name) < 3:
            continue
        needed = dataset_splits(name)
        rows.append((name, sum(pool.is_cached(name, task, n_trees, seed + i)
                               for i in range(needed)), needed))
    return tuple(rows)


@st.cache_data(show_spinner=False)
def _n_classes(name):
    """Classes of a shipped dataset's multi-class view."""
    return len(datasets.load(name, "multiclass").classes)
