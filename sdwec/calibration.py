"""Calibrated probabilities from the vote shares of a few kept members, fitted out of bag.

A pruned ensemble's probabilities are the weighted vote shares of its kept members: with
20-40 fully grown trees (sometimes 4) they are coarse, they reach exact 0 and 1, and their log
loss is often twice a 200-tree random forest's or more (a single confident wrong vote costs
``-log(1e-15) = 34.5`` on its row).  This module maps shares to probabilities with a
small model fitted on the *out-of-bag* (OOB) shares of the pool's training rows (each row voted
on only by the kept members that did not draw it), so no rows are held out for it.

:func:`fit_calibrator` fits one of :data:`CALIBRATIONS`; :meth:`Calibrator.transform` applies
it to the full ensemble's shares.  Every output row sums to one with every entry strictly
inside (0, 1), so the log loss stays finite.

* ``"temperature"`` (:data:`DEFAULT_CALIBRATION`): a multinomial logistic model on the log of
  the smoothed shares with one slope, ``proba = softmax(a * log(shares + alpha) + b)``: a
  temperature ``1 / a`` and a smoothing ``alpha`` (what an exact 0 share is worth), pulled
  towards "smoothed shares as they are" (``a = 1``, ``alpha = 0.02``) by a prior worth about
  one row.  Which of them are fitted is chosen by Akaike's criterion among
  :data:`TEMPERATURE_MODELS` (below).  The intercepts ``b`` stay 0, so the map keeps the order
  of each row's shares: the most probable class is always the vote's winner.
* ``"sigmoid"``: Platt's sigmoid of each class's share, one-vs-rest and normalised, as
  scikit-learn's ``CalibratedClassifierCV(method="sigmoid")`` does on ``predict_proba``.
* ``"isotonic"``: a non-decreasing piecewise-linear function of each class's share, one-vs-rest and
  normalised (``CalibratedClassifierCV(method="isotonic")``), kept at least ``1 / (W + 2)``
  from 0 and 1 (``W`` the total weight of the fitting rows).

Why ``"temperature"`` is the default.  Measured with 5-fold stratified CV (seed 0): 40 random
members of a 200-tree bagged CART pool, calibrated on their OOB shares of the training folds
and applied to their shares on the test fold (the temperature model with all ``K + 2``
parameters fitted, before the choice of parameters described below); test log loss, and as a
multiple of a 200-tree random forest's:

=================  ==============  ==============  ==============  ==============  ==============
method             breast_cancer   iris            wine            digits          5 classes
=================  ==============  ==============  ==============  ==============  ==============
raw shares         0.280 (2.43x)   0.328 (2.42x)   0.136 (0.97x)   0.327 (1.08x)   1.036 (1.24x)
temperature        0.122 (1.06x)   0.157 (1.16x)   0.110 (0.79x)   0.172 (0.57x)   0.765 (0.92x)
sigmoid            0.120 (1.04x)   0.190 (1.40x)   0.130 (0.94x)   0.201 (0.66x)   0.789 (0.95x)
isotonic           0.126 (1.10x)   0.136 (1.01x)   0.125 (0.90x)   0.196 (0.65x)   0.761 (0.91x)
=================  ==============  ==============  ==============  ==============  ==============

("5 classes": ``make_classification(n_samples=3000, n_classes=5, n_informative=6,
random_state=0)``.)  It is within 0.03 of the best method everywhere, and it is the stable one
when the calibration rows are few: fitted on 10 random OOB rows (10 draws per fold), its mean
log loss was 0.126, 0.174,
0.126, 0.190, 0.854 on the five sets, against sigmoid's 0.240, 0.398, 0.388, 1.450, 1.168 and
isotonic's 0.193, 0.300, 0.301, 1.321, 1.084.  Sigmoid and isotonic fit ``K`` separate curves,
which few rows cannot pin down; one slope shared by every class can, the intercepts absorb
errors in class frequencies, and the fitted smoothing decides what an exact 0 share is worth,
which is where raw shares lose most of their log loss.  scikit-learn's own temperature scaling
(one slope on ``log(shares + 1e-12)``, no smoothing, no intercepts) cannot learn that: 0.234,
0.154, 0.156, 0.298, 1.157 on the same folds.

The OOB shares come from the ~37 % of the kept members that did not draw the row, so they
are coarser than the shares the calibrator is applied to.  Using the number of voters per
row to correct for it (smoothing in vote counts rather than shares, a slope or a smoothing
that varies with it) did not measurably help on those five sets, so ``n_voters`` only drops the
rows no member voted on.

Which parameters to fit.  The OOB shares the map is fitted on are those of random members,
coarser than the kept members' shares it is applied to, so a parameter that only fits the
noise of the OOB rows costs log loss at predict time.  Fitting every parameter (intercepts
included, as this map once did), the
recommended setting of ``docs/estimator.md`` (5 stratified folds, seed 0) made iris worse than
its raw shares (test log loss 0.165 against 0.149): its OOB shares asked for a slope of
1.07-1.29, which sharpened the kept members' shares on the few rows they get wrong.  So the
smoothing alone, the smoothing with the intercepts, the smoothing with the slope, and all
three are fitted, and the one with the smallest AIC (twice the weighted log loss on the
fitting rows plus twice its number of parameters: 1, K, 2, K + 1) is kept.  AIC needs no rows
held out and no random folds, and since it sums the rows' weighted log loss a row of weight 2
still counts as two copies.  (That choice included the intercepts; they are no longer
fitted, see :data:`TEMPERATURE_MODELS`, and the log loss without them is measured by
``python -m benchmarks.selection``.)  On the same folds: iris 0.158 (the smoothing alone in every
fold), wine 0.049 (0.046 with every parameter), breast_cancer 0.101 (0.100), digits 0.089
(0.089), and with ``StratifiedKFold(5, shuffle=True, random_state=0)`` on the multi-class sets
of ``results/estimator.md``: vehicle 0.507 (0.506), anes96 1.465 (1.461), glass 0.595 (0.599).
Choosing by 5-fold cross-validation of the OOB log loss instead picked the same model in 26
of the 30 folds of iris, wine, breast_cancer, vehicle, anes96 and glass, and its mean log loss
was within 0.003 of AIC's on every set, digits included, at six times the fits.

Where it falls short: when the kept members were chosen on these same OOB votes
(``fit_on="oob+validation"``), the OOB shares flatter them and the calibrator is
over-confident.  With 40 members chosen by reduce-error ordering on the OOB votes instead of at
random, the temperature model's log loss was 0.107, 0.187, 0.128, 0.142, 0.756 (0.93x, 1.39x,
0.91x, 0.47x, 0.91x the forest's).  Iris misses the 1.2x mark: on its 120 training rows the
selection lifts the kept members' OOB accuracy by 2-3 points over random members' (to
0.967-0.992, with test accuracy 0.867-0.967), and the fitted slope from 0.97-1.24 to 1.15-1.67.
With the weights found on the held-out rows only (``fit_on="validation"``), the OOB rows
played no part in the selection and calibrate honestly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_softmax
from sklearn.isotonic import IsotonicRegression

__all__ = ["CALIBRATIONS", "DEFAULT_CALIBRATION", "FLOOR", "PRIOR_SMOOTHING", "PRIOR_STRENGTH",
           "TEMPERATURE_MODELS",
           "Calibrator", "TemperatureCalibrator", "SigmoidCalibrator", "IsotonicCalibrator",
           "fit_calibrator"]

CALIBRATIONS = ("temperature", "sigmoid", "isotonic")
"""The methods :func:`fit_calibrator` knows."""

DEFAULT_CALIBRATION = "temperature"
"""The method we recommend (the module's docstring gives the measurements)."""

FLOOR = 1e-12
"""Every probability is at least about this: ``(p + FLOOR) / (1 + K * FLOOR)``.  The methods'
own floors are far above it; it only guards against ``exp`` underflowing to an exact 0."""

PRIOR_SMOOTHING = 0.02
"""The temperature model's smoothing ``alpha`` before it sees data: half a vote of 25."""

PRIOR_STRENGTH = 1.0
"""Weight of the temperature model's Gaussian prior on ``log a``, ``log alpha`` and ``b``
(precision 1 around ``0``, ``log PRIOR_SMOOTHING``, ``0``): about one row's worth of
evidence, so 10 rows move it and thousands of rows override it.  Test log loss changed by at
most 0.01 for precisions 0.3-3 on the five sets of the module's docstring."""

TEMPERATURE_MODELS = (("smoothing",), ("slope", "smoothing"))
"""The nested temperature models :func:`fit_calibrator` chooses from by Akaike's criterion
(AIC), fewest parameters first; a parameter not fitted stays at the prior's centre (``a = 1``,
``b = 0``).  The intercepts ``b`` are never fitted: with ``b = 0`` and ``a > 0`` the map
raises every share of a row by the same increasing function before normalising, so the
most probable class is the class with the largest share, the vote's winner (``predict``),
on every row.  Fitted intercepts move it on rows near a boundary (a user's test on 13 external sets found the calibrated argmax and
``predict`` differing on up to 15 % of the test rows with them)."""

# Where the temperature model's parameters may go.  The prior keeps them finite on any data;
# the box only keeps L-BFGS from stepping into overflow on its way there.
_LOG_SLOPE_BOUNDS = (np.log(1e-3), np.log(1e3))
_LOG_SMOOTHING_BOUNDS = (np.log(1e-6), np.log(1e2))
_INTERCEPT_BOUNDS = (-50.0, 50.0)

# Rows of shares must sum to one up to this: the estimator's tie-breaking adds 1e-12, and a
# larger error means the caller passed counts or scores, not shares.
_SUM_TOLERANCE = 1e-6


@dataclass(frozen=True, eq=False)
class Calibrator:
    """A fitted map from vote shares to calibrated class probabilities.

    Made by :func:`fit_calibrator`; the subclasses hold each method's numbers as plain
    attributes (ints, floats, NumPy arrays), so a calibrator pickles with the model.

    Attributes
    ----------
    method : str
        One of :data:`CALIBRATIONS`.
    n_classes : int
        ``K``, the number of columns of the shares it was fitted on and applies to.
    """

    method: ClassVar[str]
    n_classes: int

    def transform(self, shares):
        """Calibrated probabilities of ``shares``.

        Parameters
        ----------
        shares : array_like of shape (n_samples, n_classes)
            Weighted vote shares (non-negative, each row summing to one), columns in the order
            of the fitting shares.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Rows sum to one; every entry is strictly between 0 and 1.  The same shares always
            give the same probabilities.

        Raises
        ------
        ValueError
            If ``shares`` is not a 2-D array of ``n_classes`` columns of shares.
        """
        shares = _check_shares(np.asarray(shares, dtype=float), self.n_classes)
        return _strictly_inside(self._proba(shares))

    def _proba(self, shares):  # pragma: no cover - every subclass defines it
        raise NotImplementedError


@dataclass(frozen=True, eq=False)
class TemperatureCalibrator(Calibrator):
    """``softmax(slope * log(shares + smoothing) + intercept)``.

    Attributes
    ----------
    slope : float
        ``a``, the inverse temperature (above 1 sharpens, below 1 flattens).
    smoothing : float
        ``alpha``, added to every share before the log: what an exact 0 share is worth.
    intercept : ndarray of shape (n_classes,)
        ``b``, one per class.
    fitted : tuple of str
        The parameters fitted to the rows, of ``"slope"``, ``"smoothing"``, ``"intercept"``
        (one of :data:`TEMPERATURE_MODELS`); the others are at the prior's centre.
    """

    method: ClassVar[str] = "temperature"
    slope: float
    smoothing: float
    intercept: np.ndarray
    fitted: tuple = TEMPERATURE_MODELS[-1]
    # 0 in every fitted model (TEMPERATURE_MODELS); the field keeps the formula general.

    def _proba(self, shares):
        return np.exp(log_softmax(self._logits(shares), axis=1))

    def _logits(self, shares):
        return self.slope * np.log(shares + self.smoothing) + self.intercept


@dataclass(frozen=True, eq=False)
class SigmoidCalibrator(Calibrator):
    """Platt's sigmoid of each class's share, one-vs-rest, normalised.

    Attributes
    ----------
    slope, intercept : ndarray of shape (1,) for two classes, (n_classes,) otherwise
        ``P(class k) = expit(slope[k] * share[k] + intercept[k])`` before normalising; with
        two classes the one sigmoid is the second class's and the first gets the rest.
    """

    method: ClassVar[str] = "sigmoid"
    slope: np.ndarray
    intercept: np.ndarray

    def _proba(self, shares):
        if self.n_classes == 2:
            return _binary(expit(self.slope[0] * shares[:, 1] + self.intercept[0]))
        return expit(self.slope * shares + self.intercept)


@dataclass(frozen=True, eq=False)
class IsotonicCalibrator(Calibrator):
    """A non-decreasing piecewise-linear function of each class's share, one-vs-rest.

    Attributes
    ----------
    thresholds, values : tuple of ndarray
        One pair per fitted class (only the second class's with two classes): the knots of
        the fitted function, interpolated linearly between them and constant beyond them
        (scikit-learn's ``IsotonicRegression(out_of_bounds="clip")``).
    floor : float
        Each fitted value is kept in ``[floor, 1 - floor]``, ``floor = 1 / (W + 2)`` with ``W``
        the total weight of the fitting rows: a step fitted on rows of one class is a rate
        measured on at most ``W`` rows, and Laplace's rule would put it no nearer 0 or 1.
    """

    method: ClassVar[str] = "isotonic"
    thresholds: tuple
    values: tuple
    floor: float

    def _proba(self, shares):
        columns = [np.clip(np.interp(shares[:, k], x, v), self.floor, 1 - self.floor)
                   for k, x, v in zip(self._columns(), self.thresholds, self.values)]
        return _binary(columns[0]) if self.n_classes == 2 else np.column_stack(columns)

    def _columns(self):
        return [1] if self.n_classes == 2 else range(self.n_classes)


def fit_calibrator(shares, y_index, method, *, n_voters=None, sample_weight=None):
    """Fit a map from vote shares to probabilities on rows whose classes are known.

    Parameters
    ----------
    shares : array_like of shape (n_samples, n_classes)
        Weighted vote share of each class on each row (non-negative, rows summing to one), in
        practice the out-of-bag shares of the pool's training rows.  ``n_classes >= 2``.
    y_index : array_like of int, shape (n_samples,)
        Each row's class as a column index of ``shares``, in ``0 .. n_classes - 1``.  Classes
        may be absent: they then get small, positive probabilities.
    method : str
        One of :data:`CALIBRATIONS`; :data:`DEFAULT_CALIBRATION` is the one we recommend.
    n_voters : array_like of shape (n_samples,), optional
        How many members voted on each row.  Rows with 0 are left out (their shares mean
        nothing, whatever they hold); the counts are otherwise unused, since correcting for
        the coarseness of out-of-bag shares with them did not measurably help (the module's
        docstring).
    sample_weight : array_like of shape (n_samples,), optional
        Non-negative row weights; a row of weight 2 counts as two copies of it.  Rows of
        weight 0 are left out.

    Returns
    -------
    Calibrator
        Its :meth:`~Calibrator.transform` maps shares of ``n_classes`` columns to
        probabilities.

    Raises
    ------
    ValueError
        On an unknown ``method``, shapes that do not agree, fewer than two columns, entries
        that are not shares, class indices outside the columns, negative or non-finite
        weights or voter counts, or no row left to fit on.
    """
    if method not in CALIBRATIONS:
        raise ValueError(f"method must be one of {CALIBRATIONS}, got {method!r}")
    shares, y, weight = _fit_rows(shares, y_index, n_voters, sample_weight)
    return _FITTERS[method](shares, y, weight)


def _fit_temperature(shares, y, weight):
    # Every nested model, from the smoothing alone to all K + 2 parameters, each at its
    # maximum a posteriori; the one with the smallest AIC is kept (the first, the smallest, on
    # ties).  AIC sums the rows' weighted log loss, so weight 2 is still two copies.
    K = shares.shape[1]
    fits = [_fit_temperature_model(shares, y, weight, free) for free in TEMPERATURE_MODELS]
    aic = [2.0 * loss + 2.0 * _n_parameters(free, K) for free, (loss, _) in
           zip(TEMPERATURE_MODELS, fits)]
    free, (_, theta) = TEMPERATURE_MODELS[int(np.argmin(aic))], fits[int(np.argmin(aic))]
    return TemperatureCalibrator(n_classes=K, slope=float(np.exp(theta[0])),
                                 smoothing=float(np.exp(theta[1])), intercept=theta[2:].copy(),
                                 fitted=free)


def _n_parameters(free, K):
    # K intercepts have K - 1 degrees of freedom: adding one constant to all changes nothing.
    return sum(K - 1 if name == "intercept" else 1 for name in free)


def _fit_temperature_model(shares, y, weight, free):
    """``(weighted log loss, theta)`` of the model whose parameters in ``free`` are fitted and
    the others held at the prior; ``theta = (log a, log alpha, b_1..b_K)``."""
    n, K = shares.shape
    prior = np.concatenate([[0.0, np.log(PRIOR_SMOOTHING)], np.zeros(K)])
    mask = np.concatenate([["slope" in free, "smoothing" in free],
                           np.full(K, "intercept" in free)])
    rows = np.arange(n)

    def loss_and_grad(theta):
        # Weighted negative log-likelihood with its gradient in closed form:
        # d(-log p_y)/dz_k = p_k - [k == y] for the softmax logits z.
        slope, smoothing = np.exp(theta[0]), np.exp(theta[1])
        log_shares = np.log(shares + smoothing)
        log_p = log_softmax(slope * log_shares + theta[2:], axis=1)
        residual = np.exp(log_p)
        residual[rows, y] -= 1.0
        residual *= weight[:, None]
        grad = np.concatenate([
            [slope * np.sum(residual * log_shares),
             slope * smoothing * np.sum(residual / (shares + smoothing))],
            residual.sum(axis=0)])
        return -weight @ log_p[rows, y], grad

    def objective(free_theta):
        # Plus the Gaussian prior, on the free parameters only.
        theta = prior.copy()
        theta[mask] = free_theta
        value, grad = loss_and_grad(theta)
        gap = free_theta - prior[mask]
        return value + 0.5 * PRIOR_STRENGTH * gap @ gap, grad[mask] + PRIOR_STRENGTH * gap

    bounds = np.array([_LOG_SLOPE_BOUNDS, _LOG_SMOOTHING_BOUNDS] + [_INTERCEPT_BOUNDS] * K)
    theta = prior.copy()
    theta[mask] = _minimize(objective, prior[mask], [tuple(b) for b in bounds[mask]])
    return loss_and_grad(theta)[0], theta


def _fit_sigmoid(shares, y, weight):
    K = shares.shape[1]
    # Two classes: one sigmoid, as a binary classifier's calibration has; the second column
    # then carries all the information (the first is one minus it).
    fits = [_platt(shares[:, k], y == k, weight) for k in ([1] if K == 2 else range(K))]
    slope, intercept = np.array(fits).T
    return SigmoidCalibrator(n_classes=K, slope=slope, intercept=intercept)


def _platt(score, positive, weight):
    # Platt (1999): targets (N+ + 1) / (N+ + 2) and 1 / (N- + 2) instead of 1 and 0, so that a
    # separable or one-class set still has a finite fit; N+ and N- are weighted counts (weight
    # 2 = two copies).
    n_pos = weight @ positive
    n_neg = weight.sum() - n_pos
    target = np.where(positive, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def objective(ab):
        z = ab[0] * score + ab[1]
        residual = weight * (expit(z) - target)
        value = weight @ (np.logaddexp(0.0, z) - target * z)
        return value, np.array([residual @ score, residual.sum()])

    return _minimize(objective, np.array([0.0, np.log((n_pos + 1) / (n_neg + 1))]))


def _fit_isotonic(shares, y, weight):
    K = shares.shape[1]
    thresholds, values = [], []
    for k in ([1] if K == 2 else range(K)):
        iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
        iso.fit(shares[:, k], (y == k).astype(float), sample_weight=weight)
        thresholds.append(np.asarray(iso.X_thresholds_, dtype=float).copy())
        values.append(np.asarray(iso.y_thresholds_, dtype=float).copy())
    return IsotonicCalibrator(n_classes=K, thresholds=tuple(thresholds), values=tuple(values),
                              floor=float(1.0 / (weight.sum() + 2.0)))


_FITTERS = {"temperature": _fit_temperature, "sigmoid": _fit_sigmoid,
            "isotonic": _fit_isotonic}


def _minimize(objective, start, bounds=None):
    # Tight tolerances: the fit is a few parameters, and a loose stop would make a weight-2 row
    # and its two copies end at visibly different points.
    result = minimize(objective, start, jac=True, method="L-BFGS-B", bounds=bounds,
                      options={"maxiter": 1000, "ftol": 1e-13, "gtol": 1e-9})
    return result.x


def _binary(p_second):
    return np.column_stack([1.0 - p_second, p_second])


def _strictly_inside(proba):
    # Normalise (one-vs-rest fits do not sum to one), then lift every entry off 0 while keeping
    # the sum: (p + f) / (1 + K f) is in [f / (1 + K f), (1 + f) / (1 + K f)], inside (0, 1).
    proba = np.clip(proba, 0.0, None)
    proba = proba / proba.sum(axis=1, keepdims=True)
    return (proba + FLOOR) / (1.0 + proba.shape[1] * FLOOR)


def _check_shares(shares, n_classes=None):
    if shares.ndim != 2:
        raise ValueError(f"shares must be a 2-D array (rows x classes), got {shares.ndim}-D")
    if n_classes is None and shares.shape[1] < 2:
        raise ValueError(f"shares need at least two class columns, got {shares.shape[1]}")
    if n_classes is not None and shares.shape[1] != n_classes:
        raise ValueError(f"shares have {shares.shape[1]} columns; the calibrator was fitted "
                         f"on {n_classes}")
    if not np.all(np.isfinite(shares)) or np.any(shares < 0):
        raise ValueError("shares must be finite and non-negative")
    if np.any(np.abs(shares.sum(axis=1) - 1.0) > _SUM_TOLERANCE):
        raise ValueError("each row of shares must sum to one (vote shares, not counts)")
    return shares


def _fit_rows(shares, y_index, n_voters, sample_weight):
    shares = np.asarray(shares, dtype=float)
    if shares.ndim != 2:
        raise ValueError(f"shares must be a 2-D array (rows x classes), got {shares.ndim}-D")
    n, K = shares.shape
    y = _row_vector(y_index, n, "y_index")
    if not np.all(np.isfinite(y)) or np.any(y != np.round(y)) or np.any((y < 0) | (y >= K)):
        raise ValueError(f"y_index must hold class indices in 0..{K - 1}")
    weight = np.ones(n) if sample_weight is None else _row_vector(sample_weight, n,
                                                                  "sample_weight")
    if not np.all(np.isfinite(weight)) or np.any(weight < 0):
        raise ValueError("sample_weight must be finite and non-negative")
    keep = weight > 0
    if n_voters is not None:
        voters = _row_vector(n_voters, n, "n_voters")
        if not np.all(np.isfinite(voters)) or np.any(voters < 0):
            raise ValueError("n_voters must be finite and non-negative")
        keep &= voters > 0
    if not np.any(keep):
        raise ValueError("no row to calibrate on: every row has no voter or weight 0")
    # Only the kept rows' shares are checked: a row nobody voted on may hold anything.
    shares = _check_shares(shares[keep])
    return shares, y[keep].astype(np.intp), weight[keep]


def _row_vector(values, n, name):
    values = np.asarray(values, dtype=float)
    if values.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), one value per row of shares; "
                         f"got {values.shape}")
    return values
