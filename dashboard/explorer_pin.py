"""A view: the Explorer's pin, and the live configuration compared with the pinned one on
the same splits (a table, a paired test's sentence, the trees they share)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from dashboard.sidebar import pin_current, unpin
from sdwec import comparison, intervals
from sdwec.formatting import mean_interval, points


def pin_section(config, live_results, pinned_results):
    """Pin the configuration, or compare the live one with the pinned one (its results on
    the same splits, ``pinned_results``), split by split."""
    pinned = config.pinned()
    if pinned is None:
        st.button("Pin this configuration", key="explorer_pin", on_click=pin_current,
                  icon=":material/push_pin:",
                  help="Keep these parameters; after your next slider move the Explorer "
                       "shows both side by side. The pin is part of the page address.")
        return
    left, right = st.columns([4, 1])
    left.markdown(
        f"**Pinned:** λ={pinned.lam:g}, β={pinned.beta:g}, γ={pinned.gamma:g}, "
        f"ε={pinned.eps:g}, k={pinned.iterations}, threshold {pinned.threshold}.")
    right.button("Unpin", key="explorer_unpin", on_click=unpin, icon=":material/close:")
    st.dataframe(_pin_table(live_results, pinned_results), hide_index=True,
                 column_config={c: st.column_config.NumberColumn(format="%.4f")
                                for c in ("test accuracy", "validation accuracy", "sparsity")}
                 if len(live_results) == 1 else None)
    live_test, rows = comparison.scores(live_results)
    one = live_results[0]
    # One split: both configurations vote on the same pool's test rows, so they pair row by
    # row and an exact McNemar test can decide.
    rows_test = (intervals.mcnemar(one.test_right[:, 0], pinned_results[0].test_right[:, 0],
                                   one.test_counts)
                 if len(live_results) == 1 and one.test_right is not None else None)
    diff = comparison.paired_difference(live_test, comparison.scores(pinned_results)[0], rows,
                                        names=("live", "pinned"), mcnemar=rows_test)
    sentence = comparison.paired_sentence(diff)
    if diff.supported:
        sentence = f":{'green' if diff.better > diff.worse else 'red'}[{sentence}]"
    shared = comparison.shared_members(live_results[0].solution.weights,
                                       pinned_results[0].solution.weights)
    st.markdown(f"Test accuracy, live {sentence}")
    st.caption(_shared_note(shared, live_results[0].solution.threshold,
                            pinned_results[0].solution.threshold))


def _shared_note(shared, live_threshold, pinned_threshold):
    """Which kept trees the live and the pinned configuration share on the first split."""
    def trees(n):
        return f"{n} tree" if n == 1 else f"{n} trees"

    apart = [f"{trees(n)} only the {who} one keeps" for n, who in
             ((shared["only_first"], "live"), (shared["only_second"], "pinned")) if n]
    text = (f"On the first split they keep {trees(shared['both'])} in common"
            + (f"; {' and '.join(apart)}." if apart else ", and no other."))
    text += " The weights chart marks the pinned weights with light grey ticks"
    if np.isclose(live_threshold, pinned_threshold, equal_nan=True):
        return text + "."
    return text + (": the pinned configuration cut its weights at its own threshold, not at "
                   "the line drawn there.")


def _pin_table(live_results, pinned_results):
    """Live, pinned and live − pinned: the values of one split, or the mean and its 95 %
    interval over several (the difference's is the paired one, over the splits; accuracy
    differences in points, as the sentence under the table gives them)."""
    l = len(live_results[0].solution.weights)

    def values(results):
        return {"test accuracy": comparison.scores(results, split="test")[0],
                "validation accuracy": comparison.scores(results, split="validation")[0],
                "sparsity": np.array([r.solution.sparsity for r in results]),
                "trees used": np.array([r.solution.n_selected for r in results], dtype=float)}

    live, old = values(live_results), values(pinned_results)
    one = len(live_results) == 1
    table = {"": ["live", "pinned", "live − pinned"]}
    for column in live:
        decimals = 1 if column == "trees used" else 3
        high = l if column == "trees used" else 1.0
        cells = []
        for difference, series in ((False, live[column]), (False, old[column]),
                                   (True, live[column] - old[column])):
            if one:
                cells.append(float(series[0]))
                continue
            mean, lo, hi = intervals.mean_interval(series, -high if difference else 0.0, high)
            if difference and column.endswith("accuracy"):
                cells.append(f"{points(mean)} [{points(lo)}, {points(hi)}] points")
            elif difference:
                cells.append(f"{mean:+.{decimals}f} [{lo:+.{decimals}f}, {hi:+.{decimals}f}]"
                             .replace("-", "−"))
            else:
                cells.append(mean_interval(mean, lo, hi, decimals))
        table[column] = cells
    if one:
        table["trees used"] = [int(v) for v in table["trees used"]]
    return table
