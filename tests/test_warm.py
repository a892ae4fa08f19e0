"""`sdwec warm`: the default pools go into the disk cache once, cheapest first."""

import pytest

from sdwec import __main__ as cli
from sdwec import pool, timing, warm


def test_plan_is_cheapest_first():
    keys = warm.plan(["waveform", "wine", "sonar"], n_trees=200, seeds=(0,))
    assert [k.source for k, _ in keys] == ["wine", "sonar", "waveform"]
    wine = [e for k, e in keys if k.source == "wine"][0]
    # wine: 178 rows, 13 features; the estimate is the timing module's formula.
    assert wine == timing.estimated_training_seconds(178, 13, 200)
    assert all(k.n_trees == 200 and k.seed == 0 and k.task == "binary" for k, _ in keys)


def test_plan_covers_the_dashboards_default_splits():
    # wine: 178 rows, 17 test rows a split -> 10 splits; waveform: 500 test rows -> 3.
    keys = warm.plan(["waveform", "wine"], n_trees=200)
    seeds = {}
    for key, _ in keys:
        seeds.setdefault(key.source, []).append(key.seed)
    assert seeds == {"wine": list(range(10)), "waveform": [0, 1, 2]}
    assert [k.source for k, _ in keys] == ["wine"] * 10 + ["waveform"] * 3


def test_warm_trains_once_then_skips(cache):
    calls = []
    first = warm.warm(["wine", "sonar"], n_trees=5, seeds=(0, 1), n_jobs=1,
                      progress=lambda done, total, msg: calls.append((done, total)))
    assert [(r.key.source, r.key.seed, r.trained) for r in first] == [
        ("wine", 0, True), ("wine", 1, True), ("sonar", 0, True), ("sonar", 1, True)]
    assert all(pool.is_cached(r.key) for r in first)
    assert calls[-1][0] == pytest.approx(calls[-1][1])  # the bar ends full
    again = warm.warm(["wine", "sonar"], n_trees=5, seeds=(0, 1), n_jobs=1)
    assert not any(r.trained for r in again)


def test_warm_command(cache, capsys):
    assert cli.main(["warm", "--datasets", "wine", "--trees", "5", "--seeds", "1",
                     "--quiet"]) == 0
    assert "1 pools warm (1 trained now" in capsys.readouterr().out
    assert pool.is_cached("wine", "binary", 5, 0) and not pool.is_cached("wine", "binary", 5, 1)
    # Without --seeds: the dashboard's default splits of wine, seeds 0..9 (0 is cached).
    assert cli.main(["warm", "--datasets", "wine", "--trees", "5", "--quiet"]) == 0
    assert "10 pools warm (9 trained now" in capsys.readouterr().out
    assert all(pool.is_cached("wine", "binary", 5, seed) for seed in range(10))
    assert cli.main(["warm", "--datasets", "wine", "--trees", "5", "--seeds", "0",
                     "--quiet"]) == 2
    assert "--seeds must be at least 1" in capsys.readouterr().err
