"""How Algorithm 1 behaves over its iterations: where its costs rise, and why.

The paper says both costs "decrease steadily" (its Figure 3).  Run literally, Algorithm 1
does not promise that: each iteration minimises a *different* convex model (eq. 10, built
around the previous weights), so neither the model's own value nor the non-convex cost of
eq. 4 needs to fall from one iteration to the next.  Two mechanisms are visible in practice:

* the relaxed sign term ``(S_s H_s w - y_s)²`` with ``S_s = 1 / (|H_s ŵ| + ε)`` pulls every
  row's margin ``H_s w`` towards ``|H_s ŵ| + ε``, so the margins, and with them the weights'
  scale (their sum), grow by up to ε per iteration, while ``sgn(Hw)`` is scale-free: the L1
  term of eq. 4 then rises with nothing gained;
* a weight crossing zero (set to 0 by line 12) changes which rows are right, so the
  misclassification term can jump by ``4λ/m`` per row flipped.

``docs/algorithm.md`` ("When the costs rise") derives both; :func:`describe` finds them in
a solution's history so the dashboard can say so instead of drawing a rising "Figure 3" with
no word why.

A rise counts when it exceeds :data:`RISE_RTOL` (0.1 %) of the cost before it: smaller ones
cannot be seen on a cost chart and are the slow creep of a plateau (the weights' scale
growing by a hair per iteration: on vehicle's multi-class task, 13 iterations rise by
2e-5 to 9e-5 of the cost). :attr:`Behaviour.creeps` keeps those apart, so a page can say
"rises at 4 iterations, creeps up at 13 more" instead of "rises at 17" with a largest rise
that prints as "1.09 → 1.09".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Rise", "Behaviour", "describe", "RISE_RTOL", "ROUNDING_RTOL"]

RISE_RTOL = 1e-3
"""A cost change above this share of the cost before it is a rise (0.1 %: about the smallest
step a cost chart shows)."""

ROUNDING_RTOL = 1e-9
"""Changes below this share of the cost are floating-point rounding, not a creep."""


@dataclass(frozen=True)
class Rise:
    """The non-convex cost going up between two iterations."""

    iteration: int
    before: float
    after: float

    @property
    def amount(self):
        return self.after - self.before

    @property
    def relative(self):
        """The rise as a share of the cost before it (``0.25`` is 25 %)."""
        return self.amount / abs(self.before) if self.before else math.inf

    @property
    def figures(self):
        """Significant figures (at least 3) at which ``before`` and ``after`` print apart."""
        if not math.isfinite(self.relative) or self.relative <= 0:
            return 3
        return max(3, math.ceil(-math.log10(self.relative)) + 2)


@dataclass(frozen=True)
class Behaviour:
    """What a run of Algorithm 1 did, iteration by iteration.

    Attributes
    ----------
    rises : tuple of Rise
        Every iteration whose non-convex cost (eq. 4) is above the previous one's by more
        than ``rtol`` of it.
    weight_sums : ndarray of shape (k,)
        ``sum(w)`` after each iteration (the weights' scale; NaN when not recorded).
    flips : ndarray of shape (k,)
        Weights that changed between zero and non-zero at each iteration (0 for the first).
    creeps : tuple of Rise
        Rises by at most ``rtol`` of the cost (above :data:`ROUNDING_RTOL`): a creep.
    rtol : float
        The relative tolerance that told rises from creeps.
    """

    rises: tuple
    weight_sums: np.ndarray
    flips: np.ndarray
    creeps: tuple = ()
    rtol: float = RISE_RTOL

    @property
    def decreasing(self):
        """True when the non-convex cost never rises by more than ``rtol`` (it may creep)."""
        return not self.rises

    @property
    def largest_rise(self):
        """The :class:`Rise` with the largest increase, or ``None``."""
        return max(self.rises, key=lambda r: r.amount) if self.rises else None

    @property
    def scale_grows(self):
        """True when the weights' sum ends higher than after the first iteration."""
        sums = self.weight_sums[np.isfinite(self.weight_sums)]
        return len(sums) > 1 and sums[-1] > sums[0]


def describe(history, rtol=RISE_RTOL):
    """Find where the non-convex cost rises in ``history`` and what the weights did.

    Parameters
    ----------
    history : sequence of sdwec.solver.IterationRecord
        ``Solution.history``.
    rtol : float, default=RISE_RTOL
        Relative tolerance: a rise by at most this share of the cost before it is a creep
        (kept apart in ``creeps``), and one below :data:`ROUNDING_RTOL` is rounding.

    Returns
    -------
    Behaviour
    """
    history = list(history)
    costs = np.array([r.nonconvex_cost for r in history], dtype=float)
    ups = [Rise(history[i].iteration, float(costs[i - 1]), float(costs[i]))
           for i in range(1, len(costs))
           if costs[i] - costs[i - 1] > ROUNDING_RTOL * max(abs(costs[i - 1]), 1e-300)]
    rises = tuple(r for r in ups if r.amount > rtol * max(abs(r.before), 1e-300))
    creeps = tuple(r for r in ups if r not in rises)
    weights = [r.weights for r in history]
    if all(w is not None for w in weights) and weights:
        W = np.vstack(weights)
        sums = W.sum(axis=1)
        nonzero = W != 0
        flips = np.concatenate([[0], (nonzero[1:] != nonzero[:-1]).sum(axis=1)])
    else:
        sums = np.full(len(history), np.nan)
        flips = np.zeros(len(history), dtype=int)
    return Behaviour(rises=rises, weight_sums=sums, flips=flips.astype(int), creeps=creeps,
                     rtol=float(rtol))
