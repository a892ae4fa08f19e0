"""Measured prediction time: what is timed, not how fast it is (no timed assertions)."""

import numpy as np
import pytest

from sdwec import datasets, timing
from sdwec.pool import build_pool


class CountingTree:
    """A fitted tree that counts how often it is asked to predict (to find the rows' leaves,
    which is how ``prediction_matrix`` asks a tree)."""

    def __init__(self, tree):
        self.classes_, self.calls = tree.classes_, 0
        structure = tree.tree_
        owner = self

        class Structure:
            value = structure.value

            @staticmethod
            def apply(X):
                owner.calls += 1
                return structure.apply(X)

        self.tree_ = Structure()


@pytest.fixture(scope="module")
def small_pool():
    data = datasets.load("wine", "binary")
    return build_pool(data.X, data.y, n_trees=8, seed=0)


def test_only_selected_members_are_evaluated(small_pool):
    trees = [CountingTree(t) for t in small_pool.estimators]
    weights = np.zeros(8)
    weights[[1, 5]] = [0.5, 2.0]
    result = timing.measure(trees, weights, small_pool.X_test, small_pool.classes,
                            small_pool.prior, repeats=3)
    assert (result.n_full, result.n_pruned, result.n_rows) == (8, 2, len(small_pool.X_test))
    # Full ensemble: warm-up + 3 timed runs for every tree; pruned: the same for trees 1 and 5.
    assert [t.calls for t in trees] == [4, 8, 4, 4, 4, 8, 4, 4]
    assert result.full_seconds > 0 and result.pruned_seconds > 0
    assert result.speedup == result.full_seconds / result.pruned_seconds


def test_prediction_seconds_counts_members(small_pool):
    seconds, n = timing.prediction_seconds(small_pool.estimators, np.r_[np.ones(3), np.zeros(5)],
                                           small_pool.X_test, small_pool.classes,
                                           small_pool.prior)
    assert n == 3 and seconds > 0


@pytest.mark.parametrize("weights,repeats,message", [(np.ones(3), 1, "one weight per estimator"),
                                                     (np.ones(8), 0, "repeats")])
def test_bad_arguments(small_pool, weights, repeats, message):
    with pytest.raises(ValueError, match=message):
        timing.measure(small_pool.estimators, weights, small_pool.X_test, small_pool.classes,
                       small_pool.prior, repeats=repeats)
    with pytest.raises(ValueError, match=message):
        timing.prediction_seconds(small_pool.estimators, weights, small_pool.X_test,
                                  small_pool.classes, small_pool.prior, repeats=repeats)
