"""Your data: upload a CSV, choose the target column, and run the Explorer on it."""

from dataclasses import replace

import streamlit as st

from dashboard import services
from dashboard.config import USER_DATA
from dashboard.explorer import show_explorer
from dashboard.guard import guard
from dashboard.sidebar import page_setup, use_dataset
from sdwec import datasets

config = page_setup("Your data")
if config is None:
    st.stop()
st.title("Your data")
st.markdown(
    "Upload a CSV file with one row per example and one column per feature plus a label "
    "column (the last one unless you choose another). Text columns are encoded as "
    "categories; rows with missing values are dropped. The file itself stays in this "
    "session's memory; the pool trained on it is cached on this server's disk under a "
    "fingerprint of the data (so a revisit is instant). Limits: {datasets.MAX_UPLOAD_BYTES // 2**20} MB, "
    f"{datasets.MAX_FEATURES:,} features, {datasets.MAX_CLASSES} classes, at least "
    f"{datasets.MIN_ROWS_PER_CLASS} rows per class.")
uploaded = st.file_uploader("CSV file", type=["csv", "txt", "tsv"], key="upload_file")
if uploaded is None:
    st.info("No file yet. Upload one above, or pick a shipped dataset in the sidebar.")
    st.stop()

left, right = st.columns(2)
target = left.text_input("Target column (empty: the last column)", key="upload_target",
                         help="The exact column name as in the header row.").strip() or None
task = right.radio("Task", ["auto", "binary", "multiclass"], horizontal=True,
                   key="upload_task",
                   help="auto: binary for two classes, multi-class otherwise.")

with guard("your data"):
    key, dataset = services.read_upload(uploaded.getvalue(), uploaded.name, target, task)
    st.success(dataset.description)
    if len(dataset.feature_names) <= 60:
        st.caption("Features: " + ", ".join(dataset.feature_names))
    if config.dataset != USER_DATA:
        st.button("Use this file on every page", on_click=use_dataset,
                  args=(USER_DATA, "auto"), key="upload_use_everywhere",
                  help="Sets the sidebar's dataset to *your data*; the Frontier page then "
                       "sweeps this file's pool.")
    show_explorer(replace(config, dataset=USER_DATA, task="auto"))
