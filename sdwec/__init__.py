"""SDWEC Explorer: the sparsity-driven weighted ensemble classifier (Özgür, Nar, Erdem 2018).

The solver lives in :mod:`sdwec.solver`; datasets, pools, combiners, plots and the
scikit-learn estimator are imported lazily so that ``import sdwec`` stays cheap.
"""

from importlib import import_module

from sdwec.errors import DataError
from sdwec.solver import Solution, VoteTable, compress, correctness_matrix, solve
from sdwec.votes import Votes

__version__ = "0.1.0"

_LAZY_MODULES = {
    "datasets", "pool", "combiners", "frontier", "experiments", "plots", "estimator",
    "export", "paper", "timing", "votes", "methods",
}
_LAZY_ATTRS = {"SDWECClassifier": "estimator"}

__all__ = [
    "DataError", "Solution", "Votes", "VoteTable", "compress", "correctness_matrix", "solve",
    "SDWECClassifier", "__version__", *sorted(_LAZY_MODULES),
]


def __getattr__(name):
    if name in _LAZY_MODULES:
        return import_module(f"sdwec.{name}")
    if name in _LAZY_ATTRS:
        return getattr(import_module(f"sdwec.{_LAZY_ATTRS[name]}"), name)
    raise AttributeError(f"module 'sdwec' has no attribute {name!r}")
