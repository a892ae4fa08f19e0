"""The SDWEC Explorer dashboard (Streamlit): everything the pages share.

``config`` (the configuration and its URL round trip, no Streamlit), ``sidebar`` (the shared
sidebar and page set-up), ``guard`` (errors shown, never a traceback), ``services`` (every
Streamlit cache, keyed on one pool reference), and one module per view (``explorer``).
The pages under ``pages/`` read widgets, call these and the :mod:`sdwec` library, and draw.
"""
