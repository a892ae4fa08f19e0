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

uploads.install()  # one pending upload per session, dropped unless a widget fetches it
downloads.install()  # a file built on a click stays until its page's next run

navigation = st.navigation([st.Page(path, title=PAGE_TITLES[name], default=name == "explorer")
                            for name, path in PAGE_FILES.items()])
navigation.run()
