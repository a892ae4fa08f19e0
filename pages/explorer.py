"""Explorer: SDWEC on one pool, beside bagging, WMV and a single tree."""

import streamlit as st

from dashboard.explorer import show_explorer
from dashboard.guard import guard
from dashboard.sidebar import page_setup, show_config_problems


def explorer(config):
    """What a slider move redraws (:func:`page_setup`'s ``live``)."""
    show_config_problems()
    with guard("the Explorer"):
        show_explorer(config)


st.title("SDWEC Explorer")
st.caption("Move λ, β, γ, ε in the sidebar and watch how many trees SDWEC keeps and what it "
           "costs in accuracy.")
page_setup("Explorer", live=explorer)
