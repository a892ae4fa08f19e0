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
    "export", "paper", "timing", "votes", "methods", "scorers", "calibration", "params",
    "styles",
}
_LAZY_ATTRS = {"SDWECClassifier": "estimator", "lam_used": "scorers", "n_selected": "scorers"}

# ``from sdwec import *`` must work on the base install: sdwec.plots needs the dashboard
# extra (plotly), so it stays out of ``__all__`` (``sdwec.plots`` and ``from sdwec import
# plots`` still work where plotly is installed).
_NEEDS_EXTRA = {"plots"}

__all__ = [
    "DataError", "Solution", "Votes", "VoteTable", "compress", "correctness_matrix", "solve",
    "SDWECClassifier", "lam_used", "n_selected", "__version__",
    *sorted(_LAZY_MODULES - _NEEDS_EXTRA),
]


def __getattr__(name):
    if name in _LAZY_MODULES:
        return import_module(f"sdwec.{name}")
    if name in _LAZY_ATTRS:
        return getattr(import_module(f"sdwec.{_LAZY_ATTRS[name]}"), name)
    raise AttributeError(f"module 'sdwec' has no attribute {name!r}")
