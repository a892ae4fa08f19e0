"""Your data: upload a CSV, preview its columns, choose what to exclude and how to treat
missing values, and run the Explorer on it.

The upload is read *before* the sidebar is drawn (``page_setup`` comes after it): a new file,
or new reading options, switch the sidebar to *your data* in the same run, so the sidebar,
the URL and this page always name the same dataset.
"""

from dataclasses import replace

import streamlit as st

from dashboard import memory_budget, upload_plans
from dashboard.config import USER_DATA
from dashboard.echo import literal, plain
from dashboard.explorer import show_explorer
from dashboard.guard import guard
from dashboard.sidebar import apply_config, current_config, page_setup, use_dataset
from sdwec import budget, datasets
from sdwec.errors import DataError

#: Per-file choices, forgotten when another file is uploaded.
FILE_WIDGETS = ("upload_target", "upload_exclude", "upload_missing", "upload_choice",
                "upload_confirmed", "upload_sample")
PREVIEW_HEADINGS = {"column": "Column", "role": "Role", "kind": "Kind", "missing": "Missing",
                    "distinct": "Distinct values", "likely_id": "Likely ID"}


def _plural(count, word):
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _missing_choices(preview):
    """The radio's labels: what each choice does to this file, before it runs."""
    dropped = preview.rows_dropped
    drop = (f"drop rows: removes {dropped:,} of {_plural(preview.n_rows, 'row')}" if dropped
            else "drop rows: no row has a missing value")
    cells = preview.cells_imputed
    impute = (f"impute: fills {_plural(sum(cells.values()), 'cell')} in "
              f"{_plural(len(cells), 'column')}" if cells else "impute: no cell to fill")
    if preview.rows_without_target:
        impute += (f"; {_plural(preview.rows_without_target, 'row')} without a target "
                   "value are dropped either way")
    return {"drop": drop, "impute": impute}


def _forget_exclusions():
    """A new target changes the feature columns: propose the likely IDs afresh."""
    st.session_state.pop("upload_exclude", None)


def _read(uploaded):
    """The preview and the options widgets, then the Dataset they make (or ``None``)."""
    data = uploaded.getvalue()
    sample = None
    lines = datasets.count_lines(data)
    if lines > datasets.MAX_ROWS + 1:
        st.warning(f"This file has about {lines:,} lines; this server reads at most "
                   f"{datasets.MAX_ROWS:,} rows of one upload, so that its memory stays "
                   f"within {budget.MEMORY_BUDGET_BYTES // 2**30} GiB.")
        if not st.checkbox(f"Read a random sample of {datasets.MAX_ROWS:,} rows instead "
                           "(seed 0; the description will say so)", key="upload_sample"):
            return None
        sample = datasets.MAX_ROWS
    # A browser still showing the previous file's page can send the target chosen there,
    # which Streamlit hands back even though this file has no such column.  The file's own
    # default is set in the widget's state, not only proposed: a value set there is sent to
    # the browser, which otherwise went on showing the previous file's column.
    default = upload_plans.upload_preview(data, None, sample, uploaded.name)
    names = default.column_names
    if st.session_state.get("upload_target") not in names:
        st.session_state["upload_target"] = default.target
    left, right = st.columns(2)
    target = left.selectbox("Target column", names,
                            key="upload_target", on_change=_forget_exclusions,
                            help="The column holding the class labels (default: the last).")
    task = right.radio("Task", ["auto", "binary", "multiclass"], horizontal=True,
                       key="upload_task",
                       help="auto: binary for two classes, multi-class otherwise.")
    preview = upload_plans.upload_preview(data, target, sample, uploaded.name)
    # The table shows each column's role after the exclusions chosen under it.
    table = st.empty()
    table.dataframe(preview.columns.rename(columns=PREVIEW_HEADINGS), hide_index=True)
    features = [c for c in names if c != target]
    likely = preview.likely_ids
    # Never propose to exclude every feature (e.g. two unique integer columns).
    proposed = likely if len(likely) < len(features) else []
    # Set in the widget's state, as the target is: proposed only as a default, the box in
    # the browser went on showing the previous file's (empty) choice, and an edit there
    # sent it back, putting a likely ID among the features.
    kept = st.session_state.get("upload_exclude")
    if kept is None or not set(kept) <= set(features):
        st.session_state["upload_exclude"] = proposed
    exclude = st.multiselect(
        "Columns to exclude", features,
        key="upload_exclude",
        help="Columns not used as features. Proposed: likely IDs, columns with a different "
             "text, or integers numbered in order, in every row: they let the trees "
             "memorise rows instead of learning.")
    if likely:
        why = ("proposed for exclusion" if proposed
               else "not excluded, since no feature would be left")
        st.caption(f"Likely IDs (a different value in every row): "
                   f"{', '.join(map(literal, likely))}; "
                   f"{why}.")
    preview = preview.with_exclude(exclude)
    table.dataframe(preview.columns.rename(columns=PREVIEW_HEADINGS), hide_index=True)
    choices = _missing_choices(preview)
    missing = st.radio("Missing values", list(choices), format_func=choices.get,
                       key="upload_missing",
                       help="Impute: the median of a numeric column, the most frequent value "
                            "of a text column (scikit-learn's SimpleImputer). A missing "
                            "target is never imputed.")
    before = upload_plans.user_dataset()
    key, dataset = upload_plans.read_upload(data, uploaded.name, target, task, exclude, missing,
                                        sample)
    if before is None or before[0] != key:
        use_dataset(USER_DATA, "auto")  # a new file or new options: use it everywhere
    # The file's names and labels are in it: shown as they are, never as formatting.
    st.success(plain(dataset.description))
    if len(dataset.feature_names) <= 60:
        st.caption("Features: " + plain(", ".join(dataset.feature_names)))
    return dataset


def _mib(n_bytes):
    return f"{n_bytes / 2**20:,.0f} MiB" if n_bytes < 2**30 else f"{n_bytes / 2**30:.1f} GiB"


def _cost(estimate):
    return (f"roughly {estimate.wait}, memory for training at most about "
            f"{_mib(estimate.peak_bytes)}")


def _to_train(plan):
    """How many of the splits' pools train now and what they cost: the figure of the
    sidebar's note and of the progress bar (the page's other estimates are one pool's).
    Every split counts: a seed moved by one, or more splits, train new pools although the
    first split's is on disk."""
    r, n = plan.splits, plan.untrained
    if n == r:
        return (f"Each of the sidebar's {r} splits has its own pool: roughly "
                f"{plan.chosen.wait_for(r)} for all {r}.")
    return (f"Each of the sidebar's {r} splits has its own pool; {r - n} of them "
            f"{'is' if r - n == 1 else 'are'} on disk already, so {n} "
            f"{'trains' if n == 1 else 'train'} now: roughly {plan.chosen.wait_for(n)}.")


def _choose(key):
    st.session_state["upload_choice"] = st.session_state[key]


def _fewer_trees(n_trees):
    st.session_state["upload_choice"] = "full"
    apply_config(replace(current_config(), n_trees=n_trees))


def _confirm(key):
    st.session_state["upload_confirmed"] = key


def _nothing_to_train(plan):
    return ("The pool of this choice is on disk already"
            + (f" for each of the {plan.splits} splits" if plan.splits > 1 else "")
            + ": nothing to train.")


def _when_trained(dataset, config, slot, text):
    """Once the pools have landed in this run, ``slot`` (what said they would train) says
    ``text`` instead, or nothing; what the next run would show."""
    def landed():
        if upload_plans.upload_plan(dataset, config).cached:
            if text is None:
                slot.empty()
            else:
                slot.caption(text)
    return landed


def _plan(dataset, config):
    """Say what training the pools will cost and offer the choices; whether to go on, and
    what to call once the Explorer has run (``None``, or a callable that takes back the
    "n train now" sentence once they are trained).

    A file whose full pool fits about a minute gets a one-line estimate; a larger one the
    choices (row budget by default, full bootstraps, fewer trees), which stay on the page
    once the pool is trained, so that the other choice can be made later.  Every split's
    pool counts: a seed, splits or l move that trains new pools says how many and how long
    before they start.
    """
    plan = upload_plans.upload_plan(dataset, config)
    full, budgeted = plan.full, plan.budgeted
    n_train = full.n_train
    if budgeted is None and full.seconds[1] <= budget.TARGET_SECONDS:
        slot = st.empty()   # in every run, so that the charts below keep their places
        if plan.cached:
            return True, None
        slot.caption(f"Training the pool: {full.n_trees} trees on bootstraps of "
                     f"{n_train:,} training rows, {_cost(full)} (timed on one tree grown "
                     f"on a sample of this file just now)." +
                     (f" That is one pool. {_to_train(plan)}" if plan.splits > 1 else ""))
        return True, _when_trained(dataset, config, slot, None)
    st.subheader("Training the pool")
    st.markdown(
        f"**{full.n_trees} trees**, each on a bootstrap of all {n_train:,} training rows (the "
        f"paper's bagging), take {_cost(full)} on this 2-core machine (the time range comes "
        "from one tree grown on a sample of this file just now; the machine is shared, so "
        "it can be slower).")
    labels = {"full": f"Go on: full bootstraps ({_cost(full)})"}
    if budgeted is not None:
        st.markdown(
            f"That is more than about a minute, so **by default each tree learns from a row "
            f"budget of {budgeted.max_samples:,} rows** drawn at random from the training rows "
            f"(bagging on sub-samples, scikit-learn's `max_samples`): {_cost(budgeted)}. The "
            "validation and test rows stay whole, so every accuracy is measured on all of "
            "them. What a budget costs in accuracy was measured on NSL-KDD and synthetic "
            "data: results/upload.md.")
        labels = {"budget": f"Row budget: {budgeted.max_samples:,} rows per tree "
                            f"({_cost(budgeted)})", **labels}
    if budgeted is not None and full.peak_bytes > budget.MEMORY_BUDGET_BYTES:
        # Not offered: picking it could only end in the refusal below.
        del labels["full"]
        st.caption(f"Full bootstraps are not offered: they would need about "
                   f"{_mib(full.peak_bytes)} of memory, more than the "
                   f"{_mib(budget.MEMORY_BUDGET_BYTES)} one upload may use on this server.")
    choices = list(labels)
    choice = plan.choice if plan.choice in choices else choices[0]
    st.session_state["upload_plan"] = choice   # the widget's state goes when it is hidden
    st.radio("How to train the pool", choices, format_func=labels.get, key="upload_plan",
             on_change=_choose, args=("upload_plan",))
    if plan.fewer is not None:
        st.button(f"Fewer trees: l = {plan.fewer.n_trees} on full bootstraps "
                  f"({_cost(plan.fewer)})", on_click=_fewer_trees, args=(plan.fewer.n_trees,),
                  key="upload_fewer", help="Sets the sidebar's pool size l.")
    slot = st.empty()
    if plan.cached:
        slot.caption(_nothing_to_train(plan))
        return True, None
    if plan.splits > 1:
        slot.caption(f"The times above are one pool's. {_to_train(plan)}")
    landed = _when_trained(dataset, config, slot, _nothing_to_train(plan))
    chosen = plan.chosen
    low, high = chosen.solve_seconds
    if high > 5:
        st.caption(f"Then every solve of SDWEC (the first chart, and each move of λ) works "
                   f"on {chosen.n_val:,} validation rows and {chosen.n_trees} trees: roughly "
                   f"{budget.wait_text(low, high)} each; a row budget does not change that, "
                   "fewer trees do (a quarter of the time at half the trees).")
    if chosen.peak_bytes > budget.MEMORY_BUDGET_BYTES:
        st.error(f"This choice would need about {_mib(chosen.peak_bytes)} of memory, more "
                 f"than the {_mib(budget.MEMORY_BUDGET_BYTES)} one upload may use on this "
                 "server. Lower the pool size l in the sidebar, or upload a sample of the "
                 "rows.")
        return False, None
    # A click confirms these pools: more splits ask again.
    confirm = (plan.key, plan.splits)
    if chosen.seconds[1] <= budget.TARGET_SECONDS \
            or st.session_state.get("upload_confirmed") == confirm:
        return True, landed
    n = plan.untrained
    when = (f"roughly {chosen.wait}" if n == 1 else
            f"{n} pools: roughly {chosen.wait_for(n)} for all" if n == plan.splits else
            f"{n} of {plan.splits} pools: roughly {chosen.wait_for(n)}")
    st.button(f"Train now ({when})", type="primary",
              on_click=_confirm, args=(confirm,), key="upload_train",
              help="Training starts at once; the pools are kept on disk when done.")
    return False, None


st.title("Your data")
st.markdown(
    "Upload a CSV file with one row per example and one column per feature plus a label "
    "column. Its columns are previewed: exclude the ones that are not features (IDs, free "
    "text) and choose whether rows with missing values are dropped or the gaps imputed. "
    "The file itself stays in this session's memory; the pool trained on it is cached on "
    "this server's disk under a fingerprint of the data (so a revisit is instant). Limits: "
    f"{datasets.MAX_UPLOAD_BYTES:,} bytes ({datasets.MAX_UPLOAD_BYTES / 1e6:,.0f} MB), "
    f"{datasets.MAX_FEATURES:,} features, "
    f"{datasets.MAX_CLASSES} classes, at least {datasets.MIN_ROWS_PER_CLASS} rows per class. "
    "A gzip-compressed CSV (.csv.gz) uploads faster on a slow network; the byte limit holds "
    "for the CSV inside it.")
# The uploader shows only its HTTP client's error ("...status code 429", "Network Error"),
# never the server's sentence: so the page says what they mean.
st.caption(
    "If the uploader reports \"status code 429\", too many uploads from this browser (or "
    "this network) are under way: wait until one has finished, then upload again. "
    "\"Network Error\" means the upload stopped arriving for a while: check the connection "
    "and upload again.")
# The gzip types are listed so that a scripted client's .csv.gz passes Streamlit's own
# extension check (its generic error page); the loader reads gzip itself.
uploaded = st.file_uploader("CSV file", type=["csv", "txt", "tsv", "csv.gz", "txt.gz", "tsv.gz"],
                            key="upload_file")
dataset = None
if uploaded is not None:
    if st.session_state.get("_upload_file_id") != uploaded.file_id:
        st.session_state["_upload_file_id"] = uploaded.file_id
        for name in FILE_WIDGETS:
            st.session_state.pop(name, None)
    with guard("your data"):
        try:
            dataset = _read(uploaded)
        except memory_budget.MemoryRefused as refused:  # the server's memory, not the file
            st.warning(plain(refused))
        except DataError as refused:  # the file: other pages and the sidebar say so too
            upload_plans.note_refused(uploaded.name, refused)
            raise
        else:
            if dataset is not None:
                upload_plans.forget_refused()

config = page_setup("Your data", trains=False)  # a link never points at an upload
if config is None:
    st.stop()
if uploaded is not None and dataset is None:
    st.stop()  # the loader's message is shown above
if uploaded is None:
    earlier = upload_plans.user_dataset()
    refused = upload_plans.refused_upload()
    if earlier is None:
        # Streamlit empties the uploader when another page runs: the refused file is gone
        # from it, not from the session's story.
        if refused is not None:
            st.error(f"The file uploaded earlier in this session ({literal(refused[0])}) could "
                     f"not be read. {plain(refused[1])} Upload a corrected file above, or "
                     f"pick a shipped dataset in the sidebar.")
        elif config.dataset == USER_DATA:
            st.error("This page address points to an uploaded file, and uploads are not kept "
                     "after a reload or in a new session: upload the file again above, or "
                     "pick a shipped dataset in the sidebar.")
        else:
            st.info("No file yet. Upload one above, or pick a shipped dataset in the sidebar.")
        st.stop()
    dataset = earlier[1]
    st.info(f"{literal(dataset.name)} was uploaded earlier in this session. Upload a file "
            "above to replace it.")
    st.success(plain(dataset.description))
if config.dataset != USER_DATA:
    st.info(f"The sidebar's dataset is now **{config.dataset}**, so {literal(dataset.name)} is "
            "not in use on any page.")
    st.button("Use this file again", on_click=use_dataset, args=(USER_DATA, "auto"),
              key="upload_use_again",
              help="Sets the sidebar's dataset back to *your data*: this file.")
    st.stop()
with guard("the Explorer on your data"):
    go, landed = _plan(dataset, config)
    if go:
        try:
            with memory_budget.REPLICA.reserve(upload_plans.pools_memory_need(dataset, config),
                                               "bringing this file's pools into memory"):
                show_explorer(config)
        except memory_budget.MemoryRefused as refused:
            st.warning(plain(refused))
            st.stop()
        if landed is not None:
            landed()
