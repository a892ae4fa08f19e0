"""Bagged CART pools: splits, prediction matrices, and pools loaded through a disk cache.

A *pool* is the paper's ensemble before any combiner is applied: ``l`` CART trees trained by
bagging on an 80 % training split, and their predictions (in the original label space) on the
10 % validation split, where combiners find weights, and on the 10 % test split, where they are
scored.

:func:`load_pool` serves the pool of a shipped dataset or of a user's
:class:`~sdwec.datasets.Dataset` (an uploaded CSV) from the disk cache of :mod:`sdwec.cache`,
training it on a miss, because NSL-KDD pools take minutes to train on two cores. A
:class:`PoolKey` names a pool: the dataset (its name, or the fingerprint of an upload's data),
the task, ``l``, the seed and the tree parameters; the cache entry is keyed by it together
with the library versions and a format number.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from numbers import Integral
from pathlib import Path

import numpy as np
import sklearn
from sklearn.ensemble import BaggingClassifier
from sklearn.tree import DecisionTreeClassifier

import sdwec
from sdwec import cache as disk_cache
from sdwec import datasets
from sdwec.cache import CACHE_ENV, cache_dir
from sdwec.cluster import on_dask_cluster
from sdwec.errors import DataError
from sdwec.votes import (  # compress_votes' own steps
    Votes,
    _from_rows,
    _row_keys,
    _unique_keys,
    compress_votes,
    encode_labels,
    stack_votes,
)

__all__ = [
    "Pool", "PoolKey", "split_indices", "build_pool", "load_pool", "is_cached",
    "prediction_matrix", "in_bag_matrix", "cache_dir", "cache_path", "CACHE_ENV",
    "training_progress",
    "compact_labels",
]

# Bump when the pickled Pool layout changes (2: one Votes per split, no table; 3: each tree's
# bootstrap rows and the training rows' out-of-bag votes).
_FORMAT = 3
_TRAIN_CHUNK = 20  # trees per warm-start step, so progress is reported as the pool grows
# Progress is reported in units of work, not steps: growing a tree costs far more than
# predicting the validation and test rows with it (measured 10x on the small UCI sets to
# over 50x on NSL-KDD), so training counts for 95 % of the bar and an estimate of the time
# left made from the rate so far is roughly right from the start.
_PROGRESS_UNITS = 1000
_TRAINING_SHARE = 0.95


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
    in_bag_bits : ndarray of uint8 or None
        Which training rows each tree drew into its bootstrap sample, bit-packed along the
        rows (:attr:`in_bag` unpacks it); ``None`` for a pool built without the record.
    oob_votes : sdwec.votes.Votes or None
        The training rows' *out-of-bag* votes: a tree's vote where the row is not in its
        bootstrap sample, :data:`~sdwec.votes.NO_VOTE` where it is (``votes("oob")``); for a
        pool with a row budget (``meta["max_samples"]``), on a seeded sample of at most
        :data:`OOB_ROWS_WITH_BUDGET` training rows.
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
    in_bag_bits: np.ndarray = field(default=None, repr=False)
    oob_votes: Votes = field(default=None, repr=False)

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

    @property
    def in_bag(self) -> np.ndarray:
        """(n_train, l) bool: True where tree ``j`` drew training row ``i`` (at least once).

        Raises
        ------
        ValueError
            If the pool was built without recording the bootstrap samples.
        """
        if self.in_bag_bits is None:
            raise ValueError("this pool has no record of its bootstrap samples; rebuild it "
                             "with build_pool or load_pool")
        return np.unpackbits(self.in_bag_bits, axis=0, count=len(self.y_train)).astype(bool)

    def votes(self, split: str) -> Votes:
        """Compressed votes of a split.

        Parameters
        ----------
        split : {"val", "test", "oob", "oob+val"}
            ``"val"``: the validation rows, where the paper finds weights; ``"test"``: where
            they are scored; ``"oob"``: the training rows' out-of-bag votes (each tree votes
            only on the rows outside its bootstrap sample); ``"oob+val"``: those stacked with
            the validation rows (computed once per pool object).

        Returns
        -------
        sdwec.votes.Votes
            Pass them to :func:`sdwec.solve` directly (``solve(votes)``).
        """
        if split == "val":
            return self.val_votes
        if split == "test":
            return self.test_votes
        if split in ("oob", "oob+val"):
            if self.oob_votes is None:
                raise ValueError("this pool has no out-of-bag votes (it was built without "
                                 "its bootstrap samples); rebuild it with build_pool or "
                                 "load_pool")
            if split == "oob":
                return self.oob_votes
            stacked = self.__dict__.get("_stacked_votes")
            if stacked is None:
                stacked = self.__dict__["_stacked_votes"] = stack_votes(self.oob_votes,
                                                                        self.val_votes)
            return stacked
        raise ValueError(f"split must be 'val', 'test', 'oob' or 'oob+val', got {split!r}")

    def __getstate__(self):
        # The stacked votes are recomputed on demand: cached entries stay lean.
        state = dict(self.__dict__)
        state.pop("_stacked_votes", None)
        return state


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
    return np.asarray(classes)[_prediction_codes(estimators, X)]


def _prediction_codes(estimators, X, dtype=np.intp):
    """Class index predicted by every estimator, as ``dtype``: (m, len(estimators))."""
    # Trees split on C-ordered float32; converting once saves every tree doing it.
    X = np.ascontiguousarray(X, dtype=np.float32)
    codes = np.empty((X.shape[0], len(estimators)), dtype=dtype)
    for j, tree in enumerate(estimators):
        codes[:, j] = _leaf_codes(tree)[tree.tree_.apply(X)]
    return codes


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


def _tree(tree_params, random_state=None, cls=DecisionTreeClassifier):
    params = dict(tree_params or {})
    try:
        return cls(random_state=random_state, **params)
    except TypeError as exc:
        raise ValueError(f"invalid tree parameter: {exc}") from None


class DrawnRowsTree(DecisionTreeClassifier):
    """The paper's CART tree, fitted on the rows its bootstrap drew instead of on all of them.

    :class:`~sklearn.ensemble.BaggingClassifier` hands each member *every* training row,
    with the bootstrap counts as ``sample_weight`` (0 for a row not drawn). The tree drops
    the zero-weight rows itself before it grows, but its ``fit`` first checks, sorts and
    counts all ``n`` rows' labels and weights: with a row budget of 5,000 rows on 960,000
    training rows that was 80 ms a tree, 16 s of a 25 s pool, for trees that take a few
    milliseconds to grow. Given the drawn rows only (in the same order, with the same counts
    as weights, the same random state) the tree grows on exactly what it grew on before,
    so it is the same tree (tests/test_pool.py compares every node with scikit-learn's own
    bagging). Its ``classes_`` then hold only the classes drawn, which every predict path
    maps back (:func:`_leaf_codes`, ``BaggingClassifier.predict_proba``).

    Parameters that depend on the number of rows ``fit`` is given (fractional
    ``min_samples_split`` or ``min_samples_leaf``) or on every row's label (``class_weight``)
    would change meaning, so with those the tree is fitted on all rows, as before.
    """

    def fit(self, X, y, sample_weight=None, check_input=True):
        if sample_weight is not None and self._drawn_rows_are_enough():
            drawn = np.flatnonzero(sample_weight)
            X, y, sample_weight = X[drawn], y[drawn], sample_weight[drawn]
        return super().fit(X, y, sample_weight=sample_weight, check_input=check_input)

    def _drawn_rows_are_enough(self):
        return (self.class_weight is None
                and not isinstance(self.min_samples_split, float)
                and not isinstance(self.min_samples_leaf, float))


@on_dask_cluster
def build_pool(X, y, n_trees=200, seed=0, tree_params=None, n_jobs=None, progress=None,
               meta=None, max_samples=None):
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
        Cores used to train the trees (joblib convention); with ``$SDWEC_DASK_SCHEDULER``
        set, the Dask cluster's workers instead, unless 1 (:mod:`sdwec.cluster`).
    progress : callable, optional
        ``progress(done, total, message)``, called as trees are trained and then predicted;
        ``done / total`` is the share of the work done (training weighs 95 %).
    meta : dict, optional
        Extra entries for :attr:`Pool.meta`.
    max_samples : int, optional
        A row budget per tree: each tree draws this many training rows (with replacement)
        instead of as many as the training split holds, scikit-learn's bagging
        ``max_samples``. The cost of a tree follows its rows, so this is the knob for large
        files (:mod:`sdwec.budget`); the validation and test rows stay whole. Default: a
        full bootstrap, as in the paper. Capped at the training rows.

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
    total = _PROGRESS_UNITS

    def trained(k):
        return int(round(_TRAINING_SHARE * total * k / n_trees))

    def predicted(k):
        return trained(n_trees) + int(round((1 - _TRAINING_SHARE) * total * k / n_trees))
    start = time.perf_counter()

    idx_train, idx_val, idx_test = split_indices(y, seed)
    X_train, y_train = X[idx_train], y[idx_train]
    rows_per_tree = None if max_samples is None else min(int(max_samples), len(idx_train))
    ensemble = BaggingClassifier(estimator=_tree(tree_params, cls=DrawnRowsTree),
                                 n_estimators=0, warm_start=True, random_state=seed,
                                 n_jobs=n_jobs,
                                 # 1.0 (every training row) is the default; scikit-learn
                                 # before 1.8 refuses None.
                                 max_samples=1.0 if rows_per_tree is None else rows_per_tree)
    # Warm-start growth in chunks draws the same per-tree seeds as one fit of n_trees.
    report(0, total, "training trees")
    samples = []
    # Trees split on float32 and copy anything else at every fit: on a large split that copy
    # cost more than growing a tree on a small row budget. Same trees either way.
    X_fit = np.ascontiguousarray(X_train, dtype=np.float32)
    while len(getattr(ensemble, "estimators_", [])) < n_trees:
        ensemble.n_estimators = min(n_trees, ensemble.n_estimators + _TRAIN_CHUNK)
        ensemble.fit(X_fit, y_train)
        samples += _new_samples(ensemble, ensemble.n_estimators - len(samples))
        report(trained(len(ensemble.estimators_)), total,
               f"trained {len(ensemble.estimators_)} of {n_trees} trees")
    # With a row budget the single tree, and the out-of-bag votes, use a seeded sample of the
    # training rows too, so that no step costs the whole training split per tree.
    single_rows, oob_rows = _budget_rows(len(idx_train), rows_per_tree, seed)
    single_tree = _tree(tree_params, random_state=seed).fit(X_fit[single_rows],
                                                            y_train[single_rows])
    del X_fit
    fit_seconds = time.perf_counter() - start

    estimators = list(ensemble.estimators_)
    X_val, X_test, X_oob = X[idx_val], X[idx_test], X_train[oob_rows]
    # Class indices in one byte: the votes are compressed from them directly, and the
    # labels of P_val and P_test are looked up once at the end (8x less memory than labels).
    code_dtype = np.min_scalar_type(len(classes))
    codes = {name: np.empty((len(rows), n_trees), dtype=code_dtype)
             for name, rows in (("val", X_val), ("test", X_test), ("oob", X_oob))}
    for lo in range(0, n_trees, _TRAIN_CHUNK):
        hi = min(n_trees, lo + _TRAIN_CHUNK)
        for name, rows in (("val", X_val), ("test", X_test), ("oob", X_oob)):
            codes[name][:, lo:hi] = _prediction_codes(estimators[lo:hi], rows, code_dtype)
        report(predicted(hi), total, "predicting the training, validation and test rows")
    labels = compact_labels(classes)
    P_val, P_test = labels[codes["val"]], labels[codes["test"]]
    in_bag = in_bag_matrix(samples, len(idx_train))
    y_val = y[idx_val]
    info = {
        "task": "binary" if len(classes) == 2 else "multiclass",
        "seed": int(seed), "n_trees": n_trees, "tree_params": dict(tree_params or {}),
        "max_samples": rows_per_tree,
        "versions": _versions(), "fit_seconds": fit_seconds,
        "predict_seconds": time.perf_counter() - start - fit_seconds,
        "n_train": len(idx_train), "n_val": len(idx_val), "n_test": len(idx_test),
    }
    info.update(meta or {})
    pool = Pool(classes=classes, X_train=X_train, y_train=y_train, X_val=X_val, y_val=y_val,
                X_test=X_test, y_test=y[idx_test], P_val=P_val, P_test=P_test,
                ensemble=ensemble, estimators=estimators, single_tree=single_tree,
                single_val=single_tree.predict(X_val), single_test=single_tree.predict(X_test),
                prior=_class_prior(y_val, classes), meta=info,
                in_bag_bits=np.packbits(in_bag, axis=0),
                val_votes=_chunked_votes(codes["val"], y_val, classes),
                test_votes=_chunked_votes(codes["test"], y[idx_test], classes),
                oob_votes=_chunked_votes(codes["oob"], y_train[oob_rows], classes,
                                         in_bag[oob_rows]))
    report(total, total, "done")
    return pool


def compact_labels(classes):
    """Integer classes in the smallest integer type that holds them (int8 for ±1 labels):
    the prediction matrices, the pool's largest arrays, take 8x less memory than int64."""
    if classes.dtype.kind in "iu":
        for dtype in (np.int8, np.int16, np.int32):
            info = np.iinfo(dtype)
            if info.min <= classes.min() and classes.max() <= info.max:
                return classes.astype(dtype)
    return classes


#: Out-of-bag rows kept when a row budget is set: the solver's cost grows with them.
OOB_ROWS_WITH_BUDGET = 100_000
VOTES_CHUNK = 16_384  # rows compressed at a time, so memory stays flat on large splits


def _budget_rows(n_train, rows_per_tree, seed):
    """Training rows of the single tree and of the out-of-bag votes (all without a budget).

    With a row budget, the single tree fits on ``rows_per_tree`` rows and the out-of-bag
    votes are taken on at most :data:`OOB_ROWS_WITH_BUDGET` rows, both seeded samples without
    replacement (sorted); a separate stream of ``seed``, so the split and the trees are the
    same as without a budget.
    """
    if rows_per_tree is None:
        return slice(None), slice(None)
    rng = np.random.default_rng([int(seed), 1])
    single = np.sort(rng.choice(n_train, rows_per_tree, replace=False))
    oob = np.sort(rng.choice(n_train, min(n_train, OOB_ROWS_WITH_BUDGET), replace=False))
    return single, oob


def _chunked_votes(codes, y, classes, in_bag=None):
    """``compress_votes(classes[codes], y, classes, voted=~in_bag)`` from the members' class
    indices ``codes`` (as :func:`_prediction_codes` gives them), writing the key rows by
    chunks into one byte per entry: the same Votes (keyed and sorted by :mod:`sdwec.votes`
    itself), without int64 copies of the whole matrix or a second encoding of the labels."""
    K = len(classes)
    rows = np.empty((len(codes), codes.shape[1] + 1), dtype=np.uint8 if K < 255 else np.uint32)
    for lo in range(0, len(codes), VOTES_CHUNK):
        part = rows[lo:lo + VOTES_CHUNK, :-1]
        part[...] = codes[lo:lo + VOTES_CHUNK]
        if in_bag is not None:
            part[in_bag[lo:lo + VOTES_CHUNK]] = K   # K: did not vote
    rows[:, -1] = encode_labels(y, classes, "y")
    first, counts = _unique_keys(_row_keys(rows), None)
    return _from_rows(rows[first], counts, classes)


def _new_samples(ensemble, n_new):
    """Bootstrap rows of the ``n_new`` trees the last warm-start ``fit`` added.

    ``BaggingClassifier.estimators_samples_`` regenerates the rows from the seeds of the last
    call to ``fit`` only (scikit-learn 1.9 keeps ``_seeds`` of the latest warm-start step), so
    after growing in chunks it no longer covers the whole pool: record each chunk's rows as
    it is trained. Taking the last ``n_new`` also holds if a later version covers all trees.
    """
    samples = ensemble.estimators_samples_
    if len(samples) < n_new:
        raise RuntimeError(f"scikit-learn reported the bootstrap rows of {len(samples)} trees "
                           f"after adding {n_new}; cannot record the pool's bootstrap samples")
    return [np.asarray(s) for s in samples[len(samples) - n_new:]]


def in_bag_matrix(samples, n_rows):
    """(n_rows, l) bool matrix, True where tree ``j`` drew row ``i`` into its sample.

    Parameters
    ----------
    samples : list of array-like of int
        Each tree's bootstrap row indices (repeats allowed), e.g.
        ``BaggingClassifier.estimators_samples_`` of a single fit.
    n_rows : int
        Number of training rows.

    Returns
    -------
    ndarray of bool
    """
    in_bag = np.zeros((n_rows, len(samples)), dtype=bool)
    for j, rows in enumerate(samples):
        in_bag[np.asarray(rows, dtype=np.intp), j] = True
    return in_bag


def _versions():
    return {"sklearn": sklearn.__version__, "numpy": np.__version__,
            "sdwec": sdwec.__version__, "format": _FORMAT}


_UPLOAD_PREFIX = "sha256:"  # PoolKey.source of an upload; no dataset name has a colon


@dataclass(frozen=True)
class PoolKey:
    """Everything that determines a pool: frozen and hashable, one key per pool.

    Build it with :meth:`for_dataset`. It keys the disk cache (with the library versions and
    a format number) and is meant to key in-memory caches too (e.g. the dashboard's).

    Attributes
    ----------
    source : str
        A shipped dataset's canonical name, or ``"sha256:<hex>"``: the
        :attr:`~sdwec.datasets.Dataset.fingerprint` of a user's dataset.
    task : {"binary", "multiclass"}
    n_trees : int
        Number of bagged trees ``l``.
    seed : int
        Seed of the split, the bootstrap samples and the trees.
    tree_params : tuple of (str, object) pairs
        Extra :class:`~sklearn.tree.DecisionTreeClassifier` parameters, sorted by name
        (a dict is accepted and converted).
    max_samples : int or None
        Row budget per tree (:func:`build_pool`); ``None``, a full bootstrap, keeps the
        cache key of pools made before the budget existed.
    """

    source: str
    task: str
    n_trees: int = 200
    seed: int = 0
    tree_params: tuple = ()
    max_samples: int | None = None

    def __post_init__(self):
        if not isinstance(self.source, str) or not self.source:
            raise TypeError(f"source must be a dataset name or an upload's fingerprint, "
                            f"got {self.source!r}")
        if not self.is_upload:
            # Aliases share one key; an unknown name fails here with the valid names.
            object.__setattr__(self, "source", datasets.canonical_name(self.source))
        if self.task not in datasets.TASKS:
            raise DataError(f"task must be one of {datasets.TASKS}, got {self.task!r}")
        for name in ("n_trees", "seed"):
            value = getattr(self, name)
            if not isinstance(value, Integral) or isinstance(value, bool):
                raise TypeError(f"{name} must be an integer, got {value!r}")
            object.__setattr__(self, name, int(value))
        if self.n_trees < 1:
            raise ValueError(f"n_trees must be at least 1, got {self.n_trees}")
        if self.max_samples is not None:
            if not isinstance(self.max_samples, Integral) or isinstance(self.max_samples, bool) \
                    or self.max_samples < 1:
                raise ValueError(f"max_samples must be a positive integer or None, got "
                                 f"{self.max_samples!r}")
            object.__setattr__(self, "max_samples", int(self.max_samples))
        object.__setattr__(self, "tree_params", _sorted_params(self.tree_params))

    @classmethod
    def for_dataset(cls, dataset, task=None, n_trees=200, seed=0, tree_params=None,
                    max_samples=None):
        """The key of the pool of a shipped dataset (by name) or of a user's Dataset.

        Parameters
        ----------
        dataset : str or sdwec.datasets.Dataset
            A name from :func:`sdwec.datasets.names` (or an alias), or a Dataset such as
            :func:`sdwec.datasets.from_csv` returns, keyed by its fingerprint (so the same
            data gives the same key under any file name).
        task : {"binary", "multiclass"}, optional
            Default: ``"binary"`` for a name, the Dataset's own ``task`` for a Dataset
            (which is one task's view: another task is refused).
        n_trees : int, default=200
        seed : int, default=0
        tree_params : dict, optional
        max_samples : int, optional
            Row budget per tree (default: a full bootstrap).

        Returns
        -------
        PoolKey
        """
        if isinstance(dataset, datasets.Dataset):
            if task is not None and task != dataset.task:
                raise DataError(
                    f"this dataset holds the {dataset.task} view of its labels, not "
                    f"{task!r}; read it again with from_csv(..., task={task!r})")
            return cls(_UPLOAD_PREFIX + dataset.fingerprint, dataset.task, n_trees, seed,
                       tree_params or (), max_samples)
        if isinstance(dataset, str):
            return cls(dataset, "binary" if task is None else task, n_trees, seed,
                       tree_params or (), max_samples)
        raise TypeError(f"dataset must be a dataset name or a sdwec.datasets.Dataset, not "
                        f"{type(dataset).__name__}")

    @property
    def is_upload(self) -> bool:
        """Whether the key names a user's dataset (by fingerprint), not a shipped one."""
        return self.source.startswith(_UPLOAD_PREFIX)

    def _label(self) -> str:
        """Readable start of the cache file name; an upload's carries the word that makes
        the cache evict it before the shipped datasets' pools (:func:`sdwec.cache.evict`)."""
        name = f"{disk_cache.UPLOAD_WORD}-{self.source[len(_UPLOAD_PREFIX):][:12]}" \
            if self.is_upload else self.source
        budget = "" if self.max_samples is None else f"-r{self.max_samples}"
        return f"pool-{name}-{self.task}-l{self.n_trees}-s{self.seed}{budget}"

    def _cache_key(self) -> dict:
        key = {"kind": "pool", "source": self.source, "task": self.task,
               "n_trees": self.n_trees, "seed": self.seed,
               "tree_params": dict(self.tree_params), "versions": _versions()}
        if self.max_samples is not None:   # absent for a full bootstrap: old keys still hit
            key["max_samples"] = self.max_samples
        return key


def _sorted_params(tree_params) -> tuple:
    pairs = dict(tree_params or {})
    for name, value in pairs.items():
        if not isinstance(name, str):
            raise TypeError(f"tree parameter names must be strings, got {name!r}")
        try:
            hash(value)
        except TypeError:
            raise TypeError(f"tree parameter {name}={value!r} is not hashable; pass numbers, "
                            "strings or None") from None
    return tuple(sorted(pairs.items()))


def _key(source, task, n_trees, seed, tree_params) -> PoolKey:
    """The PoolKey of ``load_pool``-style arguments (a key, a name or a Dataset)."""
    if isinstance(source, PoolKey):
        given = {"task": task, "n_trees": n_trees, "seed": seed, "tree_params": tree_params}
        fixed = [name for name, value in given.items() if value is not None]
        if fixed:
            raise TypeError(f"a PoolKey already fixes {', '.join(fixed)}; pass them to "
                            "PoolKey.for_dataset instead")
        return source
    return PoolKey.for_dataset(source, task, 200 if n_trees is None else n_trees,
                               0 if seed is None else seed, tree_params)


def cache_path(source, task=None, n_trees=None, seed=None, tree_params=None) -> Path:
    """Path of a pool's cache entry (which may not exist yet).

    Parameters
    ----------
    source, task, n_trees, seed, tree_params
        As in :func:`load_pool`.

    Returns
    -------
    pathlib.Path
    """
    key = _key(source, task, n_trees, seed, tree_params)
    return disk_cache.entry_path(key._cache_key(), key._label())


def is_cached(source, task=None, n_trees=None, seed=None, tree_params=None) -> bool:
    """Whether a pool is in the disk cache, so :func:`load_pool` will not train it.

    Reads only the entry's header (see :func:`sdwec.cache.contains`): cheap enough to ask
    for every pool a page offers.

    Parameters
    ----------
    source, task, n_trees, seed, tree_params
        As in :func:`load_pool`.

    Returns
    -------
    bool
    """
    key = _key(source, task, n_trees, seed, tree_params)
    return disk_cache.contains(key._cache_key(), key._label())


def training_progress(source, task=None, n_trees=None, seed=None, tree_params=None):
    """What the process training a pool into the disk cache last reported, or ``None``.

    Every training through :func:`load_pool` (a dashboard session, ``sdwec warm``, another
    replica) records its progress beside the entry's lock (:func:`sdwec.cache.read_progress`:
    a dead trainer's record is ignored).

    Parameters
    ----------
    source, task, n_trees, seed, tree_params
        As in :func:`load_pool`.

    Returns
    -------
    sdwec.cache.BuildProgress or None
    """
    key = _key(source, task, n_trees, seed, tree_params)
    return disk_cache.read_progress(key._cache_key(), key._label())


def load_pool(source, task=None, n_trees=None, seed=None, tree_params=None, n_jobs=None,
              progress=None, cache=True, *, dataset=None, waiting=None):
    """A pool from the disk cache, or trained (and cached).

    Parameters
    ----------
    source : str, sdwec.datasets.Dataset or PoolKey
        A shipped dataset's name (see :func:`sdwec.datasets.names`), a user's Dataset (from
        :func:`sdwec.datasets.from_csv`, cached under the fingerprint of its data), or a
        :class:`PoolKey`, which fixes ``task``, ``n_trees``, ``seed`` and ``tree_params``
        (leave those unset).
    task : {"binary", "multiclass"}, optional
        Default ``"binary"`` for a name; a Dataset's own task for a Dataset.
    n_trees : int, optional
        Number of trees ``l``; default 200.
    seed : int, optional
        Default 0.
    tree_params, n_jobs, progress
        As in :func:`build_pool`. ``progress(1, 1, "loaded from cache")`` reports a hit.
    cache : bool, default=True
        Read and write the disk cache in :func:`cache_dir`.
    dataset : sdwec.datasets.Dataset, optional
        The data of an upload's PoolKey, needed to train its pool when it is not cached.
    waiting : callable, optional
        ``waiting(record)`` about every half second while another thread or process trains
        this pool into the cache: its :class:`~sdwec.cache.BuildProgress`, or ``None`` if it
        has reported nothing (see :func:`sdwec.cache.get_or_build`). This call then reads
        the pool it trained.

    Returns
    -------
    Pool
        ``meta["dataset"]`` is the dataset's name (for an upload, the name of the Dataset
        passed to this call, if any); an upload's pool also has ``meta["fingerprint"]``.

    Raises
    ------
    ValueError
        Unknown dataset name; an upload's key whose pool is not cached and no ``dataset``
        (or one with other data).
    DataError
        A task the dataset does not offer.
    """
    key = _key(source, task, n_trees, seed, tree_params)
    if dataset is not None and not (isinstance(source, PoolKey) and key.is_upload):
        raise ValueError("dataset= is only for an upload's PoolKey (a Dataset or a dataset "
                         "name is its own data)")
    if isinstance(source, datasets.Dataset):
        dataset = source
    elif dataset is not None and _UPLOAD_PREFIX + dataset.fingerprint != key.source:
        raise ValueError("the dataset passed is not the data this PoolKey was made from")

    def build(report=progress):
        if key.is_upload:
            if dataset is None:
                raise ValueError("this upload's pool is not cached; pass its Dataset "
                                 "(load_pool(key, dataset=...)) to train it")
            data = dataset
            meta = {"dataset": data.name, "task": key.task,
                    "fingerprint": key.source[len(_UPLOAD_PREFIX):]}
        else:
            data = datasets.load(key.source, key.task)
            meta = {"dataset": key.source, "task": key.task}
        return build_pool(data.X, data.y, n_trees=key.n_trees, seed=key.seed,
                          tree_params=dict(key.tree_params), n_jobs=n_jobs, progress=report,
                          meta=meta, max_samples=key.max_samples)

    if not cache:
        return build()
    # The cache's report() records the progress for waiters elsewhere and forwards it.
    pool, built = disk_cache.get_or_build(key._cache_key(), build, key._label(),
                                          progress=progress, waiting=waiting)
    if not built:
        if dataset is not None:
            # The same data may have been uploaded under another file name.
            pool.meta["dataset"] = dataset.name
        if progress is not None:
            progress(1, 1, "loaded from cache")
    return pool
