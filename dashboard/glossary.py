"""The methods glossary: one line per method of the registry, for every page that names them.

A method's registry description says what it is wherever it appears in full (the Paper page,
the Frontier). A page that shows it differently says so in its own words (:data:`ON_PAGE`):
the Explorer runs SDWEC at the sidebar's one setting, not along a λ grid, and its SDWEC-OOB
keeps the trees of that setting instead of searching λ for a target size. Terms a page draws
(the Pareto front) have entries too (:data:`TERMS`).
"""

from __future__ import annotations

import streamlit as st

from sdwec import methods

_SOURCE = {"paper": "in the paper", "peer": "peer from the literature", "ours": "ours"}

#: (page, method name) -> (label, source, description) where the page shows the method its
#: own way.
ON_PAGE = {
    ("explorer", "SDWEC"): (
        "SDWEC", "paper",
        "Algorithm 1 at the sidebar's one setting of λ, β, γ, ε and k, its weights fitted "
        "on the validation split; the kept trees vote with those weights (the Frontier "
        "sweeps λ)"),
    ("explorer", "SDWEC-OOB"): (
        "SDWEC-OOB", "ours",
        "Algorithm 1 at the sidebar's setting, fitted on the training rows' out-of-bag votes "
        "stacked with the validation votes; it only chooses the trees, which then vote "
        "with equal weights (the Frontier's SDWEC-OOB instead searches λ to keep a fifth "
        "of the trees)"),
}

#: Terms the pages draw, defined where they are shown.
TERMS = {
    "Pareto front": (
        "the SDWEC settings no other setting beats on both counts: none is at least as "
        "sparse (uses as few trees or fewer) and more accurate, on the split the front is "
        "chosen on (validation by default). On that split, moving along it, fewer trees "
        "cost accuracy; a point off it is beaten by one on it. On the test split the same "
        "points need not line up: a neighbour with fewer trees can score a little higher; "
        "a difference inside the 95 % intervals beside it is no real difference. Settings "
        "where any split keeps no tree are left out"),
}


def glossary_markdown(names=None, page=None):
    """Markdown lines ``**label** (source): what it is. *Reference.*`` per method.

    Parameters
    ----------
    names : sequence of str, optional
        Method names (default: every registered method).
    page : str, optional
        The page the glossary is on (``"explorer"``): its :data:`ON_PAGE` entries replace
        the registry's label, source and description.
    """
    chosen = methods.registered() if names is None else [methods.get(n) for n in names]
    lines = []
    for m in chosen:
        label, source, description = ON_PAGE.get((page, m.name),
                                                 (m.label, m.source, m.description))
        lines.append(f"- **{label}** ({_SOURCE.get(source, source)}): {description}. "
                     f"*{m.reference}.*")
    return "\n".join(lines)


def term_markdown(term):
    """``**term**: definition.`` for a term of :data:`TERMS`."""
    return f"**{term}**: {TERMS[term]}."


def show_glossary(label="What are these methods?", names=None, page=None, terms=()):
    """A popover with one line per method (all, or ``names``), as ``page`` shows them, and
    the definitions of ``terms``."""
    with st.popover(label, icon=":material/help:"):
        st.markdown(glossary_markdown(names, page))
        for term in terms:
            st.markdown(term_markdown(term))
