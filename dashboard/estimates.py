"""How long training pools takes, and the words for it.

A shipped dataset's pools are timed from rates calibrated on the shipped datasets
(:func:`training_seconds_range`) and this machine's load (:func:`slowdown`); an upload's
from a rate measured on the file itself (:func:`upload_rate`), plus its worker's start-up
when it trains off the page.  The sidebar, the progress bars, *Your data* and the Paper page
all take their numbers from here, so they agree.
"""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np
import streamlit as st

from dashboard import training
from dashboard.config import POOL_SIZES
from sdwec import budget, datasets, pool


def duration(seconds):
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


@st.cache_data(show_spinner=False)
def shape_of(name):
    """``(rows, features)`` of a shipped dataset."""
    return datasets.load(name).X.shape


def _shape(ref):
    """``(rows, features)`` of ``ref``'s data."""
    return ref.dataset.X.shape if ref.dataset is not None else shape_of(ref.key.source)


def training_range(refs, pools=None):
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


def load_factor(ref):
    """How much longer than :func:`training_range` says ``ref``'s training takes on this
    machine now: an upload's rate was measured at this load already (1)."""
    return 1.0 if ref.dataset is not None else slowdown()[0]


def slowdown(load=None, cores=None):
    """``(factor, load, cores)``: how much longer a CPU-bound training takes now than with a
    core to spare (what :func:`training_seconds_range` was measured with); 1 below 1.5×."""
    load = os.getloadavg()[0] if load is None else load
    cores = (os.cpu_count() or 1) if cores is None else cores
    factor = (load + 1) / cores  # a new process gets about cores / (load + 1) of a core
    return (factor if factor >= 1.5 else 1.0), load, cores


def busy_note(load=None, cores=None):
    """A sentence when the machine runs more work than it has cores: how much longer a
    training then takes (empty otherwise)."""
    factor, load, cores = slowdown(load, cores)
    if factor == 1.0:
        return ""
    return (f"This machine is busy now (load {load:.0f} on {cores} cores): expect about "
            f"{factor:.0f}× that. ")


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
    added when it trains in a worker (:data:`dashboard.training.OFF_PAGE_SECONDS`): what a
    person waits for, not the trees alone.  A pool trained in the page pays neither."""
    one = budget.estimate_pool(*dataset.X.shape, n_trees, max_samples,
                               **_upload_args(dataset))
    if one.seconds[1] < training.OFF_PAGE_SECONDS:
        return one
    return replace(one, seconds=tuple(s + extra for s, extra
                                      in zip(one.seconds, UPLOAD_START_SECONDS)))


def upload_estimates(dataset, n_trees, max_samples=None):
    """Estimates of the full pool, the budgeted one (``max_samples``, default the budget
    that fits the target) and the fewer-trees one (:func:`_upload_estimate`)."""
    n, d = dataset.X.shape
    args = _upload_args(dataset)
    full = _upload_estimate(dataset, n_trees)
    # A pool that long trains in a worker: its trees get what the start-up leaves.
    off_page = training.OFF_PAGE_SECONDS < budget.TARGET_SECONDS
    target = budget.TARGET_SECONDS - (UPLOAD_START_SECONDS[1] if off_page else 0.0)
    m = budget.row_budget(n, d, n_trees, target, **args)
    if m is not None and max_samples is not None:
        m = max_samples   # a budget already on disk, used instead
    budgeted = None if m is None else _upload_estimate(dataset, n_trees, m)
    fewer_l = budget.trees_within(n, d, [s for s in POOL_SIZES if s < n_trees], target,
                                  **args)
    fewer = None if fewer_l is None else _upload_estimate(dataset, fewer_l)
    return full, budgeted, fewer
