"""Property tests of the solver over random votes and parameters beyond the sliders' ranges."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sdwec import compress, correctness_matrix, solve
from sdwec.votes import compress_votes

PARAMS = st.fixed_dictionaries(
    {
        "lam": st.one_of(st.just(0.0), st.floats(1e-6, 1e6)),
        "beta": st.one_of(st.just(0.0), st.floats(1e-6, 1e4)),
        "gamma": st.floats(1e-3, 700.0),
        "eps": st.floats(1e-12, 1e3),
        "iterations": st.integers(1, 200),
        "threshold": st.sampled_from(["paper", "adaptive", "none"]),
    }
)


@st.composite
def votes(draw):
    m = draw(st.integers(1, 30))
    l = draw(st.integers(1, 12))
    kind = draw(st.sampled_from(["random", "with_zeros", "equal_columns", "all_right",
                                 "all_wrong"]))
    y = draw(arrays(np.int8, m, elements=st.sampled_from([-1, 1])))
    if kind == "random":
        H = draw(arrays(np.int8, (m, l), elements=st.sampled_from([-1, 1])))
    elif kind == "with_zeros":  # 0: the member did not vote on the row (out-of-bag)
        H = draw(arrays(np.int8, (m, l), elements=st.sampled_from([-1, 0, 1])))
    elif kind == "equal_columns":
        col = draw(arrays(np.int8, m, elements=st.sampled_from([-1, 1])))
        H = np.repeat(col[:, None], l, axis=1)
    elif kind == "all_right":
        H = np.repeat(y[:, None], l, axis=1)
    else:
        H = -np.repeat(y[:, None], l, axis=1)
    return H, y


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(votes(), PARAMS)
def test_weights_and_history_finite_nonnegative_and_repeatable(problem, params):
    H, y = problem
    sol = solve(H, y, **params)
    assert sol.weights.shape == (H.shape[1],)
    assert np.all(np.isfinite(sol.weights)) and np.all(sol.weights >= 0)
    assert np.all(np.isfinite(sol.raw_weights)) and np.all(sol.raw_weights >= 0)
    assert len(sol.history) == params["iterations"]
    for rec in sol.history:
        assert np.isfinite(rec.nonconvex_cost) and np.isfinite(rec.relaxed_cost)
        assert 0 <= rec.n_selected <= H.shape[1]
    # Thresholding only removes weights.
    assert np.all((sol.weights == 0) | (sol.weights == sol.raw_weights))
    again = solve(H, y, **params)
    assert again.weights.tobytes() == sol.weights.tobytes()
    assert again.history == sol.history


@settings(max_examples=60, deadline=None)
@given(votes(), PARAMS)
def test_multiclass_path_equals_binary_path_on_two_classes(problem, params):
    H, y = problem
    binary = solve(H, y, **params)
    # The same two-class problem with string labels through the correctness matrix.
    names = np.array(["neg", "pos"])
    P = names[(H > 0).astype(int)]
    labels = names[(y > 0).astype(int)]
    C = correctness_matrix(P, labels, voted=H != 0)
    multi = solve(C, np.ones(len(y)), **params)
    assert multi.weights.tobytes() == binary.weights.tobytes()
    # The combiners' votes of the same problem: the same table, the same weights.
    votes = compress_votes(P, labels, voted=H != 0)
    assert solve(votes, **params).weights.tobytes() == binary.weights.tobytes()


@settings(max_examples=60, deadline=None)
@given(votes())
def test_compression_preserves_total_count_and_rows(problem):
    H, y = problem
    table = compress(H, y)
    assert table.counts.sum() == table.m == len(y)
    C = y[:, None].astype(int) * H
    rows, counts = np.unique(C.astype(float), axis=0, return_counts=True)
    assert sorted(zip(map(tuple, rows), counts)) == \
        sorted(zip(map(tuple, table.correctness), table.counts))
