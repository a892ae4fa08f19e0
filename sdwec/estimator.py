"""SDWEC as a scikit-learn classifier.

:class:`SDWECClassifier` trains a bagged CART pool on one part of the data, finds sparse
non-negative member weights with Algorithm 1 (:func:`sdwec.solver.solve`) on a stratified
held-out part, and keeps only the members with a non-zero weight, so prediction evaluates the
pruned ensemble only.  A pool that is already fitted is used as it is when it comes wrapped in
:class:`sklearn.frozen.FrozenEstimator` (see ``docs/estimator.md``).

Beyond the paper (``docs/oob.md``), the weights can also be fitted on the pool's out-of-bag
votes stacked with the held-out votes (``fit_on``), at a target ensemble size
(``n_members``), with the kept members voting equally (``vote``); the defaults are the paper's.
"""

from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.ensemble import (
    BaggingClassifier, ExtraTreesClassifier, RandomForestClassifier,
)
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from sdwec import oob
from sdwec.pool import in_bag_matrix
from sdwec.solver import check_params as _check_solver_params
from sdwec.solver import compress, correctness_matrix, solve

__all__ = ["SDWECClassifier"]

_SPARSE_FORMATS = ("csr", "csc")
_ENSEMBLES = (BaggingClassifier, RandomForestClassifier, ExtraTreesClassifier)

# Scores within this share of the total weight of the best one are tied: the same weights
# summed in another order differ in the last bits (the tolerance of sdwec.combiners.vote).
_TIE_TOLERANCE = 1e-9
# What predict_proba moves to the tie winner, so that its argmax names the winner.  Far below
# the tolerance, and removed by check_decision_proba_consistency's rounding to 10 decimals.
_TIE_MARGIN = 1e-12
_FIT_ON = ("validation", "oob+validation")
_VOTES = ("weighted", "uniform")


class _Members:
    """A fitted pool, flattened to what voting needs.

    ``estimators[j]`` predicts on the columns ``features[j]`` (``None``: all columns); its
    outputs are class indices into ``encoded_classes`` when that is not ``None`` (members of
    bagging and forests are fitted on encoded labels), labels otherwise.
    """

    def __init__(self, estimators, features, encoded_classes, classes, n_features):
        self.estimators = list(estimators)
        self.features = list(features)
        self.encoded_classes = encoded_classes
        self.classes = classes
        self.n_features = n_features

    @classmethod
    def from_ensemble(cls, ensemble):
        """Members of a fitted bagging ensemble or forest."""
        check_is_fitted(ensemble)
        if getattr(ensemble, "n_outputs_", 1) != 1:
            raise ValueError("a multi-output forest cannot be used as an SDWEC pool; "
                             "fit it on a single target")
        n = ensemble.n_features_in_
        columns = getattr(ensemble, "estimators_features_", [None] * len(ensemble.estimators_))
        # Skip the copy X[:, columns] for members that see every column in order.
        features = [None if c is None or np.array_equal(c, np.arange(n)) else np.asarray(c)
                    for c in columns]
        return cls(ensemble.estimators_, features, ensemble.classes_, ensemble.classes_, n)

    @classmethod
    def from_classifiers(cls, classifiers):
        """Members given as a list of fitted classifiers that predict labels."""
        if len(classifiers) == 0:
            raise ValueError("the list of fitted classifiers is empty; pass at least one")
        for member in classifiers:
            if not hasattr(member, "predict"):
                raise ValueError(f"pool member {member!r} has no predict method")
            check_is_fitted(member)
        known = [np.asarray(m.classes_) for m in classifiers if hasattr(m, "classes_")]
        classes = _union(known) if known else np.array([])
        widths = {m.n_features_in_ for m in classifiers if hasattr(m, "n_features_in_")}
        if len(widths) > 1:
            raise ValueError(f"the fitted classifiers expect different numbers of features "
                             f"{sorted(widths)}; they must all use the same columns")
        n_features = widths.pop() if widths else None
        return cls(classifiers, [None] * len(classifiers), None, classes, n_features)


def _union(arrays):
    try:
        return np.unique(np.concatenate([np.asarray(a).ravel() for a in arrays]))
    except TypeError as exc:
        raise ValueError(f"the pool's classes and the labels y cannot be compared ({exc}); "
                         "use the labels the pool was fitted with") from None


def _unfrozen(pool):
    """``pool`` without its :class:`FrozenEstimator` wrappers (the list's and its members')."""
    if isinstance(pool, FrozenEstimator):
        pool = pool.estimator
    if isinstance(pool, (list, tuple)):
        return [m.estimator if isinstance(m, FrozenEstimator) else m for m in pool]
    return pool


def _members_of(pool):
    """The members of a fitted pool, frozen or not."""
    inner = _unfrozen(pool)
    if isinstance(inner, list):
        return _Members.from_classifiers(inner)
    if isinstance(inner, _ENSEMBLES):
        return _Members.from_ensemble(inner)
    raise ValueError(
        f"a {type(inner).__name__} cannot serve as an SDWEC pool; use a fitted "
        "BaggingClassifier, RandomForestClassifier, ExtraTreesClassifier or a list of fitted "
        "classifiers")


def _prefit_members(estimator):
    """The members of a frozen pool, or ``None`` if ``estimator`` is a template to bag."""
    if isinstance(estimator, (list, tuple)):
        if not all(isinstance(e, FrozenEstimator) for e in estimator):
            raise ValueError(
                "a list of fitted classifiers must be frozen so that cloning (GridSearchCV, "
                "cross_val_score) keeps them fitted: pass FrozenEstimator(classifiers) or "
                "[FrozenEstimator(c) for c in classifiers]")
        return _members_of(estimator)
    if not isinstance(estimator, FrozenEstimator):
        return None
    return _members_of(estimator)


def _label_positions(classes, labels):
    """Index of each label in the sorted ``classes``; -1 for labels not in ``classes``."""
    pos = np.clip(np.searchsorted(classes, labels), 0, len(classes) - 1)
    return np.where(classes[pos] == labels, pos, -1)


def _member_votes(estimators, features, encoded_classes, classes, X):
    """Votes of each member as indices into ``classes``, shape (n_samples, n_members).

    Raises
    ------
    ValueError
        If a member predicts a label that is not in ``classes``.
    """
    votes = np.empty((X.shape[0], len(estimators)), dtype=np.intp)
    for j, (member, columns) in enumerate(zip(estimators, features)):
        X_member = X if columns is None else X[:, columns]
        names = getattr(member, "feature_names_in_", None)
        if names is not None and not hasattr(X_member, "tocsr"):
            X_member = pd.DataFrame(X_member, columns=names)  # members fitted on a DataFrame
        out = np.asarray(member.predict(X_member))
        labels = encoded_classes[out.astype(np.intp)] if encoded_classes is not None else out
        votes[:, j] = _label_positions(classes, labels)
        if (votes[:, j] < 0).any():
            unknown = labels[votes[:, j] < 0][0]
            raise ValueError(f"pool member {j} predicted the label {unknown!r}, which is not "
                             f"among the classes {classes.tolist()}")
    return votes


def _oob_correctness(bagging, members, classes, X_pool, y_pool):
    """Correctness matrix of the pool's training rows, 0 where a row is in a member's
    bootstrap sample, with the rows' label indices.

    ``bagging`` was fitted once (no warm start), so its ``estimators_samples_`` are every
    member's bootstrap rows.
    """
    in_bag = in_bag_matrix(bagging.estimators_samples_, len(y_pool))
    votes = _member_votes(members.estimators, members.features, members.encoded_classes,
                          classes, X_pool)
    y_index = _label_positions(classes, y_pool)
    return correctness_matrix(votes, y_index, voted=~in_bag), y_index


def _class_scores(votes, weights, n_classes):
    """Sum of the weights of the members voting for each class, shape (n_samples, n_classes)."""
    scores = np.zeros((votes.shape[0], n_classes))
    rows = np.arange(votes.shape[0])
    for j, w in enumerate(weights):
        scores[rows, votes[:, j]] += w
    return scores


def _decide(scores, total, rank):
    """The tie rule shared by ``predict``, ``predict_proba`` and ``decision_function``.

    Parameters
    ----------
    scores : ndarray of shape (n_samples, n_classes)
        Summed weights per class.
    total : float
        Sum of the weights (every row of ``scores`` sums to it).
    rank : ndarray of shape (n_classes,)
        Place of each class in the tie order (0 wins ties).

    Returns
    -------
    winner : ndarray of shape (n_samples,)
        Index of the winning class: of the classes whose score is within
        ``_TIE_TOLERANCE * total`` of the best, the one with the lowest rank.
    shares : ndarray of shape (n_samples, n_classes)
        Vote shares ``scores / total``, rows summing to one, whose unique maximum is the
        winner: the tied classes' shares are made equal and the winner takes
        ``_TIE_MARGIN`` from each of the others.  With no weight at all (the ensemble
        abstains) every class is tied at share ``1 / n_classes``.
    """
    n_classes = scores.shape[1]
    best = scores.max(axis=1, keepdims=True)
    tied = scores >= best - (_TIE_TOLERANCE * total + 1e-300)
    winner = np.where(tied, rank, n_classes).argmin(axis=1)
    shares = scores / total if total > 0 else np.full(scores.shape, 1.0 / n_classes)
    n_tied = tied.sum(axis=1)
    rows = np.flatnonzero(n_tied > 1)
    if len(rows):
        row_tied, k = tied[rows], n_tied[rows]
        mean = (shares[rows] * row_tied).sum(axis=1) / k
        adjusted = np.where(row_tied, (mean - _TIE_MARGIN)[:, None], shares[rows])
        adjusted[np.arange(len(rows)), winner[rows]] += k * _TIE_MARGIN
        shares[rows] = adjusted
    return winner, shares


def _tie_order(classes, preferred):
    """``classes`` in tie order: ``preferred`` first, then the others in sorted order."""
    position = {label: i for i, label in enumerate(preferred)}
    order = sorted(range(len(classes)), key=lambda i: position.get(classes[i], len(position)))
    return classes[order]  # the sort is stable: the others keep their sorted order


class SDWECClassifier(ClassifierMixin, BaseEstimator):
    """Sparsity-driven weighted ensemble classifier (Özgür, Nar and Erdem, 2018).

    ``fit`` trains ``n_estimators`` bagged copies of ``estimator`` on a ``1 -
    validation_fraction`` part of the data, then finds non-negative, sparse member weights with
    Algorithm 1 on the stratified held-out part (multi-class through the correctness matrix:
    ``+1`` where a member is right).  Members with weight zero are dropped, so prediction
    evaluates the selected members only.

    Parameters
    ----------
    estimator : estimator, FrozenEstimator, list of FrozenEstimator or None, default=None
        ``None`` bags fully grown CART trees (:class:`~sklearn.tree.DecisionTreeClassifier`), as
        in the paper; any other unfitted classifier is bagged instead.  A *fitted* pool wrapped
        in :class:`~sklearn.frozen.FrozenEstimator` (a ``BaggingClassifier``,
        ``RandomForestClassifier``, ``ExtraTreesClassifier``, or a list of fitted classifiers)
        is used as it is: ``fit`` then only finds the weights, on all of the data it is given,
        and ``n_estimators``, ``validation_fraction``, ``n_jobs`` and ``random_state`` are
        unused.  A list of fitted classifiers may also be given as
        ``[FrozenEstimator(c) for c in classifiers]``.
    n_estimators : int, default=200
        Size ``l`` of the bagged pool.
    lam : float, default=10.0
        λ >= 0, weight of the data-fidelity term.
    beta : float, default=15.0
        β >= 0, weight of the non-negativity penalty.
    gamma : float, default=15.0
        γ > 0, sharpness of the log-sum-exp relaxation.
    eps : float, default=1.0
        ε > 0, of the sign relaxation and the adaptive γ.
    iterations : int, default=25
        Iterations of Algorithm 1.
    threshold : {"paper", "adaptive", "none"}, default="paper"
        How small weights are cut to zero; see :func:`sdwec.solver.solve`.
    validation_fraction : float, default=0.1
        Share of the rows held out (stratified by class) to find the weights on.
    n_jobs : int, default=None
        Cores used to train the pool (joblib convention).
    random_state : int, RandomState instance or None, default=None
        Seeds the split and the bagging.
    fit_on : {"validation", "oob+validation"}, default="validation"
        Rows the weights are fitted on.  ``"validation"``: the held-out rows only (the
        paper).  ``"oob+validation"``: also the pool's training rows, each member voting only
        on the rows outside its bootstrap sample (its out-of-bag rows; an in-bag vote counts
        0).  Needs a pool this estimator bags (not a frozen one, whose bootstrap samples and
        training rows are unknown).
    n_members : int, float in (0, 1] or None, default=None
        ``None``: λ is ``lam``, as given.  Otherwise a target ensemble size ``K`` (an int, or
        a share of the pool's members): λ is found by bisection on log λ as the smallest
        whose support has at least ``K`` members, and its ``K`` largest weights are kept
        (all of its support when even the largest λ selects fewer); ``lam`` is then unused.
        See :func:`sdwec.oob.fit_to_size`.
    vote : {"weighted", "uniform"}, default="weighted"
        How the kept members vote: with their SDWEC weights (the paper), or one vote each.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted class labels (for a frozen pool, also those the pool knows).
    weights_ : ndarray of shape (n_members,)
        Weight of every member of the pool, zero for the pruned ones.
    selected_ : ndarray of shape (n_selected,)
        Pool indices of the members with a non-zero weight.
    estimators_ : list of estimators
        The selected members only, in the order of ``selected_``.
    estimators_features_ : list of (ndarray or None)
        Columns each selected member predicts on (``None``: all).
    member_classes_ : ndarray or None
        Labels that the members' outputs index into (bagging and forest members predict
        encoded class indices); ``None`` when members predict labels.
    tie_order_ : ndarray of shape (n_classes,)
        Classes in the order they win ties: most frequent in the weight-finding labels first,
        equally frequent ones in sorted order (for :meth:`from_weights`, the order given).
    n_selected_ : int
        Number of selected members.
    sparsity_ : float
        ``1 - n_selected_ / n_members`` (eq. 12 of the paper).
    solution_ : sdwec.solver.Solution or None
        The solver's result, with its per-iteration history (``None`` for models built from
        given weights by :meth:`from_weights` without a solution); with ``n_members``, the
        solution at the λ found.
    lam_ : float or None
        The λ of ``solution_``: ``lam``, or the one found for ``n_members`` (``None``
        without a solution).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when ``X`` had string column names.

    Notes
    -----
    Prediction is a weighted plurality vote: a class scores the sum of the weights of the
    members voting for it.  One tie rule serves ``predict``, ``predict_proba`` and
    ``decision_function``: classes whose scores are within ``1e-9`` times the total weight of
    the best score are tied, and the tie goes to the first of them in ``tie_order_``.  When
    every weight is zero the ensemble abstains: every class is tied and ``tie_order_[0]`` wins.
    ``predict_proba`` gives the vote shares, score / total weight (``1 / n_classes`` each when
    abstaining), with the tied classes' shares made equal and the winner's raised by
    ``1e-12`` per other tied class (taken from them), so that its argmax is always
    ``predict``; ``decision_function`` is ``2 * proba[:, 1] - 1``, whose sign is therefore
    always ``predict`` too.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sdwec import SDWECClassifier
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = SDWECClassifier(n_estimators=50, random_state=0).fit(X, y)
    >>> clf.n_selected_ < 50  # only these trees vote in predict
    True
    >>> oob = SDWECClassifier(n_estimators=50, fit_on="oob+validation", n_members=0.2,
    ...                       vote="uniform", random_state=0).fit(X, y)
    >>> oob.n_selected_  # a fifth of the pool, one vote each
    10
    """

    def __init__(self, estimator=None, n_estimators=200, lam=10.0, beta=15.0, gamma=15.0,
                 eps=1.0, iterations=25, threshold="paper", validation_fraction=0.1,
                 n_jobs=None, random_state=None, fit_on="validation", n_members=None,
                 vote="weighted"):
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.lam = lam
        self.beta = beta
        self.gamma = gamma
        self.eps = eps
        self.iterations = iterations
        self.threshold = threshold
        self.validation_fraction = validation_fraction
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.fit_on = fit_on
        self.n_members = n_members
        self.vote = vote

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _check_params(self):
        _check_solver_params(self.lam, self.beta, self.gamma, self.eps, self.iterations,
                             self.threshold)
        n = self.n_estimators
        if isinstance(n, bool) or not isinstance(n, Integral) or n < 1:
            raise ValueError(f"n_estimators must be an integer >= 1; got {n!r}")
        f = self.validation_fraction
        if isinstance(f, bool) or not isinstance(f, Real) or not 0 < f < 1:
            raise ValueError(f"validation_fraction must be a number strictly between 0 and 1; "
                             f"got {f!r}")
        if self.fit_on not in _FIT_ON:
            raise ValueError(f"fit_on must be one of {', '.join(map(repr, _FIT_ON))}; got "
                             f"{self.fit_on!r}")
        if self.vote not in _VOTES:
            raise ValueError(f"vote must be one of {', '.join(map(repr, _VOTES))}; got "
                             f"{self.vote!r}")
        k = self.n_members
        if k is not None:
            if isinstance(k, bool) or not isinstance(k, Real) or k <= 0 \
                    or (not isinstance(k, Integral) and k > 1):
                raise ValueError(f"n_members must be None, an int >= 1 or a float in (0, 1]; "
                                 f"got {k!r}")
            # A bagged pool has n_estimators members; a frozen pool's are counted in fit.
            if isinstance(k, Integral) and k > n and _prefit_members(self.estimator) is None:
                raise ValueError(f"n_members ({k}) cannot exceed n_estimators ({n})")

    def fit(self, X, y):
        """Train the pool (unless it is frozen) and find the member weights.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training rows.
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : SDWECClassifier
            The fitted classifier.
        """
        self._check_params()
        X, y = validate_data(self, X, y, accept_sparse=_SPARSE_FORMATS)
        check_classification_targets(y)
        members = _prefit_members(self.estimator)
        oob_rows = None
        if members is None:
            classes = np.unique(y)
            self._check_two_classes(classes)
            rng = check_random_state(self.random_state)
            X_pool, X_val, y_pool, y_val = self._split(X, y, rng)
            bagging = BaggingClassifier(
                estimator=DecisionTreeClassifier() if self.estimator is None
                else clone(self.estimator),
                n_estimators=self.n_estimators, n_jobs=self.n_jobs,
                random_state=rng.randint(np.iinfo(np.int32).max),
            ).fit(X_pool, y_pool)
            members = _Members.from_ensemble(bagging)
            if self.fit_on == "oob+validation":
                oob_rows = _oob_correctness(bagging, members, classes, X_pool, y_pool)
        else:
            if self.fit_on == "oob+validation":
                raise ValueError("fit_on='oob+validation' needs the pool's bootstrap samples "
                                 "and training rows, which a frozen pool does not give: let "
                                 "SDWECClassifier bag the pool (estimator=None or an unfitted "
                                 "classifier) or use fit_on='validation'")
            if members.n_features is not None and members.n_features != X.shape[1]:
                raise ValueError(f"X has {X.shape[1]} features, but the frozen pool was fitted "
                                 f"on {members.n_features}")
            labels = np.unique(y)
            if len(members.classes) and not np.isin(labels, members.classes).any():
                raise ValueError(f"none of the labels in y {labels[:5].tolist()} is among the "
                                 f"classes the frozen pool was fitted on "
                                 f"{members.classes[:5].tolist()}; use the pool's labels")
            classes = _union([labels, members.classes])
            self._check_two_classes(classes)
            X_val, y_val = X, y
        votes = _member_votes(members.estimators, members.features, members.encoded_classes,
                              classes, X_val)
        y_index = _label_positions(classes, y_val)
        C = correctness_matrix(votes, y_index)
        if oob_rows is not None:
            C_oob, y_oob = oob_rows
            C, y_index = np.vstack([C_oob, C]), np.concatenate([y_oob, y_index])
        solver = dict(beta=self.beta, gamma=self.gamma, eps=self.eps,
                      iterations=self.iterations, threshold=self.threshold)
        if self.n_members is None:
            solution = solve(C, np.ones(len(C)), lam=self.lam, **solver)
            kept = solution.weights > 0
        else:
            if isinstance(self.n_members, Integral) and self.n_members > len(members.estimators):
                raise ValueError(f"n_members ({self.n_members}) cannot exceed the "
                                 f"{len(members.estimators)} members of the frozen pool")
            size = oob.target_size(self.n_members, len(members.estimators))
            sized = oob.fit_to_size(compress(C), size, **solver)
            solution, kept = sized.solution, sized.kept
        weights = np.where(kept, solution.weights, 0.0) if self.vote == "weighted" \
            else kept.astype(float)
        # Ties go to the class most frequent in the weight-finding labels (Pool.prior's rule).
        counts = np.bincount(y_index, minlength=len(classes))
        by_frequency = classes[np.lexsort((np.arange(len(classes)), -counts))]
        return self._set_fitted(members, weights, classes, by_frequency, solution)

    @classmethod
    def from_weights(cls, pool, weights, *, tie_order=None, feature_names=None, solution=None,
                     **params):
        """A fitted classifier from a fitted pool and member weights found elsewhere.

        No training and no solver run: the weights are used as given (for example those of
        :func:`sdwec.solve` on the pool's validation votes), and only the members with a
        non-zero weight are kept.  ``fit`` on a frozen pool ends the same way, with the
        weights it found.

        Parameters
        ----------
        pool : fitted BaggingClassifier, RandomForestClassifier, ExtraTreesClassifier or list
            The fitted pool, optionally wrapped in :class:`~sklearn.frozen.FrozenEstimator`;
            a list holds fitted classifiers (frozen or not) that predict labels.
        weights : array-like of shape (n_members,)
            Finite, non-negative weight of every member, in the pool's order; zero drops it.
        tie_order : array-like, optional
            Classes in the order they win ties, most preferred first (default: sorted order).
            Classes of the pool missing from it follow in sorted order; labels the pool does
            not know are added to ``classes_``.  ``fit`` uses the classes by decreasing
            frequency in its weight-finding labels, as :attr:`sdwec.pool.Pool.prior` does.
        feature_names : array-like of str, optional
            Column names that ``predict`` checks on DataFrames (default: the pool's
            ``feature_names_in_``, if it was fitted on a DataFrame).
        solution : sdwec.solver.Solution, optional
            Kept as ``solution_`` (the solver's history).
        **params
            Constructor parameters (``lam``, ``n_estimators``, ``random_state``, ...) recorded
            in ``get_params()``, so that ``clone(model).fit(X, y)`` trains a similar model; they
            do not change this model's predictions.  Validated as ``fit`` validates them.

        Returns
        -------
        SDWECClassifier
            Fitted.

        Raises
        ------
        ValueError
            If the pool is not fitted or of an unsupported kind, the weights do not match
            its members or are negative or not finite, there are fewer than two classes, the
            feature names do not match the pool's width, or a parameter is invalid.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_iris
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> from sdwec import SDWECClassifier
        >>> X, y = load_iris(return_X_y=True)
        >>> forest = RandomForestClassifier(n_estimators=4, random_state=0).fit(X, y)
        >>> model = SDWECClassifier.from_weights(forest, [0.5, 0.0, 1.0, 0.25])
        >>> model.n_selected_, model.predict(X[:2]).tolist()
        (3, [0, 0])
        """
        model = cls(**params)
        model._check_params()
        members = _members_of(pool)
        preferred = [] if tie_order is None else list(np.asarray(tie_order).ravel())
        if len(set(preferred)) != len(preferred):
            raise ValueError(f"tie_order lists a class twice: {preferred}")
        known = [a for a in (members.classes, np.asarray(preferred)) if len(a)]
        if not known:
            raise ValueError("the pool's members do not say which classes they predict (no "
                             "classes_); name the classes with tie_order")
        classes = _union(known)
        model._check_two_classes(classes)
        model._set_fitted(members, weights, classes, _tie_order(classes, preferred), solution)
        if members.n_features is not None:
            model.n_features_in_ = members.n_features
        if feature_names is None:
            feature_names = getattr(_unfrozen(pool), "feature_names_in_", None)
        if feature_names is not None:
            names = np.asarray(feature_names, dtype=object)
            if names.shape != (members.n_features,):
                raise ValueError(f"need {members.n_features} feature names, one per column the "
                                 f"pool was fitted on; got {names.shape[0] if names.ndim else 0}")
            model.feature_names_in_ = names
        return model

    @staticmethod
    def _check_two_classes(classes):
        if len(classes) < 2:
            raise ValueError(f"SDWECClassifier needs samples of at least two classes in y; "
                             f"got {len(classes)} class")

    def _split(self, X, y, rng):
        """Stratified hold-out split; unstratified when a class has a single row."""
        n = len(y)
        n_val = int(np.ceil(self.validation_fraction * n))
        if n_val >= n:
            raise ValueError(f"{n} sample(s) are too few to hold out a validation part of "
                             f"{self.validation_fraction:g} and still train the pool")
        _, counts = np.unique(y, return_counts=True)
        stratifiable = counts.min() >= 2 and len(counts) <= min(n_val, n - n_val)
        return train_test_split(X, y, test_size=n_val, random_state=rng,
                                stratify=y if stratifiable else None)

    def _set_fitted(self, members, weights, classes, tie_order, solution):
        """Keep the members with non-zero weight and everything needed to vote."""
        weights = np.array(weights, dtype=float)  # a copy, not the caller's array
        if weights.shape != (len(members.estimators),):
            raise ValueError(f"need one weight per pool member ({len(members.estimators)}); "
                             f"got shape {weights.shape}")
        if not np.all(np.isfinite(weights)) or (weights < 0).any():
            raise ValueError("weights must be finite and non-negative")
        selected = np.flatnonzero(weights)
        self.classes_ = np.asarray(classes)
        self.weights_ = weights
        self.selected_ = selected
        self.estimators_ = [members.estimators[i] for i in selected]
        self.estimators_features_ = [members.features[i] for i in selected]
        self.member_classes_ = members.encoded_classes
        self.tie_order_ = np.asarray(tie_order)
        self.n_selected_ = len(selected)
        self.sparsity_ = 1.0 - len(selected) / len(weights)
        self.solution_ = solution
        self.lam_ = None if solution is None else solution.params.get("lam")
        return self

    def _winners_and_shares(self, X):
        """Winning class index and tie-broken vote shares of every row (see :func:`_decide`)."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=_SPARSE_FORMATS, reset=False)
        votes = _member_votes(self.estimators_, self.estimators_features_,
                              self.member_classes_, self.classes_, X)
        weights = self.weights_[self.selected_]
        scores = _class_scores(votes, weights, len(self.classes_))
        rank = np.empty(len(self.classes_), dtype=np.intp)
        rank[_label_positions(self.classes_, self.tie_order_)] = np.arange(len(self.classes_))
        return _decide(scores, weights.sum(), rank)

    def predict(self, X):
        """Weighted plurality vote of the selected members.

        Ties go to the first tied class in ``tie_order_`` (see the class's Notes).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted labels.
        """
        winner, _ = self._winners_and_shares(X)
        return self.classes_[winner]

    def predict_proba(self, X):
        """Weighted vote shares: each class's score divided by the total weight.

        Tied classes get equal shares, except that the tie winner (the first of them in
        ``tie_order_``) gets ``1e-12`` more than each of the others, so that the argmax of
        every row is :meth:`predict`'s label.  An all-zero weight vector (the ensemble
        abstains) ties every class at ``1 / n_classes``, with the same adjustment.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Rows sum to one; columns follow ``classes_``.
        """
        _, shares = self._winners_and_shares(X)
        return shares

    def _has_two_classes(self):
        # Before fit the method exists, so that calling it raises NotFittedError.
        return not hasattr(self, "classes_") or len(self.classes_) == 2

    @available_if(_has_two_classes)
    def decision_function(self, X):
        """Vote margin of the second class, ``share(classes_[1]) - share(classes_[0])``.

        Only for two classes.  Computed from :meth:`predict_proba`, so a tie is not 0 but
        ``+2e-12`` when ``classes_[1]`` wins it and ``-2e-12`` when ``classes_[0]`` does:
        positive values predict ``classes_[1]``, negative ones ``classes_[0]``, on every row.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
            Margins in [-1, 1].
        """
        return 2.0 * self.predict_proba(X)[:, 1] - 1.0
