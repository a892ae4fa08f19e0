"""Every Streamlit cache of the dashboard, keyed on one frozen pool reference.

A :class:`PoolRef` names a pool by a small hashable key (the dataset name or an upload's
fingerprint, task, pool size, seed) and carries the data to build it from without that
data being hashed; every cached call takes one.  Pools are held per process by
``st.cache_resource`` (bounded in count, and in bytes by :class:`PoolMemory`) and on disk
by :func:`sdwec.pool.load_pool`; solutions, sweeps and timings by ``st.cache_data`` with
bounded ``max_entries``, so memory stays flat in a long session.  Nothing here computes anything about SDWEC: it calls the library.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import threading
import time
import types
import weakref
from collections import Counter, OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from dashboard import jobs
from dashboard.config import LAMBDA_GRID, POOL_SIZES, SECOND_SWEEPS, USER_DATA, dataset_splits
from dashboard.echo import literal, plain
from sdwec import (
    budget,
    comparison,
    datasets,
    experiments,
    frontier,
    methods,
    plots,
    pool,
    solver,
    timing,
    voting,
)
from sdwec.errors import DataError
from sdwec.formatting import points

#: Bounds of the caches. Pools: two datasets' 10 default splits and a few more, so that a
#: 10-split configuration never evicts its own pools, nor a switch back and forth between
#: two small datasets (with 6, every slider move on sonar's default reloaded four pools
#: from disk: ~0.6 s a move). A small dataset's pool is about 1 MB.
POOL_CACHE_ENTRIES = 24
SOLUTION_CACHE_ENTRIES = 256
SWEEP_CACHE_ENTRIES = 16
TIMING_CACHE_ENTRIES = 64
#: Explorer figures kept per configuration: building a 200-bar Plotly figure costs more than
#: the solve it shows, so a revisited configuration reuses its figures.  Kept few: one
#: configuration's three figures hold about 2.6 MiB as Plotly objects (l = 200, measured).
FIGURE_CACHE_ENTRIES = 16
#: Timed runs (after one warm-up) of the Paper page's weight-finding times: their median,
#: fastest and slowest are shown, and five runs give a spread worth reading at little cost
#: (wine's l = 200 solves in hundredths of a second).
TIMING_REPEATS = 5
#: Where ``python -m sdwec reproduce`` writes its per-row results.
REPRODUCTION_CSV = Path(__file__).resolve().parent.parent / "results" / "reproduction" / "results.csv"
LOG = logging.getLogger("dashboard")
_SWEEP_CHUNK = 5  # λ values per cached sweep call, so a long sweep can show progress


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
_HASH = {PoolRef: lambda ref: repr(ref.key)}


class Params(tuple):
    """A configuration's solver parameters as sorted ``(name, value)`` pairs, hashed by
    Streamlit as their repr (one string): its generic path took ~90 µs a call, and a run
    makes about 14 cached calls with them."""

    __slots__ = ()


_HASH[Params] = lambda params: repr(tuple(params))


class Progress:
    """``progress(done, total, message)`` callback drawing a bar only if work happens.

    The bar says how long the work has run and, once a tenth of what remained when it first
    reported is done, about how long is left (the library reports steps weighted by their
    cost, so the rate is meaningful).  Before that it shows ``estimate``, a (low, high)
    range of seconds for the whole work, if given.
    """

    def __init__(self, label, estimate=None):
        self.label = label
        self.estimate = estimate
        self.slot = st.empty()
        self.bar = None
        self.start = time.monotonic()
        self.origin = None  # (seconds, fraction) of the first report: the rate's baseline

    def __call__(self, done, total, message, left=None):
        """Draw ``done`` of ``total``; ``left``: seconds left if the caller knows better
        (another process's training, timed since it started)."""
        fraction = min(max(done / total, 0.0), 1.0) if total else 1.0
        now = time.monotonic()
        if self.origin is None:
            self.origin = (now, fraction)
        since, first = self.origin
        text = f"{self.label}: {message} · {_duration(now - self.start)} elapsed"
        if left is None and fraction < 1.0 and fraction - first >= 0.1 * (1.0 - first):
            left = (now - since) * (1.0 - fraction) / (fraction - first)
        if left is not None and fraction < 1.0:
            text += f", about {_duration(left)} left"
        elif fraction < 1.0 and self.estimate is not None:
            text += f" (roughly {duration_range(*self.estimate)} in all)"
        self._draw(fraction, text)

    def _draw(self, fraction, text):
        if self.bar is None:
            self.bar = self.slot.progress(fraction, text=text)
        else:
            self.bar.progress(fraction, text=text)

    def close(self):
        self.slot.empty()


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
            f"{_duration(running)}: {plain(record.message)}; this page uses it when it is done",
            left)


def _duration(seconds):
    """``"45 s"`` or ``"3 min"``: the precision a person waiting wants."""
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def duration_range(low, high):
    """``"5–20 s"``, ``"2–9 min"`` or ``"40 s–3 min"``: a rough range of seconds (the same
    wording as the page *Your data*, :func:`sdwec.budget.wait_text`)."""
    return budget.wait_text(low, high)


#: Training seconds per tree, as (per-tree overhead, seconds per unit of n·log2(n)·features,
#: n the training rows), for a fast and a slow case: measured on this project's busy 2-core
#: machines with one core per pool (the dashboard's), l = 200.  The slow end is waveform
#: (deep trees on noisy data: 8–12 s a pool, and 65 s for l = 500 beside other work), the
#: fast end NSL-KDD (2.5 min a pool, while waveform's rate would predict 15 min), the
#: overhead sonar's and vehicle's (1–2 s a pool).  Rows x features x trees cannot tell how
#: deep the trees grow, nor how busy the machine is, hence a range.
_TRAINING_RATES = ((0.002, 1.0e-8), (0.010, 7.0e-8))


def training_seconds_range(n_rows, n_features, n_trees, pools=1, max_samples=None):
    """Rough (low, high) wall-clock seconds to train ``pools`` pools of ``n_trees`` trees.

    Parameters
    ----------
    n_rows : int
        Rows of the whole dataset (80 % of them train the trees).
    n_features, n_trees : int
    pools : int, default=1
        Pools trained one after the other (the splits of a configuration).
    max_samples : int, optional
        A row budget per tree (an upload's): each tree then grows on at most that many rows.

    Returns
    -------
    (float, float)
        Increasing in every argument; ``high`` is 5 to 7 times ``low``.
    """
    n_train = max(2.0, 0.8 * float(n_rows))
    if max_samples is not None:
        n_train = max(2.0, min(n_train, float(max_samples)))
    units = n_train * np.log2(n_train) * max(1, int(n_features))
    return tuple(float(pools * n_trees * (overhead + rate * units))
                 for overhead, rate in _TRAINING_RATES)


# --------------------------------------------------------------------------- uploads


def _digest(data):
    return hashlib.sha256(bytes(data)).hexdigest()


def upload_preview(data, target, sample_rows=None):
    """:func:`sdwec.datasets.inspect_csv` of an uploaded file, once per (bytes, target,
    sample size: ``sample_rows`` reads a seeded random sample of that many rows).

    The previews of the current file are kept in the session (one per target tried); a new
    file replaces them.

    Raises
    ------
    sdwec.DataError
        The loader's message, for the page to show.
    """
    digest = (_digest(data), sample_rows)
    kept = st.session_state.get("upload_previews")
    if kept is None or kept[0] != digest:
        kept = (digest, {})
        st.session_state["upload_previews"] = kept
    if target not in kept[1]:
        preview = datasets.inspect_csv(bytes(data), target=target,
                                       max_bytes=datasets.MAX_UPLOAD_BYTES,
                                       sample_rows=sample_rows)
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
    key = (_digest(data), target, task, tuple(sorted(exclude)), missing, sample_rows)
    current = user_dataset()
    if current is not None and current[0] == key:
        return current
    dataset = datasets.from_csv(bytes(data), target=target, task=task, name=file_name,
                                exclude=tuple(exclude), missing=missing,
                                max_bytes=datasets.MAX_UPLOAD_BYTES, sample_rows=sample_rows)
    st.session_state["user_dataset"] = (key, dataset)
    return key, dataset


def user_dataset():
    """``(key, Dataset)`` of this session's upload, or ``None``."""
    return st.session_state.get("user_dataset")


# --------------------------------------------------------------------------- pools


def pool_ref(config):
    """The :class:`PoolRef` of ``config``; raises if "your data" has no upload yet."""
    if config.dataset != USER_DATA:
        key = pool.PoolKey.for_dataset(config.dataset, config.task, config.n_trees, config.seed)
        return PoolRef(key, None, config.dataset)
    upload = user_dataset()
    if upload is None:
        raise DataError("this page address points to an uploaded file, and uploads are not "
                        "kept after a reload or in a new session. Open \"Your data\" and upload "
                        "the file again, or pick a shipped dataset.")
    dataset = upload[1]
    key = pool.PoolKey.for_dataset(
        dataset, dataset.task, config.n_trees, config.seed,
        max_samples=upload_max_samples(dataset, config.n_trees, config.seed))
    return PoolRef(key, dataset, dataset.name)


def pool_refs(config):
    """One :class:`PoolRef` per split of ``config`` (seeds ``seed .. seed + splits - 1``)."""
    first = pool_ref(config)
    return [first.with_seed(config.seed + i) for i in range(config.splits)]


@st.cache_resource(max_entries=POOL_CACHE_ENTRIES, show_spinner=False, hash_funcs=_HASH)
def _pool_slot(ref):
    """A per-pool box (bounded by the cache) that holds the pool once it is trained.

    The training itself happens outside the cached function so that its progress bar is
    drawn live instead of being recorded and replayed by Streamlit's cache; the box's lock
    makes concurrent sessions asking for the same pool train it once.
    """
    return _Slot(lock=threading.Lock(), pool=None)


# Pool memory.  The slots above bound how many pools are held (a count); these bound their
# bytes, which vary 1000-fold between datasets: 24 NSL-KDD pools of 200 trees are ~2.7 GB,
# 24 of sonar ~25 MB.  Held pools are tracked least recently used first; before a pool is
# read from disk (room for its entry's size) and once it is loaded (its counted size), the
# oldest are let go while the total is over the cap (their slots emptied: the next use reads
# them back from the disk cache).  The pools one request asks for together (a
# configuration's splits) are never let go for each other, so a configuration larger than
# the cap is held whole (NSL-KDD's 10 splits at l = 200: ~1.1 GB) instead of reloading its
# own pools on every rerun.

#: Environment variable: bytes of pools one process (a replica) holds in memory.
POOL_MEMORY_ENV = "SDWEC_POOL_MEMORY_BYTES"
DEFAULT_POOL_MEMORY_BYTES = 2**30


class _Slot(dict):
    """A pool's box: a dict (``"lock"``, ``"pool"``) that can be weakly referenced, so that
    the byte count never keeps a pool alive after the resource cache dropped its slot."""


def pool_memory_cap():
    """The byte cap from :data:`POOL_MEMORY_ENV` (a positive integer), else the default."""
    raw = os.environ.get(POOL_MEMORY_ENV, "").strip()
    try:
        cap = int(float(raw)) if raw else DEFAULT_POOL_MEMORY_BYTES
    except (ValueError, OverflowError):
        cap = 0
    if cap <= 0:
        LOG.warning("%s=%r is not a positive number of bytes; using %d", POOL_MEMORY_ENV, raw,
                    DEFAULT_POOL_MEMORY_BYTES)
        return DEFAULT_POOL_MEMORY_BYTES
    return cap


def pool_nbytes(obj):
    """Bytes a pool holds: its arrays' ``nbytes``, and each fitted tree's nodes (64 bytes
    each in scikit-learn's node record) and leaf values; objects reached twice count once."""
    seen, total, todo = set(), 0, [obj]
    while todo:
        item = todo.pop()
        if item is None or id(item) in seen or isinstance(item, (str, bytes, int, float, bool)):
            continue
        seen.add(id(item))
        if isinstance(item, np.ndarray):
            if isinstance(item.base, np.ndarray):
                todo.append(item.base)  # a view: its owner counts
            else:
                total += item.nbytes
        elif isinstance(item, (type, types.ModuleType, types.FunctionType)):
            continue
        elif hasattr(item, "node_count") and hasattr(item, "value"):  # sklearn.tree Tree
            total += 64 * int(item.node_count) + int(item.value.nbytes)
        elif isinstance(item, dict):
            todo.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            todo.extend(item)
        elif hasattr(item, "__dict__"):
            todo.extend(vars(item).values())
    return total


class PoolMemory:
    """The pools held in slots, least recently used first, with their bytes."""

    def __init__(self):
        self._lock = threading.Lock()
        self._held = OrderedDict()  # PoolKey -> (weak reference to its slot, bytes)

    def touch(self, keys):
        """Mark the pools of ``keys`` as just used."""
        with self._lock:
            for key in keys:
                if key in self._held:
                    self._held.move_to_end(key)

    def hold(self, key, slot, keep=()):
        """Count ``slot``'s pool (just loaded) and let go of the least recently used other
        pools, except those of ``keep``, while the total is over the cap; return the keys
        let go."""
        size = pool_nbytes(slot["pool"])
        with self._lock:
            self._held[key] = (weakref.ref(slot), size)
            self._held.move_to_end(key)
            return self._let_go(0, {key, *keep})

    def make_room(self, nbytes, keep=()):
        """Before a pool of about ``nbytes`` is loaded: let go of the least recently used
        pools, except those of ``keep``, until it fits under the cap (so that the pools held
        never pass the cap, not even while one is read); return the keys let go."""
        with self._lock:
            return self._let_go(nbytes, set(keep))

    def _let_go(self, extra, keep):
        cap = pool_memory_cap()
        self._purge()
        total = extra + sum(size for _, size in self._held.values())
        let_go = []
        for old in [k for k in self._held if k not in keep]:
            if total <= cap:
                break
            ref, size = self._held.pop(old)
            victim = ref()
            if victim is not None:
                victim["pool"] = None
            total -= size
            let_go.append(old)
        if let_go:
            LOG.info("pool memory over %d bytes: let go of %d pools", cap, len(let_go))
        return let_go

    def _purge(self):
        for key, (ref, _) in list(self._held.items()):
            slot = ref()
            if slot is None or slot["pool"] is None:
                del self._held[key]

    def held(self):
        """``{key: bytes}`` of the pools held now, least recently used first."""
        with self._lock:
            self._purge()
            return {key: size for key, (_, size) in self._held.items()}


POOL_MEMORY = PoolMemory()


def _pool(ref, progress=None, waiting=None, keep=()):
    """The pool of ``ref``: from this process, the disk cache, or trained now.

    If another session of this process or another process (the background warm-up, another
    replica) is training the same pool, this one waits for it instead of training it again,
    reporting that training's progress to ``waiting(record)``
    (see :func:`sdwec.pool.load_pool`).  A pool brought into memory may let go of others
    (:class:`PoolMemory`), never of those of ``keep`` (the same request's pools).
    """
    slot = _pool_slot(ref)
    held = slot["pool"]
    if held is not None:
        POOL_MEMORY.touch([ref.key])
        return held
    while not slot["lock"].acquire(timeout=POLL_SECONDS):
        if waiting is not None:
            waiting(pool.training_progress(ref.key))
    try:
        held = slot["pool"]
        if held is None:
            # A pool in memory takes about its cache entry's size (114 MB against 113.9 MB
            # for NSL-KDD at l = 200): room is made before it is read.
            POOL_MEMORY.make_room(_entry_bytes(ref.key), {ref.key, *keep})
            held = slot["pool"] = pool.load_pool(ref.key, dataset=ref.dataset,
                                                 progress=progress, waiting=waiting)
            POOL_MEMORY.hold(ref.key, slot, keep)
        return held
    finally:
        slot["lock"].release()


def _entry_bytes(key):
    """Size of ``key``'s disk cache entry (0 when it is not on disk yet)."""
    try:
        return pool.cache_path(key).stat().st_size
    except OSError:
        return 0


#: How often a page waiting for another session's training reads its progress.
POLL_SECONDS = 0.5


#: Training from this many seconds (the estimate's high end) runs off the page (below).
OFF_PAGE_DEFAULT_SECONDS = 10.0


def _shape(ref):
    """``(rows, features)`` of ``ref``'s data."""
    return ref.dataset.X.shape if ref.dataset is not None else _shape_of(ref.key.source)


def _training_range(refs, pools=None):
    """Rough (low, high) seconds to train ``refs``'s pools (or ``pools`` pools like them).

    An upload's come from the rate measured on the file itself (:func:`upload_rate`, its
    row budget included): the very estimate *Your data* shows for one pool, so the sidebar,
    the progress bar and that page give one number.  A shipped dataset's come from
    :func:`training_seconds_range`, calibrated on the shipped datasets.
    """
    first = refs[0]
    pools = len(refs) if pools is None else pools
    if first.dataset is not None:
        one = _upload_estimate(first.dataset, first.n_trees, first.key.max_samples)
        return tuple(pools * s for s in one.seconds)
    return training_seconds_range(*_shape(first), first.n_trees, pools=pools,
                                  max_samples=first.key.max_samples)


def _load_factor(ref):
    """How much longer than :func:`_training_range` says ``ref``'s training takes on this
    machine now: an upload's rate was measured at this load already (1)."""
    return 1.0 if ref.dataset is not None else _slowdown()[0]


def _untrained(refs):
    """The refs whose pool is neither in this process nor on disk."""
    return [r for r in refs if _pool_slot(r)["pool"] is None and not pool.is_cached(r.key)]


def needs_training(refs):
    """Whether any pool of ``refs`` is neither in this process nor on disk."""
    return bool(_untrained(refs))


def cold_start_note(config):
    """A note when pools of ``config`` are not trained yet: how many, roughly how long
    (a range), and whether another process is training them now.  ``None`` when every
    pool is ready.

    However short the training: a move of the seed, the splits or l must say how many
    pools it trains before they start: a note under 10 s went unsaid,
    so after an upload a one-step seed move trained its new pool with no word.  The note
    is redrawn away when the pools land (:func:`on_pools_landed`)."""
    try:
        refs = pool_refs(config)
    except DataError:
        return None
    todo = _untrained(refs)
    if not todo:
        return None
    low, high = _training_range(todo)
    busy = sum(pool.training_progress(r.key) is not None for r in todo)
    first = todo[0]
    if len(refs) == 1:
        count = "This pool is not trained yet"
    elif len(todo) == len(refs):
        count = f"The {len(refs)} pools (one per split) are not trained yet"
    else:
        count = (f"{len(todo)} of the {len(refs)} pools (one per split) "
                 f"{'is' if len(todo) == 1 else 'are'} not trained yet")
    trees = (f"{first.n_trees:,} trees" if len(todo) == 1 else
             f"{len(todo)} × {first.n_trees:,} trees in all")
    note = f"{count}: {trees} on {first.shown} take roughly {duration_range(low, high)}"
    if first.dataset is not None:
        each = _training_range([first])
        note += ((f" ({duration_range(*each)} a pool)" if len(todo) > 1 else "") +
                 ", timed on one tree grown on a sample of this file (the estimate *Your "
                 "data* shows). ")
    else:
        note += " on this 2-core machine (longer when busy). " + _busy_note()
    if busy:
        note += (f"Another process (a training worker of this dashboard, the background "
                 f"warm-up or another replica) is training "
                 f"{'it' if busy == 1 == len(todo) else f'{busy} of them'} now: the page "
                 f"shows its progress and uses it when it is done. ")
    return note + "Trained pools are kept on disk, so later visits are instant."


def _slowdown(load=None, cores=None):
    """``(factor, load, cores)``: how much longer a CPU-bound training takes now than with a
    core to spare (what :func:`training_seconds_range` was measured with); 1 below 1.5×."""
    load = os.getloadavg()[0] if load is None else load
    cores = (os.cpu_count() or 1) if cores is None else cores
    factor = (load + 1) / cores  # a new process gets about cores / (load + 1) of a core
    return (factor if factor >= 1.5 else 1.0), load, cores


def _busy_note(load=None, cores=None):
    """A sentence when the machine runs more work than it has cores: how much longer a
    training then takes (empty otherwise)."""
    factor, load, cores = _slowdown(load, cores)
    if factor == 1.0:
        return ""
    return (f"This machine is busy now (load {load:.0f} on {cores} cores): expect about "
            f"{factor:.0f}× that. ")


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


@st.cache_data(show_spinner=False)
def _shape_of(name):
    """``(rows, features)`` of a shipped dataset."""
    return datasets.load(name).X.shape


def get_pool(ref):
    """The trained pool of ``ref``, with a progress bar while it is being trained."""
    return get_pools([ref])[0]


def get_pools(refs):
    """The pools of ``refs`` (the splits of a configuration), with one progress bar.

    Pools already in this process come back at once.  The others are read from disk or
    trained (or waited for, when another process trains them), one bar over all of them
    that says "split i of r" and moves by each pool's estimated cost, so it does not
    restart per pool.  When a pool was trained, the sidebar's notes are redrawn
    (:func:`on_pools_landed`).
    """
    slots = [_pool_slot(ref) for ref in refs]
    held = [slot["pool"] for slot in slots]
    if all(p is not None for p in held):
        POOL_MEMORY.touch([ref.key for ref in refs])
        # The slot the progress bar takes when pools are read or trained: without it the
        # first run after a load (pools read from disk) has one element more above the
        # charts than the next, and the browser rebuilds every chart at the first move.
        st.empty()
        return held
    untrained = _untrained(refs)
    if untrained and _trains_off_page(untrained, refs):
        _train_off_page(untrained, refs)  # stops this run until the pools are on disk
    todo = set(_untrained(refs))
    # Weights: each pool's estimated training seconds (the range's middle); reading one from
    # disk counts as a small fraction of that.
    weights = [float(np.sqrt(np.prod(_training_range([ref]))))
               * (1.0 if ref in todo else 0.02) for ref in refs]
    total = sum(weights)
    first = refs[0]
    r = len(refs)
    if todo:
        pools = "" if r == 1 else f"{len(todo)} pools of " if len(todo) == r else \
            f"{len(todo)} of {r} pools of "
        label = f"Training {pools}{first.n_trees} trees on {first.shown}"
        factor = _load_factor(first)
        estimate = tuple(factor * t for t in _training_range([first], pools=len(todo)))
    else:
        label, estimate = f"Loading {r} pools of {first.shown} from disk", None
    progress = Progress(label, estimate)
    pools, before = [], 0.0
    try:
        for i, (ref, weight) in enumerate(zip(refs, weights)):
            prefix = f"split {i + 1} of {r}: " if r > 1 else ""

            def report(done, whole, message, before=before, weight=weight, prefix=prefix):
                fraction = done / whole if whole else 1.0
                progress(before + weight * fraction, total, prefix + message)

            def waiting(record, before=before, weight=weight, prefix=prefix):
                progress(*_waiting_report(record, before, weight, total, prefix))

            pools.append(_pool(ref, report, waiting, keep={r.key for r in refs}))
            before += weight
    finally:
        progress.close()
    if todo:
        _pools_landed()
    return pools


# ------------------------------------------------------------- training off the page

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


def _session_alive(session):
    """Whether a session is connected to this server (a closed tab is not)."""
    from streamlit import runtime

    return runtime.exists() and runtime.get_instance().is_active_session(session)


def pool_jobs():
    """This server process's :class:`~dashboard.jobs.JobRegistry` (created on first use)."""
    global _JOBS
    with _JOBS_LOCK:
        if _JOBS is None:
            _JOBS = jobs.JobRegistry(alive=_session_alive)
            atexit.register(_JOBS.stop_all)
        return _JOBS


def _session():
    ctx = get_script_run_ctx()
    return None if ctx is None else ctx.session_id


def _trains_off_page(refs, splits=None):
    """Whether the pools of ``refs`` train in a worker: in a page run, when long, or when
    they are the rest of a training of ``splits`` (all the refs) that began in a worker (its
    last pool, short on its own, would otherwise restart the bar in the page)."""
    if _session() is None:
        return False
    if _training_range(refs)[1] >= OFF_PAGE_SECONDS:
        return True
    kept = st.session_state.get(_BATCH_STATE)
    return (splits is not None and kept is not None
            and kept[0] == tuple(r.key for r in splits)
            and {r.key for r in refs} < kept[1])


def _cancelled():
    """Pool keys whose training this session cancelled (until it asks again)."""
    return st.session_state.setdefault("_cancelled_pools", set())


def _cancel_training(keys, session):
    registry = pool_jobs()
    for key in keys:
        registry.cancel(key, session)
    _cancelled().update(keys)


def _train_again(keys):
    _cancelled().difference_update(keys)
    st.session_state.pop(_BATCH_STATE, None)  # a new training: its bar and time anew
    for key in keys:
        pool_jobs().forget(key)


#: Session key of the pools one off-page training started with (see :func:`_batch`).
_BATCH_STATE = "_off_page_batch"


def _batch(todo, refs):
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


def _train_off_page(todo, refs=None):
    """Start (or attach to) the worker training the first of ``todo``'s pools (one at a time,
    as the page trained them: one low-priority core per session), show its progress with a
    Cancel button, and stop this run; the progress fragment reruns the page when the pool is
    on disk.  ``refs``: all the splits ``todo`` belongs to (default ``todo``), for "split i
    of r".  A cancelled or failed training says so and offers to start again."""
    session, registry = _session(), pool_jobs()
    refs = list(todo) if refs is None else list(refs)
    keys = tuple(ref.key for ref in todo)
    first = todo[0]
    pools, started = _batch(todo, refs)

    def trees(n):
        # "9 of 10 pools" beside "split 2 of 10": "9 pools" read as a miscount.
        of = f" of {len(refs)}" if 1 < n < len(refs) else ""
        return (f"{first.n_trees:,} trees on {first.shown}" if n == 1 else
                f"{n}{of} pools of {first.n_trees:,} trees on {first.shown}")

    what = trees(len(todo))   # what a cancel or a failure leaves untrained
    if _cancelled() & set(keys):
        st.info(f"Training of {what} cancelled: its worker process was stopped and nothing "
                f"was stored. (If another session asked for the same pool, it goes on "
                f"training for that session.)")
        st.button("Train again", on_click=_train_again, args=(keys,), key="_train_again")
        st.stop()
    job = registry.get(first.key)
    if job is not None and job.state == "failed":
        reason = job.error.splitlines()[-1] if job.error else "no message"
        st.error(f"Training {what} stopped with an error ({plain(reason)}). Try again, or choose "
                 f"fewer trees.")
        st.button("Try again", on_click=_train_again, args=(keys,), key="_train_again")
        st.stop()
    if job is not None and job.state != "running":  # finished, yet not on disk: again
        registry.forget(first.key)
    registry.want(first.key, first.dataset, session)
    split = (refs.index(first) + 1, len(refs)) if first in refs else (1, 1)
    _training_panel(todo, trees(pools), session, split, pools, started)
    st.stop()


@st.fragment(run_every=JOB_POLL_SECONDS)
def _training_panel(todo, what, session, split=(1, 1), pools=None, started=None):
    """The worker's progress and the Cancel button, redrawn every second; reruns the whole
    page once the pool is on disk (or the worker stopped).

    ``split``: ``(i, r)``, the split whose pool trains now; ``pools`` and ``started``: the
    training's pools and start (:func:`_batch`), over which the bar and the time left run.
    """
    registry = pool_jobs()
    keys = tuple(ref.key for ref in todo)
    registry.touch(session, keys)
    job = registry.get(keys[0])
    # On disk while the job still runs: the worker's last moments (it stores the pool, drops
    # its progress record, then exits); the next split's training can start now.
    if (_cancelled() & set(keys) or job is None or job.state != "running"
            or pool.is_cached(keys[0])):
        st.rerun(scope="app")
    record = pool.training_progress(keys[0])
    # Between two records the line keeps the last one it showed: it fell back to
    # "starting" at 0, and the bar went back and the time left up (a newcomer saw it).
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
            f"{f'split {i} of {r}: ' if r > 1 else ''}{message} · {_duration(elapsed)} elapsed")
    if done >= 0.05:
        text += f", about {_duration(elapsed * (1.0 - done) / done)} left"
    else:
        factor = _load_factor(todo[0])
        low, high = _training_range(todo)
        text += f" (roughly {duration_range(factor * low, factor * high)} in all)"
    st.progress(done, text=text)
    st.caption("The page is free meanwhile: switch pages and come back, the training goes on; "
               "other sessions are not slowed. It stops if you cancel, or once this tab has "
               f"been closed for {jobs.INTEREST_TIMEOUT_SECONDS:.0f} s and no other session "
               "wants the pool.")
    st.button("Cancel training", on_click=_cancel_training, args=(keys, session),
              key="_cancel_training")


def on_pools_landed(callback):
    """Register ``callback()`` for this run: called after :func:`get_pools` trained pools
    (the sidebar redraws its "on disk" and "not trained yet" notes); ``None`` clears it."""
    st.session_state["_pools_landed"] = callback


def _pools_landed():
    warm_pools.clear()
    callback = st.session_state.get("_pools_landed")
    if callback is not None:
        callback()


# --------------------------------------------------------------------------- explorer


@st.cache_data(max_entries=SOLUTION_CACHE_ENTRIES, show_spinner=False, hash_funcs=_HASH)
def _compare(ref, params):
    return comparison.compare(_pool(ref), **dict(params))


def _params(config):
    return Params(sorted(config.compare_params().items()))


def _ensure_pools(ref, config):
    """Before the first cached computation on ``ref``: every pool of ``config`` (of which
    ``ref`` is one split) in memory, loaded or trained under one bar ("split i of r")."""
    # Called at every run, so that the bar's slot is there in every run (see get_pools).
    refs = pool_refs(config)
    get_pools(refs if ref in refs else [ref])


def compare(ref, config):
    """SDWEC on ``ref``'s pool with the baselines beside it (cached, bounded)."""
    _ensure_pools(ref, config)  # trains (with a progress bar) if needed, before the solve
    return _compare(ref, _params(config))


# A resource, not data: st.cache_data pickled the ten splits' results (with every iteration's
# weights) at each slider move and unpickled them at each rerun; they are only read.
@st.cache_resource(max_entries=SOLUTION_CACHE_ENTRIES // 4, show_spinner=False,
                   hash_funcs=_HASH)
def _compare_splits(refs, params):
    return comparison.compare_many([_pool(ref) for ref in refs], **dict(params))


def compare_splits(refs, config):
    """:func:`compare` on every split of ``refs``, their solves run together (a slider move
    with ten splits costs a few solves, not ten; cached per configuration, bounded)."""
    if len(refs) == 1:
        return [compare(refs[0], config)]
    get_pools(refs)  # one bar over the untrained ones ("split i of r")
    return _compare_splits(tuple(refs), _params(config))


@st.cache_resource(max_entries=FIGURE_CACHE_ENTRIES, show_spinner=False, hash_funcs=_HASH)
def _explorer_figures(ref, params, splits, pin, _result, _summary, _pinned):
    """The Explorer's accuracy and weights figures and the trees' accuracy strip under the
    weights for one configuration (shared, read-only)."""
    sol, fit_on = _result.solution, dict(params)["fit_on"]
    # The chart shows what votes: SDWEC-OOB's kept trees one vote each, with no threshold
    # (it cut Algorithm 1's weights, not these).
    equal = voting.vote_of(fit_on) == "equal"
    # (0 is the rule "none", which cuts nothing: the chart says so for both fits.)
    threshold = (sol.threshold if np.isfinite(sol.threshold) and (not equal or sol.threshold == 0)
                 else None)
    pinned = None if _pinned is None else voting.voting_weights(_pinned.solution.weights, fit_on)
    weights = plots.member_weights(voting.voting_weights(sol.weights, fit_on),
                                   _result.member_accuracy, threshold, pinned=pinned,
                                   method="SDWEC-OOB" if equal else "SDWEC",
                                   raw=None if equal else sol.raw_weights)
    if equal:
        weights.update_layout(title_text="Votes of the ensemble members: one per kept tree "
                                         "(SDWEC-OOB)")
    # The strip is the same figure at every slider move (it depends on the pool only), so
    # the in-place chart skips it; on the weights chart it was redrawn at every move.
    # The accuracy chart is the mean over the splits; the weights are split 1's.
    return (plots.method_comparison(_summary), plots.scoped(weights, first_split(splits)),
            plots.tree_accuracies(_result.member_accuracy))


def first_split(splits):
    """What a chart drawn from the first of ``splits`` splits adds to its title."""
    return f"split 1 of {splits}" if splits > 1 else ""


def explorer_figures(ref, config, result, summary, pinned=None):
    """The Explorer's figures of ``result`` (and the pinned result's weights), cached per
    configuration: methods, weights, and the trees' accuracies drawn under the weights."""
    return _explorer_figures(ref, _params(config), config.splits, config.pin, result, summary,
                             pinned)


@st.cache_resource(max_entries=FIGURE_CACHE_ENTRIES, show_spinner=False, hash_funcs=_HASH)
def _convergence_figure(ref, params, log, splits, _result):
    return plots.scoped(plots.convergence(_result.solution.history, log_y=log),
                        first_split(splits))


def convergence_figure(ref, config, result, log):
    """The cost-per-iteration figure (cached per configuration and axis scale)."""
    return _convergence_figure(ref, _params(config), bool(log), config.splits, result)


@st.cache_resource(max_entries=FIGURE_CACHE_ENTRIES, show_spinner=False, hash_funcs=_HASH)
def _iterations_figure(ref, params, splits, _result):
    sol, p = _result.solution, dict(params)  # the solver's parameters and the fit
    thresholds = [solver.line15_thresholds(r.weights, p["beta"], p["gamma"], p["eps"],
                                           p["threshold"])[1] for r in sol.history]
    return plots.scoped(plots.weights_over_iterations(sol.history, thresholds,
                                                      _result.member_accuracy),
                        first_split(splits))


# A resource, not data (as _compare_splits): ten splits' weights at every λ are only read,
# and st.cache_data would pickle them at every call.
@st.cache_resource(max_entries=SWEEP_CACHE_ENTRIES, show_spinner=False, hash_funcs=_HASH)
def _lambda_path(refs, params):
    return comparison.lambda_paths([_pool(ref) for ref in refs], LAMBDA_GRID, **dict(params))


@st.cache_resource(max_entries=FIGURE_CACHE_ENTRIES, show_spinner=False, hash_funcs=_HASH)
def _scrubber_figure(refs, params, lam):
    return plots.lambda_scrubber(_lambda_path(refs, params), lam)


def scrubber_figure(refs, config):
    """The λ scrubber: SDWEC at every λ of the sidebar's grid on every split of ``refs``
    (the page's splits) as one figure with frames, each the mean over the splits as the
    headline reports it (the paths are cached per pools and parameters other than λ; the
    figure starts at the sidebar's λ, a value of the grid)."""
    refs = tuple(refs)
    get_pools(list(refs))  # one bar over the untrained ones ("split i of r")
    params = Params(sorted((k, v) for k, v in config.compare_params().items() if k != "lam"))
    return _scrubber_figure(refs, params, config.lam)


def iterations_figure(ref, config, result):
    """The weights-across-iterations figure with its frames (cached per configuration)."""
    return _iterations_figure(ref, _params(config), config.splits, result)


@st.cache_data(max_entries=TIMING_CACHE_ENTRIES, show_spinner=False, hash_funcs=_HASH)
def _measure(ref, chosen, _weights):
    p = _pool(ref)
    return timing.measure(p.estimators, _weights, p.X_test, p.classes, p.prior)


def _support(weights):
    weights = np.asarray(weights, dtype=float)
    return tuple((int(i), float(weights[i])) for i in np.flatnonzero(weights))


def request_timing(ref, weights):
    """Button callback: measure the prediction time of ``weights`` on this run."""
    st.session_state.setdefault("_timings", set()).add((ref.key, _support(weights)))


def measured_timing(ref, weights):
    """The measured :class:`~sdwec.timing.PredictionTiming` of ``weights`` if this session
    asked for it (:func:`request_timing`), else ``None``; measured once per support."""
    chosen = _support(weights)
    if (ref.key, chosen) not in st.session_state.get("_timings", set()):
        return None
    with st.spinner("Timing the full and the pruned ensemble…"):
        return _measure(ref, chosen, np.asarray(weights, dtype=float))


# --------------------------------------------------------------------------- frontier


@st.cache_data(max_entries=SWEEP_CACHE_ENTRIES * 8, show_spinner=False, hash_funcs=_HASH)
def _sweep_chunk(ref, lams, fixed, second):
    fixed = dict(fixed)
    return frontier.sweep(_pool(ref), lams=list(lams), beta=fixed["beta"],
                          gamma=fixed["gamma"], eps=fixed["eps"],
                          iterations=fixed["iterations"], threshold=fixed["threshold"],
                          second=second)


@st.cache_resource(show_spinner=False)
def _computed_steps():
    """Arguments of the Frontier's cached steps computed in this process: a step not in it
    shows the bar *before* it runs (a cached step would only flash it).  Cleared with
    Streamlit's caches; a step evicted after it was recorded shows the bar once it is done."""
    return set()


def _stepwise(label, steps):
    """Run ``steps`` (``(message, cached step, its arguments)``), one bar over all of them,
    shown before each step this process has not computed yet; returns their results."""
    progress = Progress(label)
    computed = _computed_steps()
    results = []
    try:
        for done, (message, step, args) in enumerate(steps):
            marker = (step.__name__, *args)
            if marker not in computed:
                progress(done, len(steps), message)
            start = time.perf_counter()
            results.append(step(*args))
            if time.perf_counter() - start > 0.1:
                progress(done + 1, len(steps), message)
            computed.add(marker)
    finally:
        progress.close()
    return results


def _splits_prefix(i, r):
    return f"split {i + 1} of {r}, " if r > 1 else ""


def frontier_sweeps(refs, config, second=None):
    """SDWEC over the sidebar's λ grid (and optionally a second parameter) on each pool of
    ``refs``, cached, with one progress bar over every split.

    Parameters
    ----------
    refs : list of PoolRef
        The splits (:func:`pool_refs`).
    config : Config
        Fixes the parameters not swept.
    second : str or None
        A key of :data:`~dashboard.config.SECOND_SWEEPS`.

    Returns
    -------
    list of pandas.DataFrame
        :func:`sdwec.frontier.sweep` rows per split; the λ values are the sidebar's, so any
        point can be reproduced exactly in the Explorer.
    """
    get_pools(refs)
    fixed = tuple(sorted(dict(beta=config.beta, gamma=config.gamma, eps=config.eps,
                              iterations=config.iterations,
                              threshold=config.threshold).items()))
    second_arg = None if second is None else SECOND_SWEEPS[second]
    chunks = [LAMBDA_GRID[i:i + _SWEEP_CHUNK] for i in range(0, len(LAMBDA_GRID), _SWEEP_CHUNK)]
    steps = [(f"{_splits_prefix(i, len(refs))}λ from {lams[0]:g} to {lams[-1]:g}",
              _sweep_chunk, (ref, lams, fixed, second_arg))
             for i, ref in enumerate(refs) for lams in chunks]
    frames = _stepwise(f"SDWEC sweep on {refs[0].shown}", steps)
    return [pd.concat(frames[i * len(chunks):(i + 1) * len(chunks)], ignore_index=True)
            for i in range(len(refs))]


@st.cache_data(max_entries=SWEEP_CACHE_ENTRIES * 4, show_spinner=False, hash_funcs=_HASH)
def _peer(ref, name):
    return frontier.peers(_pool(ref), seed=ref.key.seed, names=[name])


def frontier_peers_over(refs, oob=False):
    """The peers' points and curves on each pool of ``refs`` (cached per pool and method),
    with our out-of-bag variants (:data:`sdwec.frontier.OOB_PEERS`) when ``oob``; one
    progress bar says which method on which split is being fitted.

    Returns
    -------
    list of pandas.DataFrame
        One per split, the methods in the registry's order.
    """
    get_pools(refs)
    names = frontier.paper_peers() + ([m.name for m in methods.registered()
                                       if m.name in frontier.OOB_PEERS] if oob else [])
    r = len(refs)
    steps = [(f"{_splits_prefix(i, r)}{name}", _peer, (ref, name))
             for i, ref in enumerate(refs) for name in names]
    label = ("Fitting the peers and SDWEC-OOB (out-of-bag votes: every training row)" if oob
             else "Fitting the peers")
    frames = _stepwise(f"{label} on {refs[0].shown}", steps)
    return [pd.concat(frames[i * len(names):(i + 1) * len(names)], ignore_index=True)
            for i in range(r)]


def split_rows(counts, what, unit="points"):
    """How many rows of a kind the splits hold and what one row is worth in accuracy, true
    for every split (stratified splits of one dataset can differ by a row):
    ``"85 test rows (one row = 1.2 points)"`` for one split, ``"21 test rows per split (210
    in all; one row = 4.8 points)"``, ``"84–85 test rows per split (845 in all; one row =
    1.2 points)"``."""
    low, high = min(counts), max(counts)
    each = f"{low:,}" if low == high else f"{low:,}–{high:,}"
    worth = [points(1 / n, sign=False) for n in (high, low)]
    worth = worth[0] if worth[0] == worth[1] else "–".join(worth)
    if len(counts) == 1:
        return f"{each} {what} (one row = {worth} {unit})"
    return f"{each} {what} per split ({sum(counts):,} in all; one row = {worth} {unit})"


def frontier_rows_note(ref, splits):
    """What the frontier's accuracies rest on: the rows of the splits, and the splits."""
    held = get_pools([ref.with_seed(ref.key.seed + i) for i in range(splits)])
    n_val = [len(p.y_val) for p in held]
    n_test = [len(p.y_test) for p in held]
    note = (f"{'One split: ' if splits == 1 else 'The splits hold '}"
            f"{split_rows(n_val, 'validation rows', 'accuracy points')} and "
            f"{split_rows(n_test, 'test rows')}.")
    if splits == 1:
        return note + budget_note(ref) + (
            " Steps of that size are one row; the intervals are the exact binomial "
            "intervals of each accuracy over this split's rows. Raise *Splits* to see how "
            "much the splits differ.")
    note += budget_note(ref)
    return note + (f" Curves and points are means over {splits} splits, each with the 95 % "
                   "interval of the mean (inside what the number can be): SDWEC's as a "
                   "shaded band, every other curve's as dashed lines (listed as “…: 95% "
                   "interval of the mean”; a legend click on either hides or shows the curve "
                   "and its interval together), each single ensemble (bagging, WMV, …) as an "
                   "error bar. A hollow point is a setting where some splits keep no tree. "
                   "The splits are redrawn from one dataset's rows (a row can be a test row "
                   "in several splits), so they are not independent samples: the intervals "
                   "are optimistic.")


def split_sizes(ref):
    """``{"n_val": …, "n_test": …}``: the rows of the split of ``ref``'s pool."""
    pool = get_pool(ref)
    return {"n_val": len(pool.y_val), "n_test": len(pool.y_test)}


def frontier_csv(sweep, peers):
    """The sweep and the peers as one CSV (``bytes``): every point's mean, its interval
    (``<column>_lo``, ``<column>_hi``) and how many of its ``splits`` keep no tree
    (``abstaining_splits``); the splits' standard deviations are left out (the interval of
    the mean is the summary)."""
    both = pd.concat([sweep, peers], ignore_index=True)
    return both.drop(columns=[c for c in both if str(c).endswith("_sd")]).to_csv(
        index=False).encode()


# --------------------------------------------------------------------------- paper page


@st.cache_data(max_entries=4, show_spinner=False)
def _read_reproduction(path, mtime):
    return pd.read_csv(path)


def _stored(path):
    """The rows of a committed results CSV, re-read when the file changes, or ``None``."""
    if not path.exists():
        return None
    return _read_reproduction(str(path), path.stat().st_mtime)


def stored_reproduction():
    """The committed reproduction rows (``results/reproduction/results.csv``) or ``None``."""
    return _stored(REPRODUCTION_CSV)


#: Where ``python -m sdwec reproduce --suite oob`` wrote the out-of-bag study (docs/oob.md).
OOB_CSV = REPRODUCTION_CSV.parent.parent / "oob" / "results.csv"


def stored_oob():
    """The committed out-of-bag study's rows (``results/oob/results.csv``) or ``None``."""
    return _stored(OOB_CSV)


def reproduction_note(names, repeats, n_trees, task="binary", load=None, cores=None):
    """What the Paper page's live run is about to do: how many pools, how many of them are
    not trained yet and roughly how long training those takes here (the sidebar's estimate,
    :func:`training_seconds_range`, with this machine's load), before the Run button."""
    cold = experiments.untrained_jobs(names, repeats, n_trees, task)
    note = (f"{len(names) * repeats} pools ({len(names)} dataset(s) × {repeats} repeats), "
            f"{len(cold)} of them not trained yet. ")
    if not cold:
        return note + "Every pool is on disk: the run only solves, a matter of seconds."
    factor = _slowdown(load, cores)[0]
    low = high = 0.0
    for name, pools in Counter(name for name, _ in cold).items():
        one_low, one_high = training_seconds_range(*_shape_of(name), n_trees, pools=pools)
        low, high = low + factor * one_low, high + factor * one_high
    basis = "each dataset's size and the machine's load" if factor > 1 else "each dataset's size"
    return note + (f"Training those comes first, roughly {duration_range(low, high)} on this "
                   f"machine now (estimated from {basis}); the pools are then kept on disk.")


def live_reproduction(names, repeats, n_trees, task="binary"):
    """Run the paper's experiment on ``names`` now, job by job, with a progress bar."""
    jobs = [(name, r) for name in names for r in range(repeats)]
    if not jobs:
        raise ValueError("choose at least one dataset to run")
    trained = len(experiments.untrained_jobs(names, repeats, n_trees, task))
    progress = Progress("Reproducing Table 3")
    rows = []
    try:
        for done, (name, r) in enumerate(jobs):
            progress(done, len(jobs), f"{name}, repeat {r + 1} of {repeats}")
            rows.extend(experiments.run_job(name, r, n_trees=n_trees, task=task))
    finally:
        progress.close()
    frame = pd.DataFrame(rows)
    # The page says how many pools (one per dataset and repeat) took how long.
    frame.attrs["pools"] = len(jobs)
    frame.attrs["trained"] = trained  # of them trained by this run (the rest read from disk)
    frame.attrs["seconds"] = time.monotonic() - progress.start
    return frame


def training_times(names, sizes, seed=0):
    """Table 5's weight-finding times measured now (:func:`sdwec.timing.table5`), on this
    process's cached pools, with a progress bar."""
    def load(name, n_trees, seed):
        return _pool(PoolRef(pool.PoolKey.for_dataset(name, "binary", n_trees, seed), None,
                             name))

    progress = Progress("Timing SDWEC")
    try:
        return timing.table5(names, sizes, seed=seed, repeats=TIMING_REPEATS, load=load,
                             progress=progress)
    finally:
        progress.close()


def clear_caches():
    """Empty the dashboard's Streamlit caches (tests call this between runs)."""
    for cached in (_computed_steps, _pool_slot, _compare, _compare_splits, _measure, _sweep_chunk, _peer, _explorer_figures,
                   _convergence_figure, _iterations_figure, _lambda_path, _scrubber_figure,
                   _read_reproduction, _shape_of):
        cached.clear()


# --------------------------------------------------------------------------- upload plans


#: How an upload's pool is trained: a row budget per tree, or full bootstraps (the paper's).
UPLOAD_CHOICES = ("budget", "full")


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


def upload_rate(dataset):
    """Seconds per unit of tree growing measured on ``dataset``, once per file and session."""
    kept = st.session_state.get("upload_rate")
    if kept is None or kept[0] != dataset.fingerprint:
        kept = (dataset.fingerprint, budget.measure_rate(dataset.X, dataset.y))
        st.session_state["upload_rate"] = kept
    return kept[1]


def _upload_args(dataset):
    """What :func:`sdwec.budget.estimate_pool` needs to know of an upload beyond its shape:
    the rate measured on it, its classes and the bytes of one predicted label."""
    return dict(rate=upload_rate(dataset), n_classes=len(dataset.classes),
                label_bytes=pool.compact_labels(np.asarray(dataset.classes)).itemsize)


#: Seconds (low, high) one upload pool costs beyond growing its trees: starting its worker
#: process (interpreter, imports, unpickling the upload) and reading the stored pool back
#: into the page.  Measured with a synthetic noisy upload (benchmarks/upload.py's CSV) handed
#: to ``python -m sdwec _pool-job`` as the dashboard does, at load 2-4 on this project's
#: 2-core machine: 1.1 s (5,000 rows), 2.0 s (300,000 rows, budget 5,000) and 2.4 s (30,000
#: rows) from the start to the worker's first progress record; reading the pool back took
#: 0.05-0.18 s (12-94 MB entries).  The high end allows for a busier machine.
UPLOAD_START_SECONDS = (1.0, 4.0)


def _upload_estimate(dataset, n_trees, max_samples=None):
    """:func:`sdwec.budget.estimate_pool` of an upload's pool (the rate measured on the file
    itself), with its worker's start-up and the read-back (:data:`UPLOAD_START_SECONDS`)
    added when it trains in a worker (:data:`OFF_PAGE_SECONDS`): what a person waits for,
    not the trees alone.  A pool trained in the page pays neither."""
    one = budget.estimate_pool(*dataset.X.shape, n_trees, max_samples,
                               **_upload_args(dataset))
    if one.seconds[1] < OFF_PAGE_SECONDS:
        return one
    return replace(one, seconds=tuple(s + extra for s, extra
                                      in zip(one.seconds, UPLOAD_START_SECONDS)))


def _upload_estimates(dataset, n_trees, max_samples=None):
    """Estimates of the full pool, the budgeted one (``max_samples``, default the budget
    that fits the target) and the fewer-trees one (:func:`_upload_estimate`)."""
    n, d = dataset.X.shape
    args = _upload_args(dataset)
    full = _upload_estimate(dataset, n_trees)
    # A pool that long trains in a worker: its trees get what the start-up leaves.
    target = budget.TARGET_SECONDS - (UPLOAD_START_SECONDS[1]
                                      if OFF_PAGE_SECONDS < budget.TARGET_SECONDS else 0.0)
    m = budget.row_budget(n, d, n_trees, target, **args)
    if m is not None and max_samples is not None:
        m = max_samples   # a budget already on disk, used instead
    budgeted = None if m is None else _upload_estimate(dataset, n_trees, m)
    fewer_l = budget.trees_within(n, d, [s for s in POOL_SIZES if s < n_trees], target,
                                  **args)
    fewer = None if fewer_l is None else _upload_estimate(dataset, fewer_l)
    return full, budgeted, fewer


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
    _, budgeted, _ = _upload_estimates(dataset, n_trees)
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
    full, budgeted, fewer = _upload_estimates(dataset, config.n_trees, m)
    choice = st.session_state.get("upload_choice", "budget")
    key = pool.PoolKey.for_dataset(dataset, dataset.task, config.n_trees, config.seed,
                                   max_samples=m)
    first = PoolRef(key, dataset, dataset.name)
    refs = [first.with_seed(config.seed + i) for i in range(config.splits)]
    return UploadPlan(full, budgeted, fewer, choice, key, len(refs), len(_untrained(refs)))
