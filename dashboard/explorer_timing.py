"""A view: the Explorer's prediction-time section, the paper's formula for the pruned
ensemble's speed-up and, on request, a paired measurement on this server with the reasons
the two differ."""

from __future__ import annotations

import numpy as np
import streamlit as st

from dashboard import explorer_cache
from dashboard.charts import plotly_chart
from sdwec import plots
from sdwec.formatting import significant


def measured_note(measured, splits=1):
    """Markdown: a paired measurement (:class:`sdwec.timing.PredictionTiming` of a pruned
    ensemble) against the paper's formula, and why they differ when they do; measured on
    the first of ``splits`` splits."""
    low, high = measured.speedup_interval
    whose = "the first split's" if splits > 1 else "the"
    rows = (f"{whose} {measured.n_given:,} test rows repeated to {measured.n_rows:,}"
            if measured.repeated else f"{whose} {measured.n_rows:,} test rows")
    text = (f"**Measured here: ×{significant(measured.speedup)}** (interquartile range "
            f"×{significant(low)}–×{significant(high)} over {measured.repeats} paired runs "
            f"on {rows}; each run is every kept tree's prediction plus the vote).")
    side = measured.against_formula
    if side == "below":
        text += (" The measurement falls short of the formula: the formula counts only the "
                 "trees, while each run also pays for work that does not shrink with them "
                 "(setting up the call, combining the votes row by row).")
    elif side == "above":
        # Node counts matter only when the kept trees are clearly smaller (a walk is
        # ~log(nodes) deep): a few per cent fewer nodes do not explain a larger ratio.
        smaller = measured.pruned_nodes < 0.8 * measured.full_nodes
        text += (f" The measurement beats the formula, which counts every tree alike: here "
                 f"each of the {measured.n_full} trees costs more than each kept one, most "
                 f"likely because the full ensemble's table of predictions "
                 f"({measured.n_rows:,} rows × {measured.n_full} trees, filled one tree at a "
                 f"time, then voted) outgrows the processor's caches, while the kept trees' "
                 f"({measured.n_pruned} columns) fits"
                 + (f"; the kept trees are also smaller "
                    f"({significant(measured.pruned_nodes)} nodes on average against "
                    f"{significant(measured.full_nodes)})" if smaller else "")
                 + ".")
    elif side == "agrees":
        text += " The formula lies inside the measured range: they agree."
    return text


def timing_section(ref, weights, splits=1):
    """The paper's formula for the prediction time of the ensemble voting with ``weights``
    (the first of ``splits`` splits'), and a measurement on request."""
    measured = None
    if explorer_cache.timing_requested(ref, weights):
        with st.spinner("Timing the full and the pruned ensemble…"):
            measured = explorer_cache.measure_timing(ref, weights)
    l, kept = len(weights), int(np.count_nonzero(weights))
    st.subheader("Prediction time")
    if kept == 0:
        st.markdown("The ensemble **abstains** (no tree kept): it predicts a constant, so "
                    "there is nothing to time.")
        return
    if kept == l:
        if np.all(weights == weights[0]):
            st.markdown(f"Every tree is kept with one equal vote: this is bagging's ensemble "
                        f"of {l} trees, so it predicts in the same time (ratio 1).")
        else:
            st.markdown(f"Every tree is kept, so the ensemble evaluates **the same {l} trees** "
                        f"as bagging and predicts in the same time (ratio 1). It is not "
                        f"bagging's ensemble: its trees vote with their SDWEC weights instead "
                        f"of one vote each, so its predictions and accuracy can differ (see "
                        f"the numbers above).")
        return
    formula = l / kept
    which = " of the first split" if splits > 1 else ""
    text = (f"The paper's formula, (1 − sparsity)·T(l), says the {kept} kept trees{which} "
            f"predict **×{significant(formula)}** faster than all {l}.")
    if measured is None:
        st.markdown(text + " Measuring it on this server takes a moment:")
        st.button("Measure prediction time", key="explorer_measure",
                  on_click=explorer_cache.request_timing, args=(ref, weights))
        return
    text += " " + measured_note(measured, splits)
    chart, words = st.columns([3, 2])
    with chart:
        plotly_chart(plots.prediction_time(measured), key="explorer_timing")
    words.markdown(text)
