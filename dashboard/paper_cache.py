"""The Paper page's data: the committed reproduction and out-of-bag results (re-read when the
files change), the live reproduction of Table 3 with its estimate before it starts, and
Table 5's weight-finding times measured now."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard import estimates, pools
from dashboard.progress import Progress
from sdwec import experiments, pool, timing

#: Timed runs (after one warm-up) of the Paper page's weight-finding times: their median,
#: fastest and slowest are shown, and five runs give a spread worth reading at little cost
#: (wine's l = 200 solves in hundredths of a second).
TIMING_REPEATS = 5
#: Where ``python -m sdwec reproduce`` writes its per-row results.
REPRODUCTION_CSV = (Path(__file__).resolve().parent.parent / "results" / "reproduction"
                    / "results.csv")


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
    :func:`dashboard.estimates.training_seconds_range`, with this machine's load), before
    the Run button."""
    cold = experiments.untrained_jobs(names, repeats, n_trees, task)
    note = (f"{len(names) * repeats} pools ({len(names)} dataset(s) × {repeats} repeats), "
            f"{len(cold)} of them not trained yet. ")
    if not cold:
        return note + "Every pool is on disk: the run only solves, a matter of seconds."
    factor = estimates.slowdown(load, cores)[0]
    low = high = 0.0
    for name, count in Counter(name for name, _ in cold).items():
        one_low, one_high = estimates.training_seconds_range(*estimates.shape_of(name), n_trees,
                                                             pools=count)
        low, high = low + factor * one_low, high + factor * one_high
    basis = "each dataset's size and the machine's load" if factor > 1 else "each dataset's size"
    return note + (f"Training those comes first, roughly "
                   f"{estimates.duration_range(low, high)} on this machine now (estimated "
                   f"from {basis}); the pools are then kept on disk.")


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
        return pools.pool_of(pools.PoolRef(pool.PoolKey.for_dataset(name, "binary", n_trees,
                                                                   seed), None, name))

    progress = Progress("Timing SDWEC")
    try:
        return timing.table5(names, sizes, seed=seed, repeats=TIMING_REPEATS, load=load,
                             progress=progress)
    finally:
        progress.close()
