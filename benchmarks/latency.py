"""Dashboard latency: the Explorer's rerun time after a λ move, driven by Streamlit's AppTest.

Per dataset (binary task, l = 200, seed 0) the pool is first put in the disk cache
(``$SDWEC_CACHE_DIR``), Streamlit's in-memory caches are emptied, and one AppTest session opens
the Explorer.  Then, in the same session:

* **first run**: the page's first run (pool read from the disk cache, SDWEC solved, the full
  and pruned ensembles' prediction times measured) -- the baseline of "first ÷ move";
* **no-op rerun**: median of 5 reruns with nothing changed (every call cached: only the
  script and the figures are rebuilt) -- the baseline of "move ÷ no-op";
* **λ move**: 20 moves of the λ slider, each to a (λ, β) pair the process has not solved
  before, so every move runs a real solve (λ walks the whole grid from 0.001 up; for the last
  moves β is changed once, untimed, and λ walks down).  The pruned ensemble's prediction time
  is measured again whenever the move selects a set of trees not timed before, as the
  dashboard does;
* **revisit**: 5 moves back to λ values already solved (the bounded solution cache answers).

"solve alone" is ``sdwec.solve`` on the pool's compressed table for the same 20 parameter
sets, outside Streamlit: the part of a move that is the solver's.  Every run is checked for
exceptions and ``st.error`` boxes; a dataset whose page fails is reported, not skipped.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from harness.common import machine, percentile, table

APP = str(Path(__file__).resolve().parent.parent / "app.py")
UCI = ("breast", "heart", "ionosphere", "sonar", "vehicle", "vote", "waveform", "wdbc", "wine",
       "wpbc")
LARGE = ("nsl_kdd",)
QUICK = ("wine", "sonar")
N_TREES = 200
SEED = 0
N_MOVES = 20
N_NOOP = 5
N_REVISIT = 5
TARGET_MS = {"nsl_kdd": 500.0}  # every other (UCI) dataset: 150 ms
UCI_TARGET_MS = 150.0
TIMEOUT = 900  # seconds one AppTest run may take (a cold NSL-KDD pool trains for minutes)


def _problems(at):
    """Exception and error boxes on the page (there must be none)."""
    return [f"exception: {e.value}" for e in at.exception] + [
        f"error: {e.value}" for e in at.error]


def _timed_run(at):
    start = time.perf_counter()
    at.run()
    seconds = time.perf_counter() - start
    problems = _problems(at)
    if problems:
        raise RuntimeError("; ".join(str(p)[:300] for p in problems))
    return seconds


def move_plan(lam_grid, start_beta, n_moves=N_MOVES):
    """The (λ, β) of each timed move: each pair new, each move changing λ only.

    λ starts at the grid's first value and walks up the grid; when the grid is exhausted β
    is raised by one (an untimed rerun) and λ walks back down, so no pair repeats.

    Returns
    -------
    start : tuple (λ, β)
        The configuration the session opens with.
    moves : list of tuple (λ, β, change_beta_first)
    """
    grid = list(lam_grid)
    start = (grid[0], start_beta)
    moves, beta, path = [], start_beta, grid[1:]
    direction = 1
    while len(moves) < n_moves:
        if not path:
            beta = beta + 1.0
            direction = -direction
            ordered = grid if direction > 0 else grid[::-1]
            # the current λ is the end just reached; the first move leaves it
            path = ordered[1:]
            moves.append((path.pop(0), beta, True))
            continue
        moves.append((path.pop(0), beta, False))
    return start, moves


def measure(name, n_moves=N_MOVES, n_trees=N_TREES, seed=SEED, log=print):
    """Latency figures of the Explorer on dataset ``name`` (a dict of seconds and counts)."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from dashboard import config as dashboard
    from sdwec import solver
    from sdwec.pool import load_pool

    start = time.perf_counter()
    pool = load_pool(name, "binary", n_trees=n_trees, seed=seed)
    pool_seconds = time.perf_counter() - start
    st.cache_data.clear()
    st.cache_resource.clear()

    base = dashboard.Config(dataset=name, n_trees=n_trees, seed=seed)
    lam_key, beta_key = dashboard.WIDGET_KEYS["lam"], dashboard.WIDGET_KEYS["beta"]
    (lam0, beta0), moves = move_plan(dashboard.LAMBDA_GRID, base.beta, n_moves)
    query = dashboard.config_to_query(dashboard.Config(dataset=name, n_trees=n_trees, seed=seed,
                                                       lam=lam0, beta=beta0))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update(query)
    first = _timed_run(at)
    if not at.metric:
        raise RuntimeError("the Explorer drew no metrics")
    noop = [_timed_run(at) for _ in range(N_NOOP)]

    move_times, selected, solved = [], [], []
    for lam, beta, change_beta in moves:
        if change_beta:
            at.slider(key=beta_key).set_value(beta)
            _timed_run(at)  # untimed: a β move, not a λ move
        at.select_slider(key=lam_key).set_value(lam)
        move_times.append(_timed_run(at))
        used = {m.label: m.value for m in at.metric}.get("Classifiers used", "?")
        selected.append(used)
        solved.append((lam, beta))
        if at.query_params.get("lam") not in (f"{lam:g}", [f"{lam:g}"]):
            raise RuntimeError(f"the URL did not follow the λ move to {lam:g}")

    # Revisits: back to β's first value (untimed; that pair is solved), then λ values already
    # solved with it, so the solution cache answers.
    lam_now = solved[-1][0]
    if solved[-1][1] != beta0:
        at.slider(key=beta_key).set_value(beta0)
        _timed_run(at)
    seen = [lam for lam, beta in solved if beta == beta0 and lam != lam_now]
    revisit = []
    for lam in seen[::-1][:N_REVISIT]:
        at.select_slider(key=lam_key).set_value(lam)
        revisit.append(_timed_run(at))

    solve_alone = []
    for lam, beta in solved:
        params = dict(base.params, lam=lam, beta=beta)
        t0 = time.perf_counter()
        solver.solve(pool.votes("val"), None, **params)
        solve_alone.append(time.perf_counter() - t0)

    result = {"dataset": name, "m_val": len(pool.y_val),
              "unique_val": len(pool.votes("val").counts),
              "pool_seconds": pool_seconds, "first": first, "noop": float(np.median(noop)),
              "moves": move_times, "revisit": revisit, "solve": solve_alone,
              "selected": selected}
    log(f"  {name}: first {first * 1e3:.0f} ms, no-op {result['noop'] * 1e3:.0f} ms, move p50 "
        f"{percentile(move_times, 50) * 1e3:.0f} ms, p95 {percentile(move_times, 95) * 1e3:.0f} ms"
        f" (trees used across moves: {', '.join(selected)})")
    return result


def _row(r):
    ms = lambda s: f"{s * 1e3:.0f}"  # noqa: E731
    p50, p95 = percentile(r["moves"], 50), percentile(r["moves"], 95)
    target = TARGET_MS.get(r["dataset"], UCI_TARGET_MS)
    return [r["dataset"], r["m_val"], r["unique_val"], f"{r['pool_seconds']:.2f}", ms(r["first"]),
            ms(r["noop"]), ms(p50), ms(p95), ms(max(r["moves"])),
            f"{target:.0f}", "yes" if p95 * 1e3 < target else "**no**",
            f"{p50 / r['noop']:.1f}x", f"{r['first'] / p50:.1f}x",
            ms(percentile(r["revisit"], 50)), ms(percentile(r["solve"], 50))]


HEADER = ["dataset", "val rows", "unique val rows", "pool from disk s", "first run ms",
          "no-op rerun ms", "λ move p50 ms", "λ move p95 ms", "max ms", "target p95 ms", "met",
          "move p50 ÷ no-op", "first ÷ move p50", "revisit p50 ms", "solve alone p50 ms"]


def run(quick=False, log=print):
    """Run the benchmark; return its Markdown section.

    Parameters
    ----------
    quick : bool
        Two small datasets (wine, sonar) instead of the 10 UCI datasets and NSL-KDD.
    log : callable
        Progress messages.
    """
    names = QUICK if quick else UCI + LARGE
    rows, failures = [], []
    for name in names:
        cache = os.environ.get("SDWEC_CACHE_DIR", "~/.cache/sdwec")
        log(f"latency: {name} (l = {N_TREES}, seed {SEED}, cache {cache})")
        try:
            rows.append(_row(measure(name, log=log)))
        except Exception as exc:  # noqa: BLE001 -- report the failure, keep measuring the others
            log(f"  {name}: FAILED: {type(exc).__name__}: {exc}")
            failures.append(f"- **{name} failed**: {type(exc).__name__}: {str(exc)[:500]}")
    notes = [f"Moves per dataset: {N_MOVES} (p95 of 20 samples is the interpolated 19th-20th "
             f"value); no-op reruns: {N_NOOP}; revisits: {N_REVISIT}. Targets: p95 under "
             f"{UCI_TARGET_MS:.0f} ms on every UCI dataset, under {TARGET_MS['nsl_kdd']:.0f} ms "
             "on NSL-KDD. Ratios use baselines of the same session: \"move p50 ÷ no-op\" is "
             "the cost of a λ move relative to a rerun that recomputes nothing; \"first ÷ move "
             "p50\" is the first visit (pool from disk, full-ensemble timing) relative to a "
             "move.", "AppTest runs the script in this process without a browser or "
             "websocket: these times exclude network and the browser's drawing (the load "
             "test, `benchmarks/load.py`, measures those)."]
    body = table(HEADER, rows) if rows else "(no dataset completed)"
    return ("## Dashboard latency (AppTest)\n\n" + __doc__.strip() + "\n\n" + body + "\n\n"
            + "\n".join(failures + ([""] if failures else []) + notes) + "\n")


def main():
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="wine and sonar only")
    args = parser.parse_args()
    report = run(quick=args.quick)
    print("\n" + report + "\nMachine: " + machine())


if __name__ == "__main__":
    main()
