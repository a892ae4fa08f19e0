"""The weighted plurality vote's decision: which class wins each row, ties included.

A class's score is the sum of the weights of the members voting for it, and the highest
score wins.  Scores within :data:`TIE_TOLERANCE` of the total weight of the best one are tied
(sums of the same weights in another order may differ in the last bits), and a tie goes to
the class ranked first in the tie order.  With no weight at all (the ensemble abstains) every
class is tied, so the first-ranked class wins.

The paper's combiners (:mod:`sdwec.combiners`, many weight vectors at once) and the
estimator (:mod:`sdwec.estimator`, one weight vector, or one per row for out-of-bag rows)
compute their scores their own way and decide with :func:`decide`.
"""

from __future__ import annotations

import numpy as np

from sdwec.votes import encode_labels

__all__ = ["TIE_TOLERANCE", "decide", "tie_rank"]

#: Scores within this share of the total weight of the best one are tied.
TIE_TOLERANCE = 1e-9


def tie_rank(classes, prior=None) -> np.ndarray:
    """Place of each class in the tie order (0 wins ties).

    Parameters
    ----------
    classes : array-like of shape (n_classes,)
        Sorted class labels.
    prior : array-like, optional
        Classes in tie order, most preferred first; classes missing from it come after it,
        in sorted order.  Default: sorted order.

    Returns
    -------
    ndarray of shape (n_classes,)
    """
    classes = np.asarray(classes)
    order = np.arange(len(classes)) if prior is None else encode_labels(prior, classes, "prior")
    rank = np.full(len(classes), len(classes), dtype=np.intp)
    rank[order] = np.arange(len(order))
    missing = rank == len(classes)
    rank[missing] = len(order) + np.arange(missing.sum())
    return rank


def decide(scores, total, rank, axis=-1):
    """Winning class of every row of ``scores``, and which classes tied for it.

    Parameters
    ----------
    scores : ndarray
        Summed weights per class, the classes along ``axis``.
    total : float or ndarray
        The total weight the tolerance is a share of, broadcastable to ``scores`` without its
        class axis: the sum of the (absolute) weights, or each row's own sum where only
        some members vote.
    rank : ndarray of shape (n_classes,)
        Place of each class in the tie order (:func:`tie_rank`).
    axis : int, default -1
        The class axis of ``scores``.

    Returns
    -------
    winner : ndarray of intp
        ``scores``'s shape without the class axis: index of the winning class, of the
        classes whose score is within ``TIE_TOLERANCE * total`` of the best the one with
        the lowest rank.
    tied : ndarray of bool, shape of ``scores``
        The classes within the tolerance of the best (the winner among them).
    """
    by_class = np.moveaxis(np.asarray(scores, dtype=float), axis, 0)
    best = by_class.max(axis=0)
    tied = by_class >= best - (TIE_TOLERANCE * np.asarray(total, dtype=float) + 1e-300)
    # The first tied class in tie order: argmax finds the first True along the class axis.
    order = np.argsort(rank)
    winner = order[tied[order].argmax(axis=0)]
    return winner, np.moveaxis(tied, 0, axis)
