"""A defensive loader for a user's own CSV file.

:func:`from_csv` turns a path, bytes or an uploaded file into a :class:`sdwec.datasets.Dataset`,
or refuses it with a :class:`~sdwec.errors.DataError` whose message says what to fix. The
limits below are checked before the file is parsed. ``data/README.md`` ("User CSV files")
lists every rule; ``tests/fixtures/csv/`` is the hostile test corpus.

Before loading, :func:`inspect_csv` previews a file through the same parser: each column's
kind, gaps and distinct values, the columns that look like row identifiers, and how many rows
dropping (or cells imputing) missing values would affect. ``from_csv(..., exclude=...,
missing="drop" | "impute")`` then applies the user's choice.

A gzip-compressed file (``.csv.gz``) is read as the CSV inside it; the byte limit holds for
the decompressed bytes, and decompression stops one byte past it, so a small file that
expands enormously (a gzip bomb) costs no more memory than the largest plain CSV.

The public names are also importable from :mod:`sdwec.datasets` (``datasets.from_csv``).
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import io
import itertools
import os
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.impute import SimpleImputer

from sdwec._dataset import TASKS, Dataset, read_only
from sdwec._util import plain
from sdwec.errors import DataError

__all__ = [
    "from_csv", "inspect_csv", "CsvPreview", "MISSING_STRATEGIES", "MAX_UPLOAD_BYTES",
    "MAX_FEATURES", "MAX_CLASSES", "MIN_ROWS_PER_CLASS", "MAX_CELL_CHARS", "MISSING_TOKENS",
    "MAX_ROWS", "MAX_CELLS", "count_lines",
]

#: Largest CSV accepted, in bytes: 200 MB in decimal units, the cut-off Streamlit's upload
#: widget applies in the browser (it says "200MB" and refuses more than 200,000,000 bytes),
#: so the widget, this loader and the page state one limit. The server's
#: ``server.maxUploadSize`` is in MiB (200 MiB = 209,715,200 bytes, a little more, so the
#: server never refuses what the widget lets through).
MAX_UPLOAD_BYTES = 200_000_000
#: Most feature columns accepted (the target column is not counted).
MAX_FEATURES = 1_000
#: Most rows (lines) and cells read, so that an accepted file's whole path (preview, parse,
#: pool of 200 trees on a row budget, votes) stays within 2 GiB (sdwec.budget; measured in
#: results/upload.md). The byte limit alone does not bound memory: a 199 MB file of "1,0"
#: lines is 24.9 million rows. Both are counted in the raw bytes, before anything is parsed.
MAX_ROWS = 1_500_000
MAX_CELLS = 20_000_000
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

#: What :func:`from_csv` does with missing cells: drop their rows, or impute them.
MISSING_STRATEGIES = ("drop", "impute")

_GZIP_MAGIC = b"\x1f\x8b"
_GZIP_BLOCK = 1 << 16   # compressed bytes fed at a time
_GZIP_OUT = 1 << 20     # decompressed bytes taken at a time
_SNIFF_DELIMITERS = (",", ";", "\t", "|")
_SNIFF_RECORDS = 50
_HEADER_SAMPLE_ROWS = 200
# Spreadsheets run a cell as a formula when it starts with one of these characters.
_FORMULA_PREFIXES = ("=", "+", "-", "@")


def from_csv(source, target: str | None = None, task: str = "auto", *,
             name: str | None = None, header: str | bool = "auto", exclude=(),
             missing: str = "drop", max_bytes: int = MAX_UPLOAD_BYTES,
             max_features: int = MAX_FEATURES, max_rows: int = MAX_ROWS,
             max_cells: int = MAX_CELLS, sample_rows: int | None = None,
             sample_seed: int = 0) -> Dataset:
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
    exclude : str or sequence of str, default ()
        Columns not used as features (e.g. row identifiers, free text); matched like
        ``target``. Their cells are not checked and their gaps do not drop rows.
        :func:`inspect_csv` proposes the likely identifiers.
    missing : {"drop", "impute"}, default "drop"
        ``"drop"``: rows with a missing cell in the target or any feature are dropped.
        ``"impute"``: missing feature cells are filled by scikit-learn's ``SimpleImputer``,
        with the median of a numeric column or the most frequent value of a categorical
        one (the smallest such value on a tie); rows whose *target* is missing are still
        dropped, since a label is never made up. The statistics are taken over all rows
        before the train/validation/test split, a small leak that is harmless for
        exploring and is stated in ``docs/dashboard.md``.
    max_bytes, max_features : int
        Limits, checked before the file is parsed (``max_features`` counts every column
        but the target, excluded ones too: the limit guards the parser).
    max_rows, max_cells : int
        Limits on the lines of the file and on lines x columns, counted in the raw bytes
        before it is decoded or parsed (a line count is an upper bound on the rows), so
        that a refusal costs no memory beyond the bytes themselves.
    sample_rows : int, optional
        Read a random sample of this many lines (besides the first, which may be the
        header) instead of the whole file, chosen by ``sample_seed`` before anything is
        parsed, in memory that follows the sample: what a user may consent to when a file
        passes ``max_rows``. Only for files without quoted cells. The description says so.
    sample_seed : int, default 0

    Returns
    -------
    Dataset
        A column whose non-missing values are all numbers is numeric (float64); any other
        column is categorical, encoded as ordinal codes 0, 1, ... in sorted order of its
        values. Missing values are ``MISSING_TOKENS`` (infinities count as missing).
        ``description`` says which columns were excluded and how many rows were dropped,
        or how many cells were imputed in which columns and with what value. Integer
        labels stay int64, other labels are text (object array).

    Raises
    ------
    DataError
        With a message saying what to fix: empty file, not a text CSV, not UTF-8, one
        column, ragged rows, too large, too many features, duplicate or missing target
        column, an unknown or the target column in ``exclude``, formula cells, over-long
        cells, no complete rows, a feature with no value to impute from, one class, too
        many classes, a class with fewer than ``MIN_ROWS_PER_CLASS`` rows, constant
        features.
    ValueError
        An unknown ``task``, ``header`` or ``missing`` option.
    """
    if task not in ("auto", *TASKS):
        raise ValueError(f"Unknown task {task!r}; choose auto, binary or multiclass.")
    if missing not in MISSING_STRATEGIES:
        raise ValueError(f"missing must be 'drop' or 'impute', not {missing!r}.")
    parsed = _parse_source(source, target, header, max_bytes, max_features, max_rows,
                           max_cells, sample_rows, sample_seed)
    target_name = parsed.target
    excluded = _resolve_exclude(list(parsed.table.columns), target_name, exclude)
    table = parsed.table.drop(columns=list(excluded))
    gaps = _gap_table(table)
    n_read = len(table)
    gap_counts = {c: int(n) for c, n in gaps.sum().items() if n}
    if missing == "drop":
        keep = ~gaps.to_numpy().any(axis=1)
        dropped_what = "rows with missing values"
    else:
        keep = ~gaps[target_name].to_numpy()
        dropped_what = "rows without a target value"
    if not keep.any():
        raise _no_rows_error(gaps, target_name, missing)
    table = table[keep].reset_index(drop=True)
    gaps = gaps[keep].reset_index(drop=True).drop(columns=target_name)
    n_dropped = n_read - int(keep.sum())
    labels = table.pop(target_name)
    dropped_note = (f" ({n_dropped:,} {dropped_what} were dropped first)" if n_dropped
                    else "")
    try:
        y_original, classes_original = _encode_target(labels, target_name, dropped_note)
    except DataError as error:
        if parsed.has_header:
            raise
        raise DataError(f"{error} Note: the first line was read as data, not as column "
                        "names.") from None
    X, categories = _encode_features(table, gaps)
    imputed = _impute(X, list(table.columns), categories) if missing == "impute" else []
    if task == "binary" and len(classes_original) != 2:
        raise DataError(
            f"Binary classification needs two classes; target {target_name!r} has "
            f"{len(classes_original)}. Choose multiclass, or another target column.")
    if np.all(np.ptp(X, axis=0) == 0):
        raise DataError(
            "Every feature column has one single value in all the rows kept, so there is "
            "nothing to learn from. Check the columns (and the excluded ones), or the rows "
            "dropped for missing values.")
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
    dataset_name = name or parsed.file_name or "your data"
    parts = [f"{dataset_name}: {X.shape[0]:,} rows, {X.shape[1]} features, target "
             f"{target_name!r}."]
    if parsed.sampled_from is not None:
        parts.append(f"A random sample (seed {sample_seed}) of {sample_rows:,} of the file's "
                     f"{parsed.sampled_from:,} lines.")
    if excluded:
        parts.append(f"Excluded column(s), not used as features: "
                     f"{_preview_list(list(excluded), 5)}.")
    if categories:
        parts.append(f"{len(categories)} text column(s) encoded as ordinal codes in sorted "
                     f"order: {_preview_list(list(categories), 5)}.")
    parts.append(_describe_missing(missing, n_read, n_dropped, gap_counts, imputed))
    parts.append(_describe_classes(chosen, classes, class_names, y))
    return Dataset(dataset_name, chosen, read_only(X), read_only(y), list(table.columns),
                   read_only(classes), " ".join(p for p in parts if p), class_names,
                   positive_label)


@dataclass(frozen=True, eq=False)
class CsvPreview:
    """What :func:`from_csv` would make of a file, computed without loading it.

    Returned by :func:`inspect_csv`; :meth:`with_exclude` recomputes the counts for other
    excluded columns without reading the file again.

    Attributes
    ----------
    target : str
        The target column (as :func:`from_csv` would choose it).
    columns : pandas.DataFrame
        One row per column of the file, in file order: ``column`` (its name), ``role``
        (``"target"``, ``"feature"`` or ``"excluded"``), ``kind`` (``"numeric"`` when
        every non-missing cell is a number, else ``"categorical"``), ``missing``
        (missing cells), ``distinct`` (distinct non-missing values) and ``likely_id``.
        ``likely_id`` marks a non-target column that has a different value in every row (and
        so no gap) and is either text, or integers numbered in file order (increasing or
        decreasing) or forming a full range such as 1..n in any order: a row identifier,
        which as a feature only lets the trees memorise rows. Real numbers that are all
        different (a continuous measurement) and scattered unique integers (a price) are
        not flagged.
    gaps : ndarray of bool, shape (n_rows, n_columns)
        Where the cells are missing, columns in the order of ``columns``.
    exclude : tuple of str
        The excluded columns the counts below assume.
    """

    target: str
    columns: pd.DataFrame = field(repr=False)
    gaps: np.ndarray = field(repr=False)
    exclude: tuple = ()

    @property
    def n_rows(self) -> int:
        """Data rows in the file."""
        return self.gaps.shape[0]

    @property
    def column_names(self) -> list[str]:
        """Every column of the file, in file order."""
        return list(self.columns["column"])

    @property
    def likely_ids(self) -> list[str]:
        """The columns flagged ``likely_id``: propose them for exclusion."""
        return list(self.columns.loc[self.columns["likely_id"], "column"])

    def _used(self) -> np.ndarray:
        return (self.columns["role"] != "excluded").to_numpy()

    def _is_target(self) -> np.ndarray:
        return (self.columns["role"] == "target").to_numpy()

    @property
    def rows_dropped(self) -> int:
        """Rows that ``missing="drop"`` removes: a gap in the target or a used feature."""
        return int(self.gaps[:, self._used()].any(axis=1).sum())

    @property
    def rows_without_target(self) -> int:
        """Rows whose target is missing: dropped by ``missing="impute"`` too."""
        return int(self.gaps[:, self._is_target()].any(axis=1).sum())

    @property
    def cells_imputed(self) -> dict:
        """``{column: cells}`` that ``missing="impute"`` fills (rows with a target only)."""
        labelled = ~self.gaps[:, self._is_target()].any(axis=1)
        features = self._used() & ~self._is_target()
        counts = self.gaps[labelled][:, features].sum(axis=0)
        names = self.columns.loc[features, "column"]
        return {str(c): int(n) for c, n in zip(names, counts) if n}

    def with_exclude(self, exclude) -> "CsvPreview":
        """This preview with ``exclude`` (validated as in :func:`from_csv`) as the excluded
        columns.

        Raises
        ------
        DataError
            An unknown column, the target, or every feature column in ``exclude``.
        """
        names = self.column_names
        excluded = _resolve_exclude(names, self.target, exclude)
        columns = self.columns.copy()
        columns["role"] = ["target" if c == self.target else
                           "excluded" if c in excluded else "feature" for c in names]
        return replace(self, columns=columns, exclude=excluded)


def inspect_csv(source, target: str | None = None, *, exclude=(),
                header: str | bool = "auto", max_bytes: int = MAX_UPLOAD_BYTES,
                max_features: int = MAX_FEATURES, max_rows: int = MAX_ROWS,
                max_cells: int = MAX_CELLS, sample_rows: int | None = None,
                sample_seed: int = 0) -> CsvPreview:
    """Preview a CSV file before loading it: columns, gaps and likely row identifiers.

    The file is read by the same parser as :func:`from_csv` (same delimiter, header and
    missing-value rules, same refusals of unreadable files); the checks that belong to the
    learning task (classes, formula and over-long cells in the features, constant columns)
    are left to :func:`from_csv`, so that a column that would fail them can be seen here
    and excluded.

    Parameters
    ----------
    source, target, header, max_bytes, max_features, max_rows, max_cells, sample_rows,
    sample_seed
        As in :func:`from_csv`.
    exclude : str or sequence of str, default ()
        Columns to leave out of the counts, as in :func:`from_csv`.

    Returns
    -------
    CsvPreview
        ``columns`` describes each column; ``rows_dropped`` is how many rows
        ``from_csv(..., missing="drop")`` would drop, ``cells_imputed`` which cells
        ``missing="impute"`` would fill, and ``rows_without_target`` the rows both drop.

    Raises
    ------
    DataError
        As :func:`from_csv` for a file that cannot be read as a table, an unknown target
        column, or an unusable ``exclude``.

    Examples
    --------
    >>> from sdwec.datasets import inspect_csv
    >>> lines = ["id,x,label"] + [f"{i},{i % 3},{i % 2}" for i in range(30)]
    >>> preview = inspect_csv("\\n".join(lines).encode())
    >>> preview.likely_ids, preview.rows_dropped
    (['id'], 0)
    """
    parsed = _parse_source(source, target, header, max_bytes, max_features, max_rows,
                           max_cells, sample_rows, sample_seed)
    gaps = _gap_table(parsed.table)
    n_rows = len(parsed.table)
    rows = []
    for column in parsed.table.columns:
        missing = gaps[column].to_numpy()
        numbers, categories = _decode_column(parsed.table[column], missing)
        present = numbers[~missing]
        distinct = len(categories) if categories is not None else len(pd.unique(present))
        unique_per_row = n_rows > 1 and distinct == n_rows   # so no gap either
        rows.append({"column": column, "role": "feature",
                     "kind": "numeric" if categories is None else "categorical",
                     "missing": int(missing.sum()), "distinct": distinct,
                     "likely_id": (column != parsed.target and unique_per_row
                                   and (categories is not None or _id_like(present)))})
    preview = CsvPreview(parsed.target, pd.DataFrame(rows), read_only(gaps.to_numpy()))
    return preview.with_exclude(exclude)


def _id_like(numbers: np.ndarray) -> bool:
    """Distinct numbers that look like row numbers: integers, in order or a full range.

    A measurement can be unique per row too (a price, a duration), so integers alone are
    not enough; row identifiers are usually numbered in file order or densely.
    """
    if not np.all(numbers == np.round(numbers)):
        return False
    steps = np.diff(numbers)
    in_order = bool(np.all(steps > 0) or np.all(steps < 0))
    return in_order or numbers.max() - numbers.min() == len(numbers) - 1


@dataclass(frozen=True)
class _Parsed:
    """A file read into a table of raw cells, with its target column chosen."""

    table: pd.DataFrame
    target: str
    has_header: bool
    file_name: str | None
    sampled_from: int | None = None   # lines of the file, when a sample of them was read


def _parse_source(source, target, header, max_bytes: int, max_features: int,
                  max_rows: int = MAX_ROWS, max_cells: int = MAX_CELLS,
                  sample_rows: int | None = None, sample_seed: int = 0) -> _Parsed:
    """Read ``source`` into a table: the one parser of :func:`from_csv` and
    :func:`inspect_csv`."""
    if header not in ("auto", True, False):
        raise ValueError(f"header must be 'auto', True or False, not {header!r}.")
    data, file_name = _read_bytes(source, max_bytes)
    lines = count_lines(data)
    sampled_from = None
    if sample_rows is not None and lines > int(sample_rows) + 1:
        data, sampled_from = _sample_lines(data, int(sample_rows), sample_seed), lines
        lines = count_lines(data)
    if lines > max_rows + 1:   # one line may be the header
        raise _too_many_error(f"about {lines:,} lines", f"at most {max_rows:,} rows", max_rows)
    text = _decode(data)
    delimiter, width = _sniff(text)
    if lines * width > max_cells:
        rows = max(1, max_cells // width)
        raise _too_many_error(f"about {lines:,} lines of {width} columns "
                              f"({lines * width:,} cells)", f"at most {max_cells:,} cells",
                              rows)
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
    target_name = _find_column(columns, target) if target is not None else columns[-1]
    # A plain UTF-8 file without quotes has one record per line: it is checked and parsed
    # from its bytes (vectorised, and without pandas copying the text four bytes a char).
    plain = (b'"' not in data and b"\n" in data and not data.startswith(codecs.BOM_UTF8)
             and not data.startswith((b"\xff\xfe", b"\xfe\xff")))
    if plain:
        _check_lines(data, delimiter, width)
    else:
        _check_rectangular(text, delimiter, width)
    del text
    table = _parse(io.BytesIO(data) if plain else io.StringIO(_decode(data)), delimiter,
                   width, has_header, columns.index(target_name))
    if table.empty:
        raise DataError("The file has a header row but no data rows below it.")
    table.columns = columns
    return _Parsed(table, target_name, has_header, file_name, sampled_from)


def _read_bytes(source, max_bytes: int) -> tuple[bytes, str | None]:
    """Raw bytes of the source and its file name; the size is checked before reading."""
    too_big = (f"The file is larger than the {max_bytes:,} byte ({max_bytes / 1e6:,.0f} MB) limit. Upload a "
               "smaller sample of the rows.")
    file_name = None
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif isinstance(source, (str, os.PathLike)):
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
    if data.startswith(_GZIP_MAGIC):
        data = _gunzip(data, max_bytes)
    elif file_name and file_name.lower().endswith(".gz") and data.strip():
        # Named .gz but not gzip: read as plain text where it is (a CSV renamed), else say
        # what is wrong with the .gz, not only that it is not text.
        try:
            _decode(data)
        except DataError:
            raise DataError(
                f"The file's name ends in .gz, but it is not gzip-compressed ({file_name} "
                f"does not start as a gzip file does), nor a text CSV: it is damaged, or "
                f"another kind of file was renamed. Upload the CSV itself, or the CSV "
                f"compressed with gzip (.csv.gz).") from None
    return data, file_name


def _inflate(data: bytes, limit: int):
    """The decompressed blocks of gzip ``data`` (all its members), at most ``limit + 1``
    bytes in all, in blocks of at most :data:`_GZIP_OUT` bytes: memory follows what is kept,
    whatever the file expands to."""
    view, position, left = memoryview(data), 0, limit + 1
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    while left > 0:
        if inflater.eof:   # a member ended: another may follow (as `cat a.gz b.gz` makes)
            tail = inflater.unused_data + view[position:].tobytes()
            if not tail.strip(b"\0"):
                return
            if not tail.startswith(_GZIP_MAGIC):
                raise _damaged("there are other bytes after its end")
            view, position = memoryview(tail), 0
            inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        pending = inflater.unconsumed_tail
        if not pending:
            if position >= len(view):
                raise _damaged("it ends before its last block")
            pending = view[position:position + _GZIP_BLOCK]
            position += len(pending)
        try:
            block = inflater.decompress(pending, min(left, _GZIP_OUT))
        except zlib.error as error:
            raise _damaged(str(error)) from None
        left -= len(block)
        if block:
            yield block


def _damaged(reason: str) -> DataError:
    return DataError(
        f"The file is gzip-compressed (.gz) but cannot be decompressed: it is damaged or cut "
        f"short ({reason}). Compress the CSV again, or upload the plain CSV.")


def _gunzip(data: bytes, max_bytes: int) -> bytes:
    """The bytes inside a gzip file, refused once they pass ``max_bytes``: the limit is on
    what gets parsed, and a gzip bomb is stopped after ``max_bytes + 1`` bytes of output."""
    inner = bytearray()
    for block in _inflate(data, max_bytes):
        inner += block
    if len(inner) > max_bytes:
        raise DataError(
            f"The file decompresses to more than {max_bytes:,} bytes "
            f"({max_bytes / 1e6:,.0f} MB), the limit for the CSV inside a .gz file as for "
            "a plain one. Upload a random sample of the rows.")
    if inner.startswith(_GZIP_MAGIC):
        raise DataError(
            "The file inside this .gz is compressed again. Decompress it until you have "
            "the CSV, then upload that (or the CSV compressed once, as .csv.gz).")
    return bytes(inner)


def count_lines(data: bytes) -> int:
    """Lines in the raw bytes of a file (an upper bound on its records), without copying
    them: how :func:`from_csv` checks ``max_rows`` before parsing.  For gzip bytes, the
    lines of the file inside, counted block by block up to :data:`MAX_UPLOAD_BYTES` (the
    loader refuses a larger one, or a damaged one, with its own message)."""
    if data.startswith(_GZIP_MAGIC):
        return _count_gzip_lines(data)
    ends = data.count(b"\n") or data.count(b"\r")   # LF or CRLF, else old Mac CR
    return ends + (not data.endswith((b"\n", b"\r")))


def _count_gzip_lines(data: bytes) -> int:
    newlines = returns = 0
    last = b""
    with contextlib.suppress(DataError):
        for block in _inflate(data, MAX_UPLOAD_BYTES):
            newlines += block.count(b"\n")
            returns += block.count(b"\r")
            last = block[-1:]
    return (newlines or returns) + (last not in (b"", b"\n", b"\r"))


def _sample_lines(data: bytes, k: int, seed: int) -> bytes:
    """The first line and a seeded random sample of exactly ``k`` of the other lines, in
    file order; block by block, so memory follows the sample, not the file.

    Only for a file without quotes (a record is then a line).
    """
    if b'"' in data or b"\n" not in data:
        raise DataError(
            "Only a file without quoted cells, one record per line, can be sampled here. "
            "Upload a random sample of the rows instead.")
    rng = np.random.default_rng(seed)
    first = data.find(b"\n") + 1
    left = data.count(b"\n", first) + (not data.endswith(b"\n"))
    wanted = min(k, left)
    out, start = [data[:first]], first
    while start < len(data) and wanted:
        stop = data.find(b"\n", min(start + _LINES_BLOCK, len(data)))
        stop = len(data) if stop == -1 else stop + 1
        block = np.frombuffer(data, np.uint8, stop - start, start)
        ends = np.flatnonzero(block == ord("\n")) + 1
        if ends.size == 0 or ends[-1] != len(block):
            ends = np.append(ends, len(block))
        taken = int(rng.hypergeometric(wanted, left - wanted, len(ends))) \
            if left > len(ends) else wanted
        keep = np.zeros(len(ends), dtype=bool)
        keep[rng.choice(len(ends), taken, replace=False)] = True
        out.append(block[np.repeat(keep, np.diff(ends, prepend=0))].tobytes())
        if out[-1] and not out[-1].endswith(b"\n"):
            out[-1] += b"\n"
        wanted, left, start = wanted - taken, left - len(ends), stop
    return b"".join(out)


def _too_many_error(found: str, limit: str, rows: int) -> DataError:
    return DataError(
        f"The file has {found}; this server reads {limit}, so that one upload stays within "
        f"its memory budget. Upload a random sample of at most {rows:,} rows (for example "
        f"pandas: df.sample(n={rows}, random_state=0).to_csv(...)), or fewer columns.")


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
        "values (a number or a category), not free text; exclude or remove that column.")


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


_LINES_BLOCK = 1 << 23   # bytes per step of _check_lines: its memory stays a few blocks


def _check_lines(data: bytes, delimiter: str, width: int) -> None:
    """:func:`_check_rectangular` for a file without quotes, where a record is a line: counts
    the delimiters of every line with numpy, block by block."""
    separator, newline = ord(delimiter), ord("\n")
    start, line = 0, 0
    while start < len(data):
        stop = data.find(b"\n", min(start + _LINES_BLOCK, len(data)))
        stop = len(data) if stop == -1 else stop + 1
        block = np.frombuffer(data, np.uint8, stop - start, start)
        ends = np.flatnonzero(block == newline)
        if ends.size == 0 or ends[-1] != len(block) - 1:
            ends = np.append(ends, len(block))          # the last line has no newline
        splits = np.flatnonzero(block == separator)
        fields = np.diff(np.searchsorted(splits, ends), prepend=0) + 1
        lengths = np.diff(ends, prepend=-1) - 1
        carriage = np.zeros(len(ends), dtype=bool)
        inside = (ends > 0) & (lengths > 0)
        carriage[inside] = block[ends[inside] - 1] == ord("\r")
        blank = lengths - carriage == 0
        bad = np.flatnonzero(~blank & (fields != width))
        if bad.size:
            raise DataError(
                f"Line {line + bad[0] + 1} has {fields[bad[0]]} fields but the first line has "
                f"{width}. Every row needs the same number of columns: check for an "
                f"unquoted {_delimiter_name(delimiter)} inside a value or a missing "
                "separator.")
        line += len(ends)
        start = stop


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


def _find_column(columns: list[str], name, purpose: str = "") -> str:
    """The column called ``name`` (exact, then case-insensitive), or a DataError listing
    the columns."""
    if name in columns:
        return name
    folded = [c for c in columns if c.strip().lower() == str(name).strip().lower()]
    if len(folded) == 1:
        return folded[0]
    raise DataError(f"There is no column named {name!r}{purpose}. The columns are: "
                    f"{_preview_list(columns)}.")


def _resolve_exclude(columns: list[str], target: str, exclude) -> tuple[str, ...]:
    """The columns named by ``exclude``, validated: known, not the target, not all."""
    if isinstance(exclude, str):
        exclude = (exclude,)
    try:
        names = list(exclude)
    except TypeError:
        raise TypeError(f"exclude must be a list of column names, not "
                        f"{type(exclude).__name__}.") from None
    excluded = []
    for name in names:
        column = _find_column(columns, name, " to exclude")
        if column == target:
            raise DataError(
                f"Column {_shorten(column)!r} is the target, so it cannot be excluded. "
                "Remove it from the excluded columns, or choose another target column.")
        if column not in excluded:
            excluded.append(column)
    if len(excluded) == len(columns) - 1:
        raise DataError("Every feature column is excluded, so nothing is left to learn "
                        "from. Keep at least one feature column.")
    return tuple(excluded)


def _preview_list(items: list[str], limit: int = 20) -> str:
    shown = ", ".join(repr(_shorten(i)) for i in items[:limit])
    return shown + (f" (and {len(items) - limit:,} more)" if len(items) > limit else "")


def _shorten(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _parse(stream, delimiter: str, width: int, has_header: bool,
           target_index: int) -> pd.DataFrame:
    """The whole table; pandas' C parser reads numeric columns as numbers directly."""
    try:
        table = pd.read_csv(stream, sep=delimiter, encoding="utf-8", names=list(range(width)),
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


def _gaps(values: pd.Series) -> np.ndarray:
    """Where a column's cells are missing: a ``MISSING_TOKENS`` text or an infinity."""
    if _is_numeric(values):
        return ~np.isfinite(values.to_numpy(np.float64))
    codes, text = _distinct_text(values)
    numbers = pd.to_numeric(text, errors="coerce").to_numpy(np.float64)
    is_missing = text.str.lower().isin(MISSING_TOKENS).to_numpy() | np.isinf(numbers)
    return is_missing[codes]


def _gap_table(table: pd.DataFrame) -> pd.DataFrame:
    """A boolean table, True where ``table``'s cell is missing."""
    return pd.DataFrame({column: _gaps(table[column]) for column in table.columns})


def _no_rows_error(gaps: pd.DataFrame, target: str, missing: str) -> DataError:
    if missing == "impute":
        return DataError(
            f"The target column {_shorten(target)!r} is missing in every row, so no row has "
            "a label to learn from. Choose another target column.")
    worst = gaps.mean().idxmax()
    return DataError(
        f"Every row has a missing value (empty, ?, NA, NaN, null, inf, ...): no complete "
        f"rows remain. Column {_shorten(worst)!r} is missing in {gaps[worst].mean():.0%} "
        f"of rows; exclude such columns, or impute the gaps (missing='impute') instead of "
        f"dropping rows.")


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


def _decode_column(values: pd.Series, missing: np.ndarray,
                   name: str | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """A column as float64 (NaN where ``missing``) and its categories, or ``None`` if numeric.

    Numeric when every non-missing cell is a number; otherwise categorical, as ordinal codes
    0, 1, ... in sorted order of its distinct (stripped) values, which CART splits fine.
    With ``name``, text cells are checked first (length, formulas) and refused with a
    DataError naming the column; without it (a preview) nothing is refused.
    """
    if _is_numeric(values):
        numbers, categories = values.to_numpy(np.float64).copy(), None
    else:
        if name is None:
            codes, text = _distinct_text(values)
            text_numbers = pd.to_numeric(text, errors="coerce")
        else:
            codes, text, text_numbers = _checked_text(values, name)
        occurs = np.bincount(codes[~missing], minlength=len(text)) > 0
        if text_numbers[occurs].notna().all():
            numbers, categories = text_numbers.to_numpy(np.float64)[codes], None
        else:
            order, categories = pd.factorize(text[occurs], sort=True)
            code_of_text = np.full(len(text), np.nan)
            code_of_text[occurs] = order
            numbers, categories = code_of_text[codes], np.asarray(categories, dtype=object)
    numbers[missing] = np.nan
    return numbers, categories


def _encode_features(table: pd.DataFrame,
                     gaps: pd.DataFrame) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The feature matrix (NaN in the gaps) and each categorical column's categories."""
    encoded, categories = [], {}
    for column in table.columns:
        numbers, column_categories = _decode_column(table[column], gaps[column].to_numpy(),
                                                    column)
        encoded.append(numbers)
        if column_categories is not None:
            categories[column] = column_categories
    return np.column_stack(encoded), categories


def _impute(X: np.ndarray, names: list[str],
            categories: dict[str, np.ndarray]) -> list[tuple[str, int, str]]:
    """Fill ``X``'s gaps in place; ``(column, cells filled, value used)`` per column filled.

    Numeric columns take their median, categorical ones their most frequent value (the
    smallest code on a tie, i.e. the first value in sorted order), both by
    ``SimpleImputer``.
    """
    gaps = np.isnan(X)
    counts = gaps.sum(axis=0)
    empty = [name for name, n in zip(names, counts) if n == len(X)]
    if empty:
        raise DataError(
            f"Column {_shorten(empty[0])!r} has no value in any row with a target, so there "
            "is nothing to impute it from. Exclude it.")
    is_categorical = np.array([name in categories for name in names])
    for strategy, wanted in (("median", ~is_categorical), ("most_frequent", is_categorical)):
        columns = np.flatnonzero(wanted & (counts > 0))
        if columns.size:
            X[:, columns] = SimpleImputer(strategy=strategy).fit_transform(X[:, columns])
    filled = []
    for j in np.flatnonzero(counts):
        value = X[np.argmax(gaps[:, j]), j]
        shown = (f"the most frequent value {_shorten(str(categories[names[j]][int(value)]))!r}"
                 if is_categorical[j] else f"the median {value:g}")
        filled.append((names[j], int(counts[j]), shown))
    return filled


def _encode_target(labels: pd.Series, target: str,
                   dropped_note: str) -> tuple[np.ndarray, np.ndarray]:
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
        raise DataError(
            f"Too few rows in class {', '.join(rare[:5])}{more}{dropped_note}: every class needs "
            f"at least {MIN_ROWS_PER_CLASS} rows for the 80/10/10 train/validation/test "
            "split. Add rows, merge rare classes, or remove them.")
    return classes[codes], classes


def _describe_missing(missing: str, n_read: int, n_dropped: int, gap_counts: dict,
                      imputed: list) -> str:
    """The description's sentence on missing values ('' when the file had none)."""
    if missing == "drop":
        if not n_dropped:
            return ""
        worst = sorted(gap_counts.items(), key=lambda item: -item[1])
        cells = ", ".join(f"{_shorten(c)!r} {n:,}" for c, n in worst[:5])
        more = f" and {len(worst) - 5} more columns" if len(worst) > 5 else ""
        return (f"{n_dropped:,} row(s) with missing values dropped, of {n_read:,} "
                f"(missing cells: {cells}{more}).")
    parts = []
    if imputed:
        total = sum(n for _, n, _ in imputed)
        each = "; ".join(f"{_shorten(c)!r} {n:,} with {value}" for c, n, value in imputed[:5])
        more = f"; and {len(imputed) - 5} more columns" if len(imputed) > 5 else ""
        parts.append(f"{total:,} missing cell(s) imputed in {len(imputed)} column(s): "
                     f"{each}{more}.")
    if n_dropped:
        parts.append(f"{n_dropped:,} row(s) without a target value dropped, of {n_read:,} "
                     "(a label is never imputed).")
    return " ".join(parts)


def _describe_classes(task: str, classes, class_names, y) -> str:
    counts = ", ".join(f"{label} {int(np.sum(y == c))}" for c, label in zip(classes, class_names))
    if task == "binary":
        # SDWEC sees only whether each tree agrees with each row's label (y_i h_j(x_i)), so
        # it treats the two classes alike; the sorted order decides which one is +1.
        return (f"Binary task: +1 = {class_names[1]!r}, -1 = {class_names[0]!r} "
                f"({counts}); +1 is the later label in sorted order (SDWEC treats the two "
                f"classes alike).")
    return f"Multiclass task, {len(classes)} classes ({counts})."
