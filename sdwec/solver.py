"""The SDWEC weight solver: Algorithm 1 of Özgür, Nar and Erdem (2018).

Equation numbers refer to the paper (``shared/paper/sdwec.tex``); ``docs/algorithm.md``
gives the derivations and every reading of an ambiguity.

Everything is computed on the *correctness matrix* ``C = y * H`` (row ``s`` multiplied by
``y_s``): since ``y_s**2 == 1``, every term of the cost depends on ``H`` and ``y`` only through
``C`` (``|H_s w| = |C_s w|``, ``(S_s H_s w - y_s)**2 = (S_s C_s w - 1)**2`` and
``y_s sgn(H_s w) = sgn(C_s w)``).  Identical rows of ``C`` are interchangeable, so the solver
works on the unique rows with counts, as kept by :class:`sdwec.votes.Votes` (the one
compressed form of votes that the combiners use too); every sum over the ``m`` rows becomes a
count-weighted sum over the unique rows.  This is exact, not an approximation, and it is what
makes a slider move in the dashboard instant.  An entry 0 of ``H`` or ``C`` (a member that did
not vote on a row) is handled exactly: it adds nothing to ``C_s w``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, lstsq
from scipy.linalg.blas import dsyrk
from threadpoolctl import ThreadpoolController

from sdwec.paper import PRESETS  # noqa: F401  (re-exported: the paper's two settings)

# THRESHOLDS and MULTICLASS stay importable from here (their home until the parameters got
# a module of their own).
from sdwec.params import MULTICLASS, THRESHOLDS, SolverParams  # noqa: F401

# compress and correctness_matrix stay importable from here (their home until the votes
# got a module of their own).
from sdwec.votes import Votes, compress, correctness_matrix  # noqa: F401

# The solver's BLAS calls run on one thread.  Measured on this project's 2-core machines:
# NSL-KDD with l = 1000 (2,259 unique rows) takes 1.9 s single-threaded against 2.6-3.0 s
# with two threads, and on a loaded machine OpenBLAS's spinning threads make the small
# l = 200 systems a hundred times slower (0.05 s against 6 s).  A dashboard serving several
# sessions also wants one core per solve.
_BLAS = None


def _blas_limit():
    """Context limiting the BLAS to one thread."""
    global _BLAS
    if _BLAS is None:
        _BLAS = ThreadpoolController()
    return _BLAS.limit(limits=1, user_api="blas")

#: Level at which the non-negativity penalty P(w) counts as "off" (Algorithm 1, line 15).
PENALTY_LEVEL = 1e-3

# --------------------------------------------------------------------------- relaxations


def sign_approximation(x, w_hat_value, eps):
    """Convex relaxation of ``sgn`` around a fixed point (eq. 6).

    Parameters
    ----------
    x : array_like
        Values ``H_s w`` at which to evaluate the approximation.
    w_hat_value : float
        ``H_s ŵ``, the value at the point of expansion.
    eps : float
        The paper's ε > 0.

    Returns
    -------
    ndarray
        ``x / (|H_s ŵ| + ε)``; it equals ``sgn`` at ``x = H_s ŵ`` up to ε.
    """
    return np.asarray(x, dtype=float) / (abs(w_hat_value) + eps)


def adaptive_gamma(w_hat, gamma, eps):
    """Adaptive log-sum-exp sharpness ``γ_r = γ / (|ŵ_r| + ε)`` (Algorithm 1, line 7)."""
    return gamma / (np.abs(np.asarray(w_hat, dtype=float)) + eps)


def abs_approximation(w, w_hat, gamma, eps):
    """Adaptive log-sum-exp approximation of ``|w|`` (eq. 7 with γ_r of line 7).

    ``(1/γ_r) log(e^{-γ_r w} + e^{γ_r w})``, computed with ``logaddexp`` so it never overflows.
    """
    g = adaptive_gamma(w_hat, gamma, eps)
    x = g * np.asarray(w, dtype=float)
    return np.logaddexp(-x, x) / g


def penalty(w, beta, g):
    """Non-negativity penalty ``P(w) = (β/g) log(e^{-g w} + 1)`` (eq. 8)."""
    x = g * np.asarray(w, dtype=float)
    return beta * np.logaddexp(-x, 0.0) / g


def relaxed_terms(w, w_hat, gamma, eps, beta):
    """Sum of the two smooth per-weight terms of eq. 9 (|w| and the penalty) at ``w``."""
    g = adaptive_gamma(w_hat, gamma, eps)
    x = g * np.asarray(w, dtype=float)
    return (np.logaddexp(-x, x) + beta * np.logaddexp(-x, 0.0)) / g


def taylor_coefficients(w_hat, gamma, eps, beta):
    """Second-order Taylor coefficients of the relaxed per-weight terms around ``ŵ``.

    The function expanded is ``f(w) = (1/γ_r) log(e^{-γ_r w} + e^{γ_r w})
    + (β/γ_r) log(e^{-γ_r w} + 1)`` with ``γ_r`` fixed at its value for ``ŵ``.
    Writing ``x = γ_r ŵ`` and ``σ`` for the logistic function:

    * ``f'(ŵ)  = tanh(x) - β σ(-x)``
    * ``f''(ŵ) = γ_r (sech²(x) + β σ(x) σ(-x))``

    and ``f(w) ≈ f(ŵ) + f'(ŵ)(w - ŵ) + ½ f''(ŵ)(w - ŵ)² = A + B w + C w²`` with

    * ``C = ½ f''(ŵ)`` (equal to the appendix's closed form in ``u = e^{γ_r ŵ}``),
    * ``B = f'(ŵ) - 2 C ŵ``,
    * ``A = f(ŵ) - f'(ŵ) ŵ + C ŵ²``.

    ``tanh``, the logistic function and ``sech² x = 4 e^{-2|x|} / (1 + e^{-2|x|})²`` never
    overflow, so any γ, ε > 0 gives finite coefficients.

    Returns
    -------
    A, B, C : ndarray
        Arrays shaped like ``w_hat``.
    """
    w_hat = np.asarray(w_hat, dtype=float)
    g = adaptive_gamma(w_hat, gamma, eps)
    x = g * w_hat
    # Everything from e = e^{-|x|} (never overflows): one exp and two log1p, where tanh,
    # two logistic functions and two logaddexp took three times as long (the iteration's
    # largest cost on ten tables of 200 trees).  With σ(x)σ(-x) = e / (1 + e)², σ(-x) =
    # e / (1 + e) for x >= 0 and 1 / (1 + e) for x < 0, t = e², tanh|x| = (1 - t)/(1 + t)
    # and log(e^{-x} + e^{x}) = |x| + log1p(t), log(e^{-x} + 1) = max(-x, 0) + log1p(e).
    ax = np.abs(x)
    e = np.exp(-ax)
    t = e * e
    one_e, one_t = 1.0 + e, 1.0 + t
    sig_neg = np.where(x >= 0.0, e, 1.0) / one_e
    first = np.copysign((1.0 - t) / one_t, x) - beta * sig_neg
    C = 0.5 * g * (4.0 * t / (one_t * one_t) + beta * e / (one_e * one_e))
    B = first - 2.0 * C * w_hat
    value = (ax + np.log1p(t) + beta * (np.maximum(-x, 0.0) + np.log1p(e))) / g
    A = value - first * w_hat + C * w_hat**2
    return A, B, C


def appendix_C(w_hat, gamma, eps, beta):
    """The appendix's closed form of ``C_r`` (overflows for large ``γ_r ŵ_r``; for checks only)."""
    g = adaptive_gamma(w_hat, gamma, eps)
    u = np.exp(np.asarray(w_hat, dtype=float) * g)
    num = 4 * u**2 + 8 * u**3 + 4 * u**4 + beta * u + 2 * beta * u**3 + beta * u**5
    return g * num / (2 * (u**3 + u**2 + u + 1) ** 2)


# --------------------------------------------------------------------------- thresholds


def _log_expm1(t):
    """``log(e^t - 1)`` for t > 0 without overflow."""
    t = np.asarray(t, dtype=float)
    big = t > 30.0
    safe = np.where(big, 1.0, t)
    return np.where(big, t + np.log1p(-np.exp(-np.where(big, t, 30.0))), np.log(np.expm1(safe)))


def penalty_root(beta, g, level=PENALTY_LEVEL):
    """The ``w`` where ``P(w) = (β/g) log(1 + e^{-g w})`` equals ``level``, clipped at 0.

    Closed form: ``w = -log(e^{level·g/β} - 1) / g``.  When ``P`` never falls to ``level``
    for ``w ≥ 0`` (``P(0) = β log 2 / g ≤ level``, including β = 0) the root is negative or
    absent, and the threshold is 0: nothing beyond exact zeros is removed.
    """
    g = np.asarray(g, dtype=float)
    if beta <= 0:
        return np.zeros_like(g)
    root = -_log_expm1(level * g / beta) / g
    return np.maximum(root, 0.0)


def paper_threshold(beta, gamma, eps, level=PENALTY_LEVEL):
    """Scalar threshold of the ``"paper"`` reading of Algorithm 1, line 15.

    Uses the adaptive γ at ``w = 0``, ``g = γ/ε``: the sharpest the penalty ever gets.
    """
    return float(penalty_root(beta, gamma / eps, level))


def adaptive_thresholds(w, beta, gamma, eps, level=PENALTY_LEVEL):
    """Per-weight thresholds of the literal reading: each weight with its own ``γ_r``."""
    return penalty_root(beta, adaptive_gamma(w, gamma, eps), level)


# --------------------------------------------------------------------------- vote table

#: The solver's input in its 0.1 name; votes of every kind are now one type.
VoteTable = Votes


class _Table(NamedTuple):
    """What the iteration reads: unique correctness rows, their counts (float), ``m``."""

    rows: np.ndarray
    counts: np.ndarray
    m: int

    @property
    def n_classifiers(self):
        return self.rows.shape[1]


def _table(votes, multiclass="plurality"):
    """The solver's table of a :class:`Votes`: the unique rows and counts of its correctness
    form, or for more than two classes and ``multiclass="plurality"`` its plurality form."""
    if isinstance(votes, _Table):
        return votes
    if not isinstance(votes, Votes):
        raise TypeError(f"expected sdwec.votes.Votes (from compress or compress_votes); "
                        f"got {type(votes).__name__}")
    # Two classes: the forms are equal (tests/test_plurality.py), the correctness one cheaper.
    form = votes.plurality_form if multiclass == "plurality" and len(votes.classes) > 2 \
        else votes.correctness_form
    # m is the number of rows (their total weight), as in the paper's λ/m, also where the
    # plurality form has several rows (one per rival) for one row: λ keeps its meaning.
    return _Table(rows=form.correctness, counts=form.counts.astype(float), m=votes.m)


# --------------------------------------------------------------------------- solution


@dataclass(frozen=True)
class IterationRecord:
    """Costs and weights after one pass of Algorithm 1, lines 6-13.

    ``weights`` are the iteration's non-negative weights before any thresholding (line 15
    applies only after the last pass); ``n_selected`` counts their non-zero entries.
    """

    iteration: int
    nonconvex_cost: float
    relaxed_cost: float
    n_selected: int
    weights: np.ndarray = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Solution:
    """Result of :func:`solve`.

    Attributes
    ----------
    weights : ndarray of shape (l,)
        Final weights, after thresholding (Algorithm 1, lines 15-16); all ``>= 0``.
    raw_weights : ndarray of shape (l,)
        Weights after the last iteration, before thresholding.
    threshold : float
        The scalar threshold applied (0.0 for ``"none"``; NaN for ``"adaptive"``, whose
        thresholds differ per weight, see ``thresholds``).
    thresholds : ndarray of shape (l,)
        The threshold each weight was compared with.
    history : tuple of IterationRecord
        One record per iteration.
    params : SolverParams
        The parameters of the run (a read-only mapping too).
    """

    weights: np.ndarray
    raw_weights: np.ndarray
    threshold: float
    thresholds: np.ndarray
    history: tuple
    params: SolverParams = field(default_factory=SolverParams)

    @property
    def selected(self):
        """Indices of the classifiers with non-zero weight."""
        return np.flatnonzero(self.weights)

    @property
    def n_selected(self):
        """Number of classifiers with non-zero weight (``||w||_0``)."""
        return int(np.count_nonzero(self.weights))

    @property
    def sparsity(self):
        """Sparsity ``1 - ||w||_0 / l`` (eq. 12)."""
        return 1.0 - self.n_selected / self.weights.shape[0]


def nonconvex_cost(votes, w, lam, beta, z=None):
    """Cost of eq. 4 with the real ``sgn``, ``|w|`` and ``max(-w, 0)`` (``sgn(0) = 0``).

    Parameters
    ----------
    votes : Votes
        From :func:`compress` or :func:`sdwec.votes.compress_votes`.
    w : ndarray of shape (l,)
    lam, beta : float
    z : ndarray of shape (u,), optional
        The unique correctness rows times ``w``, if already known (inside the iteration).
    """
    table = _table(votes)
    if z is None:
        z = table.rows @ w
    return float(_nonconvex_terms(table.counts, table.m, z, w, lam, beta))


def _nonconvex_terms(counts, m, z, w, lam, beta):
    """Eq. 4 summed over the last axis: one cost, or one per split of :func:`solve_many`."""
    # (sgn(H_s w) - y_s)^2 = (sgn(C_s w) - 1)^2: 0 when right, 1 on a tie, 4 when wrong.
    miss = np.where(z > 0, 0.0, np.where(z < 0, 4.0, 1.0))
    l = w.shape[-1]
    return (lam / m * (counts * miss).sum(-1) + np.abs(w).sum(-1) / l
            + beta / l * np.maximum(-w, 0.0).sum(-1))


def _relaxed_cost(table, w, z, w_hat, S, A, B, C, lam):
    """Eq. 10 (the Taylor model minimised in this iteration) at ``w``, with ``z = rows @ w``."""
    return float(_relaxed_terms(table.counts, table.m, w, z, w_hat, S, A, B, C, lam))


def _relaxed_terms(counts, m, w, z, w_hat, S, A, B, C, lam):
    """Eq. 10 summed over the last axis (one split, or one per split of :func:`solve_many`)."""
    l = w.shape[-1]
    resid = S * z - 1.0
    return (lam / m * (counts * resid**2).sum(-1)
            + (A.sum(-1) + (B * w).sum(-1) + (C * w**2).sum(-1)) / l
            + ((w - w_hat) ** 2).sum(-1) / l)


def _coefficients(table, w_hat, lam, beta, gamma, eps, z_hat=None):
    """Eq. 11 around ``ŵ`` without its scaled rows: ``S``, the Taylor coefficients, ``α``,
    the row scale ``√count · S``, the right-hand side ``b`` and the diagonal.

    ``z_hat = rows @ ŵ`` may be passed when the caller already has it.
    """
    l = w_hat.shape[0]
    if z_hat is None:
        z_hat = table.rows @ w_hat
    S = 1.0 / (np.abs(z_hat) + eps)
    A, B, C = taylor_coefficients(w_hat, gamma, eps, beta)
    alpha = 2.0 * lam / table.m
    # (SH)^T(SH) = sum_u count_u S_u^2 C_u^T C_u: scale rows by sqrt(count) S instead of
    # ever forming an m x m diagonal matrix.
    scale = np.sqrt(table.counts) * S
    b = alpha * (table.rows.T @ (table.counts * S)) + (2.0 * w_hat - B) / l
    diag = 2.0 / l * (C + 1.0)
    return S, A, B, C, alpha, scale, b, diag


def _system(table, w_hat, lam, beta, gamma, eps, z_hat=None):
    """:func:`_coefficients` with the scaled rows ``X = rows * scale`` formed: eq. 11 reads
    ``(α XᵀX + diag) w = b``.  The iteration never forms ``X`` whole (see :func:`_gram`)."""
    S, A, B, C, alpha, scale, b, diag = _coefficients(table, w_hat, lam, beta, gamma, eps,
                                                      z_hat)
    return S, A, B, C, alpha, table.rows * scale[:, None], b, diag


#: Bytes of scaled rows formed at a time by :func:`_gram`: small enough to stay in cache.
_GRAM_CHUNK_BYTES = 1 << 22


def _gram(rows, scale):
    """``XᵀX`` for ``X = rows * scale[:, None]``, lower triangle only (upper left 0).

    ``X`` is formed a block of rows at a time and each block's product added by a symmetric
    rank-k update (BLAS ``dsyrk``), so the iteration never allocates an ``m x l`` matrix: on
    120,000 x 200 unique rows forming ``X`` whole (181 MiB) and multiplying took 0.22 s a
    pass, the blocks 0.14 s (one thread).  The sums are the same up to their order
    (rounding, about 1e-16 relative).
    """
    u, l = rows.shape
    step = max(1, _GRAM_CHUNK_BYTES // (8 * l))
    block = np.empty((min(step, u), l))
    G = np.zeros((l, l), order="F")
    for lo in range(0, u, step):
        X = block[: min(u, lo + step) - lo]
        np.multiply(rows[lo:lo + step], scale[lo:lo + step, None], out=X)
        # X.T is Fortran-ordered: dsyrk reads it without a copy and adds X^T X to G in place.
        G = dsyrk(1.0, X.T, beta=1.0, c=G, lower=1, overwrite_c=1)
    return G


def _cholesky_solve(M, b):
    """Solve ``M x = b`` for symmetric positive definite ``M`` (overwritten; only its lower
    triangle is read)."""
    # Inputs are finite by construction; skipping scipy's checks matters for small systems.
    return cho_solve(cho_factor(M, lower=True, overwrite_a=True, check_finite=False), b,
                     check_finite=False)


def _solve_linear(alpha, rows, scale, diag, b, target):
    """Solve ``(alpha X^T X + diag(diag)) w = b`` (eq. 11) with ``X = rows * scale[:, None]``,
    by Cholesky.

    With fewer unique rows ``u`` than classifiers ``l`` the Woodbury identity turns the
    ``l x l`` system into a ``u x u`` one: ``M^{-1} = D^{-1} - D^{-1} X^T (I/α + X D^{-1}
    X^T)^{-1} X D^{-1}``; both matrices are symmetric positive definite.

    ``M`` is positive definite in exact arithmetic, but with extreme settings (tiny ε and a
    tied vote, so ``S_s ~ 1/ε``) its condition number passes 1/machine-epsilon and Cholesky
    breaks down.  Then the same minimiser is found as the least-squares problem whose normal
    equations are eq. 11, ``min ||√α (X w - target)||² + ||D^{1/2} w - D^{-1/2} r||²`` with
    ``b = α X^T target + r``, solved by QR, which never squares the condition number.
    """
    u, l = rows.shape
    try:
        if alpha > 0 and u < l:
            X = rows * scale[:, None]
            Dinv_b = b / diag
            XD = X / diag
            K = XD @ X.T
            K.flat[:: u + 1] += 1.0 / alpha
            w = Dinv_b - (XD.T @ _cholesky_solve(K, X @ Dinv_b))
        else:
            M = alpha * _gram(rows, scale)
            on_diagonal = np.arange(l)
            M[on_diagonal, on_diagonal] += diag
            w = _cholesky_solve(M, b)
        if np.all(np.isfinite(w)):
            return w
    except LinAlgError:
        pass
    return _least_squares(alpha, rows * scale[:, None], diag, b, target)


def _least_squares(alpha, X, diag, b, target):
    """Eq. 11 solved as the equivalent least-squares problem (see :func:`_solve_linear`)."""
    root_a, root_d = np.sqrt(alpha), np.sqrt(diag)
    r = b - alpha * (X.T @ target)
    A = np.vstack([root_a * X, np.diag(root_d)])
    rhs = np.concatenate([root_a * target, r / root_d])
    return lstsq(A, rhs, lapack_driver="gelsy")[0]


def line15_thresholds(w, beta, gamma, eps, threshold="paper"):
    """The thresholds Algorithm 1, line 15, compares the weights ``w`` with.

    Parameters
    ----------
    w : ndarray of shape (l,)
        Raw weights (after the last iteration, or any iteration to see what it would keep).
    beta, gamma, eps : float
    threshold : {"paper", "adaptive", "none"}
        The reading of line 15 (see :func:`solve`).

    Returns
    -------
    scalar : float
        The single threshold (NaN for ``"adaptive"``, whose thresholds differ per weight).
    thresholds : ndarray of shape (l,)
        The threshold of each weight; ``w > thresholds`` are kept.
    """
    l = np.shape(w)[0]
    if threshold == "paper":
        thr = paper_threshold(beta, gamma, eps)
        return thr, np.full(l, thr)
    if threshold == "adaptive":
        return float("nan"), adaptive_thresholds(w, beta, gamma, eps)
    if threshold == "none":
        return 0.0, np.zeros(l)
    raise ValueError(f"threshold must be one of {', '.join(map(repr, THRESHOLDS))}; "
                     f"got {threshold!r}")


def solve(H, y=None, lam=10.0, beta=15.0, gamma=15.0, eps=1.0, iterations=25, threshold="paper",
          multiclass="plurality", *, params=None):
    """Find sparse non-negative ensemble weights with Algorithm 1 of the SDWEC paper.

    Parameters
    ----------
    H : array_like of shape (m, l) or Votes
        Votes in {-1, +1} of ``l`` classifiers on ``m`` validation rows (0 where a member did
        not vote), or votes compressed by :func:`compress` or
        :func:`sdwec.votes.compress_votes` (then ``y`` must be ``None``).
    y : array_like of shape (m,)
        Labels in {-1, +1}.
    lam : float, default=10.0
        λ >= 0, weight of the data-fidelity term.
    beta : float, default=15.0
        β >= 0, weight of the non-negativity penalty.
    gamma : float, default=15.0
        γ > 0, sharpness of the adaptive log-sum-exp.
    eps : float, default=1.0
        ε > 0, in the sign relaxation and the adaptive γ.
    iterations : int, default=25
        Number of passes k of lines 6-13.
    threshold : {"paper", "adaptive", "none"}, default="paper"
        How line 15 is read.  ``"paper"``: one scalar threshold, the ``w`` where the
        non-negativity penalty ``P(w) = (β/g) log(1 + e^{-g w})`` with ``g = γ/ε`` (the
        adaptive γ at ``w = 0``) falls to 1e-3.  This is the reading that agrees with the
        paper's reported sparsities (SDWEC-A 0.00, SDWEC-B about 0.90).  ``"adaptive"``: the
        literal reading, each weight compared with the root of ``P`` for its own
        ``γ_r = γ/(|w_r| + ε)``; under SDWEC-A it zeroes every weight.  ``"none"``: no
        thresholding.  See ``docs/algorithm.md``.
    multiclass : {"plurality", "correctness"}, default="plurality"
        For :class:`~sdwec.votes.Votes` of more than two classes, which condition the target
        ``sgn(Hw) = 1`` stands for (:data:`MULTICLASS`): the true class outscores every rival
        (one row per row and rival class; ``m`` in λ/m stays the number of rows, so a row
        sums its misses over its rivals), or a weighted majority of members is right.  No
        effect on two classes, where both are the paper's problem.
    params : SolverParams, optional
        All of the above as one value (:class:`sdwec.params.SolverParams`), used as it is;
        then the individual parameters must be left at their defaults.

    Returns
    -------
    Solution
        Its ``params`` is the :class:`~sdwec.params.SolverParams` of the run.

    Raises
    ------
    ValueError
        For votes other than -1, 0, +1, labels other than ±1, NaN/inf, wrong shapes, empty
        input, or parameters out of range; the message names the problem.
    """
    p = _params(params, lam, beta, gamma, eps, iterations, threshold, multiclass)
    if isinstance(H, Votes):
        if y is not None:
            raise ValueError("pass y=None with Votes: they already include the labels")
        table = _table(H, p.multiclass)
    else:
        if y is None:
            raise ValueError("y (labels in {-1, +1}) is required unless H is Votes "
                             "(from compress or compress_votes)")
        table = _table(compress(H, y))
    with _blas_limit():
        [(w, history)] = _iterate([table], p.lam, p.beta, p.gamma, p.eps, p.iterations)
    return _solution(w, history, p)


_DEFAULTS = SolverParams()


def _params(params, *values):
    """The run's :class:`SolverParams`: ``params`` as given, or built from ``values``."""
    if params is None:
        return SolverParams(*values)
    if not isinstance(params, SolverParams):
        raise TypeError(f"params must be sdwec.params.SolverParams; got {type(params).__name__}")
    if SolverParams(*values) != _DEFAULTS:
        raise ValueError("pass either params or the individual parameters, not both")
    return params


def _solution(w, history, p):
    """Line 15 applied to the last iteration's weights ``w``: the :class:`Solution`."""
    thr, thresholds = line15_thresholds(w, p.beta, p.gamma, p.eps, p.threshold)
    weights = np.where(w > thresholds, w, 0.0)
    return Solution(weights=weights, raw_weights=w, threshold=thr, thresholds=thresholds,
                    history=tuple(history), params=p)


def solve_many(votes, lam=10.0, beta=15.0, gamma=15.0, eps=1.0, iterations=25,
               threshold="paper", multiclass="plurality", *, params=None):
    """:func:`solve` on several vote tables at once: the splits of one configuration.

    The same Algorithm 1 loop as :func:`solve` (:func:`_iterate`), on every table at once:
    its iterations stacked along a leading axis, so that ten small splits cost a few single
    solves instead of ten.  The weights equal :func:`solve`'s up to rounding (about 1e-12
    relative; up to 1e-8 of the largest weight with ill-conditioned extreme settings such as
    λ = ε = 0.001), where the tables are solved by a batched LU and a table alone by Cholesky
    or the other way round.

    Parameters
    ----------
    votes : sequence of Votes
        Compressed votes (:func:`compress`, :func:`sdwec.votes.compress_votes`) of the same
        ``l`` classifiers.
    lam, beta, gamma, eps, iterations, threshold, multiclass, params
        As in :func:`solve`.

    Returns
    -------
    list of Solution
        One per table, in order.
    """
    p = _params(params, lam, beta, gamma, eps, iterations, threshold, multiclass)
    tables = [_table(v, p.multiclass) for v in votes]
    if len({t.n_classifiers for t in tables}) > 1:
        raise ValueError("every vote table must have the same classifiers (columns)")
    if not tables:
        return []
    with _blas_limit():
        runs = _iterate(tables, p.lam, p.beta, p.gamma, p.eps, p.iterations)
    return [_solution(w, history, p) for w, history in runs]


def _iterate(tables, lam, beta, gamma, eps, iterations):
    """Algorithm 1, lines 2-14, on one or more tables at once (the splits of a configuration):
    ``iterations`` passes from ``w = 1``; each table's last weights and history.

    The one loop of the solver, for :func:`solve` (one table) and :func:`solve_many`.  The
    tables are stacked along a leading axis and padded to the same number of unique rows
    with rows of count 0, which add nothing to any sum, so that each numpy call of an
    iteration serves every table: with the small tables of a slider move (ten tables of 20-50
    unique rows and 200 trees) a call takes microseconds and the calls, not the arithmetic,
    are the time.  The linear system of each pass (eq. 11) is solved for every table at once
    (:meth:`_Batch.step`) where the tables have fewer than ``l / 2`` unique rows, and
    otherwise, or where that fails (extreme settings), table by table by Cholesky with a
    least-squares fallback (:func:`_solve_linear`), which never copies the rows.  Both solve
    the same system: the weights agree to about 1e-12 relative.  Measured side by side
    (l = 200, best of 8, a loaded 2-core machine): 10 tables of 30 rows 0.034 s at once
    against 0.075 s one by one, one such table 0.003 against 0.012 s; from about 100 rows on
    the two are within noise, and with more rows than trees the batched LU took up to twice
    the Cholesky's time (10 tables of 200 rows: 0.91 against 0.35 s).
    """
    r, l = len(tables), tables[0].n_classifiers
    sizes = [t.rows.shape[0] for t in tables]
    u = max(sizes)
    counts = np.zeros((r, u))
    for i, t in enumerate(tables):
        counts[i, : sizes[i]] = t.counts
    m = np.array([t.m for t in tables], dtype=float)
    alpha = 2.0 * lam / m
    root_counts = np.sqrt(counts)
    batch = _Batch(tables, sizes, alpha) if lam > 0 and 2 * u < l else None

    def products(w):  # rows @ w of every table, (r, u)
        if batch is not None:
            return (batch.rows @ w[..., None])[..., 0]
        z = np.zeros((r, u))
        for i, t in enumerate(tables):
            z[i, : sizes[i]] = t.rows @ w[i]
        return z

    def transposed_products(v):  # rowsᵀ @ v of every table, (r, l)
        if batch is not None:
            return (batch.rows_t @ v[..., None])[..., 0]
        return np.stack([t.rows.T @ v[i, : sizes[i]] for i, t in enumerate(tables)])

    w = np.ones((r, l))
    z = products(w)
    histories = [[] for _ in range(r)]
    for n in range(1, iterations + 1):
        w_hat = w
        S = 1.0 / (np.abs(z) + eps)
        A, B, C = taylor_coefficients(w_hat, gamma, eps, beta)
        b = alpha[:, None] * transposed_products(counts * S) + (2.0 * w_hat - B) / l
        diag = 2.0 / l * (C + 1.0)
        scale = root_counts * S  # (SH)ᵀ(SH) = Σ count S² CᵀC: rows scaled by √count S
        w = None if batch is None else batch.step(scale, diag, b)
        if w is None:
            w = np.stack([_solve_linear(alpha[i], t.rows, scale[i, : sizes[i]], diag[i], b[i],
                                        root_counts[i, : sizes[i]])
                          for i, t in enumerate(tables)])
        w = np.maximum(w, 0.0)
        w.setflags(write=False)  # kept in the histories: nothing may change it later
        z = products(w)
        nonconvex = _nonconvex_terms(counts, m, z, w, lam, beta)
        relaxed = _relaxed_terms(counts, m, w, z, w_hat, S, A, B, C, lam)
        n_selected = np.count_nonzero(w, axis=-1)
        for i, history in enumerate(histories):
            history.append(IterationRecord(
                iteration=n, nonconvex_cost=float(nonconvex[i]),
                relaxed_cost=float(relaxed[i]), n_selected=int(n_selected[i]), weights=w[i]))
    return [(w[i], history) for i, history in enumerate(histories)]


class _Batch:
    """The tables' rows padded and stacked, for :func:`_batched_step`."""

    def __init__(self, tables, sizes, alpha):
        r, u, l = len(tables), max(sizes), tables[0].n_classifiers
        self.rows = np.zeros((r, u, l))
        for i, t in enumerate(tables):
            self.rows[i, : sizes[i]] = t.rows
        # Products read C-ordered operands: numpy multiplies a transposed view two to three
        # times slower (0.13 against 0.40 ms an iteration with u = 40 rows).
        self.rows_t = np.ascontiguousarray(np.swapaxes(self.rows, 1, 2))
        self.shift = np.eye(u) / alpha[:, None, None]

    def step(self, scale, diag, b):
        """Eq. 11, ``(α XᵀX + diag) w = b`` with ``X = rows · scale``, for every table by one
        batched LU of the Woodbury matrix (see :func:`_solve_linear`); ``None`` if a system
        is singular or a weight not finite.

        ``X`` is never formed: ``K = s sᵀ ∘ (rows D⁻¹ rowsᵀ) + I/α``, one pass over the rows
        instead of two.
        """
        rows, rows_t = self.rows, self.rows_t
        try:
            Dinv_b = b / diag
            K = (rows / diag[:, None, :]) @ rows_t  # rows D^-1 rows^T
            K *= scale[:, :, None]
            K *= scale[:, None, :]
            K += self.shift
            rhs = scale * (rows @ Dinv_b[..., None])[..., 0]  # X D^-1 b
            inner = np.linalg.solve(K, rhs[..., None])[..., 0]
            w = Dinv_b - (rows_t @ (scale * inner)[..., None])[..., 0] / diag
        except np.linalg.LinAlgError:
            return None
        return w if np.all(np.isfinite(w)) else None
