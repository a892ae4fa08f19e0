"""One compressed form of an ensemble's votes: unique rows with counts.

Every consumer of votes -- the solver (:func:`sdwec.solve`), every combiner
(:mod:`sdwec.combiners`) and every accuracy -- takes the same :class:`Votes`. Rows with the
same member votes and the same label count the same in every sum over rows, so they are
stored once with a count (on NSL-KDD 12,597 validation rows become a few hundred).

Why one type, and why this one:

* ``codes`` (class indices) and ``labels`` keep what the combiners need (which class each
  member voted, not only whether it was right: a plurality vote over three classes needs the
  class), and the solver's input follows from them: its correctness matrix ``C`` (+1 right,
  -1 wrong) is :attr:`Votes.correctness`. Before, a pool carried two compressed forms side by
  side and the combiners expanded one back to ``m`` rows to compress it again.
* Two different (votes, label) rows can have the same correctness row (three classes: "all
  vote ``a``, label ``a``" and "all vote ``b``, label ``b``"). The solver needs each
  correctness row once, so :attr:`Votes.correctness_form` merges them by summing counts --
  over the ``u`` unique rows, never by expanding to ``m``. The merge sorts rows exactly as
  :func:`compress` does, so ``solve(votes)``, ``solve(compress(H, y))``, ``solve(H, y)`` and
  ``solve(correctness_matrix(P, y), ones)`` run on identical tables and give bitwise identical
  weights.
* :func:`compress` (the solver's public entry for ±1 matrices) returns the same type, in
  *correctness form*: classes ``[-1, +1]``, every label ``+1``, a member's code ``+1`` where
  it was right and ``-1`` where wrong; read as votes, that is the problem ``C w`` against an
  all-ones target, which is exactly what the solver minimises.

Members that did not vote. A code of ``-1`` (an entry 0 of a ±1 matrix) means "this member
did not vote on this row": the out-of-bag use, where a tree has no honest vote on the rows of
its own bootstrap sample. Such a member adds nothing to any class score, its correctness
entry is 0 (so ``C_s w`` sums over the members that voted), and it does not count towards its
own accuracy. Zeros are allowed everywhere a ±1 matrix is accepted (``H``, ``C``); labels
``y`` must still be ±1. Rows are compressed with two bit-planes (voted, right) when a zero is
present and with one (right) otherwise, so matrices without zeros keep the single-plane
speed.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cached_property

import numpy as np

__all__ = ["Votes", "compress_votes", "compress", "correctness_matrix", "stack_votes",
           "encode_labels", "NO_VOTE"]

NO_VOTE = -1
"""Code of a member that did not vote on a row (an entry 0 of a ±1 vote matrix)."""

_PM1_CLASSES = np.array([-1, 1])
_PM1_CLASSES.setflags(write=False)


@dataclass(frozen=True, eq=False)
class Votes:
    """Unique (votes, label) rows of an ensemble's predictions, with their counts.

    Attributes
    ----------
    codes : ndarray of shape (u, l), signed integers
        Class index (into ``classes``) voted by each member; :data:`NO_VOTE` (-1) where the
        member did not vote.
    labels : ndarray of shape (u,)
        Class index of the true label.
    counts : ndarray of shape (u,), int64 or float64
        How many original rows each unique row stands for; float64 for weighted rows
        (``compress_votes(..., sample_weight=...)``), where a row of weight ``k`` counts as
        ``k`` copies of it.
    classes : ndarray
        Sorted class labels.
    """

    codes: np.ndarray
    labels: np.ndarray
    counts: np.ndarray
    classes: np.ndarray

    def __post_init__(self):
        codes, labels, counts = self.codes, self.labels, self.counts
        if codes.ndim != 2 or labels.shape != (codes.shape[0],) or counts.shape != labels.shape:
            raise ValueError(f"Votes needs codes (u, l), labels (u,) and counts (u,); got "
                             f"{codes.shape}, {labels.shape} and {counts.shape}")
        for array in (codes, labels, counts):
            array.setflags(write=False)

    def __getstate__(self):
        # Pickle the four fields only: cached matrices are recomputed on demand, which keeps
        # cached pools small.
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __setstate__(self, state):
        self.__dict__.update(state)  # a frozen dataclass has no __setattr__ to go through
        self.__post_init__()

    @cached_property
    def m(self):
        """Number of original rows (int); their total weight (float) for weighted rows."""
        total = self.counts.sum()
        return float(total) if self.counts.dtype.kind == "f" else int(total)

    @cached_property
    def n_members(self) -> int:
        """Number of members ``l``."""
        return int(self.codes.shape[1])

    @cached_property
    def correctness(self) -> np.ndarray:
        """(u, l) float matrix: +1 where the member voted the true label, -1 where it voted
        another class, 0 where it did not vote (read-only)."""
        C = _correctness(self.codes, self.labels)
        C.setflags(write=False)
        return C

    @cached_property
    def correctness_form(self) -> Votes:
        """The same votes as the solver sees them: unique correctness rows with counts.

        Rows of :attr:`correctness` that are equal are merged (their counts summed) and
        sorted exactly as :func:`compress` sorts them, so the solver gets the same table
        whichever way the votes arrived.
        """
        # From the codes' two bit-planes, not from self.correctness: a float matrix of the
        # votes is not needed for this (on 120,000 x 200 votes it took a second to build),
        # and a pool kept in memory should not hold both.
        right = self.codes == self.labels[:, None]
        voted = self.codes != NO_VOTE
        voted = None if voted.all() else voted
        first, counts = _unique_pm1_rows(right, voted, self.counts)
        return _correctness_votes(right[first], None if voted is None else voted[first], counts)

    @cached_property
    def plurality_form(self) -> Votes:
        """The plurality vote's condition in the solver's form: one row per (row, rival class).

        A weighted plurality vote is right on a row exactly when the true class ``y`` scores
        more than every other class ``c``: ``Σ_{r votes y} w_r − Σ_{r votes c} w_r > 0``.  Each
        such inequality is a row with ``+1`` where a member votes ``y``, ``-1`` where it votes
        ``c`` and ``0`` elsewhere (another class, or no vote), against a target of ``+1``:
        Algorithm 1's form ``sgn(C w) = 1`` unchanged.  Only rivals that some member voted for
        get a row: with ``w >= 0`` a class nobody voted for scores 0, and ``y`` beats it
        whenever it beats any voted rival (a row whose members all vote ``y`` keeps its single
        row, ``+1``/``0``).  Each row carries its row's count; the solver still divides its
        data term by the number of rows (:func:`sdwec.solver.solve`), so a row sums its misses
        over its rivals.  For two classes every row has exactly one rival and its
        row is the correctness row: this form equals :attr:`correctness_form` bit for bit
        (``docs/algorithm.md`` derives it; ``tests/test_plurality.py`` checks it).

        Returns
        -------
        Votes
            In correctness form (classes ``[-1, +1]``, every label ``+1``).
        """
        codes, labels = self.codes, self.labels
        rival_voted = np.zeros((len(labels), len(self.classes)), dtype=bool)
        rows = np.repeat(np.arange(len(labels)), codes.shape[1])
        cast = codes.ravel().astype(np.intp)
        rival_voted[rows[cast >= 0], cast[cast >= 0]] = True
        rival_voted[np.arange(len(labels)), labels] = False
        # A row without a voted rival keeps one row, its rival "nobody" (code -2 matches none).
        lonely = ~rival_voted.any(axis=1)
        source, rival = np.nonzero(rival_voted)
        source = np.concatenate([source, np.flatnonzero(lonely)])
        rival = np.concatenate([rival, np.full(lonely.sum(), -2)])
        order = np.argsort(source, kind="stable")
        source, rival = source[order], rival[order]
        pair_codes = codes[source]
        right = pair_codes == labels[source][:, None]
        voted = right | (pair_codes == rival[:, None])
        voted = None if voted.all() else voted
        first, counts = _unique_pm1_rows(right, voted, self.counts[source])
        return _correctness_votes(right[first], None if voted is None else voted[first], counts)


def _correctness(codes, labels):
    # 2 * right - 1 in place, then 0 where no vote: the same matrix as nested np.where,
    # 2-3x faster on large tables (the solver's input is built from it on every solve).
    C = (codes == np.asarray(labels)[:, None]).astype(float)
    C *= 2.0
    C -= 1.0
    no_vote = codes == NO_VOTE
    if no_vote.any():
        C[no_vote] = 0.0
    return C


def _signed_codes_dtype(n_classes):
    return np.int8 if n_classes < 127 else np.int32


def _correctness_votes(right, voted, counts) -> Votes:
    """Votes in correctness form from the bit-planes of unique rows (``voted=None``: all)."""
    codes = right.astype(np.int8)
    if voted is not None:
        codes[~voted] = NO_VOTE
    votes = Votes(codes=codes, labels=np.ones(len(counts), dtype=np.intp),
                  counts=_as_counts(counts), classes=_PM1_CLASSES)
    # Its rows are unique correctness rows already: it is its own correctness form.
    votes.__dict__["correctness_form"] = votes
    return votes


def _as_counts(counts):
    """Row counts as int64, or as float64 when they are row weights."""
    counts = np.asarray(counts)
    return counts.astype(np.float64 if counts.dtype.kind == "f" else np.int64)


def _row_keys(packed):
    """Each row of a 2-D byte array as one opaque value: sorting these is far faster than
    ``np.unique(axis=0)``."""
    packed = np.ascontiguousarray(packed)
    return packed.view(np.dtype((np.void, packed.dtype.itemsize * packed.shape[1]))).ravel()


def _unique_keys(keys, weights):
    """First index of every distinct key (in sorted key order) and its total weight."""
    if weights is None:
        _, first, counts = np.unique(keys, return_index=True, return_counts=True)
        return first, counts
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    weights = _as_counts(weights)
    counts = np.zeros(len(first), dtype=weights.dtype)
    np.add.at(counts, inverse.ravel(), weights)
    return first, counts


def _unique_pm1_rows(right, voted=None, weights=None):
    """Distinct rows of a ±1/0 matrix given as its bit-planes ``right`` (+1) and ``voted``.

    Rows are bit-packed, one bit per entry and plane. ``voted=None`` (every entry voted) leaves
    the second plane out, so a matrix without zeros is keyed, and sorted, exactly as before
    zeros were allowed. Callers pass ``None`` exactly when no entry is 0, so a matrix and its
    compressed rows are always keyed the same way.

    Returns
    -------
    first : ndarray of int
        Index of the first row of each distinct row, in sorted key order.
    counts : ndarray of int64
        How many rows (or how much of ``weights``) each distinct row stands for.
    """
    packed = np.packbits(right, axis=1)
    if voted is not None:
        packed = np.concatenate([np.packbits(voted, axis=1), packed], axis=1)
    return _unique_keys(_row_keys(packed), weights)


def encode_labels(values, classes, what):
    """Index of every label of ``values`` in the sorted ``classes``.

    Raises
    ------
    ValueError
        Naming ``what`` when a label is not among ``classes``.
    """
    classes = np.asarray(classes)
    values = np.asarray(values)
    idx = np.clip(np.searchsorted(classes, values), 0, len(classes) - 1)
    if not np.array_equal(classes[idx], values):
        raise ValueError(f"{what} contains labels that are not among classes {classes.tolist()}")
    return idx


def compress_votes(P, y, classes=None, *, voted=None, sample_weight=None) -> Votes:
    """Compress a prediction matrix and its labels into unique rows with counts.

    Parameters
    ----------
    P : array-like of shape (m, l)
        Predicted labels of every member.
    y : array-like of shape (m,)
        True labels.
    classes : array-like, optional
        Sorted class labels (default: the labels seen in ``P`` and ``y``).
    voted : array-like of bool, shape (m, l), optional
        False where the member did not vote on the row (its entry of ``P`` is then ignored);
        default: every member voted on every row.
    sample_weight : array-like of shape (m,), optional
        Non-negative weight of every row: a row of weight ``k`` counts as ``k`` copies of it
        (``counts`` are then float64 sums of weights, ``m`` their total).  Default: every row
        counts once (int64 counts).

    Returns
    -------
    Votes
    """
    P = np.asarray(P)
    y = np.asarray(y)
    if P.ndim != 2 or y.ndim != 1 or P.shape[0] != y.shape[0]:
        raise ValueError(f"P must be (m, l) with one row per label; got P {P.shape}, y {y.shape}")
    if P.shape[0] == 0 or P.shape[1] == 0:
        raise ValueError("P must have at least one row and one member")
    if voted is not None:
        voted = np.asarray(voted, dtype=bool)
        if voted.shape != P.shape:
            raise ValueError(f"voted must have the shape of P {P.shape}; got {voted.shape}")
    if classes is None:
        seen = P if voted is None else P[voted]
        classes = np.unique(np.concatenate([np.unique(seen), np.unique(y)]))
    else:
        classes = np.asarray(classes)
    K = len(classes)
    # One unsigned byte per entry while the codes fit; K stands for "did not vote".
    dtype = np.uint8 if K < 255 else np.uint32
    rows = np.empty((P.shape[0], P.shape[1] + 1), dtype=dtype)
    if voted is None:
        rows[:, :-1] = encode_labels(P, classes, "P")
    else:
        rows[:, :-1] = K
        rows[:, :-1][voted] = encode_labels(P[voted], classes, "P")
    rows[:, -1] = encode_labels(y, classes, "y")
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype=float)
        if sample_weight.shape != y.shape or not np.isfinite(sample_weight).all() \
                or (sample_weight < 0).any() or not sample_weight.sum() > 0:
            raise ValueError(f"sample_weight must hold one finite, non-negative weight per row "
                             f"({y.shape[0]}), not all zero; got shape {sample_weight.shape}")
    first, counts = _unique_keys(_row_keys(rows), sample_weight)
    return _from_rows(rows[first], counts, classes)


def _from_rows(rows, counts, classes) -> Votes:
    """Votes from unique key rows (member codes then the label, K meaning "did not vote")."""
    K = len(classes)
    codes = rows[:, :-1].astype(_signed_codes_dtype(K))
    codes[rows[:, :-1] == K] = NO_VOTE
    return Votes(codes=codes, labels=rows[:, -1].astype(np.intp),
                 counts=_as_counts(counts), classes=classes)


def stack_votes(*parts: Votes) -> Votes:
    """The votes of several row sets together (e.g. out-of-bag rows and validation rows).

    Identical rows of different parts are merged by summing their counts; nothing is expanded
    to the original rows.

    Parameters
    ----------
    *parts : Votes
        Votes of the same members over the same classes.

    Returns
    -------
    Votes
    """
    if not parts:
        raise ValueError("stack_votes needs at least one Votes")
    classes = parts[0].classes
    for part in parts[1:]:
        if part.n_members != parts[0].n_members or not np.array_equal(part.classes, classes):
            raise ValueError("stacked votes must have the same members and the same classes")
    K = len(classes)
    dtype = np.uint8 if K < 255 else np.uint32
    rows = np.concatenate([np.column_stack([np.where(p.codes == NO_VOTE, K, p.codes), p.labels])
                           for p in parts]).astype(dtype)
    first, counts = _unique_keys(_row_keys(rows), np.concatenate([p.counts for p in parts]))
    return _from_rows(rows[first], counts, classes)


# --------------------------------------------------------------------------- ±1 matrices


def _as_pm1(a, name, allow_zero):
    """Validate an array of ±1 (and 0 if allowed) without copying integer input to float."""
    allowed = "-1, 0 (did not vote) and +1" if allow_zero else "-1 and +1"
    arr = np.asarray(a)
    if arr.dtype.kind not in "biuf":
        try:
            arr = arr.astype(float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be numeric with entries {allowed} ({exc})") from None
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values; it must hold only {allowed}")
    if arr.dtype == np.int8 and allow_zero:
        # -1, 0, 1 are exactly the bytes that land on 0, 1, 2 after adding 1 (wrapping).
        bad = arr.view(np.uint8) + np.uint8(1) > 2
    else:
        bad = (arr != 1) & (arr != -1)
        if allow_zero:
            bad &= arr != 0
    if bad.any():
        example = arr[bad].flat[0].item()
        raise ValueError(f"{name} must hold only {allowed}; found {int(bad.sum())} other "
                         f"value(s), e.g. {example!r}")
    return arr


def compress(H, y=None) -> Votes:
    """Collapse identical rows of the correctness matrix ``y * H`` into :class:`Votes`.

    The result is in correctness form (see the module docstring): ``correctness`` holds the
    unique rows of ``y * H`` and ``counts`` their multiplicities. Do this once per pool; then
    every ``solve(votes, None, ...)`` skips it.

    Parameters
    ----------
    H : array_like of shape (m, l)
        Votes in {-1, +1}, or 0 where a member did not vote.
    y : array_like of shape (m,), optional
        Labels in {-1, +1}; ``None`` means ``H`` is already a correctness matrix.

    Returns
    -------
    Votes
    """
    H = _as_pm1(H, "H", allow_zero=True)
    if H.ndim != 2:
        raise ValueError(f"H must be a 2-D array (rows x classifiers); got {H.ndim} dimension(s)")
    m, l = H.shape
    if m == 0 or l == 0:
        raise ValueError(f"H must have at least one row and one classifier; got shape {H.shape}")
    right = H > 0
    if y is not None:
        y = _as_pm1(y, "y", allow_zero=False)
        if y.ndim != 1 or y.shape[0] != m:
            raise ValueError(f"y must be 1-D with one label per row of H ({m}); got shape {y.shape}")
        right = right == (y > 0)[:, None]
    # count_nonzero is one fast pass; the voted plane is only built when a zero exists.
    voted = None if np.count_nonzero(H) == H.size else H != 0
    if voted is not None:
        right &= voted
    first, counts = _unique_pm1_rows(right, voted)
    return _correctness_votes(right[first], None if voted is None else voted[first], counts)


def correctness_matrix(predictions, y, voted=None):
    """Correctness matrix: ``+1`` where member ``r`` is right on row ``s``, else ``-1``.

    Multi-class SDWEC solves ``solve(correctness_matrix(P, y), np.ones(m))``.  For labels in
    {-1, +1} this equals ``y[:, None] * H``, so the binary problem is a special case.

    Parameters
    ----------
    predictions : array_like of shape (m, l)
        Predicted labels of ``l`` members on ``m`` rows, in the labels' own space.
    y : array_like of shape (m,)
        True labels.
    voted : array_like of bool, shape (m, l), optional
        False where the member did not vote on the row: the entry is then 0.

    Returns
    -------
    ndarray of shape (m, l), dtype int8
    """
    P = np.asarray(predictions)
    y = np.asarray(y)
    if P.ndim != 2:
        raise ValueError(f"predictions must be a 2-D array (rows x members); got {P.ndim} dimension(s)")
    if y.ndim != 1 or y.shape[0] != P.shape[0]:
        raise ValueError(
            f"y must be 1-D with one label per row of predictions ({P.shape[0]}); got shape {y.shape}"
        )
    C = np.where(P == y[:, None], 1, -1).astype(np.int8)
    if voted is not None:
        voted = np.asarray(voted, dtype=bool)
        if voted.shape != P.shape:
            raise ValueError(f"voted must have the shape of predictions {P.shape}; got {voted.shape}")
        C[~voted] = 0
    return C
