"""The Explorer's computations, cached: SDWEC beside the baselines on one pool or on every
split at once, the figures of a configuration, the λ scrubber's paths and the measured
prediction times.  Every cache is keyed on :class:`~dashboard.pools.PoolRef`, the
configuration's :class:`~sdwec.params.SolverParams` (``Config.params``, passed on to the
solver as it is) and what SDWEC is fitted on, and bounded (``max_entries``), so memory stays flat in a
long session.  Draws nothing but the pools' progress bar (:mod:`dashboard.page_pools`).
"""

from __future__ import annotations

import uuid

import numpy as np
import streamlit as st

from dashboard import ahead, explorer_answer, page_pools, pools
from dashboard.charts import STATIC_DIR
from dashboard.config import BETA_GRID, EPS_GRID, GAMMA_GRID, LAMBDA_GRID
from dashboard.pools import HASH_FUNCS, HASH_FUNCS_BUT_LAM
from sdwec import comparison, plots, solver, timing

SOLUTION_CACHE_ENTRIES = 256
TIMING_CACHE_ENTRIES = 64
#: λ paths kept (each is ten splits' weights at every λ of the grid).
PATH_CACHE_ENTRIES = 16
#: Explorer figures kept per configuration: building a 200-bar Plotly figure costs more than
#: the solve it shows, so a revisited configuration reuses its figures.  Kept few: one
#: configuration's three figures hold about 2.6 MiB as Plotly objects (l = 200, measured).
FIGURE_CACHE_ENTRIES = 16


@st.cache_data(max_entries=SOLUTION_CACHE_ENTRIES, show_spinner=False, hash_funcs=HASH_FUNCS)
def _compare(ref, params, fit_on):
    return comparison.compare(pools.pool_of(ref), fit_on, params=params)


def _ensure_pools(ref, config):
    """Before the first cached computation on ``ref``: every pool of ``config`` (of which
    ``ref`` is one split) in memory, loaded or trained under one bar ("split i of r")."""
    # Called at every run, so that the bar's slot is there in every run (see get_pools).
    refs = page_pools.pool_refs(config)
    page_pools.get_pools(refs if ref in refs else [ref])


def compare(ref, config):
    """SDWEC on ``ref``'s pool with the baselines beside it (cached, bounded)."""
    _ensure_pools(ref, config)  # trains (with a progress bar) if needed, before the solve
    return _compare(ref, config.params, config.fit_on)


# A resource, not data: st.cache_data pickled the ten splits' results (with every iteration's
# weights) at each slider move and unpickled them at each rerun; they are only read.
@st.cache_resource(max_entries=SOLUTION_CACHE_ENTRIES // 4, show_spinner=False,
                   hash_funcs=HASH_FUNCS)
def _compare_splits(refs, params, fit_on):
    return comparison.compare_many([pools.pool_of(ref) for ref in refs], fit_on, params=params)


def compare_splits(refs, config):
    """:func:`compare` on every split of ``refs``, their solves run together (a slider move
    with ten splits costs a few solves, not ten; cached per configuration, bounded)."""
    if len(refs) == 1:
        return [compare(refs[0], config)]
    page_pools.get_pools(refs)  # one bar over the untrained ones ("split i of r")
    return _compare_splits(tuple(refs), config.params, config.fit_on)


@st.cache_resource(max_entries=FIGURE_CACHE_ENTRIES, show_spinner=False, hash_funcs=HASH_FUNCS)
def _figures(ref, params, fit_on, splits, pin, _result, _summary, _pinned):
    """The Explorer's figures for one configuration (shared, read-only)."""
    return explorer_answer.figures(_result, _summary, fit_on, splits, _pinned)


def figures(ref, config, result, summary, pinned=None):
    """:func:`dashboard.explorer_answer.figures` of ``result`` (split 1's, with the pinned
    configuration's weights), cached per configuration."""
    return _figures(ref, config.params, config.fit_on, config.splits, config.pin, result,
                    summary, pinned)


@st.cache_resource(max_entries=FIGURE_CACHE_ENTRIES, show_spinner=False, hash_funcs=HASH_FUNCS)
def _convergence_figure(ref, params, fit_on, log, splits, _result):
    return plots.scoped(plots.convergence(_result.solution.history, log_y=log),
                        explorer_answer.first_split(splits))


def convergence_figure(ref, config, result, log):
    """The cost-per-iteration figure (cached per configuration and axis scale)."""
    return _convergence_figure(ref, config.params, config.fit_on, bool(log), config.splits,
                               result)


@st.cache_resource(max_entries=SOLUTION_CACHE_ENTRIES // 4, show_spinner=False,
                   hash_funcs=HASH_FUNCS)
def _answer(refs, params, fit_on, pin, _results, _pinned):
    return explorer_answer.answer(_results, fit_on, _pinned)


def answer(refs, config, results, pinned=None):
    """:func:`dashboard.explorer_answer.answer` of the page's own setting (cached per
    configuration)."""
    return _answer(tuple(refs), config.params, config.fit_on, config.pin, results, pinned)


#: The values each solver slider takes (the λ line first: see dashboard.ahead.cross).
GRIDS = {"lam": LAMBDA_GRID, "beta": BETA_GRID, "gamma": GAMMA_GRID, "eps": EPS_GRID}


def _family(refs, config):
    return ahead.family_id(ahead.FORMAT, tuple(repr(r.key) for r in refs), config.fit_on,
                           config.iterations, config.threshold, config.pin)


def _setting(config):
    return {"lam": config.lam, "beta": config.beta, "gamma": config.gamma, "eps": config.eps}


def lambda_line(refs, config):
    """The answers along λ at ``config``'s β, γ and ε (``{setting key: answer}``), where
    they are computed ahead already; else ``None``."""
    store = ahead.get(STATIC_DIR / ahead.FOLDER_NAME)
    if store is None:
        return None
    (line,) = ahead.cross(_family(refs, config), _setting(config), {"lam": LAMBDA_GRID})
    return store.read(line)


def ahead_files(refs, config, pinned=None):
    """The answers computed ahead around ``config``'s setting (:mod:`dashboard.ahead`):
    this session now waits for them.  Returns ``(family, files)``; ``files`` is empty where
    nothing can be computed ahead."""
    family = _family(refs, config)
    store = ahead.get(STATIC_DIR / ahead.FOLDER_NAME)
    if store is None:
        return family, []
    pools_held = [pools.pool_of(ref) for ref in refs]
    params, fit_on = config.params, config.fit_on

    def compute(changes):
        results = comparison.compare_many(pools_held, fit_on, params=params.replace(**changes))
        return explorer_answer.answer(results, fit_on, pinned)

    session = st.session_state.setdefault("_ahead_session", uuid.uuid4().hex)
    return family, store.want(session, ahead.cross(family, _setting(config), GRIDS), compute)


@st.cache_resource(max_entries=FIGURE_CACHE_ENTRIES, show_spinner=False, hash_funcs=HASH_FUNCS)
def _iterations_figure(ref, params, fit_on, splits, _result):
    sol, p = _result.solution, params
    thresholds = [solver.line15_thresholds(r.weights, p.beta, p.gamma, p.eps, p.threshold)[1]
                  for r in sol.history]
    return plots.scoped(plots.weights_over_iterations(sol.history, thresholds,
                                                      _result.member_accuracy),
                        explorer_answer.first_split(splits))


# A resource, not data (as _compare_splits): ten splits' weights at every λ are only read,
# and st.cache_data would pickle them at every call.
# Keyed without λ: a path holds every λ of the grid.
@st.cache_resource(max_entries=PATH_CACHE_ENTRIES, show_spinner=False,
                   hash_funcs=HASH_FUNCS_BUT_LAM)
def _lambda_path(refs, params, fit_on):
    return comparison.lambda_paths([pools.pool_of(ref) for ref in refs], LAMBDA_GRID, fit_on,
                                   params=params)


def lambda_paths(refs, config):
    """SDWEC at every λ of the sidebar's grid on every split of ``refs``, the other
    parameters ``config``'s (cached per pools and parameters other than λ)."""
    refs = tuple(refs)
    page_pools.get_pools(list(refs))  # one bar over the untrained ones ("split i of r")
    return _lambda_path(refs, config.params, config.fit_on)


def iterations_figure(ref, config, result):
    """The weights-across-iterations figure with its frames (cached per configuration)."""
    return _iterations_figure(ref, config.params, config.fit_on, config.splits, result)


@st.cache_data(max_entries=TIMING_CACHE_ENTRIES, show_spinner=False, hash_funcs=HASH_FUNCS)
def _measure(ref, chosen, _weights):
    p = pools.pool_of(ref)
    return timing.measure(p.estimators, _weights, p.X_test, p.classes, p.prior)


def _support(weights):
    weights = np.asarray(weights, dtype=float)
    return tuple((int(i), float(weights[i])) for i in np.flatnonzero(weights))


def request_timing(ref, weights):
    """Button callback: measure the prediction time of ``weights`` on this run."""
    st.session_state.setdefault("_timings", set()).add((ref.key, _support(weights)))


def timing_requested(ref, weights):
    """Whether this session asked for the prediction time of ``weights``
    (:func:`request_timing`)."""
    return (ref.key, _support(weights)) in st.session_state.get("_timings", set())


def measure_timing(ref, weights):
    """The measured :class:`~sdwec.timing.PredictionTiming` of ``weights``, measured once per
    support (the caller shows a spinner meanwhile)."""
    return _measure(ref, _support(weights), np.asarray(weights, dtype=float))
