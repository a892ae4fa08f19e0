"""SDWEC beside the baselines on one pool: the numbers the Explorer shows."""

import numpy as np
import pytest

from sdwec import combiners, comparison, datasets, plots, solver
from sdwec.pool import build_pool

PARAMS = dict(lam=10.0, beta=15.0, gamma=15.0, eps=1.0, iterations=25, threshold="paper")


@pytest.fixture(scope="module")
def small_pool():
    data = datasets.load("wine", "binary")
    return build_pool(data.X, data.y, n_trees=12, seed=0)


def test_compare_scores_sdwec_and_the_baselines(small_pool):
    p = small_pool
    result = comparison.compare(p, **PARAMS)
    sol = solver.solve(p.votes("val"), None, **PARAMS)
    np.testing.assert_array_equal(result.solution.weights, sol.weights)
    rows = {r["method"]: r for r in result.methods}
    assert rows["SDWEC"]["test"] == combiners.accuracy(sol.weights, p.P_test, p.y_test,
                                                       p.classes, p.prior)
    assert rows["bagging"]["test"] == combiners.accuracy(np.ones(12), p.P_test, p.y_test,
                                                         p.classes, p.prior)
    assert rows["single"]["validation"] == np.mean(p.single_val == p.y_val)
    assert result.n_val == len(p.y_val) and result.abstain_label == p.prior[0]


def test_compare_sdwec_oob_votes_with_its_support(small_pool):
    p = small_pool
    result = comparison.compare(p, fit_on="oob+validation", **PARAMS)
    sol = solver.solve(p.votes("oob+val"), None, **PARAMS)
    support = (sol.weights > 0).astype(float)
    assert result.methods[0]["method"] == "SDWEC-OOB"
    assert result.methods[0]["test"] == combiners.accuracy(support, p.P_test, p.y_test,
                                                           p.classes, p.prior)
    with pytest.raises(ValueError, match="fit_on"):
        comparison.compare(p, fit_on="train", **PARAMS)


def _fake(test, validation, n_selected, l=10):
    weights = np.zeros(l)
    weights[:n_selected] = 1.0
    sol = solver.Solution(weights=weights, raw_weights=weights, threshold=0.0,
                          thresholds=np.zeros(l), history=())
    rows = [{"method": "SDWEC", "test": test, "validation": validation, "used": ""},
            {"method": "bagging", "test": 0.8, "validation": 0.8, "used": ""}]
    return comparison.Comparison(sol, np.zeros(l), rows, 1, [-1, 1], 20, 21)


def test_over_splits_by_hand():
    summary = comparison.over_splits([_fake(0.9, 1.0, 2), _fake(0.7, 0.9, 4)])
    sdwec = summary[0]
    assert sdwec["test"] == pytest.approx(0.8) and sdwec["test_sd"] == pytest.approx(
        np.sqrt(0.02))  # sample sd of 0.9 and 0.7
    assert sdwec["n_selected"] == 3 and sdwec["n_selected_sd"] == pytest.approx(np.sqrt(2))
    assert sdwec["sparsity"] == pytest.approx(0.7) and summary[1]["test_sd"] == 0
    one = comparison.over_splits([_fake(0.9, 1.0, 2)])
    assert one[0]["test_sd"] == 0 and one[0]["splits"] == 1
    with pytest.raises(ValueError, match="at least one split"):
        comparison.over_splits([])


def test_shared_members():
    assert comparison.shared_members([1, 0, 2, 0], [0, 0, 3, 1]) == {
        "both": 1, "only_first": 1, "only_second": 1}
    with pytest.raises(ValueError, match="differ in length"):
        comparison.shared_members([1, 0], [1])


def test_lambda_path_is_one_solve_per_lambda(small_pool):
    lams = [0.01, 1.0, 100.0]
    path = comparison.lambda_path(small_pool, lams, **PARAMS)  # lam= is ignored
    for j, lam in enumerate(lams):
        sol = solver.solve(small_pool.votes("val"), None, **dict(PARAMS, lam=lam))
        np.testing.assert_array_equal(path.weights[:, j], sol.weights)
        assert path.test_accuracy[j] == combiners.accuracy(
            sol.weights, small_pool.P_test, small_pool.y_test, small_pool.classes,
            small_pool.prior)
    fig = plots.lambda_scrubber(path, lam=1.0)
    assert [f.name for f in fig.frames] == ["0.01", "1", "100"]
    # Each frame's weights are stems from 0 to every positive weight, at the tree's index.
    for j, frame in enumerate(fig.frames):
        stems = frame.data[0]
        x, y = list(stems.x), list(stems.y)
        assert x[2::3] == y[2::3] == [None] * (len(x) // 3)
        assert x[0::3] == x[1::3] and set(y[0::3]) <= {0.0}
        kept = np.flatnonzero(path.weights[:, j] > 0)
        assert x[1::3] == kept.tolist()
        np.testing.assert_array_equal(y[1::3], path.weights[kept, j])
    assert fig.layout.sliders[0].active == 1
    # The heading is a text trace (the frames redraw traces only), one per frame.
    headings = [frame.data[3].text[0] for frame in fig.frames]
    for j, heading in enumerate(headings):
        assert heading.startswith(f"{plots.SCRUBBER_HEADING}{lams[j]:g}: ")
        assert heading.endswith(f"test accuracy {path.test_accuracy[j]:.4f}")
        assert ("abstains" in heading) == (path.n_selected[j] == 0)
    assert fig.data[3].text[0] == headings[1]
    # Slider steps restyle the traces only, so nothing may rely on a recomputed range.
    assert all(step.args[1]["frame"]["redraw"] is False for step in fig.layout.sliders[0].steps)
    for axis in ("xaxis", "yaxis", "xaxis3", "yaxis2", "yaxis3"):
        assert fig.layout[axis].range is not None, axis
