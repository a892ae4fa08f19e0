"""The one compressed form of votes, with members that did not vote, against hand-made answers."""

import pickle

import numpy as np
import pytest

from sdwec import combiners as cb
from sdwec.votes import NO_VOTE, Votes, compress, compress_votes, stack_votes

CLASSES = np.array(["a", "b", "c"])


def as_rows(votes):
    """The votes as a sorted list of (codes, label, count) for order-free comparison."""
    return sorted((tuple(c), int(lab), int(n))
                  for c, lab, n in zip(votes.codes.tolist(), votes.labels, votes.counts))


def test_compress_votes_marks_members_that_did_not_vote():
    P = np.array([["a", "b"], ["a", "b"], ["a", "c"], ["c", "c"]])
    y = np.array(["a", "a", "a", "b"])
    voted = np.array([[True, True], [True, True], [True, False], [False, True]])
    v = compress_votes(P, y, CLASSES, voted=voted)
    # Row 3's "c" of member 1 is ignored: it is the same row as (a, -) with label a.
    assert as_rows(v) == [((-1, 2), 1, 1), ((0, -1), 0, 1), ((0, 1), 0, 2)]
    assert v.m == 4 and v.n_members == 2
    by_row = {tuple(c): tuple(r) for c, r in zip(v.codes.tolist(), v.correctness.tolist())}
    assert by_row == {(0, 1): (1.0, -1.0), (0, -1): (1.0, 0.0), (-1, 2): (0.0, -1.0)}


def test_correctness_form_merges_rows_by_summing_counts():
    # "all vote a, label a" and "all vote b, label b" are different votes, same correctness.
    P = np.array([["a", "a"], ["b", "b"], ["b", "b"], ["a", "c"]])
    y = np.array(["a", "b", "b", "a"])
    v = compress_votes(P, y, CLASSES)
    assert len(v.counts) == 3
    form = v.correctness_form
    got = sorted(zip(map(tuple, form.correctness.tolist()), form.counts.tolist()))
    assert got == [((1.0, -1.0), 1), ((1.0, 1.0), 3)]
    assert form.m == v.m and form.correctness_form is form
    np.testing.assert_array_equal(form.classes, [-1, 1])


def test_compress_of_a_pm1_matrix_with_zeros_by_hand():
    H = np.array([[1, 0], [1, 0], [-1, 0], [0, 0]])
    y = np.array([1, 1, -1, 1])
    v = compress(H, y)
    # y * H rows: (1, 0) three times, (0, 0) once.
    got = sorted(zip(map(tuple, v.correctness.tolist()), v.counts.tolist()))
    assert got == [((0.0, 0.0), 1), ((1.0, 0.0), 3)]


def test_stack_votes_equals_compressing_the_stacked_rows():
    rng = np.random.default_rng(0)
    parts = []
    for m in (30, 20):
        y = rng.choice(CLASSES, m)
        P = np.where(rng.random((m, 6)) < 0.6, y[:, None], rng.choice(CLASSES, (m, 6)))
        parts.append((P, y, rng.random((m, 6)) < 0.7))
    stacked = stack_votes(*(compress_votes(P, y, CLASSES, voted=ok) for P, y, ok in parts))
    direct = compress_votes(np.vstack([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
                            CLASSES, voted=np.vstack([p[2] for p in parts]))
    assert as_rows(stacked) == as_rows(direct) and stacked.m == 50
    with pytest.raises(ValueError, match="same members"):
        stack_votes(stacked, compress_votes(parts[0][0][:, :3], parts[0][1], CLASSES))


def test_a_member_that_did_not_vote_adds_nothing_to_the_vote():
    # Two rows, label a. Row 1: members vote (a, b, -); row 2: (-, b, b).
    v = Votes(codes=np.array([[0, 1, NO_VOTE], [NO_VOTE, 1, 1]], dtype=np.int8),
              labels=np.array([0, 0]), counts=np.array([1, 3]), classes=CLASSES)
    # w = (2, 1, 5): row 1 a=2 > b=1, right; row 2 b=6, wrong.
    assert cb.accuracies(np.array([2.0, 1.0, 5.0]), v) == pytest.approx(0.25)
    # w = (1, 1, 0): row 1 ties a/b -> prior "a", right; row 2 b=1, wrong.
    assert cb.accuracies(np.array([1.0, 1.0, 0.0]), v, prior=["a", "b", "c"]) == pytest.approx(0.25)
    # Each member's accuracy is over the rows it voted on.
    np.testing.assert_allclose(cb.member_accuracies(v), [1.0, 0.0, 0.0])
    # WMV clips at half a row of the member's own rows: 1 row -> p = 0.5 -> log 1 = 0 ...
    np.testing.assert_allclose(cb.wmv(v), [0.0, np.log(0.5 / 3.5), np.log(0.5 / 2.5)])


def test_wmv_gives_zero_weight_to_a_member_that_never_voted():
    v = Votes(codes=np.array([[0, NO_VOTE]], dtype=np.int8), labels=np.array([0]),
              counts=np.array([4]), classes=CLASSES)
    assert np.isnan(cb.member_accuracies(v)[1])
    assert cb.wmv(v)[1] == 0.0 and cb.wmv(v)[0] == pytest.approx(np.log(3.5 / 0.5))


def random_votes_with_abstentions(m, l, K, seed):
    rng = np.random.default_rng(seed)
    classes = np.arange(K)
    y = rng.integers(K, size=m)
    P = np.where(rng.random((m, l)) < 0.6, y[:, None], rng.integers(K, size=(m, l)))
    return compress_votes(P, y, classes, voted=rng.random((m, l)) < 0.65)


def slow_reduce_error(votes, prior):
    """The definition on compressed votes, one candidate at a time."""
    order, left = [], list(range(votes.n_members))
    while left:
        accs = []
        for j in left:
            w = np.zeros(votes.n_members)
            w[order + [j]] = 1
            accs.append(cb.accuracies(w, votes, prior))
        order.append(left.pop(int(np.argmax(accs))))
    return order


@pytest.mark.parametrize("K", [2, 3])
def test_pruning_orders_and_curves_with_abstentions_match_the_definitions(K):
    v = random_votes_with_abstentions(90, 10, K, seed=K)
    assert (v.codes == NO_VOTE).any()
    prior = np.arange(K)[::-1]
    order = cb.reduce_error_order(v, prior=prior)
    assert list(order) == slow_reduce_error(v, prior)
    sizes = np.arange(0, 11)
    expected = cb.accuracies(cb.ordered_weights(order, sizes), v, prior)
    np.testing.assert_allclose(cb.ordered_curve(order, v, prior, sizes), expected, rtol=0,
                               atol=1e-15)
    assert sorted(cb.orientation_order(v)) == list(range(10))
    for weights in (cb.qfwec(v), cb.nnls_stacking(v), cb.lasso_path(v, n_alphas=5)[1][:, -1],
                    cb.sdwec(v, lam=10, beta=15, gamma=15, eps=1)):
        assert weights.shape == (10,) and np.all(np.isfinite(weights))


def test_pickled_votes_leave_their_cached_matrices_behind():
    v = random_votes_with_abstentions(50, 8, 3, seed=0)
    C = v.correctness
    _ = v.correctness_form
    restored = pickle.loads(pickle.dumps(v))
    assert "correctness" not in restored.__dict__ and "correctness_form" not in restored.__dict__
    np.testing.assert_array_equal(restored.correctness, C)
    assert not restored.codes.flags.writeable  # the fields stay read-only


def test_bad_votes_get_clear_messages():
    P, y = np.array([["a", "b"]]), np.array(["a"])
    with pytest.raises(ValueError, match="voted must have the shape of P"):
        compress_votes(P, y, CLASSES, voted=np.ones((1, 3), bool))
    with pytest.raises(ValueError, match="not among classes"):
        compress_votes(P, np.array(["z"]), CLASSES)
    with pytest.raises(ValueError, match="codes \\(u, l\\), labels \\(u,\\) and counts"):
        Votes(codes=np.zeros((2, 2), np.int8), labels=np.zeros(3, int), counts=np.ones(2, int),
              classes=CLASSES)


def three_class_votes(m, l, seed, missing=0.25):
    """Random predictions ``P`` of three classes, labels ``y``, where each member ``voted``
    (about ``missing`` of the entries not), and their Votes."""
    rng = np.random.default_rng(seed)
    P = rng.integers(0, 3, size=(m, l))
    y = rng.integers(0, 3, size=m)
    voted = rng.random((m, l)) > missing
    return P, y, voted, compress_votes(P, y, np.arange(3), voted=voted)


def test_member_tallies_by_blocks_count_the_rows_each_member_got_right_and_voted_on():
    from sdwec.combiners import _member_tallies

    P, y, voted, v = three_class_votes(500, 7, seed=9)
    for block in (1, 3, 64, 16_384):
        right, seen = _member_tallies(v, block=block)
        np.testing.assert_array_equal(right, ((P == y[:, None]) & voted).sum(axis=0))
        np.testing.assert_array_equal(seen, voted.sum(axis=0))
