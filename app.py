"""SDWEC Explorer: entry point of the Streamlit dashboard (``streamlit run app.py``).

Draws the shared sidebar (the whole configuration, mirrored in the URL query string) and
hands over to the page chosen in the navigation.
"""

import streamlit as st

from sdwec import dashboard

st.set_page_config(page_title="SDWEC Explorer", page_icon="🌲", layout="wide")

PAGES = {
    "explorer": st.Page("pages/explorer.py", title="Explorer", icon="🔎", default=True),
    "frontier": st.Page("pages/frontier.py", title="Frontier", icon="📈"),
    "paper": st.Page("pages/paper.py", title="Paper", icon="📄"),
    "how": st.Page("pages/how_it_works.py", title="How it works", icon="🎓"),
    "upload": st.Page("pages/your_data.py", title="Your data", icon="📤"),
}

navigation = st.navigation(list(PAGES.values()))
with dashboard.guard("the sidebar"):
    dashboard.sidebar()
    target = dashboard.pop_page_request()
    if target is not None:
        st.switch_page(PAGES[target])
navigation.run()
