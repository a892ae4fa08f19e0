"""The paper's 11 datasets, read offline from ``data/`` (``sdwec/data/`` once installed).

Every choice made while preprocessing (rows dropped, encodings, which class is +1, how the
multi-class sets were binarised) is documented next to the code below and in ``data/README.md``.

Two views are offered for every dataset:

* ``task="binary"``: labels in {-1, +1} (int64); the positive class is named in the card.
* ``task="multiclass"``: the dataset's own labels (int64 or str), ``classes`` sorted.
  For two-class datasets this is the same split with the original labels.

A user's own CSV file is read by :func:`from_csv` (from :mod:`sdwec.csv_loader`, importable
from here with its limits and its preview :func:`inspect_csv`) into the same :class:`Dataset`.

Examples
--------
>>> from sdwec import datasets
>>> ds = datasets.load("sonarP", task="binary")
>>> ds.X.shape, ds.classes.tolist()
((208, 60), [-1, 1])
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from sdwec._dataset import TASKS, Dataset, read_only
from sdwec._util import plain
from sdwec.csv_loader import (
    MAX_CELL_CHARS,
    MAX_CELLS,
    MAX_CLASSES,
    MAX_FEATURES,
    MAX_ROWS,
    MAX_UPLOAD_BYTES,
    MIN_ROWS_PER_CLASS,
    MISSING_STRATEGIES,
    MISSING_TOKENS,
    CsvPreview,
    count_lines,
    from_csv,
    inspect_csv,
)
from sdwec.errors import DataError

__all__ = [
    "Dataset", "names", "tasks", "load", "from_csv", "inspect_csv", "CsvPreview",
    "canonical_name", "paper_name", "DATA_DIR", "DATA_ENV", "data_dir", "TASKS",
    "MAX_UPLOAD_BYTES", "MAX_FEATURES", "MAX_CLASSES", "MIN_ROWS_PER_CLASS", "MAX_CELL_CHARS",
    "MISSING_TOKENS", "MISSING_STRATEGIES", "MAX_ROWS", "MAX_CELLS",
    "count_lines",
]

#: Environment variable naming another folder of the shipped datasets.
DATA_ENV = "SDWEC_DATA_DIR"
# An installed wheel carries the datasets inside the package (sdwec/data/, mapped from the
# checkout's data/ at build time: pyproject.toml); a checkout keeps them at its top level.
# The package's own folder comes first, so that an installed copy never reads a data/ folder
# that happens to sit beside site-packages.
_PACKAGED_DIR = Path(__file__).resolve().parent / "data"
_CHECKOUT_DIR = Path(__file__).resolve().parent.parent / "data"
#: Default folder of the shipped datasets: the installed package's ``sdwec/data/``, or the
#: checkout's ``data/``.
DATA_DIR = _PACKAGED_DIR if _PACKAGED_DIR.is_dir() else _CHECKOUT_DIR


def data_dir() -> Path:
    """Folder of the shipped datasets: ``$SDWEC_DATA_DIR`` if set, else :data:`DATA_DIR`."""
    env = os.environ.get(DATA_ENV)
    return Path(env).expanduser() if env else DATA_DIR


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
    # map, not replace: pandas 2.x warns that replace's silent downcast to int will go.
    votes = raw.iloc[:, 1:].apply(lambda column: column.map({"y": 1, "n": 0}))
    if votes.isna().any(axis=None):
        raise DataError("vote: a vote other than y, n or ? in house-votes-84.data")
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
    return replace(dataset, feature_names=list(dataset.feature_names))


@functools.lru_cache(maxsize=None)
def _read_raw(key: str) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    folder = data_dir() / key
    if not folder.is_dir():
        where = (f"{DATA_ENV}={os.environ[DATA_ENV]!r}, which has" if os.environ.get(DATA_ENV)
                 else f"{folder.parent}, which has")
        raise DataError(
            f"the shipped dataset {key!r} is missing: {where} no {key}/ folder. Unset "
            f"{DATA_ENV} to read the datasets installed with sdwec, point it at a folder "
            f"holding the shipped datasets (a checkout's data/), or reinstall sdwec.")
    features, labels = _SPECS[key].read(folder)
    X = read_only(np.ascontiguousarray(features.to_numpy(np.float64)))
    return X, read_only(labels), tuple(features.columns)


@functools.lru_cache(maxsize=None)
def _load_cached(key: str, task: str) -> Dataset:
    spec = _SPECS[key]
    X, labels, feature_names = _read_raw(key)
    if task == "binary":
        is_positive = np.isin(labels, list(spec.positive))
        y = np.where(is_positive, 1, -1).astype(np.int64)
        classes = np.array([-1, 1], dtype=np.int64)
        class_names = (spec.negative_text, spec.positive_text)
        positive = plain(next(iter(spec.positive))) if len(spec.positive) == 1 \
            else spec.positive_text
    else:
        y = labels
        classes = np.unique(labels)
        class_names = tuple(spec.label_names.get(plain(c), str(c)) for c in classes)
        positive = None
    counts = ", ".join(f"{label} {int(np.sum(y == c))}" for c, label in zip(classes, class_names))
    view = ("binary view: +1 = " + spec.positive_text + ", -1 = " + spec.negative_text
            if task == "binary" else f"multiclass view: {len(classes)} classes")
    description = (f"{spec.title} (paper: {spec.paper_name}). {spec.blurb} "
                   f"{X.shape[0]} rows, {X.shape[1]} features; {view} ({counts}).")
    return Dataset(key, task, X, read_only(y), list(feature_names), read_only(classes),
                   description, class_names, positive)


def _text_labels(labels: pd.Series) -> np.ndarray:
    """String labels as an object array of stripped Python str."""
    return np.array([str(v).strip() for v in labels], dtype=object)
