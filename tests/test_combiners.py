"""Combiners and the weighted plurality vote, against hand-derived answers."""

import numpy as np
import pytest

from sdwec import combiners as cb
from sdwec import solver

CLASSES = np.array([-1, 1])


def test_weighted_plurality_vote_by_hand():
    P = np.array([[1, 1, -1],
                  [1, -1, -1],
                  [-1, -1, 1]])
    # scores row 0: +1 -> 1 + 2 = 3, -1 -> 4: predicts -1
    assert list(cb.vote([1, 2, 4], P, CLASSES)) == [-1, -1, 1]
    assert list(cb.vote([1, 1, 1], P, CLASSES)) == [1, -1, -1]
    # a negative weight counts against the member's class
    assert list(cb.vote([-1, 0, 0], P, CLASSES)) == [-1, -1, 1]


def test_ties_and_abstention_go_to_the_prior():
    P = np.array([[1, -1], [1, -1]])
    assert list(cb.vote([1, 1], P, CLASSES, prior=[1, -1])) == [1, 1]
    assert list(cb.vote([1, 1], P, CLASSES, prior=[-1, 1])) == [-1, -1]
    assert list(cb.vote([0, 0], P, CLASSES, prior=[1, -1])) == [1, 1]
    assert list(cb.vote([0, 0], P, CLASSES)) == [-1, -1]  # no prior: first sorted class
    assert cb.abstains([0.0, 0.0]) and not cb.abstains([0.0, 1e-9])


def test_multiclass_plurality_with_string_labels():
    classes = np.array(["a", "b", "c"])
    P = np.array([["a", "b", "c"], ["c", "c", "a"], ["b", "a", "c"]])
    # row 0: a=1, b=1, c=3 -> c; row 1: c=2, a=3 -> a; row 2: b=1, a=1, c=3 -> c
    assert list(cb.vote([1, 1, 3], P, classes, prior=["b", "c", "a"])) == ["c", "a", "c"]
    # row 1 with weights 1, 2, 3: c=3, a=3 tie -> prior b, c, a -> c
    assert list(cb.vote([1, 2, 3], P, classes, prior=["b", "c", "a"]))[1] == "c"
    # equal weights: every row ties three ways (or 2-1) -> prior order
    assert list(cb.vote([1, 1, 1], P, classes, prior=["b", "a", "c"])) == ["b", "c", "b"]


def test_vote_rejects_unknown_labels_and_wrong_lengths():
    with pytest.raises(ValueError, match="not among classes"):
        cb.vote([1], np.array([[2]]), CLASSES)
    with pytest.raises(ValueError, match="one entry per column"):
        cb.vote([1, 1], np.array([[1]]), CLASSES)


def random_votes(m=300, l=15, K=3, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(K, size=m)
    P = np.where(rng.random((m, l)) < 0.6, y[:, None], rng.integers(K, size=(m, l)))
    return P, y, np.arange(K)


def test_compressed_votes_score_like_the_raw_matrix():
    P, y, classes = random_votes()
    v = cb.compress_votes(P, y, classes)
    assert v.m == len(y) and len(v.counts) < len(y)
    assert len({tuple(r) + (lab,) for r, lab in zip(v.codes, v.labels)}) == len(v.counts)
    rng = np.random.default_rng(1)
    W = rng.random((P.shape[1], 7)) * (rng.random((P.shape[1], 7)) < 0.5)
    W[:, 0] = 0
    batch = cb.accuracies(W, v, prior=[2, 0, 1])
    each = [cb.accuracy(W[:, j], P, y, classes, prior=[2, 0, 1]) for j in range(7)]
    assert np.allclose(batch, each)
    assert each[0] == np.mean(y == 2)  # abstention predicts the first prior class


def test_wmv_log_odds_of_known_accuracies():
    y = np.ones(10, dtype=int)
    P = np.ones((10, 4), dtype=int)
    P[:1, 0] = -1    # 90 % right
    P[:3, 1] = -1    # 70 %
    P[:5, 2] = -1    # 50 %
    # column 3 is perfect: clipped to 1 - 0.5 / 10 = 0.95
    w = cb.wmv(P, y, CLASSES)
    assert np.allclose(w, [np.log(9), np.log(7 / 3), 0.0, np.log(19)])


def test_majority_gives_every_member_one_vote():
    P, y, classes = random_votes(l=6)
    assert np.array_equal(cb.majority(P, y, classes), np.ones(6))


def test_reduce_error_starts_with_the_perfect_tree():
    rng = np.random.default_rng(0)
    y = rng.choice([-1, 1], size=50)
    P = np.where(rng.random((50, 8)) < 0.7, y[:, None], -y[:, None])
    P[:, 5] = y  # the only perfect member
    order = cb.reduce_error_order(P, y, CLASSES, prior=[1, -1])
    assert order[0] == 5 and sorted(order) == list(range(8))
    curve = cb.accuracies(cb.ordered_weights(order), cb.compress_votes(P, y, CLASSES), [1, -1])
    assert curve[0] == 1.0


def test_reduce_error_greedy_step_by_hand():
    y = np.array([1, 1, 1, 1])
    P = np.array([[1, 1, -1],
                  [1, -1, 1],
                  [-1, 1, 1],
                  [-1, -1, 1]])
    # alone: 50 %, 50 %, 75 % -> member 2 first; then {2,0}: ties at rows 2,3 go to prior +1
    # -> 100 % ; {2,1}: 100 % too -> lowest index, member 0
    assert list(cb.reduce_error_order(P, y, CLASSES, prior=[1, -1])) == [2, 0, 1]


def test_orientation_order_by_hand():
    # correctness signatures t0=[1,1,1,-1], t1=[1,1,-1,-1], t2=[1,1,1,1]; ensemble [3,3,1,-1];
    # reference = 1 - (6/20) * ensemble = [.1,.1,.7,1.3]; dot products -0.4, -1.8, 2.2
    y = np.ones(4, dtype=int)
    P = np.array([[1, 1, 1], [1, 1, 1], [1, -1, 1], [-1, -1, 1]])
    assert list(cb.orientation_order(P, y, CLASSES)) == [2, 0, 1]


def test_ordered_weights_keep_prefixes():
    W = cb.ordered_weights([2, 0, 1], [1, 2, 3])
    assert np.array_equal(W, [[0, 1, 1], [0, 0, 1], [1, 1, 1]])


def test_random_subsets_are_seeded_and_sized():
    a, b = cb.random_subset(20, 7, seed=3), cb.random_subset(20, 7, seed=3)
    assert a.sum() == 7 and np.array_equal(a, b)
    assert not np.array_equal(a, cb.random_subset(20, 7, seed=4))
    with pytest.raises(ValueError):
        cb.random_subset(5, 6, 0)
    P, y, classes = random_votes(l=10)
    v = cb.compress_votes(P, y, classes)
    curve = cb.random_subset_curve(v, [1, 10], draws=5, seed=0)
    # every draw of size l is the whole pool: bagging's accuracy
    assert curve[1] == pytest.approx(cb.accuracies(np.ones(10), v))
    assert np.array_equal(curve, cb.random_subset_curve(v, [1, 10], draws=5, seed=0))


def test_nnls_finds_the_exact_fit():
    # rows force w1 = w2 = 0 and w0 = 1 (see docs/combiners.md for the C w = 1 formulation)
    y = np.ones(3, dtype=int)
    P = np.array([[1, 1, -1], [1, -1, 1], [1, -1, -1]])
    assert np.allclose(cb.nnls_stacking(P, y, CLASSES), [1, 0, 0], atol=1e-12)


def test_qfwec_sums_to_one_inside_the_box():
    y = np.ones(6, dtype=int)
    P = np.column_stack([np.ones(6), -np.ones(6)]).astype(int)  # perfect, always wrong
    w = cb.qfwec(P, y, CLASSES)
    assert w.sum() == pytest.approx(1.0)
    assert np.allclose(w, [1.0, 0.0], atol=1e-4)  # C w = 2 w0 - 1 = 1
    P, y, classes = random_votes(l=30, seed=2)
    w = cb.qfwec(P, y, classes)
    assert w.sum() == pytest.approx(1.0) and np.all(np.abs(w) <= 1 + 1e-12)


def test_qfwec_box_is_enforced_when_the_unconstrained_optimum_leaves_it():
    # C w = [w0+w1, w0-w1, ...]: optimum drives weights far apart; the box must hold
    rng = np.random.default_rng(5)
    y = np.ones(40, dtype=int)
    P = np.where(rng.random((40, 5)) < 0.55, 1, -1)
    w = cb.qfwec(P, y, CLASSES, bound=0.3)
    assert w.sum() == pytest.approx(1.0, abs=1e-8) and np.all(np.abs(w) <= 0.3 + 1e-9)


def test_lasso_path_starts_empty_and_stays_non_negative():
    P, y, classes = random_votes(l=12, K=2, seed=3)
    alphas, W = cb.lasso_path(P, y, classes, n_alphas=20)
    assert np.all(np.diff(alphas) < 0) and W.shape == (12, 20)
    assert np.all(W[:, 0] == 0) and np.all(W >= 0) and np.count_nonzero(W[:, -1]) > 0


def test_sdwec_wraps_the_solver_on_the_correctness_matrix():
    rng = np.random.default_rng(4)
    y = rng.choice([-1, 1], size=60)
    P = np.where(rng.random((60, 12)) < 0.7, y[:, None], -y[:, None])
    params = dict(lam=10.0, beta=15.0, gamma=15.0, eps=1.0)
    ref = solver.solve(P.astype(float), y.astype(float), **params).weights
    # The same correctness table whichever way the votes come: identical weights.
    assert cb.sdwec(P, y, CLASSES, **params).tobytes() == ref.tobytes()
    assert cb.sdwec(cb.compress_votes(P, y, CLASSES), **params).tobytes() == ref.tobytes()
    assert cb.sdwec(solver.compress(P, y), **params).tobytes() == ref.tobytes()
    assert np.array_equal(cb.sdwec_select(P, y, CLASSES, **params), (ref > 0).astype(float))
    grid = [dict(params, lam=lam) for lam in (0.1, 10.0)]
    W = cb.sdwec_grid(cb.compress_votes(P, y, CLASSES), grid)
    assert W.shape == (12, 2) and W[:, 1].tobytes() == ref.tobytes()


def test_every_combiner_handles_multiclass():
    P, y, classes = random_votes(l=9, K=3, seed=6)
    v = cb.compress_votes(P, y, classes)
    for weights in (cb.majority(v), cb.wmv(v), cb.qfwec(v), cb.nnls_stacking(v),
                    cb.sdwec(v, lam=10, beta=15, gamma=15, eps=1), cb.lasso_path(v)[1][:, -1]):
        assert weights.shape == (9,) and np.all(np.isfinite(weights))
        assert 0 <= cb.accuracies(weights, v) <= 1
    assert sorted(cb.reduce_error_order(v)) == list(range(9))
    assert sorted(cb.orientation_order(v)) == list(range(9))


def slow_reduce_error(P, y, classes, prior):
    """The definition, one candidate at a time."""
    order, left = [], list(range(P.shape[1]))
    while left:
        accs = []
        for j in left:
            w = np.zeros(P.shape[1])
            w[order + [j]] = 1
            accs.append(cb.accuracy(w, P, y, classes, prior))
        order.append(left.pop(int(np.argmax(accs))))
    return order


@pytest.mark.parametrize("K", [2, 3])
def test_fast_reduce_error_matches_the_definition(K):
    P, y, classes = random_votes(m=80, l=12, K=K, seed=K)
    prior = classes[::-1]
    assert list(cb.reduce_error_order(P, y, classes, prior)) == slow_reduce_error(P, y, classes, prior)


@pytest.mark.parametrize("K", [2, 4])
def test_ordered_curve_matches_scoring_each_prefix(K):
    P, y, classes = random_votes(m=120, l=10, K=K, seed=7)
    v = cb.compress_votes(P, y, classes)
    order = np.random.default_rng(0).permutation(10)
    prior = np.roll(classes, 1)
    expected = cb.accuracies(cb.ordered_weights(order, np.arange(0, 11)), v, prior)
    assert np.allclose(cb.ordered_curve(order, v, prior, np.arange(0, 11)), expected)


@pytest.mark.parametrize("K", [2, 3])
def test_reduce_error_on_out_of_bag_votes_matches_the_definition(K):
    """Members that did not vote on a row (0 in the correctness matrix) add nothing there."""
    P, y, classes = random_votes(m=90, l=10, K=K, seed=10 + K)
    voted = np.random.default_rng(K).random(P.shape) < 0.4
    v = cb.compress_votes(P, y, classes, voted=voted)
    prior = classes[::-1]
    order, left = [], list(range(10))
    while left:  # the definition, on the votes as they are
        accs = [cb.accuracies(np.isin(np.arange(10), order + [j]).astype(float), v, prior)
                for j in left]
        order.append(left.pop(int(np.argmax(accs))))
    assert list(cb.reduce_error_order(v, prior=prior)) == order
    assert list(cb.reduce_error_order(v, prior=prior, n_steps=4)) == order[:4]


def test_margin_distance_order_by_its_definition():
    P, y, classes = random_votes(m=70, l=9, K=3, seed=5)
    v = cb.compress_votes(P, y, classes, voted=np.random.default_rng(0).random(P.shape) < 0.7)
    C, counts = v.correctness, v.counts
    order, total = [], np.zeros(len(counts))
    for step in range(1, 10):  # the mean signature nearest to (0.075, ..., 0.075), squared
        left = [j for j in range(9) if j not in order]
        dist = [counts @ ((total + C[:, j]) / step - 0.075) ** 2 for j in left]
        order.append(left[int(np.argmin(dist))])
        total += C[:, order[-1]]
    assert list(cb.margin_distance_order(v)) == order


def test_reduce_error_goes_on_from_given_members():
    P, y, classes = random_votes(m=90, l=10, K=3, seed=4)
    v = cb.compress_votes(P, y, classes)
    order, left = [7, 2], [j for j in range(10) if j not in (7, 2)]
    while left:
        accs = [cb.accuracies(np.isin(np.arange(10), order + [j]).astype(float), v)
                for j in left]
        order.append(left.pop(int(np.argmax(accs))))
    assert list(cb.reduce_error_order(v, start=[7, 2])) == order
    assert list(cb.reduce_error_order(v, start=[7, 2], n_steps=5)) == order[:5]
