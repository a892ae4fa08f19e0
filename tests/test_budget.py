"""The cost estimate of a pool (sdwec.budget) and the row budget per tree it chooses, with the
pool's ``max_samples`` (sdwec.pool) that carries it out."""

import math

import numpy as np
import pytest

from sdwec import budget, pool
from sdwec.votes import compress_votes


def _data(n=600, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1, -1)
    return X, y


# --------------------------------------------------------------------------- estimate


def test_estimate_with_a_measured_rate_matches_a_hand_count():
    rate = 1e-7
    est = budget.estimate_pool(1000, 2, 10, max_samples=100, rate=rate)
    # 800 training rows, 200 held out; each tree grows on 100 rows, passes over 800 rows
    # and predicts 200 held-out + 800 out-of-bag rows; plus the single tree.
    grow = rate * 100 * math.log2(100) * 2
    per_tree = grow + 5e-9 * 800 + 130e-9 * (200 + 800)
    middle = 10 * per_tree + grow
    assert est.seconds == pytest.approx((0.8 * middle, 2.5 * middle))
    assert est.max_samples == 100


def test_estimate_grows_with_rows_features_and_trees_and_shrinks_with_a_budget():
    base = budget.estimate_pool(100_000, 10, 200)
    assert base.seconds[0] < base.seconds[1]
    for bigger in (budget.estimate_pool(200_000, 10, 200), budget.estimate_pool(100_000, 20, 200),
                   budget.estimate_pool(100_000, 10, 400)):
        assert bigger.seconds[0] > base.seconds[0] and bigger.seconds[1] > base.seconds[1]
        assert bigger.peak_bytes >= base.peak_bytes
    cut = budget.estimate_pool(100_000, 10, 200, max_samples=5_000)
    assert cut.seconds[1] < base.seconds[1] / 5


def test_budget_is_capped_at_the_training_rows():
    assert budget.estimate_pool(1000, 3, 10, max_samples=10**9).max_samples == 800


def test_peak_memory_counts_the_held_out_votes():
    # 1.2M rows: 240,000 held-out rows x 200 trees of int64 labels alone are 384 MB.
    est = budget.estimate_pool(1_200_000, 10, 200, max_samples=5_000)
    assert est.peak_bytes > 240_000 * 200 * 8
    assert est.peak_bytes < budget.MEMORY_BUDGET_BYTES
    assert not budget.estimate_pool(5_000_000, 10, 200, max_samples=1_000).fits(float("inf"))


def test_row_budget_is_none_when_the_full_pool_fits():
    assert budget.row_budget(300, 5, 200) is None


def test_row_budget_is_the_largest_step_that_fits():
    m = budget.row_budget(1_200_000, 10, 200, 60.0)
    assert m is not None and budget.MIN_ROW_BUDGET <= m < 960_000
    assert budget.estimate_pool(1_200_000, 10, 200, m).seconds[1] <= 60.0
    steps = [1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000]
    above = steps[steps.index(m) + 1]
    assert budget.estimate_pool(1_200_000, 10, 200, above).seconds[1] > 60.0


def test_row_budget_never_goes_below_the_minimum():
    assert budget.row_budget(50_000_000, 10, 1000, 1.0) == budget.MIN_ROW_BUDGET


def test_trees_within_picks_the_largest_fitting_size():
    sizes = (10, 20, 50, 100, 200)
    l = budget.trees_within(100_000, 10, sizes, 60.0)
    assert l in sizes
    assert budget.estimate_pool(100_000, 10, l).seconds[1] <= 60.0
    if l != sizes[-1]:
        assert budget.estimate_pool(100_000, 10, sizes[sizes.index(l) + 1]).seconds[1] > 60.0
    assert budget.trees_within(10_000_000, 10, sizes, 60.0) is None


def test_measure_rate_is_a_positive_time_per_unit():
    X, y = _data()
    rate = budget.measure_rate(X, y, rows=500)
    assert 0 < rate < 1e-3


# --------------------------------------------------------------------------- pool


def test_each_tree_draws_the_row_budget_and_held_out_rows_stay_whole():
    X, y = _data()
    p = pool.build_pool(X, y, n_trees=6, seed=1, max_samples=50)
    n_train = len(p.y_train)
    assert n_train + len(p.y_val) + len(p.y_test) == len(y)
    assert p.meta["max_samples"] == 50
    in_bag = p.in_bag
    # 50 draws with replacement: at most 50 distinct rows, and nearly all of them distinct.
    assert (in_bag.sum(axis=0) <= 50).all() and (in_bag.sum(axis=0) >= 40).all()
    for tree in p.estimators:
        assert tree.tree_.weighted_n_node_samples[0] == 50
    assert p.single_tree.tree_.n_node_samples[0] == 50
    # Out-of-bag: every training row (fewer than the cap), voted where not drawn.
    assert p.votes("oob").counts.sum() == n_train


def test_out_of_bag_rows_are_capped_with_a_budget(monkeypatch):
    monkeypatch.setattr(pool, "OOB_ROWS_WITH_BUDGET", 123)
    X, y = _data()
    assert pool.build_pool(X, y, n_trees=4, max_samples=50).votes("oob").counts.sum() == 123
    assert pool.build_pool(X, y, n_trees=4).votes("oob").counts.sum() == 480


def test_budget_leaves_the_split_and_without_it_the_pool_unchanged():
    X, y = _data()
    full = pool.build_pool(X, y, n_trees=4, seed=3)
    cut = pool.build_pool(X, y, n_trees=4, seed=3, max_samples=40)
    assert np.array_equal(full.y_val, cut.y_val) and np.array_equal(full.X_test, cut.X_test)
    assert full.meta["max_samples"] is None
    assert full.in_bag.sum(axis=0).max() > 40


def test_chunked_votes_equal_one_compression(monkeypatch):
    monkeypatch.setattr(pool, "VOTES_CHUNK", 7)
    X, y = _data(n=400)
    p = pool.build_pool(X, y, n_trees=5, seed=2)
    P_train = pool.prediction_matrix(p.estimators, p.X_train, p.classes)
    whole = compress_votes(P_train, p.y_train, p.classes, voted=~p.in_bag)
    for split, expected in (("oob", whole), ("val", compress_votes(p.P_val, p.y_val)),
                            ("test", compress_votes(p.P_test, p.y_test))):
        got = p.votes(split)
        for name in ("codes", "labels", "counts", "classes"):
            assert np.array_equal(getattr(got, name), getattr(expected, name)), (split, name)


def test_pool_key_without_a_budget_keeps_the_old_cache_key():
    key = pool.PoolKey("wine", "binary", 10, 2)
    assert "max_samples" not in key._cache_key()
    assert key._label() == "pool-wine-binary-l10-s2"
    cut = pool.PoolKey.for_dataset("wine", n_trees=10, seed=2, max_samples=5000)
    assert cut != key and cut._cache_key()["max_samples"] == 5000
    assert cut._label() == "pool-wine-binary-l10-s2-r5000"
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError):
            pool.PoolKey("wine", "binary", max_samples=bad)


def test_load_pool_trains_and_caches_a_budgeted_pool(tmp_path, monkeypatch):
    monkeypatch.setenv(pool.CACHE_ENV, str(tmp_path))
    key = pool.PoolKey.for_dataset("wine", n_trees=4, max_samples=30)
    first = pool.load_pool(key)
    assert first.meta["max_samples"] == 30
    assert pool.is_cached(key) and not pool.is_cached(pool.PoolKey.for_dataset("wine",
                                                                               n_trees=4))


def test_wait_reads_as_seconds_or_minutes():
    wait = budget.wait_text
    assert budget.PoolEstimate(1, 1, 1, None, (4.6, 19.5), 0).wait == "5–20 s"
    assert wait(4.6, 19.5) == "5–20 s"
    assert wait(40, 170) == "40 s–3 min"
    assert wait(120, 540) == "2–9 min"
    assert wait(0.01, 0.2) == "<1 s"
    # Three splits' pools: three times each end, 12–57 s.
    assert budget.PoolEstimate(1, 1, 1, None, (4.0, 19.0), 0).wait_for(3) == "12–57 s"
    assert wait(0.3, 0.9) == "1 s"  # not "1–1 s"
    assert wait(3.6, 4.4) == "4 s"
    assert wait(95, 140) == "2 min"  # 1.6 and 2.3 min


def test_no_budget_for_a_split_smaller_than_the_minimum():
    assert budget.row_budget(1_000, 10, 1000, 1e-9) is None


def test_prediction_matrices_hold_labels_in_the_smallest_integer_type():
    X, y = _data()
    p = pool.build_pool(X, y, n_trees=3)
    assert p.P_val.dtype == np.int8 and set(np.unique(p.P_val)) <= {-1, 1}
    assert np.array_equal(p.P_test, pool.prediction_matrix(p.estimators, p.X_test, p.classes))
    assert pool.compact_labels(np.array([0, 300])).dtype == np.int16
    assert pool.compact_labels(np.array(["a", "b"], dtype=object)).dtype == object
    smaller = budget.estimate_pool(1_200_000, 10, 200, 5_000, label_bytes=1)
    larger = budget.estimate_pool(1_200_000, 10, 200, 5_000, label_bytes=8)
    assert larger.peak_bytes - smaller.peak_bytes == 240_000 * 200 * 7


def test_solve_time_grows_with_the_square_of_the_trees_not_with_the_budget():
    a = budget.estimate_pool(1_200_000, 10, 200)
    assert a.solve_seconds == budget.estimate_pool(1_200_000, 10, 200, 5_000).solve_seconds
    half = budget.estimate_pool(1_200_000, 10, 100).solve_seconds
    assert half[1] == pytest.approx(a.solve_seconds[1] / 4)
    # 120,000 validation rows x 200^2 at 1.2e-8 s: 57.6 s at the high end
    assert a.solve_seconds[1] == pytest.approx(120_000 * 200**2 * 1.2e-8)


def test_full_bootstraps_of_a_million_rows_pass_the_memory_budget_a_row_budget_does_not():
    # 200 fully grown trees on 960,000 drawn rows each: at 0.5 nodes of 80 bytes and one
    # int64 index per drawn row, 200 x 960,000 x 48 bytes = 9.2 GB before anything else.
    full = budget.estimate_pool(1_200_000, 10, 200, label_bytes=1)
    assert full.peak_bytes > 200 * 960_000 * 48 > budget.MEMORY_BUDGET_BYTES
    assert budget.estimate_pool(1_200_000, 10, 200, 5_000, label_bytes=1).fits(float("inf"))
