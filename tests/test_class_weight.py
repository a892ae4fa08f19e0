"""SDWECClassifier's class_weight, as scikit-learn's forests take it."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.neighbors import KNeighborsClassifier

from sdwec.estimator import SDWECClassifier, SDWECWarning


def _imbalanced(seed=0):
    X, y = make_classification(n_samples=900, n_features=8, n_informative=4, weights=[0.9],
                               flip_y=0.05, class_sep=0.6, random_state=seed)
    return X[:600], y[:600], X[600:], y[600:]


def _fit(X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SDWECWarning)
        return SDWECClassifier(n_estimators=30, random_state=0, **params).fit(X, y)


def test_a_dict_of_class_weights_is_the_same_fit_as_those_sample_weights():
    X, y, _, _ = _imbalanced()
    by_dict = _fit(X, y, class_weight={0: 1.0, 1: 4.0})
    by_rows = _fit(X, y).fit(X, y, sample_weight=np.where(y == 1, 4.0, 1.0))
    np.testing.assert_array_equal(by_dict.weights_, by_rows.weights_)


def test_balanced_weights_multiply_given_sample_weights():
    X, y, _, _ = _imbalanced()
    sw = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    share = {c: len(y) / (2 * np.sum(y == c)) for c in (0, 1)}  # n / (K * count): "balanced"
    balanced = _fit(X, y, class_weight="balanced").fit(X, y, sample_weight=sw)
    by_hand = _fit(X, y).fit(X, y, sample_weight=sw * np.where(y == 1, share[1], share[0]))
    np.testing.assert_array_equal(balanced.weights_, by_hand.weights_)


def test_balanced_draws_find_more_of_the_rare_class():
    X, y, X_new, y_new = _imbalanced()
    rare = y_new == 1

    def recall(model):
        return np.mean(model.predict(X_new[rare]) == 1)

    # Fully grown trees fit their sample exactly, so "balanced_subsample" (each tree's own
    # class weights, as in a forest) changes little; balanced draws change what they learn.
    assert recall(_fit(X, y, class_weight="balanced")) > recall(_fit(X, y)) + 0.05


def test_balanced_subsample_balances_each_member_and_needs_a_class_weight():
    X, y, _, _ = _imbalanced()
    model = _fit(X, y, class_weight="balanced_subsample")
    assert {m.class_weight for m in model.estimators_} == {"balanced"}
    with pytest.raises(ValueError, match="KNeighborsClassifier does not have; use "
                                         "class_weight='balanced'"):
        _fit(X, y, estimator=KNeighborsClassifier(), class_weight="balanced_subsample")


def test_an_unknown_class_weight_is_named():
    X, y, _, _ = _imbalanced()
    with pytest.raises(ValueError, match="class_weight must be None, 'balanced', "
                                         "'balanced_subsample' or a dict"):
        _fit(X, y, class_weight="even")


@pytest.mark.parametrize("class_weight,message", [
    ({0: 1.0, 5: 2.0}, r"class_weight names \[5\], which are not labels of y"),
    ({0: -1.0}, r"class_weight's weights must be finite numbers >= 0; got \{0: -1.0\}"),
    ({0: float("nan")}, "must be finite numbers >= 0"),
])
def test_a_class_weight_dict_must_name_labels_of_y_with_weights(class_weight, message):
    X, y, _, _ = _imbalanced()
    with pytest.raises(ValueError, match=message):
        _fit(X, y, class_weight=class_weight)
