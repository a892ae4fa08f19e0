"""SDWECClassifier(calibration=...): probabilities fitted on the pool's out-of-bag votes."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.ensemble import BaggingClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split

from sdwec import calibration as calibration_module
from sdwec import estimator as estimator_module
from sdwec.estimator import SDWECClassifier, SDWECWarning


def _fit(X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SDWECWarning)
        return SDWECClassifier(**{"n_estimators": 30, "random_state": 0, **params}).fit(X, y)


def test_calibration_changes_probabilities_not_predictions():
    X, y = load_breast_cancer(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, random_state=0, stratify=y)
    raw = _fit(X_tr, y_tr)
    calibrated = _fit(X_tr, y_tr, calibration="temperature")
    np.testing.assert_array_equal(raw.weights_, calibrated.weights_)
    np.testing.assert_array_equal(raw.predict(X_te), calibrated.predict(X_te))
    np.testing.assert_array_equal(raw.decision_function(X_te),
                                  calibrated.decision_function(X_te))
    proba = calibrated.predict_proba(X_te)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert (proba > 0).all() and (proba < 1).all()
    # Raw shares of a few trees reach exact 0 and 1; a confident miss costs ~34.5 (clipped).
    assert np.isin(raw.predict_proba(X_te), [0.0, 1.0]).any()
    assert log_loss(y_te, proba) < log_loss(y_te, raw.predict_proba(X_te))
    assert raw.calibrator_ is None and calibrated.calibrator_.method == "temperature"


def test_calibrator_is_fitted_on_the_whole_pools_out_of_bag_shares(monkeypatch):
    seen, fitted = {}, {}

    class RecordingBagging(BaggingClassifier):
        def fit(self, X, y, **params):
            seen.update(bagging=self, X=X, y=y)
            return super().fit(X, y, **params)

    def recording_fit(shares, y_index, method, **kwargs):
        fitted.update(shares=shares, y_index=y_index, method=method, **kwargs)
        return calibration_module.fit_calibrator(shares, y_index, method, **kwargs)

    monkeypatch.setattr(estimator_module, "BaggingClassifier", RecordingBagging)
    monkeypatch.setattr(estimator_module, "fit_calibrator", recording_fit)
    X, y = load_wine(return_X_y=True)
    _fit(X, y, calibration="sigmoid", n_estimators=9)
    bagging, X_pool, y_pool = seen["bagging"], seen["X"], seen["y"]
    n = len(y_pool)
    counts, voters = np.zeros((n, 3)), np.zeros(n)
    for tree, drawn in zip(bagging.estimators_, bagging.estimators_samples_):
        out = ~np.isin(np.arange(n), drawn)
        label = tree.predict(X_pool).astype(int)  # bagging's trees predict class indices
        counts[np.flatnonzero(out), label[out]] += 1
        voters += out
    expected = counts / np.maximum(voters, 1)[:, None]
    assert fitted["method"] == "sigmoid"
    np.testing.assert_array_equal(fitted["n_voters"], voters)
    np.testing.assert_allclose(fitted["shares"], expected, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(fitted["y_index"], y_pool)  # wine's labels are 0, 1, 2


@pytest.mark.parametrize("name, value", [("calibration", "temperature"), ("fit_on", "oob")])
def test_out_of_bag_parameters_need_a_pool_this_estimator_bags(name, value):
    X, y = load_wine(return_X_y=True)
    bagging = BaggingClassifier(n_estimators=5, random_state=0).fit(X, y)
    said = f"{name}='{value}'"
    with pytest.raises(ValueError, match=f"{said} needs the pool's bootstrap samples"):
        SDWECClassifier(FrozenEstimator(bagging), **{name: value}).fit(X, y)
    with pytest.raises(ValueError, match=f"no out-of-bag rows, and {said} needs them"):
        _fit(X, y, bootstrap=False, **{name: value})


def test_an_unknown_calibration_is_refused():
    X, y = load_wine(return_X_y=True)
    with pytest.raises(ValueError, match="calibration must be one of None, 'temperature'"):
        _fit(X, y, calibration="platt")


def test_from_weights_has_nothing_to_calibrate_on():
    X, y = load_wine(return_X_y=True)
    bagging = BaggingClassifier(n_estimators=5, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="from_weights has no out-of-bag votes to fit "
                                         "calibration='temperature' on"):
        SDWECClassifier.from_weights(bagging, np.ones(5), calibration="temperature")
    assert SDWECClassifier.from_weights(bagging, np.ones(5)).calibrator_ is None


@pytest.mark.parametrize("vote", ["uniform", "weighted"])
def test_temperature_probabilities_name_the_predicted_class_on_every_row(vote):
    # Wine's three classes, and a pool of 6 trees kept whole (many tied votes, which the tie
    # rule sends to the tie order, not to sorted order).
    X, y = load_wine(return_X_y=True)
    for params in ({"n_members": 0.5}, {"n_estimators": 6, "method": "bagging"}):
        model = _fit(X, y, calibration="temperature", fit_on="oob", vote=vote, **params)
        proba = model.predict_proba(X)
        np.testing.assert_array_equal(model.classes_[proba.argmax(axis=1)], model.predict(X))


@pytest.mark.parametrize("calibration", ["sigmoid", "isotonic"])
def test_one_vs_rest_calibration_says_its_argmax_may_differ(calibration):
    X, y = load_wine(return_X_y=True)
    with pytest.warns(SDWECWarning, match=rf"calibration='{calibration}' maps each class's "
                                          r"share .* calibration='temperature'"):
        SDWECClassifier(n_estimators=10, calibration=calibration, random_state=0).fit(X, y)
