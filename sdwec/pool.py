"""Bagged CART pools: splits, prediction matrices and a disk cache.

A *pool* is the paper's ensemble before any combiner is applied: ``l`` CART trees trained by
bagging on an 80 % training split, and their predictions (in the original label space) on the
10 % validation split, where combiners find weights, and on the 10 % test split, where they are
scored.

Pools of the shipped datasets are cached on disk (:func:`cache_dir`) because NSL-KDD pools take
minutes to train on two cores. A cache entry is one file, named after a hash of everything that
determines the pool, written to a temporary file and renamed into place (a killed writer leaves
no partial entry), and checked on load (magic, length, SHA-256 of the payload, the stored key);
anything that fails a check is rebuilt, never trusted. A per-entry ``fcntl`` lock makes
concurrent requests for the same uncached pool (threads or processes) train it once.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import pickle
import struct
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import sklearn
from sklearn.ensemble import BaggingClassifier
from sklearn.tree import DecisionTreeClassifier

from sdwec.errors import DataError
from sdwec.votes import Votes, compress_votes

__all__ = [
    "Pool", "split_indices", "build_pool", "load_pool", "prediction_matrix", "cache_dir",
    "cache_path", "CACHE_ENV",
]

CACHE_ENV = "SDWEC_CACHE_DIR"
_MAGIC = b"SDWEC-POOL\x01\n"
_HEADER = struct.Struct(">32sQ")  # SHA-256 of the payload, payload length
_FORMAT = 2  # bump when the pickled Pool layout changes (2: one Votes per split, no table)
_TRAIN_CHUNK = 20  # trees per warm-start step, so progress is reported as the pool grows


@dataclass
class Pool:
    """A bagged pool of CART trees with its splits and prediction matrices.

    Attributes
    ----------
    classes : ndarray
        Sorted class labels (binary tasks: ``[-1, 1]``).
    X_train, y_train, X_val, y_val, X_test, y_test : ndarray
        The stratified 80/10/10 splits.
    P_val, P_test : ndarray of shape (m, l)
        Predicted labels of every tree, in the original label space.
    ensemble : BaggingClassifier
        The fitted bagging ensemble.
    estimators : list
        Its ``l`` fitted trees (they predict *encoded* class indices).
    single_tree : DecisionTreeClassifier
        One CART tree fitted on the whole training split (the paper's "single" baseline).
    single_val, single_test : ndarray
        Its predictions on the validation and test splits.
    prior : ndarray
        Tie-breaking order of the classes: most frequent validation class first, then the
        others by decreasing validation frequency, ties in sorted order.
    meta : dict
        Dataset, task, seed, number of trees, tree parameters, library versions, fit seconds.
    val_votes, test_votes : sdwec.votes.Votes
        The splits' votes compressed to unique rows with counts, once per pool (and kept in
        the cache entry): what every combiner, every accuracy and the solver read.
        :meth:`votes` returns them by split name.
    """

    classes: np.ndarray
    X_train: np.ndarray
    y_train: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    P_val: np.ndarray
    P_test: np.ndarray
    ensemble: BaggingClassifier
    estimators: list
    single_tree: DecisionTreeClassifier
    single_val: np.ndarray
    single_test: np.ndarray
    prior: np.ndarray
    meta: dict
    val_votes: Votes = field(default=None, repr=False)
    test_votes: Votes = field(default=None, repr=False)

    def __post_init__(self):
        if self.val_votes is None:
            self.val_votes = compress_votes(self.P_val, self.y_val, self.classes)
        if self.test_votes is None:
            self.test_votes = compress_votes(self.P_test, self.y_test, self.classes)

    @property
    def n_trees(self) -> int:
        """Number of trees ``l`` in the pool."""
        return int(self.P_val.shape[1])

    @property
    def task(self) -> str:
        """``"binary"`` or ``"multiclass"``."""
        return self.meta.get("task", "binary" if len(self.classes) == 2 else "multiclass")

    def votes(self, split: str) -> Votes:
        """Compressed votes of a split: ``"val"`` (where weights are found) or ``"test"``.

        Returns
        -------
        sdwec.votes.Votes
            Pass the validation votes to :func:`sdwec.solve` directly (``solve(votes)``).
        """
        if split == "val":
            return self.val_votes
        if split == "test":
            return self.test_votes
        raise ValueError(f"split must be 'val' or 'test', got {split!r}")

    @property
    def table(self) -> Votes:
        """The validation votes under their former name, kept for ``solve(pool.table, None)``
        callers; new code says ``pool.votes("val")``."""
        return self.val_votes


def cache_dir() -> Path:
    """Folder of the pool cache: ``$SDWEC_CACHE_DIR`` if set, else ``~/.cache/sdwec``."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "sdwec"


def split_indices(y, seed):
    """Stratified 80 % / 10 % / 10 % split of row indices.

    Rows are shuffled within each class (seeded), the classes are laid end to end, and the
    rows are dealt in a repeating pattern of ten positions: eight to training, one to
    validation, one to test. Every class is therefore split 80/10/10 up to rounding, and the
    rounding remainders are spread over the classes instead of all falling on one split.

    Parameters
    ----------
    y : array-like of shape (n,)
        Labels.
    seed : int
        Seed of the shuffle; the same seed gives the same split.

    Returns
    -------
    idx_train, idx_val, idx_test : ndarray of int
        Sorted, disjoint row indices covering ``range(n)``.

    Raises
    ------
    DataError
        If there are fewer than 10 rows (a split would be empty).
    """
    y = np.asarray(y)
    n = len(y)
    if n < 10:
        raise DataError(f"need at least 10 rows to split 80/10/10, got {n}; add more rows")
    rng = np.random.default_rng(seed)
    _, codes = np.unique(y, return_inverse=True)
    shuffled = rng.permutation(n)
    order = shuffled[np.argsort(codes[shuffled], kind="stable")]
    # Position 4 of every ten goes to validation and 9 to test: a class of 5 to 9 rows still
    # gives one row to validation.
    slot = (np.arange(n) + int(rng.integers(10))) % 10
    idx_val = np.sort(order[slot == 4])
    idx_test = np.sort(order[slot == 9])
    idx_train = np.sort(order[(slot != 4) & (slot != 9)])
    return idx_train, idx_val, idx_test


def prediction_matrix(estimators, X, classes):
    """Predicted labels of every estimator, in the original label space.

    Parameters
    ----------
    estimators : list
        Fitted trees that predict *encoded* class indices ``0 .. len(classes) - 1``, as the
        members of a fitted :class:`~sklearn.ensemble.BaggingClassifier` do.
    X : ndarray of shape (m, d)
    classes : ndarray
        The labels the indices refer to (``BaggingClassifier.classes_``).

    Returns
    -------
    ndarray of shape (m, len(estimators))
    """
    classes = np.asarray(classes)
    # Trees split on C-ordered float32; converting once saves every tree doing it.
    X = np.ascontiguousarray(X, dtype=np.float32)
    codes = np.empty((X.shape[0], len(estimators)), dtype=np.intp)
    for j, tree in enumerate(estimators):
        codes[:, j] = _leaf_codes(tree)[tree.tree_.apply(X)]
    return classes[codes]


def _leaf_codes(tree):
    """The class code each node of a fitted tree predicts.

    ``DecisionTreeClassifier.predict`` returns ``classes_[argmax(value[leaf])]``; looking the
    leaf up in this table gives the same labels (ties too: the same ``argmax``) without the
    per-row probability array: 2-4x faster on the small test splits the dashboard times
    (``python -m benchmarks --only predict``).  A member fitted on fewer classes (fewer
    ``classes_``) still maps to the ensemble's codes.
    """
    return tree.classes_.take(tree.tree_.value[:, 0, :].argmax(axis=1)).astype(np.intp)


def _class_prior(y_val, classes):
    counts = np.array([(y_val == c).sum() for c in classes])
    return np.asarray(classes)[np.argsort(-counts, kind="stable")]


def _tree(tree_params, random_state=None):
    params = dict(tree_params or {})
    try:
        return DecisionTreeClassifier(random_state=random_state, **params)
    except TypeError as exc:
        raise ValueError(f"invalid tree parameter: {exc}") from None


def build_pool(X, y, n_trees=200, seed=0, tree_params=None, n_jobs=None, progress=None,
               meta=None):
    """Train a bagged pool of CART trees on arrays (no disk cache).

    Parameters
    ----------
    X : array-like of shape (n, d)
        Features (numeric).
    y : array-like of shape (n,)
        Labels; binary tasks use ``{-1, +1}``.
    n_trees : int, default=200
        Number of bagged trees ``l``.
    seed : int, default=0
        Seeds the split, the bootstrap samples and the trees.
    tree_params : dict, optional
        Extra :class:`~sklearn.tree.DecisionTreeClassifier` parameters (default: fully grown
        CART, as in the paper).
    n_jobs : int, optional
        Cores used to train the trees (joblib convention).
    progress : callable, optional
        ``progress(done, total, message)``, called as trees are trained and then predicted.
    meta : dict, optional
        Extra entries for :attr:`Pool.meta`.

    Returns
    -------
    Pool
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or len(X) != len(y):
        raise DataError(f"X must be 2-D with one row per label; got X {X.shape}, y {y.shape}")
    if not np.isfinite(X).all():
        raise DataError("X contains NaN or infinite values; impute or drop them first")
    n_trees = int(n_trees)
    if n_trees < 1:
        raise ValueError(f"n_trees must be at least 1, got {n_trees}")
    classes = np.unique(y)
    if len(classes) < 2:
        raise DataError("the target has a single class; a classifier needs at least two")
    report = progress or (lambda done, total, message: None)
    total = 2 * n_trees + 1
    start = time.perf_counter()

    idx_train, idx_val, idx_test = split_indices(y, seed)
    X_train, y_train = X[idx_train], y[idx_train]
    ensemble = BaggingClassifier(estimator=_tree(tree_params), n_estimators=0, warm_start=True,
                                 random_state=seed, n_jobs=n_jobs)
    # Warm-start growth in chunks draws the same per-tree seeds as one fit of n_trees.
    report(0, total, "training trees")
    while len(getattr(ensemble, "estimators_", [])) < n_trees:
        ensemble.n_estimators = min(n_trees, ensemble.n_estimators + _TRAIN_CHUNK)
        ensemble.fit(X_train, y_train)
        report(len(ensemble.estimators_), total, "training trees")
    single_tree = _tree(tree_params, random_state=seed).fit(X_train, y_train)
    fit_seconds = time.perf_counter() - start

    estimators = list(ensemble.estimators_)
    X_val, X_test = X[idx_val], X[idx_test]
    P_val = np.empty((len(idx_val), n_trees), dtype=classes.dtype)
    P_test = np.empty((len(idx_test), n_trees), dtype=classes.dtype)
    for lo in range(0, n_trees, _TRAIN_CHUNK):
        hi = min(n_trees, lo + _TRAIN_CHUNK)
        P_val[:, lo:hi] = prediction_matrix(estimators[lo:hi], X_val, ensemble.classes_)
        P_test[:, lo:hi] = prediction_matrix(estimators[lo:hi], X_test, ensemble.classes_)
        report(n_trees + hi, total, "predicting")
    y_val = y[idx_val]
    info = {
        "task": "binary" if len(classes) == 2 else "multiclass",
        "seed": int(seed), "n_trees": n_trees, "tree_params": dict(tree_params or {}),
        "versions": _versions(), "fit_seconds": fit_seconds,
        "predict_seconds": time.perf_counter() - start - fit_seconds,
        "n_train": len(idx_train), "n_val": len(idx_val), "n_test": len(idx_test),
    }
    info.update(meta or {})
    pool = Pool(classes=classes, X_train=X_train, y_train=y_train, X_val=X_val, y_val=y_val,
                X_test=X_test, y_test=y[idx_test], P_val=P_val, P_test=P_test,
                ensemble=ensemble, estimators=estimators, single_tree=single_tree,
                single_val=single_tree.predict(X_val), single_test=single_tree.predict(X_test),
                prior=_class_prior(y_val, classes), meta=info)
    report(total, total, "done")
    return pool


def _versions():
    import sdwec

    return {"sklearn": sklearn.__version__, "numpy": np.__version__,
            "sdwec": sdwec.__version__, "format": _FORMAT}


def _cache_key(name, task, n_trees, seed, tree_params):
    return {"dataset": name, "task": task, "n_trees": int(n_trees), "seed": int(seed),
            "tree_params": dict(sorted((tree_params or {}).items())), "versions": _versions()}


def cache_path(name, task="binary", n_trees=200, seed=0, tree_params=None) -> Path:
    """Path of the cache entry of a shipped dataset's pool (which may not exist yet)."""
    key = _cache_key(name, task, n_trees, seed, tree_params)
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=repr).encode()).hexdigest()
    return cache_dir() / f"pool-{name}-{task}-l{int(n_trees)}-s{int(seed)}-{digest[:16]}.pkl"


def _read_entry(path: Path, key):
    """The cached Pool at ``path``, or None if it is missing or fails any check."""
    try:
        blob = path.read_bytes()
    except FileNotFoundError:
        return None
    head = len(_MAGIC) + _HEADER.size
    if len(blob) < head or not blob.startswith(_MAGIC):
        return None
    digest, length = _HEADER.unpack_from(blob, len(_MAGIC))
    payload = memoryview(blob)[head:]
    if len(payload) != length or hashlib.sha256(payload).digest() != digest:
        return None
    try:
        stored = pickle.loads(payload)
    except Exception:  # a checksummed payload that still fails to unpickle: rebuild
        return None
    if not isinstance(stored, dict) or stored.get("key") != key:
        return None
    pool = stored.get("pool")
    return pool if isinstance(pool, Pool) else None


_STALE_TEMP_SECONDS = 3600  # a temp file this old belongs to a writer that died


def _remove_stale_temp_files(folder: Path):
    now = time.time()
    for tmp in folder.glob(".tmp-*.pkl"):
        with contextlib.suppress(OSError):
            if now - tmp.stat().st_mtime > _STALE_TEMP_SECONDS:
                tmp.unlink()


def _write_entry(path: Path, key, pool: Pool):
    _remove_stale_temp_files(path.parent)
    payload = pickle.dumps({"key": key, "pool": pool}, protocol=pickle.HIGHEST_PROTOCOL)
    header = _MAGIC + _HEADER.pack(hashlib.sha256(payload).digest(), len(payload))
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".pkl")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(header)
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)  # atomic: readers see the old state or the whole new file
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def _locked(path: Path):
    # flock locks belong to the open file description, so separate opens exclude each other
    # across threads as well as processes.
    with open(path.with_suffix(".lock"), "a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def load_pool(name, task="binary", n_trees=200, seed=0, tree_params=None, n_jobs=None,
              progress=None, cache=True):
    """The pool of a shipped dataset, from the disk cache or trained (and cached).

    Parameters
    ----------
    name : str
        A name from :func:`sdwec.datasets.names`.
    task : {"binary", "multiclass"}, default="binary"
    n_trees, seed, tree_params, n_jobs, progress
        As in :func:`build_pool`.
    cache : bool, default=True
        Read and write the disk cache in :func:`cache_dir`.

    Returns
    -------
    Pool
    """
    from sdwec import datasets

    name = datasets.canonical_name(name)  # aliases share one entry; unknown names fail here
    if task not in datasets.tasks(name):
        raise DataError(f"task must be one of {datasets.tasks(name)}, got {task!r}")
    key = _cache_key(name, task, n_trees, seed, tree_params)

    def build():
        data = datasets.load(name, task)
        return build_pool(data.X, data.y, n_trees=n_trees, seed=seed, tree_params=tree_params,
                          n_jobs=n_jobs, progress=progress,
                          meta={"dataset": name, "task": task})

    if not cache:
        return build()
    path = cache_path(name, task, n_trees, seed, tree_params)
    pool = _read_entry(path, key)
    if pool is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path):
            pool = _read_entry(path, key)  # another process may have built it meanwhile
            if pool is None:
                pool = build()
                _write_entry(path, key, pool)
                return pool
    if progress is not None:
        progress(1, 1, "loaded from cache")
    return pool
