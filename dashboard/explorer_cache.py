"""The Explorer's computations, cached: SDWEC beside the baselines on one pool or on every
split at once, the figures of a configuration, the λ scrubber's paths and the measured
prediction times.  Every cache is keyed on :class:`~dashboard.pools.PoolRef`, the
configuration's :class:`~sdwec.params.SolverParams` (``Config.params``, passed on to the
solver as it is) and what SDWEC is fitted on, and bounded (``max_entries``), so memory stays flat in a
long session.  Draws nothing but the pools' progress bar (:mod:`dashboard.page_pools`).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from dashboard import page_pools, pools
from dashboard.config import LAMBDA_GRID
from dashboard.pools import HASH_FUNCS, HASH_FUNCS_BUT_LAM
from sdwec import comparison, plots, solver, timing, voting

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
def _explorer_figures(ref, params, fit_on, splits, pin, _result, _summary, _pinned):
    """The Explorer's accuracy and weights figures and the trees' accuracy strip under the
    weights for one configuration (shared, read-only)."""
    sol = _result.solution
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
    return _explorer_figures(ref, config.params, config.fit_on, config.splits, config.pin,
                             result, summary, pinned)


@st.cache_resource(max_entries=FIGURE_CACHE_ENTRIES, show_spinner=False, hash_funcs=HASH_FUNCS)
def _convergence_figure(ref, params, fit_on, log, splits, _result):
    return plots.scoped(plots.convergence(_result.solution.history, log_y=log),
                        first_split(splits))


def convergence_figure(ref, config, result, log):
    """The cost-per-iteration figure (cached per configuration and axis scale)."""
    return _convergence_figure(ref, config.params, config.fit_on, bool(log), config.splits,
                               result)


@st.cache_resource(max_entries=FIGURE_CACHE_ENTRIES, show_spinner=False, hash_funcs=HASH_FUNCS)
def _iterations_figure(ref, params, fit_on, splits, _result):
    sol, p = _result.solution, params
    thresholds = [solver.line15_thresholds(r.weights, p.beta, p.gamma, p.eps, p.threshold)[1]
                  for r in sol.history]
    return plots.scoped(plots.weights_over_iterations(sol.history, thresholds,
                                                      _result.member_accuracy),
                        first_split(splits))


# A resource, not data (as _compare_splits): ten splits' weights at every λ are only read,
# and st.cache_data would pickle them at every call.
# Keyed without λ: a path holds every λ of the grid.
@st.cache_resource(max_entries=PATH_CACHE_ENTRIES, show_spinner=False,
                   hash_funcs=HASH_FUNCS_BUT_LAM)
def _lambda_path(refs, params, fit_on):
    return comparison.lambda_paths([pools.pool_of(ref) for ref in refs], LAMBDA_GRID, fit_on,
                                   params=params)


# Keyed on the sidebar's λ apart (the frame it starts at) and the parameters without it.
@st.cache_resource(max_entries=FIGURE_CACHE_ENTRIES, show_spinner=False,
                   hash_funcs=HASH_FUNCS_BUT_LAM)
def _scrubber_figure(refs, params, fit_on, lam):
    return plots.lambda_scrubber(_lambda_path(refs, params, fit_on), lam)


def scrubber_figure(refs, config):
    """The λ scrubber: SDWEC at every λ of the sidebar's grid on every split of ``refs``
    (the page's splits) as one figure with frames, each the mean over the splits as the
    headline reports it (the paths are cached per pools and parameters other than λ; the
    figure starts at the sidebar's λ, a value of the grid)."""
    refs = tuple(refs)
    page_pools.get_pools(list(refs))  # one bar over the untrained ones ("split i of r")
    return _scrubber_figure(refs, config.params, config.fit_on, config.lam)


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
