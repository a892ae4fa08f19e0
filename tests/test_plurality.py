"""The plurality reading of multi-class SDWEC (Votes.plurality_form, solve(multiclass=...)).

Expectations come from a loop-by-loop construction of the (row, rival) matrix, from the
plurality vote itself, and from the two-class identity derived in docs/algorithm.md.
"""

import warnings

import numpy as np
import pytest

from harness.literal import literal_plurality_pairs, literal_sdwec
from sdwec import combiners, solve
from sdwec.estimator import SDWECClassifier, SDWECWarning
from sdwec.paper import PRESETS
from sdwec.votes import NO_VOTE, Votes, compress_votes


def _random_votes(m, l, n_classes, right, seed, abstain=0.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, m)
    other = (y[:, None] + rng.integers(1, n_classes, (m, l))) % n_classes
    P = np.where(rng.random((m, l)) < right, y[:, None], other)
    voted = rng.random((m, l)) >= abstain if abstain else None
    return P, y, voted


@pytest.mark.parametrize("abstain", [0.0, 0.4])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_two_classes_plurality_form_is_the_correctness_form_bit_for_bit(seed, abstain):
    P, y, voted = _random_votes(60, 15, 2, 0.7, seed, abstain)
    votes = compress_votes(P, y, [0, 1], voted=voted)
    a, b = votes.correctness_form, votes.plurality_form
    assert np.array_equal(a.codes, b.codes) and np.array_equal(a.counts, b.counts)
    for params in PRESETS.values():
        plural = solve(votes, **params, multiclass="plurality")
        correct = solve(votes, **params, multiclass="correctness")
        assert plural.raw_weights.tobytes() == correct.raw_weights.tobytes()
        # ... and the paper's own problem, sgn(H w) = y with H in {-1, 0, +1}.
        H = np.where(P == 1, 1, -1) * (1 if voted is None else voted)
        paper = solve(H, np.where(y == 1, 1, -1), **params)
        np.testing.assert_allclose(paper.raw_weights, plural.raw_weights, rtol=0, atol=1e-12)


def test_a_hand_written_row_gives_one_row_per_voted_rival():
    # Label a; members vote a, b, b, c, a: rivals b and c (d got no vote, so no row).
    votes = Votes(codes=np.array([[0, 1, 1, 2, 0]], dtype=np.int8), labels=np.array([0]),
                  counts=np.array([3]), classes=np.array(["a", "b", "c", "d"]))
    form = votes.plurality_form
    rows = {tuple(r): c for r, c in zip(form.correctness.astype(int), form.counts)}
    assert rows == {(1, -1, -1, 0, 1): 3, (1, 0, 0, -1, 1): 3}
    assert form.m == 6


def test_a_row_without_rivals_or_votes_keeps_one_row():
    votes = Votes(codes=np.array([[2, 2, NO_VOTE], [NO_VOTE, NO_VOTE, NO_VOTE]], dtype=np.int8),
                  labels=np.array([2, 1]), counts=np.array([1, 2]), classes=np.arange(3))
    rows = {tuple(r): c for r, c in zip(votes.plurality_form.correctness.astype(int),
                                         votes.plurality_form.counts)}
    assert rows == {(1, 1, 0): 1, (0, 0, 0): 2}


@pytest.mark.parametrize("abstain", [0.0, 0.3])
def test_solver_on_plurality_form_is_algorithm_1_on_the_hand_built_pairs(abstain):
    P, y, voted = _random_votes(40, 9, 4, 0.4, 3, abstain)
    pairs = literal_plurality_pairs(P, y, voted)
    votes = compress_votes(P, y, np.arange(4), voted=voted)
    assert votes.plurality_form.m == len(pairs)
    for params in PRESETS.values():
        got = solve(votes, **params, threshold="none").raw_weights
        # The data term divides by the 40 rows, not by the pairs: λ/m = λ'/len(pairs).
        scaled = dict(params, lam=params["lam"] * len(pairs) / len(y))
        expected = literal_sdwec(pairs, np.ones(len(pairs)), **scaled)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-10)


@pytest.mark.parametrize("seed", range(5))
def test_every_pair_row_positive_exactly_when_the_plurality_vote_is_right(seed):
    P, y, voted = _random_votes(80, 12, 5, 0.3, seed, 0.2)
    rng = np.random.default_rng(seed)
    w = rng.random(12) * (rng.random(12) < 0.7)  # non-negative, some exact zeros
    for s in range(len(y)):
        one = compress_votes(P[s:s + 1], y[s:s + 1], np.arange(5), voted=voted[s:s + 1])
        margins = one.plurality_form.correctness @ w
        scores = np.bincount(P[s][voted[s]], weights=w[voted[s]], minlength=5)
        strict_win = all(scores[y[s]] > scores[c] for c in range(5) if c != y[s])
        assert bool((margins > 0).all()) == strict_win


def test_weak_members_plurality_keeps_members_where_correctness_keeps_none():
    # Seven classes, each member right on 35 % of rows and otherwise scattered: a majority is
    # never right, a plurality almost always is.
    P, y, _ = _random_votes(300, 40, 7, 0.35, 11)
    votes = compress_votes(P, y, np.arange(7))
    assert np.nanmean(combiners.member_accuracies(votes)) < 0.4
    correct = solve(votes, lam=1e6, multiclass="correctness")
    plural = solve(votes, lam=10.0, multiclass="plurality")
    assert correct.n_selected == 0 and plural.n_selected > 1
    P_new, y_new, _ = _random_votes(300, 40, 7, 0.35, 12)
    test = compress_votes(P_new, y_new, np.arange(7))
    best_member = np.nanmax(combiners.member_accuracies(test))
    assert combiners.accuracies(plural.weights, test) > best_member + 0.2


def test_multiclass_must_be_named():
    P, y, _ = _random_votes(20, 5, 3, 0.6, 0)
    with pytest.raises(ValueError, match="multiclass must be one of 'plurality', 'correctness'"):
        solve(compress_votes(P, y), multiclass="majority")
    with pytest.raises(ValueError, match="multiclass must be one of"):
        SDWECClassifier(multiclass="majority").fit(np.eye(6), [0, 1, 2] * 2)


def _weak_data(seed=0, n=700):
    """Seven classes where fully grown trees are right on about a third of the rows."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 7, n)
    X = y[:, None] * 0.5 + rng.normal(size=(n, 4))
    return X, y


def test_estimator_uses_the_plurality_reading_and_names_the_cause_when_nothing_fits():
    X, y = _weak_data()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        correct = SDWECClassifier(n_estimators=20, multiclass="correctness", lam=10.0,
                                  random_state=0).fit(X, y)
    messages = " ".join(str(w.message) for w in caught if w.category is SDWECWarning)
    # Nothing fits under the majority reading: the whole pool votes, and the warning says why.
    assert correct.n_selected_ == 20 and set(correct.weights_) == {1.0}
    assert "fewer than half" in messages and "multiclass='plurality'" in messages
    assert "single member" not in messages
    with warnings.catch_warnings():
        warnings.simplefilter("error", SDWECWarning)
        plural = SDWECClassifier(n_estimators=20, lam=10.0, random_state=0).fit(X, y)
    assert plural.multiclass == "plurality" and 1 < plural.n_selected_ < 20
    assert plural.solution_.params["multiclass"] == "plurality"


def test_a_single_member_worse_than_the_pool_gives_way_to_the_pool():
    X, y = _weak_data(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SDWECWarning)  # this fit's own path is not the point
        model = SDWECClassifier(n_estimators=15, random_state=0).fit(X, y)
    votes = compress_votes(np.column_stack([e.predict(X) for e in model.estimators_]), y)
    rank = np.arange(7)
    one = np.zeros(votes.n_members)
    one[0] = 1.0
    pool = np.ones(votes.n_members)
    assert combiners.accuracies(pool, votes) > combiners.accuracies(one, votes)
    with pytest.warns(SDWECWarning, match="keeps the whole pool instead"):
        kept = model._never_worse_than_pool(votes, rank, one)
    np.testing.assert_array_equal(kept, pool)
    # Asked for: one member stays one member.
    asked = SDWECClassifier(n_members=1)
    np.testing.assert_array_equal(asked._never_worse_than_pool(votes, rank, one), one)
    # Several members: kept as they are, without a word.
    two = one.copy()
    two[1] = 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error", SDWECWarning)
        np.testing.assert_array_equal(model._never_worse_than_pool(votes, rank, two), two)


def test_lam_with_n_members_is_named_as_unused():
    X, y = _weak_data()
    with pytest.warns(SDWECWarning, match=r"lam=0.001 is not used: with n_members=5, λ is "
                                          r"searched for"):
        model = SDWECClassifier(n_estimators=15, n_members=5, lam=0.001,
                                random_state=0).fit(X, y)
    assert model.lam_ != 0.001
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SDWECClassifier(n_estimators=15, n_members=5, random_state=0).fit(X, y)
    assert not any("is not used" in str(w.message) for w in caught)


def test_a_size_asked_for_is_met_where_the_reading_keeps_nothing():
    # Under the majority reading nothing fits these weak trees at any λ: n_members=5 still
    # gets exactly five members (filled from the weights before line 15), and the warning
    # names the threshold that removed them.
    X, y = _weak_data()
    with pytest.warns(SDWECWarning, match="threshold"):
        model = SDWECClassifier(n_estimators=20, multiclass="correctness", n_members=5,
                                random_state=0).fit(X, y)
    assert model.n_selected_ == 5 and np.count_nonzero(model.weights_) == 5
