"""The SDWEC Explorer dashboard (Streamlit): everything the pages share.

``config`` (the configuration and its URL round trip, no Streamlit), ``sidebar`` (the shared
sidebar and page set-up), ``guard`` (errors shown, never a traceback), the pools a page uses
(``pools``, ``page_pools``) and their time estimates (``estimates``), one cache module per
page (``explorer_cache``, ``frontier_cache``, ``paper_cache``), and the views that draw
(``explorer``, ``progress``, ``training_panel``, ...); docs/architecture.md lists them all.
The pages under ``pages/`` read widgets, call these and the :mod:`sdwec` library, and draw.
"""
