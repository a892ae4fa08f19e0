"""Back to the top of the page when the dataset changes.

A reader scrolled down to the Frontier's tables who picks another dataset in the sidebar
would otherwise stay far down a page whose top (the headline, the first chart) now shows
numbers of another dataset. A ``st.components.v2`` component (public API) drawn in the
sidebar remembers the dataset it last saw and, when it changes, scrolls every scrolled
container of the page back to its top; it finds them by their computed style, not by
Streamlit's internal class names or test ids.
"""

from __future__ import annotations

import streamlit as st

_JS = """
export default function ({ data, parentElement }) {
  const seen = parentElement.__sdwecDataset;
  parentElement.__sdwecDataset = data.dataset;
  if (seen === undefined || seen === data.dataset) return;
  const scrolled = [document.scrollingElement, ...document.querySelectorAll('*')].filter(
    (el) => el && el.scrollTop > 0 && /(auto|scroll)/.test(getComputedStyle(el).overflowY));
  for (const el of scrolled) el.scrollTo({top: 0});
}
"""

#: The component's name, by which the tests find it.
COMPONENT = "sdwec_scroll_top"
_component = st.components.v2.component(COMPONENT, js=_JS, isolate_styles=False)


def top_on_dataset_change(dataset):
    """Draw the (invisible) component in the sidebar: a change of ``dataset`` since the
    last run scrolls the page back to its top."""
    with st.sidebar:
        _component(key="scroll_top", data={"dataset": str(dataset)}, height=0)
