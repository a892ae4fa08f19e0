"""The Frontier's CSV and its file name (the dashboard's side of sdwec.frontier)."""

import io

import numpy as np
import pandas as pd

from sdwec import frontier
from tests.test_frontier import _splits_with_one_abstaining


def test_frontier_csv_marks_abstaining_splits_and_gives_intervals():
    from dashboard import frontier_cache

    sweep = frontier.over_splits(_splits_with_one_abstaining())
    peers = frontier.over_splits([frontier._frame("bagging", [""], [np.nan], [10], 10, [0.9],
                                                  [0.85 + 0.01 * s]) for s in range(3)])
    csv = pd.read_csv(io.BytesIO(frontier_cache.frontier_csv(sweep, peers)))
    assert not [c for c in csv if c.endswith("_sd")]  # the interval is the summary
    first = csv.iloc[0]
    assert (first["abstaining_splits"], first["splits"]) == (1, 3)
    assert csv["abstaining_splits"].tolist() == [1, 0, 0]
    for column, high in (("test_accuracy", 1.0), ("n_selected", 10), ("sparsity", 1.0)):
        assert (csv[column + "_lo"] >= 0).all() and (csv[column + "_hi"] <= high).all()
        assert (csv[column + "_lo"] <= csv[column]).all()
        assert (csv[column] <= csv[column + "_hi"]).all()
    # The test accuracies 0.9, 0.95, 1.0 at λ = 1: their interval's top is clipped at 1.
    assert csv.loc[1, "test_accuracy_hi"] == 1.0


def test_frontier_csv_name_drops_an_uploads_extension():
    from dashboard.frontier_view import csv_name

    assert csv_name("sonar") == "sdwec_frontier_sonar.csv"
    assert csv_name("wine.csv") == "sdwec_frontier_wine.csv"
    assert csv_name("logs.CSV.gz") == "sdwec_frontier_logs.csv"
    assert csv_name("v1.2") == "sdwec_frontier_v1.2.csv"  # not an extension
