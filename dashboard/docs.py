"""Sections of the project's docs/ shown in the app, so a page's "see docs/..." is one click."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

#: The repository's docs/ folder (the app runs from a checkout; see docs/deploy.md).
DOCS = Path(__file__).resolve().parent.parent / "docs"


def doc_section(file_name, heading, docs=DOCS):
    """The Markdown body of the ``## heading`` section of ``docs/file_name``.

    Parameters
    ----------
    file_name : str
        A file in ``docs``, e.g. ``"algorithm.md"``.
    heading : str
        The section's level-2 heading, without the ``## ``.
    docs : Path, default DOCS

    Returns
    -------
    str or None
        The lines after the heading up to the next level-1 or level-2 heading, stripped;
        ``None`` when the file or the section is missing.
    """
    try:
        lines = (Path(docs) / file_name).read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    body, inside = [], False
    for line in lines:
        if line.startswith("## ") or line.startswith("# "):
            if inside:
                break
            inside = line[3:].strip() == heading
            continue
        if inside:
            body.append(line)
    return "\n".join(body).strip() if inside else None


def show_doc_section(file_name, heading, label=None):
    """An expander holding that section, titled with where it comes from."""
    text = doc_section(file_name, heading)
    with st.expander(label or f"{heading} (docs/{file_name})", icon=":material/menu_book:"):
        if text is None:
            st.markdown(f"The section *{heading}* of `docs/{file_name}` is not in this "
                        f"installation; read it in the project's repository.")
        else:
            st.markdown(text)
