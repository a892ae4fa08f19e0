"""Explorer: SDWEC on one pool, beside bagging, WMV and a single tree."""

import streamlit as st

from dashboard.explorer import show_explorer
from dashboard.guard import guard
from dashboard.sidebar import page_setup, show_config_problems

config = page_setup("Explorer")
if config is None:
    st.stop()
st.title("SDWEC Explorer")
st.caption("Move λ, β, γ, ε in the sidebar and watch how many trees SDWEC keeps and what it "
           "costs in accuracy.")
show_config_problems()
with guard("the Explorer"):
    show_explorer(config)
