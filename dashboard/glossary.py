"""The methods glossary: one line per method of the registry, for every page that names them."""

from __future__ import annotations

import streamlit as st

from sdwec import methods

_SOURCE = {"paper": "in the paper", "peer": "peer from the literature", "ours": "ours"}


def glossary_markdown(names=None):
    """Markdown lines ``**label** (source): what it optimises. *Reference.*`` per method."""
    chosen = methods.registered() if names is None else [methods.get(n) for n in names]
    return "\n".join(f"- **{m.label}** ({_SOURCE.get(m.source, m.source)}): {m.description}. "
                     f"*{m.reference}.*" for m in chosen)


def show_glossary(label="What are these methods?", names=None):
    """A popover with one line per method (all, or ``names``)."""
    with st.popover(label, icon=":material/help:"):
        st.markdown(glossary_markdown(names))
