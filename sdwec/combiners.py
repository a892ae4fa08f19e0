"""Every way of turning a pool's validation votes into member weights, and the vote itself.

All combiners take the same validation votes -- a prediction matrix ``P`` (m x l, original
labels) with its labels ``y`` and ``classes``, or the :class:`~sdwec.votes.Votes` compressed
from them (the one compressed form, shared with the solver; ``Votes`` and ``compress_votes``
are re-exported here) -- and return a weight vector of length ``l`` (zeros = pruned
members). Members that did not vote on a row (code :data:`~sdwec.votes.NO_VOTE`, the
out-of-bag use) add nothing to any class score and are left out of their own accuracy. One
function, :func:`vote` (and :func:`accuracy`, and the batched :func:`accuracies`), scores any
weight vector by weighted plurality vote. The choices made where the sources leave room (WMV clip,
QFWEC reading, the all-zero fallback, tie-breaking, the relaxed variant, the multi-class
formulation of the least-squares combiners) are documented in ``docs/combiners.md``.

Weighted plurality vote (:mod:`sdwec.plurality`, the rule the estimator votes by too): the score
of a class is the sum of the weights of the members voting for it; the highest score wins; ties
-- including the all-zero weight vector, when the ensemble abstains -- go to the first tied class
in ``prior`` (the most frequent validation class first).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import nnls
from sklearn.linear_model import lasso_path as _sk_lasso_path

from sdwec import plurality, solver
from sdwec.plurality import TIE_TOLERANCE
from sdwec.votes import NO_VOTE, Votes, compress_votes, encode_labels

__all__ = [
    "Votes", "compress_votes", "vote", "accuracy", "accuracies", "abstains",
    "majority", "wmv", "qfwec", "sdwec", "sdwec_solve", "sdwec_select", "sdwec_grid",
    "random_subset", "random_subset_curve", "ordered_curve", "reduce_error_order", "orientation_order",
    "margin_distance_order",
    "ordered_weights", "nnls_stacking", "lasso_path", "member_accuracies", "WMV_CLIP",
    "TIE_TOLERANCE",
]


def _as_votes(P, y=None, classes=None) -> Votes:
    if isinstance(P, Votes):
        return P
    if y is None:
        raise ValueError("labels y are required unless P is already a Votes object")
    return compress_votes(P, y, classes)


def _predict_codes(codes, W, n_classes, rank):
    """Winning class index for every row and weight column: (u, n)."""
    W = np.asarray(W, dtype=float)
    scores = np.empty((n_classes, codes.shape[0], W.shape[1]))
    for k in range(n_classes):
        np.matmul((codes == k).astype(float), W, out=scores[k])
    winner, _ = plurality.decide(scores, np.abs(W).sum(axis=0), rank, axis=0)
    return winner


def accuracies(W, votes: Votes, prior=None) -> np.ndarray:
    """Accuracy of many weight vectors at once.

    Parameters
    ----------
    W : array-like of shape (l,) or (l, n)
        Weight vectors as columns.
    votes : Votes
        Compressed votes of the split to score.
    prior : array-like, optional
        Tie-breaking class order (default: sorted class order).

    Returns
    -------
    ndarray of shape (n,) (a 0-d array for a single vector)
    """
    W = np.asarray(W, dtype=float)
    single = W.ndim == 1
    W2 = W[:, None] if single else W
    if W2.shape[0] != votes.n_members:
        raise ValueError(f"weights have length {W2.shape[0]}, the pool has {votes.n_members} members")
    rank = plurality.tie_rank(votes.classes, prior)
    out = np.empty(W2.shape[1])
    step = max(1, 2_000_000 // max(1, len(votes.counts) * len(votes.classes)))
    for lo in range(0, W2.shape[1], step):
        pred = _predict_codes(votes.codes, W2[:, lo:lo + step], len(votes.classes), rank)
        out[lo:lo + step] = votes.counts @ (pred == votes.labels[:, None]) / votes.m
    return out[0] if single else out


def right(W, votes: Votes, prior=None) -> np.ndarray:
    """Whether each weight vector's vote is right on each unique row of ``votes``.

    Parameters
    ----------
    W : array-like of shape (l, n)
        Weight vectors as columns.
    votes : Votes
    prior : array-like, optional
        Tie-breaking class order.

    Returns
    -------
    ndarray of bool, shape (u, n)
        Row ``i`` stands for ``votes.counts[i]`` original rows (paired tests weigh it so).
    """
    W = np.asarray(W, dtype=float)
    if W.ndim != 2 or W.shape[0] != votes.n_members:
        raise ValueError(f"W must have shape ({votes.n_members}, n); got {W.shape}")
    pred = _predict_codes(votes.codes, W, len(votes.classes), plurality.tie_rank(votes.classes, prior))
    return pred == votes.labels[:, None]


def vote(weights, P, classes, prior=None) -> np.ndarray:
    """Weighted plurality vote of the members.

    Parameters
    ----------
    weights : array-like of shape (l,)
        Member weights (zeros = pruned; the all-zero vector abstains and predicts ``prior[0]``).
    P : array-like of shape (m, l)
        Predicted labels of every member.
    classes : array-like
        Sorted class labels.
    prior : array-like, optional
        Tie-breaking class order, most preferred first (default: sorted order).

    Returns
    -------
    ndarray of shape (m,)
        Predicted labels.
    """
    classes = np.asarray(classes)
    weights = np.asarray(weights, dtype=float)
    P = np.asarray(P)
    if P.ndim != 2 or weights.shape != (P.shape[1],):
        raise ValueError(f"weights must have one entry per column of P; got {weights.shape}, P {P.shape}")
    codes = encode_labels(P, classes, "P")
    pred = _predict_codes(codes, weights[:, None], len(classes), plurality.tie_rank(classes, prior))
    return classes[pred[:, 0]]


def accuracy(weights, P, y, classes, prior=None) -> float:
    """Accuracy of the weighted plurality vote :func:`vote` against labels ``y``."""
    return float(np.mean(vote(weights, P, classes, prior) == np.asarray(y)))


def abstains(weights) -> bool:
    """True when every weight is zero: the ensemble abstains (and predicts ``prior[0]``)."""
    return not np.any(np.asarray(weights) != 0)


def majority(P, y=None, classes=None) -> np.ndarray:
    """Bagging's vote: every member has weight 1."""
    n = P.n_members if isinstance(P, Votes) else np.asarray(P).shape[1]
    return np.ones(n)


def _member_tallies(v: Votes, block=16_384):
    """Rows each member got right and rows it voted on (floats; whole numbers for counts)."""
    # counts @ bool matrix is an integer product numpy does without BLAS: 0.28 s on 113,000
    # x 200 votes, against 0.06 s for float blocks through BLAS. Counts are whole
    # numbers far below 2**53, so the float sums are exact.
    counts = v.counts.astype(float)
    right, voted = np.zeros(v.n_members), np.zeros(v.n_members)
    for lo in range(0, len(counts), block):
        codes, c = v.codes[lo:lo + block], counts[lo:lo + block]
        right += c @ (codes == v.labels[lo:lo + block, None]).astype(float)
        voted += c @ (codes != NO_VOTE).astype(float)
    return right, voted


def member_accuracies(P, y=None, classes=None) -> np.ndarray:
    """Validation accuracy of every member, over the rows it voted on (NaN if none)."""
    right, voted = _member_tallies(_as_votes(P, y, classes))
    with np.errstate(invalid="ignore", divide="ignore"):
        return right / voted


WMV_CLIP = 0.5
"""Accuracies are clipped to [c/m, 1 - c/m] with c = WMV_CLIP (half a row) before the log-odds."""


def wmv(P, y=None, classes=None, *, clip=WMV_CLIP) -> np.ndarray:
    """Kuncheva's weighted majority vote: ``w_i = log(p_i / (1 - p_i))``.

    ``p_i`` is member i's validation accuracy over the ``m_i`` rows it voted on, clipped to
    ``[clip/m_i, 1 - clip/m_i]`` so that a member that is perfect (or always wrong) on the
    validation rows gets a large finite weight instead of an infinite one: with ``clip = 0.5``
    the member is treated as if half a row had gone the other way. Members below 50 % accuracy
    get negative weights (they vote against their class), as in Kuncheva's formula. A member
    that voted on no row gets weight 0 (nothing is known about it).
    """
    right, voted = _member_tallies(_as_votes(P, y, classes))
    seen = voted > 0
    n = np.where(seen, voted, 1)
    c = clip / n
    p = np.clip(right / n, c, 1.0 - c)
    return np.where(seen, np.log(p / (1.0 - p)), 0.0)


def _least_squares_system(v: Votes):
    """Gram matrix and right-hand side of (1/m) * ||C w - 1||^2 on the full rows."""
    C = v.correctness
    G = (C * v.counts[:, None]).T @ C / v.m
    g = C.T @ v.counts / v.m
    return G, g


def _project_sum_box(x, total=1.0, bound=1.0):
    """Euclidean projection onto {sum(w) = total, -bound <= w <= bound} (bisection on the shift)."""
    lo, hi = x.min() - bound - 1.0, x.max() + bound + 1.0
    for _ in range(100):
        tau = 0.5 * (lo + hi)
        if np.clip(x - tau, -bound, bound).sum() > total:
            lo = tau
        else:
            hi = tau
    return np.clip(x - 0.5 * (lo + hi), -bound, bound)


def qfwec(P, y=None, classes=None, *, bound=1.0, ridge=1e-6, max_iter=3000, tol=1e-10):
    """QFWEC (Mao et al. 2015) as the seed paper describes it: square loss, weights summing to 1.

    Minimises ``(1/m) * ||C w - 1||^2`` subject to ``sum(w) = 1`` and ``-bound <= w_i <= bound``,
    where ``C`` is the validation correctness matrix (+1 right, -1 wrong; for binary tasks
    ``C w - 1 = y * (H w - y)``, the square loss on the votes). The sum-to-one constraint is the
    L1 normalisation the seed paper lists; the solution is not sparse. A tiny ridge
    (``ridge * trace(G) / l``) makes the minimiser unique when the validation rows do not
    determine it (fewer distinct rows than members). The equality-constrained minimiser is
    computed in closed form; if it leaves the box, projected accelerated gradient (FISTA)
    finishes the job.

    Returns
    -------
    ndarray of shape (l,)
    """
    v = _as_votes(P, y, classes)
    G, g = _least_squares_system(v)
    n = len(g)
    G = G + (ridge * np.trace(G) / n + 1e-12) * np.eye(n)
    ones = np.ones(n)
    # KKT of min w'Gw - 2g'w s.t. 1'w = 1:  w = G^-1 (g + mu 1), mu fixed by the sum.
    a = np.linalg.solve(G, np.column_stack([g, ones]))
    mu = (1.0 - a[:, 0].sum()) / a[:, 1].sum()
    w = a[:, 0] + mu * a[:, 1]
    if np.all(np.abs(w) <= bound):
        return w
    step = 1.0 / (2.0 * np.linalg.eigvalsh(G)[-1])
    w = _project_sum_box(np.full(n, 1.0 / n), 1.0, bound)
    z, t = w.copy(), 1.0
    for _ in range(max_iter):
        w_next = _project_sum_box(z - step * 2.0 * (G @ z - g), 1.0, bound)
        t_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        z = w_next + ((t - 1.0) / t_next) * (w_next - w)
        done = np.max(np.abs(w_next - w)) < tol
        w, t = w_next, t_next
        if done:
            break
    return w


def sdwec_solve(P, y=None, classes=None, *, lam, beta, gamma, eps, iterations=25,
                threshold="paper"):
    """Run SDWEC (Algorithm 1) on the validation votes and return the full Solution.

    The solver reads the votes' correctness rows (``C = y * H`` for binary tasks; for
    multi-class, one row per row and rival class, :attr:`~sdwec.votes.Votes.plurality_form`),
    merged without expanding to the ``m`` rows; a pool's votes (``Pool.votes("val")``) keep
    that merge, so sweeps pay it once.

    Parameters
    ----------
    P, y, classes
        Validation votes: :class:`~sdwec.votes.Votes`, or a prediction matrix with labels.
    lam, beta, gamma, eps, iterations, threshold
        As in :func:`sdwec.solve`.

    Returns
    -------
    sdwec.solver.Solution
    """
    return solver.solve(_as_votes(P, y, classes), None, lam=lam, beta=beta, gamma=gamma,
                        eps=eps, iterations=iterations, threshold=threshold)


def sdwec(P, y=None, classes=None, **params) -> np.ndarray:
    """SDWEC's thresholded weights (see :func:`sdwec_solve` for the parameters)."""
    return np.asarray(sdwec_solve(P, y, classes, **params).weights, dtype=float)


def sdwec_select(P, y=None, classes=None, **params) -> np.ndarray:
    """SDWEC's support with an unweighted vote (the relaxed variant): 1 where selected, else 0."""
    return (sdwec(P, y, classes, **params) > 0).astype(float)


def sdwec_grid(votes: Votes, grid, iterations=25, threshold="paper") -> np.ndarray:
    """SDWEC's weights at every point of a parameter grid, as columns.

    Parameters
    ----------
    votes : Votes
    grid : sequence of dict
        Each with ``lam``, ``beta``, ``gamma`` and ``eps``.
    iterations, threshold
        As in :func:`sdwec.solve`.

    Returns
    -------
    ndarray of shape (l, len(grid))
    """
    return np.column_stack([sdwec(votes, iterations=iterations, threshold=threshold, **point)
                            for point in grid])


def random_subset(n_members, k, seed) -> np.ndarray:
    """Weight 1 on ``k`` members drawn at random without replacement (seeded), 0 elsewhere."""
    if not 0 <= k <= n_members:
        raise ValueError(f"k must be between 0 and {n_members}, got {k}")
    w = np.zeros(n_members)
    w[np.random.default_rng(seed).choice(n_members, size=k, replace=False)] = 1.0
    return w


def _tie_keys(votes: Votes, prior):
    """Integer offsets that make integer vote counts break ties by ``prior``.

    With ``key = count * (K + 1) + offset`` every class has a distinct key, and the largest
    key is the plurality winner with ties going to the class earliest in ``prior``.
    """
    K = len(votes.classes)
    return K - plurality.tie_rank(votes.classes, prior)


def ordered_curve(order, votes: Votes, prior=None, sizes=None) -> np.ndarray:
    """Accuracy of the unweighted vote of the first ``k`` members of ``order``, for each k.

    Vote counts of all prefixes come from one cumulative sum, which is much cheaper than
    scoring ``l`` weight vectors separately.

    Parameters
    ----------
    order : array-like of shape (l,)
        Member indices.
    votes : Votes
    prior : array-like, optional
    sizes : array-like of int, optional
        Ensemble sizes to report (default ``1 .. len(order)``); size 0 is the abstaining
        ensemble.

    Returns
    -------
    ndarray of shape (len(sizes),)
    """
    order = np.asarray(order, dtype=np.intp)
    K = len(votes.classes)
    offsets = _tie_keys(votes, prior)
    onehot = (votes.codes[:, order, None] == np.arange(K)).astype(np.int32)
    keys = np.cumsum(onehot, axis=1) * (K + 1) + offsets
    correct = np.argmax(keys, axis=2) == votes.labels[:, None]  # (u, len(order))
    curve = np.concatenate([[votes.counts @ (np.argmax(offsets) == votes.labels)],
                            votes.counts @ correct]) / votes.m
    sizes = np.arange(1, len(order) + 1) if sizes is None else np.asarray(sizes, dtype=int)
    return curve[sizes]


def random_subset_curve(votes: Votes, sizes, draws=10, seed=0, prior=None) -> np.ndarray:
    """Mean accuracy of ``draws`` random subsets of every size in ``sizes`` (seeded).

    Each draw is a random permutation of the members; its first ``k`` members are that draw's
    subset of size ``k``.

    Returns
    -------
    ndarray of shape (len(sizes),)
    """
    rng = np.random.default_rng(seed)
    l = votes.n_members
    return np.mean([ordered_curve(rng.permutation(l), votes, prior, sizes)
                    for _ in range(draws)], axis=0)


def reduce_error_order(P, y=None, classes=None, prior=None, n_steps=None,
                       start=()) -> np.ndarray:
    """Reduce-error ordering (Martínez-Muñoz & Suárez): greedy forward selection.

    Starting from the empty sub-ensemble, repeatedly add the member that gives the most
    accurate unweighted plurality vote on the validation rows (ties between candidates go to
    the lowest member index). The first ``k`` members of the order are the pruned ensemble
    of size ``k``.

    Parameters
    ----------
    P, y, classes
        Validation votes: :class:`~sdwec.votes.Votes`, or a prediction matrix with labels.
    prior : array-like, optional
        Tie-breaking class order of the vote.
    n_steps : int, optional
        Stop after this many members (a pruned ensemble of that size needs no more steps):
        the order returned is then that long.  Default: every member.
    start : sequence of int, default ()
        Members already chosen (by another method): the order begins with them, in their
        order, and the greedy steps go on from them.

    Returns
    -------
    ndarray of shape (l,) or (n_steps,)
        Member indices in order of selection.
    """
    v = _as_votes(P, y, classes)
    K, l = len(v.classes), v.n_members
    n_steps = l if n_steps is None else min(int(n_steps), l)
    rows = np.arange(len(v.counts))
    keys = np.tile(_tie_keys(v, prior), (len(rows), 1)).astype(np.int64)  # (u, K)
    # Column K of the lookup below stands for "did not vote": the row stays as it is.
    codes = np.where(v.codes == NO_VOTE, K, v.codes)
    counts = v.counts.astype(float)
    remaining = np.ones(l, dtype=bool)
    order = []

    def add(member):
        order.append(member)
        remaining[member] = False
        voted = codes[:, member] < K
        keys[rows[voted], codes[voted, member]] += K + 1

    for member in start:
        add(int(member))
    while len(order) < n_steps:
        # A new member adds one vote to one class, so whether a row ends up right depends
        # only on which class it votes: tabulate that (u, K + 1) against the row as it is.
        # Only rows where some vote changes the outcome (pivotal rows) tell candidates
        # apart; the others add the same to every candidate's score, so they are left out
        # (as the ensemble grows, few rows stay pivotal).
        # Keys in a row are distinct, so a row is right when its label's key beats the
        # largest other key; a vote for the label adds K + 1 to it, a vote for class c to c's.
        own = keys[rows, v.labels]
        others = keys.copy()
        others[rows, v.labels] = np.iinfo(np.int64).min
        rival = others.max(axis=1)
        now = own > rival
        change = np.zeros((len(rows), K + 1), dtype=np.int8)
        change[:, :K] = (now[:, None] & (own[:, None] > keys + K + 1)).astype(np.int8) - now[:, None]
        change[rows, v.labels] = (own + K + 1 > rival).astype(np.int8) - now
        pivotal = np.flatnonzero(change.any(axis=1))
        cand = np.flatnonzero(remaining)
        gains = counts[pivotal] @ change[pivotal[:, None], codes[pivotal[:, None], cand]]
        add(cand[np.argmax(gains)])
    return np.asarray(order, dtype=np.intp)


def margin_distance_order(P, y=None, classes=None, p=0.075) -> np.ndarray:
    """Margin-distance ordering (Martínez-Muñoz & Suárez, 2004; their MDSQ): greedy
    forward selection towards a sub-ensemble that is right on every row by a small margin.

    Each member's signature is its correctness vector over the rows (+1 right, -1 wrong, 0
    did not vote); step ``u`` adds the member that brings the mean signature of the chosen
    members closest (Euclidean, each row weighted by its count) to the reference vector
    whose every entry is ``p``.  Ties go to the lowest member index.

    Parameters
    ----------
    P, y, classes
        Votes: :class:`~sdwec.votes.Votes`, or a prediction matrix with labels.
    p : float, default=0.075
        The reference margin, the value the authors recommend.

    Returns
    -------
    ndarray of shape (l,)
        Member indices in order of selection.
    """
    v = _as_votes(P, y, classes)
    C = v.correctness
    counts = v.counts.astype(float)
    total = np.zeros(len(counts))
    remaining = np.ones(v.n_members, dtype=bool)
    order = []
    for step in range(1, v.n_members + 1):
        cand = np.flatnonzero(remaining)
        # ||(s + c_j)/u - p||^2 summed with counts, expanded so that no (u, l) matrix of
        # trial means is formed: only c_j's cross term and its square change with j.
        base = total / step - p
        cross = (counts * base) @ C[:, cand]
        square = counts @ (C[:, cand] * C[:, cand]) / step
        distance = 2.0 * cross + square
        best = cand[np.argmin(distance)]
        order.append(best)
        remaining[best] = False
        total += C[:, best]
    return np.asarray(order, dtype=np.intp)


def orientation_order(P, y=None, classes=None) -> np.ndarray:
    """Orientation ordering (Martínez-Muñoz & Suárez): members by angle to the reference.

    Each member's signature is its ±1 correctness vector over the validation rows; the
    reference vector is the projection of the all-ones direction onto the hyperplane
    orthogonal to the ensemble's signature (the sum of all signatures). Members are ordered by
    increasing angle between their signature and the reference (ties by index).

    Returns
    -------
    ndarray of shape (l,)
    """
    v = _as_votes(P, y, classes)
    C = v.correctness  # (u, l)
    c = v.counts.astype(float)
    ens = C.sum(axis=1)
    ones = np.ones(len(c))
    ens_sq = c @ (ens * ens)
    ref = ones - (c @ ens) / ens_sq * ens if ens_sq > 0 else ones
    ref_norm = np.sqrt(c @ (ref * ref))
    if ref_norm < 1e-12 * np.sqrt(c.sum()):
        return np.arange(v.n_members)  # every member signature is parallel: no preference
    cos = ((C * c[:, None]).T @ ref) / (np.sqrt(c.sum()) * ref_norm)
    angles = np.arccos(np.clip(cos, -1.0, 1.0))
    return np.argsort(angles, kind="stable")


def ordered_weights(order, sizes=None) -> np.ndarray:
    """(l, n) weight columns: column j keeps the first ``sizes[j]`` members of ``order``."""
    order = np.asarray(order)
    l = len(order)
    sizes = np.arange(1, l + 1) if sizes is None else np.asarray(sizes, dtype=int)
    position = np.empty(l, dtype=int)
    position[order] = np.arange(l)
    return (position[:, None] < sizes[None, :]).astype(float)


def _scaled_least_squares(v: Votes):
    # sqrt(count)-scaled unique rows reproduce the full-row sum of squares exactly
    s = np.sqrt(v.counts.astype(float))
    return v.correctness * s[:, None], s


def nnls_stacking(P, y=None, classes=None) -> np.ndarray:
    """Non-negative least-squares stacking: ``min ||C w - 1||^2`` subject to ``w >= 0``.

    ``C`` is the validation correctness matrix (for binary tasks, equivalent to fitting the
    ±1 votes to the ±1 labels); solved with :func:`scipy.optimize.nnls`.
    """
    A, b = _scaled_least_squares(_as_votes(P, y, classes))
    w, _ = nnls(A, b)
    return w


def lasso_path(P, y=None, classes=None, *, n_alphas=50, eps=1e-3):
    """Positive Lasso stacking along its regularisation path.

    Minimises ``(1/(2m)) * ||C w - 1||^2 + alpha * ||w||_1`` with ``w >= 0`` (no intercept)
    for ``n_alphas`` values of alpha from the smallest that selects nothing down to
    ``eps`` times it, on a log grid.

    Returns
    -------
    alphas : ndarray of shape (n_alphas,)
        Decreasing, in the scale of the full-row objective above.
    W : ndarray of shape (l, n_alphas)
        Weights for each alpha.
    """
    v = _as_votes(P, y, classes)
    A, b = _scaled_least_squares(v)
    # lasso_path divides the loss by its number of rows (u); rescale so alpha is per full row.
    scale = np.sqrt(len(b) / v.m)
    A, b = A * scale, b * scale
    alpha_max = max(float((A.T @ b).max()) / len(b), 1e-12)
    alphas = alpha_max * np.logspace(0, np.log10(eps), n_alphas)
    _, coefs, _ = _sk_lasso_path(A, b, alphas=alphas, positive=True)
    # At alpha_max, w = 0 meets the optimality conditions exactly; coordinate descent can
    # leave ~1e-16 there (seen with scikit-learn 1.7 / NumPy 2.2).
    coefs[:, alphas >= alpha_max] = 0.0
    return alphas, np.maximum(coefs, 0.0)
