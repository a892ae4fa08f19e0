"""What votes: the weights an SDWEC fit's ensemble predicts with.

The Explorer fits SDWEC in one of two ways (:func:`sdwec.comparison.compare`'s ``fit_on``):

* ``"validation"``: the paper's SDWEC. The kept trees vote with the weights Algorithm 1
  found (a *weighted* vote).
* ``"oob+validation"``: SDWEC-OOB (ours, ``docs/oob.md``). Algorithm 1 runs on the training
  rows' out-of-bag votes stacked with the validation votes, and only chooses the trees: the
  kept trees vote with *equal* weights, 1 each.

Every view of a fit (the weights chart, the downloaded files, the downloaded model) shows
:func:`voting_weights`, so that what a page says votes is what its files hold.
"""

from __future__ import annotations

import numpy as np

__all__ = ["FITS", "fit_name", "vote_of", "voting_weights"]

FITS = {"validation": ("validation", "weighted"), "oob+validation": ("oob", "equal")}
"""``fit_on`` -> (its short name in files, how its kept trees vote)."""


def _checked(fit_on):
    if fit_on not in FITS:
        raise ValueError(f"fit_on must be one of {', '.join(map(repr, FITS))}; got {fit_on!r}")
    return FITS[fit_on]


def fit_name(fit_on) -> str:
    """``"validation"`` or ``"oob"``: what the weights were fitted on, as files record it."""
    return _checked(fit_on)[0]


def vote_of(fit_on) -> str:
    """``"weighted"`` (the paper's SDWEC) or ``"equal"`` (SDWEC-OOB: one vote per kept tree)."""
    return _checked(fit_on)[1]


def voting_weights(weights, fit_on="validation") -> np.ndarray:
    """The weights the ensemble of a fit votes with.

    Parameters
    ----------
    weights : array-like of shape (l,)
        Algorithm 1's final weights (``Solution.weights``), zeros for the dropped trees.
    fit_on : {"validation", "oob+validation"}, default="validation"

    Returns
    -------
    ndarray of shape (l,)
        ``weights`` themselves for a weighted vote; 1 on every tree with a positive weight
        and 0 elsewhere for an equal vote.
    """
    w = np.asarray(weights, dtype=float)
    if vote_of(fit_on) == "equal":
        return (w > 0).astype(float)
    return w.copy()
