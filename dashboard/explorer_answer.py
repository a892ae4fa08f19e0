"""The Explorer's answer for one setting: its headline, its sentences and its figures.

One function, :func:`answer`, turns SDWEC's results on a configuration's splits into what the
Explorer shows that changes with λ, β, γ and ε: the headline's values, the sentences that
depend on them (as HTML) and, per figure, the traces and layout keys that change
(:data:`LIVE_PARTS`).  The page draws the answer of its own setting; the answers of the
settings around it are computed ahead (:mod:`dashboard.ahead`) by the same function, so the
browser can show any of them while a slider is dragged, with the very numbers and words the
server would send.
"""

from __future__ import annotations

import html
import json
import numbers
import re

import numpy as np

from dashboard import charts
from dashboard.echo import literal
from sdwec import comparison, convergence, plots, remedy, voting
from sdwec.formatting import mean_interval, significant

#: Per figure, what changes with λ, β, γ and ε: the traces (by uid) and the layout keys.
#: Everything else of the figure is the same at every setting of one configuration (its
#: pool, splits, fit, k, threshold rule and pin); tests/test_explorer_answer.py checks that
#: swapping these parts turns one setting's figure into another's.
LIVE_PARTS = {
    "methods": {"traces": ("test", "validation", "test-splits", "validation-splits"),
                "layout": ()},
    "convergence": {"traces": ("nonconvex", "relaxed", "rises"), "layout": ()},
    "weights": {"traces": ("selected", "dropped", "threshold"),
                "layout": ("annotations", "yaxis")},
}


def setting_key(lam, beta, gamma, eps):
    """A setting's name in the browser: the sidebar sliders' values as they print them
    (``%g``; ``"10|15|15|1"``), so the page can read it off the sliders while they move."""
    return "|".join(f"{float(v):g}" for v in (lam, beta, gamma, eps))


def label_formatter(classes):
    """Binary labels print as -1/+1, numbers as they are, text labels (an upload's: a
    user's text) literally, as inline code."""
    if set(classes) == {-1, 1}:
        return lambda label: f"{label:+d}"
    return lambda label: str(label) if isinstance(label, numbers.Number) else literal(label)


def accuracy_text(row, split):
    """The mean and its 95 % interval: ``0.810 [0.788, 0.832]`` over several splits, one
    split's accuracy with its binomial interval over the rows, ``0.9982 [0.9974, 0.9988]``."""
    # A fourth decimal only where one split's rows resolve it (NSL-KDD's 12,597: one row is
    # 0.008 points); elsewhere it is noise and pushes the value onto a second line.
    return mean_interval(row[split], row[split + "_lo"], row[split + "_hi"],
                         4 if fine(row) else 3)


def fine(row):
    """Whether the headline needs four decimals: one split with a thousand rows or more."""
    return row["splits"] == 1 and row.get("test_rows", 0) >= 1000


def delta(diff):
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


def split_notes(spread, method="SDWEC"):
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
    return (f"{method}'s test accuracy per split (split i has the sidebar's seed + i − 1): "
            f"{per_split}.{outlier}")


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


def abstention(results):
    """Markdown saying which splits keep no tree and what they then predict, or ``""``."""
    abstaining = remedy.abstaining(r.solution for r in results)
    if not abstaining:
        return ""
    first = results[0]
    abstain = label_formatter(first.classes)(first.abstain_label)
    r = len(results)
    if r == 1:
        return (f"Every weight was cut to zero, so the ensemble **abstains**: it predicts "
                f"**{abstain}**, the most frequent validation class, for every row, and the "
                f"accuracies above are that constant guess's.")
    k = len(abstaining)
    which = "" if k == r else " (" + ("split " if k == 1 else "splits ") + ", ".join(
        str(i + 1) for i in abstaining) + ")"
    first = f" (split 1: **{abstain}**)" if abstaining[0] == 0 else ""
    return (f"**{k} of {r} splits abstain**{which}: every weight cut to zero, each predicts "
            f"one class{first} for every row, and the means above include these guesses.")


def lambda_note(line, dataset):
    """Where along λ every split keeps no tree, and from where every tree is kept, on the
    page's own pools (``line``: the answers at every λ of the grid, the other parameters the
    page's); ``""`` when no λ does either."""
    rows = sorted((float(key.split("|")[0]), *answer["kept"]) for key, answer in line.items())
    off = [lam for lam, _, none, splits, _ in rows if none == splits]
    full = [lam for lam, kept, none, _, l in rows if none == 0 and kept == l]
    parts = []
    if off:
        parts.append(f"every split keeps no tree at λ ≤ {max(off):g}" if off == [
            lam for lam, *_ in rows[:len(off)]] else
            f"every split keeps no tree at λ = {', '.join(f'{v:g}' for v in off)}")
    if full and full[-1] == rows[-1][0]:
        first = min(v for v in full if all(w in full for w, *_ in rows if w >= v))
        parts.append(f"every tree is kept from λ = {first:g}")
    if not parts:
        return ""
    return f" Measured here ({dataset}, its splits, these β, γ, ε): {'; '.join(parts)}."


def first_split(splits):
    """What a chart drawn from the first of ``splits`` splits adds to its title."""
    return f"split 1 of {splits}" if splits > 1 else ""


def figures(result, summary, fit_on, splits, pinned=None, log=False):
    """The Explorer's figures of one setting: the methods' accuracies (the mean over the
    splits), the cost per iteration and the weights (split 1's), and the trees' accuracy
    strip drawn under the weights.

    Parameters
    ----------
    result : sdwec.comparison.Comparison
        Split 1's.
    summary : list of dict
        :func:`sdwec.comparison.over_splits` of every split.
    fit_on : {"validation", "oob+validation"}
    splits : int
    pinned : array_like, optional
        The pinned configuration's weights on split 1, drawn over the weights.
    log : bool
        A log-scale cost axis.

    Returns
    -------
    dict
        ``methods``, ``convergence``, ``weights``, ``strip``: Plotly figures.
    """
    sol = result.solution
    # The chart shows what votes: SDWEC-OOB's kept trees one vote each, with no threshold
    # (it cut Algorithm 1's weights, not these).
    equal = voting.vote_of(fit_on) == "equal"
    # (0 is the rule "none", which cuts nothing: the chart says so for both fits.)
    threshold = (sol.threshold if np.isfinite(sol.threshold) and (not equal or sol.threshold == 0)
                 else None)
    if pinned is not None:
        pinned = voting.voting_weights(pinned, fit_on)
    weights = plots.member_weights(voting.voting_weights(sol.weights, fit_on),
                                   result.member_accuracy, threshold, pinned=pinned,
                                   method="SDWEC-OOB" if equal else "SDWEC",
                                   raw=None if equal else sol.raw_weights)
    if equal:
        weights.update_layout(title_text="Votes of the ensemble members: one per kept tree "
                                         "(SDWEC-OOB)")
    scope = first_split(splits)
    return {"methods": plots.method_comparison(summary),
            "convergence": plots.scoped(plots.convergence(sol.history, log_y=log), scope),
            "weights": plots.scoped(weights, scope),
            "strip": plots.tree_accuracies(result.member_accuracy)}


def answer(results, fit_on, pinned=None):
    """What the Explorer shows of one setting that moves with λ, β, γ and ε.

    Parameters
    ----------
    results : list of sdwec.comparison.Comparison
        One per split, at this setting.
    fit_on : {"validation", "oob+validation"}
    pinned : array_like, optional
        The pinned configuration's weights on split 1 (the weights chart draws them).

    Returns
    -------
    dict
        ``key`` (:func:`setting_key`), ``kept`` (the mean trees kept, the splits keeping
        none, the splits, ``l``), ``headline`` (the four values and the comparison with bagging as
        text), ``text`` (``paired``, ``splits``, ``cost``, ``abstain``: HTML) and
        ``figures`` (per figure of :data:`LIVE_PARTS`, its changing parts and their hash).
        Plain JSON values.
    """
    summary = comparison.over_splits(results)
    sol = results[0].solution
    p = sol.params
    row = summary[0]
    l = len(sol.weights)
    diff = comparison.paired(results, "bagging")
    if row["splits"] == 1:
        sparsity, used = f"{sol.sparsity:.3f}", f"{sol.n_selected} / {l}"
    else:
        sparsity = mean_interval(row["sparsity"], row["sparsity_lo"], row["sparsity_hi"])
        used = (mean_interval(row["n_selected"], row["n_selected_lo"], row["n_selected_hi"], 1)
                + f" / {l}")
    text, colour, arrow = delta(diff)
    notes = {"paired": comparison.paired_sentence(diff),
             "splits": (split_notes(comparison.split_spread(results), row["method"])
                        if len(results) > 1 else ""),
             "cost": cost_note(convergence.describe(sol.history), len(sol.history)),
             "abstain": abstention(results)}
    drawn = figures(results[0], summary, fit_on, len(results), pinned)
    return {"key": setting_key(p["lam"], p["beta"], p["gamma"], p["eps"]),
            # The mean trees kept and the splits that keep none (the λ slider's help says
            # where on the λ line every tree is off).
            "kept": [float(row["n_selected"]), int(row["abstaining_splits"]), len(results), l],
            "headline": {"test": accuracy_text(row, "test"), "delta": [text, colour, arrow],
                         "validation": accuracy_text(row, "validation"),
                         "sparsity": sparsity, "used": used},
            "text": {name: html_of(markdown) for name, markdown in notes.items()},
            "figures": {name: charts.live_part(json.loads(charts.figure_spec(drawn[name])),
                                             LIVE_PARTS[name])
                        for name in LIVE_PARTS}}


def live_of(family, answer, name):
    """What :func:`dashboard.charts.plotly_chart` needs (its ``live``) to draw figure
    ``name`` of ``answer`` and follow the sliders with the other settings' answers."""
    return {"family": family, "released": answer["key"], "name": name,
            "hash": answer["figures"][name]["hash"], "parts": LIVE_PARTS[name]}


# --------------------------------------------------------------------------- Markdown
# The few inline forms the sentences use, turned into HTML the same way wherever they are
# shown (the browser swaps it in while a slider moves): backslash escapes, code spans,
# **strong** and *emphasis*; everything else is text.
_ESCAPABLE = re.compile(r"\\([!-/:-@\[-`{-~])")


def html_of(markdown):
    """The HTML of ``markdown``'s inline forms (escapes, code spans, ``**``, ``*``); every
    other character is text, HTML-escaped."""
    out, i, n = [], 0, len(markdown)
    bold = em = False
    while i < n:
        ch = markdown[i]
        if ch == "\\" and _ESCAPABLE.match(markdown, i):
            out.append(html.escape(markdown[i + 1]))
            i += 2
        elif ch == "`":
            run = re.match(r"`+", markdown[i:]).group()
            close = re.compile(r"(?<!`)" + run + r"(?!`)").search(markdown, i + len(run))
            if close is None:
                out.append(html.escape(run))
                i += len(run)
                continue
            code = markdown[i + len(run):close.start()].replace("\n", " ")
            if code.startswith(" ") and code.endswith(" ") and code.strip(" "):
                code = code[1:-1]
            out.append(f"<code>{html.escape(code)}</code>")
            i = close.end()
        elif markdown.startswith("**", i):
            out.append("</strong>" if bold else "<strong>")
            bold = not bold
            i += 2
        elif ch == "*":
            out.append("</em>" if em else "<em>")
            em = not em
            i += 1
        else:
            out.append(html.escape(ch))
            i += 1
    return "".join(out)
