"""The scorers that put the λ actually fitted and the members kept into ``cv_results_``."""

import math
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import sdwec
from sdwec import SDWECClassifier, lam_used, n_selected
from sdwec.estimator import SDWECWarning

SCORING = {"accuracy": "accuracy", "lam_used": lam_used, "n_selected": n_selected}
TOO_SMALL, KEEPS = 0.01, 10.0  # on breast_cancer with 20 trees: no member, and members


@pytest.fixture(scope="module")
def data():
    return load_breast_cancer(return_X_y=True)


@pytest.fixture(scope="module")
def search(data):
    X, y = data
    grid = GridSearchCV(SDWECClassifier(n_estimators=20, random_state=0),
                        {"lam": [TOO_SMALL, KEEPS]}, cv=3, scoring=SCORING, refit="accuracy")
    with pytest.warns(SDWECWarning, match=f"kept no member at lam={TOO_SMALL:g}"):
        return grid.fit(X, y)


def _fold_fits(data, lam):
    """The fits GridSearchCV makes for ``lam`` (cv=3 on a classifier: unshuffled stratified
    folds), made by hand."""
    X, y = data
    fits = []
    for train, _ in StratifiedKFold(3).split(X, y):
        model = SDWECClassifier(n_estimators=20, lam=lam, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SDWECWarning)
            fits.append(model.fit(X[train], y[train]))
    return fits


def test_a_lambda_too_small_shows_the_larger_lambda_it_was_fitted_at(search, data):
    results = search.cv_results_
    row = list(results["param_lam"]).index(TOO_SMALL)
    folds = [results[f"split{i}_test_lam_used"][row] for i in range(3)]
    assert all(lam >= 10 * TOO_SMALL for lam in folds)   # raised at least one tenfold step
    assert results["mean_test_lam_used"][row] == pytest.approx(np.mean(folds))
    assert results["mean_test_lam_used"][row] > TOO_SMALL
    fits = _fold_fits(data, TOO_SMALL)
    assert folds == [fit.lam_ for fit in fits]
    kept = [results[f"split{i}_test_n_selected"][row] for i in range(3)]
    assert kept == [np.count_nonzero(fit.weights_) for fit in fits]
    assert min(kept) >= 1


def test_a_lambda_that_keeps_members_shows_itself(search, data):
    results = search.cv_results_
    row = list(results["param_lam"]).index(KEEPS)
    assert [results[f"split{i}_test_lam_used"][row] for i in range(3)] == [KEEPS] * 3
    assert results["mean_test_lam_used"][row] == KEEPS
    kept = [np.count_nonzero(fit.weights_) for fit in _fold_fits(data, KEEPS)]
    assert results["mean_test_n_selected"][row] == pytest.approx(np.mean(kept))
    assert 1 <= min(kept) and max(kept) < 20


def test_the_scorers_read_the_fitted_model_and_a_pipelines_last_step(data):
    X, y = data
    model = SDWECClassifier(n_estimators=20, lam=KEEPS, random_state=0).fit(X, y)
    assert lam_used(model, None, None) == KEEPS
    assert n_selected(model, None, None) == int(np.count_nonzero(model.weights_))
    pipe = make_pipeline(StandardScaler(), SDWECClassifier(n_estimators=20, lam=KEEPS,
                                                           random_state=0)).fit(X, y)
    assert lam_used(pipe, X, y) == KEEPS
    assert n_selected(pipe, X, y) == pipe[-1].n_selected_
    # Another method has no solution and so no λ.
    bagging = SDWECClassifier(n_estimators=5, method="bagging", random_state=0).fit(X, y)
    assert math.isnan(lam_used(bagging, X, y)) and n_selected(bagging, X, y) == 5


def test_the_scorers_say_what_they_need(data):
    X, y = data
    with pytest.raises(TypeError, match="lam_used scorer reads an SDWECClassifier.*"
                                        "got StandardScaler"):
        lam_used(StandardScaler().fit(X), X, y)
    with pytest.raises(NotFittedError):
        n_selected(SDWECClassifier(), X, y)


def test_exported_lazily_from_the_package():
    assert {"lam_used", "n_selected", "scorers"} <= set(sdwec.__all__)
    assert sdwec.scorers.lam_used is lam_used and sdwec.n_selected is n_selected
