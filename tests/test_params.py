"""SolverParams: one checked, frozen, hashable value for Algorithm 1's parameters."""

import dataclasses
import pickle

import numpy as np
import pytest

from sdwec.paper import PRESETS
from sdwec.params import SolverParams
from sdwec.solver import solve, solve_many
from sdwec.votes import compress


def _votes(seed, m=40, l=12):
    rng = np.random.default_rng(seed)
    y = rng.choice([-1, 1], size=m)
    H = np.where(rng.random((m, l)) < 0.7, y[:, None], -y[:, None])
    return H, y


def test_defaults_are_the_papers_sdwec_b_with_k_25():
    p = SolverParams()
    assert (p.lam, p.beta, p.gamma, p.eps) == (10.0, 15.0, 15.0, 1.0)
    assert (p.iterations, p.threshold, p.multiclass) == (25, "paper", "plurality")
    assert SolverParams.preset("SDWEC-A") == dict(PRESETS["SDWEC-A"], iterations=25,
                                                  threshold="paper", multiclass="plurality")


def test_it_is_a_read_only_mapping_equal_to_the_dict_of_its_items():
    p = SolverParams(lam=2, eps=0.5)
    assert dict(p) == {"lam": 2.0, "beta": 15.0, "gamma": 15.0, "eps": 0.5, "iterations": 25,
                       "threshold": "paper", "multiclass": "plurality"}
    assert p == dict(p) and dict(p) == p
    assert p["lam"] == 2.0 and p.get("nothing") is None
    assert list(p) == ["lam", "beta", "gamma", "eps", "iterations", "threshold", "multiclass"]
    with pytest.raises(KeyError):
        p["nothing"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.lam = 3.0


def test_equal_settings_are_equal_values_and_hash_alike():
    # An int and a float λ are one setting: a cache keyed by the value must not split them.
    a, b = SolverParams(lam=10), SolverParams(lam=10.0)
    assert a == b and hash(a) == hash(b) and type(a.lam) is float
    assert len({a, b, SolverParams(lam=1.0)}) == 2
    assert a != SolverParams(lam=1.0)
    assert pickle.loads(pickle.dumps(a)) == a
    assert a.replace(lam=1.0) == SolverParams(lam=1.0) and a.lam == 10.0


@pytest.mark.parametrize("changes, names", [
    ({"lam": -1.0}, "lam"), ({"beta": -0.1}, "beta"), ({"gamma": 0.0}, "gamma"),
    ({"eps": 0.0}, "eps"), ({"lam": float("nan")}, "lam"), ({"beta": True}, "beta"),
    ({"iterations": 0}, "iterations"), ({"iterations": 2.5}, "iterations"),
    ({"threshold": "literal"}, "threshold"), ({"multiclass": "ovr"}, "multiclass"),
])
def test_an_out_of_range_parameter_is_named(changes, names):
    with pytest.raises(ValueError, match=names):
        SolverParams(**changes)
    with pytest.raises(ValueError, match="unknown preset"):
        SolverParams.preset("SDWEC-C")


def test_solve_with_params_is_solve_with_the_same_keywords():
    H, y = _votes(0)
    p = SolverParams(lam=3.0, beta=10.0, gamma=20.0, eps=0.1, iterations=7)
    a, b = solve(H, y, params=p), solve(H, y, **p)
    np.testing.assert_array_equal(a.weights, b.weights)
    # The solution carries the very object it was run with.
    assert a.params is p and b.params == p


def test_solve_many_carries_params_to_every_solution():
    tables = [compress(*_votes(seed)) for seed in (1, 2, 3)]
    p = SolverParams(lam=0.5)
    many = solve_many(tables, params=p)
    for table, sol in zip(tables, many):
        assert sol.params is p
        np.testing.assert_allclose(sol.weights, solve(table, params=p).weights, atol=1e-8)


def test_params_and_individual_parameters_together_are_refused():
    H, y = _votes(4)
    with pytest.raises(ValueError, match="either params or the individual"):
        solve(H, y, lam=1.0, params=SolverParams(lam=2.0))
    with pytest.raises(TypeError, match="SolverParams"):
        solve(H, y, params={"lam": 2.0})
