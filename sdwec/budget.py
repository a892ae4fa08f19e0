"""What a pool will cost before it is trained: time and peak memory, and a row budget per tree.

A bagged pool of fully grown CART trees costs, per tree, about ``m log2(m) d`` to grow on
``m`` rows of ``d`` features, plus one pass over the whole training split (bagging draws
its rows as sample weights over it; the tree picks out the drawn ones), plus one descent per
predicted row (validation, test
and out-of-bag rows). :func:`estimate_pool` turns rows x features x trees into a range of
seconds and an upper estimate of peak memory; :func:`row_budget` picks the largest row
budget per tree (``max_samples`` of :func:`sdwec.pool.build_pool`) whose estimate fits a
target wait. The page *Your data* shows both before it trains anything.

How deep a tree grows depends on the data, not only on its size: on this project's 2-core
machine one fully grown tree costs 10 ns per unit ``m log2(m) d`` on NSL-KDD (shallow,
easy) and about 150 ns on noisy synthetic data (benchmarks/upload.py), so rows x features
alone leave a 15x range. :func:`measure_rate` grows one tree on a small sample of the
data itself (a few hundredths of a second) and narrows the range to a factor of about
three, what a shared machine's load changes anyway.

Calibration (2026-11-26, one core, by timing single trees grown with sample weights and
applied to rows on benchmarks/upload.py's synthetic data; the load average of the other
agents' work on the machine was 1 to 8; results/upload.md compares the estimates with
whole runs):

* growing: 150-170 ns per unit on noisy data at load 1-4, 310-460 ns at load 8
  (m = 2,000 to 80,000, d = 10); NSL-KDD 4.6-10 ns (results/benchmarks.md);
* bagging's pass over the training split: about 10 ns per row and tree idle, 30 ns at
  load 8 (a 960k-row split, float32), while every tree was handed all the rows; since the
  trees fit on their drawn rows only (:class:`sdwec.pool.DrawnRowsTree`), the bincount of
  the draws and the pick of the drawn rows, 2.5-4 ms a tree on 960k rows at load 3-5;
* predicting: 130 ns per row and tree at load 4 (trees of 10,000 rows, depth 25), 140-360
  ns at load 8.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from sklearn.tree import DecisionTreeClassifier

from sdwec.pool import OOB_ROWS_WITH_BUDGET, VOTES_CHUNK

__all__ = ["PoolEstimate", "estimate_pool", "wait_text", "row_budget", "trees_within",
           "measure_rate",
           "TARGET_SECONDS", "MEMORY_BUDGET_BYTES", "MIN_ROW_BUDGET", "BUDGET_STEPS"]

#: The wait a page accepts without asking: "about a minute".
TARGET_SECONDS = 60.0
#: Peak memory one upload may take (parse, pool, votes), beyond the server's own.
MEMORY_BUDGET_BYTES = 2 * 2**30
#: Smallest row budget offered: below it a tree sees too few rows to be worth growing.
MIN_ROW_BUDGET = 1_000

# Seconds per unit m*log2(m)*d of growing one tree: (easy data on an idle core, noisy data
# on an idle core). The high end of a range is the slow rate on a busy core (BUSY times).
_GROW_RATE = (10e-9, 150e-9)
_PASS_RATE = (3e-9, 5e-9)        # per training row and tree (bagging's sample weights)
_PREDICT_RATE = (50e-9, 130e-9)  # per predicted row and tree
BUSY = 2.0
# A fully grown tree's size: nodes per drawn row (0.14-0.22 measured on the benchmark's noisy
# data at 10,000-80,000 rows, up to about 1 for random labels) and bytes per node
# (scikit-learn's node record and a two-class value row).
_NODES_PER_ROW = 0.5
_NODE_BYTES = 80
# The ensemble's and the pool's own objects, whatever the size (measured: 10 MB beyond the
# arrays above at 100,000 rows).
_FIXED_BYTES = 32 * 2**20
# Seconds per (validation row x l^2) of one solve (25 iterations, the solver's defaults):
# 5.5-6.6e-9 measured at load 13-14 on 30,000 x 200 and 120,000 x 100 distinct ±1 rows;
# 1.2e-9 at load 3-5 on the 1.2M-row upload's 113,208 x 200 after the solver formed its
# Gram matrix by blocks (results/upload.md). The low end assumes an idle machine, the high
# end twice the busy measurement.
_SOLVE_RATE = (1e-9, 1.2e-8)
# A rate measured on the data itself, at the load of that moment: the range around it.
_MEASURED_SPREAD = (0.8, 2.5)
_PROBE_ROWS = 4_000
#: The row budgets offered: round numbers, so that a revisit finds the same pool.
BUDGET_STEPS = (1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000)


@dataclass(frozen=True)
class PoolEstimate:
    """A pool's estimated cost.

    Attributes
    ----------
    n_rows, n_features, n_trees : int
    max_samples : int or None
        Row budget per tree (``None``: a full bootstrap of the training split).
    seconds : (float, float)
        Wall-clock range on one core: the low end on an idle machine, the high end on a
        busy one.
    peak_bytes : int
        Upper estimate of the memory the pool's training and votes take on top of the
        parsed data (counted from the arrays :func:`sdwec.pool.build_pool` holds at once).
    solve_seconds : (float, float)
        Range of one SDWEC solve on the validation votes (every λ move costs one): about
        ``m l^2`` for ``m`` distinct validation rows, taken as all of them. A row budget
        does not change it; fewer trees do, quadratically.
    """

    n_rows: int
    n_features: int
    n_trees: int
    max_samples: int | None
    seconds: tuple
    peak_bytes: int
    solve_seconds: tuple = (0.0, 0.0)

    @property
    def n_train(self) -> int:
        """Training rows of the 80/10/10 split (about)."""
        return _split_rows(self.n_rows)[0]

    @property
    def n_val(self) -> int:
        """Validation rows, where every solve works (about a tenth of the rows)."""
        return max(1, self.n_rows // 10)

    @property
    def wait(self) -> str:
        """The time range as a person reads it (:func:`wait_text`)."""
        return wait_text(*self.seconds)

    def wait_for(self, pools) -> str:
        """The time range of ``pools`` pools like this one (one per split), as
        :func:`wait_text` reads it."""
        low, high = self.seconds
        return wait_text(pools * low, pools * high)

    def fits(self, seconds=TARGET_SECONDS, memory=MEMORY_BUDGET_BYTES) -> bool:
        """Whether even the high end of the time range fits ``seconds`` and the peak fits
        ``memory``."""
        return self.seconds[1] <= seconds and self.peak_bytes <= memory


def wait_text(low, high) -> str:
    """A range of seconds as a person reads it: ``"5–20 s"``, ``"40 s–3 min"``,
    ``"2–9 min"``, ``"4 s"`` when both ends round alike and ``"<1 s"`` below a second (never
    "1–1 s", which a reader took for a typo)."""
    if high < 0.5:
        return "<1 s"
    low, high = (max(1.0, s) for s in (low, high))
    if high < 90:
        text = f"{low:.0f}–{high:.0f} s"
    elif low >= 90:
        text = f"{low / 60:.0f}–{high / 60:.0f} min"
    else:
        return f"{low:.0f} s–{high / 60:.0f} min"
    ends, unit = text.split(" ")
    first, last = ends.split("–")
    return f"{last} {unit}" if first == last else text


def _split_rows(n_rows):
    n_train = max(2, int(round(0.8 * n_rows)))
    return n_train, max(1, n_rows - n_train)


def estimate_pool(n_rows, n_features, n_trees=200, max_samples=None, *, rate=None,
                  n_classes=2, label_bytes=8) -> PoolEstimate:
    """Time range and peak memory of training a pool (one core, as the dashboard does).

    Parameters
    ----------
    n_rows : int
        Rows of the whole dataset; 80 % train the trees.
    n_features, n_trees : int
    max_samples : int, optional
        Row budget per tree (capped at the training rows); default a full bootstrap.
    rate : float, optional
        Seconds per unit ``m log2(m) d`` measured on the data (:func:`measure_rate`); the
        range is then ``0.8 .. 2.5`` times the estimate it gives. Default: the calibrated
        range from easy data on an idle core to noisy data on a busy one.
    n_classes : int, default=2
    label_bytes : int, default=8
        Bytes of one predicted label in the pool's prediction matrices: 1 for ±1 labels
        (the pool stores integer labels in the smallest type), 8 for text labels.

    Returns
    -------
    PoolEstimate
    """
    n_rows, d, l = int(n_rows), max(1, int(n_features)), int(n_trees)
    if n_rows < 1 or l < 1:
        raise ValueError(f"need at least one row and one tree, got {n_rows} and {l}")
    n_train, n_held = _split_rows(n_rows)
    m = n_train if max_samples is None else max(1, min(int(max_samples), n_train))
    n_oob = n_train if max_samples is None else min(n_train, OOB_ROWS_WITH_BUDGET)
    grow_units = m * np.log2(max(m, 2)) * d
    predicted = n_held + n_oob

    def seconds(grow, pass_, predict):
        per_tree = grow * grow_units + pass_ * n_train + predict * predicted
        return float(l * per_tree + grow * grow_units)   # + the single tree

    if rate is None:
        low = seconds(_GROW_RATE[0], _PASS_RATE[0], _PREDICT_RATE[0])
        high = BUSY * seconds(_GROW_RATE[1], _PASS_RATE[1], _PREDICT_RATE[1])
    else:
        middle = seconds(float(rate), _PASS_RATE[1], _PREDICT_RATE[1])
        low, high = (middle * s for s in _MEASURED_SPREAD)
    solve_units = max(1, n_rows // 10) * l * l
    return PoolEstimate(n_rows, d, l, None if max_samples is None else m, (low, high),
                        _peak_bytes(n_rows, n_train, n_held, n_oob, d, l, n_classes,
                                    label_bytes, m),
                        tuple(float(r * solve_units) for r in _SOLVE_RATE))


def _peak_bytes(n_rows, n_train, n_held, n_oob, d, l, n_classes, label, m):
    """Bytes build_pool holds at its peak, beyond the dataset itself: an upper count of its
    largest arrays alive at once (the trees themselves are small beside them)."""
    code = 1 if n_classes < 255 else 4
    matrices = (n_rows * d * 8      # X as float64
                + n_train * d * 12  # the training split, and its float32 copy for the trees
                + n_held * d * 8)   # validation and test features
    held_votes = n_held * l * label   # P_val and P_test, as labels (or object pointers)
    # Compressing one chunk of rows: its codes (int64), labels looked up again, key bytes.
    compress = min(n_train, VOTES_CHUNK) * l * 17
    in_bag = n_train * l + n_train * l // 8   # the bool matrix and its packed bits
    oob = n_oob * l * (code + 1)    # the out-of-bag codes and where they voted
    # The trees themselves, and each tree's drawn rows (int64) kept for the in-bag record.
    trees = l * m * (_NODES_PER_ROW * _NODE_BYTES + 8)
    return int(_FIXED_BYTES + matrices + held_votes + in_bag + oob + compress + trees)


def row_budget(n_rows, n_features, n_trees=200, target_seconds=TARGET_SECONDS, *,
               rate=None, n_classes=2, label_bytes=8):
    """The largest row budget per tree whose estimate fits ``target_seconds``.

    Parameters
    ----------
    n_rows, n_features, n_trees, rate, n_classes, label_bytes
        As in :func:`estimate_pool`.
    target_seconds : float, default=TARGET_SECONDS
        The wait to fit, compared with the high end of the range.

    Returns
    -------
    int or None
        ``None`` when a full bootstrap already fits (no budget is needed); otherwise a
        round number of rows (:data:`BUDGET_STEPS`), at least :data:`MIN_ROW_BUDGET` even
        when that does not fit (the estimate then says so); ``None`` too when the training
        split is no larger than that minimum.
    """
    def high(max_samples):
        return estimate_pool(n_rows, n_features, n_trees, max_samples, rate=rate,
                             n_classes=n_classes, label_bytes=label_bytes).seconds[1]

    if high(None) <= target_seconds:
        return None
    n_train, _ = _split_rows(n_rows)
    fitting = [m for m in BUDGET_STEPS if m < n_train and high(m) <= target_seconds]
    if fitting:
        return fitting[-1]
    return MIN_ROW_BUDGET if MIN_ROW_BUDGET < n_train else None


def trees_within(n_rows, n_features, sizes, target_seconds=TARGET_SECONDS, *, rate=None,
                 n_classes=2, label_bytes=8):
    """The largest pool size among ``sizes`` whose full-bootstrap estimate fits the target.

    Returns
    -------
    int or None
        ``None`` when even the smallest size does not fit.
    """
    fitting = [l for l in sorted(sizes)
               if estimate_pool(n_rows, n_features, l, rate=rate, n_classes=n_classes,
                                label_bytes=label_bytes).seconds[1] <= target_seconds]
    return fitting[-1] if fitting else None


def measure_rate(X, y, seed=0, rows=_PROBE_ROWS):
    """Seconds per unit ``m log2(m) d`` of growing one fully grown tree on this data, now.

    Grows one CART tree on a seeded sample of ``rows`` rows (a bootstrap, as bagging
    draws); a few hundredths of a second on an idle core.

    Parameters
    ----------
    X : array-like of shape (n, d)
    y : array-like of shape (n,)
    seed : int, default=0
    rows : int, default=4000

    Returns
    -------
    float
    """
    X = np.asarray(X)
    rng = np.random.default_rng(seed)
    m = min(int(rows), len(X))
    sample = rng.integers(0, len(X), m)
    Xs = np.ascontiguousarray(X[sample], dtype=np.float32)
    ys = np.asarray(y)[sample]
    start = time.perf_counter()
    DecisionTreeClassifier(random_state=seed).fit(Xs, ys)
    elapsed = time.perf_counter() - start
    return elapsed / (m * np.log2(max(m, 2)) * max(1, X.shape[1]))
