"""The plurality vote's decision (sdwec.plurality): hand-derived winners, the tolerance's
edge, and one rule for many weight vectors at once and for one at a time."""

import numpy as np

from sdwec import combiners, plurality
from sdwec.votes import compress_votes


def test_the_highest_score_wins_and_a_tie_goes_to_the_first_ranked_class():
    scores = np.array([[0.2, 0.5, 0.3],   # class 1 alone
                       [0.4, 0.4, 0.2],   # 0 and 1 tied; rank puts 1 first
                       [0.0, 0.0, 0.0]])  # abstention: all tied; 1 is ranked first
    rank = np.array([2, 0, 1])
    winner, tied = plurality.decide(scores, 1.0, rank)
    np.testing.assert_array_equal(winner, [1, 1, 1])
    np.testing.assert_array_equal(tied, [[False, True, False], [True, True, False],
                                         [True, True, True]])


def test_the_tolerance_is_a_share_of_the_total_weight():
    # 1e-9 of a total of 10 is 1e-8: a gap of 5e-9 is a tie, a gap of 2e-8 is not.
    rank = np.array([1, 0])
    near = np.array([[5.0, 5.0 - 5e-9]])
    far = np.array([[5.0, 5.0 - 2e-8]])
    assert plurality.decide(near, 10.0, rank)[0][0] == 1  # tied: the first-ranked class
    assert plurality.decide(far, 10.0, rank)[0][0] == 0
    # The same gap against a total of 100 (tolerance 1e-7) is a tie.
    assert plurality.decide(far, 100.0, rank)[0][0] == 1


def test_each_row_can_have_its_own_total():
    scores = np.array([[1.0, 1.0 - 5e-9], [1.0, 1.0 - 5e-9]])
    winner, _ = plurality.decide(scores, np.array([10.0, 1.0]), np.array([1, 0]))
    np.testing.assert_array_equal(winner, [1, 0])  # tied at 1e-8, apart at 1e-9


def test_tie_rank_puts_the_prior_first_then_the_rest_sorted():
    classes = np.array(["a", "b", "c", "d"])
    np.testing.assert_array_equal(plurality.tie_rank(classes), [0, 1, 2, 3])
    np.testing.assert_array_equal(plurality.tie_rank(classes, ["c", "a"]), [1, 2, 0, 3])


def test_many_weight_vectors_decide_as_each_does_alone():
    rng = np.random.default_rng(4)
    classes = np.array([0, 1, 2])
    P = rng.integers(0, 3, (60, 7))
    y = rng.integers(0, 3, 60)
    W = rng.integers(0, 3, (7, 25)).astype(float)  # small integers: many exact ties
    votes = compress_votes(P, y, classes)
    together = combiners.accuracies(W, votes, prior=[2, 0, 1])
    alone = [combiners.accuracy(W[:, j], P, y, classes, prior=[2, 0, 1]) for j in range(25)]
    np.testing.assert_allclose(together, alone, rtol=0, atol=1e-12)
