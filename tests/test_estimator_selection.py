"""SDWECClassifier's selection at a size: out-of-bag fits, exact sizes, small saved models,
and scikit-learn's expected failures as a user sees them."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.ensemble import BaggingClassifier, RandomForestClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.estimator_checks import check_estimator

from sdwec import combiners
from sdwec import estimator as estimator_module
from sdwec.estimator import SDWECClassifier, SDWECWarning, expected_failed_checks
from sdwec.pool import in_bag_matrix
from sdwec.votes import compress_votes


def _out_of_bag_votes(bagging, X, y):
    """The pool's out-of-bag votes on its training rows, built from its trees by hand."""
    classes = np.unique(y)
    P = np.column_stack([tree.predict(X).astype(int) for tree in bagging.estimators_])
    in_bag = in_bag_matrix(bagging.estimators_samples_, len(y))
    return compress_votes(P, np.searchsorted(classes, y), np.arange(len(classes)),
                          voted=~in_bag)


def test_oob_fit_holds_no_row_out_and_orders_on_every_trees_out_of_bag_votes(monkeypatch):
    seen = {}

    class RecordingBagging(BaggingClassifier):
        def fit(self, X, y, **params):
            seen.update(bagging=self, X=X, y=y)
            return super().fit(X, y, **params)

    monkeypatch.setattr(estimator_module, "BaggingClassifier", RecordingBagging)
    X, y = load_wine(return_X_y=True)
    model = SDWECClassifier(n_estimators=12, fit_on="oob", method="reduce-error",
                            n_members=4, random_state=0).fit(X, y)
    assert model.fit_on_ == "oob" and len(model.validation_indices_) == 0
    assert len(seen["y"]) == len(y)  # every row trained the pool
    votes = _out_of_bag_votes(seen["bagging"], seen["X"], seen["y"])
    mass = np.bincount(votes.labels, weights=votes.counts, minlength=3)
    prior = np.lexsort((np.arange(3), -mass))
    order = combiners.reduce_error_order(votes, prior=prior)
    np.testing.assert_array_equal(model.selected_, np.sort(order[:4]))
    np.testing.assert_array_equal(model.weights_[model.selected_], 1.0)


@pytest.mark.parametrize("method", ["sdwec", "reduce-error", "orientation", "nnls", "bagging"])
@pytest.mark.parametrize("vote", ["uniform", "weighted"])
def test_n_members_is_exactly_that_many_voting_members(method, vote, recwarn):
    X, y = load_breast_cancer(return_X_y=True)
    for n_members, k in ((7, 7), (0.5, 10)):
        model = SDWECClassifier(n_estimators=20, fit_on="oob", method=method, vote=vote,
                                n_members=n_members, random_state=0).fit(X, y)
        assert model.n_selected_ == k == len(model.estimators_)
        assert np.all(model.weights_[model.selected_] > 0)
        assert np.count_nonzero(model.weights_) == k


def test_weighted_vote_gives_filled_members_the_smallest_kept_weight():
    kept = np.array([True, True, True, False])
    weights = np.array([0.5, 0.2, 0.0, 0.9])
    voting = SDWECClassifier._member_weights(kept, weights, "weighted")
    np.testing.assert_array_equal(voting, [0.5, 0.2, 0.2, 0.0])
    np.testing.assert_array_equal(SDWECClassifier._member_weights(kept, weights, "uniform"),
                                  [1.0, 1.0, 1.0, 0.0])


@pytest.mark.parametrize("pool", [
    RandomForestClassifier(n_estimators=30, random_state=0),
    BaggingClassifier(DecisionTreeClassifier(), n_estimators=30, max_features=0.5,
                      random_state=0)])
def test_a_saved_model_on_a_frozen_pool_holds_only_the_voting_members(pool):
    X, y = load_breast_cancer(return_X_y=True)
    forest = clone(pool).fit(X[:400], y[:400])
    model = SDWECClassifier(FrozenEstimator(forest), method="reduce-error",
                            n_members=5).fit(X[400:], y[400:])
    saved = pickle.dumps(model)
    loaded = pickle.loads(saved)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    # The saved model is about the size of its 5 trees, not of the 30-tree pool; the
    # model in memory still holds the pool it was given.
    trees = len(pickle.dumps(model.estimators_))
    assert trees < len(saved) < trees + len(pickle.dumps(forest)) / 10
    assert len(loaded.estimator.estimator.estimators_) == 5
    assert len(model.estimator.estimator.estimators_) == 30
    # A refit of the loaded model chooses among the members it kept.
    assert clone(loaded).set_params(n_members=3).fit(X[400:], y[400:]).n_selected_ == 3


def test_a_list_pool_is_saved_with_the_voting_members_only():
    X, y = load_breast_cancer(return_X_y=True)
    trees = [DecisionTreeClassifier(max_depth=d, random_state=d).fit(X[:400], y[:400])
             for d in range(1, 9)]
    for pool in (FrozenEstimator(trees), [FrozenEstimator(t) for t in trees]):
        model = SDWECClassifier(pool, method="reduce-error", n_members=3).fit(X[400:], y[400:])
        loaded = pickle.loads(pickle.dumps(model))
        np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
        kept = loaded.estimator.estimator if isinstance(loaded.estimator, FrozenEstimator) \
            else loaded.estimator
        assert len(kept) == 3


def test_check_estimator_shows_the_documented_failures_as_expected(recwarn):
    model = SDWECClassifier(n_estimators=3, random_state=0)
    results = check_estimator(model, expected_failed_checks=expected_failed_checks(model),
                              on_fail=None)
    status = {r["check_name"]: r["status"] for r in results}
    assert {name for name, s in status.items() if s == "xfail"} == \
        set(expected_failed_checks(model))
    assert "failed" not in status.values()


def test_expected_failures_follow_the_parameters():
    assert set(expected_failed_checks(SDWECClassifier())) == {
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data"}
    assert "check_class_weight_classifiers" in expected_failed_checks(
        SDWECClassifier(bootstrap=False))


def test_filled_sizes_warn_once_with_the_threshold_as_the_cause():
    X, y = load_breast_cancer(return_X_y=True)
    with pytest.warns(SDWECWarning, match=r"line 15's threshold \(0\.46\) removes every weight "
                                          r"below it") as caught:
        model = SDWECClassifier(n_estimators=30, fit_on="oob", n_members=25, vote="uniform",
                                random_state=0).fit(X, y)
    assert model.n_selected_ == 25
    assert len([w for w in caught if issubclass(w.category, SDWECWarning)]) == 1


def test_class_weights_reach_the_out_of_bag_selection(monkeypatch):
    seen = {}
    real = combiners.reduce_error_order

    def recording(votes, **params):
        seen["votes"] = votes
        return real(votes, **params)

    monkeypatch.setattr(combiners, "reduce_error_order", recording)
    X, y = load_breast_cancer(return_X_y=True)  # 212 malignant, 357 benign
    SDWECClassifier(n_estimators=10, fit_on="oob", method="reduce-error", n_members=3,
                    class_weight="balanced", random_state=0).fit(X, y)
    votes = seen["votes"]
    # Each class weighs n / (2 * count) a row, so both weigh n / 2 in all: the rows the
    # selection scores carry the class weights (rows no member left out are not there).
    weight = {0: len(y) / (2 * 212), 1: len(y) / (2 * 357)}
    per_row = votes.counts / np.array([weight[c] for c in votes.labels])
    np.testing.assert_allclose(per_row, np.round(per_row))  # whole rows of one class each
    mass = np.bincount(votes.labels, weights=votes.counts)
    assert mass[0] == pytest.approx(mass[1], rel=0.1)
