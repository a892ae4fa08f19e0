"""sdwec.calibration: vote shares to calibrated probabilities, checked against known truths.

The synthetic shares below are coarse on purpose (a count of votes out of a few voters, so
exact 0 and 1 occur), like the out-of-bag shares the estimator fits the calibrators on, and
the truth each test compares with is a formula written here, not the module's own.
"""

import pickle

import numpy as np
import pytest
from scipy.special import expit, softmax

from sdwec.calibration import (
    CALIBRATIONS,
    DEFAULT_CALIBRATION,
    Calibrator,
    IsotonicCalibrator,
    SigmoidCalibrator,
    TemperatureCalibrator,
    fit_calibrator,
)


def _coarse_shares(rng, n, n_classes, voters=20, concentration=0.5):
    """Shares of ``voters`` votes drawn from a Dirichlet row: multiples of 1 / voters."""
    mean = rng.dirichlet(np.full(n_classes, concentration), size=n)
    counts = np.array([rng.multinomial(voters, p) for p in mean])
    return counts / voters


def _draw(rng, proba):
    """One class per row, drawn from the row's probabilities."""
    return (rng.random(len(proba))[:, None] > np.cumsum(proba, axis=1)).sum(axis=1)


def _log_loss(proba, y):
    return -np.mean(np.log(np.clip(proba[np.arange(len(y)), y], 1e-15, None)))


def _assert_probabilities(proba, n_rows, n_classes):
    assert proba.shape == (n_rows, n_classes)
    assert np.all(proba > 0) and np.all(proba < 1)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)


def test_the_methods_and_the_default():
    assert CALIBRATIONS == ("temperature", "sigmoid", "isotonic")
    assert DEFAULT_CALIBRATION in CALIBRATIONS


def test_sigmoid_recovers_a_known_sigmoid_of_the_share():
    rng = np.random.default_rng(0)
    shares = _coarse_shares(rng, 6000, 2)
    truth = lambda s: expit(6.0 * s - 2.5)  # noqa: E731 - P(second class | its share)
    y = (rng.random(len(shares)) < truth(shares[:, 1])).astype(int)
    cal = fit_calibrator(shares, y, "sigmoid")
    assert isinstance(cal, SigmoidCalibrator) and cal.method == "sigmoid"
    grid = np.linspace(0, 1, 21)
    proba = cal.transform(np.column_stack([1 - grid, grid]))
    np.testing.assert_allclose(proba[:, 1], truth(grid), atol=0.03)
    np.testing.assert_allclose([cal.slope[0], cal.intercept[0]], [6.0, -2.5], atol=0.6)


def test_temperature_recovers_a_known_multinomial_model():
    rng = np.random.default_rng(1)
    slope, smoothing = 2.0, 0.05
    truth = lambda s: softmax(slope * np.log(s + smoothing), axis=1)  # noqa: E731
    shares = _coarse_shares(rng, 8000, 3)
    y = _draw(rng, truth(shares))
    cal = fit_calibrator(shares, y, "temperature")
    assert isinstance(cal, TemperatureCalibrator) and cal.method == "temperature"
    fresh = _coarse_shares(np.random.default_rng(2), 500, 3)
    np.testing.assert_allclose(cal.transform(fresh), truth(fresh), atol=0.04)
    assert cal.slope == pytest.approx(slope, rel=0.2)
    assert cal.smoothing == pytest.approx(smoothing, rel=0.5)
    np.testing.assert_array_equal(cal.intercept, 0.0)


def test_temperature_fits_only_the_parameters_the_rows_support():
    # Calibrated, class-symmetric rows: shares (0.8, 0.2) are right 4 times in 5, and so are
    # their mirror images.  A slope or intercepts cannot beat the likelihood that the shares
    # themselves reach, so Akaike's criterion keeps the smoothing alone: slope 1, no
    # intercepts, and the shares come back nearly as they were.
    shares = np.repeat([[0.8, 0.2], [0.2, 0.8]], 40, axis=0)
    y = np.r_[np.zeros(32), np.ones(8), np.ones(32), np.zeros(8)].astype(int)
    cal = fit_calibrator(shares, y, "temperature")
    assert cal.fitted == ("smoothing",) and cal.slope == 1.0
    np.testing.assert_array_equal(cal.intercept, 0.0)
    np.testing.assert_allclose(cal.transform([[0.8, 0.2]]), [[0.8, 0.2]], atol=0.02)
    # Rows that need more get more: a sharper truth (slope 3) fits the slope.
    rng = np.random.default_rng(13)
    shares = _coarse_shares(rng, 4000, 3, voters=10)
    sharper = softmax(3.0 * np.log(shares + 0.02), axis=1)
    assert "slope" in fit_calibrator(shares, _draw(rng, sharper), "temperature").fitted


def test_temperature_never_moves_a_rows_most_probable_class():
    # A class favoured beyond its shares (intercept 1.5 on class 2) would pull the argmax of
    # rows near a boundary to it; the map has no intercepts, so every row's most probable
    # class stays its largest share (ties included: equal shares stay equal).
    rng = np.random.default_rng(13)
    shares = _coarse_shares(rng, 4000, 3, voters=10)
    shifted = softmax(np.log(shares + 0.02) + [0.0, 0.0, 1.5], axis=1)
    cal = fit_calibrator(shares, _draw(rng, shifted), "temperature")
    fresh = _coarse_shares(np.random.default_rng(3), 2000, 3, voters=7)
    proba = cal.transform(fresh)
    np.testing.assert_array_equal(np.argsort(proba, axis=1, kind="stable"),
                                  np.argsort(fresh, axis=1, kind="stable"))


def test_isotonic_is_monotone_in_the_share_and_recovers_a_monotone_function():
    rng = np.random.default_rng(3)
    shares = _coarse_shares(rng, 6000, 2)
    truth = lambda s: 0.05 + 0.9 * s ** 2  # noqa: E731 - monotone, not a sigmoid
    y = (rng.random(len(shares)) < truth(shares[:, 1])).astype(int)
    cal = fit_calibrator(shares, y, "isotonic")
    assert isinstance(cal, IsotonicCalibrator)
    grid = np.linspace(0, 1, 201)
    p = cal.transform(np.column_stack([1 - grid, grid]))[:, 1]
    assert np.all(np.diff(p) >= 0)
    on_votes = np.linspace(0, 1, 21)  # the shares it saw: a multiple of 1/20
    np.testing.assert_allclose(
        cal.transform(np.column_stack([1 - on_votes, on_votes]))[:, 1], truth(on_votes),
        atol=0.06)


@pytest.mark.parametrize("method", ["temperature", "isotonic"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_a_perfectly_calibrated_input_stays_close_to_itself(method, n_classes):
    rng = np.random.default_rng(4)
    shares = rng.dirichlet(np.ones(n_classes), size=5000)
    y = _draw(rng, shares)  # the shares are the true probabilities
    proba = fit_calibrator(shares, y, method).transform(shares)
    assert np.mean(np.abs(proba - shares)) < 0.02


@pytest.mark.parametrize("method", CALIBRATIONS)
@pytest.mark.parametrize("n_classes", [2, 4])
def test_rows_sum_to_one_strictly_inside_zero_one(method, n_classes):
    rng = np.random.default_rng(5)
    shares = _coarse_shares(rng, 300, n_classes, voters=8)
    y = _draw(rng, 0.8 * shares + 0.2 / n_classes)
    cal = fit_calibrator(shares, y, method)
    unanimous = np.eye(n_classes)  # exact 0 and 1 shares, where raw log loss is infinite
    for test in (shares, unanimous, np.full((1, n_classes), 1 / n_classes)):
        _assert_probabilities(cal.transform(test), len(test), n_classes)
    # Every class wrongly predicted by a unanimous vote: still a finite log loss.
    wrong = (np.arange(n_classes) + 1) % n_classes
    assert np.isfinite(_log_loss(cal.transform(unanimous), wrong))


def test_calibration_fixes_the_log_loss_of_unanimous_but_wrong_votes():
    # An ensemble of 15 voters whose unanimous votes are wrong 5 % of the time: the raw shares
    # give those rows probability 0; calibrated, the log loss drops by more than half.
    rng = np.random.default_rng(6)
    mean = rng.beta(0.3, 0.3, size=4000)
    y = (rng.random(4000) < 0.05 + 0.9 * mean).astype(int)
    second = rng.binomial(15, mean) / 15
    shares = np.column_stack([1 - second, second])
    fit, test = slice(0, 2000), slice(2000, None)
    raw = _log_loss(shares[test], y[test])
    for method in CALIBRATIONS:
        cal = fit_calibrator(shares[fit], y[fit], method)
        assert _log_loss(cal.transform(shares[test]), y[test]) < raw / 2, method


@pytest.mark.parametrize("method", CALIBRATIONS)
def test_a_class_missing_from_the_fitting_rows(method):
    rng = np.random.default_rng(7)
    shares = _coarse_shares(rng, 200, 3)
    y = rng.integers(0, 2, size=200)  # never class 2
    proba = fit_calibrator(shares, y, method).transform(shares)
    _assert_probabilities(proba, 200, 3)
    if method == "temperature":
        # No intercepts: it cannot learn a class's rarity beyond the shares, only how far to
        # trust them; the class never seen gets less than its shares gave it.
        assert proba[:, 2].mean() < shares[:, 2].mean()
    else:
        assert proba[:, 2].mean() < 0.1


@pytest.mark.parametrize("method", CALIBRATIONS)
@pytest.mark.parametrize("n_classes", [2, 5])
def test_ten_rows_and_rows_of_one_class(method, n_classes):
    rng = np.random.default_rng(8)
    shares = _coarse_shares(rng, 10, n_classes, voters=5)
    for y in (rng.integers(0, n_classes, size=10), np.zeros(10, dtype=int)):
        cal = fit_calibrator(shares, y, method)
        proba = cal.transform(shares)
        _assert_probabilities(proba, 10, n_classes)
        np.testing.assert_array_equal(proba, fit_calibrator(shares, y, method).transform(shares))
    # Fitted on rows that were all class 0, the one-vs-rest maps trust class 0 more than the
    # shares did; the temperature map keeps every row's order of classes.
    if method == "temperature":
        np.testing.assert_array_equal(np.argmax(proba, axis=1), np.argmax(shares, axis=1))
    else:
        assert proba[:, 0].mean() > shares[:, 0].mean()


def test_few_rows_of_one_class_do_not_make_the_temperature_model_certain():
    # Ten rows, all of class 0: without a prior the slope would run off to its bound and a
    # unanimous vote for another class would get a probability of about 1e-40.
    rng = np.random.default_rng(12)
    for n_classes in (2, 5):
        shares = _coarse_shares(rng, 10, n_classes, voters=5)
        cal = fit_calibrator(shares, np.zeros(10, dtype=int), "temperature")
        assert np.all(np.abs(cal.intercept) < 5) and 0.1 < cal.slope < 10
        assert cal.transform(np.eye(n_classes)).min() > 1e-3


def test_isotonic_keeps_a_laplace_distance_from_zero_and_one():
    # Ten rows perfectly separated by the share: the fitted steps are 0 and 1, but ten rows
    # cannot support more certainty than Laplace's rule, 1 / (10 + 2).
    shares = np.linspace(0, 1, 10)
    cal = fit_calibrator(np.column_stack([1 - shares, shares]), (shares > 0.5).astype(int),
                         "isotonic")
    proba = cal.transform(np.array([[1.0, 0.0], [0.0, 1.0]]))
    np.testing.assert_allclose(proba, [[11 / 12, 1 / 12], [1 / 12, 11 / 12]], atol=1e-9)


def test_isotonic_never_decreases_in_the_share_even_on_data_that_does():
    rng = np.random.default_rng(13)
    shares = _coarse_shares(rng, 500, 2)
    y = (rng.random(500) < 1 - shares[:, 1]).astype(int)  # the votes point the wrong way
    grid = np.linspace(0, 1, 51)
    p = fit_calibrator(shares, y, "isotonic").transform(np.column_stack([1 - grid, grid]))
    assert np.all(np.diff(p[:, 1]) >= 0)


def test_probabilities_stay_positive_where_the_softmax_underflows():
    # A slope and smoothing at the edge of their range put logits 1e4 apart: exp underflows to
    # an exact 0, which the floor lifts.
    cal = TemperatureCalibrator(n_classes=2, slope=1e3, smoothing=1e-6, intercept=np.zeros(2))
    _assert_probabilities(cal.transform(np.array([[1.0, 0.0], [0.0, 1.0]])), 2, 2)


@pytest.mark.parametrize("method", CALIBRATIONS)
def test_weight_two_is_a_duplicated_row_and_weight_zero_a_dropped_one(method):
    rng = np.random.default_rng(9)
    shares = _coarse_shares(rng, 40, 3, voters=10)
    y = _draw(rng, 0.7 * shares + 0.1)
    weight = np.ones(40)
    weight[[3, 17]] = 2.0
    weight[25] = 0.0
    copies = np.r_[np.arange(40), 3, 17]
    copies = copies[copies != 25]
    test = _coarse_shares(rng, 50, 3, voters=10)
    weighted = fit_calibrator(shares, y, method, sample_weight=weight).transform(test)
    duplicated = fit_calibrator(shares[copies], y[copies], method).transform(test)
    np.testing.assert_allclose(weighted, duplicated, atol=1e-6)


@pytest.mark.parametrize("method", CALIBRATIONS)
def test_rows_without_voters_are_left_out(method):
    rng = np.random.default_rng(10)
    shares = _coarse_shares(rng, 60, 3)
    y = rng.integers(0, 3, size=60)
    voters = rng.integers(1, 15, size=60)
    padded = np.vstack([shares, np.zeros((5, 3))])  # nobody voted: the shares are empty
    test = _coarse_shares(rng, 20, 3)
    with_empty = fit_calibrator(padded, np.r_[y, [0, 1, 2, 0, 1]], method,
                                n_voters=np.r_[voters, np.zeros(5)])
    np.testing.assert_array_equal(with_empty.transform(test),
                                  fit_calibrator(shares, y, method).transform(test))


@pytest.mark.parametrize("method", CALIBRATIONS)
def test_pickling_round_trips(method):
    rng = np.random.default_rng(11)
    shares = _coarse_shares(rng, 100, 3)
    cal = fit_calibrator(shares, _draw(rng, shares), method)
    back = pickle.loads(pickle.dumps(cal))
    assert type(back) is type(cal) and isinstance(back, Calibrator)
    assert back.method == method and back.n_classes == 3
    np.testing.assert_array_equal(back.transform(shares), cal.transform(shares))


def test_invalid_input_is_refused():
    shares = np.array([[0.5, 0.5], [1.0, 0.0], [0.25, 0.75]])
    y = np.array([0, 1, 1])
    bad = {
        "method": lambda: fit_calibrator(shares, y, "platt"),
        "one column": lambda: fit_calibrator(np.ones((3, 1)), [0, 0, 0], "temperature"),
        "1-D shares": lambda: fit_calibrator(shares[:, 1], y, "temperature"),
        "class index": lambda: fit_calibrator(shares, [0, 1, 2], "sigmoid"),
        "non-integer class": lambda: fit_calibrator(shares, [0, 0.5, 1], "sigmoid"),
        "counts": lambda: fit_calibrator(shares * 10, y, "isotonic"),
        "negative share": lambda: fit_calibrator([[1.5, -0.5]] * 3, y, "isotonic"),
        "length": lambda: fit_calibrator(shares, [0, 1], "temperature"),
        "weight": lambda: fit_calibrator(shares, y, "temperature", sample_weight=[1, -1, 1]),
        "voters": lambda: fit_calibrator(shares, y, "temperature", n_voters=[1, np.nan, 1]),
        "no row": lambda: fit_calibrator(shares, y, "temperature", sample_weight=[0, 0, 0]),
        "columns": lambda: fit_calibrator(shares, y, "temperature").transform(np.eye(3)),
    }
    for name, call in bad.items():
        with pytest.raises(ValueError):
            call()
            pytest.fail(name)
