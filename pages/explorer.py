"""Explorer: SDWEC on one pool, beside bagging, WMV and a single tree."""

import streamlit as st

from sdwec import dashboard

config = dashboard.page_setup("Explorer")
if config is None:
    st.stop()
st.title("SDWEC Explorer")
st.caption("Move λ, β, γ, ε in the sidebar and watch how many trees SDWEC keeps and what it "
           "costs in accuracy.")
dashboard.show_config_problems()
with dashboard.guard("the Explorer"):
    dashboard.show_explorer(config)
