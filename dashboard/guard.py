"""The error guard every page draws inside: a clear message, never a traceback."""

from __future__ import annotations

import contextlib
import logging

import streamlit as st

from dashboard.echo import plain
from sdwec.errors import DataError

LOG = logging.getLogger("dashboard")


@contextlib.contextmanager
def guard(what="this page"):
    """Show any exception raised inside as ``st.error`` with what to do, never a traceback.

    ``DataError`` and ``ValueError`` carry messages meant for the user and are shown as
    they are, as plain text (they may quote a file's names and values, never formatting);
    anything else is logged on the server and summarised.  Streamlit's own
    control-flow exceptions (rerun, stop, page switch) derive from ``BaseException`` and
    pass through untouched.
    """
    try:
        yield
    except DataError as exc:
        text = plain(exc)
        st.error(f"The data cannot be used. {text[:1].upper()}{text[1:]}")
    except ValueError as exc:
        st.error(f"{plain(exc)}\n\nChange the setting named above (or pick a preset) and try "
                 "again.")
    except MemoryError:
        st.error(f"Not enough memory to compute {what}. Choose a smaller pool size l or a "
                 "smaller dataset.")
    except Exception as exc:  # noqa: BLE001 -- the page must never show a traceback
        LOG.exception("dashboard failure in %s", what)
        st.error(f"Something went wrong while computing {what} "
                 f"({plain(f'{type(exc).__name__}: {exc}')}). "
                 "Try another setting or reload the page; the details are in the server log.")
