"""Tables as the pages show them (sdwec.tables): labels, not code names; no float noise."""

import pandas as pd
import pytest

from sdwec import tables


def test_frontier_rows_get_labels_and_their_spread():
    front = pd.DataFrame({"params": ["λ=1"], "n_selected": [28.1], "n_selected_sd": [6.5],
                          "sparsity": [0.8596], "val_accuracy": [0.9], "val_accuracy_sd": [0.0],
                          "test_accuracy": [0.783], "test_accuracy_sd": [0.051]})
    shown = tables.for_people(front, ["params", "n_selected", "sparsity", "val_accuracy",
                                      "test_accuracy"])
    assert list(shown.columns) == ["parameters", "trees used", "sparsity",
                                   "validation accuracy", "test accuracy"]
    # A lone sd is a spread, printed as such, never as "mean ± sd" (which leaves [0, 1]).
    assert shown.iloc[0].tolist() == ["λ=1", "28.1 (sd 6.5)", "0.860", "0.9000",
                                      "0.783 (sd 0.051)"]
    # With an interval beside the column, the interval is the summary.
    front["test_accuracy_lo"], front["test_accuracy_hi"] = [0.745], [0.821]
    front["n_selected_lo"], front["n_selected_hi"] = [23.2], [33.0]
    shown = tables.for_people(front, ["n_selected", "test_accuracy"])
    assert shown.iloc[0].tolist() == ["28.1 [23.2, 33]", "0.783 [0.745, 0.821]"]
    # Without columns: every column but the sd and interval ones, in order.
    assert list(tables.for_people(front).columns) == ["parameters", "trees used", "sparsity",
                                                      "validation accuracy", "test accuracy"]
    with pytest.raises(ValueError, match="no column 'nope'"):
        tables.for_people(front, ["nope"])


def test_method_names_are_labels_and_differences_have_no_noise():
    summary = pd.DataFrame({"method": ["SDWEC-B", "bagging", "single", "random @K"],
                            "mean accuracy": [0.8859749, 0.8980960, 0.8, 0.89],
                            "trees kept": [33.480000000000004, 200.0, 1.0, 40.0],
                            "vs bagging (points)": [-1.2121, 3.3306690738754696e-14,
                                                    -9.8, 0.0004]})
    shown = tables.for_people(summary)
    assert list(shown["method"]) == ["SDWEC-B", "bagging", "single tree", "random @K"]
    assert list(shown["mean accuracy"]) == ["0.8860", "0.8981", "0.8000", "0.8900"]
    assert list(shown["trees kept"]) == ["33.5", "200", "1", "40"]
    # 3.3e-14 points is a difference of equal sums: 0, not 0.00000000000003; a real 0.0004
    # points keeps its figures.
    assert list(shown["vs bagging (points)"]) == ["−1.2", "0", "−9.8", "+0.0004"]


def test_timing_rows():
    measured = pd.DataFrame({"dataset": ["wine"], "m": [142], "l": [100], "seconds": [0.0123],
                             "paper_m": [float("nan")], "paper_seconds": [0.03]})
    shown = tables.for_people(measured)
    assert list(shown.columns) == ["dataset", "training rows m", "classifiers l",
                                   "seconds (measured)", "paper's m", "paper's seconds"]
    assert shown.iloc[0].tolist() == ["wine", "142", "100", "0.0123", "nan", "0.03"]


def test_an_interval_is_folded_in_and_wins_over_the_sd():
    import numpy as np

    paper = pd.DataFrame({"dataset": ["wine", "sonar"], "ours": [0.9812, 0.78],
                          "ours_lo": [0.9571, np.nan], "ours_hi": [1.0, np.nan],
                          "ours_sd": [0.034, np.nan], "n_selected": [12.5, 3.0],
                          "n_selected_lo": [8.25, np.nan], "n_selected_hi": [16.75, np.nan],
                          "agreement": ["agrees", "too few repeats"]})
    shown = tables.for_people(paper)
    # Neither the interval's ends nor the sd are columns of their own.
    assert list(shown.columns) == ["dataset", "this reproduction", "trees used",
                                   "against the paper"]
    # Never "0.981 ± 0.034" (which passes 1): the interval, and the mean alone without one.
    assert list(shown["this reproduction"]) == ["0.981 [0.957, 1.000]", "0.780"]
    assert list(shown["trees used"]) == ["12.5 [8.25, 16.8]", "3"]
