"""Algorithm 1 over its iterations: the recorded weights, and where the costs rise."""

import numpy as np
import pytest

from harness.literal import literal_sdwec
from sdwec import convergence, solver
from sdwec.solver import IterationRecord


def _record(n, cost, w=None):
    return IterationRecord(iteration=n, nonconvex_cost=cost, relaxed_cost=cost,
                           n_selected=0 if w is None else int(np.count_nonzero(w)),
                           weights=None if w is None else np.asarray(w, dtype=float))


def test_history_weights_are_each_iterations_weights():
    rng = np.random.default_rng(0)
    H = rng.choice([-1.0, 1.0], size=(40, 12))
    y = rng.choice([-1.0, 1.0], size=40)
    sol = solver.solve(H, y, lam=5.0, iterations=6, threshold="none")
    assert len(sol.history) == 6
    np.testing.assert_array_equal(sol.history[-1].weights, sol.raw_weights)
    for record in sol.history:
        # Stopping after n iterations gives the n-th record's weights (independent run).
        shorter = solver.solve(H, y, lam=5.0, iterations=record.iteration, threshold="none")
        np.testing.assert_allclose(record.weights, shorter.raw_weights, rtol=0, atol=1e-12)
        assert record.n_selected == np.count_nonzero(record.weights)
    literal = literal_sdwec(H, y, 5.0, 15.0, 15.0, 1.0, 6)
    np.testing.assert_allclose(sol.history[-1].weights, literal, rtol=0, atol=1e-9)
    with pytest.raises(ValueError):
        sol.history[0].weights[0] = 1.0  # read-only: the history cannot be altered


def test_line15_thresholds_match_solve():
    rng = np.random.default_rng(1)
    H = rng.choice([-1.0, 1.0], size=(30, 8))
    y = rng.choice([-1.0, 1.0], size=30)
    for rule in solver.THRESHOLDS:
        sol = solver.solve(H, y, lam=3.0, threshold=rule)
        scalar, per_weight = solver.line15_thresholds(sol.raw_weights, 15.0, 15.0, 1.0, rule)
        np.testing.assert_array_equal(per_weight, sol.thresholds)
        np.testing.assert_array_equal(np.where(sol.raw_weights > per_weight,
                                               sol.raw_weights, 0.0), sol.weights)
    with pytest.raises(ValueError, match="threshold must be one of"):
        solver.line15_thresholds(np.ones(3), 15.0, 15.0, 1.0, "magic")


def test_describe_finds_every_rise_and_the_largest():
    history = [_record(1, 4.0, [1, 1, 1]), _record(2, 3.0, [2, 0, 1]),
               _record(3, 3.5, [2, 0.5, 1]), _record(4, 3.5, [3, 0.5, 1]),
               _record(5, 6.0, [4, 0.5, 0])]
    b = convergence.describe(history)
    assert [(r.iteration, r.before, r.after) for r in b.rises] == [(3, 3.0, 3.5), (5, 3.5, 6.0)]
    assert b.largest_rise.iteration == 5 and b.largest_rise.amount == 2.5
    assert not b.decreasing
    np.testing.assert_array_equal(b.weight_sums, [3, 3, 3.5, 4.5, 4.5])
    np.testing.assert_array_equal(b.flips, [0, 1, 1, 0, 1])  # 2nd: w2 off; 3rd: on; 5th: w3 off
    assert b.scale_grows


def test_describe_a_steady_decrease_and_rounding():
    b = convergence.describe([_record(1, 2.0), _record(2, 1.5), _record(3, 1.5 + 1e-13)])
    assert b.decreasing and b.largest_rise is None
    assert np.isnan(b.weight_sums).all() and not b.scale_grows  # weights not recorded
