"""The Paper page's measured numbers carry their spread: Table 5's times over their runs."""

import numpy as np
import pandas as pd
import pytest

from sdwec import plots, tables, timing


def test_training_time_draws_the_runs_spread():
    times = pd.DataFrame({"dataset": ["wine", "wine"], "m": [142, 142], "l": [100, 200],
                          "seconds": [0.010, 0.020], "seconds_min": [0.008, 0.019],
                          "seconds_max": [0.015, 0.030], "runs": [5, 5]})
    fig = plots.training_time(times)
    (measured,) = [t for t in fig.data if t.name == "wine (m=142) measured"]
    # Bars from the fastest to the slowest run, around the median.
    assert measured.error_y.symmetric is False
    assert list(measured.error_y.array) == pytest.approx([0.005, 0.010])
    assert list(measured.error_y.arrayminus) == pytest.approx([0.002, 0.001])
    assert list(measured.customdata) == [
        "median 0.01 s of 5 runs (fastest 0.008, slowest 0.015)",
        "median 0.02 s of 5 runs (fastest 0.019, slowest 0.03)"]
    # The axis holds the bars' ends: 0.008 and 0.03 are inside the first and last ticks.
    ticks = fig.layout.yaxis.tickvals
    assert ticks[0] <= 0.008 and ticks[-1] >= 0.03
    shown = tables.for_people(times)
    assert list(shown.columns[3:]) == ["seconds (measured)", "fastest run (s)",
                                       "slowest run (s)", "timed runs"]


def test_weight_finding_runs_times_each_run():
    rng = np.random.default_rng(0)
    H = rng.choice([-1, 1], size=(60, 12))
    y = rng.choice([-1, 1], size=60)
    runs = timing.weight_finding_runs(H, y, repeats=4)
    assert len(runs) == 4 and all(r > 0 for r in runs)
