"""SDWEC Explorer: entry point of the Streamlit dashboard (``streamlit run app.py``).

Only the navigation lives here; every page starts with ``dashboard.sidebar.page_setup`` which
draws the shared sidebar (the whole configuration, mirrored in the URL query string).  The
pages have no icons: Streamlit turns a ``:material/...:`` page icon into a favicon fetched from
the internet (the app runs offline; its favicon is a local file set by ``page_setup``), and
emoji need a colour-emoji font that headless Chromium on Debian lacks.
"""

import streamlit as st

from dashboard import downloads, uploads
from dashboard.sidebar import PAGE_FILES, PAGE_TITLES
from sdwec import methods

# Installed at server start by dashboard.launch; here for a plain `streamlit run app.py`
# (idempotent): one pending upload per session, a built download kept until the next run.
uploads.install()
downloads.install()
# Methods of the user's own modules ($SDWEC_METHODS; imported once per process).
try:
    methods.load_plugins()
except ImportError as exc:
    st.error(f"{exc} The pages run without it.")

navigation = st.navigation([st.Page(path, title=PAGE_TITLES[name], default=name == "explorer")
                            for name, path in PAGE_FILES.items()])
navigation.run()
