"""Numbers as the pages print them (sdwec.formatting), against hand-written strings."""

import math

from sdwec.formatting import mean_sd, points, significant


def test_significant_figures_and_noise():
    assert significant(0.031234) == "0.0312"
    assert significant(3e-14) == "0"
    assert significant(-3e-14) == "0"
    assert significant(12345.6) == "1.23e+04"
    assert significant(math.nan) == "nan"
    assert significant(2.0) == "2"


def test_points_keep_small_differences():
    assert points(-0.029) == "−2.9"
    assert points(0.0004) == "+0.04"
    assert points(1 / 12597) == "+0.0079"
    assert points(0.0) == "0"
    assert points(0.0476, sign=False) == "4.8"


def test_mean_sd():
    assert mean_sd(0.78333, 0.05111) == "0.783 ± 0.051"
    assert mean_sd(0.9048, math.nan, 4) == "0.9048"
