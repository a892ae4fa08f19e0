"""Frontier: accuracy against sparsity for an SDWEC sweep and every peer, on one pool."""

import streamlit as st

from dashboard import services
from dashboard.config import SECOND_SWEEPS, point_config, point_values
from dashboard.guard import guard
from dashboard.sidebar import page_setup, send_to_explorer, show_config_problems
from sdwec import frontier, plots

config = page_setup("Frontier")
if config is None:
    st.stop()
st.title("Accuracy vs sparsity")
st.markdown(
    "Each blue point is SDWEC at one λ of the sidebar's grid (β, γ, ε, k fixed as in the "
    "sidebar); the red staircase is its Pareto front; open circles are **SDWEC-select**, the "
    "same trees voting with equal weights. Beside it, on the same pool and split: "
    "bagging, WMV, QFWEC, NNLS stacking and a single tree as points; reduce-error and "
    "orientation ordering, the positive Lasso path and **random subsets of each size** (the "
    "sanity baseline any pruning method should beat) as curves. Hover for the parameters; "
    "click an SDWEC point to open it in the Explorer.")
show_config_problems()
left, right = st.columns(2)
axis = left.radio("Accuracy on", ["test", "validation"], horizontal=True, key="frontier_axis",
                  help="Validation is where the weights were fitted; test is held out.")
second = right.selectbox("Second swept parameter", ["none", *SECOND_SWEEPS],
                         key="frontier_second")
second = None if second == "none" else second
column = "test_accuracy" if axis == "test" else "val_accuracy"

with guard("the frontier"):
    ref = services.pool_ref(config)
    sweep = services.frontier_sweep(ref, config, second)
    peers = services.frontier_peers(ref)
    front = frontier.pareto(sweep, accuracy=column)
    name = None if second is None else SECOND_SWEEPS[second][0]
    event = st.plotly_chart(plots.frontier(sweep, front, peers, column, second=name),
                            key="frontier_chart", on_select="rerun", selection_mode="points")
    picked = [p for p in event.selection.points
              if len(point_values(p.get("customdata"))) == len(plots.SWEEP_CUSTOMDATA)]
    if picked:
        target = point_config(config, picked[-1]["customdata"])
        st.button(f"Open λ={target.lam:g}, β={target.beta:g}, γ={target.gamma:g}, "
                  f"ε={target.eps:g} in the Explorer", type="primary",
                  on_click=send_to_explorer, args=(target,), key="frontier_send")
    else:
        st.caption("Click an SDWEC point to send its parameters to the Explorer.")
    st.subheader("SDWEC's Pareto front")
    st.dataframe(front[["params", "n_selected", "sparsity", "val_accuracy", "test_accuracy"]],
                 hide_index=True)
    st.subheader("Peers")
    summary = peers[peers["method"].isin(plots.PEER_POINTS)]
    st.dataframe(summary[["method", "n_selected", "sparsity", "val_accuracy", "test_accuracy"]],
                 hide_index=True)
    st.caption("Curves (one row per ensemble size or α) are in the chart; random subsets "
               "are the mean of 10 seeded draws per size.")
