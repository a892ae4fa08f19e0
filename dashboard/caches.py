"""Every Streamlit cache of the dashboard, listed once so that :func:`clear_caches` empties
them all (the pools held in memory included) and nothing else in the process.

``st.cache_data`` and ``st.cache_resource`` key each cache on its function's module and
name; ``tests/test_architecture.py`` checks that :data:`CACHED` holds every cached
function under ``dashboard/``.
"""

from __future__ import annotations

from dashboard import estimates, explorer, explorer_cache, frontier_cache, paper_cache, pools

CACHED = (
    pools._pool_slot, pools.warm_pools, pools._n_classes, estimates.shape_of,
    explorer_cache._compare, explorer_cache._compare_splits, explorer_cache._figures,
    explorer_cache._convergence_figure, explorer_cache._answer,
    explorer_cache._iterations_figure, explorer_cache._lambda_path, explorer_cache._measure,
    explorer._remedy, frontier_cache._sweep_chunk, frontier_cache._computed_steps,
    frontier_cache._peer, paper_cache._read_reproduction,
)


def clear_caches():
    """Empty every cache of :data:`CACHED`."""
    for cached in CACHED:
        cached.clear()
