"""SDWEC Explorer: entry point of the Streamlit dashboard (``streamlit run app.py``).

Only the navigation lives here; every page starts with ``dashboard.sidebar.page_setup`` which draws
the shared sidebar (the whole configuration, mirrored in the URL query string).
"""

import streamlit as st

from dashboard.sidebar import PAGE_FILES

navigation = st.navigation([
    st.Page(PAGE_FILES["explorer"], title="Explorer", icon=":material/search:", default=True),
    st.Page(PAGE_FILES["frontier"], title="Frontier", icon=":material/show_chart:"),
    st.Page(PAGE_FILES["paper"], title="Paper", icon=":material/description:"),
    st.Page(PAGE_FILES["how"], title="How it works", icon=":material/school:"),
    st.Page(PAGE_FILES["upload"], title="Your data", icon=":material/upload_file:"),
])
navigation.run()
