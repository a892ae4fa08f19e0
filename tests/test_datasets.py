"""The 11 shipped datasets: sizes, class counts, encodings, aliases, caching, provenance.

Expected numbers are transcribed from each ``data/<name>/SOURCE.md`` ("Measured" section,
written when the files were staged) or counted with shell tools on the raw files
(heart's per-grade counts: ``grep -v '?' | cut -d, -f14 | sort | uniq -c``).
"""

import gzip
import hashlib
import re

import numpy as np
import pytest

from sdwec import datasets
from sdwec.errors import DataError

CANONICAL = ["breast", "heart", "ionosphere", "sonar", "vehicle", "vote", "waveform", "wdbc",
             "wine", "wpbc", "nsl_kdd"]

# name: (rows, features, binary counts {-1, +1}, multiclass counts)
EXPECTED = {
    "breast": (683, 9, {-1: 444, 1: 239}, {2: 444, 4: 239}),
    "heart": (297, 13, {-1: 160, 1: 137}, {0: 160, 1: 54, 2: 35, 3: 35, 4: 13}),
    "ionosphere": (351, 34, {-1: 126, 1: 225}, {"b": 126, "g": 225}),
    "sonar": (208, 60, {-1: 97, 1: 111}, {"M": 111, "R": 97}),
    "vehicle": (846, 18, {-1: 628, 1: 218}, {"bus": 218, "opel": 212, "saab": 217, "van": 199}),
    "vote": (232, 16, {-1: 124, 1: 108}, {"democrat": 124, "republican": 108}),
    "waveform": (5000, 21, {-1: 3343, 1: 1657}, {0: 1657, 1: 1647, 2: 1696}),
    "wdbc": (569, 30, {-1: 357, 1: 212}, {"B": 357, "M": 212}),
    "wine": (178, 13, {-1: 119, 1: 59}, {1: 59, 2: 71, 3: 48}),
    "wpbc": (194, 33, {-1: 148, 1: 46}, {"N": 148, "R": 46}),
    # normal 67,343; attacks grouped from SOURCE.md's per-name counts:
    # dos = neptune 41214 + smurf 2646 + back 956 + teardrop 892 + pod 201 + land 18;
    # probe = satan 3633 + ipsweep 3599 + portsweep 2931 + nmap 1493;
    # r2l = warezclient 890 + guess_passwd 53 + warezmaster 20 + imap 11 + ftp_write 8
    #       + multihop 7 + phf 4 + spy 2;  u2r = buffer_overflow 30 + rootkit 10
    #       + loadmodule 9 + perl 3.
    "nsl_kdd": (125_973, 41, {-1: 67_343, 1: 58_630},
                {"normal": 67_343, "dos": 45_927, "probe": 11_656, "r2l": 995, "u2r": 52}),
}

# Which original labels the binary view maps to +1 (the cards' choices).
POSITIVE = {"breast": {4}, "heart": {1, 2, 3, 4}, "ionosphere": {"g"}, "sonar": {"M"},
            "vehicle": {"bus"}, "vote": {"republican"}, "waveform": {0}, "wdbc": {"M"},
            "wine": {1}, "wpbc": {"R"}, "nsl_kdd": {"dos", "probe", "r2l", "u2r"}}


def test_names_are_the_eleven_canonical_names_in_order():
    assert datasets.names() == CANONICAL


@pytest.mark.parametrize("name", CANONICAL)
def test_every_dataset_offers_both_tasks(name):
    assert datasets.tasks(name) == ("binary", "multiclass")


@pytest.mark.parametrize("name", CANONICAL)
@pytest.mark.parametrize("task", ["binary", "multiclass"])
def test_rows_features_and_class_counts(name, task):
    rows, n_features, binary_counts, multiclass_counts = EXPECTED[name]
    ds = datasets.load(name, task=task)
    assert ds.name == name and ds.task == task
    assert ds.X.shape == (rows, n_features)
    assert ds.y.shape == (rows,)
    expected = binary_counts if task == "binary" else multiclass_counts
    assert ds.class_counts() == dict(sorted(expected.items()))
    assert list(ds.classes) == sorted(expected)


@pytest.mark.parametrize("name", CANONICAL)
def test_features_are_finite_float64_with_unique_names(name):
    ds = datasets.load(name, task="binary")
    assert ds.X.dtype == np.float64
    assert np.isfinite(ds.X).all()
    assert len(ds.feature_names) == ds.X.shape[1] == ds.n_features
    assert len(set(ds.feature_names)) == len(ds.feature_names)


@pytest.mark.parametrize("name", CANONICAL)
def test_binary_view_maps_the_documented_positive_class_to_plus_one(name):
    binary = datasets.load(name, task="binary")
    multi = datasets.load(name, task="multiclass")
    assert binary.y.dtype == np.int64
    assert set(np.unique(binary.y)) == {-1, 1}
    assert list(binary.classes) == [-1, 1]
    expected = np.where(np.isin(multi.y, list(POSITIVE[name])), 1, -1)
    np.testing.assert_array_equal(binary.y, expected)
    np.testing.assert_array_equal(binary.X, multi.X)
    assert multi.positive_label is None and binary.positive_label is not None
    assert len(binary.class_names) == 2 and len(multi.class_names) == len(multi.classes)


@pytest.mark.parametrize("name", CANONICAL)
def test_description_is_one_paragraph_with_the_row_count(name):
    ds = datasets.load(name, task="binary")
    assert "\n" not in ds.description
    assert str(EXPECTED[name][0]) in ds.description


def test_vote_encodes_yes_as_one_and_no_as_zero():
    # First complete row of house-votes-84.data:
    # democrat,n,y,y,n,y,y,n,n,n,n,n,n,y,y,y,y
    ds = datasets.load("vote", task="multiclass")
    assert ds.y[0] == "democrat"
    votes = "n,y,y,n,y,y,n,n,n,n,n,n,y,y,y,y".split(",")
    np.testing.assert_array_equal(ds.X[0], [1.0 if v == "y" else 0.0 for v in votes])


def test_nsl_kdd_categorical_columns_are_sorted_ordinal_codes():
    # First KDDTrain+ line: 0,tcp,ftp_data,SF,491,0,... normal. Sorted categories:
    # protocol icmp < tcp < udp -> tcp = 1; 70 services, ftp_data is the 21st in
    # code-point order (IRC X11 Z39_50 aol auth bgp courier csnet_ns ctf daytime discard
    # domain domain_u echo eco_i ecr_i efs exec finger ftp ftp_data) -> 20;
    # flags OTH REJ RSTO RSTOS0 RSTR S0 S1 S2 S3 SF SH -> SF = 9.
    ds = datasets.load("NSL-KDD", task="multiclass")
    names = ds.feature_names
    assert names[:4] == ["duration", "protocol_type", "service", "flag"]
    np.testing.assert_array_equal(ds.X[0, :5], [0, 1, 20, 9, 491])
    assert ds.y[0] == "normal"
    assert sorted(np.unique(ds.X[:, 1])) == [0, 1, 2]
    assert len(np.unique(ds.X[:, 2])) == 70
    assert len(np.unique(ds.X[:, 3])) == 11
    assert "difficulty" not in " ".join(names)


def test_identifier_columns_are_dropped():
    # breast's first row: 1000025,5,1,1,1,2,1,3,1,1,2 -> the sample id is not a feature.
    breast = datasets.load("breast", task="multiclass")
    np.testing.assert_array_equal(breast.X[0], [5, 1, 1, 1, 2, 1, 3, 1, 1])
    # wpbc's first row starts 119513,N,31,18.02: the ID goes, time (31) stays first.
    wpbc = datasets.load("wpbc", task="multiclass")
    assert wpbc.feature_names[0] == "time"
    np.testing.assert_array_equal(wpbc.X[0, :2], [31, 18.02])
    # wdbc: ID, diagnosis, then 30 features.
    assert datasets.load("wdbc").feature_names[0] == "mean_radius"


@pytest.mark.parametrize("alias, canonical", [
    ("heartC", "heart"), ("HEARTC", "heart"), ("heart_cleveland", "heart"),
    ("sonarP", "sonar"), ("vehicleP", "vehicle"), ("voteP", "vote"), ("wdbcP", "wdbc"),
    ("WPBCp", "wpbc"), ("NSL-KDD", "nsl_kdd"), ("nsl-kdd", "nsl_kdd"), ("nsl_kdd", "nsl_kdd"),
    ("  Breast ", "breast"), ("Ionosphere", "ionosphere"), ("Waveform", "waveform"),
    ("WINE", "wine"),
])
def test_aliases_resolve_case_insensitively(alias, canonical):
    assert datasets.canonical_name(alias) == canonical
    assert datasets.load(alias, task="binary").name == canonical


@pytest.mark.parametrize("name, paper", [("heart", "heartC"), ("nsl_kdd", "NSL-KDD"),
                                         ("wine", "wine"), ("wpbc", "wpbcP")])
def test_paper_names(name, paper):
    assert datasets.paper_name(name) == paper


def test_unknown_name_lists_the_valid_names():
    with pytest.raises(ValueError) as info:
        datasets.load("iris")
    for name in CANONICAL:
        assert name in str(info.value)
    with pytest.raises(ValueError):
        datasets.tasks("iris")


def test_unknown_task_is_refused():
    with pytest.raises(ValueError, match="binary, multiclass"):
        datasets.load("sonar", task="regression")


def test_loading_is_deterministic_and_cached():
    first = datasets.load("vehicle", task="multiclass")
    datasets._load_cached.cache_clear()
    datasets._read_raw.cache_clear()
    second = datasets.load("vehicle", task="multiclass")
    np.testing.assert_array_equal(first.X, second.X)
    np.testing.assert_array_equal(first.y, second.y)
    assert first.feature_names == second.feature_names
    third = datasets.load("vehiclep", task="multiclass")
    assert third.X is second.X          # served from the cache, not re-parsed


def test_callers_cannot_corrupt_the_cache():
    ds = datasets.load("wine", task="binary")
    with pytest.raises(ValueError):
        ds.X[0, 0] = 99.0
    with pytest.raises(ValueError):
        ds.y[0] = 5
    with pytest.raises(ValueError):
        ds.classes[0] = 7
    ds.feature_names.append("junk")
    assert datasets.load("wine", task="binary").feature_names[-1] == "proline"
    with pytest.raises(AttributeError):
        ds.X = np.zeros((2, 2))


def test_data_error_is_a_value_error():
    assert issubclass(DataError, ValueError)


def _source_table(name):
    """(file, bytes, sha256, uncompressed?) rows of the table in data/<name>/SOURCE.md."""
    text = (datasets.DATA_DIR / name / "SOURCE.md").read_text()
    pattern = r"^\| `([^`]+)`( \(uncompressed content\))? \| (\d+) \| `([0-9a-f]{64})` \|$"
    return re.findall(pattern, text, re.M)


@pytest.mark.parametrize("name", CANONICAL)
def test_shipped_files_match_their_source_checksums(name):
    entries = _source_table(name)
    assert entries, f"no checksum table in data/{name}/SOURCE.md"
    for file_name, uncompressed, size, sha256 in entries:
        if uncompressed:   # NSL-KDD: the table also pins the gunzipped content
            data = gzip.decompress((datasets.DATA_DIR / name / f"{file_name}.gz").read_bytes())
        else:
            data = (datasets.DATA_DIR / name / file_name).read_bytes()
        assert len(data) == int(size), file_name
        assert hashlib.sha256(data).hexdigest() == sha256, file_name


def test_every_dataset_has_a_card_entry():
    card = (datasets.DATA_DIR / "README.md").read_text()
    for name in CANONICAL:
        assert f"## {name}" in card


# ---- fingerprints (the disk cache key of an uploaded dataset's pool) --------------------


def _copy(ds, **changes):
    """A Dataset like ``ds`` with some fields replaced (arrays copied, so writable)."""
    fields = dict(name=ds.name, task=ds.task, X=np.array(ds.X), y=np.array(ds.y),
                  feature_names=list(ds.feature_names), classes=ds.classes,
                  description=ds.description)
    return datasets.Dataset(**{**fields, **changes})


def test_fingerprint_is_a_hash_of_the_data_not_of_the_name():
    ds = datasets.load("wine", task="multiclass")
    fingerprint = ds.fingerprint
    assert re.fullmatch(r"[0-9a-f]{64}", fingerprint)
    assert datasets.load("wine", task="multiclass").fingerprint == fingerprint
    assert _copy(ds, name="renamed.csv", description="other").fingerprint == fingerprint
    assert _copy(ds, y=ds.y.astype(np.int32)).fingerprint == fingerprint  # same values


def test_fingerprint_changes_with_any_cell_label_name_or_task():
    ds = datasets.load("wine", task="multiclass")
    X = np.array(ds.X)
    X[5, 3] += 1e-9
    y = np.array(ds.y)
    y[0] = 3 if y[0] != 3 else 2
    text_y = np.array([str(v) for v in ds.y], dtype=object)
    changed = [
        _copy(ds, X=X),
        _copy(ds, y=y),
        _copy(ds, y=text_y),  # "1" is not 1
        _copy(ds, feature_names=["x", *ds.feature_names[1:]]),
        _copy(ds, task="binary"),
        _copy(ds, X=ds.X[:, ::-1].copy()),
    ]
    prints = {ds.fingerprint, *(c.fingerprint for c in changed)}
    assert len(prints) == 1 + len(changed)


def test_fingerprint_follows_writable_arrays():
    ds = _copy(datasets.load("sonar"))
    before = ds.fingerprint
    ds.X[0, 0] += 1.0  # a caller's own writable array: the hash is not kept
    assert ds.fingerprint != before
