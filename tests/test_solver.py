"""The SDWEC solver against the paper: derivatives, closed forms, a literal transcription."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import BaggingClassifier
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from harness.literal import literal_sdwec
from sdwec import VoteTable, compress, correctness_matrix, solve
from sdwec.solver import (
    PRESETS,
    _relaxed_cost,
    _system,
    _table,
    adaptive_thresholds,
    appendix_C,
    nonconvex_cost,
    paper_threshold,
    penalty,
    relaxed_terms,
    taylor_coefficients,
)
from sdwec.votes import compress_votes

SETTINGS = [PRESETS["SDWEC-A"], PRESETS["SDWEC-B"], dict(lam=1.0, beta=10.0, gamma=20.0, eps=0.1)]


def random_votes(m, l, seed, accuracy=(0.55, 0.8)):
    rng = np.random.default_rng(seed)
    y = rng.choice([-1, 1], m)
    acc = rng.uniform(*accuracy, l)
    H = np.where(rng.random((m, l)) < acc, y[:, None], -y[:, None])
    return H, y


@pytest.fixture(scope="module")
def bagged_votes():
    """Votes of 40 bagged CART trees on a validation split of breast-cancer data."""
    X, y = load_breast_cancer(return_X_y=True)
    y = np.where(y == 1, 1, -1)
    X_tr, X_va, y_tr, y_va = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    bag = BaggingClassifier(DecisionTreeClassifier(), n_estimators=40, random_state=0).fit(X_tr, y_tr)
    H = np.column_stack([bag.classes_[t.predict(X_va).astype(int)] for t in bag.estimators_])
    return H, y_va


# ----------------------------------------------------------------- Taylor coefficients

GRID = [
    (w_hat, gamma, eps, beta)
    for w_hat in (0.0, 0.03, 0.4, 1.0, 2.5)
    for gamma in (1.0, 5.0, 15.0)
    for eps in (0.1, 1.0)
    for beta in (0.0, 15.0, 35.0)
]


@pytest.mark.parametrize("w_hat,gamma,eps,beta", GRID)
def test_taylor_coefficients_match_finite_differences(w_hat, gamma, eps, beta):
    # The relaxed terms with gamma_r frozen at w_hat, differentiated numerically.
    def f(w):
        return relaxed_terms(w, w_hat, gamma, eps, beta)

    g = gamma / (abs(w_hat) + eps)
    h = 1e-4 / g
    d1 = (f(w_hat + h) - f(w_hat - h)) / (2 * h)
    d2 = (f(w_hat + h) - 2 * f(w_hat) + f(w_hat - h)) / h**2
    A, B, C = taylor_coefficients(np.array([w_hat]), gamma, eps, beta)
    # The quadratic A + B w + C w^2 touches f at w_hat with the same slope and curvature.
    assert A[0] + B[0] * w_hat + C[0] * w_hat**2 == pytest.approx(f(w_hat), rel=1e-12, abs=1e-12)
    assert B[0] + 2 * C[0] * w_hat == pytest.approx(d1, rel=1e-6, abs=1e-7)
    assert 2 * C[0] == pytest.approx(d2, rel=1e-4, abs=1e-4 * g)


@pytest.mark.parametrize("w_hat,gamma,eps,beta", GRID)
def test_C_equals_appendix_closed_form(w_hat, gamma, eps, beta):
    _, _, C = taylor_coefficients(np.array([w_hat]), gamma, eps, beta)
    assert C[0] == pytest.approx(appendix_C(np.array([w_hat]), gamma, eps, beta)[0], rel=1e-11)


def test_coefficients_equal_the_textbook_derivatives():
    # f'(ŵ) = tanh(x) - β σ(-x), f''(ŵ) = γ_r (sech² x + β σ(x) σ(-x)), f(ŵ) by logaddexp,
    # x = γ_r ŵ, written with numpy's and scipy's own tanh, logistic and logaddexp: the
    # solver computes them all from one exponential.  Negative ŵ too (a line 15 input).
    from scipy.special import expit

    w_hat = np.concatenate([-np.logspace(-9, 2, 40), [0.0], np.logspace(-9, 2, 40)])
    for gamma, eps, beta in [(15.0, 1.0, 15.0), (15.0, 1e-3, 35.0), (0.1, 10.0, 0.0),
                             (700.0, 1e-12, 35.0)]:
        g = gamma / (np.abs(w_hat) + eps)
        x = g * w_hat
        first = np.tanh(x) - beta * expit(-x)
        with np.errstate(over="ignore"):  # cosh² overflows to inf where sech² is 0
            C = 0.5 * g * (1.0 / np.cosh(x) ** 2 + beta * expit(x) * expit(-x))
        value = (np.logaddexp(-x, x) + beta * np.logaddexp(-x, 0.0)) / g
        A, B, C_got = taylor_coefficients(w_hat, gamma, eps, beta)
        np.testing.assert_allclose(C_got, C, rtol=1e-13, atol=1e-300)
        # B and A are differences of terms: equal up to rounding of those terms.
        B_ref = first - 2.0 * C * w_hat
        assert np.all(np.abs(B - B_ref) <= 1e-13 * np.abs(B_ref) + 1e-15 * (np.abs(first) + 1))
        A_ref = value - first * w_hat + C * w_hat**2
        assert np.all(np.abs(A - A_ref) <= 1e-12 * np.abs(A_ref) + 1e-15 * (np.abs(value) + 1))


def test_coefficients_finite_where_the_closed_form_overflows():
    w_hat = np.array([0.0, 1e-9, 0.5, 3.0, 1e3])
    with np.errstate(over="ignore", invalid="ignore"):
        assert not np.all(np.isfinite(appendix_C(w_hat, 700.0, 1e-12, 35.0)))
    for part in taylor_coefficients(w_hat, 700.0, 1e-12, 35.0):
        assert np.all(np.isfinite(part))


# ----------------------------------------------------------------- literal transcription


@pytest.mark.parametrize("m,l,seed", [(40, 8, 0), (25, 60, 1), (120, 30, 2), (1, 5, 3), (60, 1, 4)])
@pytest.mark.parametrize("params", SETTINGS)
def test_solve_agrees_with_literal_transcription(m, l, seed, params):
    H, y = random_votes(m, l, seed)
    sol = solve(H, y, **params, threshold="none")
    expected = literal_sdwec(H, y, **params, iterations=25)
    np.testing.assert_allclose(sol.raw_weights, expected, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(sol.weights, sol.raw_weights)


def test_literal_agreement_on_bagged_trees(bagged_votes):
    H, y = bagged_votes
    for params in SETTINGS:
        sol = solve(H, y, **params)
        np.testing.assert_allclose(sol.raw_weights, literal_sdwec(H, y, **params), atol=1e-10)


def with_abstentions(H, seed, voted=0.63):
    """``H`` with about ``1 - voted`` of its entries set to 0 (did not vote, as out-of-bag),
    plus one row nobody voted on and one member that never voted."""
    H = H * (np.random.default_rng(seed).random(H.shape) < voted)
    H[0] = 0
    H[:, -1] = 0
    return H


@pytest.mark.parametrize("m,l,seed", [(40, 8, 0), (25, 60, 1), (120, 30, 2), (3, 5, 3)])
@pytest.mark.parametrize("params", SETTINGS)
def test_zero_entries_agree_with_literal_transcription(m, l, seed, params):
    H, y = random_votes(m, l, seed)
    H = with_abstentions(H, seed)
    sol = solve(H, y, **params, threshold="none")
    np.testing.assert_allclose(sol.raw_weights, literal_sdwec(H, y, **params), rtol=0, atol=1e-10)
    # The correctness form: C = y * H against ones.
    C = y[:, None] * H
    ones = np.ones(m)
    np.testing.assert_allclose(solve(C, ones, **params, threshold="none").raw_weights,
                               literal_sdwec(C, ones, **params), rtol=0, atol=1e-10)


def test_multiclass_zero_entries_agree_with_literal_on_correctness_matrix():
    rng = np.random.default_rng(7)
    y = rng.choice(["a", "b", "c"], 70)
    P = np.where(rng.random((70, 11)) < 0.7, y[:, None], rng.choice(["a", "b", "c"], (70, 11)))
    voted = rng.random((70, 11)) < 0.6
    C = correctness_matrix(P, y, voted=voted)
    assert set(np.unique(C[~voted])) == {0} and set(np.unique(C[voted])) <= {-1, 1}
    for params in SETTINGS:
        sol = solve(C, np.ones(70), **params, threshold="none")
        np.testing.assert_allclose(sol.raw_weights, literal_sdwec(C, np.ones(70), **params),
                                   rtol=0, atol=1e-10)
        # The combiners' compressed votes with the same abstentions reach the same weights
        # under the correctness reading (the plurality one solves another table).
        votes = compress_votes(P, y, voted=voted)
        assert solve(votes, **params, threshold="none",
                     multiclass="correctness").raw_weights.tobytes() == sol.raw_weights.tobytes()


def test_multiclass_path_agrees_with_literal_on_correctness_matrix():
    rng = np.random.default_rng(5)
    y = rng.choice(["a", "b", "c"], 80)
    P = np.where(rng.random((80, 12)) < 0.7, y[:, None], rng.choice(["a", "b", "c"], (80, 12)))
    C = correctness_matrix(P, y)
    sol = solve(C, np.ones(80), **PRESETS["SDWEC-B"])
    np.testing.assert_allclose(sol.raw_weights, literal_sdwec(C, np.ones(80), **PRESETS["SDWEC-B"]), atol=1e-10)


# ----------------------------------------------------------------- correctness matrix


def test_correctness_matrix_is_y_times_H_for_two_classes():
    H, y = random_votes(30, 7, 9)
    np.testing.assert_array_equal(correctness_matrix(H, y), y[:, None] * H)
    a = solve(H, y, **PRESETS["SDWEC-B"])
    b = solve(correctness_matrix(H, y), np.ones(30), **PRESETS["SDWEC-B"])
    np.testing.assert_array_equal(a.weights, b.weights)


def test_correctness_matrix_marks_right_and_wrong():
    P = np.array([["x", "y"], ["y", "y"]])
    np.testing.assert_array_equal(correctness_matrix(P, np.array(["x", "x"])), [[1, -1], [-1, -1]])


# ----------------------------------------------------------------- per-iteration conditions


@pytest.mark.parametrize("with_zeros", [False, True])
def test_first_order_condition_and_positive_definite_system(with_zeros):
    H, y = random_votes(70, 15, 11)
    if with_zeros:
        H = H * (np.random.default_rng(3).random(H.shape) < 0.7)  # members that did not vote
    table = _table(compress(H, y))
    for params in SETTINGS:
        w = np.ones(15)
        for _ in range(10):
            S, A, B, C, alpha, X, b, diag = _system(table, w, **params)
            M = alpha * X.T @ X + np.diag(diag)
            np.testing.assert_allclose(M, M.T, atol=1e-14)
            assert np.linalg.eigvalsh(M).min() > 0
            w_star = np.linalg.solve(M, b)
            # Gradient of eq. 10 at the un-projected minimiser, written term by term.
            SC = S[:, None] * table.rows
            grad = (2 * params["lam"] / table.m * SC.T @ (table.counts * (SC @ w_star - 1))
                    + (B + 2 * C * w_star) / 15 + 2 * (w_star - w) / 15)
            assert np.abs(grad).max() < 1e-10
            w = np.maximum(w_star, 0)


def test_costs_fall_like_figure_3(bagged_votes):
    H, y = bagged_votes
    for params in SETTINGS:
        hist = solve(H, y, **params).history
        assert len(hist) == 25
        assert hist[-1].nonconvex_cost < hist[0].nonconvex_cost
        assert hist[-1].relaxed_cost < hist[0].relaxed_cost
        # Slow-step regularisation: the relaxed model ends close to the true cost.
        assert abs(hist[-1].relaxed_cost - hist[-1].nonconvex_cost) < 0.25 * hist[0].nonconvex_cost


def test_nonconvex_cost_by_hand():
    # Two rows, two classifiers. w = (1, 0): row 1 right, row 2 wrong.  w = (1, 1): row 2 tie.
    H = np.array([[1, 1], [-1, 1]])
    y = np.array([1, 1])
    table = compress(H, y)
    assert nonconvex_cost(table, np.array([1.0, 0.0]), lam=2.0, beta=3.0) == pytest.approx(2 / 2 * 4 + 1 / 2)
    assert nonconvex_cost(table, np.array([1.0, 1.0]), lam=2.0, beta=3.0) == pytest.approx(2 / 2 * 1 + 2 / 2)
    assert nonconvex_cost(table, np.array([-1.0, 2.0]), lam=2.0, beta=3.0) == pytest.approx(
        2 / 2 * (0 + 0) + 3 / 2 + 3 / 2 * 1)


def test_nonconvex_cost_with_members_that_did_not_vote_by_hand():
    # Row 1: only member 0 votes (right); row 2: only member 1 votes (wrong); row 3: nobody.
    H = np.array([[1, 0], [0, 1], [0, 0]])
    y = np.array([1, -1, 1])
    table = compress(H, y)
    # w = (1, 1): C w = (1, -1, 0) -> 0 + 4 + 1 (a row nobody voted on is a tie).
    assert nonconvex_cost(table, np.array([1.0, 1.0]), lam=3.0, beta=1.0) == pytest.approx(
        3 / 3 * 5 + 2 / 2)
    # w = (0, 2): C w = (0, -2, 0) -> 1 + 4 + 1.
    assert nonconvex_cost(table, np.array([0.0, 2.0]), lam=3.0, beta=1.0) == pytest.approx(
        3 / 3 * 6 + 2 / 2)


def dense_costs(H, y, w, w_hat, lam, beta, gamma, eps):
    """Eq. 4 and eq. 10 written over the full rows, straight from the paper."""
    m, l = H.shape
    z = H @ w
    nonconvex = (lam / m * ((np.sign(z) - y) ** 2).sum() + np.abs(w).sum() / l
                 + beta / l * np.maximum(-w, 0).sum())
    S = 1.0 / (np.abs(H @ w_hat) + eps)
    A, B, C = taylor_coefficients(w_hat, gamma, eps, beta)
    relaxed = (lam / m * ((S * z - y) ** 2).sum() + (A.sum() + B @ w + C @ w**2) / l
               + ((w - w_hat) ** 2).sum() / l)
    return nonconvex, relaxed


@pytest.mark.parametrize("seed", range(4))
def test_costs_with_zero_entries_equal_the_dense_formulas(seed):
    rng = np.random.default_rng(seed)
    H = rng.choice([-1, 0, 1], size=(40, 9), p=[0.35, 0.3, 0.35])
    y = rng.choice([-1, 1], 40)
    w, w_hat = rng.uniform(-0.2, 1.5, 9), rng.uniform(0, 1.5, 9)
    params = dict(lam=2.0, beta=15.0, gamma=15.0, eps=0.5)
    table = _table(compress(H, y))
    S, A, B, C, *_ = _system(table, w_hat, **params)
    expected = dense_costs(H, y, w, w_hat, **params)
    assert nonconvex_cost(compress(H, y), w, params["lam"], params["beta"]) == pytest.approx(
        expected[0], rel=1e-12)
    assert _relaxed_cost(table, w, table.rows @ w, w_hat, S, A, B, C, params["lam"]) == \
        pytest.approx(expected[1], rel=1e-12)


# ----------------------------------------------------------------- thresholds


def test_paper_threshold_is_where_penalty_falls_to_1e_3():
    for beta, gamma, eps in [(15, 15, 1), (35, 5, 0.1), (10, 20, 0.1)]:
        t = paper_threshold(beta, gamma, eps)
        assert t > 0
        assert penalty(t, beta, gamma / eps) == pytest.approx(1e-3, rel=1e-9)


def test_threshold_extremes_are_finite():
    assert paper_threshold(0.0, 15, 1) == 0.0
    assert paper_threshold(1e-9, 15, 1) == 0.0           # P(0) already below 1e-3
    t = paper_threshold(35, 700, 1e-12)
    assert np.isfinite(t) and 0 <= t < 1e-9


def test_thresholding_modes():
    H, y = random_votes(60, 20, 4)
    paper = solve(H, y, **PRESETS["SDWEC-B"])
    none = solve(H, y, **PRESETS["SDWEC-B"], threshold="none")
    adaptive = solve(H, y, **PRESETS["SDWEC-B"], threshold="adaptive")
    np.testing.assert_array_equal(paper.raw_weights, none.raw_weights)
    assert none.threshold == 0.0 and np.array_equal(none.weights, none.raw_weights)
    assert paper.threshold == paper_threshold(15, 15, 1)
    np.testing.assert_array_equal(paper.weights, np.where(paper.raw_weights > paper.threshold, paper.raw_weights, 0))
    assert np.isnan(adaptive.threshold)
    np.testing.assert_array_equal(adaptive.thresholds, adaptive_thresholds(adaptive.raw_weights, 15, 15, 1))


def test_paper_reading_matches_reported_sparsity_and_literal_reading_does_not(bagged_votes):
    H, y = bagged_votes
    a_paper = solve(H, y, **PRESETS["SDWEC-A"])
    a_literal = solve(H, y, **PRESETS["SDWEC-A"], threshold="adaptive")
    b_paper = solve(H, y, **PRESETS["SDWEC-B"])
    assert a_paper.sparsity == 0.0          # the paper: SDWEC-A mean sparsity 0.00
    assert a_literal.n_selected == 0        # literal per-weight reading removes every weight
    assert b_paper.sparsity >= 0.6          # the paper: SDWEC-B about 0.90


# ----------------------------------------------------------------- compression, determinism


@pytest.mark.parametrize("H,y", [
    (np.array([[1, -1], [1, -1], [-1, -1], [1, 1]]), np.array([1, 1, -1, -1])),
    (np.array([[1, 0], [1, 0], [-1, 0], [0, 1], [0, 0], [0, 0]]), np.array([1, 1, -1, -1, 1, -1])),
])
def test_compress_counts_unique_rows(H, y):
    table = compress(H, y)
    C = y[:, None] * H
    uniq, counts = np.unique(C, axis=0, return_counts=True)
    got = sorted(zip(map(tuple, table.correctness), table.counts))
    assert got == sorted(zip(map(tuple, uniq.astype(float)), counts))
    assert table.m == len(y) and isinstance(table, VoteTable)
    # The solver reads exactly these rows: compress gives the correctness form directly.
    assert table.correctness_form is table


def test_table_and_matrix_give_identical_results_and_runs_are_bitwise_repeatable(bagged_votes):
    H, y = bagged_votes
    table = compress(H, y)
    a = solve(H, y, **PRESETS["SDWEC-B"])
    b = solve(table, None, **PRESETS["SDWEC-B"])
    c = solve(H.astype(np.int8), y.astype(float), **PRESETS["SDWEC-B"])
    d = solve(correctness_matrix(H, y), np.ones(len(y)), **PRESETS["SDWEC-B"])
    # The combiners' votes (unique (votes, label) rows) reach the same table without expansion.
    e = solve(compress_votes(H, y, [-1, 1]), **PRESETS["SDWEC-B"])
    for other in (b, c, d, e):
        assert a.weights.tobytes() == other.weights.tobytes()
        assert a.history == other.history


@pytest.mark.parametrize("seed", range(3))
def test_every_route_to_the_solver_is_bitwise_identical_with_zero_entries(seed):
    rng = np.random.default_rng(seed)
    H = rng.choice([-1, 0, 1], size=(60, 14), p=[0.3, 0.3, 0.4])
    y = rng.choice([-1, 1], 60)
    a = solve(H, y, **PRESETS["SDWEC-B"])
    b = solve(compress(H, y), None, **PRESETS["SDWEC-B"])
    c = solve(y[:, None] * H, np.ones(60), **PRESETS["SDWEC-B"])
    d = solve(compress_votes(np.where(H == 0, 1, H), y, [-1, 1], voted=H != 0),
              **PRESETS["SDWEC-B"])
    for other in (b, c, d):
        assert a.weights.tobytes() == other.weights.tobytes()
        assert a.history == other.history


def test_extreme_parameters_give_finite_weights():
    H, y = random_votes(50, 12, 8)
    for params in [dict(lam=1e6, beta=1e4, gamma=700, eps=1e-12), dict(lam=0, beta=0, gamma=1e-3, eps=1e3),
                   dict(lam=1e-3, beta=35, gamma=700, eps=1e-9)]:
        sol = solve(H, y, **params, iterations=40)
        assert np.all(np.isfinite(sol.weights)) and np.all(sol.weights >= 0)
        assert all(np.isfinite(r.nonconvex_cost) and np.isfinite(r.relaxed_cost) for r in sol.history)


def _no_data_weight(beta, gamma, eps, iterations=25):
    """Algorithm 1 at λ = 0 by hand: one scalar, each pass a step ŵ − f'(ŵ)/(f''(ŵ) + 2)
    (the minimiser of eq. 10 without the data term), clipped at 0."""
    w = 1.0
    for _ in range(iterations):
        g = gamma / (abs(w) + eps)
        logistic = 1.0 / (1.0 + np.exp(g * w))  # σ(−g w)
        slope = np.tanh(g * w) - beta * logistic
        curvature = g * (1.0 / np.cosh(g * w) ** 2 + beta * logistic * (1.0 - logistic))
        w = max(w - slope / (curvature + 2.0), 0.0)
    return w


@pytest.mark.parametrize("m,l,seed", [(40, 7, 0), (300, 30, 1)])
def test_lambda_zero_keeps_every_member_or_none(m, l, seed):
    """docs/algorithm.md, "λ = 0": one weight for all, whatever the votes, so line 15 keeps
    every member (SDWEC-A's β, γ, ε; threshold "none") or none (SDWEC-B's)."""
    H, y = random_votes(m, l, seed)
    for preset, kept in (("SDWEC-A", l), ("SDWEC-B", 0)):
        params = dict(PRESETS[preset], lam=0.0)
        value = _no_data_weight(params["beta"], params["gamma"], params["eps"])
        g = params["gamma"] / params["eps"]
        threshold = -np.log(np.exp(1e-3 * g / params["beta"]) - 1.0) / g  # P(t) = 1e-3
        assert (value > threshold) == bool(kept), (preset, value, threshold)
        sol = solve(H, y, **params)
        np.testing.assert_allclose(sol.raw_weights, value, rtol=1e-9)
        assert sol.n_selected == kept
        assert solve(H, y, **params, threshold="none").n_selected == l


# ----------------------------------------------------------------- validation

GOOD_H = np.array([[1, -1], [-1, 1], [1, 1]])
GOOD_Y = np.array([1, -1, 1])


@pytest.mark.parametrize(
    "H,y,kwargs,message",
    [
        (GOOD_H[0], GOOD_Y, {}, "2-D"),
        (GOOD_H, GOOD_Y[:2], {}, "one label per row"),
        (np.array([[1, 2], [1, 1], [1, -1]]), GOOD_Y, {}, "only -1, 0 \\(did not vote\\) and \\+1"),
        (np.array([[1, 0.5], [1, 1], [1, -1]]), GOOD_Y, {}, "H must hold only -1, 0"),
        (np.array([[1, -3], [1, 1], [1, -1]], dtype=np.int8), GOOD_Y, {}, "e.g. -3"),
        (GOOD_H, np.array([1, 0, 1]), {}, "y must hold only -1 and \\+1"),
        (GOOD_H, np.array([1, 2, 1]), {}, "y must hold only"),
        (np.array([[1, np.nan], [1, 1], [1, -1]]), GOOD_Y, {}, "NaN"),
        (np.array([[1, np.inf], [1, 1], [1, -1]]), GOOD_Y, {}, "infinite"),
        (np.empty((0, 3)), np.empty(0), {}, "at least one row"),
        (np.empty((3, 0)), GOOD_Y, {}, "at least one row and one classifier"),
        (GOOD_H, GOOD_Y, {"lam": -1}, "lam"),
        (GOOD_H, GOOD_Y, {"beta": -0.1}, "beta"),
        (GOOD_H, GOOD_Y, {"gamma": 0}, "gamma"),
        (GOOD_H, GOOD_Y, {"eps": 0}, "eps"),
        (GOOD_H, GOOD_Y, {"eps": -1}, "eps"),
        (GOOD_H, GOOD_Y, {"iterations": 0}, "iterations"),
        (GOOD_H, GOOD_Y, {"iterations": 2.5}, "iterations"),
        (GOOD_H, GOOD_Y, {"threshold": "median"}, "threshold must be one of"),
        (GOOD_H, GOOD_Y, {"lam": float("nan")}, "lam must be a finite"),
        (np.array([["a", "b"]]), np.array([1]), {}, "numeric"),
        (GOOD_H, None, {}, "y .* is required"),
    ],
)
def test_bad_input_raises_value_error_naming_the_problem(H, y, kwargs, message):
    with pytest.raises(ValueError, match=message):
        solve(H, y, **kwargs)


def test_vote_table_with_labels_is_rejected():
    with pytest.raises(ValueError, match="y=None"):
        solve(compress(GOOD_H, GOOD_Y), GOOD_Y)


def test_least_squares_fallback_solves_the_same_system():
    from sdwec.solver import _least_squares

    H, y = random_votes(40, 10, 12)
    table = _table(compress(H, y))
    S, A, B, C, alpha, X, b, diag = _system(table, np.linspace(0.1, 1.5, 10), **PRESETS["SDWEC-B"])
    M = alpha * X.T @ X + np.diag(diag)
    np.testing.assert_allclose(_least_squares(alpha, X, diag, b, np.sqrt(table.counts)),
                               np.linalg.solve(M, b), atol=1e-10)
