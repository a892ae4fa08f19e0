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
                            small_pool.prior, repeats=3, min_rows=50)
    assert (result.n_full, result.n_pruned, result.n_rows) == (8, 2, 50)
    # Full ensemble: warm-up + 3 timed runs for every tree; pruned: the same for trees 1 and 5.
    assert [t.calls for t in trees] == [4, 8, 4, 4, 4, 8, 4, 4]
    assert result.status == "pruned" and len(result.ratios) == 3
    assert result.speedup == np.median([f / p for f, p in zip(result.full_runs,
                                                              result.pruned_runs)])
    low, high = result.speedup_interval
    assert min(result.ratios) <= low <= result.speedup <= high <= max(result.ratios)
    assert result.formula_speedup == 4.0  # l / n_pruned


def test_rows_are_repeated_to_the_minimum(small_pool):
    X = small_pool.X_test[:7]
    tiled = timing._tiled(X, 20)
    assert tiled.shape == (20, X.shape[1])
    np.testing.assert_array_equal(tiled[7:14], X)
    assert len(timing._tiled(small_pool.X_test, 1)) == len(small_pool.X_test)  # never fewer


def test_keeping_every_tree_is_the_same_ensemble_and_none_abstains(small_pool):
    trees = [CountingTree(t) for t in small_pool.estimators]
    same = timing.measure(trees, np.full(8, 0.3), small_pool.X_test, small_pool.classes,
                          small_pool.prior, repeats=2, min_rows=10)
    assert same.status == "every member" and same.speedup == 1.0
    assert same.speedup_interval == (1.0, 1.0) and same.pruned_runs == ()
    assert [t.calls for t in trees] == [3] * 8  # only the full ensemble was run
    none = timing.measure(small_pool.estimators, np.zeros(8), small_pool.X_test,
                          small_pool.classes, small_pool.prior, repeats=2, min_rows=10)
    assert none.status == "abstains" and np.isnan(none.speedup)
    assert none.formula_speedup == np.inf


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


def test_table5_times_the_first_l_trees_on_the_training_votes(small_pool, monkeypatch):
    # Record what is timed instead of trusting a clock: the votes handed to the solver must
    # be the first l members' votes on the training split, one cell per (dataset, l).
    seen = []

    def fake_runs(H, y, repeats=1, **params):
        seen.append((H.copy(), np.asarray(y).copy(), repeats))
        return (0.7, 0.4, 0.5)

    monkeypatch.setattr(timing, "weight_finding_runs", fake_runs)
    loads = []

    def load(name, n_trees, seed):
        loads.append((name, n_trees, seed))
        return small_pool

    table = timing.table5(["wine"], [8, 4], seed=3, repeats=2, load=load)
    assert loads == [("wine", 8, 3)]  # one pool of max(sizes) trees
    assert list(table["l"]) == [4, 8] and list(table["seconds"]) == [0.5, 0.5]
    # The runs' spread beside their median: the fastest and the slowest of the three.
    assert list(table["seconds_min"]) == [0.4, 0.4] and list(table["seconds_max"]) == [0.7, 0.7]
    assert list(table["runs"]) == [3, 3]
    assert table["m"].iloc[0] == len(small_pool.y_train)
    votes = np.column_stack([t.predict(small_pool.X_train) for t in small_pool.estimators])
    votes = small_pool.classes[votes.astype(int)]
    for (H, y, repeats), l in zip(seen, (4, 8)):
        np.testing.assert_array_equal(H, votes[:, :l])
        np.testing.assert_array_equal(y, small_pool.y_train)
        assert repeats == 2
    # Table 5 has no column for l = 4 or 8: the paper's cells are empty, its m is known.
    assert table["paper_seconds"].isna().all() and table["paper_m"].iloc[0] == 143


def test_table5_reads_the_papers_cell():
    from sdwec import paper

    assert paper.TABLE5["wine"][1][paper.TABLE5_L.index(100)] == 0.03


def test_table5_needs_a_dataset_and_a_size():
    with pytest.raises(ValueError, match="at least one dataset"):
        timing.table5([], [100])
    with pytest.raises(ValueError, match="at least one dataset"):
        timing.table5(["wine"], [])
