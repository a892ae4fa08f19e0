"""When a setting abstains: the nearest setting that keeps trees, found by solving.

A setting *abstains* on a split when line 15 cuts every weight to zero (the ensemble then
predicts one class for every row). :func:`nearest_keeping` searches, on the rows the weights
are fitted on (never the test rows), for the nearest setting that keeps trees on every split,
in a fixed order of routes:

1. a more lenient threshold rule (:data:`sdwec.teaching.THRESHOLD_ORDER`: *adaptive*, then
   *paper*, then *none*): the same raw weights, so no solve is needed;
2. a larger λ, on the grid the caller offers (the dashboard's λ slider);
3. a smaller ε, on the caller's ε grid;
4. combinations: a larger λ or a smaller ε with the most lenient rule, then the largest λ
   with the smallest ε (with either rule).

Every setting it returns was solved, so it never names a remedy that fails. Along a grid the
nearest value is found by galloping away from the current one (1, 2, 4, ... steps) and
bisecting back between the last failure and the first success: a few solves instead of one
per grid point. The number of trees kept is not always monotone along a grid, so the value
found is the nearest that the search saw succeed, and it is verified.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sdwec import solver
from sdwec.teaching import THRESHOLD_ORDER
from sdwec.votes import Votes

__all__ = ["ROUTES", "Remedy", "abstaining", "nearest_keeping"]

#: The routes :func:`nearest_keeping` tries, in order.
ROUTES = ("threshold", "lam", "eps", "combinations")
#: How a parameter is named in a sentence.
_NAMES = {"threshold": "threshold rule", "lam": "λ", "eps": "ε"}


@dataclass(frozen=True)
class Remedy:
    """A setting found by :func:`nearest_keeping`.

    Attributes
    ----------
    params : dict
        Its solver parameters (:func:`sdwec.solve` keywords).
    changes : tuple of (str, object, object)
        ``(parameter, current value, new value)`` for each parameter changed.
    kept : tuple of int
        Trees it keeps on each split.
    solves : int
        Solves the search ran (each over every split at once).
    """

    params: dict
    changes: tuple
    kept: tuple
    solves: int = field(default=0, compare=False)

    @property
    def splits(self) -> int:
        return len(self.kept)

    @property
    def keeping(self) -> int:
        """Splits on which it keeps at least one tree."""
        return int(np.count_nonzero(self.kept))

    @property
    def everywhere(self) -> bool:
        return self.keeping == self.splits

    @property
    def new_values(self) -> dict:
        """``{parameter: new value}``, e.g. to apply it to a configuration."""
        return {name: new for name, _, new in self.changes}

    def setting(self) -> str:
        """The change in words: ``threshold rule *none* (now *paper*)``, ``λ = 0.2 (now
        0.001)``, joined by "with"."""
        return " with ".join(_change_text(*change) for change in self.changes)

    def describe(self) -> str:
        """One sentence: what changes and how many trees it keeps, e.g. "Threshold rule *none*
        (now *paper*) keeps 12 trees on every split." """
        kept = np.array(self.kept)
        low, high = int(kept.min()), int(kept.max())
        if self.splits == 1:
            count = f"keeps {_trees(high)}"
        elif not self.everywhere:
            count = (f"keeps trees on {self.keeping} of {self.splits} splits (up to "
                     f"{_trees(high)})")
        elif low == high:
            count = f"keeps {_trees(high)} on every split"
        else:
            count = (f"keeps {low} to {_trees(high)} on every split ({kept.mean():.1f} on "
                     f"average)")
        if not self.changes:
            return f"The setting {count}."
        text = f"{self.setting()} {count}."
        # "threshold rule" starts a sentence capitalised; λ and ε keep their case.
        return text[0].upper() + text[1:] if text[0].isascii() else text


def _trees(n):
    return f"{n} tree" if n == 1 else f"{n} trees"


def _value_text(name, value):
    return f"*{value}*" if name == "threshold" else f"{value:g}"


def _change_text(name, old, new):
    if name == "threshold":
        return f"threshold rule {_value_text(name, new)} (now {_value_text(name, old)})"
    return f"{_NAMES[name]} = {_value_text(name, new)} (now {_value_text(name, old)})"


def abstaining(kept) -> tuple:
    """Indices of the splits that keep no tree, given trees kept per split (or solutions)."""
    counts = [k.n_selected if isinstance(k, solver.Solution) else int(k) for k in kept]
    return tuple(i for i, k in enumerate(counts) if k == 0)


class _Search:
    """Solves of one configuration's splits, memoised by (λ, ε); every threshold rule is
    read from the same raw weights."""

    def __init__(self, votes, params, max_solves):
        self.votes, self.params, self.max_solves = votes, dict(params), max_solves
        self.solves = 0
        self._raw = {}

    def kept(self, lam, eps, threshold):
        """Trees kept per split, or ``None`` when the solve budget is spent."""
        key = (float(lam), float(eps))
        if key not in self._raw:
            if self.solves >= self.max_solves:
                return None
            self.solves += 1
            sols = solver.solve_many(self.votes, **dict(self.params, lam=lam, eps=eps))
            self._raw[key] = [s.raw_weights for s in sols]
        p = self.params
        return tuple(int(np.count_nonzero(w > solver.line15_thresholds(
            w, p["beta"], p["gamma"], eps, threshold)[1])) for w in self._raw[key])


def _gallop(candidates, keeps):
    """The first of ``candidates`` (ordered by distance) for which ``keeps(c)`` holds, as the
    search sees it: try steps 1, 2, 4, ... away, then bisect back between the last failure
    and the first success. ``keeps`` returns ``None`` (budget spent), True or False."""
    tried = {}

    def ok(i):
        if i not in tried:
            tried[i] = keeps(candidates[i])
        return tried[i]

    last_fail, hit, step = -1, None, 1
    while True:
        i = min(last_fail + step, len(candidates) - 1)
        result = ok(i)
        if result is None:
            return None
        if result:
            hit = i
            break
        last_fail = i
        if i == len(candidates) - 1:
            return None
        step *= 2
    while hit - last_fail > 1:
        mid = (last_fail + hit) // 2
        result = ok(mid)
        if result is None:
            break
        if result:
            hit = mid
        else:
            last_fail = mid
    return candidates[hit]


def nearest_keeping(votes, params, lambda_grid, eps_grid=(), split="val", routes=ROUTES,
                    max_solves=40):
    """The nearest setting that keeps trees on every split, or the one that keeps them on most.

    Parameters
    ----------
    votes : sequence of Votes or of Pool
        The rows the weights are fitted on, one entry per split (a pool gives its
        ``pool.votes(split)``).
    params : dict
        The current solver parameters (:func:`sdwec.solve` keywords: ``lam``, ``beta``,
        ``gamma``, ``eps``, ``iterations``, ``threshold``).
    lambda_grid : sequence of float
        The λ values that may be suggested (the larger ones are tried).
    eps_grid : sequence of float, default=()
        The ε values that may be suggested (the smaller ones are tried); empty: ε is not
        changed.
    split : str, default="val"
        Which votes of a pool to fit on (``"oob+val"`` for SDWEC-OOB).
    routes : sequence of str, default=ROUTES
        Which of :data:`ROUTES` to try, in :data:`ROUTES` order.
    max_solves : int, default=40
        The most solves (each over every split at once) the search may run.

    Returns
    -------
    Remedy or None
        With no ``changes`` when the current setting already keeps trees on every split. A
        setting that keeps trees on every split when one is found; otherwise the one seen
        keeping trees on the most splits (``everywhere`` is then False), if it keeps them on
        more splits than the current setting; else ``None``.
    """
    unknown = set(routes) - set(ROUTES)
    if unknown:
        raise ValueError(f"unknown routes {sorted(unknown)}; choose from {', '.join(ROUTES)}")
    votes = [v if isinstance(v, Votes) else v.votes(split) for v in votes]
    params = dict(params)
    search = _Search(votes, params, max_solves)
    lam, eps, rule = float(params["lam"]), float(params["eps"]), params["threshold"]
    current = search.kept(lam, eps, rule)
    if all(current):
        return Remedy(params, (), current, search.solves)
    best = [None]  # (splits keeping, -changes, setting) of the best partial one seen

    def result(new_lam, new_eps, new_rule):
        changes = tuple((name, old, new) for name, old, new in
                        (("threshold", rule, new_rule), ("lam", lam, new_lam),
                         ("eps", eps, new_eps)) if new != old)
        return Remedy(dict(params, lam=new_lam, eps=new_eps, threshold=new_rule), changes,
                      search.kept(new_lam, new_eps, new_rule), search.solves)

    def keeps(new_lam, new_eps, new_rule):
        kept = search.kept(new_lam, new_eps, new_rule)
        if kept is None:
            return None
        n_changes = (new_lam != lam) + (new_eps != eps) + (new_rule != rule)
        score = (int(np.count_nonzero(kept)), -n_changes)
        if best[0] is None or score > best[0][:2]:
            best[0] = score + ((new_lam, new_eps, new_rule),)
        return all(kept)

    rules = THRESHOLD_ORDER[THRESHOLD_ORDER.index(rule) + 1:]
    lenient = THRESHOLD_ORDER[-1]
    larger = sorted(float(g) for g in lambda_grid if g > lam)
    smaller = sorted((float(g) for g in eps_grid if g < eps), reverse=True)
    tries = []
    if "threshold" in routes:
        tries += [lambda r=r: (lam, eps, r) if keeps(lam, eps, r) else None for r in rules]
    if "lam" in routes and larger:
        tries.append(lambda: _along(larger, lambda g: keeps(g, eps, rule),
                                    lambda g: (g, eps, rule)))
    if "eps" in routes and smaller:
        tries.append(lambda: _along(smaller, lambda g: keeps(lam, g, rule),
                                    lambda g: (lam, g, rule)))
    if "combinations" in routes:
        if rule != lenient and larger:
            tries.append(lambda: _along(larger, lambda g: keeps(g, eps, lenient),
                                        lambda g: (g, eps, lenient)))
        if rule != lenient and smaller:
            tries.append(lambda: _along(smaller, lambda g: keeps(lam, g, lenient),
                                        lambda g: (lam, g, lenient)))
        if larger and smaller:
            for r in dict.fromkeys((rule, lenient)):
                tries.append(lambda r=r: (larger[-1], smaller[-1], r)
                             if keeps(larger[-1], smaller[-1], r) else None)
    for attempt in tries:
        found = attempt()
        if found is not None:
            return result(*found)
    if best[0] is not None and best[0][0] > int(np.count_nonzero(current)):
        return result(*best[0][2])
    return None


def _along(candidates, keeps, setting):
    """The setting of the nearest of ``candidates`` that keeps trees everywhere, or None."""
    found = _gallop(candidates, keeps)
    return None if found is None else setting(found)
