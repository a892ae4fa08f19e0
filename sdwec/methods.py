"""Every way to turn a pool's votes into member weights, in one declarative list.

Each :class:`Method` has a stable ``name`` (the id in frames, CSV files and reports), a
``label`` for people, a ``kind`` (``"point"``: one weight vector; ``"curve"``: one per
ensemble size or along a regularisation path), the function that computes it, a one-line
``description`` with its ``reference``, its ``source`` (``"paper"``: in the paper's Table 3;
``"peer"``: a method from the literature added for comparison; ``"ours"``: a variant of this
project).  How a method is drawn (its colour, marker and dash) is not part of its entry: the
plotting layer owns it (:mod:`sdwec.styles`), and a method registered without a style there
is drawn in an automatic one.

:func:`sdwec.frontier.peers`, :func:`sdwec.experiments.run_job` and its report, and the
figures of :mod:`sdwec.plots` iterate over this list, so adding a combiner is one function and
one entry (``docs/methods.md`` has a worked example); :func:`register` adds one at run time.

A method's function takes the pool and returns its weights (a point: an array of length
``l``) or a :class:`Path` (a curve, or a point that is not a weighted vote of the pool, like
the single tree). It may take keyword options; each is passed only to functions that name it:

* ``sizes``: the ensemble sizes of a curve over sizes (default ``1 .. l``); a curve that
  accepts it can be compared at SDWEC-B's size (the pick ``"@B"``).
* ``seed``, ``random_draws``: the seed and number of draws of randomised methods.
* ``lasso_alphas``: the length of the Lasso path.

* ``size``: the target ensemble size ``K`` of the size-targeted methods (an int, or a share
  of ``l``; default 20 %, :data:`sdwec.oob.DEFAULT_SIZE`).
* ``stable_resamples``: the bootstrap resamples of ``SDWEC-stable``.

The reproduction has two *suites* (:data:`SUITES`): ``"paper"`` (``python -m sdwec
reproduce``: Table 3 and the peers) and ``"oob"`` (``reproduce --suite oob``: SDWEC fitted on
out-of-bag votes at a target size, :mod:`sdwec.oob`). A method has rows in the suites it names.
In a suite a point gives one row, named after it; a curve gives one row per *pick* the suite
reports: ``"@B"`` (at SDWEC-B's ensemble size in that repeat, the paper suite's fair
comparison), ``"(val)"`` (the point with the best validation accuracy, ties to the smaller
ensemble), ``"@K"`` (at the target size ``K``) and ``"@OOB"`` (at SDWEC-OOB's size in that
repeat, which is below ``K`` when even the largest λ selects fewer), named ``"<name> <pick>"``.
"""

from __future__ import annotations

import importlib
import inspect
import os
import weakref
from collections.abc import Callable
from dataclasses import MISSING, dataclass, replace
from dataclasses import fields as dataclass_fields

import numpy as np

from sdwec import combiners, oob
from sdwec.solver import PRESETS

__all__ = ["Method", "Path", "KINDS", "SOURCES", "PICKS", "SUITES", "SIZE_REFERENCES",
           "DEFAULT_LAMS", "FAIR_REFERENCE", "register", "unregister", "get", "registered",
           "names", "points", "curves", "row_name", "load_plugins", "PLUGINS_ENV"]

KINDS = ("point", "curve")
SOURCES = ("paper", "peer", "ours")
PICKS = ("", "@B", "(val)", "@K", "@OOB")
#: The rows a method's weights (or selection) are fitted on: its accuracy on those rows is
#: in-sample and flatters it.  ``"none"``: no weights are fitted (equal votes, random draws,
#: a tree of its own).
WEIGHTS_FROM = ("validation", "oob+validation", "none")
SUITES = {"paper": ("", "@B", "(val)"), "oob": ("", "@K", "@OOB")}
"""Reproduction suite -> the picks it reports (see the module docstring)."""
FAIR_REFERENCE = "SDWEC-B"
"""The method whose ensemble size the ``"@B"`` picks match."""
SIZE_REFERENCES = {"@B": FAIR_REFERENCE, "@OOB": "SDWEC-OOB"}
"""Picks made at another method's ensemble size in the same repeat -> that method."""
_SIZE_PICKS = ("@B", "@K", "@OOB")

DEFAULT_LAMS = np.logspace(-3, 3, 50)
"""SDWEC's λ path: 50 values log-spaced over [1e-3, 1e3] (the frontier's default grid)."""

@dataclass(frozen=True)
class Path:
    """One or more weighted ensembles of a pool, in order along a curve.

    Attributes
    ----------
    weights : ndarray of shape (l, n) or None
        Column ``j`` is the ``j``-th ensemble's weights; ``None`` when the ensembles are not
        weighted votes of the pool (then ``n_selected`` and both accuracies must be given).
    param : ndarray of shape (n,)
        The value along the curve (an ensemble size, a regularisation value; NaN for a point).
    labels : tuple of str
        A short text per ensemble (``"k=3"``, ``"α=0.01"``; ``""`` for a point).
    n_selected : ndarray of shape (n,), optional
        Members used (default: non-zero weights).
    val_accuracy, test_accuracy : ndarray of shape (n,), optional
        Accuracies when the function knows them (a faster formula, a mean over random draws,
        a tree outside the pool); otherwise :meth:`scored` computes the weighted plurality vote.
    """

    weights: np.ndarray | None
    param: np.ndarray
    labels: tuple
    n_selected: np.ndarray | None = None
    val_accuracy: np.ndarray | None = None
    test_accuracy: np.ndarray | None = None

    @classmethod
    def point(cls, weights):
        """The path of a single weight vector."""
        return cls(weights=np.asarray(weights, dtype=float)[:, None], param=np.array([np.nan]),
                   labels=("",))

    def __len__(self):
        return len(self.param)

    def scored(self, pool) -> Path:
        """This path with ``n_selected`` and both accuracies filled in on ``pool``'s splits."""
        missing = [name for name in ("n_selected", "val_accuracy", "test_accuracy")
                   if getattr(self, name) is None]
        if missing and self.weights is None:
            raise ValueError(f"a path without weights must give {', '.join(missing)}")
        filled = {}
        if self.n_selected is None:
            filled["n_selected"] = np.count_nonzero(self.weights, axis=0)
        for split in ("val", "test"):
            if getattr(self, f"{split}_accuracy") is None:
                filled[f"{split}_accuracy"] = combiners.accuracies(
                    self.weights, pool.votes(split), pool.prior)
        return replace(self, **filled)


def _options_accepted(fit):
    """Names of the keyword options ``fit`` takes (None: it takes any, via ``**kwargs``)."""
    params = list(inspect.signature(fit).parameters.values())[1:]
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return frozenset(p.name for p in params
                     if p.kind in (inspect.Parameter.KEYWORD_ONLY,
                                   inspect.Parameter.POSITIONAL_OR_KEYWORD))


@dataclass(frozen=True)
class Method:
    """One way to turn a pool's votes into member weights (see the module docstring).

    Attributes
    ----------
    name : str
        Stable id, used in frames, CSV files, reports and legends.
    label : str
        Name for people.
    kind : {"point", "curve"}
    fit : callable
        ``fit(pool, **options)`` returning weights of length ``l`` or a :class:`Path`.
    description : str
        What it optimises, in one line.
    reference : str
        Where it comes from.
    source : {"paper", "peer", "ours"}
    frontier : bool, default=True
        Drawn among the frontier's peers (:func:`sdwec.frontier.peers`); SDWEC's own sweep
        is drawn by :func:`sdwec.frontier.sweep`.
    picks : tuple of str, optional
        Rows in the reproduction: ``("",)`` for a point (the default), any of ``"@B"``,
        ``"(val)"``, ``"@K"`` and ``"@OOB"`` for a curve (default ``("(val)",)``); ``()``
        leaves it out. Each suite reports the picks it knows (:data:`SUITES`).
    suites : tuple of str, default=("paper",)
        The reproduction suites it has rows in.
    weights_from : {"validation", "oob+validation", "none"}, default="validation"
        The rows its weights or selection are fitted on (:data:`WEIGHTS_FROM`).
    """

    name: str
    label: str
    kind: str
    fit: Callable
    description: str
    reference: str
    source: str
    frontier: bool = True
    picks: tuple = None
    suites: tuple = ("paper",)
    weights_from: str = "validation"

    @property
    def fits_validation(self):
        """Whether its weights are fitted on the validation rows (its validation accuracy
        is then in-sample)."""
        return self.weights_from != "none"

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"a method needs a non-empty name; got {self.name!r}")
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}; got {self.kind!r}")
        if self.weights_from not in WEIGHTS_FROM:
            raise ValueError(f"weights_from must be one of {WEIGHTS_FROM}; "
                             f"got {self.weights_from!r}")
        if self.source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}; got {self.source!r}")
        if not callable(self.fit):
            raise ValueError(f"fit of {self.name!r} must be callable: fit(pool, **options)")
        picks = (("",) if self.kind == "point" else ("(val)",)) if self.picks is None \
            else tuple(self.picks)
        allowed = ("",) if self.kind == "point" else PICKS[1:]
        if any(p not in allowed for p in picks):
            raise ValueError(f"picks of a {self.kind} must be among {allowed}; got {picks}")
        accepted = _options_accepted(self.fit)
        sized = [p for p in picks if p in _SIZE_PICKS]
        if sized and accepted is not None and "sizes" not in accepted:
            raise ValueError(f"{self.name!r} is picked at a given size ({sized[0]!r}), so its "
                             "fit must accept a sizes= option")
        suites = (self.suites,) if isinstance(self.suites, str) else tuple(self.suites)
        unknown = [s for s in suites if s not in SUITES]
        if unknown:
            raise ValueError(f"suites must be among {tuple(SUITES)}; got {unknown[0]!r}")
        object.__setattr__(self, "picks", picks)
        object.__setattr__(self, "suites", suites)

    @property
    def rows(self) -> tuple:
        """Its row names in the reproduction, one per pick (every suite)."""
        return tuple(row_name(self.name, pick) for pick in self.picks)

    def picks_in(self, suite) -> tuple:
        """Its picks reported by ``suite`` (none if it is not in that suite)."""
        if suite not in SUITES:
            raise ValueError(f"suite must be one of {tuple(SUITES)}; got {suite!r}")
        return tuple(p for p in self.picks if p in SUITES[suite]) if suite in self.suites \
            else ()

    def run(self, pool, **options) -> Path:
        """Its ensembles on ``pool``, unscored; options it does not name are not passed."""
        accepted = _options_accepted(self.fit)
        if accepted is not None:
            options = {k: v for k, v in options.items() if k in accepted}
        out = self.fit(pool, **options)
        if not isinstance(out, Path):
            weights = np.asarray(out, dtype=float)
            if weights.shape != (pool.n_trees,):
                raise ValueError(f"{self.name!r} returned weights of shape {weights.shape}; "
                                 f"expected ({pool.n_trees},)")
            out = Path.point(weights)
        if self.kind == "point" and len(out) != 1:
            raise ValueError(f"{self.name!r} is a point but returned {len(out)} ensembles")
        return out

    def evaluate(self, pool, **options) -> Path:
        """Its ensembles on ``pool`` with members used and both accuracies."""
        return self.run(pool, **options).scored(pool)


def row_name(name, pick=""):
    """Row name of a method's pick in the reproduction (``"reduce-error @B"``)."""
    return f"{name} {pick}" if pick else name


# --------------------------------------------------------------------------- functions


def _val(pool):
    return pool.votes("val")


def _sdwec_a(pool):
    return combiners.sdwec(_val(pool), **PRESETS["SDWEC-A"])


def _sdwec_b(pool):
    return combiners.sdwec(_val(pool), **PRESETS["SDWEC-B"])


def _sdwec_b_select(pool):
    return combiners.sdwec_select(_val(pool), **PRESETS["SDWEC-B"])


def _lambda_grid(lams):
    fixed = {k: v for k, v in PRESETS["SDWEC-B"].items() if k != "lam"}
    return [dict(fixed, lam=float(lam)) for lam in np.atleast_1d(lams)]


def _lambda_labels(lams):
    return tuple(f"λ={lam:.4g}" for lam in np.atleast_1d(lams))


def _sdwec_path(pool, lams=DEFAULT_LAMS):
    W = combiners.sdwec_grid(_val(pool), _lambda_grid(lams))
    return Path(weights=W, param=np.asarray(lams, dtype=float), labels=_lambda_labels(lams))


def _sdwec_select_path(pool, lams=DEFAULT_LAMS):
    W = combiners.sdwec_grid(_val(pool), _lambda_grid(lams))
    return Path(weights=(W != 0).astype(float), param=np.asarray(lams, dtype=float),
                labels=_lambda_labels(lams))


def _qfwec(pool):
    return combiners.qfwec(_val(pool))


def _wmv(pool):
    return combiners.wmv(_val(pool))


def _bagging(pool):
    return combiners.majority(_val(pool))


def _nnls(pool):
    return combiners.nnls_stacking(_val(pool))


def _single_tree(pool):
    # Not a pool member: its accuracies come from its own predictions.
    return Path(weights=None, param=np.array([np.nan]), labels=("",), n_selected=np.array([1]),
                val_accuracy=np.array([np.mean(pool.single_val == pool.y_val)]),
                test_accuracy=np.array([np.mean(pool.single_test == pool.y_test)]))


def _sizes(pool, sizes):
    return np.arange(1, pool.n_trees + 1) if sizes is None else np.asarray(sizes, dtype=int)


def _ordered_path(pool, order, sizes):
    sizes = _sizes(pool, sizes)
    # The prefix curve counts votes with one cumulative sum: much faster than scoring each
    # prefix's weight vector, and exactly the same numbers.
    return Path(weights=combiners.ordered_weights(order, sizes), param=sizes.astype(float),
                labels=tuple(f"k={k}" for k in sizes), n_selected=sizes,
                val_accuracy=combiners.ordered_curve(order, _val(pool), pool.prior, sizes),
                test_accuracy=combiners.ordered_curve(order, pool.votes("test"), pool.prior,
                                                      sizes))


def _reduce_error(pool, sizes=None):
    return _ordered_path(pool, combiners.reduce_error_order(_val(pool), prior=pool.prior), sizes)


def _orientation(pool, sizes=None):
    return _ordered_path(pool, combiners.orientation_order(_val(pool)), sizes)


def _random_subsets(pool, sizes=None, seed=0, random_draws=10):
    sizes = _sizes(pool, sizes)
    # A mean over draws is not one weight vector: the path carries the mean accuracies.
    return Path(weights=None, param=sizes.astype(float), labels=tuple(f"k={k}" for k in sizes),
                n_selected=sizes,
                val_accuracy=combiners.random_subset_curve(_val(pool), sizes, random_draws, seed,
                                                           pool.prior),
                test_accuracy=combiners.random_subset_curve(pool.votes("test"), sizes,
                                                            random_draws, seed, pool.prior))


def _lasso(pool, lasso_alphas=50):
    alphas, W = combiners.lasso_path(_val(pool), n_alphas=lasso_alphas)
    return Path(weights=W, param=alphas, labels=tuple(f"α={a:.3g}" for a in alphas))


# Out-of-bag SDWEC (sdwec.oob). The stacked votes are the pool's out-of-bag votes of the
# training rows and its validation votes (Pool.votes("oob+val")).

def _stacked(pool):
    return pool.votes("oob+val")


# One size-targeted fit per (votes, K): SDWEC-OOB and SDWEC-OOB weighted share it within a
# job. Keyed weakly by the Votes object (hashed by identity), so a pool's entry goes with it.
_SIZED_FITS = weakref.WeakKeyDictionary()


def _sized_fit(votes, size):
    k = oob.target_size(size, votes.n_members)
    fits = _SIZED_FITS.setdefault(votes, {})
    if k not in fits:
        fits[k] = oob.fit_to_size(votes, k)
    return fits[k]


def _sdwec_oob(pool, size=None):
    return _sized_fit(_stacked(pool), size).weights("uniform")


def _sdwec_oob_weighted(pool, size=None):
    return _sized_fit(_stacked(pool), size).weights("weighted")


def _sdwec_val_sized(pool, size=None):
    return _sized_fit(_val(pool), size).weights("uniform")


def _sdwec_oob_path(pool, oob_lams=oob.OOB_LAMS):
    lams = np.asarray(oob_lams, dtype=float)
    W = combiners.sdwec_grid(_stacked(pool), _lambda_grid(lams))
    return Path(weights=(W != 0).astype(float), param=lams, labels=_lambda_labels(lams))


def _sdwec_stable(pool, size=None, seed=0, stable_resamples=oob.STABLE_RESAMPLES):
    ranking = oob.stability_ranking(_stacked(pool), stable_resamples, seed)
    return ranking.top(oob.target_size(size, pool.n_trees))


def _reduce_error_oob(pool, sizes=None):
    return _ordered_path(pool, combiners.reduce_error_order(_stacked(pool), prior=pool.prior),
                         sizes)


# --------------------------------------------------------------------------- the list

_PAPER = "Özgür, Nar & Erdem (2018), Sparsity-driven weighted ensemble classifier, IJCIS 11(1)"
_ORDERED = ("Martínez-Muñoz, Hernández-Lobato & Suárez (2009), An analysis of ensemble pruning "
            "techniques based on ordered aggregation, IEEE TPAMI 31(2)")

BUILTIN = (
    # The paper's Table 3, in its column order.
    Method("QFWEC", "QFWEC", "point", _qfwec,
           "square loss (1/m)||Cw - 1||² with Σw = 1 and -1 <= w <= 1; not sparse",
           "Mao et al. (2015), Pattern Recognition 48(5) (our reading: docs/combiners.md)",
           "paper"),
    Method("SDWEC-A", "SDWEC-A", "point", _sdwec_a,
           "Algorithm 1 (eq. 4: λ/m misclassification + L1 + β non-negativity); on bagged "
           "trees it keeps every tree (sparsity 0, as the paper reports) but votes with its "
           "own weights, so it is not bagging's equal vote; preset A "
           "(λ=0.1, β=35, γ=5, ε=0.1)", _PAPER, "paper", frontier=False),
    Method("SDWEC-B", "SDWEC-B", "point", _sdwec_b,
           "Algorithm 1 with preset B (λ=10, β=15, γ=15, ε=1): sparse, ~10 % of the trees",
           _PAPER, "paper", frontier=False,
           suites=("paper", "oob")),
    Method("WMV", "WMV", "point", _wmv,
           "log-odds of each tree's validation accuracy, log(p / (1 - p)), p clipped",
           "Kuncheva (2004), Combining Pattern Classifiers, Wiley", "paper"),
    Method("bagging", "bagging", "point", _bagging,
           "every tree one vote", "Breiman (1996), Bagging predictors, Machine Learning 24(2)",
           "paper", suites=("paper", "oob"), weights_from="none"),
    Method("single", "single tree", "point", _single_tree,
           "one CART tree fitted on the whole training split (not a pool member)",
           "Breiman, Friedman, Olshen & Stone (1984), Classification and Regression Trees",
           "paper", weights_from="none"),
    # SDWEC beyond the two presets.
    Method("SDWEC", "SDWEC (λ path)", "curve", _sdwec_path,
           "Algorithm 1 along a λ grid at SDWEC-B's β, γ, ε: accuracy against sparsity",
           _PAPER, "ours", frontier=False, picks=()),
    Method("SDWEC-select", "SDWEC-select (λ path)", "curve", _sdwec_select_path,
           "SDWEC's selected trees voting with equal weights, along the λ path",
           "relaxed-Lasso idea: Meinshausen (2007), CSDA 52(1)", "ours", frontier=False,
           picks=()),
    Method("SDWEC-B select", "SDWEC-B select", "point", _sdwec_b_select,
           "SDWEC-B's selected trees voting with equal weights",
           "relaxed-Lasso idea: Meinshausen (2007), CSDA 52(1)", "ours", frontier=False,
           suites=("paper", "oob")),
    # Pruning and stacking peers.
    Method("reduce-error", "reduce-error ordering", "curve", _reduce_error,
           "greedy forward selection: add the tree that most improves the unweighted vote's "
           "validation accuracy", _ORDERED, "peer",
           picks=("@B", "(val)", "@K"), suites=("paper", "oob")),
    Method("orientation", "orientation ordering", "curve", _orientation,
           "trees by the angle between their correctness signature and a reference direction",
           "Martínez-Muñoz & Suárez (2006), Pruning in ordered bagging ensembles, ICML",
           "peer", picks=("@B",)),
    Method("random", "random subsets", "curve", _random_subsets,
           "mean accuracy of seeded random subsets of each size: the sanity baseline",
           "any pruning method must beat it at the same size", "peer",
           picks=("@B", "@K", "@OOB"), suites=("paper", "oob"), weights_from="none"),
    Method("lasso", "positive Lasso stacking", "curve", _lasso,
           "(1/2m)||Cw - 1||² + α||w||₁ with w >= 0, along a path of α",
           "Tibshirani (1996), JRSS B 58(1); stacking: Breiman (1996), Machine Learning 24(1)",
           "peer"),
    Method("NNLS", "NNLS stacking", "point", _nnls,
           "least squares ||Cw - 1||² with w >= 0",
           "Breiman (1996), Stacked regressions, Machine Learning 24(1)", "peer"),
    # Beyond the paper: SDWEC on the out-of-bag votes stacked with the validation votes, at a
    # target size K (sdwec.oob, docs/oob.md, results/oob/).
    Method("SDWEC-OOB", "SDWEC-OOB", "point", _sdwec_oob,
           "Algorithm 1 (SDWEC-B's β, γ, ε) on the out-of-bag + validation votes; λ by "
           "bisection to reach K trees (default 20 % of l), the K largest kept, equal votes",
           "this project; out-of-bag estimates: Breiman (1996), Out-of-bag "
           "estimation", "ours", suites=("oob",), weights_from="oob+validation"),
    Method("SDWEC-OOB weighted", "SDWEC-OOB weighted", "point", _sdwec_oob_weighted,
           "SDWEC-OOB's trees voting with their SDWEC weights", "this project",
           "ours", frontier=False, suites=("oob",), weights_from="oob+validation"),
    Method("SDWEC-val K", "SDWEC-val K", "point", _sdwec_val_sized,
           "SDWEC-OOB's size targeting and equal votes, fitted on the validation votes only",
           "this project", "ours", frontier=False, suites=("oob",)),
    Method("SDWEC-stable", "SDWEC-stable", "point", _sdwec_stable,
           "the K trees SDWEC-B selects most often over 20 seeded bootstrap resamples of the "
           "out-of-bag + validation rows, equal votes",
           "stability selection: Meinshausen & Bühlmann (2010), JRSS B 72(4)", "ours",
           frontier=False, suites=("oob",), weights_from="oob+validation"),
    Method("SDWEC-OOB path", "SDWEC-OOB (λ path)", "curve", _sdwec_oob_path,
           "SDWEC-OOB's fit along a λ grid: each λ's selected trees, equal votes",
           "this project", "ours", picks=(), weights_from="oob+validation"),
    Method("reduce-error OOB", "reduce-error ordering on the OOB + validation votes", "curve",
           _reduce_error_oob,
           "reduce-error ordering run on the same out-of-bag + validation votes as SDWEC-OOB",
           _ORDERED, "peer", picks=("@K",), suites=("oob",), weights_from="oob+validation"),
)
"""The built-in methods, in the order of every table and legend."""

_REGISTRY: dict[str, Method] = {}

_REQUIRED_FIELDS = tuple(f.name for f in dataclass_fields(Method)
                         if f.default is MISSING and f.default_factory is MISSING)


def register(method: Method | None = None, /, *positional, **fields) -> Method:
    """Add a method at the end of the list.

    Parameters
    ----------
    method : Method, optional
        The method; or give its fields as keywords (``name=..., label=..., ...``).
    **fields
        The fields of :class:`Method`, as keywords only.

    Returns
    -------
    Method

    Raises
    ------
    TypeError
        If fields are given positionally (``register("name", "label", ...)``), or a look
        (``color``, ``symbol``, ``dash``): that is :func:`sdwec.styles.set_style`'s.
    ValueError
        If the name is taken.
    """
    if positional or (method is not None and not isinstance(method, Method)):
        # Method's field order is long and partly optional: keywords keep the call readable.
        required = ", ".join(f"{name}=..." for name in _REQUIRED_FIELDS)
        raise TypeError(f"register takes a Method or its fields as keywords; got "
                        f"{1 + len(positional)} positional argument(s). Pass the fields as "
                        f"keywords: register({required})")
    looks = [key for key in ("color", "symbol", "dash") if key in fields]
    if looks:
        raise TypeError(f"a method's look ({', '.join(looks)}) is not a registry field: "
                        "register it without, then call sdwec.styles.set_style(name, color, "
                        "symbol=..., dash=...), or leave it out for an automatic style")
    if method is None:
        method = Method(**fields)
    elif fields:
        raise ValueError("give either a Method or its fields as keywords, not both")
    if method.name in _REGISTRY:
        raise ValueError(f"a method named {method.name!r} is already registered; "
                         "unregister it first or choose another name")
    _REGISTRY[method.name] = method
    return method


PLUGINS_ENV = "SDWEC_METHODS"
"""Environment variable: comma-separated modules that register methods when imported."""


def load_plugins(modules=None) -> tuple:
    """Import the modules that register methods of their own (each calls :func:`register` at
    import), so that a process that did not write them (the dashboard, ``sdwec reproduce``)
    has them too.

    Parameters
    ----------
    modules : str or sequence of str, optional
        Module names (``"my_methods"``, ``"lab.pruning"``), or one comma-separated string.
        Default: ``$SDWEC_METHODS``.  A module already imported is not imported again.

    Returns
    -------
    tuple of str
        The modules named.

    Raises
    ------
    ImportError
        Naming the module that could not be imported and the variable it came from.
    """
    if modules is None:
        modules = os.environ.get(PLUGINS_ENV, "")
    if isinstance(modules, str):
        modules = modules.split(",")
    names = tuple(m.strip() for m in modules if m.strip())
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:
            raise ImportError(f"the method module {name!r} (from {PLUGINS_ENV} or "
                              f"load_plugins) did not import: {type(exc).__name__}: {exc}. "
                              f"It must be importable from the server's working folder or "
                              f"PYTHONPATH.") from exc
    return names


def unregister(name) -> Method:
    """Remove a method from the list and return it."""
    return _REGISTRY.pop(get(name).name)


def get(name) -> Method:
    """The method named ``name``."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"no method named {name!r}; registered: {', '.join(_REGISTRY)}") from None


def registered() -> tuple:
    """Every method, in order."""
    return tuple(_REGISTRY.values())


def names() -> tuple:
    """Every method's name, in order."""
    return tuple(_REGISTRY)


def points() -> tuple:
    """The point methods, in order."""
    return tuple(m for m in _REGISTRY.values() if m.kind == "point")


def curves() -> tuple:
    """The curve methods, in order."""
    return tuple(m for m in _REGISTRY.values() if m.kind == "curve")


for _method in BUILTIN:
    register(_method)
del _method
