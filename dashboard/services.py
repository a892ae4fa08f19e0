"""Every Streamlit cache of the dashboard, keyed on one frozen pool reference.

A :class:`PoolRef` names a pool by a small hashable key (the dataset name or an upload's
fingerprint, task, pool size, seed) and carries the data to build it from without that
data being hashed; every cached call takes one.  Pools are held per process by
``st.cache_resource`` (bounded) and on disk by :func:`sdwec.pool.load_pool`; solutions,
sweeps and timings by ``st.cache_data`` with bounded ``max_entries``, so memory stays flat
in a long session.  Nothing here computes anything about SDWEC: it calls the library.
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from dashboard.config import LAMBDA_GRID, SECOND_SWEEPS, USER_DATA
from sdwec import (comparison, datasets, experiments, frontier, plots, pool, solver,
                   timing)
from sdwec.errors import DataError
from dashboard.config import POOL_SIZES
from sdwec import budget

#: Bounds of the caches.
POOL_CACHE_ENTRIES = 6
SOLUTION_CACHE_ENTRIES = 256
SWEEP_CACHE_ENTRIES = 16
TIMING_CACHE_ENTRIES = 64
#: Explorer figures kept per configuration: building a 200-bar Plotly figure costs more than
#: the solve it shows, so a revisited configuration reuses its figures.  Kept few: one
#: configuration's three figures hold about 2.6 MiB as Plotly objects (l = 200, measured).
FIGURE_CACHE_ENTRIES = 16
#: Timed runs (median reported, after one warm-up) of the Paper page's weight-finding times.
TIMING_REPEATS = 3
#: Where ``python -m sdwec reproduce`` writes its per-row results.
REPRODUCTION_CSV = Path(__file__).resolve().parent.parent / "results" / "reproduction" / "results.csv"
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
        The dataset's name, for messages.
    """

    key: pool.PoolKey
    dataset: object = field(default=None, compare=False, hash=False)
    label: str = field(default="", compare=False, hash=False)

    @property
    def n_trees(self):
        return self.key.n_trees

    def with_seed(self, seed):
        """The same pool on another split."""
        return replace(self, key=replace(self.key, seed=int(seed)))


# Streamlit hashes a PoolRef by its key only: the uploaded data it carries stays unhashed.
_HASH = {PoolRef: lambda ref: ref.key}


class Progress:
    """``progress(done, total, message)`` callback drawing a bar only if work happens.

    The bar says how long the work has run and, once a tenth of it is done, about how long
    is left (the library reports steps weighted by their cost, so the rate is meaningful).
    """

    def __init__(self, label):
        self.label = label
        self.slot = st.empty()
        self.bar = None
        self.start = time.monotonic()

    def __call__(self, done, total, message):
        fraction = min(max(done / total, 0.0), 1.0) if total else 1.0
        elapsed = time.monotonic() - self.start
        text = f"{self.label}: {message} · {_duration(elapsed)} elapsed"
        if 0.1 <= fraction < 1.0:
            text += f", about {_duration(elapsed * (1 - fraction) / fraction)} left"
        if self.bar is None:
            self.bar = self.slot.progress(fraction, text=text)
        else:
            self.bar.progress(fraction, text=text)

    def close(self):
        self.slot.empty()


def _duration(seconds):
    """``"45 s"`` or ``"3 min"``: the precision a person waiting wants."""
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


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
                        "kept after a reload or in a new session. Open *Your data* and upload "
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
    return {"lock": threading.Lock(), "pool": None}


def _pool(ref, progress=None):
    """The pool of ``ref``: from this process, the disk cache, or trained now.

    If another session is training the same pool, this one says so and waits for it
    instead of training it again.
    """
    slot = _pool_slot(ref)
    if slot["pool"] is not None:
        return slot["pool"]
    if not slot["lock"].acquire(blocking=False):
        if progress is not None:
            progress.slot.info("Another session is training this pool right now; it will "
                               "appear here as soon as it is ready.")
        slot["lock"].acquire()
    try:
        if slot["pool"] is None:
            slot["pool"] = pool.load_pool(ref.key, dataset=ref.dataset, progress=progress)
        return slot["pool"]
    finally:
        slot["lock"].release()


#: Cold training longer than this gets a note before the user commits to it.
COLD_NOTE_SECONDS = 10.0


def cold_start_note(config):
    """A note when ``config``'s pool is not trained yet and training takes over ~10 s."""
    try:
        ref = pool_ref(config)
    except DataError:
        return None
    if _pool_slot(ref)["pool"] is not None or pool.is_cached(ref.key):
        return None
    shape = ref.dataset.X.shape if ref.dataset is not None else _shape_of(ref.key.source)
    seconds = timing.estimated_training_seconds(shape[0], shape[1], ref.n_trees)
    if seconds < COLD_NOTE_SECONDS:
        return None
    return (f"This pool is not trained yet: {ref.n_trees} trees on {ref.label} take roughly "
            f"{_duration(seconds)} on an idle 2-core machine (longer when busy). It is then "
            f"kept on disk, so later visits are instant.")


@st.cache_data(ttl=5, show_spinner=False)
def warm_pools(n_trees, seed, task="binary"):
    """Shipped datasets whose pool of ``n_trees`` trees (``seed``, ``task``) is on disk."""
    return tuple(name for name in datasets.names()
                 if task in datasets.tasks(name) and pool.is_cached(name, task, n_trees, seed))


@st.cache_data(show_spinner=False)
def _shape_of(name):
    """``(rows, features)`` of a shipped dataset."""
    return datasets.load(name).X.shape


def get_pool(ref):
    """The trained pool of ``ref``, with a progress bar while it is being trained."""
    progress = Progress(f"Training {ref.n_trees} trees on {ref.label}")
    try:
        return _pool(ref, progress)
    finally:
        progress.close()


# --------------------------------------------------------------------------- explorer


@st.cache_data(max_entries=SOLUTION_CACHE_ENTRIES, show_spinner=False, hash_funcs=_HASH)
def _compare(ref, params):
    return comparison.compare(_pool(ref), **dict(params))


def _params(config):
    return tuple(sorted(config.compare_params().items()))


def compare(ref, config):
    """SDWEC on ``ref``'s pool with the baselines beside it (cached, bounded)."""
    get_pool(ref)  # trains (with a progress bar) if needed, before the cached solve
    return _compare(ref, _params(config))


@st.cache_resource(max_entries=FIGURE_CACHE_ENTRIES, show_spinner=False, hash_funcs=_HASH)
def _explorer_figures(ref, params, splits, pin, _result, _summary, _pinned):
    """The Explorer's accuracy and weights figures for one configuration (shared, read-only)."""
    sol = _result.solution
    threshold = sol.threshold if np.isfinite(sol.threshold) else None
    return (plots.method_comparison(_summary),
            plots.member_weights(sol.weights, _result.member_accuracy, threshold,
                                 pinned=None if _pinned is None else _pinned.solution.weights))


def explorer_figures(ref, config, result, summary, pinned=None):
    """The Explorer's figures of ``result`` (and the pinned result's weights), cached per
    configuration."""
    return _explorer_figures(ref, _params(config), config.splits, config.pin, result, summary,
                             pinned)



@st.cache_resource(max_entries=FIGURE_CACHE_ENTRIES, show_spinner=False, hash_funcs=_HASH)
def _convergence_figure(ref, params, log, _result):
    return plots.convergence(_result.solution.history, log_y=log)


def convergence_figure(ref, config, result, log):
    """The cost-per-iteration figure (cached per configuration and axis scale)."""
    return _convergence_figure(ref, _params(config), bool(log), result)


@st.cache_resource(max_entries=FIGURE_CACHE_ENTRIES, show_spinner=False, hash_funcs=_HASH)
def _iterations_figure(ref, params, _result):
    sol, p = _result.solution, dict(params)  # the solver's parameters and the fit
    thresholds = [solver.line15_thresholds(r.weights, p["beta"], p["gamma"], p["eps"],
                                           p["threshold"])[1] for r in sol.history]
    return plots.weights_over_iterations(sol.history, thresholds, _result.member_accuracy)


@st.cache_data(max_entries=SWEEP_CACHE_ENTRIES, show_spinner=False, hash_funcs=_HASH)
def _lambda_path(ref, params):
    return comparison.lambda_path(_pool(ref), LAMBDA_GRID, **dict(params))


@st.cache_resource(max_entries=FIGURE_CACHE_ENTRIES, show_spinner=False, hash_funcs=_HASH)
def _scrubber_figure(ref, params, lam):
    return plots.lambda_scrubber(_lambda_path(ref, params), lam)


def scrubber_figure(ref, config):
    """The λ scrubber: SDWEC at every λ of the sidebar's grid as one figure with frames
    (the path is cached per pool and parameters other than λ; the figure starts at the
    sidebar's λ)."""
    get_pool(ref)
    params = tuple(sorted((k, v) for k, v in config.compare_params().items() if k != "lam"))
    return _scrubber_figure(ref, params, config.lam)


def iterations_figure(ref, config, result):
    """The weights-across-iterations figure with its frames (cached per configuration)."""
    return _iterations_figure(ref, _params(config), result)


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


def frontier_sweep(ref, config, second=None):
    """SDWEC over the sidebar's λ grid (and optionally a second parameter), cached.

    Parameters
    ----------
    ref : PoolRef
    config : Config
        Fixes the parameters not swept.
    second : str or None
        A key of :data:`~dashboard.config.SECOND_SWEEPS`.

    Returns
    -------
    pandas.DataFrame
        :func:`sdwec.frontier.sweep` rows; the λ values are the sidebar's, so any point can
        be reproduced exactly in the Explorer.
    """
    get_pool(ref)
    fixed = tuple(sorted(dict(beta=config.beta, gamma=config.gamma, eps=config.eps,
                              iterations=config.iterations,
                              threshold=config.threshold).items()))
    second_arg = None if second is None else SECOND_SWEEPS[second]
    chunks = [LAMBDA_GRID[i:i + _SWEEP_CHUNK] for i in range(0, len(LAMBDA_GRID), _SWEEP_CHUNK)]
    progress = Progress(f"SDWEC sweep on {ref.label}")
    frames = []
    try:
        for done, lams in enumerate(chunks):
            start = time.perf_counter()
            frames.append(_sweep_chunk(ref, lams, fixed, second_arg))
            # Only real work shows a bar: cached chunks come back in microseconds.
            if time.perf_counter() - start > 0.1:
                progress(done + 1, len(chunks), f"λ up to {lams[-1]:g}")
    finally:
        progress.close()
    return pd.concat(frames, ignore_index=True)


@st.cache_data(max_entries=SWEEP_CACHE_ENTRIES, show_spinner=False, hash_funcs=_HASH)
def _peers(ref, oob):
    names = frontier.OOB_PEERS if oob else frontier.paper_peers()
    return frontier.peers(_pool(ref), seed=ref.key.seed, names=names)


def frontier_peers(ref, oob=False):
    """The peers' points and curves on ``ref``'s pool (cached per pool), with our
    out-of-bag variants (:data:`sdwec.frontier.OOB_PEERS`) when ``oob``."""
    get_pool(ref)
    base = _peers(ref, False)
    if not oob:
        return base
    with st.spinner("Fitting SDWEC-OOB on the out-of-bag votes…"):
        return pd.concat([base, _peers(ref, True)], ignore_index=True)


def frontier_rows_note(ref, splits):
    """What the frontier's accuracies rest on: the rows of one split, and the splits."""
    p = get_pool(ref)
    n_val, n_test = len(p.y_val), len(p.y_test)
    note = (f"One split: {n_val} validation rows (one row = {100 / n_val:.1f} accuracy "
            f"points) and {n_test} test rows (one row = {100 / n_test:.1f} points).")
    if splits == 1:
        return note + " Steps of that size are one row; raise *Splits* to see the spread."
    return note + f" Points are means over {splits} splits; bars are ± one standard deviation."


def frontier_csv(sweep, peers):
    """The sweep and the peers as one CSV (``bytes``), every column kept."""
    return pd.concat([sweep, peers], ignore_index=True).to_csv(index=False).encode()


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


#: Where ``python -m sdwec reproduce --suite oob`` wrote the out-of-bag study (issue 15).
OOB_CSV = REPRODUCTION_CSV.parent.parent / "oob" / "results.csv"


def stored_oob():
    """The committed out-of-bag study's rows (``results/oob/results.csv``) or ``None``."""
    return _stored(OOB_CSV)


def live_reproduction(names, repeats, n_trees, task="binary"):
    """Run the paper's experiment on ``names`` now, job by job, with a progress bar."""
    jobs = [(name, r) for name in names for r in range(repeats)]
    if not jobs:
        raise ValueError("choose at least one dataset to run")
    progress = Progress("Reproducing Table 3")
    rows = []
    try:
        for done, (name, r) in enumerate(jobs):
            progress(done, len(jobs), f"{name}, repeat {r + 1} of {repeats}")
            rows.extend(experiments.run_job(name, r, n_trees=n_trees, task=task))
    finally:
        progress.close()
    return pd.DataFrame(rows)


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
    for cached in (_pool_slot, _compare, _measure, _sweep_chunk, _peers, _explorer_figures,
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
    cached : bool
        Whether that pool is on disk already (nothing to train).
    """

    full: object
    budgeted: object
    fewer: object
    choice: str
    key: object
    cached: bool

    @property
    def chosen(self):
        """The estimate of the pool the choice trains."""
        return self.budgeted if self.choice == "budget" and self.budgeted else self.full


def upload_rate(dataset):
    """Seconds per unit of tree growing measured on ``dataset``, once per file and session."""
    kept = st.session_state.get("upload_rate")
    if kept is None or kept[0] != dataset.fingerprint:
        kept = (dataset.fingerprint, budget.measure_rate(dataset.X, dataset.y))
        st.session_state["upload_rate"] = kept
    return kept[1]


def _upload_estimates(dataset, n_trees, max_samples=None):
    """Estimates of the full pool, the budgeted one (``max_samples``, default the budget
    that fits the target) and the fewer-trees one."""
    n, d = dataset.X.shape
    args = dict(rate=upload_rate(dataset), n_classes=len(dataset.classes),
                label_bytes=pool.compact_labels(np.asarray(dataset.classes)).itemsize)
    full = budget.estimate_pool(n, d, n_trees, **args)
    m = budget.row_budget(n, d, n_trees, **args)
    if m is not None and max_samples is not None:
        m = max_samples   # a budget already on disk, used instead
    budgeted = None if m is None else budget.estimate_pool(n, d, n_trees, m, **args)
    fewer_l = budget.trees_within(n, d, [s for s in POOL_SIZES if s < n_trees], **args)
    fewer = None if fewer_l is None else budget.estimate_pool(n, d, fewer_l, **args)
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


def upload_plan(dataset, config):
    """The :class:`UploadPlan` of ``dataset`` under ``config`` (pool size and seed)."""
    m = upload_max_samples(dataset, config.n_trees, config.seed)
    full, budgeted, fewer = _upload_estimates(dataset, config.n_trees, m)
    choice = st.session_state.get("upload_choice", "budget")
    key = pool.PoolKey.for_dataset(dataset, dataset.task, config.n_trees, config.seed,
                                   max_samples=m)
    ready = _pool_slot(PoolRef(key))["pool"] is not None or pool.is_cached(key)
    return UploadPlan(full, budgeted, fewer, choice, key, ready)
