"""SDWEC fitted on out-of-bag votes, at a target ensemble size: beyond the paper.

The paper finds SDWEC's weights on the validation rows only: 18 to 85 rows on most UCI
datasets, holding a few dozen distinct vote patterns, which SDWEC-B fits perfectly and
overfits (``results/reproduction/``: about 1.5-2 points below full bagging). A bagged pool
has many more honest votes: each tree's votes on the training rows outside its bootstrap
sample, its *out-of-bag* (OOB) rows. This module builds on them:

* :func:`oob_votes` -- the training rows' OOB votes as :class:`~sdwec.votes.Votes`: a tree's
  vote where the row is out of its bootstrap sample, :data:`~sdwec.votes.NO_VOTE` (an entry
  0 of the correctness matrix) where it is in. A pool keeps them (``Pool.votes("oob")``,
  stacked with the validation rows as ``Pool.votes("oob+val")``).
* :func:`fit_to_size` -- SDWEC at a target ensemble size ``K``: bisection on log λ for the
  smallest λ whose support has at least ``K`` trees, then its ``K`` largest weights.
* :func:`stability_ranking` -- stability selection: how often SDWEC-B selects each tree over
  bootstrap resamples of the rows (seeded); the top ``K`` form the ensemble.

The methods built on them (``SDWEC-OOB``, ``SDWEC-stable``, ...) are registered in
:mod:`sdwec.methods`; ``docs/oob.md`` gives the reasons and ``results/oob/`` the evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from sdwec.paper import PRESETS
from sdwec.solver import Solution, solve
from sdwec.votes import Votes, compress_votes

__all__ = ["DEFAULT_SIZE", "LAMBDA_RANGE", "LAMBDA_RATIO", "OOB_LAMS", "STABLE_RESAMPLES",
           "target_size", "oob_votes", "keep_largest", "SizedFit", "fit_to_size",
           "StabilityRanking", "stability_ranking", "resample"]

DEFAULT_SIZE = 0.2
"""Default target size ``K``: a fifth of the pool (40 of 200 trees)."""

LAMBDA_RANGE = (1e-3, 1e4)
"""Where :func:`fit_to_size` looks for λ: the frontier's grid (1e-3 to 1e3) and one decade
more, since on the stacked votes the support still grows a little past 1e3."""

LAMBDA_RATIO = 1.25
"""Bisection stops when the bracket ``[lo, hi]`` has ``hi / lo`` at most this: the kept trees
are then cut from a support at most 25 % of λ above the smallest that reaches ``K``."""

OOB_LAMS = np.logspace(-1, 4, 16)
"""λ path of ``SDWEC-OOB path``: 16 values over [0.1, 1e4]. Below 0.1 the support on the
stacked votes is empty on every UCI pool we tried, and each λ costs a solve over all training
rows, so the path is shorter than the validation-only one."""

STABLE_RESAMPLES = 20
"""Bootstrap resamples of stability selection."""

_SDWEC_B = PRESETS["SDWEC-B"]
_FIXED = {k: v for k, v in _SDWEC_B.items() if k != "lam"}


def target_size(size, n_members) -> int:
    """The target ensemble size ``K`` for a pool of ``n_members``.

    Parameters
    ----------
    size : int, float in (0, 1] or None
        An int is a number of members (at most ``n_members``); a float is a share of
        ``n_members``, rounded to the nearest integer and at least 1; ``None`` means
        :data:`DEFAULT_SIZE`.
    n_members : int

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If ``size`` is not a positive int up to ``n_members`` or a float in (0, 1].
    """
    if size is None:
        size = DEFAULT_SIZE
    if isinstance(size, bool) or not isinstance(size, Real):
        raise ValueError(f"the target size must be an int (members) or a float in (0, 1] "
                         f"(a share of the pool); got {size!r}")
    if isinstance(size, Integral):
        if not 1 <= size <= n_members:
            raise ValueError(f"the target size must be between 1 and the pool's {n_members} "
                             f"members; got {size}")
        return int(size)
    if not 0 < size <= 1:
        raise ValueError(f"a target size given as a float is a share of the pool and must be "
                         f"in (0, 1]; got {size}")
    return max(1, int(round(size * n_members)))


def oob_votes(predictions, y, in_bag, classes=None) -> Votes:
    """The training rows' out-of-bag votes.

    Parameters
    ----------
    predictions : array-like of shape (n, l)
        Every member's predicted label on every training row.
    y : array-like of shape (n,)
        True labels.
    in_bag : array-like of bool, shape (n, l)
        True where the row is in the member's bootstrap sample: that vote is left out
        (:data:`~sdwec.votes.NO_VOTE`, correctness entry 0).
    classes : array-like, optional
        Sorted class labels (default: those seen).

    Returns
    -------
    sdwec.votes.Votes
    """
    in_bag = np.asarray(in_bag, dtype=bool)
    return compress_votes(predictions, y, classes, voted=~in_bag)


def keep_largest(weights, k) -> np.ndarray:
    """Boolean mask of the ``k`` largest positive weights (ties to the lower index).

    Fewer than ``k`` positive weights keeps them all.
    """
    weights = np.asarray(weights, dtype=float)
    order = np.lexsort((np.arange(len(weights)), -weights))
    kept = np.zeros(len(weights), dtype=bool)
    kept[order[:k]] = True
    return kept & (weights > 0)


@dataclass(frozen=True)
class SizedFit:
    """Result of :func:`fit_to_size`.

    Attributes
    ----------
    kept : ndarray of bool, shape (l,)
        The members kept: the ``size`` largest weights of :attr:`solution` (all of its
        support when it has fewer).
    lam : float
        The λ whose solution was cut.
    solution : sdwec.solver.Solution
        SDWEC's solution at ``lam``.
    size : int
        The target size ``K``.
    evaluations : tuple of (float, int)
        Every λ solved, in order, with its support size.
    """

    kept: np.ndarray
    lam: float
    solution: Solution
    size: int
    evaluations: tuple

    @property
    def reached(self) -> bool:
        """Whether ``size`` members were kept (False: even the largest λ selects fewer)."""
        return int(self.kept.sum()) == self.size

    @property
    def n_kept(self) -> int:
        """Number of members kept."""
        return int(self.kept.sum())

    def weights(self, vote="uniform") -> np.ndarray:
        """Member weights: 1 on the kept members (``"uniform"``) or their SDWEC weights
        (``"weighted"``); 0 elsewhere."""
        if vote == "uniform":
            return self.kept.astype(float)
        if vote == "weighted":
            return np.where(self.kept, self.solution.weights, 0.0)
        raise ValueError(f"vote must be 'uniform' or 'weighted'; got {vote!r}")


def fit_to_size(votes: Votes, size, *, lam_range=LAMBDA_RANGE, lam_ratio=LAMBDA_RATIO,
                beta=_FIXED["beta"], gamma=_FIXED["gamma"], eps=_FIXED["eps"], iterations=25,
                threshold="paper", multiclass="plurality") -> SizedFit:
    """SDWEC at a target ensemble size: λ by bisection on log λ, then the largest weights.

    The support of SDWEC's solution grows with λ (more weight on the data), though not
    strictly monotonically. The search solves at the largest λ first: if even that support
    has fewer than ``K`` members, it is kept as it is. Otherwise it bisects ``[lo, hi]`` on
    log λ, keeping ``hi`` at a λ whose support has at least ``K`` members, until
    ``hi / lo <= lam_ratio`` or a support of exactly ``K`` is met; if no λ below ``hi`` was
    seen under ``K``, the lower end is solved too and taken when it reaches ``K``. The ``K``
    largest weights of the solution at ``hi`` are kept.

    Parameters
    ----------
    votes : sdwec.votes.Votes
        The rows to fit (e.g. ``Pool.votes("oob+val")``; entries of members that did not
        vote count 0, exactly).
    size : int, float in (0, 1] or None
        Target size ``K`` (see :func:`target_size`).
    lam_range : (float, float), default=LAMBDA_RANGE
        Smallest and largest λ considered.
    lam_ratio : float, default=LAMBDA_RATIO
        Bracket width, as ``hi / lo``, at which bisection stops.
    beta, gamma, eps, iterations, threshold, multiclass
        As in :func:`sdwec.solve` (default: SDWEC-B's β, γ, ε).

    Returns
    -------
    SizedFit

    Raises
    ------
    ValueError
        For a bad size, range or ratio, or solver parameters out of range.
    """
    if not isinstance(votes, Votes):
        raise TypeError(f"votes must be sdwec.votes.Votes (e.g. Pool.votes('oob+val')); got "
                        f"{type(votes).__name__}")
    k = target_size(size, votes.n_members)
    lo, hi = (float(v) for v in lam_range)
    if not 0 < lo < hi or not np.isfinite(hi):
        raise ValueError(f"lam_range must be (lo, hi) with 0 < lo < hi; got {lam_range}")
    if not lam_ratio > 1:
        raise ValueError(f"lam_ratio must be > 1; got {lam_ratio}")
    evaluations = []

    def solved(lam):
        sol = solve(votes, None, lam=lam, beta=beta, gamma=gamma, eps=eps,
                    iterations=iterations, threshold=threshold, multiclass=multiclass)
        evaluations.append((lam, sol.n_selected))
        return sol

    best = solved(hi)
    if best.n_selected > k:
        below_seen = False
        while hi / lo > lam_ratio:
            mid = float(np.sqrt(lo * hi))
            sol = solved(mid)
            if sol.n_selected >= k:
                hi, best = mid, sol
                if sol.n_selected == k:
                    break
            else:
                lo, below_seen = mid, True
        if not below_seen and best.n_selected != k:
            sol = solved(lo)
            if sol.n_selected >= k:
                hi, best = lo, sol
    return SizedFit(kept=keep_largest(best.weights, k), lam=hi, solution=best, size=k,
                    evaluations=tuple(evaluations))


def resample(votes: Votes, rng) -> Votes:
    """A bootstrap resample of the ``m`` rows behind ``votes``, without expanding them.

    Drawing ``m`` rows with replacement and compressing them again gives unique-row counts
    that are multinomial with probabilities ``counts / m``: draw those directly.

    Parameters
    ----------
    votes : sdwec.votes.Votes
    rng : numpy.random.Generator

    Returns
    -------
    sdwec.votes.Votes
        The rows drawn at least once, with their new counts (they still sum to ``m``).
    """
    counts = rng.multinomial(votes.m, votes.counts / votes.m)
    drawn = counts > 0
    return Votes(codes=votes.codes[drawn], labels=votes.labels[drawn], counts=counts[drawn],
                 classes=votes.classes)


@dataclass(frozen=True)
class StabilityRanking:
    """Result of :func:`stability_ranking`.

    Attributes
    ----------
    frequency : ndarray of shape (l,)
        Share of the resamples in which SDWEC selected each member.
    mean_weight : ndarray of shape (l,)
        Its mean weight over the resamples.
    order : ndarray of shape (l,)
        Members by decreasing frequency, ties by decreasing mean weight, then index.
    """

    frequency: np.ndarray
    mean_weight: np.ndarray
    order: np.ndarray

    def top(self, k) -> np.ndarray:
        """Weight 1 on the first ``k`` members of :attr:`order`, 0 elsewhere."""
        w = np.zeros(len(self.order))
        w[self.order[:k]] = 1.0
        return w


def stability_ranking(votes: Votes, n_resamples=STABLE_RESAMPLES, seed=0, *,
                      lam=_SDWEC_B["lam"], beta=_SDWEC_B["beta"], gamma=_SDWEC_B["gamma"],
                      eps=_SDWEC_B["eps"], iterations=25, threshold="paper"):
    """Rank members by how often SDWEC selects them over bootstrap resamples of the rows.

    Stability selection (Meinshausen & Bühlmann 2010): a member chosen on most resamples is
    chosen for the data, not for the noise of one sample. Each resample draws the ``m`` rows
    with replacement (:func:`resample`, seeded) and runs SDWEC (default: preset B) on it.

    Parameters
    ----------
    votes : sdwec.votes.Votes
        The rows (e.g. ``Pool.votes("oob+val")``).
    n_resamples : int, default=STABLE_RESAMPLES
    seed : int, default=0
        Seed of the resamples: the same seed gives the same ranking.
    lam, beta, gamma, eps, iterations, threshold
        SDWEC's parameters on each resample (default: preset B).

    Returns
    -------
    StabilityRanking
    """
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, Integral) \
            or n_resamples < 1:
        raise ValueError(f"n_resamples must be an integer >= 1; got {n_resamples!r}")
    if not isinstance(votes, Votes):
        raise TypeError(f"votes must be sdwec.votes.Votes; got {type(votes).__name__}")
    rng = np.random.default_rng(seed)
    # For two classes the solver reads unique correctness rows, and resampling those is the
    # same bootstrap; with more classes its rows are (row, rival) pairs, so draw the rows.
    rows = votes.correctness_form if len(votes.classes) <= 2 else votes
    selected = np.zeros(rows.n_members)
    total = np.zeros(rows.n_members)
    for _ in range(n_resamples):
        w = solve(resample(rows, rng), None, lam=lam, beta=beta, gamma=gamma, eps=eps,
                  iterations=iterations, threshold=threshold).weights
        selected += w > 0
        total += w
    frequency, mean_weight = selected / n_resamples, total / n_resamples
    order = np.lexsort((np.arange(rows.n_members), -mean_weight, -frequency))
    return StabilityRanking(frequency=frequency, mean_weight=mean_weight, order=order)
