"""Downloads: weight files carry their provenance; the pruned model loads and votes correctly."""

import io
import json

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.frozen import FrozenEstimator

from sdwec import combiners, comparison, export, voting
from sdwec.estimator import SDWECClassifier
from sdwec.pool import build_pool
from sdwec.solver import solve

PARAMS = {"lam": 10.0, "beta": 15.0, "gamma": 15.0, "eps": 1.0, "iterations": 25,
          "threshold": "paper"}


@pytest.fixture(scope="module")
def binary_pool():
    X, y = load_breast_cancer(return_X_y=True)
    return build_pool(X, np.where(y == 1, 1, -1), n_trees=15, seed=0)


@pytest.fixture(scope="module")
def wine_pool():
    X, y = load_wine(return_X_y=True)
    return build_pool(X, y, n_trees=12, seed=1)


# --------------------------------------------------------------------------- weight files


def test_weights_csv_round_trip_keeps_weights_and_provenance():
    weights = np.array([0.0, 0.1 + 0.2, 1 / 3, 0.0, 2.5e-7])
    metrics = {"test_accuracy": np.float64(0.95), "n_selected": np.int64(3)}
    data = export.weights_csv(weights, params=PARAMS, dataset="wine", seed=np.int64(4),
                              metrics=metrics)
    table, meta = export.read_weights_csv(data)
    np.testing.assert_array_equal(table["member"], np.arange(5))
    np.testing.assert_array_equal(table["weight"], weights)  # %.17g round-trips floats
    np.testing.assert_array_equal(table["selected"], [False, True, True, False, True])
    assert meta["dataset"] == "wine" and meta["seed"] == 4
    assert meta["params"] == PARAMS
    assert meta["metrics"] == {"test_accuracy": 0.95, "n_selected": 3}
    assert meta["n_members"] == 5 and meta["n_selected"] == 3
    assert meta["sparsity"] == pytest.approx(0.4)
    assert meta["format"] == export.FORMAT
    # plain pandas reads the table by skipping the comment lines
    plain = pd.read_csv(io.BytesIO(data), comment="#")
    assert list(plain.columns) == ["member", "weight", "solver_weight", "selected"]
    assert len(plain) == 5
    # the paper's fit votes with Algorithm 1's weights: both columns hold them (pandas
    # before 3 parses floats to within an ulp unless asked for round_trip)
    np.testing.assert_allclose(plain["solver_weight"], weights, rtol=1e-15, atol=0)
    np.testing.assert_allclose(plain["weight"], weights, rtol=1e-15, atol=0)
    assert meta["fit"] == "validation" and meta["vote"] == "weighted"


def test_weights_json_holds_weights_selection_and_provenance():
    weights = np.array([0.0, 0.7, 0.0, 0.25])
    data = export.weights_json(weights, params={**PARAMS, "threshold_value": float("nan")},
                               dataset="sonar", seed=0,
                               metrics={"val_accuracy": 0.9, "auc": np.nan})
    doc = json.loads(data)
    assert doc["weights"] == [0.0, 0.7, 0.0, 0.25]
    assert doc["solver_weights"] == [0.0, 0.7, 0.0, 0.25]
    assert doc["fit"] == "validation" and doc["vote"] == "weighted"
    assert doc["selected"] == [1, 3]
    assert doc["n_selected"] == 2 and doc["sparsity"] == 0.5
    assert doc["dataset"] == "sonar" and doc["seed"] == 0
    assert doc["params"]["lam"] == 10.0 and doc["params"]["threshold_value"] is None
    assert doc["metrics"] == {"val_accuracy": 0.9, "auc": None}  # NaN has no JSON spelling


def test_weight_files_say_which_split_they_are():
    scope = "split 1 of 10 (seed 0); the page's headline is the mean over 10 splits"
    table, meta = export.read_weights_csv(export.weights_csv([0.0, 1.0], scope=scope))
    assert meta["scope"] == scope
    assert json.loads(export.weights_json([0.0, 1.0], scope=scope))["scope"] == scope
    assert export.read_weights_csv(export.weights_csv([1.0]))[1]["scope"] is None


def test_file_stem_names_every_setting():
    stem = export.file_stem("sonar", params=PARAMS, n_trees=200, seed=0, task="binary")
    assert stem == "sdwec_sonar_binary_l200_s0_lam10_b15_g15_e1_k25_paper_val"
    # SDWEC-B and λ = 10, β = 18 get stems of their own, not one "sdwec_sonar_lam10".
    other = export.file_stem("sonar", params={**PARAMS, "beta": 18.0}, n_trees=200, seed=0,
                             task="binary")
    assert other == "sdwec_sonar_binary_l200_s0_lam10_b18_g15_e1_k25_paper_val"
    # Fit, seed, pool size and threshold rule each change the name; odd characters do not
    # reach the file system, and "_" only separates parts.
    stem = export.file_stem("my data/x_y.csv", params={**PARAMS, "lam": 1e-5, "eps": 0.001,
                                                       "threshold": "adaptive"},
                            n_trees=50, seed=3, fit_on="oob+validation")
    assert stem == "sdwec_my-data-x-y.csv_l50_s3_lam1e-05_b15_g15_e0.001_k25_adaptive_oob"


@pytest.mark.parametrize("weights", [[], [[1.0, 2.0]], [1.0, np.inf]])
def test_weight_files_reject_bad_weights(weights):
    with pytest.raises(ValueError, match="weights"):
        export.weights_csv(weights)
    with pytest.raises(ValueError, match="weights"):
        export.weights_json(weights)


def test_read_weights_csv_names_a_malformed_line():
    with pytest.raises(ValueError, match="malformed provenance line"):
        export.read_weights_csv(b"# seed: {not json\nmember,weight,selected\n0,1.0,True\n")


# --------------------------------------------------------------------------- pruned model


@pytest.mark.parametrize("pool_name", ["binary_pool", "wine_pool"])
def test_downloaded_model_loads_and_predicts_the_weighted_vote(pool_name, request, tmp_path):
    pool = request.getfixturevalue(pool_name)
    solution = solve(pool.votes("val"), None, **PARAMS)
    assert 0 < solution.n_selected < pool.n_trees
    model = export.pruned_model(pool, solution.weights, params=PARAMS, solution=solution)
    path = tmp_path / "sdwec-model.joblib"
    path.write_bytes(export.model_joblib(model))
    loaded = joblib.load(path)
    expected = combiners.vote(solution.weights, pool.P_test, pool.classes, prior=pool.prior)
    np.testing.assert_array_equal(loaded.predict(pool.X_test), expected)
    assert len(loaded.estimators_) == solution.n_selected
    assert loaded.get_params()["lam"] == PARAMS["lam"]
    assert loaded.get_params()["n_estimators"] == pool.n_trees
    np.testing.assert_array_equal(loaded.tie_order_, pool.prior)
    np.testing.assert_array_equal(joblib.load(io.BytesIO(export.model_joblib(model)))
                                  .predict_proba(pool.X_test), model.predict_proba(pool.X_test))


def test_pruned_model_equals_the_estimator_fitted_on_the_frozen_pool(binary_pool):
    pool = binary_pool
    solution = solve(pool.votes("val"), None, **PARAMS)
    direct = export.pruned_model(pool, solution.weights, params=PARAMS)
    refit = SDWECClassifier(FrozenEstimator(pool.ensemble), **PARAMS).fit(pool.X_val, pool.y_val)
    np.testing.assert_array_equal(refit.weights_, solution.weights)
    np.testing.assert_array_equal(direct.predict(pool.X_test), refit.predict(pool.X_test))


def test_pruning_shrinks_the_file(binary_pool):
    pool = binary_pool
    full = np.ones(pool.n_trees)
    pruned = np.zeros(pool.n_trees)
    pruned[[2, 5, 11]] = [0.5, 1.0, 0.25]
    size_full = len(export.model_joblib(export.pruned_model(pool, full)))
    size_pruned = len(export.model_joblib(export.pruned_model(pool, pruned)))
    assert size_pruned < 0.5 * size_full


def test_equal_weights_tie_goes_to_the_more_frequent_validation_class(wine_pool):
    pool = wine_pool
    P = pool.P_test
    order = list(pool.prior)  # most frequent validation class first
    counts = [int((pool.y_val == c).sum()) for c in order]
    assert counts == sorted(counts, reverse=True)

    def first_in_order(a, b):
        return a if order.index(a) < order.index(b) else b

    # two trees with equal weights; pick the pair with the most rows where the tie order
    # and plain sorted order disagree, so the test tells the two rules apart
    def telling(pair):
        return sum(first_in_order(a, b) != min(a, b) for a, b in P[:, list(pair)])

    j, k = max(((j, k) for j in range(pool.n_trees) for k in range(j + 1, pool.n_trees)),
               key=telling)
    assert telling((j, k)) > 0
    weights = np.zeros(pool.n_trees)
    weights[[j, k]] = 1.0
    model = export.pruned_model(pool, weights)
    expected = [first_in_order(a, b) for a, b in zip(P[:, j], P[:, k])]
    np.testing.assert_array_equal(model.predict(pool.X_test), expected)
    proba = model.predict_proba(pool.X_test)  # the same rule decides the shares' argmax
    np.testing.assert_array_equal(model.classes_[proba.argmax(axis=1)], expected)


def test_all_zero_weights_predict_the_most_frequent_validation_class(wine_pool):
    pool = wine_pool
    model = export.pruned_model(pool, np.zeros(pool.n_trees))
    values, counts = np.unique(pool.y_val, return_counts=True)
    most = values[np.argmax(counts)]  # argmax takes the first (smallest) of equal counts
    np.testing.assert_array_equal(model.predict(pool.X_test), np.full(len(pool.X_test), most))
    proba = model.predict_proba(pool.X_test[:2])  # no votes: every class tied, `most` wins
    np.testing.assert_allclose(proba, 1 / len(values), rtol=0, atol=1e-11)
    np.testing.assert_array_equal(values[proba.argmax(axis=1)], [most, most])


def test_pruned_model_checks_weights_and_feature_names(binary_pool):
    pool = binary_pool
    with pytest.raises(ValueError, match="one weight per pool member"):
        export.pruned_model(pool, np.ones(pool.n_trees + 1))
    with pytest.raises(ValueError, match="non-negative"):
        export.pruned_model(pool, -np.ones(pool.n_trees))
    with pytest.raises(ValueError, match="feature names"):
        export.pruned_model(pool, np.ones(pool.n_trees), feature_names=["a", "b"])
    names = [f"f{i}" for i in range(pool.X_test.shape[1])]
    model = export.pruned_model(pool, np.ones(pool.n_trees), feature_names=names)
    frame = pd.DataFrame(pool.X_test, columns=names)
    expected = combiners.vote(np.ones(pool.n_trees), pool.P_test, pool.classes, prior=pool.prior)
    np.testing.assert_array_equal(model.predict(frame), expected)
    with pytest.raises(ValueError, match="feature names"):
        model.predict(frame.rename(columns={"f0": "g0"}))


# --------------------------------------------------------------------------- SDWEC-OOB: what votes


def test_oob_weight_files_hold_equal_votes_and_say_so():
    solver_weights = np.array([0.0, 2.5, 0.4, 0.0])
    table, meta = export.read_weights_csv(
        export.weights_csv(solver_weights, fit_on="oob+validation", dataset="wine", seed=0))
    np.testing.assert_array_equal(table["weight"], [0.0, 1.0, 1.0, 0.0])
    np.testing.assert_array_equal(table["solver_weight"], solver_weights)
    np.testing.assert_array_equal(table["selected"], [False, True, True, False])
    assert meta["fit"] == "oob" and meta["vote"] == "equal"
    assert meta["n_selected"] == 2 and meta["sparsity"] == 0.5
    doc = json.loads(export.weights_json(solver_weights, fit_on="oob+validation"))
    assert doc["weights"] == [0.0, 1.0, 1.0, 0.0]
    assert doc["solver_weights"] == [0.0, 2.5, 0.4, 0.0]
    assert doc["fit"] == "oob" and doc["vote"] == "equal" and doc["selected"] == [1, 2]


@pytest.mark.parametrize("pool_name", ["binary_pool", "wine_pool"])
@pytest.mark.parametrize("fit_on", ["validation", "oob+validation"])
def test_downloaded_model_predicts_what_the_explorer_scores(pool_name, fit_on, request):
    # The Explorer scores comparison.compare's first method; the downloaded model must be
    # that ensemble: Algorithm 1's weights for the paper's fit, one vote per kept tree for
    # SDWEC-OOB.
    pool = request.getfixturevalue(pool_name)
    result = comparison.compare(pool, fit_on=fit_on, **PARAMS)
    sol = result.solution
    assert 0 < sol.n_selected < pool.n_trees
    expected_weights = sol.weights if fit_on == "validation" else (sol.weights > 0) * 1.0
    expected = combiners.vote(expected_weights, pool.P_test, pool.classes, pool.prior)
    weighted = combiners.vote(sol.weights, pool.P_test, pool.classes, pool.prior)
    if fit_on == "oob+validation":
        assert (weighted != expected).any()  # the premise: the two votes tell apart here
    data = export.model_joblib(export.pruned_model(pool, sol.weights, fit_on=fit_on,
                                                   params=sol.params, solution=sol))
    model = joblib.load(io.BytesIO(data))
    np.testing.assert_array_equal(model.predict(pool.X_test), expected)
    assert model.score(pool.X_test, pool.y_test) == pytest.approx(result.methods[0]["test"])
    assert model.get_params()["fit_on"] == fit_on
    assert model.get_params()["vote"] == ("uniform" if fit_on == "oob+validation"
                                          else "weighted")
    table, meta = export.read_weights_csv(export.weights_csv(sol.weights, fit_on=fit_on))
    np.testing.assert_array_equal(table["weight"], expected_weights)
    assert meta["fit"] == voting.fit_name(fit_on)
