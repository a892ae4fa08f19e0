"""The Frontier's computations, cached: SDWEC swept over the sidebar's λ grid (and a second
parameter) and the peer methods fitted, per split, under one progress bar; what the
frontier's accuracies rest on (the splits' rows) and its CSV download."""

from __future__ import annotations

import time
import uuid

import pandas as pd
import streamlit as st

from dashboard import ahead, page_pools, pools
from dashboard.charts import STATIC_DIR
from dashboard.config import LAMBDA_GRID, SECOND_SWEEPS
from dashboard.pools import HASH_FUNCS, HASH_FUNCS_BUT_LAM
from dashboard.progress import Progress
from dashboard.upload_plans import budget_note
from sdwec import frontier, methods
from sdwec.formatting import points

SWEEP_CACHE_ENTRIES = 16
_SWEEP_CHUNK = 5  # λ values per cached sweep call, so a long sweep can show progress


# Keyed without λ: a chunk sweeps its own λ values.
@st.cache_data(max_entries=SWEEP_CACHE_ENTRIES * 8, show_spinner=False,
               hash_funcs=HASH_FUNCS_BUT_LAM)
def _sweep_chunk(ref, lams, params, second):
    return frontier.sweep(pools.pool_of(ref), lams=list(lams), params=params, second=second)


@st.cache_resource(show_spinner=False)
def _computed_steps():
    """Arguments of the Frontier's cached steps computed in this process: a step not in it
    shows the bar *before* it runs (a cached step would only flash it).  Cleared with
    Streamlit's caches; a step evicted after it was recorded shows the bar once it is done."""
    return set()


def _same(value):
    return value


def _stepwise(label, steps):
    """Run ``steps`` (``(message, cached step, its arguments)``), one bar over all of them,
    shown before each step this process has not computed yet; returns their results."""
    progress = Progress(label)
    computed = _computed_steps()
    results = []
    try:
        for done, (message, step, args) in enumerate(steps):
            # What the step's cache is keyed on (λ left out of the parameters).
            marker = (step.__name__, *(HASH_FUNCS_BUT_LAM.get(type(a), _same)(a) for a in args))
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
        The splits (:func:`dashboard.page_pools.pool_refs`).
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
    page_pools.get_pools(refs)
    second_arg = None if second is None else SECOND_SWEEPS[second]
    chunks = [LAMBDA_GRID[i:i + _SWEEP_CHUNK] for i in range(0, len(LAMBDA_GRID), _SWEEP_CHUNK)]
    steps = [(f"{_splits_prefix(i, len(refs))}λ from {lams[0]:g} to {lams[-1]:g}",
              _sweep_chunk, (ref, lams, config.params, second_arg))
             for i, ref in enumerate(refs) for lams in chunks]
    frames = _stepwise(f"SDWEC sweep on {refs[0].shown}", steps)
    return [pd.concat(frames[i * len(chunks):(i + 1) * len(chunks)], ignore_index=True)
            for i in range(len(refs))]


@st.cache_data(max_entries=SWEEP_CACHE_ENTRIES * 4, show_spinner=False, hash_funcs=HASH_FUNCS)
def _peer(ref, name):
    return frontier.peers(pools.pool_of(ref), seed=ref.key.seed, names=[name])


def frontier_peers_over(refs, oob=False):
    """The peers' points and curves on each pool of ``refs`` (cached per pool and method),
    with our out-of-bag variants (:data:`sdwec.frontier.OOB_PEERS`) when ``oob``; one
    progress bar says which method on which split is being fitted.

    Returns
    -------
    list of pandas.DataFrame
        One per split, the methods in the registry's order.
    """
    page_pools.get_pools(refs)
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


def compute_ahead(refs, config, second=None, oob=False):
    """While the Frontier is open, its other views are computed in the background
    (:mod:`dashboard.ahead`): the sweep with each other second parameter, and the
    out-of-bag peers, into the caches the page reads, so choosing them later does not
    wait for the solver."""
    store = ahead.get(STATIC_DIR / ahead.FOLDER_NAME)
    if store is None:
        return
    chunks = [LAMBDA_GRID[i:i + _SWEEP_CHUNK] for i in range(0, len(LAMBDA_GRID), _SWEEP_CHUNK)]
    tasks = []

    def task(step, *args):
        marker = (step.__name__, *(HASH_FUNCS_BUT_LAM.get(type(a), _same)(a) for a in args))

        def run():
            step(*args)
            _computed_steps().add(marker)

        return marker, run

    for other in [None, *SECOND_SWEEPS]:
        if other != second:
            arg = None if other is None else SECOND_SWEEPS[other]
            tasks += [task(_sweep_chunk, ref, lams, config.params, arg)
                      for ref in refs for lams in chunks]
    if not oob:
        tasks += [task(_peer, ref, m.name) for ref in refs for m in methods.registered()
                  if m.name in frontier.OOB_PEERS]
    session = st.session_state.setdefault("_ahead_session", uuid.uuid4().hex)
    store.want(session, [], tasks=[t for t in tasks if t[0] not in _computed_steps()])


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


def frontier_rows_note(ref, splits, second=None):
    """What the frontier's accuracies rest on: the rows of the splits, and the splits
    (``second``: the second sweep's parameter, whose SDWEC intervals are dashed edges)."""
    held = page_pools.get_pools([ref.with_seed(ref.key.seed + i) for i in range(splits)])
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
    drawn = ("SDWEC's as a shaded band (its own legend entry, “…: 95% interval of the "
             "mean”), every other curve's as dashed lines in its colour") if second is None \
        else "every curve's as dashed lines in its colour, SDWEC's too"
    return note + (f" Curves and points are means over {splits} splits, each with the 95 % "
                   f"interval of the mean (inside what the number can be): {drawn} (a "
                   "legend click on a curve hides or shows its interval with it), each "
                   "single ensemble (bagging, WMV, …) as an "
                   "error bar. A hollow point is a setting where some splits keep no tree. "
                   "The splits are redrawn from one dataset's rows (a row can be a test row "
                   "in several splits), so they are not independent samples: the intervals "
                   "are optimistic.")


def split_sizes(ref):
    """``{"n_val": …, "n_test": …}``: the rows of the split of ``ref``'s pool."""
    pool = page_pools.get_pool(ref)
    return {"n_val": len(pool.y_val), "n_test": len(pool.y_test)}


def frontier_csv(sweep, peers):
    """The sweep and the peers as one CSV (``bytes``): every point's mean, its interval
    (``<column>_lo``, ``<column>_hi``) and how many of its ``splits`` keep no tree
    (``abstaining_splits``); the splits' standard deviations are left out (the interval of
    the mean is the summary)."""
    both = pd.concat([sweep, peers], ignore_index=True)
    return both.drop(columns=[c for c in both if str(c).endswith("_sd")]).to_csv(
        index=False).encode()
