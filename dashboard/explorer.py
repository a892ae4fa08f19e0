"""The Explorer view: SDWEC on one pool, its figures and downloads (shared by two pages)."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from dashboard import (
    explorer_answer,
    explorer_cache,
    frontier_cache,
    live,
    page_pools,
    upload_plans,
)
from dashboard.charts import plotly_chart
from dashboard.config import EPS_GRID, LAMBDA_GRID
from dashboard.docs import show_doc_section
from dashboard.explorer_pin import pin_section
from dashboard.explorer_timing import timing_section
from dashboard.glossary import show_glossary
from dashboard.pools import HASH_FUNCS
from dashboard.sidebar import apply_config, current_config
from sdwec import comparison, export, remedy, voting

# The solver's multi-class reading (sdwec.solver.MULTICLASS), said where its weights are shown.
MULTICLASS_NOTE = (" With more than two classes SDWEC asks that the true class outscore every "
                   "other class, the condition under which the weighted vote is right "
                   "(explained below). WMV's weights, log(p / (1 − p)) of each tree's "
                   "accuracy p, come from two-class theory: a tree right on fewer than half "
                   "the rows gets a negative weight, so with several classes WMV can score "
                   "below the most frequent class.")
MULTICLASS_TITLE = "More than two classes: what SDWEC asks of the weights"
MULTICLASS_EXPLAINED = """\
A weighted vote over several classes is right on a row when the true class gets more weight
than **each** other class, not when most trees are right. Say 10 trees vote on a row whose
class is A: 4 vote A, 3 vote B, 3 vote C. Only 4 of 10 trees are right, and yet A wins.

So SDWEC turns each row into one condition per rival class that some tree voted for:
weight(A) − weight(B) > 0 and weight(A) − weight(C) > 0, and asks the weights to meet them all.
Each condition is a row of +1 (trees voting A), −1 (trees voting the rival) and 0 (the
others), with target +1: Algorithm 1 runs unchanged on these rows, and λ still weighs the
data per row of the dataset. With two classes every row has one rival and this is exactly
the paper's problem.

A stricter reading, that a weighted majority of the trees be right on each row, cannot be
met when trees are right on fewer than half the rows, as on many-class tasks: it then keeps
no tree at all. The library offers it as `multiclass="correctness"`; this page uses the
reading above. The derivation: docs/algorithm.md, "More than two classes".
"""


def _rows_note(results):
    """What the splits rest on: their row counts (true for every split; stratified splits
    can differ by a row) and what one row is worth in accuracy."""
    n_val = [r.n_val for r in results]
    n_test = [r.n_test for r in results]
    splits = len(results)
    note = (f"{'This split has' if splits == 1 else 'The splits hold'} "
            f"{frontier_cache.split_rows(n_val, 'validation rows', 'accuracy points')} and "
            f"{frontier_cache.split_rows(n_test, 'test rows')}.")
    if splits == 1:
        return note + (" One split gives no spread: choose more *Splits* in the sidebar to "
                       "see it.")
    return note + (f" Numbers are means over {splits} splits with the 95 % interval of the "
                   f"mean in brackets; each chart's title says whether it shows that mean or "
                   f"split 1. " + OVERLAP_NOTE)


#: What the bracket after a headline number is.
INTERVAL_HELP = ("[lo, hi] is the 95 % interval of the mean over the splits (Student t, "
                 "kept inside what the number can be); with one split, an accuracy's exact "
                 "binomial interval over its rows.")

#: The same for a count of trees or a sparsity (one split's is exact: no interval).
COUNT_HELP = ("[lo, hi] is the 95 % interval of the mean over the splits (Student t, kept "
              "inside what the number can be).")

#: Why the splits' counts and spread are not those of independent samples.
OVERLAP_NOTE = ("The splits reuse the dataset's rows, so they are not independent: spread "
                "and p are optimistic.")


def _remedies(config, refs):
    """The nearest settings that keep trees on every split, found by solving on the rows the
    weights are fitted on (:func:`sdwec.remedy.nearest_keeping`): the nearest larger λ or
    smaller ε with the same threshold rule, and a more lenient rule with the same λ and ε,
    each applied in one click (the sentence saying which splits abstain is the answer's)."""
    rows = ("out-of-bag and validation rows" if config.fit == "oob" else "validation rows")
    keys = tuple(repr(ref.key) for ref in refs)
    pools = page_pools.get_pools(refs)
    found = [f for f in (_remedy(keys, config.params, config.fit_on,
                                 ("lam", "eps", "combinations"), pools),
                         _remedy(keys, config.params, config.fit_on, ("threshold",), pools))
             if f is not None]
    # The same setting twice (a combination that is the lenient rule alone) is offered once.
    found = [f for i, f in enumerate(found) if f.params not in [g.params for g in found[:i]]]
    if not found:
        st.warning(f"No nearby setting keeps a tree: a more lenient threshold rule, every "
                   f"larger λ and every smaller ε on the sliders, and their combinations, were "
                   f"solved on the {rows}.")
        return
    # The λ route is searched first: a remedy that is not λ alone means no λ of the grid
    # keeps a tree on every split with this rule (as on noisy data under the paper's rule).
    no_lam = not any([name for name, *_ in f.changes] == ["lam"] for f in found)
    everywhere = any(f.everywhere for f in found)
    found = [f for f in found if f.everywhere] if everywhere else found[:1]
    lead = ("Nearest settings that keep trees on every split" if everywhere else
            "No setting tried keeps trees on every split; the one that keeps them on the most")
    why = (f" No λ of the slider keeps a tree on every split with the threshold rule "
           f"*{config.threshold}*: its threshold (set by β, γ, ε) is above almost every "
           f"weight of these trees at any λ, as happens on noisy data." if no_lam else "")
    st.warning(f"{lead} (solved on the {rows}, not the test rows): "
               + " Or: ".join(f"**{f.describe()}**" for f in found) + why)
    cols = st.columns(len(found))
    for i, (col, f) in enumerate(zip(cols, found)):
        col.button(f"Apply: {f.setting()}", key=f"explorer_remedy_{i}",
                   on_click=_apply_remedy, args=(f.new_values,), icon=":material/build:",
                   help="Moves the sidebar's controls (and the page address) to this setting.")


@st.cache_data(max_entries=64, show_spinner=False, hash_funcs=HASH_FUNCS)
def _remedy(keys, params, fit_on, routes, _pools):
    """:func:`sdwec.remedy.nearest_keeping` along ``routes`` for the pools of ``keys``
    (cached per setting)."""
    return remedy.nearest_keeping(_pools, params, LAMBDA_GRID, EPS_GRID,
                                  split="oob+val" if fit_on == "oob+validation" else "val",
                                  routes=routes)


def _apply_remedy(values):
    """Button callback: the sidebar's controls take the remedy's values."""
    apply_config(replace(current_config(), **values))


def _labels(method, splits):
    """The headline's labels and their help, in the order the answer's values are drawn."""
    count = COUNT_HELP if splits > 1 else ""
    return [("test", f"Test accuracy ({method})",
             f"Held-out test split; nothing on this page is chosen on it. {INTERVAL_HELP} The "
             f"difference to bagging is paired (the same splits, the same rows); it is "
             f"coloured only when a test supports it: a sign test over several splits, an "
             f"exact McNemar test on one split's rows."),
            ("validation", "Validation accuracy",
             "The weights are fitted on this split, so it flatters SDWEC. " + INTERVAL_HELP),
            ("sparsity", "Sparsity", "1 − (non-zero weights) / l (eq. 12). " + count),
            ("used", "Classifiers used", count or None)]


def show_explorer(config):
    """Draw the Explorer for ``config`` (the Explorer and the Your-data pages)."""
    refs = page_pools.pool_refs(config)
    results = explorer_cache.compare_splits(refs, config)
    ref, result = refs[0], results[0]
    sol = result.solution
    pinned_results = (None if config.pinned() is None
                      else explorer_cache.compare_splits(refs, config.pinned()))
    pinned = None if pinned_results is None else pinned_results[0].solution.weights
    answer = explorer_cache.answer(refs, config, results, pinned)
    family, files = explorer_cache.ahead_files(refs, config, pinned)
    method = result.methods[0]["method"]
    summary = comparison.over_splits(results)
    live.headline(family, answer, _labels(method, len(results)), files,
                  fine=explorer_answer.fine(summary[0]))
    if config.fit == "oob":
        st.info("**SDWEC-OOB (ours, beyond the paper):** the weights are fitted on the "
                "training rows' out-of-bag votes (each tree votes only on rows outside its "
                "bootstrap sample) stacked with the validation rows, and the kept trees vote "
                "with equal weights: the weights chart, the downloaded files and the "
                "downloaded model all hold those votes, 1 for each kept tree (Algorithm 1's "
                "own weights, which only choose the trees, are in the files' `solver_weight` "
                "and in the weights across iterations). The paper's SDWEC uses the validation "
                "rows only and votes with its weights. Here λ is the sidebar's; the "
                "size-targeted version (λ searched to keep a fifth of the trees) and the "
                "evidence: results/oob/ and the Frontier.")
    fmt = explorer_answer.label_formatter(result.classes)
    abstain = fmt(result.abstain_label)
    live.text("explorer_abstain", family, answer, "abstain", style="warning")
    # Warnings that come and go with the sliders take a slot that is always there: an element
    # appearing or leaving above the charts moves every element under it to a new place in
    # the page, and the browser renders them anew instead of updating them.
    slot = st.empty()
    if remedy.abstaining(r.solution for r in results):
        with slot.container(key="released_remedies"):
            _remedies(config, refs)
    drawn = explorer_cache.figures(ref, config, result, summary, pinned)
    # A reader's legend choices last while the dataset does (charts.plotly_chart).
    view = f"{config.dataset} {config.task}"
    left, right = st.columns(2)
    with left:
        plotly_chart(drawn["methods"], key="explorer_methods", view=view,
                     live=explorer_answer.live_of(family, answer, "methods"))
        show_glossary("What are bagging, WMV, the single tree?", page="explorer",
                      names=(method, "bagging", "WMV", "single"))
    with right:
        log = st.toggle("Log-scale cost axis", key="explorer_cost_log",
                        help="The first iterations' costs can dwarf the rest.")
        plotly_chart(explorer_cache.convergence_figure(ref, config, result, log),
                     key="explorer_convergence", view=f"{view} {'log' if log else 'linear'}",
                     live=explorer_answer.live_of(family, answer, "convergence"))
    live.text("explorer_paired", family, answer, "paired")
    live.text("explorer_splits", family, answer, "splits", style="caption")
    st.caption(_rows_note(results) + upload_plans.budget_note(ref) +
               f" Tied votes and an all-zero weight vector predict the most frequent validation "
               f"class ({abstain}; the classes are {', '.join(map(fmt, result.classes))})."
               + (MULTICLASS_NOTE if len(result.classes) > 2 else ""))
    if len(result.classes) > 2:
        with st.expander(MULTICLASS_TITLE):
            st.markdown(MULTICLASS_EXPLAINED)
    with live.released("pin"):
        pin_section(config, results, pinned_results)
    live.text("explorer_cost", family, answer, "cost")
    show_doc_section("algorithm.md", explorer_answer.COSTS_SECTION,
                     label=f"{explorer_answer.COSTS_SECTION}: why, in detail "
                           f"(docs/algorithm.md)")
    # One chart to the eye: no gap between the weights and the trees' accuracies under them.
    with st.container(gap=None):
        plotly_chart(drawn["weights"], key="explorer_weights", view=view, link="trees",
                     live=explorer_answer.live_of(family, answer, "weights"))
        plotly_chart(drawn["strip"], key="explorer_tree_accuracy", view=view, link="trees")
    with live.released("after"):
        if st.toggle("Show the weights across iterations (▶ plays Algorithm 1 in your browser)",
                     key="explorer_iterations"):
            plotly_chart(explorer_cache.iterations_figure(ref, config, result),
                         key="explorer_iterations_chart")
            st.caption("Drag the slider or press ▶: the bars are each iteration's weights "
                       "before line 15; blue ones are above the threshold (dotted) and would be "
                       "kept if Algorithm 1 stopped there. Watch trees drop out as the L1 term "
                       "wins.")
        timing_section(ref, voting.voting_weights(sol.weights, config.fit_on), len(results))
        show_downloads(ref, config, result)
    return result


def model_bytes(pool, solution, fit_on="validation"):
    """The pruned model of ``solution`` on ``pool`` as a joblib file (``bytes``), voting as
    the fit ``fit_on`` does (equal votes for SDWEC-OOB)."""
    model = export.pruned_model(pool, solution.weights, fit_on=fit_on, params=solution.params,
                                solution=solution)
    return export.model_joblib(model)


def show_downloads(ref, config, result):
    """Download buttons: the weights (CSV, JSON with provenance) and the pruned model."""
    sol = result.solution
    row = result.methods[0]
    name = ref.label
    fit_on = config.fit_on
    splits = config.splits
    # The files are one split's (its pool, its weights, its scores); the headline averages.
    scope = f"split 1 of {splits} (seed {config.seed})" + (
        f"; the page's headline is the mean over {splits} splits (seeds {config.seed}–"
        f"{config.seed + splits - 1})" if splits > 1 else "")
    meta = dict(fit_on=fit_on,
                params=dict(sol.params, n_trees=config.n_trees, task=config.task),
                dataset=name, seed=config.seed, scope=scope,
                metrics={"test_accuracy": row["test"], "validation_accuracy": row["validation"],
                         "sparsity": sol.sparsity, "n_selected": sol.n_selected})
    stem = export.file_stem(name, params=sol.params, n_trees=config.n_trees,
                            seed=config.seed, fit_on=fit_on, task=config.task)
    st.subheader("Downloads")
    where = ("the page's one split" if splits == 1 else
             f"**split 1 of {splits}**, the split the charts show")
    st.caption(f"These files hold {where} (seed {config.seed}): its pool's weights and its "
               f"scores (test accuracy {row['test']:.4f})"
               + (f", not the mean over {splits} splits in the headline (each split has its "
                  f"own pool and its own weights)." if splits > 1 else "."))
    abstains = sol.n_selected == 0
    cols = st.columns(3)
    # Every file is built only when clicked: a file handed over at each rerun is stored and
    # fetched by the page on every slider move (measured by benchmarks/browser.py).
    cols[0].download_button("Weights (CSV)", lambda: export.weights_csv(sol.weights, **meta),
                            file_name=f"{stem}_weights.csv", mime="text/csv",
                            key="download_csv", on_click="ignore", icon=":material/table:")
    cols[1].download_button("Weights and provenance (JSON)",
                            lambda: export.weights_json(sol.weights, **meta),
                            file_name=f"{stem}_weights.json", mime="application/json",
                            key="download_json", on_click="ignore", icon=":material/data_object:")
    pool = page_pools.get_pool(ref)
    cols[2].download_button("Pruned model (joblib)", lambda: model_bytes(pool, sol, fit_on),
                            file_name=f"{stem}_model.joblib",
                            mime="application/octet-stream", key="download_model",
                            on_click="ignore", icon=":material/forest:", disabled=abstains,
                            help="Not offered: this split keeps no tree." if abstains else None)
    if abstains:
        st.caption(f"No model to download: this split's ensemble keeps no tree (it abstains), "
                   f"so a model would only predict one class, "
                   f"**{explorer_answer.label_formatter(result.classes)(result.abstain_label)}**, for every "
                   f"row. The weight files are still offered: all zero, `n_selected` 0.")
    vote = ("one vote each (SDWEC-OOB's equal votes: the files' `weight` column is 1 on "
            "every kept tree, `solver_weight` holds Algorithm 1's weights that chose them)"
            if voting.vote_of(fit_on) == "equal" else "their SDWEC weights")
    files = (f"The files hold the weights the ensemble votes with, and their provenance "
             f"(`fit`: {voting.fit_name(fit_on)}, `vote`: {voting.vote_of(fit_on)}).")
    if abstains:  # no model file to describe
        st.caption(files)
        return
    st.caption(f"{files} The model file holds an `SDWECClassifier` with only the selected "
               f"trees, voting with {vote}, so it predicts what this page scores: "
               f"`joblib.load(path).predict(X)` with X's columns in the dataset's order "
               f"(`sdwec` must be importable: `pip install .` in this project; load only files "
               f"you trust).")
