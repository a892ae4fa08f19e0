"""The Explorer view: SDWEC on one pool, its figures and downloads (shared by two pages)."""

from __future__ import annotations

import streamlit as st

from dashboard import services
from sdwec import export, plots


def _label_formatter(classes):
    """Binary labels print as -1/+1, any other labels as they are."""
    if set(classes) == {-1, 1}:
        return lambda label: f"{label:+d}"
    return str


def show_explorer(config):
    """Draw the Explorer for ``config`` (the Explorer and the Your-data pages)."""
    ref = services.pool_ref(config)
    result = services.compare(ref, config)
    sol = result.solution
    sdwec_row, bagging_row = result.methods[0], result.methods[1]
    l = len(sol.weights)
    cols = st.columns(4)
    cols[0].metric("Test accuracy (SDWEC)", f"{sdwec_row['test']:.4f}",
                   delta=f"{sdwec_row['test'] - bagging_row['test']:+.4f} vs bagging",
                   delta_color="normal" if sdwec_row['test'] != bagging_row['test'] else "off")
    cols[1].metric("Validation accuracy", f"{sdwec_row['validation']:.4f}",
                   help="The weights are fitted on this split.")
    cols[2].metric("Sparsity", f"{sol.sparsity:.3f}", help="1 − (non-zero weights) / l (eq. 12)")
    cols[3].metric("Classifiers used", f"{sol.n_selected} / {l}")
    fmt = _label_formatter(result.classes)
    abstain = fmt(result.abstain_label)
    if sol.n_selected == 0:
        st.warning(
            f"Every weight was thresholded to zero, so the ensemble **abstains**: it predicts "
            f"the most frequent validation class, **{abstain}**, for every row, and the "
            f"accuracies above are that constant guess's. To keep some trees, raise λ, lower "
            f"β or ε, or choose the threshold rule *none*.")
    else:
        st.caption(f"Rule for an all-zero weight vector (and for tied votes): predict the most "
                   f"frequent validation class, {abstain}. Splits: {result.n_val} validation "
                   f"and {result.n_test} test rows; classes "
                   f"{', '.join(map(fmt, result.classes))}.")
    methods_fig, convergence_fig, weights_fig = services.explorer_figures(ref, config, result)
    left, right = st.columns(2)
    left.plotly_chart(methods_fig, key="explorer_methods")
    right.plotly_chart(convergence_fig, key="explorer_convergence")
    st.plotly_chart(weights_fig, key="explorer_weights")
    timing_col, text_col = st.columns([3, 2])
    measured = services.prediction_timing(ref, sol.weights)
    timing_col.plotly_chart(plots.prediction_time(measured), key="explorer_timing")
    text_col.markdown(
        f"**Prediction time, measured on this server.** The pruned ensemble evaluates "
        f"{measured.n_pruned} of {measured.n_full} trees on the {measured.n_rows} test rows: "
        f"{1e3 * measured.pruned_seconds:.2f} ms against {1e3 * measured.full_seconds:.2f} ms "
        f"(×{measured.speedup:.1f} faster; median of {measured.repeats} runs, each tree's "
        f"prediction plus the weighted vote). The paper instead quotes the formula "
        f"(1 − sparsity)·T(l).")
    show_downloads(ref, config, result)
    return result


def model_bytes(pool, solution):
    """The pruned model of ``solution`` on ``pool`` as a joblib file (``bytes``)."""
    model = export.pruned_model(pool, solution.weights, params=solution.params,
                                solution=solution)
    return export.model_joblib(model)


def show_downloads(ref, config, result):
    """Download buttons: the weights (CSV, JSON with provenance) and the pruned model."""
    sol = result.solution
    row = result.methods[0]
    name = ref.label
    meta = dict(params=dict(sol.params, n_trees=config.n_trees, task=config.task),
                dataset=name, seed=config.seed,
                metrics={"test_accuracy": row["test"], "validation_accuracy": row["validation"],
                         "sparsity": sol.sparsity, "n_selected": sol.n_selected})
    stem = "sdwec_" + "".join(c if c.isalnum() else "_" for c in str(name)) + f"_lam{config.lam:g}"
    st.subheader("Downloads")
    cols = st.columns(3)
    cols[0].download_button("Weights (CSV)", export.weights_csv(sol.weights, **meta),
                            file_name=f"{stem}_weights.csv", mime="text/csv",
                            key="download_csv", on_click="ignore", icon=":material/table:")
    cols[1].download_button("Weights and provenance (JSON)",
                            export.weights_json(sol.weights, **meta),
                            file_name=f"{stem}_weights.json", mime="application/json",
                            key="download_json", on_click="ignore", icon=":material/data_object:")
    pool = services.get_pool(ref)
    # Built only when clicked: serialising the trees takes longer than a slider move.
    cols[2].download_button("Pruned model (joblib)", lambda: model_bytes(pool, sol),
                            file_name=f"{stem}_model.joblib",
                            mime="application/octet-stream", key="download_model",
                            on_click="ignore", icon=":material/forest:")
    st.caption("The model file holds an `SDWECClassifier` with only the selected trees: "
               "`joblib.load(path).predict(X)` with X's columns in the dataset's order "
               "(`sdwec` must be importable: `pip install .` in this project; load only files you "
               "trust).")
