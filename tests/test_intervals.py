"""The interval convention: hand-derived values, the bounds, and the exact tests."""

import math

import numpy as np
import pytest

from sdwec import frontier as fr
from sdwec import intervals
from sdwec.formatting import mean_interval as interval_text


def test_t_interval_by_hand():
    # Three values 0.6, 0.7, 0.8: mean 0.7, sd 0.1, t(0.975, 2) = 4.302653
    mean, lo, hi = intervals.mean_interval([0.6, 0.7, 0.8], 0.0, 1.0)
    half = 4.302652729911275 * 0.1 / math.sqrt(3)
    assert mean == pytest.approx(0.7)
    assert lo == pytest.approx(0.7 - half) and hi == pytest.approx(0.7 + half)


def test_t_interval_is_clipped_to_the_bounds_and_holds_the_mean():
    # Ten accuracies near 1 (one split much lower): mean ± t·sd/√r passes 1 unclipped.
    values = [1.0] * 9 + [0.81]
    mean, lo, hi = intervals.mean_interval(values, 0.0, 1.0)
    assert hi == 1.0 and lo < mean <= hi
    # Tree counts: 193.8 ± 19.6 of 200; the interval stops at 200.
    counts = [200] * 9 + [138]
    mean, lo, hi = intervals.mean_interval(counts, 0, 200)
    assert mean == pytest.approx(193.8) and hi == 200 and lo >= 0
    # Rows at once (last axis = splits).
    mean, lo, hi = intervals.mean_interval(np.array([[0.0, 0.0, 0.05], [1.0, 1.0, 1.0]]), 0, 1)
    assert lo[0] == 0.0 and hi[1] == 1.0 and lo[1] == 1.0


def test_one_value_has_no_interval():
    mean, lo, hi = intervals.mean_interval([0.8], 0, 1)
    assert mean == 0.8 and math.isnan(lo) and math.isnan(hi)
    assert interval_text(mean, lo, hi) == "0.800"


def test_clopper_pearson_by_hand():
    # 0 of n: upper limit 1 − (α/2)^(1/n); n of n: lower limit (α/2)^(1/n).
    lo, hi = intervals.binomial_interval(0, 20)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 20))
    lo, hi = intervals.binomial_interval(20, 20)
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 20))
    # k of n: the limits solve P(X >= k | lo) = 0.025 and P(X <= k | hi) = 0.025.
    from scipy.stats import binom
    lo, hi = intervals.binomial_interval(7, 10)
    assert binom.sf(6, 10, lo) == pytest.approx(0.025)
    assert binom.cdf(7, 10, hi) == pytest.approx(0.025)
    with pytest.raises(ValueError):
        intervals.binomial_interval(11, 10)


def test_mcnemar_counts_discordant_rows_only():
    first = np.array([1, 1, 1, 0, 0, 1], bool)
    second = np.array([1, 0, 0, 0, 1, 1], bool)
    test = intervals.mcnemar(first, second)
    assert (test.better, test.worse) == (2, 1)
    # Two-sided exact binomial over 3 discordant rows, 2 one way: p = 1.
    assert test.p_value == pytest.approx(1.0)
    # Compressed rows count as their counts: 10 rows one way, 0 the other: p = 2 / 2**10.
    test = intervals.mcnemar([True, False], [False, False], counts=[10, 5])
    assert (test.better, test.worse) == (10, 0)
    assert test.p_value == pytest.approx(2 * 0.5 ** 10)
    assert intervals.mcnemar([True], [True]).p_value == 1.0


def _frame(n_selected, val, test, l=10):
    n_selected = np.asarray(n_selected)
    return fr._frame("SDWEC", [f"λ={i}" for i in range(len(n_selected))],
                     np.arange(len(n_selected), dtype=float), n_selected, l, val, test)


def test_over_splits_counts_abstaining_splits_and_keeps_them_off_the_front():
    # Setting 0 keeps no tree on split 2 of 3: it mixes a constant guess into its mean.
    a = _frame([2, 5, 8], [0.95, 0.90, 0.92], [0.8, 0.8, 0.8])
    b = _frame([0, 5, 8], [0.60, 0.90, 0.92], [0.6, 0.8, 0.8])
    c = _frame([3, 4, 8], [0.95, 0.90, 0.92], [0.8, 0.8, 0.8])
    out = fr.over_splits([a, b, c])
    assert list(out["abstaining_splits"]) == [1, 0, 0]
    assert list(out["abstains_any"]) == [True, False, False]
    assert list(out["abstains"]) == [False, False, False]
    front = fr.pareto(out)
    assert "λ=0" not in set(front["params"])
    # Intervals stay inside [0, l] and [0, 1] and hold the mean.
    for column, high in (("n_selected", 10), ("sparsity", 1), ("val_accuracy", 1)):
        assert (out[column + "_lo"] >= 0).all() and (out[column + "_hi"] <= high).all()
        assert (out[column + "_lo"] <= out[column]).all()
        assert (out[column] <= out[column + "_hi"]).all()


def test_over_one_split_gives_accuracies_a_binomial_interval():
    a = _frame([2, 5], [0.9, 0.5], [0.8, 0.25])
    out = fr.over_splits([a], n_val=10, n_test=20)
    lo, hi = intervals.binomial_interval(16, 20)
    assert out["test_accuracy_lo"][0] == pytest.approx(lo)
    assert out["test_accuracy_hi"][0] == pytest.approx(hi)
    assert out["n_selected_lo"].isna().all()
    out = fr.over_splits([a])
    assert out["test_accuracy_lo"].isna().all()


def test_interval_text():
    assert interval_text(0.981, 0.957, 1.0) == "0.981 [0.957, 1.000]"
    assert interval_text(193.8, 179.8, 200, 1) == "193.8 [179.8, 200.0]"


def test_an_accuracy_interval_is_binomial_on_one_split_and_t_over_several():
    lo, hi = intervals.binomial_interval(17, 21)
    assert intervals.accuracy_interval([17 / 21], [21]) == (pytest.approx(17 / 21), lo, hi)
    values = [0.6, 0.7, 0.8]
    assert intervals.accuracy_interval(values, [21] * 3) == intervals.mean_interval(values, 0, 1)
