"""The CSV loader for the user's own data: every failure gives a DataError saying what to fix.

The hostile corpus lives in tests/fixtures/csv (written by make_corpus.py); manifest.json
says what the loader must do with each file. The file over the upload limit is made here,
in a temporary directory, as a sparse file: it takes no disk space.
"""

import io
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdwec import csv_loader, datasets
from sdwec.errors import DataError

CORPUS = Path(__file__).resolve().parent / "fixtures" / "csv"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text())
HOSTILE = sorted(f for f, e in MANIFEST.items() if "error" in e)
VALID = sorted(f for f, e in MANIFEST.items() if "ok" in e)
ROOT = Path(__file__).resolve().parent.parent


def csv_bytes(header, rows):
    lines = ([",".join(header)] if header else []) + [",".join(map(str, r)) for r in rows]
    return ("\n".join(lines) + "\n").encode()


def balanced_rows(n=40, n_classes=2):
    """n rows (i, i mod 7, class) with classes c0, c1, ... in turn."""
    return [(i, i % 7, f"c{i % n_classes}") for i in range(n)]


# ---- the corpus ------------------------------------------------------------------------

def test_corpus_has_at_least_twenty_hostile_files():
    assert len(HOSTILE) >= 20
    for name in MANIFEST:
        assert (CORPUS / name).is_file(), name


@pytest.mark.parametrize("file_name", HOSTILE)
def test_hostile_file_gives_a_data_error_with_a_clear_message(file_name):
    expected = MANIFEST[file_name]["error"]
    with pytest.raises(DataError) as info:
        csv_loader.from_csv(CORPUS / file_name)
    assert expected in str(info.value)
    assert "Traceback" not in str(info.value)


@pytest.mark.parametrize("file_name", HOSTILE)
def test_hostile_file_fails_the_same_way_as_bytes_and_as_an_upload(file_name):
    data = (CORPUS / file_name).read_bytes()
    upload = io.BytesIO(data)
    upload.name, upload.size = file_name, len(data)      # what Streamlit's UploadedFile has
    messages = set()
    for source in (data, upload):
        with pytest.raises(DataError) as info:
            csv_loader.from_csv(source)
        messages.add(str(info.value))
    assert len(messages) == 1


@pytest.mark.parametrize("file_name", VALID)
def test_valid_tricky_file_loads(file_name):
    expected = MANIFEST[file_name]["ok"]
    ds = csv_loader.from_csv(CORPUS / file_name)
    assert ds.name == file_name
    assert ds.X.shape == (expected["rows"], expected["features"])
    assert ds.task == expected["task"]
    assert np.isfinite(ds.X).all() and ds.X.dtype == np.float64
    shown = list(ds.class_names)
    assert shown == [str(c) for c in expected["classes"]]
    if expected["task"] == "binary":
        assert list(ds.classes) == [-1, 1]
    else:
        assert list(ds.classes) == expected["classes"]
    if "dropped" in expected:
        assert f"{expected['dropped']} row(s) with missing values dropped" in ds.description


# ---- each kind of bad file, with its own small input -----------------------------------

def test_empty_file(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_bytes(b"")
    with pytest.raises(DataError, match="empty"):
        csv_loader.from_csv(path)


def test_undecodable_bytes():
    with pytest.raises(DataError, match="not UTF-8"):
        csv_loader.from_csv(b"a,b,label\n1,\xff\xfe\xfa,x\n")


def test_binary_file_is_not_a_csv():
    with pytest.raises(DataError, match="binary data"):
        csv_loader.from_csv(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")


def test_single_column():
    with pytest.raises(DataError, match="single column"):
        csv_loader.from_csv(b"label\na\nb\na\n")


def test_target_column_missing_lists_the_columns():
    data = csv_bytes(["height", "weight", "label"], balanced_rows())
    with pytest.raises(DataError) as info:
        csv_loader.from_csv(data, target="species")
    message = str(info.value)
    assert "'species'" in message
    for column in ("height", "weight", "label"):
        assert repr(column) in message


def test_only_one_class():
    data = csv_bytes(["a", "b", "label"], [(i, i % 3, "same") for i in range(30)])
    with pytest.raises(DataError, match="only one class"):
        csv_loader.from_csv(data)


def test_a_class_with_fewer_than_ten_rows():
    rows = balanced_rows(30) + [(i, i, "rare") for i in range(9)]
    with pytest.raises(DataError, match=r"'rare' \(9 rows\).*at least 10 rows"):
        csv_loader.from_csv(csv_bytes(["a", "b", "label"], rows))
    # Ten rows are enough.
    rows = balanced_rows(30) + [(i, i, "rare") for i in range(10)]
    assert csv_loader.from_csv(csv_bytes(["a", "b", "label"], rows)).class_counts()["rare"] == 10


def test_sparse_file_over_the_real_upload_limit_is_refused_before_reading(tmp_path):
    path = tmp_path / "huge.csv"
    with path.open("wb") as handle:
        handle.truncate(csv_loader.MAX_UPLOAD_BYTES + 1)   # sparse: no disk used
    with pytest.raises(DataError, match=r"larger than the 200,000,000 byte \(200 MB\) limit"):
        csv_loader.from_csv(path)


def test_upload_over_the_limit_is_refused_without_reading_it():
    class Upload(io.BytesIO):
        size = csv_loader.MAX_UPLOAD_BYTES + 1

        def read(self, *args):
            raise AssertionError("the loader read a file that is too large")

    with pytest.raises(DataError, match=r"200,000,000 byte \(200 MB\) limit"):
        csv_loader.from_csv(Upload(b"a,b\n1,2\n"))


def test_injectable_byte_limit():
    data = csv_bytes(["a", "b", "label"], balanced_rows())
    assert csv_loader.from_csv(data, max_bytes=len(data)).n_samples == 40
    with pytest.raises(DataError, match="limit"):
        csv_loader.from_csv(data, max_bytes=len(data) - 1)
    with pytest.raises(DataError, match="limit"):
        csv_loader.from_csv(io.BytesIO(data), max_bytes=len(data) - 1)   # no .size attribute


def test_too_many_features_is_refused_before_the_full_parse(monkeypatch):
    def parse_everything(*args):
        raise AssertionError("the whole file was parsed")

    monkeypatch.setattr(csv_loader, "_parse", parse_everything)
    monkeypatch.setattr(csv_loader, "_check_rectangular", parse_everything)
    header = [f"f{j}" for j in range(csv_loader.MAX_FEATURES + 1)] + ["label"]
    rows = [[j % 3 for j in range(csv_loader.MAX_FEATURES + 1)] + [i % 2] for i in range(3)]
    with pytest.raises(DataError, match="1,001 feature columns; at most 1,000"):
        csv_loader.from_csv(csv_bytes(header, rows))


def test_feature_limit_is_inclusive_and_injectable():
    header = ["a", "b", "c", "label"]
    rows = [(i, i % 3, i % 5, i % 2) for i in range(40)]
    assert csv_loader.from_csv(csv_bytes(header, rows), max_features=3).n_features == 3
    with pytest.raises(DataError, match="3 feature columns; at most 2"):
        csv_loader.from_csv(csv_bytes(header, rows), max_features=2)


def test_all_constant_features():
    data = csv_bytes(["a", "b", "label"], [(5, "x", f"c{i % 2}") for i in range(40)])
    with pytest.raises(DataError, match="one single value"):
        csv_loader.from_csv(data)


def test_too_few_complete_rows_after_dropping_missing_values():
    rows = [(i if i < 8 else "?", i % 3, f"c{i % 2}") for i in range(40)]
    with pytest.raises(DataError, match="32 rows with missing values were dropped first"):
        csv_loader.from_csv(csv_bytes(["a", "b", "label"], rows))


# ---- what a successful load does ---------------------------------------------------------

def test_auto_task_two_classes_maps_the_second_sorted_class_to_plus_one():
    rows = [(i, i % 7, "yes" if i % 4 == 0 else "no") for i in range(40)]
    ds = csv_loader.from_csv(csv_bytes(["a", "b", "label"], rows))
    assert ds.task == "binary"
    assert ds.positive_label == "yes" and ds.class_names == ("no", "yes")
    np.testing.assert_array_equal(ds.y, [1 if i % 4 == 0 else -1 for i in range(40)])
    assert ds.y.dtype == np.int64


def test_auto_task_three_classes_is_multiclass_with_original_labels():
    ds = csv_loader.from_csv(csv_bytes(["a", "b", "label"], balanced_rows(45, 3)))
    assert ds.task == "multiclass"
    assert list(ds.classes) == ["c0", "c1", "c2"]
    assert ds.class_counts() == {"c0": 15, "c1": 15, "c2": 15}
    assert ds.positive_label is None


def test_integer_labels_stay_integers_sorted_numerically():
    rows = [(i, i % 7, [2, 10, 1][i % 3]) for i in range(45)]
    ds = csv_loader.from_csv(csv_bytes(["a", "b", "label"], rows))
    assert ds.y.dtype == np.int64
    assert list(ds.classes) == [1, 2, 10]


def test_explicit_tasks():
    data = csv_bytes(["a", "b", "label"], balanced_rows(40))
    multi = csv_loader.from_csv(data, task="multiclass")
    assert multi.task == "multiclass" and list(multi.classes) == ["c0", "c1"]
    with pytest.raises(DataError, match="Binary classification needs two classes"):
        csv_loader.from_csv(csv_bytes(["a", "b", "label"], balanced_rows(45, 3)), task="binary")
    with pytest.raises(ValueError):
        csv_loader.from_csv(data, task="regression")


def test_target_chosen_by_name_case_insensitively():
    rows = [(f"c{i % 2}", i, i % 5) for i in range(40)]
    ds = csv_loader.from_csv(csv_bytes(["Species", "x", "y"], rows), target="species")
    assert ds.feature_names == ["x", "y"]
    assert ds.class_names == ("c0", "c1")


def test_categorical_features_are_sorted_ordinal_codes():
    colours = ["red", "blue", "green"]
    rows = [(colours[i % 3], i, f"c{i % 2}") for i in range(40)]
    ds = csv_loader.from_csv(csv_bytes(["colour", "n", "label"], rows))
    # sorted: blue 0, green 1, red 2
    np.testing.assert_array_equal(ds.X[:3, 0], [2, 0, 1])
    assert "colour" in ds.description


def test_missing_values_drop_rows_and_are_reported():
    rows = balanced_rows(40) + [("", 1, "c0"), ("NA", 2, "c1"), (3, "?", "c0"), (4, 5, "NaN")]
    ds = csv_loader.from_csv(csv_bytes(["a", "b", "label"], rows))
    assert ds.n_samples == 40
    assert "4 row(s) with missing values dropped" in ds.description


def test_header_detection():
    numbers = [(i, i * 2, i % 2) for i in range(40)]
    with_header = csv_loader.from_csv(csv_bytes(["x", "y", "label"], numbers))
    without = csv_loader.from_csv(csv_bytes(None, numbers))
    assert with_header.feature_names == ["x", "y"] and with_header.n_samples == 40
    assert without.feature_names == ["column 1", "column 2"] and without.n_samples == 40
    # All-text data without a header: the first row's values reappear below.
    votes = [("y" if i % 3 else "n", "n" if i % 2 else "y", f"party{i % 2}") for i in range(40)]
    assert csv_loader.from_csv(csv_bytes(None, votes)).n_samples == 40
    # Numeric column names (as pandas writes a default index) above a category column.
    rows = [(i, i % 5, "alpha" if i % 2 else "beta") for i in range(40)]
    named = csv_loader.from_csv(csv_bytes(["0", "1", "label"], rows))
    assert named.feature_names == ["0", "1"] and named.n_samples == 40
    # A text ID column that never repeats is not taken for a header.
    ids = [(f"id{i:03d}", i % 5, i % 2) for i in range(40)]
    assert csv_loader.from_csv(csv_bytes(None, ids)).n_samples == 40


def test_header_can_be_forced():
    numbers = [(i, i * 2, i % 2) for i in range(40)]
    # Forced on: the first data row "0,0,0" becomes the column names.
    with pytest.raises(DataError, match="Duplicate column names: '0'"):
        csv_loader.from_csv(csv_bytes(None, numbers), header=True)
    # Forced off: the header row becomes data, so 'label' is a class with one row.
    with pytest.raises(DataError, match=r"'label' \(1 row\)"):
        csv_loader.from_csv(csv_bytes(["x", "y", "label"], numbers), header=False)


def test_name_defaults():
    data = csv_bytes(["a", "b", "label"], balanced_rows())
    assert csv_loader.from_csv(data).name == "your data"
    assert csv_loader.from_csv(data, name="trial").name == "trial"
    upload = io.BytesIO(data)
    upload.name = "/some/dir/upload.csv"
    assert csv_loader.from_csv(upload).name == "upload.csv"


def test_result_arrays_are_read_only():
    ds = csv_loader.from_csv(csv_bytes(["a", "b", "label"], balanced_rows()))
    with pytest.raises(ValueError):
        ds.X[0, 0] = 1.0


def test_negative_and_signed_numbers_are_not_formulas():
    rows = [(f"{-i}", f"+{i}.5", f"c{i % 2}") for i in range(40)]
    ds = csv_loader.from_csv(csv_bytes(["a", "b", "label"], rows))
    np.testing.assert_array_equal(ds.X[:2], [[0, 0.5], [-1, 1.5]])


def test_formula_text_never_reaches_a_dataset():
    rows = balanced_rows() + [(1, "=1+1", "c0")]
    with pytest.raises(DataError, match="formula"):
        csv_loader.from_csv(csv_bytes(["a", "b", "label"], rows))


def test_cell_over_the_csv_module_field_limit(tmp_path):
    path = tmp_path / "giant_cell.csv"
    path.write_bytes(b"a,b,label\n" + b"1,2,c0\n" * 20 + b"1," + b"x" * 200_000 + b",c1\n")
    with pytest.raises(DataError, match="could not be split into cells"):
        csv_loader.from_csv(path)


def test_missing_path():
    with pytest.raises(DataError, match="No file"):
        csv_loader.from_csv("/nonexistent/file.csv")


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400))
def test_arbitrary_bytes_give_a_dataset_or_a_data_error(data):
    try:
        ds = csv_loader.from_csv(data)
    except DataError as error:
        assert str(error)
    else:
        assert np.isfinite(ds.X).all()


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.sampled_from(["1", "-2.5", "a", "", "?", "=x", '"', "b,c", "NaN",
                                          "inf", " ", "10", "y"]),
                         min_size=1, max_size=5), min_size=1, max_size=30))
def test_arbitrary_csv_like_text_gives_a_dataset_or_a_data_error(table):
    text = "\n".join(",".join(row) for row in table)
    try:
        ds = csv_loader.from_csv(text.encode())
    except DataError as error:
        assert str(error)
    else:
        assert np.isfinite(ds.X).all() and ds.n_samples >= 2 * csv_loader.MIN_ROWS_PER_CLASS


# ---- preview, excluded columns, drop or impute -----------------------------------------

def gappy_rows(n=300):
    """n rows (id, x, note, label): id 1000, 1001, ... unique; x continuous and unique;
    note empty in the rows with i % 5 in {0, 1, 2} (3/5 of them), else 'a' or 'b'."""
    rows = []
    for i in range(n):
        note = "" if i % 5 < 3 else ("a" if i % 2 else "b")
        rows.append((1000 + i, f"{np.sin(i) + i / 1000:.6f}", note, f"c{i % 2}"))
    return rows


def test_preview_flags_text_and_integer_ids_not_continuous_columns():
    shuffled = np.random.default_rng(0).permutation(40)
    rows = [(f"p{i:03d}", 7 * i + 3, 100 + shuffled[i], (i * 37) % 101 * 3 + 1000,
             f"{0.5 + i * 0.37:.3f}", i % 4, f"{i % 3}.5", f"c{i % 2}") for i in range(40)]
    header = ["code", "number", "ticket", "price", "length", "count", "half", "label"]
    preview = csv_loader.inspect_csv(csv_bytes(header, rows))
    table = preview.columns.set_index("column")
    # Unique per row and text, integers in file order, or a full range in any order (100..139).
    assert preview.likely_ids == ["code", "number", "ticket"]
    # Unique but scattered integers (a price), all-different real numbers (a measurement),
    # repeated values, the target: not IDs.
    assert table["distinct"]["price"] == 40
    assert not table.loc[["price", "length", "count", "half", "label"], "likely_id"].any()
    assert table["kind"].to_dict() == {
        "code": "categorical", "number": "numeric", "ticket": "numeric", "price": "numeric",
        "length": "numeric", "count": "numeric", "half": "numeric", "label": "categorical"}
    assert table["distinct"].to_dict() == {
        "code": 40, "number": 40, "ticket": 40, "price": 40, "length": 40, "count": 4,
        "half": 3, "label": 2}
    assert table["role"].to_dict()["label"] == "target"


def test_a_unique_column_with_a_gap_is_not_flagged():
    rows = [("" if i == 0 else i, i % 3, f"c{i % 2}") for i in range(40)]
    preview = csv_loader.inspect_csv(csv_bytes(["id", "x", "label"], rows))
    assert preview.likely_ids == []


def test_preview_counts_gaps_and_the_rows_each_choice_affects():
    rows = gappy_rows(300)
    rows[8] = (rows[8][0], "?", rows[8][2], rows[8][3])        # 8 % 5 = 3: has a note
    rows[11] = (rows[11][0], rows[11][1], rows[11][2], "NA")   # 11 % 5 = 1: no note
    preview = csv_loader.inspect_csv(csv_bytes(["id", "x", "note", "label"], rows))
    assert preview.n_rows == 300 and preview.target == "label"
    assert preview.columns.set_index("column")["missing"].to_dict() == {
        "id": 0, "x": 1, "note": 180, "label": 1}
    # Dropping: the 180 rows without a note (row 11 among them) and row 8 (no x).
    assert preview.rows_dropped == 181
    assert preview.rows_without_target == 1
    # Imputing fills the gaps of the rows that keep their label: 179 notes and 1 x.
    assert preview.cells_imputed == {"x": 1, "note": 179}
    without_note = preview.with_exclude(["note"])
    assert without_note.rows_dropped == 2 and without_note.cells_imputed == {"x": 1}
    assert without_note.exclude == ("note",)
    assert without_note.columns.set_index("column")["role"]["note"] == "excluded"
    assert preview.exclude == ()   # with_exclude returns a new preview


def test_the_preview_predicts_what_the_loader_does():
    rows = gappy_rows(300)
    data = csv_bytes(["id", "x", "note", "label"], rows)
    preview = csv_loader.inspect_csv(data, exclude=["id"])
    dropped = csv_loader.from_csv(data, exclude=["id"])
    assert dropped.n_samples == preview.n_rows - preview.rows_dropped == 120
    imputed = csv_loader.from_csv(data, exclude=["id"], missing="impute")
    assert imputed.n_samples == preview.n_rows - preview.rows_without_target == 300
    for name in VALID:
        preview = csv_loader.inspect_csv(CORPUS / name)
        assert csv_loader.from_csv(CORPUS / name).n_samples == \
            preview.n_rows - preview.rows_dropped, name


#: Hostile files the preview can still show: what is wrong is in the cells or the classes,
#: which the user may fix on the page (exclude a column, impute, choose another target).
PREVIEWABLE = {"constant_features.csv", "formula_cmd.csv", "formula_in_target.csv",
               "formula_plus_minus.csv", "infinite_values.csv", "long_cell.csv",
               "missing_in_every_row.csv", "nan_everywhere.csv", "nine_rows_in_a_class.csv",
               "one_class.csv", "one_row_per_class.csv", "target_10000_values.csv"}


@pytest.mark.parametrize("file_name", HOSTILE)
def test_the_preview_refuses_unreadable_files_with_the_loaders_message(file_name):
    # The preview shares the parser: a file it cannot read as a table is refused with the
    # loader's own message; the learning checks are left to the loader.
    with pytest.raises(DataError) as loading:
        csv_loader.from_csv(CORPUS / file_name)
    if file_name in PREVIEWABLE:
        preview = csv_loader.inspect_csv(CORPUS / file_name)
        assert preview.n_rows > 0 and len(preview.columns) >= 2
    else:
        with pytest.raises(DataError) as previewing:
            csv_loader.inspect_csv(CORPUS / file_name)
        assert str(previewing.value) == str(loading.value)


def test_drop_and_impute_row_counts_and_descriptions():
    data = csv_bytes(["id", "x", "note", "label"], gappy_rows(300))
    dropped = csv_loader.from_csv(data, exclude="id")
    assert dropped.X.shape == (120, 2) and dropped.feature_names == ["x", "note"]
    assert "180 row(s) with missing values dropped, of 300 (missing cells: 'note' 180)" \
        in dropped.description
    assert "Excluded column(s), not used as features: 'id'" in dropped.description
    imputed = csv_loader.from_csv(data, exclude="id", missing="impute")
    assert imputed.X.shape == (300, 2) and np.isfinite(imputed.X).all()
    # 'a' and 'b' 60 times each: the tie goes to the first in sorted order, 'a'.
    assert "180 missing cell(s) imputed in 1 column(s): 'note' 180 with the most frequent " \
           "value 'a'" in imputed.description
    assert "dropped" not in imputed.description


def test_imputed_values_are_the_median_and_the_most_frequent_value():
    # a: 1, 2, 4, 10 ten times each, then three gaps: the median of the 40 present cells
    # is (2 + 4) / 2 = 3. colour: red 30, blue 10, green 1, and two gaps: red.
    a = ["1", "2", "4", "10"]
    colours = ["red", "blue", "red", "red"]
    rows = [(a[i % 4], colours[i % 4], f"c{i % 2}") for i in range(40)]
    rows += [("?", "green", "c0"), ("", "", "c1"), ("NA", "?", "c0")]
    ds = csv_loader.from_csv(csv_bytes(["a", "colour", "label"], rows), missing="impute")
    assert ds.n_samples == 43
    np.testing.assert_array_equal(ds.X[40:, 0], [3.0, 3.0, 3.0])
    # colour codes in sorted order: blue 0, green 1, red 2; the gaps take red.
    np.testing.assert_array_equal(ds.X[40:, 1], [1.0, 2.0, 2.0])
    np.testing.assert_array_equal(ds.X[:4], [[1, 2], [2, 0], [4, 2], [10, 2]])
    assert ("5 missing cell(s) imputed in 2 column(s): 'a' 3 with the median 3; 'colour' 2 "
            "with the most frequent value 'red'.") in ds.description


def test_a_missing_target_is_dropped_not_imputed():
    rows = balanced_rows(40) + [(1, "?", "c0"), (2, 3, ""), (4, 5, "null")]
    ds = csv_loader.from_csv(csv_bytes(["a", "b", "label"], rows), missing="impute")
    assert ds.n_samples == 41
    assert "2 row(s) without a target value dropped, of 43 (a label is never imputed)" \
        in ds.description
    with pytest.raises(DataError, match="missing in every row"):
        csv_loader.from_csv(csv_bytes(["a", "b", "label"], [(i, i, "") for i in range(30)]),
                            missing="impute")


def test_a_column_with_no_value_cannot_be_imputed():
    rows = [(i, "", f"c{i % 2}") for i in range(40)]
    with pytest.raises(DataError, match="Column 'b' has no value .* Exclude it"):
        csv_loader.from_csv(csv_bytes(["a", "b", "label"], rows), missing="impute")
    assert csv_loader.from_csv(csv_bytes(["a", "b", "label"], rows), missing="impute",
                               exclude=["b"]).feature_names == ["a"]


def test_no_complete_rows_suggests_excluding_or_imputing():
    rows = [(i, "", f"c{i % 2}") for i in range(40)]
    with pytest.raises(DataError, match="exclude such columns, or impute"):
        csv_loader.from_csv(csv_bytes(["a", "b", "label"], rows))


def test_exclude_is_validated():
    data = csv_bytes(["Height", "weight", "label"], balanced_rows())
    with pytest.raises(DataError, match="'label' is the target, so it cannot be excluded"):
        csv_loader.from_csv(data, exclude=["label"])
    with pytest.raises(DataError, match="'label' is the target"):   # matched like the target
        csv_loader.from_csv(data, exclude=["Label"])
    with pytest.raises(DataError) as info:
        csv_loader.from_csv(data, exclude=["age"])
    assert "no column named 'age' to exclude" in str(info.value)
    assert all(repr(c) in str(info.value) for c in ("Height", "weight", "label"))
    with pytest.raises(DataError, match="Every feature column is excluded"):
        csv_loader.from_csv(data, exclude=["height", "weight"])
    with pytest.raises(TypeError, match="list of column names"):
        csv_loader.from_csv(data, exclude=3)
    with pytest.raises(ValueError, match="missing must be 'drop' or 'impute'"):
        csv_loader.from_csv(data, missing="fill")
    # Matched like the target (case-insensitively); a single name, repeats and order are fine.
    assert csv_loader.from_csv(data, exclude="HEIGHT").feature_names == ["weight"]
    assert csv_loader.from_csv(data, exclude=["height", "Height"]).feature_names == ["weight"]
    with pytest.raises(DataError, match="is the target"):
        csv_loader.inspect_csv(data, exclude=["label"])


def test_an_excluded_column_is_neither_checked_nor_dropped_for():
    rows = [(i, i % 5, "x" * 2000 if i % 3 else "", f"c{i % 2}") for i in range(40)]
    data = csv_bytes(["a", "b", "notes", "label"], rows)
    with pytest.raises(DataError, match="longer than 1,000 characters"):
        csv_loader.from_csv(data)
    ds = csv_loader.from_csv(data, exclude=["notes"])
    assert ds.n_samples == 40 and ds.feature_names == ["a", "b"]
    formula = csv_bytes(["a", "b", "cmd", "label"],
                        [(i, i % 5, "=1+1", f"c{i % 2}") for i in range(40)])
    assert csv_loader.from_csv(formula, exclude="cmd").feature_names == ["a", "b"]


# ---- the dashboard's settings agree with the loader -------------------------------------

def test_streamlit_upload_limit_matches_the_loader():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    # The limit is stated in bytes: the browser widget's decimal cut-off, 200,000,000 bytes;
    # the server (server.maxUploadSize MiB, Streamlit multiplies by 1024 * 1024) takes at
    # least that, so it never refuses a file the widget and the page accept.
    assert csv_loader.MAX_UPLOAD_BYTES == 200_000_000
    assert config["server"]["maxUploadSize"] * 1024 * 1024 >= csv_loader.MAX_UPLOAD_BYTES
    assert config["client"]["showErrorDetails"] == "none"
    assert config["browser"]["gatherUsageStats"] is False


# ---- the loader's names are the datasets module's too -----------------------------------

def test_public_names_are_importable_from_datasets():
    for name in csv_loader.__all__:
        assert getattr(datasets, name) is getattr(csv_loader, name), name
        assert name in datasets.__all__
    assert isinstance(csv_loader.from_csv(csv_bytes(["a", "b", "label"], balanced_rows())),
                      datasets.Dataset)


@pytest.mark.parametrize("first", ["sdwec.csv_loader", "sdwec.datasets"])
def test_either_module_can_be_imported_first(first):
    # A fresh interpreter: the two modules share Dataset without importing each other in a
    # cycle, whichever comes first.
    code = f"import {first}; from sdwec.datasets import from_csv, Dataset; print('ok')"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=ROOT, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


# ---- the memory budget: rows and cells counted before parsing -------------------------


def test_too_many_rows_is_refused_before_parsing_with_what_to_do():
    data = csv_bytes(["x", "label"], [(i, i % 2) for i in range(500)])
    with pytest.raises(DataError) as caught:
        datasets.from_csv(data, max_rows=100)
    message = str(caught.value)
    assert "about 501 lines" in message and "at most 100 rows" in message
    assert "random sample of at most 100 rows" in message
    with pytest.raises(DataError, match="at most 100 rows"):
        datasets.inspect_csv(data, max_rows=100)
    # The header line does not count: 100 data rows are accepted.
    ok = csv_bytes(["x", "label"], [(i, i % 2) for i in range(100)])
    assert datasets.from_csv(ok, max_rows=100).n_samples == 100


def test_too_many_cells_is_refused_with_the_rows_that_would_fit():
    data = csv_bytes(["a", "b", "c", "label"], [(i, i, i, i % 2) for i in range(99)])
    # 100 lines x 4 columns = 400 cells
    with pytest.raises(DataError, match=r"400 cells.*at most 399 cells.*at most 99 rows"):
        datasets.from_csv(data, max_cells=399)
    assert datasets.from_csv(data, max_cells=400).n_samples == 99


def test_lines_are_counted_for_every_line_ending():
    assert csv_loader.count_lines(b"a,b\n1,2\n3,4\n") == 3
    assert csv_loader.count_lines(b"a,b\r\n1,2\r\n3,4") == 3
    assert csv_loader.count_lines(b"a,b\r1,2\r3,4\r") == 3


_HOSTILE_SCRIPT = """
import sys, tracemalloc
sys.path.insert(0, sys.argv[1])
from sdwec import datasets
from sdwec.errors import DataError
lines = int(sys.argv[2])
data = b"1,0\\n" * lines            # a hostile 199 MB file of 24.9M rows, scaled down
tracemalloc.start()
try:
    datasets.from_csv(data, max_rows=lines // 100)
    print("accepted")
except DataError as error:
    print("refused", tracemalloc.get_traced_memory()[1], error)
"""


def test_a_compressible_file_of_short_rows_gets_a_clear_refusal_in_bounded_memory():
    """A hostile file of short rows at 1/10 size (2.49M lines, 10 MB) with the row limit at
    1 % of its lines: the refusal allocates nothing in proportion to the file (measured by
    tracemalloc in a fresh interpreter), where parsing would take hundreds of MB."""
    lines = 2_490_000
    out = subprocess.run([sys.executable, "-c", _HOSTILE_SCRIPT, str(ROOT), str(lines)],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    verdict, peak, message = out.split(" ", 2)
    assert verdict == "refused"
    assert int(peak) < lines * 4 // 100   # under 1 % of the file
    assert f"about {lines:,} lines" in message and "random sample" in message


@pytest.mark.parametrize("block", [7, 1 << 23])
def test_quote_free_files_are_checked_line_by_line_like_the_csv_reader(monkeypatch, block):
    """The vectorised check (files without quotes) finds the same bad line as the csv
    reader (files with quotes), across block boundaries, skipping blank and CRLF lines."""
    monkeypatch.setattr(csv_loader, "_LINES_BLOCK", block)
    rows = ["a,b,label"] + [f"{i},{i % 3},{i % 2}" for i in range(30)]
    rows[17] = "17,2"                                  # line 18: two fields
    plain = "\r\n".join(rows[:5]) + "\r\n\r\n" + "\n".join(rows[5:])
    quoted = plain.replace("a,b", '"a",b', 1)
    for text in (plain, quoted):
        with pytest.raises(DataError, match="Line 19 has 2 fields but the first line has 3"):
            datasets.from_csv(text.encode())
    good = "\r\n".join(r for i, r in enumerate(rows) if i != 17) + "\n\n"
    assert datasets.from_csv(good.encode()).n_samples == 29


@pytest.mark.parametrize("block", [5, 1 << 23])
def test_a_sample_of_the_lines_is_exact_seeded_and_from_the_file(monkeypatch, block):
    monkeypatch.setattr(csv_loader, "_LINES_BLOCK", block)
    rows = [(i, i % 7, i % 2) for i in range(1000)]
    data = csv_bytes(["id", "x", "label"], rows)
    ds = datasets.from_csv(data, sample_rows=100, sample_seed=3, max_rows=150)
    assert ds.n_samples == 100
    ids = ds.X[:, 0].astype(int)
    assert len(set(ids)) == 100 and (np.diff(ids) > 0).all()   # distinct, in file order
    assert all(ds.X[i, 1] == ids[i] % 7 for i in range(100))
    assert "A random sample (seed 3) of 100 of the file's 1,001 lines." in ds.description
    again = datasets.from_csv(data, sample_rows=100, sample_seed=3)
    assert np.array_equal(again.X, ds.X)
    other = datasets.from_csv(data, sample_rows=100, sample_seed=4)
    assert not np.array_equal(other.X, ds.X)
    # A file already within the sample size is read whole, and says nothing of a sample.
    whole = datasets.from_csv(data, sample_rows=5000)
    assert whole.n_samples == 1000 and "sample" not in whole.description


def test_a_sample_needs_a_file_without_quotes():
    data = b'"a",b,label\n' + b"".join(b"%d,%d,%d\n" % (i, i % 3, i % 2) for i in range(50))
    with pytest.raises(DataError, match="without quoted cells"):
        datasets.from_csv(data, sample_rows=10)


_SAMPLE_SCRIPT = """
import sys, tracemalloc
sys.path.insert(0, sys.argv[1])
import numpy as np
from sdwec import csv_loader, datasets
csv_loader._LINES_BLOCK = 1 << 16     # 64 KB blocks, so a block is small beside the file
lines = int(sys.argv[2])
rng = np.random.default_rng(0)
data = b"x,y,label\\n" + b"".join(b"%d,%d,%d\\n" % (a, b, a % 2) for a, b in
                                 rng.integers(0, 50, (1000, 2))) * (lines // 1000)
tracemalloc.start()
ds = datasets.from_csv(data, sample_rows=2000, max_rows=lines // 100)
print(ds.n_samples, tracemalloc.get_traced_memory()[1])
"""


def test_a_sample_of_a_large_file_costs_memory_of_the_sample_not_the_file():
    lines = 1_000_000                                # 8 MB of short rows
    out = subprocess.run([sys.executable, "-c", _SAMPLE_SCRIPT, str(ROOT), str(lines)],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    rows, peak = map(int, out.split())
    assert rows == 2000
    # The file is 8 MB: the sample's memory is a few 64 KB blocks' worth and the 2,000
    # sampled lines, then their parse, not the file's.
    assert peak < 8_000_000 // 4


def test_the_description_says_which_label_is_plus_one_and_why():
    text = "a,b,label\n" + "".join(f"{i},{i % 3},{'healthy' if i % 2 else 'disease'}\n"
                                   for i in range(20))
    ds = csv_loader.from_csv(io.BytesIO(text.encode()), task="binary")
    assert ("Binary task: +1 = 'healthy', -1 = 'disease' (disease 10, healthy 10); +1 is the "
            "later label in sorted order (SDWEC treats the two classes alike).") \
        in ds.description
    assert sorted(set(ds.y)) == [-1, 1] and all(ds.y[1::2] == 1)  # odd rows: healthy


# ---- gzip-compressed files (.csv.gz) ----------------------------------------------------

def _same_data(a, b):
    assert a.feature_names == b.feature_names and a.task == b.task
    assert np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y)
    assert np.array_equal(a.classes, b.classes)


def test_a_gzip_file_reads_as_the_csv_inside_it_from_bytes_a_path_or_a_file(tmp_path):
    import gzip

    plain = csv_bytes(["id", "x", "label"], balanced_rows(60, 3))
    packed = gzip.compress(plain)
    assert packed[:2] == b"\x1f\x8b" and packed != plain   # the premise
    expected = datasets.from_csv(plain)
    path = tmp_path / "mine.csv.gz"
    path.write_bytes(packed)
    for source in (packed, path, io.BytesIO(packed)):
        _same_data(datasets.from_csv(source), expected)
    assert datasets.from_csv(path).name == "mine.csv.gz"
    # `cat a.gz b.gz` is one file of two members: read as the two parts one after the other.
    half = plain.index(b"\n", len(plain) // 2) + 1
    _same_data(datasets.from_csv(gzip.compress(plain[:half]) + gzip.compress(plain[half:])),
               expected)
    _same_data(datasets.from_csv(packed + b"\0" * 16), expected)   # gzip's zero padding


def test_the_byte_limit_holds_for_the_csv_inside_a_gzip_file():
    import gzip

    plain = csv_bytes(["id", "x", "label"], balanced_rows(60))
    packed = gzip.compress(plain)
    assert len(packed) < len(plain) // 2
    assert datasets.from_csv(packed, max_bytes=len(plain)).n_samples == 60
    with pytest.raises(DataError, match=f"decompresses to more than {len(plain) - 1:,} bytes"
                                        ".*Upload a random sample of the rows"):
        datasets.from_csv(packed, max_bytes=len(plain) - 1)


def test_a_damaged_or_twice_compressed_gzip_file_says_what_to_upload():
    import gzip

    plain = csv_bytes(["id", "x", "label"], balanced_rows(60))
    packed = gzip.compress(plain)
    damaged = {
        "cut short": packed[: len(packed) // 2],
        "a corrupt block": packed[:10] + b"\xff" * 16 + packed[26:],
        "bytes after its end": packed + b"not gzip",
    }
    for what, data in damaged.items():
        with pytest.raises(DataError) as raised:
            datasets.from_csv(data)
        message = str(raised.value)
        assert message.startswith("The file is gzip-compressed (.gz) but cannot be "
                                  "decompressed"), (what, message)
        assert "upload the plain CSV" in message, (what, message)
        assert csv_loader.count_lines(data) >= 0   # counting never raises: the loader says it
    with pytest.raises(DataError, match="compressed again"):
        datasets.from_csv(gzip.compress(packed))
    with pytest.raises(DataError, match="The file is empty"):
        datasets.from_csv(gzip.compress(b""))


def test_a_file_named_gz_that_is_not_gzip_says_so(tmp_path):
    """Binary bytes named .gz: the message is about the .gz (not only "binary data"); a plain
    CSV that was merely named .gz is read as the CSV it is."""
    noise = np.random.default_rng(0).bytes(4000)
    path = tmp_path / "data.csv.gz"
    path.write_bytes(noise)
    named = io.BytesIO(noise)
    named.name = "data.csv.gz"
    for source in (path, named):
        with pytest.raises(DataError) as raised:
            datasets.from_csv(source)
        assert "name ends in .gz, but it is not gzip-compressed" in str(raised.value)
        assert "data.csv.gz" in str(raised.value)
    with pytest.raises(DataError, match="binary data, not text"):
        datasets.from_csv(noise)  # no name: nothing says it should be gzip
    plain = csv_bytes(["id", "x", "label"], balanced_rows(60))
    renamed = io.BytesIO(plain)
    renamed.name = "data.csv.gz"
    assert np.array_equal(datasets.from_csv(renamed).X, datasets.from_csv(plain).X)


@pytest.mark.parametrize("text", ["a,b\n1,2\n3,4\n", "a,b\r\n1,2\r\n3,4", "a,b\r1,2\r3,4\r",
                                  "a,b\n1,2\n3,4"])
def test_lines_of_a_gzip_file_are_the_lines_inside_it(monkeypatch, text):
    import gzip

    monkeypatch.setattr(csv_loader, "_GZIP_OUT", 3)   # block edges inside lines
    monkeypatch.setattr(csv_loader, "_GZIP_BLOCK", 5)
    data = text.encode()
    assert csv_loader.count_lines(gzip.compress(data)) == csv_loader.count_lines(data) == 3


def test_a_sample_of_a_gzip_file_is_the_sample_of_the_csv_inside():
    import gzip

    rows = [(i, i % 7, i % 2) for i in range(1000)]
    plain = csv_bytes(["id", "x", "label"], rows)
    expected = datasets.from_csv(plain, sample_rows=100, sample_seed=3, max_rows=150)
    _same_data(datasets.from_csv(gzip.compress(plain), sample_rows=100, sample_seed=3,
                                 max_rows=150), expected)


_BOMB_SCRIPT = """
import gzip, sys, tracemalloc
sys.path.insert(0, sys.argv[1])
from sdwec import datasets
from sdwec.errors import DataError
inside = int(sys.argv[2])
bomb = gzip.compress(b"1,0\\n" * (inside // 4), 9)
tracemalloc.start()
try:
    datasets.from_csv(bomb, max_bytes=inside // 20)
    print("accepted")
except DataError as error:
    print("refused", len(bomb), tracemalloc.get_traced_memory()[1], error)
"""


def test_a_gzip_bomb_is_refused_in_memory_bounded_by_the_limit():
    """100 MB of "1,0" lines packed into about 100 KB, with a 5 MB limit: decompression stops
    one byte past the limit, so the refusal's memory follows the limit, not the 100 MB."""
    inside = 100_000_000
    out = subprocess.run([sys.executable, "-c", _BOMB_SCRIPT, str(ROOT), str(inside)],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    verdict, packed, peak, message = out.split(" ", 3)
    assert verdict == "refused" and int(packed) < inside // 500
    assert int(peak) < 2 * (inside // 20)
    assert f"decompresses to more than {inside // 20:,} bytes" in message
