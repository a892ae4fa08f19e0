"""The Explorer's sentences under its charts say what the numbers under them show.

Hand-built histories and timings, so that each expectation is derived by hand.
"""

import numpy as np
import pytest

from dashboard.docs import doc_section
from dashboard.explorer_answer import cost_note
from dashboard.explorer_timing import measured_note
from sdwec import convergence
from sdwec.solver import IterationRecord
from sdwec.timing import PredictionTiming


def _history(costs, weights=None):
    return [IterationRecord(iteration=i + 1, nonconvex_cost=c, relaxed_cost=c, n_selected=0,
                            weights=None if weights is None else np.asarray(weights[i], float))
            for i, c in enumerate(costs)]


def test_a_flat_plateau_counts_no_rise_and_says_how_much_it_creeps():
    # 1.09 creeping up by 5e-5 of itself per iteration: invisible on a chart, not a rise.
    costs = [3.0, 1.5, 1.09] + [1.09 * (1 + 5e-5) ** n for n in range(1, 23)]
    behaviour = convergence.describe(_history(costs))
    assert behaviour.rises == () and len(behaviour.creeps) == 22
    note = cost_note(behaviour, 25)
    assert "never rises by more than 0.1 % of itself" in note
    assert "creeps up by less than that at 22 iterations (at most 0.005 %" in note
    assert "rises**" not in note


def test_a_rise_is_printed_with_figures_that_tell_before_from_after():
    # 1.0900 -> 1.0915 is +0.138 %: three significant figures would print 1.09 -> 1.09.
    costs = [2.0, 1.09, 1.0915, 1.0915 * (1 + 1e-6)]
    behaviour = convergence.describe(_history(costs))
    assert [r.iteration for r in behaviour.rises] == [3]
    note = cost_note(behaviour, 4)
    assert "rises** by more than 0.1 % (the tolerance) at 1 of 4 iterations" in note
    assert "iteration 3, 1.09 → 1.0915, +0.14 %" in note
    assert "creeps up by less than that at 1 iteration (at most 0.0001 %" in note


def test_rounding_is_neither_a_rise_nor_a_creep():
    behaviour = convergence.describe(_history([2.0, 1.5, 1.5 * (1 + 1e-12)]))
    assert behaviour.rises == () and behaviour.creeps == ()
    assert cost_note(behaviour, 3).startswith("The non-convex cost falls at every iteration")


def test_the_tolerance_is_an_argument():
    history = _history([2.0, 1.0, 1.0005])  # +0.05 %
    assert len(convergence.describe(history).rises) == 0
    strict = convergence.describe(history, rtol=1e-4)
    assert len(strict.rises) == 1
    assert "by more than 0.01 % (the tolerance)" in cost_note(strict, 3)


def _timing(ratios, n_full=8, n_pruned=1, n_rows=2000, n_given=2000, nodes=(40.0, 40.0)):
    full = tuple(float(r) for r in ratios)
    return PredictionTiming(full_seconds=float(np.median(full)), pruned_seconds=1.0,
                            n_full=n_full, n_pruned=n_pruned, n_rows=n_rows, repeats=len(full),
                            full_runs=full, pruned_runs=(1.0,) * len(full), n_given=n_given,
                            full_nodes=nodes[0], pruned_nodes=nodes[1])


def test_measured_above_the_formula_is_explained():
    # ×13.4 measured where the formula says ×8 (8 trees, 1 kept), the kept tree smaller.
    note = measured_note(_timing([13.0, 13.4, 13.8], nodes=(41.0, 25.0)))
    assert "**Measured here: ×13.4**" in note
    assert "beats the formula" in note
    assert "(2,000 rows × 8 trees" in note and "caches" in note
    assert "(25 nodes on average against 41)" in note
    # a few per cent fewer nodes are not offered as the reason
    note = measured_note(_timing([13.0, 13.4, 13.8], nodes=(26.8, 25.6)))
    assert "beats the formula" in note and "nodes" not in note


def test_measured_below_the_formula_is_explained():
    note = measured_note(_timing([5.0, 6.0, 7.0]))
    assert "falls short of the formula" in note and "does not shrink" in note


def test_measured_around_the_formula_agrees():
    note = measured_note(_timing([7.0, 8.1, 9.0]))
    assert "they agree" in note and "falls short" not in note and "beats" not in note


@pytest.mark.parametrize("n_given,expected", [
    (12597, "on the 12,597 test rows;"),  # NSL-KDD: more than enough, never repeated
    (21, "on the 21 test rows repeated to 2,000;"),
])
def test_test_rows_are_said_repeated_only_when_they_are(n_given, expected):
    n_rows = max(n_given, 2000)
    note = measured_note(_timing([8.0, 8.0, 8.0], n_rows=n_rows, n_given=n_given))
    assert expected in note
    assert ("repeated" in note) == (n_given < 2000)


def test_the_algorithm_note_is_read_from_docs():
    text = doc_section("algorithm.md", "When the costs rise")
    assert text is not None and "decrease steadily" in text
    assert "## Readings of ambiguities" not in text  # stops at the next section
    assert doc_section("algorithm.md", "No such section") is None
    assert doc_section("no-such-file.md", "When the costs rise") is None


def test_a_large_rise_reads_in_plain_per_cent():
    # Like vote's iteration 12 with SDWEC-B (2.00 -> 5.33): 2 -> 5 is +150 %, not "+1.5e+02 %".
    behaviour = convergence.describe(_history([3.0, 2.0, 5.0]))
    assert "iteration 3, 2 → 5, +150 %" in cost_note(behaviour, 3)


def test_a_measurement_over_several_splits_names_its_split():
    # The timing runs on the first split's pool; over 10 splits its row count is that split's.
    note = measured_note(_timing([8.0, 8.0, 8.0], n_rows=2000, n_given=85), splits=10)
    assert "on the first split's 85 test rows repeated to 2,000;" in note
    note = measured_note(_timing([8.0, 8.0, 8.0], n_rows=12597, n_given=12597), splits=1)
    assert "on the 12,597 test rows;" in note
