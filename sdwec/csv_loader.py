"""A defensive loader for a user's own CSV file.

:func:`from_csv` turns a path, bytes or an uploaded file into a :class:`sdwec.datasets.Dataset`,
or refuses it with a :class:`~sdwec.errors.DataError` whose message says what to fix. The
limits below are checked before the file is parsed. ``data/README.md`` ("User CSV files")
lists every rule; ``tests/fixtures/csv/`` is the hostile test corpus.

The public names are also importable from :mod:`sdwec.datasets` (``datasets.from_csv``).
"""

from __future__ import annotations

import csv
import io
import itertools
import os
from pathlib import Path

import numpy as np
import pandas as pd

from sdwec._dataset import TASKS, Dataset, read_only
from sdwec._util import plain
from sdwec.errors import DataError

__all__ = [
    "from_csv", "MAX_UPLOAD_BYTES", "MAX_FEATURES", "MAX_CLASSES", "MIN_ROWS_PER_CLASS",
    "MAX_CELL_CHARS", "MISSING_TOKENS",
]

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
        positive_label = plain(positive)
    else:
        y, classes, positive_label = y_original, classes_original, None
        class_names = tuple(str(c) for c in classes)
    dataset_name = name or file_name or "your data"
    description = _describe_csv(dataset_name, X, target_name, categorical, n_dropped, chosen,
                                classes, class_names, y)
    return Dataset(dataset_name, chosen, read_only(X), read_only(y), list(table.columns),
                   read_only(classes), description, class_names, positive_label)


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
