"""The Explorer's floor, for ``python -m benchmarks.browser --floor``: the same sidebar, the same
computation and the same in-place charts as the Explorer, and nothing else (no title,
numbers, notes, toggles or downloads).

Timed beside the Explorer in the same run, it shows what a slider move costs when a page holds
only what the Explorer cannot do without: the rerun of the Explorer's view (a fragment when
served by ``dashboard.launch``, as the benchmark serves it), the cached solve and four in-place
charts (a move redraws three: the trees' accuracies stay).  No trimming of the
Explorer's other content can make it faster than this.

Served with the checkout as the working directory and on ``PYTHONPATH`` (its own directory is
what Streamlit puts on ``sys.path``), and with its own ``static/`` for Plotly.js: Streamlit
serves the ``static`` folder beside the main script.
"""

from pathlib import Path

import streamlit as st

from dashboard import explorer_cache, page_pools
from dashboard.charts import ensure_plotly_js, plotly_chart
from dashboard.sidebar import page_setup
from sdwec import comparison

ensure_plotly_js(Path(__file__).resolve().parent / "static")


def floor(config):
    """The charts of a slider move, drawn as the Explorer draws its view (``live``)."""
    ref = page_pools.pool_refs(config)[0]
    result = explorer_cache.compare(ref, config)
    methods_fig, weights_fig, strip_fig = explorer_cache.explorer_figures(
        ref, config, result, comparison.over_splits([result]))
    left, right = st.columns(2)
    with left:
        plotly_chart(methods_fig, key="explorer_methods")
    with right:
        plotly_chart(explorer_cache.convergence_figure(ref, config, result, False),
                     key="explorer_convergence")
    with st.container(gap=None):
        plotly_chart(weights_fig, key="explorer_weights")
        plotly_chart(strip_fig, key="explorer_tree_accuracy")


# No page menu: this script runs without the dashboard's pages to link to.
page_setup("Floor", live=floor, menu=False)
