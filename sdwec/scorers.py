"""Scorers that report what an :class:`~sdwec.SDWECClassifier` was fitted with.

``SDWECClassifier`` does not always fit at the λ it is given: when ``lam`` keeps no member
(or one, less accurate than the whole pool) it raises λ tenfold (``lam_`` is the λ used;
docs/estimator.md, "Nothing fails silently").  A ``GridSearchCV`` over ``lam`` then scores every λ too small to keep a member as
a larger λ, and its ``cv_results_`` do not say so.  Given to the search beside its metric,
``scoring={"accuracy": "accuracy", "lam_used": lam_used, "n_selected": n_selected},
refit="accuracy"``, they add ``mean_test_lam_used`` (the λ actually fitted) and
``mean_test_n_selected`` (the members kept) to ``cv_results_``, and the same per split.
They read the fitted model only, not ``X`` or ``y``.
"""

from __future__ import annotations

import math

from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from sdwec.estimator import SDWECClassifier

__all__ = ["lam_used", "n_selected"]


def _fitted_sdwec(estimator, scorer):
    """The fitted SDWEC model of ``estimator`` (a pipeline's last step)."""
    model = estimator[-1] if isinstance(estimator, Pipeline) else estimator
    if not isinstance(model, SDWECClassifier):
        raise TypeError(f"the {scorer} scorer reads an SDWECClassifier (or a pipeline ending "
                        f"in one); got {type(model).__name__}")
    check_is_fitted(model)
    return model


def lam_used(estimator, X, y):
    """The λ the fitted SDWEC model was solved at: its ``lam_``.

    Parameters
    ----------
    estimator : SDWECClassifier or sklearn.pipeline.Pipeline
        Fitted; a pipeline's last step is read.
    X, y
        Ignored (the scorer signature of scikit-learn).

    Returns
    -------
    float
        ``lam_``: ``lam``, the λ it was raised to (``lam`` kept no member, or one less
        accurate than the whole pool), or the λ found for ``n_members``; NaN when the model
        has no solution (a ``method`` other than ``"sdwec"``, the whole pool kept because no
        λ did as well as it, weights given to ``from_weights`` without one).
    """
    lam = _fitted_sdwec(estimator, "lam_used").lam_
    return math.nan if lam is None else float(lam)


def n_selected(estimator, X, y):
    """The number of members the fitted SDWEC model kept: its ``n_selected_``.

    Parameters
    ----------
    estimator : SDWECClassifier or sklearn.pipeline.Pipeline
        Fitted; a pipeline's last step is read.
    X, y
        Ignored (the scorer signature of scikit-learn).

    Returns
    -------
    int
    """
    return int(_fitted_sdwec(estimator, "n_selected").n_selected_)
