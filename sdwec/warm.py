"""Train the shipped datasets' default pools into the disk cache ahead of the first visit.

The first visit to NSL-KDD trains 200 trees on 100,778 rows: about a minute on an idle
2-core machine, several on a busy one.  :func:`warm` builds every shipped dataset's default
pools (binary task, l = 200, the dashboard's defaults: one pool per split, seeds
0 .. r − 1 with r = :func:`sdwec.comparison.default_splits` of the dataset, so 10 for the
small UCI sets, 3 for waveform, 1 for NSL-KDD) into :func:`sdwec.pool.cache_dir`, cheapest
pool first so the common pages are ready soonest, training each pool's trees on every core.  Pools already cached are skipped, and the disk
cache's lock makes a dashboard session asking for a pool being warmed wait for it instead of
training it a second time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sdwec import comparison, datasets, pool, timing

__all__ = ["WarmResult", "plan", "warm", "DEFAULT_TREES"]

DEFAULT_TREES = 200


@dataclass(frozen=True)
class WarmResult:
    """One pool :func:`warm` looked at."""

    key: pool.PoolKey
    trained: bool
    seconds: float


def plan(names=None, n_trees=DEFAULT_TREES, seeds=None, task="binary"):
    """The pool keys to warm, cheapest first (by :func:`sdwec.timing.estimated_training_seconds`).

    Parameters
    ----------
    names : sequence of str, optional
        Shipped datasets (default: all).
    n_trees : int, default=200
    seeds : sequence of int, optional
        The split seeds to warm for every dataset; by default each dataset's own
        ``range(default_splits(rows))``, the splits the dashboard opens it with.
    task : {"binary", "multiclass"}, default="binary"

    Returns
    -------
    list of (PoolKey, float)
        Each key with its estimated training seconds.
    """
    names = datasets.names() if names is None else list(names)
    out = []
    for name in names:
        shape = datasets.load(name, task).X.shape
        estimate = timing.estimated_training_seconds(shape[0], shape[1], n_trees)
        wanted = range(comparison.default_splits(shape[0])) if seeds is None else seeds
        for seed in wanted:
            out.append((pool.PoolKey.for_dataset(name, task, n_trees, seed), estimate))
    return sorted(out, key=lambda item: item[1])


def warm(names=None, n_trees=DEFAULT_TREES, seeds=None, task="binary", n_jobs=-1,
         progress=None):
    """Build the pools of :func:`plan` into the disk cache (skipping cached ones).

    Parameters
    ----------
    names, n_trees, seeds, task
        As in :func:`plan` (by default every shipped dataset's default splits).
    n_jobs : int, default=-1
        Cores that train each pool's trees (joblib convention: -1 is every core).
    progress : callable, optional
        ``progress(done, total, message)`` in estimated seconds of work, so the bar moves
        at the pace the time passes.

    Returns
    -------
    list of WarmResult
    """
    todo = plan(names, n_trees, seeds, task)
    total = sum(estimate for _, estimate in todo)
    report = progress or (lambda done, total, message: None)
    done, results = 0.0, []
    for key, estimate in todo:
        start = time.perf_counter()
        cached = pool.is_cached(key)
        if not cached:
            report(done, total, f"training {key.source} (l={key.n_trees}, seed {key.seed})")
            pool.load_pool(key, n_jobs=n_jobs)
        results.append(WarmResult(key, not cached, time.perf_counter() - start))
        done += estimate
        report(done, total, f"{key.source} {'trained' if not cached else 'already cached'}")
    return results
