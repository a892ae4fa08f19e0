"""SDWEC Explorer: entry point of the Streamlit dashboard (``streamlit run app.py``).

Only the navigation lives here; every page starts with ``dashboard.sidebar.page_setup`` which
draws the shared sidebar (the whole configuration, mirrored in the URL query string).  The page
icons are emoji: Streamlit turns a ``:material/...:`` page icon into a favicon fetched from the
internet, and the app runs offline (an emoji becomes an inline image).
"""

import streamlit as st

from dashboard.sidebar import PAGE_FILES

navigation = st.navigation([
    st.Page(PAGE_FILES["explorer"], title="Explorer", icon="🔍", default=True),
    st.Page(PAGE_FILES["frontier"], title="Frontier", icon="📈"),
    st.Page(PAGE_FILES["paper"], title="Paper", icon="📄"),
    st.Page(PAGE_FILES["how"], title="How it works", icon="🎓"),
    st.Page(PAGE_FILES["upload"], title="Your data", icon="📤"),
])
navigation.run()
