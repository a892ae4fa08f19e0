"""What a fit's ensemble votes with: the weights the Explorer's chart, files and model use."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer

from sdwec import combiners, comparison, voting
from sdwec.pool import build_pool


def test_voting_weights_of_each_fit():
    w = np.array([0.0, 2.5, 0.4, 0.0, 1e-9])
    np.testing.assert_array_equal(voting.voting_weights(w, "validation"), w)
    np.testing.assert_array_equal(voting.voting_weights(w, "oob+validation"), [0, 1, 1, 0, 1])
    assert voting.fit_name("oob+validation") == "oob"
    assert voting.vote_of("oob+validation") == "equal"
    assert voting.fit_name("validation") == "validation"
    assert voting.vote_of("validation") == "weighted"
    with pytest.raises(ValueError, match="fit_on must be one of"):
        voting.voting_weights(w, "oob")


@pytest.mark.parametrize("fit_on", ["validation", "oob+validation"])
def test_voting_weights_are_what_compare_scores(fit_on):
    X, y = load_breast_cancer(return_X_y=True)
    pool = build_pool(X, np.where(y == 1, 1, -1), n_trees=15, seed=0)
    result = comparison.compare(pool, fit_on=fit_on)
    w = voting.voting_weights(result.solution.weights, fit_on)
    for split, key in (("val", "validation"), ("test", "test")):
        assert combiners.accuracies(w, pool.votes(split), pool.prior) == pytest.approx(
            result.methods[0][key])
