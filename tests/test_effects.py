"""Every sentence that says what moving a solver parameter does to the trees kept is measured.

The sentences live in :data:`sdwec.teaching.EFFECTS` (the sidebar's tooltips and How it works
show them), each with the claim it makes: which way the number of trees kept goes as the
parameter rises, and how often. Here each parameter is swept on small pools of every shipped
dataset (NSL-KDD aside: its pool alone would take this file's time) over several splits and
several λ, and the claim is checked on the mean count over the splits. Each sweep runs over
its slider's whole range, both ends included (a subset can hide where a count turns, as
γ's low end did):

* ``"always"``: no step of the sweep goes the other way;
* ``"almost always"``: at least nine in ten of the steps that change the count go the stated
  way;
* ``"usually"``: at least two in three do;
* ``"either way"`` (direction ``"depends"``): each way at least one in four, and both ways
  are seen on one dataset (at different λ) and at one λ (on different datasets); where the
  text says which way each part of the range goes, each part has its own test.
"""

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.config import (
    BETA_RANGE,
    EPS_GRID,
    GAMMA_RANGE,
    ITERATIONS_RANGE,
    LAMBDA_GRID,
    Config,
)
from sdwec import datasets, solver, teaching
from sdwec.paper import PRESETS
from sdwec.pool import build_pool
from sdwec.teaching import EFFECTS, THRESHOLD_ORDER

N_TREES = 50
SEEDS = (0, 1, 2)
#: The λ at which every other parameter is swept: from where most settings abstain to where
#: most trees are kept.
LAMS = (0.1, 0.5, 1.0, 10.0, 100.0)


def _across(slider_range, inner):
    """A linear slider's low end, ``inner`` (denser near the low end, where counts move
    most) and its high end."""
    low, high = slider_range[:2]
    assert all(low < v < high for v in inner)
    return (low, *inner, high)


#: Each parameter's values, in rising order (the threshold rules: strictest first): every
#: slider's whole range, the log-scale ones at every position.
VALUES = {"beta": _across(BETA_RANGE, (1.0, 2.0, 5.0, 10.0, 15.0, 20.0, 35.0, 50.0, 75.0)),
          "gamma": _across(GAMMA_RANGE, (2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0, 30.0, 50.0,
                                         70.0)),
          "eps": EPS_GRID, "iterations": _across(ITERATIONS_RANGE, (2, 5, 10, 25, 50)),
          "threshold": THRESHOLD_ORDER}
#: Quantifiers a "depends" sentence uses for one part of the range; each part's own test
#: below checks it.
PART_QUANTIFIERS = {"gamma": ("usually",)}
#: The share of the changing steps that must go the stated way.
SHARE = {"almost always": 0.9, "usually": 2 / 3}
#: "either way": the share each way must reach.
EITHER_WAY = 0.25
DEFAULTS = Config().params
APP = str(Path(__file__).resolve().parent.parent / "app.py")


class Sweep:
    """Trees kept per split on every shipped dataset's pools, solves memoised."""

    def __init__(self, votes):
        self.votes = votes
        self._kept = {}

    def kept(self, name, **params):
        """Trees kept on each split of ``name`` at the defaults changed by ``params``."""
        merged = dict(DEFAULTS, **params)
        key = (name, tuple(sorted(merged.items())))
        if key not in self._kept:
            solutions = solver.solve_many(self.votes[name], **merged)
            self._kept[key] = np.array([s.n_selected for s in solutions])
        return self._kept[key]

    def steps(self, parameter, values=None, settings=None):
        """``(dataset, setting, low, high, kept at low, kept at high)`` for every step between
        neighbouring values; kept counts per split. ``settings`` (default: every λ of
        :data:`LAMS`) are the other parameters the sweep is run at."""
        values = VALUES[parameter] if values is None else values
        settings = [{"lam": lam} for lam in LAMS] if settings is None else settings
        out = []
        for name in self.votes:
            for setting in settings:
                counts = [self.kept(name, **dict(setting, **{parameter: v})) for v in values]
                out += [(name, setting, a, b, ka, kb)
                        for a, b, ka, kb in zip(values, values[1:], counts, counts[1:])]
        return out


@pytest.fixture(scope="module")
def sweep():
    names = [n for n in datasets.names() if n != "nsl_kdd"]
    votes = {}
    for name in names:
        data = datasets.load(name)
        votes[name] = [build_pool(data.X, data.y, n_trees=N_TREES, seed=s, n_jobs=1).votes("val")
                       for s in SEEDS]
    return Sweep(votes)


def _ways(steps):
    """How many steps raise, lower and keep the mean count over the splits."""
    up = sum(kb.mean() > ka.mean() for *_, ka, kb in steps)
    down = sum(kb.mean() < ka.mean() for *_, ka, kb in steps)
    return up, down, len(steps) - up - down


def _check_direction(effect, steps):
    """The claim ``effect`` makes about ``steps``, checked; returns (up, down, same)."""
    up, down, same = _ways(steps)
    changed = up + down
    assert changed > 0, f"{effect.parameter}: no step changes the count; the sweep says nothing"
    stated, other = {"more": (up, down), "fewer": (down, up)}.get(effect.direction, (None, None))
    if effect.how_often == "always":
        assert other == 0, f"{effect.parameter}: {other} of {changed} steps go the other way"
    elif effect.how_often in SHARE:
        assert stated / changed >= SHARE[effect.how_often], (effect.parameter, up, down, same)
    else:
        assert effect.direction == "depends" and effect.how_often == "either way"
        assert min(up, down) / changed >= EITHER_WAY, (effect.parameter, up, down, same)
    return up, down, same


@pytest.mark.parametrize("name", sorted(EFFECTS))
def test_each_sentence_states_its_claim(name):
    """The text says the direction and the quantifier the test checks, nothing stronger."""
    effect = EFFECTS[name]
    assert effect.parameter == name
    text = effect.text
    assert {"more": "more trees", "fewer": "fewer trees", "depends": "depends"}[
        effect.direction] in text
    words = ("almost always", "usually")
    if effect.how_often in words:
        assert effect.how_often in text
        assert not [w for w in words if w != effect.how_often and w in text]
    else:
        assert not [w for w in words if w in text and w not in PART_QUANTIFIERS.get(name, ())]


def test_sweeps_cover_every_sliders_whole_range():
    for name, slider in [("beta", BETA_RANGE), ("gamma", GAMMA_RANGE),
                         ("iterations", ITERATIONS_RANGE)]:
        assert (VALUES[name][0], VALUES[name][-1]) == slider[:2], name
    assert VALUES["eps"] == EPS_GRID
    assert set(VALUES["threshold"]) == set(solver.THRESHOLDS)


@pytest.mark.parametrize("name", ["beta", "gamma", "eps", "iterations", "threshold"])
def test_direction_holds_on_the_shipped_datasets(sweep, name):
    _check_direction(EFFECTS[name], sweep.steps(name))


def test_threshold_rules_keep_more_in_their_order_on_every_split(sweep):
    """"always" for the threshold rule holds split by split, not only on the mean."""
    for name, setting, low, high, ka, kb in sweep.steps("threshold"):
        assert (kb >= ka).all(), (name, setting, low, high, ka, kb)


def test_adaptive_threshold_is_never_below_the_papers():
    rng = np.random.default_rng(0)
    w = np.concatenate([[0.0], rng.exponential(1.0, 200)])
    for beta in (0.0, 1.0, 5.0, 15.0, 35.0, BETA_RANGE[1]):
        for gamma in (GAMMA_RANGE[0], 2.0, 5.0, 15.0, 60.0, GAMMA_RANGE[1]):
            for eps in EPS_GRID:
                paper = solver.paper_threshold(beta, gamma, eps)
                assert (solver.adaptive_thresholds(w, beta, gamma, eps) >= paper - 1e-12).all()


def test_lambda_usually_keeps_more_at_the_defaults_and_at_preset_a(sweep):
    preset_a = {k: PRESETS["SDWEC-A"][k] for k in ("beta", "gamma", "eps")}
    steps = sweep.steps("lam", LAMBDA_GRID, settings=[{}, preset_a])
    _check_direction(EFFECTS["lam"], steps)


def test_a_small_lambda_switches_every_tree_off_at_the_defaults(sweep):
    assert "0.01 or less switches every tree off on the ten UCI datasets" in \
        EFFECTS["lam"].text
    for name in sweep.votes:
        for lam in (g for g in LAMBDA_GRID if g <= 0.01):
            assert (sweep.kept(name, lam=lam) == 0).all(), (name, lam)


def test_how_far_up_every_tree_stays_off_depends_on_the_dataset(sweep):
    """The sentence leaves the range to each dataset (the sidebar then states the page's
    own, measured): here the last λ where every split keeps no tree differs by dataset."""
    assert "depends on the dataset" in EFFECTS["lam"].text
    last_off = {name: max(lam for lam in LAMBDA_GRID if (sweep.kept(name, lam=lam) == 0).all())
                for name in sweep.votes}
    assert len(set(last_off.values())) > 1, last_off


def test_beta_zero_puts_the_threshold_at_zero_and_keeps_the_most(sweep):
    assert "β = 0" in EFFECTS["beta"].text
    for gamma in (1.0, 15.0, 100.0):
        for eps in EPS_GRID:
            assert solver.paper_threshold(0.0, gamma, eps) == 0.0
    for name in sweep.votes:
        for lam in LAMS:
            at_zero = sweep.kept(name, lam=lam, beta=0.0).mean()
            for beta in VALUES["beta"][1:]:
                assert at_zero >= sweep.kept(name, lam=lam, beta=beta).mean(), (name, lam, beta)


def test_beta_goes_both_ways_by_dataset_and_by_lambda(sweep):
    """Above β = 0 the sentence says the direction depends on the dataset and on λ: some
    dataset goes both ways at different λ, and some λ both ways on different datasets."""
    assert "depends on the dataset and on λ" in EFFECTS["beta"].text
    steps = [s for s in sweep.steps("beta") if s[2] > 0]
    _check_direction(EFFECTS["beta"], steps)
    ways = {}
    for name, setting, _, _, ka, kb in steps:
        if kb.mean() != ka.mean():
            ways.setdefault(("dataset", name), set()).add(kb.mean() > ka.mean())
            ways.setdefault(("lam", setting["lam"]), set()).add(kb.mean() > ka.mean())
    assert any(len(v) == 2 for k, v in ways.items() if k[0] == "dataset")
    assert any(len(v) == 2 for k, v in ways.items() if k[0] == "lam")


def test_gamma_from_the_low_end_cuts_trees_up_to_the_default_lambda(sweep):
    """At every λ of the grid up to the default, on every dataset, γ = 1 keeps at least
    twice γ = 5's trees (mean over splits), and at λ = 2 or less every tree on every split."""
    text = EFFECTS["gamma"].text
    assert "depends on where γ starts" in text
    assert ("At λ up to the default 10, γ = 1 keeps at least twice as many trees as γ = 5 "
            "(every tree at λ = 2 or less)") in text
    assert DEFAULTS["lam"] == 10.0
    for name, votes in sweep.votes.items():
        for lam in (g for g in LAMBDA_GRID if g <= DEFAULTS["lam"]):
            low, five = sweep.kept(name, lam=lam, gamma=1.0), sweep.kept(name, lam=lam, gamma=5.0)
            assert low.mean() >= 2 * five.mean(), (name, lam, low, five)
            if lam <= 2.0:
                assert (low == votes[0].n_members).all(), (name, lam, low)


def test_gamma_above_five_usually_keeps_more(sweep):
    assert "above γ = 5 a larger γ usually keeps more" in EFFECTS["gamma"].text
    up, down, same = _ways([s for s in sweep.steps("gamma") if s[2] >= 5.0])
    assert up / (up + down) >= SHARE["usually"], (up, down, same)


def test_gamma_count_is_lowest_in_between_up_to_the_default_lambda(sweep):
    """Both ends of the γ slider keep more trees than its fewest, on every dataset at every
    swept λ up to the default."""
    assert "so the count is lowest in between" in EFFECTS["gamma"].text
    for name in sweep.votes:
        for lam in (g for g in LAMS if g <= DEFAULTS["lam"]):
            counts = [sweep.kept(name, lam=lam, gamma=g).mean() for g in VALUES["gamma"]]
            assert min(counts) < min(counts[0], counts[-1]), (name, lam, counts)


def test_gamma_one_keeps_fewer_than_five_at_a_large_lambda(sweep):
    """From λ = 200 the low end turns: γ = 1 keeps fewer than γ = 5 on most (over half the)
    datasets, at every such λ of the grid."""
    assert "At λ = 200 or more, γ = 1 keeps fewer trees than γ = 5 on most datasets" in \
        EFFECTS["gamma"].text
    for lam in (g for g in LAMBDA_GRID if g >= 200.0):
        fewer = [name for name in sweep.votes if sweep.kept(name, lam=lam, gamma=1.0).mean()
                 < sweep.kept(name, lam=lam, gamma=5.0).mean()]
        assert len(fewer) > len(sweep.votes) / 2, (lam, fewer)


def test_iterations_push_weights_under_the_threshold(sweep):
    """Within one run, fewer weights stand above the threshold after the last iteration than
    after the first, usually (the mechanism the k sentence names; also what the Explorer's
    weights-across-iterations view asks the reader to watch)."""
    fewer = more = 0
    for votes in sweep.votes.values():
        for lam in LAMS:
            # The slider's most iterations: the history spans every k it offers.
            params = dict(DEFAULTS, lam=lam, iterations=ITERATIONS_RANGE[1])
            for sol in solver.solve_many(votes, **params):
                first, last = (int(np.sum(r.weights > sol.threshold))
                               for r in (sol.history[0], sol.history[-1]))
                fewer += last < first
                more += last > first
    assert fewer / (fewer + more) >= SHARE["usually"]


def test_threshold_moves_as_stated_on_the_sidebars_grids():
    """β and ε move the paper's threshold right, γ left, over every value the sidebar offers."""
    assert "Raising β or ε moves the threshold right and raising γ moves it left" in \
        teaching.THRESHOLD_MOVES
    betas = np.arange(BETA_RANGE[0], BETA_RANGE[1] + 1, BETA_RANGE[2] * 5)
    gammas = np.arange(GAMMA_RANGE[0], GAMMA_RANGE[1] + 1, GAMMA_RANGE[2] * 3)
    t = np.array([[[solver.paper_threshold(b, g, e) for e in EPS_GRID] for g in gammas]
                  for b in betas])
    assert (np.diff(t, axis=0) >= 0).all() and (np.diff(t, axis=2) >= 0).all()
    assert (np.diff(t, axis=1) <= 0).all()
    # Not flat: each moves it somewhere.
    assert (np.diff(t, axis=0) > 0).any() and (np.diff(t, axis=1) < 0).any()
    assert (np.diff(t, axis=2) > 0).any()


def test_lambda_zero_gives_every_weight_one_value(sweep):
    """docs/algorithm.md, "λ = 0": no data term, so every weight takes one value, below the
    start w = 1 at the presets' β, γ, ε and above it with a large β and a small γ/ε."""
    votes = sweep.votes["sonar"][0]
    presets = [{k: PRESETS[name][k] for k in ("beta", "gamma", "eps")} for name in PRESETS]
    for params, below in [(p, True) for p in presets] + [
            ({"beta": BETA_RANGE[1], "gamma": GAMMA_RANGE[0], "eps": EPS_GRID[-1]}, False)]:
        w = solver.solve(votes, lam=0.0, **params).raw_weights
        assert np.ptp(w) <= 1e-12 * w.max(), params
        assert (w.max() < 1.0) if below else (w.min() > 1.0), (params, w.max())


def test_a_larger_beta_can_switch_every_tree_off(sweep):
    """docs/dashboard.md ("When every weight is zero"): on some dataset and λ a larger β
    leaves a split with no tree where a smaller one (above 0) kept some."""
    assert any(((ka > 0) & (kb == 0)).any()
               for _, _, low, _, ka, kb in sweep.steps("beta") if low > 0)


@pytest.mark.usefixtures("fresh_streamlit")
def test_how_it_works_shows_the_measured_sentences():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"dataset": "wine", "l": "10", "r": "1"})
    at.run()
    at.switch_page("pages/how_it_works.py").run()
    assert not at.exception, [e.value for e in at.exception]
    (caption,) = [c.value for c in at.caption if "dashed vertical" in c.value]
    assert teaching.THRESHOLD_MOVES in caption
    for name in ("eps", "beta", "gamma"):
        assert EFFECTS[name].text in caption
    assert "fewer trees survive" not in caption
