"""The Explorer view: SDWEC on one pool, its figures and downloads (shared by two pages)."""

from __future__ import annotations

import numbers
from dataclasses import replace
from string import Template

import streamlit as st

from dashboard import _compat as compat
from dashboard import explorer_cache, frontier_cache, page_pools, upload_plans
from dashboard.charts import plotly_chart
from dashboard.config import EPS_GRID, LAMBDA_GRID
from dashboard.docs import show_doc_section
from dashboard.echo import literal
from dashboard.explorer_pin import pin_section
from dashboard.explorer_timing import timing_section
from dashboard.glossary import show_glossary
from dashboard.pools import HASH_FUNCS
from dashboard.sidebar import apply_config, current_config
from sdwec import comparison, convergence, export, remedy, voting
from sdwec.formatting import mean_interval, points, significant

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


def _label_formatter(classes):
    """Binary labels print as -1/+1, numbers as they are, text labels (an upload's: a
    user's text) literally, as inline code."""
    if set(classes) == {-1, 1}:
        return lambda label: f"{label:+d}"
    return lambda label: str(label) if isinstance(label, numbers.Number) else literal(label)


def _accuracy_text(row, split):
    """The mean and its 95 % interval: ``0.810 [0.788, 0.832]`` over several splits, one
    split's accuracy with its binomial interval over the rows, ``0.9982 [0.9974, 0.9988]``."""
    # A fourth decimal only where one split's rows resolve it (NSL-KDD's 12,597: one row is
    # 0.008 points); elsewhere it is noise and pushes the value onto a second line.
    decimals = 4 if row["splits"] == 1 and row.get(f"{split}_rows", 0) >= 1000 else 3
    return mean_interval(row[split], row[split + "_lo"], row[split + "_hi"], decimals)


def _delta(diff):
    """A paired difference as a metric's delta: text, colour and arrow.

    Colour and arrow only where the test supports a difference (the sign test over several
    splits, the exact McNemar test on one split's paired rows); a difference that could be
    chance is grey, with no arrow.
    """
    if diff.splits == 1:
        text = comparison.rows_change(diff)
    else:
        text = comparison.interval_points(diff)
    if not diff.supported:
        return text, "gray", "off"
    better = diff.better > diff.worse
    return text, "green" if better else "red", "up" if better else "down"


#: The headline's values at a size where "0.783 [0.745, 0.821]" and "28.1 [23.2, 33.0] / 200"
#: fit a quarter of the page at 1280×720 (Streamlit's 2.25rem cut such values short); a
#: value that still does not fit wraps instead of losing its spread to an ellipsis.
HEADLINE_CSS = Template("""<style>
.st-key-explorer_headline $value { font-size: 1.3rem; }
/* One large split's four decimals ("0.9982 [0.9973, 0.9988]") on one line too. */
.st-key-explorer_headline .st-key-explorer_fine $value {
  font-size: 1.1rem; }
.st-key-explorer_headline $value p { white-space: normal; }
/* The comparison with bagging and its "vs bagging" wrap: on one line they ended in "…" at
   1280 px ("+5 of 12,597 test rows (+0.04 …") and "vs bagging" was squeezed to nothing. */
.st-key-explorer_headline div:has(> $delta) {
  flex-wrap: wrap; overflow: visible; height: auto; }
.st-key-explorer_headline $delta,
.st-key-explorer_headline $description {
  max-width: 100%; height: auto; overflow: visible; }
.st-key-explorer_headline $delta div,
.st-key-explorer_headline $delta p,
.st-key-explorer_headline $description div,
.st-key-explorer_headline $description p {
  white-space: normal; overflow: visible; text-overflow: clip; }
</style>""").substitute(
    # Streamlit's own names of st.metric's parts (no public API sizes them).
    value=compat.testid("stMetricValue"), delta=compat.testid("stMetricDelta"),
    description=compat.testid("stMetricDeltaDescription"))


def _headline(summary, results, l):
    """SDWEC's numbers (mean and 95 % interval over the splits) and its paired comparison
    with bagging."""
    sdwec_row = summary[0]
    diff = comparison.paired(results, "bagging")
    text, color, arrow = _delta(diff)
    st.html(HEADLINE_CSS)
    fine = sdwec_row["splits"] == 1 and sdwec_row.get("test_rows", 0) >= 1000
    box = st.container(key="explorer_headline")
    cols = (box.container(key="explorer_fine") if fine else box).columns(4)
    cols[0].metric(f"Test accuracy ({sdwec_row['method']})", _accuracy_text(sdwec_row, "test"),
                   delta=text,
                   delta_color=color, delta_arrow=arrow, delta_description="vs bagging",
                   help=f"Held-out test split; nothing on this page is chosen on it. "
                        f"{INTERVAL_HELP} The difference to bagging is paired (the same "
                        f"splits, the same rows); it is coloured only when a test supports "
                        f"it: a sign test over several splits, an exact McNemar test on one "
                        f"split's rows.")
    cols[1].metric("Validation accuracy", _accuracy_text(sdwec_row, "validation"),
                   help="The weights are fitted on this split, so it flatters SDWEC. "
                        + INTERVAL_HELP)
    if sdwec_row["splits"] == 1:
        sol = results[0].solution
        sparsity, used = f"{sol.sparsity:.3f}", f"{sol.n_selected} / {l}"
    else:
        sparsity = mean_interval(sdwec_row["sparsity"], sdwec_row["sparsity_lo"],
                                 sdwec_row["sparsity_hi"])
        used = (mean_interval(sdwec_row["n_selected"], sdwec_row["n_selected_lo"],
                              sdwec_row["n_selected_hi"], 1) + f" / {l}")
    cols[2].metric("Sparsity", sparsity, help="1 − (non-zero weights) / l (eq. 12). "
                   + (COUNT_HELP if sdwec_row["splits"] > 1 else ""))
    cols[3].metric("Classifiers used", used,
                   help=COUNT_HELP if sdwec_row["splits"] > 1 else None)
    # Several splits: their per-split line goes in the caption under the first charts, with
    # the paired sentence (the headline and the first chart fit one 1280×720 screen); which
    # splits abstain is said by the abstention warning.
    notes = (_split_notes(comparison.split_spread(results), sdwec_row["method"])
             if len(results) > 1 else "")
    return diff, notes


def _split_notes(spread, method="SDWEC"):
    """What the mean over splits hides: the sentence giving every split's test accuracy
    (split ``i`` uses the sidebar's seed + ``i`` − 1, abstaining ones marked) and naming a
    split that drives the spread."""
    r = len(spread.accuracies)
    if spread.outlier is not None:
        i = spread.outlier
        mean, sd, a = spread.others_mean, spread.others_sd, spread.accuracies[i]
        where = (f"differs from the other {r - 1} splits, which all score {mean:.3f}" if sd == 0
                 else f"lies {abs(a - mean) / sd:.0f} sd from the other {r - 1} splits' "
                      f"mean {mean:.3f} (sd {sd:.3f})")
        outlier = f" Split {i + 1} drives the spread: its {a:.3f} {where}."
    else:
        outlier = ""
    per_split = ", ".join(f"{a:.3f}" + (" (abstains)" if i in spread.abstaining else "")
                          for i, a in enumerate(spread.accuracies))
    return (f" {method}'s test accuracy per split (split i has the sidebar's seed + i − 1): "
            f"{per_split}.{outlier}")


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


def _abstention(config, refs, results, abstaining, abstain):
    """Say which splits abstain and offer the nearest settings that keep trees, found by
    solving on the rows the weights are fitted on (:func:`sdwec.remedy.nearest_keeping`):
    the nearest larger λ or smaller ε with the same threshold rule, and a more lenient rule
    with the same λ and ε, each applied in one click."""
    r = len(results)
    if r == 1:
        text = (f"Every weight was thresholded to zero, so the ensemble **abstains**: it "
                f"predicts the most frequent validation class, **{abstain}**, for every row, "
                f"and the accuracies above are that constant guess's.")
    else:
        k = len(abstaining)
        which = ", ".join(str(i + 1) for i in abstaining)
        first = (f"; on split 1, which the charts below draw, it predicts **{abstain}** for "
                 f"every row" if abstaining[0] == 0 else "")
        text = (f"**{k} of {r} splits abstain{'s' if k == 1 else ''}** (split"
                f"{'s' if k > 1 else ''} {which}: every weight thresholded to zero, so the "
                f"ensemble predicts one class for every row{first}): "
                f"{'its' if k == 1 else 'their'} accuracy is the constant guess's, and the "
                f"means above include {'it' if k == 1 else 'them'}.")
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
        st.warning(f"{text} No nearby setting keeps a tree: a more lenient threshold rule, "
                   f"every larger λ and every smaller ε on the sliders, and their "
                   f"combinations, were solved on the {rows}.")
        return
    everywhere = any(f.everywhere for f in found)
    found = [f for f in found if f.everywhere] if everywhere else found[:1]
    lead = ("Nearest settings that keep trees on every split" if everywhere else
            "No setting tried keeps trees on every split; the one that keeps them on the most")
    st.warning(f"{text} {lead} (solved on the {rows}, not the test rows): "
               + " Or: ".join(f"**{f.describe()}**" for f in found))
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


def show_explorer(config):
    """Draw the Explorer for ``config`` (the Explorer and the Your-data pages)."""
    refs = page_pools.pool_refs(config)
    results = explorer_cache.compare_splits(refs, config)
    summary = comparison.over_splits(results)
    ref, result = refs[0], results[0]
    sol = result.solution
    l = len(sol.weights)
    diff, per_split = _headline(summary, results, l)
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
    fmt = _label_formatter(result.classes)
    abstain = fmt(result.abstain_label)
    # Warnings that come and go with the sliders take a slot that is always there: an element
    # appearing or leaving above the charts moves every element under it to a new place in
    # the page, and the browser renders them anew instead of updating them.
    slot = st.empty()
    abstaining = remedy.abstaining(r.solution for r in results)
    if abstaining:
        with slot.container():
            _abstention(config, refs, results, abstaining, abstain)
    pinned_results = (None if config.pinned() is None
                      else explorer_cache.compare_splits(refs, config.pinned()))
    pinned = None if pinned_results is None else pinned_results[0]
    methods_fig, weights_fig, strip_fig = explorer_cache.explorer_figures(
        ref, config, result, summary, pinned)
    # A reader's legend choices last while the dataset does (charts.plotly_chart).
    view = f"{config.dataset} {config.task}"
    left, right = st.columns(2)
    with left:
        plotly_chart(methods_fig, key="explorer_methods", view=view)
        show_glossary("What are bagging, WMV, the single tree?", page="explorer",
                      names=(result.methods[0]["method"], "bagging", "WMV", "single"))
    with right:
        log = st.toggle("Log-scale cost axis", key="explorer_cost_log",
                        help="The first iterations' costs can dwarf the rest.")
        plotly_chart(explorer_cache.convergence_figure(ref, config, result, log),
                     key="explorer_convergence", view=f"{view} {'log' if log else 'linear'}")
    st.markdown(comparison.paired_sentence(diff))
    st.caption(_rows_note(results) + upload_plans.budget_note(ref) + per_split +
               f" Tied votes and an all-zero weight vector predict the most frequent validation "
               f"class ({abstain}; the classes are {', '.join(map(fmt, result.classes))})."
               + (MULTICLASS_NOTE if len(result.classes) > 2 else ""))
    if len(result.classes) > 2:
        with st.expander(MULTICLASS_TITLE):
            st.markdown(MULTICLASS_EXPLAINED)
    pin_section(config, results, pinned_results)
    st.markdown(cost_note(convergence.describe(sol.history), len(sol.history)))
    show_doc_section("algorithm.md", COSTS_SECTION,
                     label=f"{COSTS_SECTION}: why, in detail (docs/algorithm.md)")
    # One chart to the eye: no gap between the weights and the trees' accuracies under them.
    with st.container(gap=None):
        plotly_chart(weights_fig, key="explorer_weights", view=view, link="trees")
        plotly_chart(strip_fig, key="explorer_tree_accuracy", view=view, link="trees")
    if st.toggle("Show the weights across iterations (▶ plays Algorithm 1 in your browser)",
                 key="explorer_iterations"):
        plotly_chart(explorer_cache.iterations_figure(ref, config, result),
                     key="explorer_iterations_chart")
        st.caption("Drag the slider or press ▶: the bars are each iteration's weights before "
                   "line 15; blue ones are above the threshold (dotted) and would be kept if "
                   "Algorithm 1 stopped there. Watch trees drop out as the L1 term wins.")
    if st.toggle("Scrub λ in your browser (the whole λ grid at once, no waiting)",
                 key="explorer_scrub"):
        plotly_chart(explorer_cache.scrubber_figure(refs, config), key="explorer_scrubber")
        st.caption(f"The slider under the chart moves through the sidebar's {len(LAMBDA_GRID)} "
                   f"λ values, computed once for these pools and these β, γ, ε, k: the "
                   f"weights, the accuracies beside bagging's and the position among all λ "
                   f"redraw in your browser, without asking the server. The sidebar's λ sets "
                   f"the value the rest of the page uses. " + _scrubber_split_note(results))
    timing_section(ref, voting.voting_weights(sol.weights, config.fit_on),
                   len(results))
    show_downloads(ref, config, result)
    return result


def _scrubber_split_note(results):
    """What the scrubber's numbers rest on: the headline's splits and rows."""
    splits, n_test = len(results), sum(r.n_test for r in results)
    if splits == 1:
        row = f"one test row = {points(1 / n_test, sign=False)} points"
        return (f"Like the headline, its accuracies are on this split's {n_test:,} test rows "
                f"({row}), with their exact 95 % binomial intervals; at the sidebar's λ it "
                f"shows the headline's numbers.")
    return (f"Like the headline, it shows the mean over all {splits} splits ({n_test:,} test "
            f"rows in all) with its 95 % interval, and each split's accuracy as a dot; at "
            f"the sidebar's λ its numbers are the headline's. The weights are the first "
            f"split's: each split grows its own trees.")


#: Where docs/algorithm.md derives why Algorithm 1's costs can rise (rendered under the note).
COSTS_SECTION = "When the costs rise"


def _percent(share):
    """``0.25`` -> ``"25 %"``, ``1.67`` -> ``"167 %"``, ``9.1e-5`` -> ``"0.0091 %"``."""
    value = 100 * share
    return f"{value:.0f} %" if abs(value) >= 10 else f"{significant(value, 2)} %"


def cost_note(behaviour, k):
    """Markdown under the cost chart: the paper's claim, and what this run did."""
    tolerance = _percent(behaviour.rtol)
    creeps = len(behaviour.creeps)
    creep = ""
    if creeps:
        largest = max(behaviour.creeps, key=lambda r: r.relative)
        creep = (f"it creeps up by less than that at {creeps} iteration"
                 f"{'s' if creeps > 1 else ''} (at most {_percent(largest.relative)}, too "
                 f"little to see on the chart)")
    if behaviour.decreasing:
        if not creeps:
            return ("The non-convex cost falls at every iteration here, as in the paper's "
                    "Figure 3.")
        return (f"The non-convex cost never rises by more than {tolerance} of itself here, "
                f"close to the paper's Figure 3; {creep}: each iteration's model pulls the "
                f"margins out by ε, so the weights' scale grows a little "
                f"(see *{COSTS_SECTION}* below).")
    worst = behaviour.largest_rise
    digits = worst.figures
    text = (f"**The non-convex cost rises** by more than {tolerance} (the tolerance) at "
            f"{len(behaviour.rises)} of {k} iterations here (largest: iteration "
            f"{worst.iteration}, {significant(worst.before, digits)} → "
            f"{significant(worst.after, digits)}, +{_percent(worst.relative)})"
            + (f"; {creep}" if creep else "") + ". "
            "The paper says both costs \"decrease steadily\"; Algorithm 1 does not promise "
            "it, and this solver gives the same weights as a literal transcription of it. "
            "Each iteration minimises a new convex model built around the previous weights ŵ: "
            "its relaxed sign term pulls every row's margin H_s w towards |H_s ŵ| + ε")
    sums = behaviour.weight_sums
    if behaviour.scale_grows:
        text += (f", so the weights' scale keeps growing (their sum went from "
                 f"{significant(sums[0])} to {significant(sums[-1])}) although sgn(Hw) ignores "
                 f"scale, and the L1 term of the cost grows with nothing gained")
    flips = int(behaviour.flips[worst.iteration - 1]) if len(behaviour.flips) else 0
    if flips:
        text += (f"; and a weight crossing zero moves rows between right and wrong (at "
                 f"iteration {worst.iteration}, {flips} weights switched between zero and "
                 f"non-zero)")
    return text + f". Why, in detail: *{COSTS_SECTION}* below."


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
                   f"**{_label_formatter(result.classes)(result.abstain_label)}**, for every "
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
