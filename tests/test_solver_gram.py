"""The solver's Gram matrix by blocks of rows, and the correctness matrix built in place
(the first solve of an upload of 120,000 distinct validation rows)."""

import numpy as np
import pytest

from harness.literal import literal_sdwec
from sdwec import compress, solve, solver
from sdwec.votes import NO_VOTE, Votes
from tests.test_votes import three_class_votes


def test_gram_by_blocks_is_the_lower_triangle_of_x_transpose_x(monkeypatch):
    rng = np.random.default_rng(3)
    rows = rng.choice([-1.0, 0.0, 1.0], size=(37, 5))
    scale = rng.uniform(0.1, 3.0, size=37)
    X = rows * scale[:, None]
    expected = np.tril(X.T @ X)
    for block_bytes in (8 * 5, 8 * 5 * 4, 8 * 5 * 36, 1 << 22):   # 1, 4, 36, all rows a block
        monkeypatch.setattr(solver, "_GRAM_CHUNK_BYTES", block_bytes)
        G = solver._gram(rows, scale)
        np.testing.assert_allclose(G, expected, rtol=1e-14, atol=1e-13)
        assert np.all(np.triu(G, 1) == 0.0)   # only the lower triangle is formed
    # Integer rows are scaled into floats, as float rows are.
    np.testing.assert_allclose(solver._gram(rows.astype(np.int8), scale), expected,
                               rtol=1e-14, atol=1e-13)


def test_gram_of_a_hand_worked_example():
    rows = np.array([[1.0, -1.0], [1.0, 1.0], [0.0, -1.0]])
    scale = np.array([2.0, 1.0, 3.0])
    # X = [[2, -2], [1, 1], [0, -3]]: X^T X = [[4 + 1, -4 + 1], [., 4 + 1 + 9]]
    np.testing.assert_array_equal(solver._gram(rows, scale), [[5.0, 0.0], [-3.0, 14.0]])


@pytest.mark.parametrize("with_zeros", [False, True])
def test_solve_with_small_blocks_equals_the_literal_transcription(monkeypatch, with_zeros):
    rng = np.random.default_rng(11)
    m, l = 300, 12
    y = rng.choice([-1, 1], m)
    H = np.where(rng.random((m, l)) < rng.uniform(0.55, 0.8, l), y[:, None], -y[:, None])
    if with_zeros:
        H[rng.random((m, l)) < 0.2] = 0
    monkeypatch.setattr(solver, "_GRAM_CHUNK_BYTES", 8 * l * 7)   # 7 rows a block
    params = dict(lam=10.0, beta=15.0, gamma=15.0, eps=1.0)
    got = solve(H, y, **params, threshold="none").raw_weights
    np.testing.assert_allclose(got, literal_sdwec(H, y, **params), rtol=1e-10, atol=1e-11)


def test_correctness_matrix_by_hand():
    # classes a, b, c; codes are class indices, -1 did not vote
    codes = np.array([[0, 1, -1], [2, 2, 0]], dtype=np.int8)
    labels = np.array([0, 2])
    v = Votes(codes=codes, labels=labels, counts=np.array([1, 2]), classes=np.array(list("abc")))
    np.testing.assert_array_equal(v.correctness, [[1.0, -1.0, 0.0], [1.0, 1.0, -1.0]])
    assert v.correctness.dtype == np.float64 and not v.correctness.flags.writeable


def test_correctness_form_does_not_need_the_float_matrix():
    P, y, voted, v = three_class_votes(200, 6, seed=5, missing=0.3)
    form = v.correctness_form
    assert "correctness" not in v.__dict__        # the (u, l) float matrix was not built
    C = np.where(~voted, 0, np.where(P == y[:, None], 1, -1))
    expected = compress(C, np.ones(200, dtype=int))
    for name in ("codes", "labels", "counts", "classes"):
        np.testing.assert_array_equal(getattr(form, name), getattr(expected, name))
    assert (form.codes == NO_VOTE).any()
