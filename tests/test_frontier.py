"""Accuracy-vs-sparsity sweeps, the peers' curves and the Pareto front."""

import numpy as np
import pandas as pd
import pytest

from sdwec import combiners, datasets, frontier, methods, pool, solver


@pytest.fixture(scope="module")
def small_pool():
    data = datasets.load("sonar", "binary")
    return pool.build_pool(data.X, data.y, n_trees=15, seed=0)


def test_sweep_rows_match_the_solver(small_pool):
    lams = [0.01, 1.0, 100.0]
    df = frontier.sweep(small_pool, lams)
    assert list(df.columns[:len(frontier.COLUMNS)]) == frontier.COLUMNS
    assert len(df) == 3 and list(df["lam"]) == lams
    for _, row in df.iterrows():
        w = solver.solve(small_pool.votes("val"), lam=row["lam"], beta=15, gamma=15,
                         eps=1).weights
        assert row["n_selected"] == np.count_nonzero(w)
        assert row["sparsity"] == pytest.approx(1 - np.count_nonzero(w) / 15)
        assert row["test_accuracy"] == pytest.approx(combiners.accuracy(
            w, small_pool.P_test, small_pool.y_test, small_pool.classes, small_pool.prior))
        assert row["val_accuracy"] == pytest.approx(combiners.accuracy(
            w, small_pool.P_val, small_pool.y_val, small_pool.classes, small_pool.prior))
        assert row["abstains"] == (np.count_nonzero(w) == 0)
        # SDWEC-select: the same trees, one vote each.
        support = (w != 0).astype(float)
        assert row["select_test_accuracy"] == pytest.approx(combiners.accuracy(
            support, small_pool.P_test, small_pool.y_test, small_pool.classes, small_pool.prior))


def test_sweep_second_parameter_is_a_grid(small_pool):
    df = frontier.sweep(small_pool, [0.1, 10.0], second=("beta", [5.0, 25.0]))
    assert len(df) == 4
    assert set(zip(df["lam"], df["beta"])) == {(0.1, 5.0), (10.0, 5.0), (0.1, 25.0), (10.0, 25.0)}
    with pytest.raises(ValueError, match="second"):
        frontier.sweep(small_pool, [1.0], second=("delta", [1.0]))


def test_peers_points_and_curves(small_pool):
    df = frontier.peers(small_pool, random_draws=3, lasso_alphas=10)
    # Every method of the registry drawn on the frontier, and nothing else.
    assert set(df["method"]) == {m.name for m in methods.registered() if m.frontier}
    counts = df["method"].value_counts()
    for method in ("bagging", "WMV", "QFWEC", "NNLS", "single"):
        assert counts[method] == 1
    for method in ("reduce-error", "orientation", "random"):
        assert counts[method] == 15
        assert sorted(df.loc[df["method"] == method, "n_selected"]) == list(range(1, 16))
    assert counts["lasso"] == 10
    bag = df[df["method"] == "bagging"].iloc[0]
    assert bag["sparsity"] == 0 and bag["test_accuracy"] == pytest.approx(combiners.accuracy(
        np.ones(15), small_pool.P_test, small_pool.y_test, small_pool.classes, small_pool.prior))
    full = df[(df["method"] == "reduce-error") & (df["n_selected"] == 15)].iloc[0]
    assert full["test_accuracy"] == pytest.approx(bag["test_accuracy"])  # all trees = bagging
    single = df[df["method"] == "single"].iloc[0]
    assert single["test_accuracy"] == np.mean(small_pool.single_test == small_pool.y_test)
    assert df["test_accuracy"].between(0, 1).all() and df["sparsity"].between(0, 1).all()


def test_pareto_front_by_hand():
    df = pd.DataFrame({"method": list("abcdef"),
                       "sparsity": [0.0, 0.5, 0.5, 0.9, 0.9, 0.2],
                       "test_accuracy": [0.95, 0.93, 0.90, 0.80, 0.80, 0.94]})
    front = frontier.pareto(df, "test_accuracy")
    # c is beaten by b, e duplicates d (first kept), f is dominated by nothing: 0.2 > 0.0
    assert list(front["method"]) == ["a", "f", "b", "d"]
    assert list(front["sparsity"]) == [0.0, 0.2, 0.5, 0.9]
    assert frontier.pareto(df.iloc[:0], "test_accuracy").empty
    # Chosen on validation by default; an abstaining row (0 trees) never joins the front.
    df["val_accuracy"] = [0.95, 0.93, 0.90, 0.80, 0.80, 0.94]
    df["abstains"] = False
    abstain = pd.DataFrame([{"method": "g", "sparsity": 1.0, "test_accuracy": 0.7,
                             "val_accuracy": 0.7, "abstains": True}])
    assert list(frontier.pareto(pd.concat([df, abstain]))["method"]) == ["a", "f", "b", "d"]


def test_the_out_of_bag_peers_are_apart(small_pool):
    paper = frontier.paper_peers()
    assert not set(paper) & set(frontier.OOB_PEERS)
    df = frontier.peers(small_pool, random_draws=2, lasso_alphas=5, names=paper)
    assert set(df["method"]) == set(paper) and "bagging" in paper


def _splits_with_one_abstaining():
    """Three splits of a two-λ sweep where split 2 keeps no tree at the first λ."""
    frames = []
    for split in range(3):
        n = np.array([0 if split == 1 else 3, 8])
        frames.append(frontier._frame("SDWEC", ["λ=0.1", "λ=1"], [0.1, 1.0], n, 10,
                                      [0.9, 0.95 + 0.02 * split], [0.8, 0.9 + 0.05 * split]))
    return frames


def test_drawable_rows_are_those_where_some_split_keeps_a_tree():
    import pandas as pd

    over = pd.DataFrame({"abstaining_splits": [3, 1, 0], "splits": [3, 3, 3]})
    assert list(frontier.drawable(over).index) == [1, 2]
    one = pd.DataFrame({"abstains": [True, False]})
    assert list(frontier.drawable(one).index) == [1]
