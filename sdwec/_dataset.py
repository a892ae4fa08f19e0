"""The :class:`Dataset` type shared by the shipped datasets and the CSV loader.

Public as ``sdwec.datasets.Dataset``. It lives in its own module because both
:mod:`sdwec.datasets` (which re-exports the CSV loader's names) and :mod:`sdwec.csv_loader`
(which builds Datasets) need it: defining it in either would make the two import each other.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import numpy as np

from sdwec._util import plain

__all__ = ["Dataset", "TASKS", "read_only"]

TASKS = ("binary", "multiclass")


def read_only(array) -> np.ndarray:
    """``array`` as an ndarray that refuses writes (datasets share their arrays)."""
    array = np.asarray(array)
    array.setflags(write=False)
    return array


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
        return {plain(c): n for c, n in zip(self.classes, counts)}

    @property
    def fingerprint(self) -> str:
        """SHA-256 (hex) of the data a pool is trained on: ``task``, ``feature_names``,
        ``X`` and ``y``.

        Two Datasets with the same values have the same fingerprint whatever their
        ``name`` (an upload renamed is the same data); one changed cell changes it. It keys
        the disk cache of uploads' pools (:class:`sdwec.pool.PoolKey`). The hash of the
        arrays is computed once when they are read-only, as every loader makes them.
        """
        digest = hashlib.sha256()
        for part in (self.task.encode(), json.dumps(list(self.feature_names)).encode(),
                     self._array_digest()):
            digest.update(len(part).to_bytes(8, "big"))  # lengths keep the parts apart
            digest.update(part)
        return digest.hexdigest()

    def _array_digest(self) -> bytes:
        cached = self.__dict__.get("_array_digest_value")
        if cached is not None:
            return cached
        X = np.ascontiguousarray(self.X, dtype="<f8")
        y = np.asarray(self.y)
        kind = {"b": "<i8", "i": "<i8", "u": "<i8", "f": "<f8"}.get(y.dtype.kind, "text")
        digest = hashlib.sha256(json.dumps([list(X.shape), kind]).encode())
        digest.update(X.data)
        if kind != "text":  # int32 and int64 labels of the same values are the same data
            digest.update(np.ascontiguousarray(y, dtype=kind).data)
        else:  # text labels: an object array has no stable bytes, its JSON does
            digest.update(json.dumps([plain(v) for v in y], default=repr).encode())
        value = digest.digest()
        if not (np.asarray(self.X).flags.writeable or y.flags.writeable):
            # Frozen dataclass, read-only arrays: the data cannot change, so keep the hash.
            self.__dict__["_array_digest_value"] = value
        return value
