"""The solver's parameters as one value: checked once, frozen, hashable.

:class:`SolverParams` is what :func:`sdwec.solver.solve` runs with and what a
:class:`~sdwec.solver.Solution` records; the dashboard builds one from its sliders and passes
that same object to the solver, the estimator builds one from its constructor arguments.  It
is a read-only mapping as well (``p["lam"]``, ``dict(p)``, ``**p``), so code that read the
former ``dict`` of parameters reads it unchanged, and it compares equal to the ``dict`` of the
same items.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from numbers import Integral, Real

import numpy as np

from sdwec.paper import PRESETS

__all__ = ["SolverParams", "THRESHOLDS", "MULTICLASS"]

#: Readings of Algorithm 1's line 15 (docs/algorithm.md, "Readings of ambiguities").
THRESHOLDS = ("paper", "adaptive", "none")

#: Readings of "sgn(Hw) = y" for more than two classes (the paper has two; docs/algorithm.md).
#: ``"plurality"``: the true class outscores each rival (:attr:`Votes.plurality_form`), the
#: condition a weighted plurality vote is right under.  ``"correctness"``: a weighted
#: majority of the members is right (:attr:`Votes.correctness_form`), which asks more and
#: keeps nothing when members are right on fewer than half the rows.  Equal for two classes.
MULTICLASS = ("plurality", "correctness")


def _real(name, value):
    if isinstance(value, bool) or not isinstance(value, Real) or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite real number; got {value!r}")
    return float(value)


@dataclass(frozen=True, eq=False)
class SolverParams(Mapping):
    """Parameters of one run of Algorithm 1 (defaults: the paper's SDWEC-B, k = 25).

    Parameters
    ----------
    lam : float, default=10.0
        λ >= 0, weight of the data-fidelity term.
    beta : float, default=15.0
        β >= 0, weight of the non-negativity penalty.
    gamma : float, default=15.0
        γ > 0, sharpness of the adaptive log-sum-exp.
    eps : float, default=1.0
        ε > 0, in the sign relaxation and the adaptive γ.
    iterations : int, default=25
        Number of passes k of lines 6-13.
    threshold : {"paper", "adaptive", "none"}, default="paper"
        How line 15 is read (:func:`sdwec.solver.solve`).
    multiclass : {"plurality", "correctness"}, default="plurality"
        Which condition ``sgn(Hw) = 1`` stands for with more than two classes.

    Raises
    ------
    ValueError
        Naming the first parameter out of range.
    """

    lam: float = PRESETS["SDWEC-B"]["lam"]
    beta: float = PRESETS["SDWEC-B"]["beta"]
    gamma: float = PRESETS["SDWEC-B"]["gamma"]
    eps: float = PRESETS["SDWEC-B"]["eps"]
    iterations: int = 25
    threshold: str = "paper"
    multiclass: str = "plurality"

    def __post_init__(self):
        # Stored as plain floats, so that equal settings are equal values (λ = 10 and 10.0).
        for name in ("lam", "beta", "gamma", "eps"):
            object.__setattr__(self, name, _real(name, getattr(self, name)))
        if self.lam < 0:
            raise ValueError(f"lam (λ, data fidelity) must be >= 0; got {self.lam}")
        if self.beta < 0:
            raise ValueError(f"beta (β, non-negativity penalty) must be >= 0; got {self.beta}")
        if self.gamma <= 0:
            raise ValueError(f"gamma (γ, log-sum-exp sharpness) must be > 0; got {self.gamma}")
        if self.eps <= 0:
            raise ValueError(f"eps (ε) must be > 0; got {self.eps}")
        k = self.iterations
        if isinstance(k, bool) or not isinstance(k, Integral) or k < 1:
            raise ValueError(f"iterations must be an integer >= 1; got {k!r}")
        object.__setattr__(self, "iterations", int(k))
        if self.threshold not in THRESHOLDS:
            raise ValueError(f"threshold must be one of {', '.join(map(repr, THRESHOLDS))}; "
                             f"got {self.threshold!r}")
        if self.multiclass not in MULTICLASS:
            raise ValueError(f"multiclass must be one of {', '.join(map(repr, MULTICLASS))}; "
                             f"got {self.multiclass!r}")

    @classmethod
    def preset(cls, name, **changes):
        """The paper's ``"SDWEC-A"`` or ``"SDWEC-B"`` (Table 3's footer), with ``changes``."""
        if name not in PRESETS:
            raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
        return cls(**{**PRESETS[name], **changes})

    def replace(self, **changes):
        """A copy with ``changes`` (checked like the original)."""
        return replace(self, **changes)

    # The mapping protocol over the fields, in their order.
    def __getitem__(self, key):
        if key not in _NAMES:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self):
        return iter(_NAMES)

    def __len__(self):
        return len(_NAMES)

    def __eq__(self, other):
        if isinstance(other, Mapping):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    def __hash__(self):
        return hash(tuple(self.items()))


_NAMES = tuple(f.name for f in fields(SolverParams))
