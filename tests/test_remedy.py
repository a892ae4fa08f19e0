"""The nearest setting that keeps trees when a setting abstains (sdwec.remedy), and the
Explorer's remedy: it names that setting and applies it in one click.

Every expectation is checked by solving the suggested setting again with
:func:`sdwec.solver.solve` on each split on its own.
"""

import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.config import EPS_GRID, LAMBDA_GRID, Config
from harness.apptest_charts import headline, live_texts
from sdwec import datasets, remedy, solver
from sdwec.pool import build_pool, load_pool
from sdwec.teaching import EFFECTS, THRESHOLD_ORDER

APP = str(Path(__file__).resolve().parent.parent / "app.py")
DEFAULTS = Config().params
TINY = dict(DEFAULTS, lam=LAMBDA_GRID[0])  # every split of sonar abstains here


@pytest.fixture(scope="module")
def pools():
    data = datasets.load("sonar")
    return [build_pool(data.X, data.y, n_trees=20, seed=s) for s in range(3)]


def _kept(pools, params):
    """Trees kept on each split, each solved on its own."""
    return tuple(solver.solve(p.votes("val"), None, **params).n_selected for p in pools)


def test_abstaining_names_the_splits():
    assert remedy.abstaining([3, 0, 1, 0]) == (1, 3)
    assert remedy.abstaining([]) == ()


def test_a_setting_that_keeps_trees_needs_no_change(pools):
    params = dict(DEFAULTS, lam=10.0)
    assert all(_kept(pools, params))  # the premise
    found = remedy.nearest_keeping(pools, params, LAMBDA_GRID, EPS_GRID)
    assert found.changes == () and found.kept == _kept(pools, params)
    assert found.describe().startswith("The setting keeps")


def test_the_threshold_rule_comes_first_and_is_checked(pools):
    assert not any(_kept(pools, TINY))  # the premise: every split abstains
    found = remedy.nearest_keeping(pools, TINY, LAMBDA_GRID, EPS_GRID)
    assert found.everywhere
    assert found.changes == (("threshold", "paper", "none"),)
    assert found.kept == _kept(pools, found.params) and all(found.kept)
    assert found.describe().startswith("Threshold rule *none* (now *paper*) keeps")


def test_from_adaptive_the_paper_rule_is_nearer_than_none(pools):
    # A λ where the adaptive rule leaves a split empty but the paper's keeps trees on all.
    candidates = [lam for lam in LAMBDA_GRID
                  if not all(_kept(pools, dict(DEFAULTS, lam=lam, threshold="adaptive")))
                  and all(_kept(pools, dict(DEFAULTS, lam=lam)))]
    assert candidates  # the premise
    params = dict(DEFAULTS, lam=candidates[0], threshold="adaptive")
    found = remedy.nearest_keeping(pools, params, LAMBDA_GRID, EPS_GRID)
    assert found.changes == (("threshold", "adaptive", "paper"),)
    assert found.kept == _kept(pools, found.params)


@pytest.mark.parametrize("route,grid,name", [("lam", LAMBDA_GRID, "lam"),
                                             ("eps", EPS_GRID, "eps")])
def test_along_a_grid_the_nearest_keeping_value_is_found(pools, route, grid, name):
    """The value found keeps trees on every split, and the grid value just before it (if
    any beyond the current one) does not."""
    params = dict(TINY, eps=1.0)
    found = remedy.nearest_keeping(pools, params, LAMBDA_GRID, EPS_GRID, routes=(route,))
    ((changed, old, new),) = found.changes
    assert changed == name and old == params[name] and new in grid
    assert (new > old) if name == "lam" else (new < old)
    assert found.kept == _kept(pools, found.params) and all(found.kept)
    between = sorted((g for g in grid if min(old, new) < g < max(old, new)),
                     reverse=name == "eps")
    if between:
        assert not all(_kept(pools, dict(params, **{name: between[-1]})))
    assert found.solves <= len(grid)


def test_nothing_found_gives_none(pools):
    # Only λ routes, on a grid whose one larger λ abstains too.
    assert not any(_kept(pools, dict(TINY, lam=LAMBDA_GRID[1])))  # the premise
    assert remedy.nearest_keeping(pools, TINY, LAMBDA_GRID[:2], EPS_GRID,
                                  routes=("lam",)) is None


def test_a_partial_remedy_says_on_how_many_splits(pools):
    # A λ that keeps trees on some splits, not all: offered alone, it is the best there is.
    partial = [lam for lam in LAMBDA_GRID
               if 0 < np.count_nonzero(_kept(pools, dict(DEFAULTS, lam=lam))) < len(pools)]
    assert partial  # the premise
    lam = partial[0]
    found = remedy.nearest_keeping(pools, TINY, (TINY["lam"], lam), EPS_GRID, routes=("lam",))
    kept = _kept(pools, dict(DEFAULTS, lam=lam))
    assert not found.everywhere and found.kept == kept
    assert f"keeps trees on {np.count_nonzero(kept)} of {len(pools)} splits" in found.describe()


def test_combinations_are_tried_when_no_single_change_keeps_trees(pools):
    """With the threshold route left out and grids that reach no single keeping value, the
    combination of the lenient rule with a larger λ is found."""
    grid = (TINY["lam"], LAMBDA_GRID[1])
    assert not any(_kept(pools, dict(TINY, lam=grid[1])))  # the premise
    found = remedy.nearest_keeping(pools, TINY, grid, (), routes=("lam", "combinations"))
    assert found.new_values == {"threshold": THRESHOLD_ORDER[-1], "lam": grid[1]}
    assert found.kept == _kept(pools, found.params) and all(found.kept)


def test_the_solve_budget_is_kept(pools):
    calls = []
    real = solver.solve_many

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    solver.solve_many, saved = counted, solver.solve_many
    try:
        found = remedy.nearest_keeping(pools, TINY, LAMBDA_GRID, EPS_GRID,
                                       routes=("lam", "eps"), max_solves=3)
    finally:
        solver.solve_many = saved
    assert len(calls) <= 3
    if found is not None:
        assert found.kept == _kept(pools, found.params)


def test_votes_and_pools_give_the_same_remedy(pools):
    votes = [p.votes("val") for p in pools]
    assert (remedy.nearest_keeping(votes, TINY, LAMBDA_GRID, EPS_GRID, routes=("lam",))
            == remedy.nearest_keeping(pools, TINY, LAMBDA_GRID, EPS_GRID, routes=("lam",)))
    with pytest.raises(ValueError, match="unknown routes"):
        remedy.nearest_keeping(pools, TINY, LAMBDA_GRID, routes=("beta",))


def test_sentences():
    one = remedy.Remedy({}, (("threshold", "paper", "none"),), (12,))
    assert one.describe() == "Threshold rule *none* (now *paper*) keeps 12 trees."
    same = remedy.Remedy({}, (("lam", 0.001, 0.2),), (1, 1))
    assert same.describe() == "λ = 0.2 (now 0.001) keeps 1 tree on every split."
    spread = remedy.Remedy({}, (("eps", 1.0, 0.1), ("lam", 0.001, 0.5)), (3, 5, 4))
    assert spread.describe() == ("ε = 0.1 (now 1) with λ = 0.5 (now 0.001) keeps 3 to 5 "
                                 "trees on every split (4.0 on average).")
    assert spread.new_values == {"eps": 0.1, "lam": 0.5}


# --------------------------------------------------------------------------- the Explorer


def _app(query):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(query)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _abstention_warnings(at):
    """The sentence saying which splits abstain (it follows the sliders) with the remedies
    offered under it, as one text; none when no split abstains."""
    said = re.sub(r"<[^>]+>", "", live_texts(at).get("abstain", ""))
    if not said:
        return []
    return [" ".join([said] + [w.value for w in at.warning if "keep trees" in w.value])]


@pytest.mark.usefixtures("fresh_streamlit")
@pytest.mark.parametrize("splits", [1, 3])
def test_explorer_names_the_remedy_and_applies_it_in_one_click(splits):
    query = {"dataset": "sonar", "l": "20", "r": str(splits), "lam": f"{LAMBDA_GRID[0]:g}"}
    at = _app(query)
    direct = [load_pool("sonar", "binary", n_trees=20, seed=s) for s in range(splits)]
    assert not any(_kept(direct, TINY))  # the premise: every split abstains
    # Two routes, each offered with its own button: the nearest larger λ (or smaller ε) with
    # the same rule, and a more lenient rule with the same λ and ε.
    expected = remedy.nearest_keeping(direct, TINY, LAMBDA_GRID, EPS_GRID,
                                      routes=("lam", "eps", "combinations"))
    lenient = remedy.nearest_keeping(direct, TINY, LAMBDA_GRID, EPS_GRID, routes=("threshold",))
    (warning,) = _abstention_warnings(at)
    assert expected.describe() in warning and lenient.describe() in warning
    assert [c for c, _, _ in expected.changes] != ["threshold"]
    assert at.button(key="explorer_remedy_1").label == f"Apply: {lenient.setting()}"
    if splits > 1:
        assert warning.startswith(f"{splits} of {splits} splits abstain")
    at.button(key="explorer_remedy_0").click().run()
    assert not at.exception, [e.value for e in at.exception]
    config = dict(TINY, **expected.new_values)
    assert at.selectbox(key="cfg_threshold").value == config["threshold"]
    assert at.select_slider(key="cfg_lam").value == config["lam"]
    assert at.select_slider(key="cfg_eps").value == config["eps"]
    assert at.query_params["thr"] in (config["threshold"], [config["threshold"]])
    kept = _kept(direct, config)
    assert all(kept)
    assert not _abstention_warnings(at)
    used = headline(at)["Classifiers used"]
    if splits == 1:
        assert used == f"{kept[0]} / 20"
    # The sidebar's solver tooltips are the measured sentences.
    helps = {key: at.slider(key=key).proto.help for key in ("cfg_beta", "cfg_gamma")}
    helps["cfg_eps"] = at.select_slider(key="cfg_eps").proto.help
    helps["cfg_lam"] = at.select_slider(key="cfg_lam").proto.help
    helps["cfg_threshold"] = at.selectbox(key="cfg_threshold").proto.help
    helps["cfg_iterations"] = at.slider(key="cfg_iterations").proto.help
    for key, help_text in helps.items():
        assert EFFECTS[key[len("cfg_"):]].text in help_text, key
