"""Frontier: accuracy against sparsity for an SDWEC sweep and every peer, on one pool."""

import streamlit as st

from dashboard import frontier_cache, page_pools
from dashboard.charts import plotly_chart
from dashboard.config import SECOND_SWEEPS
from dashboard.frontier_view import FIT_CSS, SWITCHES, csv_name, single_ensembles
from dashboard.frontier_view import intro as frontier_intro
from dashboard.frontier_view import views as frontier_views
from dashboard.glossary import show_glossary, term_markdown
from dashboard.guard import guard
from dashboard.sidebar import open_clicked_point, page_setup, show_config_problems
from sdwec import frontier, plots, tables

config = page_setup("Frontier")
if config is None:
    st.stop()
st.html(FIT_CSS)
st.title("Accuracy vs ensemble size")
show_config_problems()
# One row of controls, then the chart: at 1280 × 720 the chart and its legend fit under the
# title; every explanation is below the chart.  The x axis and the accuracy shown are
# switched in the page, by the buttons above the chart (frontier_view.views).
cols = st.columns([1.1, 0.85, 1.0], vertical_alignment="bottom")
front_on = cols[0].radio("Front chosen on", ["validation", "test"], horizontal=True,
                         key="frontier_front_on",
                         help="Which accuracy decides the Pareto front. Chosen on "
                              "validation, the test accuracies read off the front are an "
                              "honest held-out check; chosen on test, they flatter it.")
second = cols[1].selectbox("Second sweep", ["none", *SECOND_SWEEPS], key="frontier_second",
                           help="A second parameter swept beside λ: one colour per value.")
second = None if second == "none" else second
oob = cols[2].toggle(
    "SDWEC-OOB", key="frontier_oob",
    help="Add our variant beyond the paper (results/oob/): SDWEC fitted on the training rows' "
         "out-of-bag votes stacked with the validation rows, its trees voting equally, "
         "beside reduce-error run on the same votes. Slower on large pools (it fits on "
         "every training row).")

with guard("the frontier"):
    refs = page_pools.pool_refs(config)
    # One split: its accuracies get the binomial interval over its rows.
    rows = frontier_cache.split_sizes(refs[0]) if len(refs) == 1 else {}
    sweep = frontier.over_splits(frontier_cache.frontier_sweeps(refs, config, second), **rows)
    peers = frontier.over_splits(frontier_cache.frontier_peers_over(refs, oob), **rows)
    front_column = "val_accuracy" if front_on == "validation" else "test_accuracy"
    front = frontier.pareto(sweep, accuracy=front_column)
    figure, shown = frontier_views(sweep, front, peers, config, second, front_column)
    # Drawn in place (dashboard.charts): the same chart receives each new figure, so what
    # the teacher hid or showed in the legend stays (the figure's uirevision); a click on an
    # SDWEC point opens the Explorer with its parameters at once; the x axis, the accuracy
    # and the cross at the sidebar's λ change in the page.
    plotly_chart(figure, key="frontier_chart", on_click=open_clicked_point("frontier_chart"),
                 views=shown, switches=SWITCHES)
    if frontier.drawable(sweep).empty:
        st.warning(f"No SDWEC point to draw: at every λ of the grid every split keeps no "
                   f"tree with the threshold rule *{config.threshold}* (its threshold, set by "
                   f"β, γ and ε, cuts every weight; on noisy data the paper's rule removes "
                   f"almost every tree at any λ). Try the threshold rule *none* or a smaller "
                   f"ε in the sidebar; the peers are drawn as usual.")
    else:
        st.caption("Click an SDWEC point to open it in the Explorer.")
    frontier_cache.compute_ahead(refs, config, second, oob)
    if front_on == "test":
        st.warning("The front is chosen on the **test** split: it then keeps the settings "
                   "that happened to do well on these few test rows, so the test accuracies "
                   "read off it flatter them; on new data they would do worse. Chosen on "
                   "validation, the front's **test** accuracies are an honest held-out check. "
                   "Its validation accuracies are not: SDWEC's weights were fitted on those "
                   "rows (it often scores 1.000 there at many λ), so validation accuracy "
                   "flatters SDWEC and every method fitted on it.")
    st.markdown(frontier_intro(second, len(refs)))
    # On its own row: in a quarter-width column its label was cut to "What are these meth…"
    # at 1280 px.
    show_glossary("What are these methods, and the Pareto front?", terms=("Pareto front",))
    first = refs[0]
    st.caption(frontier_cache.frontier_rows_note(first, len(refs), second))
    st.download_button("Every point of this chart (CSV)",
                       frontier_cache.frontier_csv(sweep, peers), key="frontier_csv",
                       file_name=csv_name(first.label), mime="text/csv",
                       on_click="ignore", icon=":material/download:")
    st.subheader("SDWEC's Pareto front")
    st.caption(term_markdown("Pareto front"))
    st.dataframe(tables.for_people(front, ["params", "n_selected", "sparsity", "val_accuracy",
                                           "test_accuracy"]), hide_index=True)
    st.caption("Every SDWEC setting's weights were fitted on the validation rows, so its "
               "validation accuracy is in-sample and flatters it; read the test column. "
               "A setting where any split keeps no tree is never on the front.")
    st.subheader("Single ensembles")
    summary = peers[peers["method"].isin(plots.PEER_POINTS)]
    shown, caption = single_ensembles(summary)
    st.dataframe(shown, hide_index=True)
    st.caption(caption)
    st.caption("Curves (one row per ensemble size or α) are in the chart and the CSV; random "
               "subsets are the mean of 10 seeded draws per size.")
