"""The paper's 11 datasets, read offline from ``data/``, and a defensive CSV loader.

Every choice made while preprocessing (rows dropped, encodings, which class is +1, how the
multi-class sets were binarised) is documented next to the code below and in ``data/README.md``.

Two views are offered for every dataset:

* ``task="binary"``: labels in {-1, +1} (int64); the positive class is named in the card.
* ``task="multiclass"``: the dataset's own labels (int64 or str), ``classes`` sorted.
  For two-class datasets this is the same split with the original labels.

Examples
--------
>>> from sdwec import datasets
>>> ds = datasets.load("sonarP", task="binary")
>>> ds.X.shape, ds.classes.tolist()
((208, 60), [-1, 1])
"""

from __future__ import annotations

import csv
import functools
import io
import itertools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from sdwec.errors import DataError

__all__ = [
    "Dataset", "names", "tasks", "load", "from_csv", "canonical_name", "paper_name",
    "DATA_DIR", "TASKS", "MAX_UPLOAD_BYTES", "MAX_FEATURES", "MAX_CLASSES",
    "MIN_ROWS_PER_CLASS", "MAX_CELL_CHARS", "MISSING_TOKENS",
]

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
TASKS = ("binary", "multiclass")

#: Largest CSV accepted, in bytes. Streamlit's ``server.maxUploadSize`` is in MiB
#: (it multiplies by 1024 * 1024), so ``.streamlit/config.toml`` sets it to 200.
MAX_UPLOAD_BYTES = 200 * 1024 * 1024
#: Most feature columns accepted (the target column is not counted).
MAX_FEATURES = 1_000
#: Most distinct target values accepted; more means a measurement or an ID, not a class.
MAX_CLASSES = 100
#: Fewest rows per class: the 80/10/10 split must leave every class in the validation
#: and test parts (10% of 10 rows is one row).
MIN_ROWS_PER_CLASS = 10
#: Longest cell accepted; longer cells are free text, not a feature value.
MAX_CELL_CHARS = 1_000
#: Cell values read as "missing" (compared after stripping spaces, case-insensitive).
MISSING_TOKENS = frozenset({
    "", "?", "na", "n/a", "nan", "null", "none", "#n/a",
    "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity",
})

_SNIFF_DELIMITERS = (",", ";", "\t", "|")
_SNIFF_RECORDS = 50
_HEADER_SAMPLE_ROWS = 200
# Spreadsheets run a cell as a formula when it starts with one of these characters.
_FORMULA_PREFIXES = ("=", "+", "-", "@")


@dataclass(frozen=True, eq=False)
class Dataset:
    """A classification dataset ready for pool building.

    Attributes
    ----------
    name : str
        Canonical dataset name, or the file name for user data.
    task : {"binary", "multiclass"}
        Label view: ``{-1, +1}`` labels, or the dataset's own labels.
    X : ndarray of shape (n_samples, n_features), float64
        Features, read-only; categorical columns are ordinal codes 0, 1, 2, ...
    y : ndarray of shape (n_samples,)
        Labels, read-only: int64 (binary view, or numeric labels) or object (text labels).
    feature_names : list of str
        One name per column of ``X``.
    classes : ndarray
        Sorted distinct labels of ``y`` (``[-1, 1]`` for the binary view).
    description : str
        One paragraph for the dashboard: source, size, classes and preprocessing.
    class_names : tuple of str
        A readable name for each entry of ``classes``, in the same order.
    positive_label : object or None
        Binary view: the original label (or, for classes merged into +1, a description
        of them) mapped to +1. ``None`` for the multiclass view.
    """

    name: str
    task: str
    X: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    feature_names: list[str] = field(repr=False)
    classes: np.ndarray
    description: str = field(repr=False)
    class_names: tuple[str, ...] = ()
    positive_label: object = None

    @property
    def n_samples(self) -> int:
        """Number of rows."""
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        """Number of feature columns."""
        return self.X.shape[1]

    def class_counts(self) -> dict:
        """Rows per class, in the order of ``classes``."""
        counts = [int(np.sum(self.y == c)) for c in self.classes]
        return {_plain(c): n for c, n in zip(self.classes, counts)}


# --------------------------------------------------------------------------------------
# The 11 shipped datasets
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Spec:
    """How to read one shipped dataset and how to label it."""

    title: str
    paper_name: str
    aliases: tuple[str, ...]
    read: Callable[[Path], tuple[pd.DataFrame, np.ndarray]]
    positive: frozenset            # original labels mapped to +1 in the binary view
    positive_text: str             # what +1 means, for the card and the dashboard
    negative_text: str
    label_names: dict              # original label -> readable name
    blurb: str                     # source and preprocessing, one or two sentences


def _read_table(path: Path, **kwargs) -> pd.DataFrame:
    return pd.read_csv(path, header=None, **kwargs)


def _features(frame: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    frame = frame.astype(np.float64)
    frame.columns = names
    return frame


def _read_breast(folder: Path):
    # Columns: sample id, 9 cytology scores (1-10), class (2 benign, 4 malignant).
    raw = _read_table(folder / "breast-cancer-wisconsin.data", na_values="?").dropna()
    names = ["clump_thickness", "uniformity_cell_size", "uniformity_cell_shape",
             "marginal_adhesion", "single_epithelial_cell_size", "bare_nuclei",
             "bland_chromatin", "normal_nucleoli", "mitoses"]
    return _features(raw.iloc[:, 1:10], names), raw.iloc[:, 10].to_numpy(np.int64)


def _read_heart(folder: Path):
    # 13 attributes then num (0 = no disease, 1-4 = disease). The coded attributes
    # (cp, restecg, slope, thal, ...) are kept as their numeric codes: CART splits them.
    raw = _read_table(folder / "processed.cleveland.data", na_values="?").dropna()
    names = ["age", "sex", "cp", "trestbps", "chol", "fbs", "restecg", "thalach", "exang",
             "oldpeak", "slope", "ca", "thal"]
    return _features(raw.iloc[:, :13], names), raw.iloc[:, 13].to_numpy(np.int64)


def _read_ionosphere(folder: Path):
    raw = _read_table(folder / "ionosphere.data")
    # 17 pulse numbers, each a complex value stored as (real, imaginary).
    names = [f"pulse{k:02d}_{part}" for k in range(1, 18) for part in ("real", "imag")]
    return _features(raw.iloc[:, :34], names), _text_labels(raw.iloc[:, 34])


def _read_sonar(folder: Path):
    raw = _read_table(folder / "sonar.all-data")
    names = [f"band{k:02d}" for k in range(1, 61)]
    return _features(raw.iloc[:, :60], names), _text_labels(raw.iloc[:, 60])


def _read_vehicle(folder: Path):
    # Nine space-separated parts; bus/van lines end with a trailing space, so split on runs
    # of whitespace. Sorted file order keeps the row order deterministic.
    parts = [pd.read_csv(p, sep=r"\s+", header=None) for p in sorted(folder.glob("xa?.dat"))]
    raw = pd.concat(parts, ignore_index=True)
    names = ["compactness", "circularity", "distance_circularity", "radius_ratio",
             "pr_axis_aspect_ratio", "max_length_aspect_ratio", "scatter_ratio",
             "elongatedness", "pr_axis_rectangularity", "max_length_rectangularity",
             "scaled_variance_major", "scaled_variance_minor", "scaled_radius_of_gyration",
             "skewness_major", "skewness_minor", "kurtosis_minor", "kurtosis_major",
             "hollows_ratio"]
    return _features(raw.iloc[:, :18], names), _text_labels(raw.iloc[:, 18])


def _read_vote(folder: Path):
    # Class first, then 16 votes. '?' ("neither yea nor nay") rows are dropped, which
    # reproduces the paper's 232 rows; y -> 1, n -> 0.
    raw = _read_table(folder / "house-votes-84.data", na_values="?", keep_default_na=False)
    raw = raw.dropna()
    votes = raw.iloc[:, 1:].replace({"y": 1, "n": 0})
    names = ["handicapped_infants", "water_project_cost_sharing",
             "adoption_of_the_budget_resolution", "physician_fee_freeze", "el_salvador_aid",
             "religious_groups_in_schools", "anti_satellite_test_ban",
             "aid_to_nicaraguan_contras", "mx_missile", "immigration",
             "synfuels_corporation_cutback", "education_spending", "superfund_right_to_sue",
             "crime", "duty_free_exports", "export_administration_act_south_africa"]
    return _features(votes, names), _text_labels(raw.iloc[:, 0])


def _read_waveform(folder: Path):
    raw = _read_table(folder / "waveform.data")
    names = [f"x{k:02d}" for k in range(1, 22)]
    return _features(raw.iloc[:, :21], names), raw.iloc[:, 21].to_numpy(np.int64)


_NUCLEUS_FEATURES = ["radius", "texture", "perimeter", "area", "smoothness", "compactness",
                     "concavity", "concave_points", "symmetry", "fractal_dimension"]
_NUCLEUS_NAMES = [f"{stat}_{feat}" for stat in ("mean", "se", "worst")
                  for feat in _NUCLEUS_FEATURES]


def _read_wdbc(folder: Path):
    # ID, diagnosis, 30 nucleus features; the ID is dropped.
    raw = _read_table(folder / "wdbc.data")
    return _features(raw.iloc[:, 2:], list(_NUCLEUS_NAMES)), _text_labels(raw.iloc[:, 1])


def _read_wine(folder: Path):
    raw = _read_table(folder / "wine.data")
    names = ["alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium",
             "total_phenols", "flavanoids", "nonflavanoid_phenols", "proanthocyanins",
             "color_intensity", "hue", "od280_od315", "proline"]
    return _features(raw.iloc[:, 1:], names), raw.iloc[:, 0].to_numpy(np.int64)


def _read_wpbc(folder: Path):
    # ID, outcome, time, 30 nucleus features, tumour size, lymph node status. The ID is
    # dropped; time is kept because the UCI documentation lists it as an input attribute.
    raw = _read_table(folder / "wpbc.data", na_values="?").dropna()
    names = ["time", *_NUCLEUS_NAMES, "tumor_size", "lymph_node_status"]
    return _features(raw.iloc[:, 2:], names), _text_labels(raw.iloc[:, 1])


_NSL_KDD_FEATURES = [
    "duration", "protocol_type", "service", "flag", "src_bytes", "dst_bytes", "land",
    "wrong_fragment", "urgent", "hot", "num_failed_logins", "logged_in", "num_compromised",
    "root_shell", "su_attempted", "num_root", "num_file_creations", "num_shells",
    "num_access_files", "num_outbound_cmds", "is_host_login", "is_guest_login", "count",
    "srv_count", "serror_rate", "srv_serror_rate", "rerror_rate", "srv_rerror_rate",
    "same_srv_rate", "diff_srv_rate", "srv_diff_host_rate", "dst_host_count",
    "dst_host_srv_count", "dst_host_same_srv_rate", "dst_host_diff_srv_rate",
    "dst_host_same_src_port_rate", "dst_host_srv_diff_host_rate", "dst_host_serror_rate",
    "dst_host_srv_serror_rate", "dst_host_rerror_rate", "dst_host_srv_rerror_rate",
]
_NSL_KDD_CATEGORICAL = ("protocol_type", "service", "flag")
# The standard KDD Cup 99 grouping of the attack labels that occur in KDDTrain+. The
# multiclass view uses these five groups: the raw attack names include classes with 2-4
# rows, too few for a stratified 80/10/10 split.
_NSL_KDD_CATEGORY = {
    "normal": "normal",
    **dict.fromkeys(["back", "land", "neptune", "pod", "smurf", "teardrop"], "dos"),
    **dict.fromkeys(["ipsweep", "nmap", "portsweep", "satan"], "probe"),
    **dict.fromkeys(["ftp_write", "guess_passwd", "imap", "multihop", "phf", "spy",
                     "warezclient", "warezmaster"], "r2l"),
    **dict.fromkeys(["buffer_overflow", "loadmodule", "perl", "rootkit"], "u2r"),
}


def _read_nsl_kdd(folder: Path):
    # KDDTrain+ only (the paper's 100,778 training rows are 80% of its 125,973 rows).
    # 41 features, attack label, difficulty level (dropped).
    raw = _read_table(folder / "KDDTrain+.txt.gz", compression="gzip")
    frame = raw.iloc[:, :41].copy()
    frame.columns = _NSL_KDD_FEATURES
    for column in _NSL_KDD_CATEGORICAL:
        # Ordinal codes in sorted order of the category names found in KDDTrain+.
        frame[column] = pd.factorize(frame[column], sort=True)[0]
    attack = raw.iloc[:, 41]
    unknown = sorted(set(attack.unique()) - set(_NSL_KDD_CATEGORY))
    if unknown:
        raise DataError(f"NSL-KDD: attack labels without a category: {unknown}")
    category = attack.map(_NSL_KDD_CATEGORY)
    return frame.astype(np.float64), _text_labels(category)


_NUM_TO_GRADE = {0: "no disease (num 0)", **{k: f"disease (num {k})" for k in range(1, 5)}}

_SPECS: dict[str, _Spec] = {
    "breast": _Spec(
        "Breast Cancer Wisconsin (Original)", "breast", ("breast",),
        _read_breast, frozenset({4}), "malignant (class 4)", "benign (class 2)",
        {2: "benign", 4: "malignant"},
        "Cytology scores of breast fine-needle aspirates (UCI, CC BY 4.0). The sample id is "
        "dropped and the 16 rows with a missing Bare Nuclei score are removed."),
    "heart": _Spec(
        "Heart Disease, Cleveland", "heartC", ("heartc", "heart_cleveland", "cleveland"),
        _read_heart, frozenset({1, 2, 3, 4}), "disease present (num 1-4)",
        "no disease (num 0)", _NUM_TO_GRADE,
        "Clinical measurements of Cleveland Clinic patients (UCI, CC BY 4.0). The 6 rows "
        "with a missing ca or thal value are removed; coded attributes keep their codes. "
        "The multiclass view keeps the five num grades 0-4."),
    "ionosphere": _Spec(
        "Ionosphere", "ionosphere", ("ionosphere",),
        _read_ionosphere, frozenset({"g"}), "good radar return (g)", "bad radar return (b)",
        {"g": "good", "b": "bad"},
        "Radar returns from the ionosphere, 17 complex pulse values (UCI, CC BY 4.0). "
        "No missing values; the second feature is constant 0, as in the original."),
    "sonar": _Spec(
        "Connectionist Bench (Sonar, Mines vs. Rocks)", "sonarP", ("sonarp",),
        _read_sonar, frozenset({"M"}), "mine / metal cylinder (M)", "rock (R)",
        {"M": "mine", "R": "rock"},
        "Energy of sonar echoes in 60 frequency bands (UCI, CC BY 4.0). No missing values."),
    "vehicle": _Spec(
        "Statlog (Vehicle Silhouettes)", "vehicleP", ("vehiclep",),
        _read_vehicle, frozenset({"bus"}), "bus", "not a bus (opel, saab, van)",
        {"bus": "bus", "opel": "opel", "saab": "saab", "van": "van"},
        "Shape features of vehicle silhouettes (UCI, CC BY 4.0; acknowledge the Turing "
        "Institute, Glasgow). No missing values. The binary view is bus vs the rest."),
    "vote": _Spec(
        "Congressional Voting Records (1984)", "voteP", ("votep", "votes"),
        _read_vote, frozenset({"republican"}), "republican", "democrat",
        {"democrat": "democrat", "republican": "republican"},
        "Votes of the 1984 US House of Representatives (UCI, CC BY 4.0); y = 1, n = 0. "
        "Rows with a '?' (neither yea nor nay) are removed, as the paper's sizes imply."),
    "waveform": _Spec(
        "Waveform Database Generator (Version 1)", "waveform", ("waveform",),
        _read_waveform, frozenset({0}), "wave class 0", "wave classes 1 and 2",
        {0: "wave 0", 1: "wave 1", 2: "wave 2"},
        "Breiman's synthetic noisy waveforms, 21 attributes (UCI, CC BY 4.0). No missing "
        "values. The binary view is class 0 vs the rest."),
    "wdbc": _Spec(
        "Breast Cancer Wisconsin (Diagnostic)", "wdbcP", ("wdbcp",),
        _read_wdbc, frozenset({"M"}), "malignant (M)", "benign (B)",
        {"B": "benign", "M": "malignant"},
        "Nucleus features from digitised breast-mass images (UCI, CC BY 4.0). The ID is "
        "dropped; no missing values."),
    "wine": _Spec(
        "Wine", "wine", ("wine",),
        _read_wine, frozenset({1}), "cultivar 1", "cultivars 2 and 3",
        {1: "cultivar 1", 2: "cultivar 2", 3: "cultivar 3"},
        "Chemical analysis of wines from three cultivars (UCI, CC BY 4.0). No missing "
        "values. The binary view is cultivar 1 vs the rest."),
    "wpbc": _Spec(
        "Breast Cancer Wisconsin (Prognostic)", "wpbcP", ("wpbcp",),
        _read_wpbc, frozenset({"R"}), "recurrence (R)", "no recurrence (N)",
        {"N": "no recurrence", "R": "recurrence"},
        "Follow-up of invasive breast cancer cases (UCI, CC BY 4.0). The ID is dropped, "
        "time is kept as a feature, and the 4 rows missing the lymph node status are "
        "removed."),
    "nsl_kdd": _Spec(
        "NSL-KDD (KDDTrain+)", "NSL-KDD", ("nsl-kdd", "nslkdd", "nsl kdd", "kdd"),
        _read_nsl_kdd, frozenset({"dos", "probe", "r2l", "u2r"}), "attack", "normal",
        {"normal": "normal", "dos": "denial of service", "probe": "probe",
         "r2l": "remote to local", "u2r": "user to root"},
        "Network connection records for intrusion detection (Canadian Institute for "
        "Cybersecurity, UNB; cite Tavallaee et al. 2009). KDDTrain+ only; protocol_type, "
        "service and flag are ordinal codes in sorted order; the difficulty column is "
        "dropped. The multiclass view groups the 22 attack names into dos, probe, r2l, "
        "u2r."),
}

_ALIASES: dict[str, str] = {}
for _name, _spec in _SPECS.items():
    for _alias in (_name, _spec.paper_name, *_spec.aliases):
        _ALIASES[_alias.lower()] = _name


def names() -> list[str]:
    """Canonical names of the 11 shipped datasets, in the paper's table order."""
    return list(_SPECS)


def canonical_name(name: str) -> str:
    """Resolve a dataset name or alias (case-insensitive), e.g. ``"heartC"`` -> ``"heart"``.

    Raises
    ------
    ValueError
        If the name is unknown; the message lists the valid names.
    """
    key = str(name).strip().lower()
    if key in _ALIASES:
        return _ALIASES[key]
    paper = ", ".join(spec.paper_name for spec in _SPECS.values())
    raise ValueError(
        f"Unknown dataset {name!r}. Valid names: {', '.join(_SPECS)} "
        f"(the paper's names are accepted too: {paper}).")


def paper_name(name: str) -> str:
    """The name the paper's tables use for a dataset (e.g. ``"heart"`` -> ``"heartC"``)."""
    return _SPECS[canonical_name(name)].paper_name


def tasks(name: str) -> tuple[str, ...]:
    """Tasks offered for a dataset: always ``("binary", "multiclass")``.

    Two-class datasets offer both too; their multiclass view keeps the original labels.
    """
    canonical_name(name)
    return TASKS


def load(name: str, task: str = "binary") -> Dataset:
    """Load a shipped dataset.

    Parameters
    ----------
    name : str
        Canonical name or alias, case-insensitive (see :func:`names`).
    task : {"binary", "multiclass"}
        ``"binary"``: labels in {-1, +1}. ``"multiclass"``: the dataset's own labels.

    Returns
    -------
    Dataset
        Parsed once per (name, task) and cached; arrays are read-only, so callers share
        them safely (copy with ``np.array(ds.X)`` to modify).

    Raises
    ------
    ValueError
        Unknown name or task.
    """
    key = canonical_name(name)
    if task not in TASKS:
        raise ValueError(f"Unknown task {task!r}; choose one of {', '.join(TASKS)}.")
    dataset = _load_cached(key, task)
    # A fresh list each call, so that a caller editing feature_names cannot alter the cache.
    return Dataset(**{**dataset.__dict__, "feature_names": list(dataset.feature_names)})


@functools.lru_cache(maxsize=None)
def _read_raw(key: str) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    features, labels = _SPECS[key].read(DATA_DIR / key)
    X = _read_only(np.ascontiguousarray(features.to_numpy(np.float64)))
    return X, _read_only(labels), tuple(features.columns)


@functools.lru_cache(maxsize=None)
def _load_cached(key: str, task: str) -> Dataset:
    spec = _SPECS[key]
    X, labels, feature_names = _read_raw(key)
    if task == "binary":
        is_positive = np.isin(labels, list(spec.positive))
        y = np.where(is_positive, 1, -1).astype(np.int64)
        classes = np.array([-1, 1], dtype=np.int64)
        class_names = (spec.negative_text, spec.positive_text)
        positive = _plain(next(iter(spec.positive))) if len(spec.positive) == 1 \
            else spec.positive_text
    else:
        y = labels
        classes = np.unique(labels)
        class_names = tuple(spec.label_names.get(_plain(c), str(c)) for c in classes)
        positive = None
    counts = ", ".join(f"{label} {int(np.sum(y == c))}" for c, label in zip(classes, class_names))
    view = ("binary view: +1 = " + spec.positive_text + ", -1 = " + spec.negative_text
            if task == "binary" else f"multiclass view: {len(classes)} classes")
    description = (f"{spec.title} (paper: {spec.paper_name}). {spec.blurb} "
                   f"{X.shape[0]} rows, {X.shape[1]} features; {view} ({counts}).")
    return Dataset(key, task, X, _read_only(y), list(feature_names), _read_only(classes),
                   description, class_names, positive)


def _text_labels(labels: pd.Series) -> np.ndarray:
    """String labels as an object array of stripped Python str."""
    return np.array([str(v).strip() for v in labels], dtype=object)


def _read_only(array: np.ndarray) -> np.ndarray:
    array = np.asarray(array)
    array.setflags(write=False)
    return array


def _plain(value):
    """A numpy scalar as the matching Python scalar (for dict keys and messages)."""
    return value.item() if isinstance(value, np.generic) else value


# --------------------------------------------------------------------------------------
# The user's own CSV
# --------------------------------------------------------------------------------------


def from_csv(source, target: str | None = None, task: str = "auto", *,
             name: str | None = None, header: str | bool = "auto",
             max_bytes: int = MAX_UPLOAD_BYTES, max_features: int = MAX_FEATURES) -> Dataset:
    """Read a user's CSV file into a :class:`Dataset`, refusing anything unusable.

    Parameters
    ----------
    source : str, os.PathLike, bytes or binary file-like
        A path, the raw bytes, or an open file / Streamlit ``UploadedFile``.
    target : str, optional
        Name of the label column (exact, then case-insensitive). Default: the last column.
    task : {"auto", "binary", "multiclass"}
        ``"auto"``: binary when the target has two classes, multiclass otherwise. In the
        binary view the second class in sorted order becomes +1, the first -1.
    name : str, optional
        Dataset name; default the file name, else ``"your data"``.
    header : {"auto", True, False}
        Whether the first row holds column names. ``"auto"`` decides from the first 200
        records: the first row is a header when some column has a text first cell above
        numbers, or when no text first cell reappears in its column and either all first
        cells are text or some such column repeats a few values (categories).
        Without a header the columns are called ``"column 1"``, ``"column 2"``, ...
    max_bytes, max_features : int
        Limits, checked before the file is parsed.

    Returns
    -------
    Dataset
        A column whose values are all numbers is numeric (float64); any other column is
        categorical, encoded as ordinal codes 0, 1, ... in sorted order of its values.
        Rows with a missing value (see ``MISSING_TOKENS``; infinities count as missing)
        are dropped and counted in ``description``. Integer labels stay int64, other
        labels are text (object array).

    Raises
    ------
    DataError
        With a message saying what to fix: empty file, not a text CSV, not UTF-8, one
        column, ragged rows, too large, too many features, duplicate or missing target
        column, formula cells, over-long cells, no complete rows, one class, too many
        classes, a class with fewer than ``MIN_ROWS_PER_CLASS`` rows, constant features.
    """
    if task not in ("auto", *TASKS):
        raise ValueError(f"Unknown task {task!r}; choose auto, binary or multiclass.")
    if header not in ("auto", True, False):
        raise ValueError(f"header must be 'auto', True or False, not {header!r}.")
    data, file_name = _read_bytes(source, max_bytes)
    text = _decode(data)
    delimiter, width = _sniff(text)
    if width < 2:
        raise DataError(
            "The file has a single column. It needs at least one feature column and a "
            "target column, separated by commas (semicolons, tabs or | also work).")
    if width - 1 > max_features:
        raise DataError(
            f"The file has {width - 1:,} feature columns; at most {max_features:,} are "
            "supported. Keep the most useful columns and upload again.")
    sample = _first_records(text, delimiter, _HEADER_SAMPLE_ROWS + 1)
    has_header = _looks_like_header(sample) if header == "auto" else header
    columns = _column_names(sample[0], has_header)
    target_name = _find_target(columns, target)
    _check_rectangular(text, delimiter, width)
    table = _parse(text, delimiter, width, has_header, columns.index(target_name))
    if table.empty:
        raise DataError("The file has a header row but no data rows below it.")
    table.columns = columns
    table, n_dropped = _drop_missing(table)
    labels = table.pop(target_name)
    try:
        y_original, classes_original = _encode_target(labels, target_name, n_dropped)
    except DataError as error:
        if has_header:
            raise
        raise DataError(f"{error} Note: the first line was read as data, not as column "
                        "names.") from None
    X, categorical = _encode_features(table)
    if task == "binary" and len(classes_original) != 2:
        raise DataError(
            f"Binary classification needs two classes; target {target_name!r} has "
            f"{len(classes_original)}. Choose multiclass, or another target column.")
    if np.all(np.ptp(X, axis=0) == 0):
        raise DataError(
            "Every feature column has one single value in all complete rows, so there is "
            "nothing to learn from. Check the columns, or the rows dropped for missing "
            "values.")
    chosen = task if task != "auto" else ("binary" if len(classes_original) == 2
                                         else "multiclass")
    if chosen == "binary":
        positive = classes_original[1]
        y = np.where(y_original == positive, 1, -1).astype(np.int64)
        classes = np.array([-1, 1], dtype=np.int64)
        class_names = (str(classes_original[0]), str(positive))
        positive_label = _plain(positive)
    else:
        y, classes, positive_label = y_original, classes_original, None
        class_names = tuple(str(c) for c in classes)
    dataset_name = name or file_name or "your data"
    description = _describe_csv(dataset_name, X, target_name, categorical, n_dropped, chosen,
                                classes, class_names, y)
    return Dataset(dataset_name, chosen, _read_only(X), _read_only(y), list(table.columns),
                   _read_only(classes), description, class_names, positive_label)


def _read_bytes(source, max_bytes: int) -> tuple[bytes, str | None]:
    """Raw bytes of the source and its file name; the size is checked before reading."""
    too_big = (f"The file is larger than the {max_bytes / 2**20:,.0f} MB limit. Upload a "
               "smaller sample of the rows.")
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        if len(data) > max_bytes:
            raise DataError(too_big)
        return data, None
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise DataError(f"No file at {str(path)!r}.")
        if path.stat().st_size > max_bytes:
            raise DataError(too_big)
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
        file_name = path.name
    elif hasattr(source, "read"):
        size = getattr(source, "size", None)   # Streamlit's UploadedFile knows its size
        if isinstance(size, int) and size > max_bytes:
            raise DataError(too_big)
        if getattr(source, "seekable", lambda: False)():
            source.seek(0)
        data = source.read(max_bytes + 1)
        if isinstance(data, str):
            data = data.encode("utf-8", errors="surrogatepass")
        file_name = os.path.basename(str(getattr(source, "name", "") or "")) or None
    else:
        raise TypeError(f"from_csv reads a path, bytes or a file object, not "
                        f"{type(source).__name__}.")
    if len(data) > max_bytes:
        raise DataError(too_big)
    return data, file_name


def _decode(data: bytes) -> str:
    if not data.strip():
        raise DataError("The file is empty. Upload a CSV with a header row and data rows.")
    if data.startswith(b"PK\x03\x04"):
        raise DataError(
            "This is a zip archive or an Excel workbook (.xlsx), not a CSV. In your "
            "spreadsheet use 'Save as' > 'CSV UTF-8', then upload that file.")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return _unix_lines(data.decode("utf-16"))
        except UnicodeDecodeError:
            pass
    if b"\x00" in data:
        raise DataError(
            "The file contains binary data, not text: it is not a CSV file. Export your "
            "table as 'CSV UTF-8' and upload that.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise DataError(
            f"The file is not UTF-8 text (byte 0x{data[error.start]:02x} at position "
            f"{error.start:,} cannot be read). Save it as 'CSV UTF-8' and upload again."
        ) from None
    return _unix_lines(text)


def _unix_lines(text: str) -> str:
    # Old Mac files end lines with a lone CR; the line splitter expects LF (CRLF is fine).
    return text.replace("\r", "\n") if "\n" not in text else text


def _lines(text: str):
    """The lines of ``text``, lazily and without copying the whole text."""
    start, end = 0, len(text)
    while start < end:
        stop = text.find("\n", start, end)
        stop = end if stop == -1 else stop + 1
        yield text[start:stop]
        start = stop


def _records(text: str, delimiter: str):
    # strict: an unclosed quote or text after a closing quote is an error, not data.
    return csv.reader(_lines(text), delimiter=delimiter, strict=True)


def _first_records(text: str, delimiter: str, count: int) -> list[list[str]]:
    """The first ``count`` non-blank records (the file is known to be readable so far)."""
    rows = (r for r in _records(text, delimiter) if r)
    try:
        return list(itertools.islice(rows, count))
    except csv.Error:
        raise _quote_error() from None


def _long_cell_error() -> DataError:
    return DataError(
        f"A cell is longer than {MAX_CELL_CHARS:,} characters. Cells must hold short "
        "values (a number or a category), not free text; remove that column.")


def _quote_error(line: int | None = None) -> DataError:
    where = f" near line {line}" if line else ""
    return DataError(
        f"The file could not be split into cells{where}: a quote (\") is not closed, is "
        "followed by other text, or a cell is enormous. Check the quotes, or export the "
        "table again as CSV.")


def _sniff(text: str) -> tuple[str, int]:
    """Pick the delimiter and the column count from the first records only."""
    best, unreadable = None, False
    for rank, delimiter in enumerate(_SNIFF_DELIMITERS):
        try:
            rows = [r for r in itertools.islice(_records(text, delimiter), _SNIFF_RECORDS)
                    if r]
        except csv.Error:   # bad quoting or a huge cell with this delimiter
            unreadable = True
            continue
        if not rows:
            continue
        # Prefer a delimiter that splits the first row, then consistent widths, then width.
        width = len(rows[0])
        score = (width > 1, len({len(r) for r in rows}) == 1, width, -rank)
        if best is None or score > best[0]:
            best = (score, delimiter, width)
    # One column left only because the real delimiter failed: report the real cause.
    if best is None or (unreadable and best[2] < 2):
        raise _quote_error()
    return best[1], best[2]


def _check_rectangular(text: str, delimiter: str, width: int) -> None:
    reader = _records(text, delimiter)
    try:
        for row in reader:
            if row and len(row) != width:
                raise DataError(
                    f"Line {reader.line_num} has {len(row)} fields but the first line has "
                    f"{width}. Every row needs the same number of columns: check for an "
                    f"unquoted {_delimiter_name(delimiter)} inside a value or a missing "
                    "separator.")
    except csv.Error:
        raise _quote_error(reader.line_num) from None


def _delimiter_name(delimiter: str) -> str:
    return {",": "comma", ";": "semicolon", "\t": "tab", "|": "'|'"}[delimiter]


def _is_number_text(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _looks_like_header(sample: list[list[str]]) -> bool:
    first = [cell.strip() for cell in sample[0]]
    body = [[cell.strip() for cell in row] for row in sample[1:]]
    first_is_text = [not _is_number_text(c) and c.lower() not in MISSING_TOKENS for c in first]
    if not body:
        return all(first_is_text)
    columns = [[row[j] for row in body if j < len(row)] for j in range(len(first))]
    for is_text, column in zip(first_is_text, columns):
        present = [v for v in column if v.lower() not in MISSING_TOKENS]
        if is_text and present and all(_is_number_text(v) for v in present):
            return True
    text_columns = [(cell, column) for cell, is_text, column
                    in zip(first, first_is_text, columns) if is_text]
    if not text_columns or any(cell in column for cell, column in text_columns):
        return False
    # No first-row text reappears below it. Names if every first cell is text, or if some
    # text column below repeats a few values (categories), as names never do.
    return all(first_is_text) or any(len(set(column)) <= len(column) // 2
                                     for _, column in text_columns)


def _column_names(first_record: list[str], has_header: bool) -> list[str]:
    if not has_header:
        return [f"column {j + 1}" for j in range(len(first_record))]
    columns = [cell.strip() or f"column {j + 1}" for j, cell in enumerate(first_record)]
    duplicates = sorted({c for c in columns if columns.count(c) > 1})
    if duplicates:
        raise DataError(
            f"Duplicate column names: {_preview_list(duplicates)}. Give every column a "
            "unique name.")
    for column in columns:
        if len(column) > MAX_CELL_CHARS:
            raise _long_cell_error()
        if _looks_like_formula(column):
            raise _formula_error(column, "the header")
    return columns


def _find_target(columns: list[str], target: str | None) -> str:
    if target is None:
        return columns[-1]
    if target in columns:
        return target
    folded = [c for c in columns if c.strip().lower() == str(target).strip().lower()]
    if len(folded) == 1:
        return folded[0]
    raise DataError(f"There is no column named {target!r}. The columns are: "
                    f"{_preview_list(columns)}.")


def _preview_list(items: list[str], limit: int = 20) -> str:
    shown = ", ".join(repr(_shorten(i)) for i in items[:limit])
    return shown + (f" (and {len(items) - limit:,} more)" if len(items) > limit else "")


def _shorten(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _parse(text: str, delimiter: str, width: int, has_header: bool,
           target_index: int) -> pd.DataFrame:
    """The whole table; pandas' C parser reads numeric columns as numbers directly."""
    try:
        table = pd.read_csv(io.StringIO(text), sep=delimiter, names=list(range(width)),
                            header=0 if has_header else None, dtype={target_index: str},
                            keep_default_na=False, na_filter=False, engine="c",
                            skip_blank_lines=True, low_memory=False)
    except (pd.errors.ParserError, ValueError, OverflowError, csv.Error):
        raise DataError(
            "The file could not be read as a table. Check that it is a plain CSV with one "
            "record per line and balanced quotes.") from None
    if table.shape[1] != width:
        raise DataError(
            f"The rows do not all have {width} columns. Check the quotes and separators.")
    return table


def _is_numeric(column: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column)


def _distinct_text(column: pd.Series) -> tuple[np.ndarray, pd.Series]:
    """Codes into the distinct stripped cell texts of a text column (fast when repetitive)."""
    codes, uniques = pd.factorize(column.astype(str))
    stripped = pd.Series([u.strip() for u in uniques], dtype=object)
    return codes, stripped


def _drop_missing(table: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    missing = {}
    for column in table.columns:
        values = table[column]
        if _is_numeric(values):
            missing[column] = ~np.isfinite(values.to_numpy(np.float64))
        else:
            codes, text = _distinct_text(values)
            numbers = pd.to_numeric(text, errors="coerce").to_numpy(np.float64)
            is_missing = text.str.lower().isin(MISSING_TOKENS).to_numpy() | np.isinf(numbers)
            missing[column] = is_missing[codes]
    missing = pd.DataFrame(missing)
    complete = ~missing.any(axis=1).to_numpy()
    if not complete.any():
        worst = missing.mean().idxmax()
        raise DataError(
            f"Every row has a missing value (empty, ?, NA, NaN, null, inf, ...): no "
            f"complete rows remain. Column {_shorten(worst)!r} is missing in "
            f"{missing[worst].mean():.0%} of rows; remove such columns or fill the gaps.")
    return table[complete].reset_index(drop=True), int((~complete).sum())


def _looks_like_formula(cell: str) -> bool:
    return cell.startswith(_FORMULA_PREFIXES) and not _is_number_text(cell)


def _formula_error(cell: str, where: str) -> DataError:
    return DataError(
        f"A cell in {where} starts with {cell[0]!r} ({_shorten(cell)!r}), which "
        "spreadsheets run as a formula. Export the values only (no formulas) and upload "
        "again.")


def _checked_text(column: pd.Series, name: str) -> tuple[np.ndarray, pd.Series, pd.Series]:
    """Codes, distinct texts and their numeric values; refuses long and formula cells."""
    codes, text = _distinct_text(column)
    if (text.str.len() > MAX_CELL_CHARS).any():
        raise _long_cell_error()
    numbers = pd.to_numeric(text, errors="coerce")
    formula = text.str.startswith(_FORMULA_PREFIXES) & numbers.isna()
    if formula.any():
        raise _formula_error(text[formula].iloc[0], f"column {_shorten(name)!r}")
    return codes, text, numbers


def _encode_features(table: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    encoded, categorical = [], []
    for column in table.columns:
        values = table[column]
        if _is_numeric(values):
            encoded.append(values.to_numpy(np.float64))
            continue
        codes, text, numbers = _checked_text(values, column)
        if numbers.notna().all():
            encoded.append(numbers.to_numpy(np.float64)[codes])
        else:
            # Ordinal codes in sorted order of the distinct values: CART splits them fine.
            order = pd.factorize(text, sort=True)[0]
            encoded.append(order[codes].astype(np.float64))
            categorical.append(column)
    return np.column_stack(encoded), categorical


def _encode_target(labels: pd.Series, target: str,
                   n_dropped: int) -> tuple[np.ndarray, np.ndarray]:
    codes, text, numbers = _checked_text(labels, target)
    class_of_text, classes = pd.factorize(text, sort=True)   # merges " a" and "a"
    codes = class_of_text[codes]
    if len(classes) > MAX_CLASSES:
        kind = "numbers" if numbers.notna().all() else "values"
        raise DataError(
            f"The target column {_shorten(target)!r} has {len(classes):,} distinct {kind}; "
            f"at most {MAX_CLASSES} classes are supported. It looks like a measurement or "
            "an ID, not a class label: choose another target column.")
    if len(classes) < 2:
        raise DataError(
            f"The target column {_shorten(target)!r} has only one class "
            f"({_shorten(str(classes[0]))!r}); a classifier needs at least two. Choose "
            "another target column or add rows of the other classes.")
    values = pd.to_numeric(pd.Series(classes), errors="coerce")
    if values.notna().all() and (values == np.round(values)).all() \
            and values.abs().max() < 2**53:
        integers = values.to_numpy().astype(np.int64)
        order = np.argsort(integers, kind="stable")
        classes, codes = integers[order], np.argsort(order)[codes]
    else:
        classes = np.array([str(c) for c in classes], dtype=object)
    counts = np.bincount(codes, minlength=len(classes))
    rare = [f"{_shorten(str(c))!r} ({n} row{'s' if n > 1 else ''})"
            for c, n in zip(classes, counts) if n < MIN_ROWS_PER_CLASS]
    if rare:
        more = f" and {len(rare) - 5} more" if len(rare) > 5 else ""
        dropped = (f" ({n_dropped:,} rows with missing values were dropped first)"
                   if n_dropped else "")
        raise DataError(
            f"Too few rows in class {', '.join(rare[:5])}{more}{dropped}: every class needs "
            f"at least {MIN_ROWS_PER_CLASS} rows for the 80/10/10 train/validation/test "
            "split. Add rows, merge rare classes, or remove them.")
    return classes[codes], classes


def _describe_csv(name, X, target, categorical, n_dropped, task, classes, class_names,
                  y) -> str:
    counts = ", ".join(f"{label} {int(np.sum(y == c))}" for c, label in zip(classes, class_names))
    parts = [f"{name}: {X.shape[0]:,} rows, {X.shape[1]} features, target {target!r}."]
    if categorical:
        parts.append(f"{len(categorical)} text column(s) encoded as ordinal codes in sorted "
                     f"order: {_preview_list(categorical, 5)}.")
    if n_dropped:
        parts.append(f"{n_dropped:,} row(s) with missing values dropped.")
    if task == "binary":
        parts.append(f"Binary task: +1 = {class_names[1]!r}, -1 = {class_names[0]!r} "
                     f"({counts}).")
    else:
        parts.append(f"Multiclass task, {len(classes)} classes ({counts}).")
    return " ".join(parts)
