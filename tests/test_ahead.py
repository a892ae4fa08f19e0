"""Answers computed ahead (dashboard/ahead.py) and the Explorer's answer for one setting
(dashboard/explorer_answer.py): what the browser draws for a setting is what the server
draws there."""

import gzip
import json
import time
import zlib

import numpy as np
import pytest

from dashboard import ahead, charts, explorer_answer
from dashboard.config import BETA_GRID, EPS_GRID, GAMMA_GRID, LAMBDA_GRID
from sdwec import comparison, datasets, pool
from sdwec.params import SolverParams

GRIDS = {"lam": LAMBDA_GRID, "beta": BETA_GRID, "gamma": GAMMA_GRID, "eps": EPS_GRID}


def _pools(name, splits=2, n_trees=10):
    return [pool.load_pool(name, datasets.tasks(name)[0], n_trees=n_trees, seed=s)
            for s in range(splits)]


def _answer(pools, params, fit_on="validation"):
    return explorer_answer.answer(comparison.compare_many(pools, fit_on, params=params), fit_on)


def _json(value):
    return json.loads(json.dumps(value))


def _settings(rng, n):
    """``n`` random settings on the sliders' grids."""
    return [SolverParams(lam=float(rng.choice(LAMBDA_GRID)), beta=float(rng.choice(BETA_GRID)),
                         gamma=float(rng.choice(GAMMA_GRID)), eps=float(rng.choice(EPS_GRID)))
            for _ in range(n)]


def test_a_setting_is_named_as_the_sliders_print_it():
    assert explorer_answer.setting_key(10.0, 15.0, 15.0, 1.0) == "10|15|15|1"
    assert explorer_answer.setting_key(0.001, 0.0, 100.0, 0.002) == "0.001|0|100|0.002"


def test_the_cross_is_the_lambda_line_then_nearest_blocks_each_value_once():
    setting = {"lam": 10.0, "beta": 42.0, "gamma": 15.0, "eps": 1.0}
    blocks = ahead.cross("f", setting, GRIDS)
    assert blocks[0].param == "lam" and blocks[0].values == LAMBDA_GRID
    for name, grid in GRIDS.items():
        values = [v for b in blocks if b.param == name for v in b.values]
        assert sorted(values) == sorted(grid)  # every value of the grid, once
        fixed = {b.fixed for b in blocks if b.param == name}
        assert fixed == {tuple((k, setting[k]) for k in GRIDS if k != name)}
    beta = [b.values for b in blocks if b.param == "beta"]
    # The block holding β = 42 first, then its neighbours, outwards.
    assert 42.0 in beta[0] and len(beta[0]) == ahead.BLOCK
    distances = [min(abs(v - 42.0) for v in values) for values in beta]
    assert distances == sorted(distances)


@pytest.mark.parametrize("name", datasets.names())
def test_answers_ahead_are_the_servers_answers(name, tmp_path, monkeypatch):
    """On every shipped dataset, random settings: the answer the background thread writes
    (read back from its file, as the browser reads it) is the answer the page computes for
    that setting itself; and a figure swapped to another setting's parts is that setting's
    figure (LIVE_PARTS covers everything that changes)."""
    monkeypatch.setenv("SDWEC_CACHE_DIR", str(tmp_path / "cache"))
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    pools = _pools(name)
    store = ahead.Ahead(tmp_path / "ahead")
    base = _settings(rng, 1)[0]
    for params in _settings(rng, 3):
        block = ahead.Block("family", "beta", (params.beta,),
                            tuple((k, getattr(params, k)) for k in ("lam", "gamma", "eps")))
        store.want("session", [block],
                   lambda changes, p=params: _answer(pools, p.replace(**changes)))
        deadline = time.monotonic() + 60
        while not store.done(block):
            assert time.monotonic() < deadline, "the block was never written"
            time.sleep(0.02)
        written = json.loads(gzip.decompress(store.path(block).read_bytes()))["answers"]
        own = _answer(pools, params)
        assert written == {own["key"]: _json(own)}
        # What the browser draws from another setting's figure and this setting's parts.
        results = comparison.compare_many(pools, params=base)
        there = explorer_answer.figures(results[0], comparison.over_splits(results),
                                        "validation", len(pools))
        results = comparison.compare_many(pools, params=params)
        here = explorer_answer.figures(results[0], comparison.over_splits(results),
                                       "validation", len(pools))
        for figure, parts in explorer_answer.LIVE_PARTS.items():
            spec = json.loads(charts.figure_spec(there[figure]))
            swapped = charts.with_part(spec, own["figures"][figure])
            assert swapped == json.loads(charts.figure_spec(here[figure])), (name, figure)


def test_a_session_that_moves_on_drops_what_nobody_waits_for(tmp_path, monkeypatch):
    monkeypatch.setenv("SDWEC_CACHE_DIR", str(tmp_path / "cache"))
    store = ahead.Ahead(tmp_path / "ahead")
    computed = []

    def slow(changes):
        computed.append(changes)
        time.sleep(0.05)
        return {"key": repr(changes)}

    first = ahead.Block("f", "beta", tuple(float(v) for v in range(10)), (("lam", 1.0),))
    second = ahead.Block("f", "gamma", (1.0, 2.0), (("lam", 1.0),))
    store.want("s", [first], slow)
    time.sleep(0.08)
    store.want("s", [second], slow)  # moved on: the first block is nobody's now
    deadline = time.monotonic() + 30
    while not store.done(second):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert not store.done(first)
    assert len([c for c in computed if "beta" in c]) < len(first.values)
    # Another session that wants it gets it, and its empty file waits for it meanwhile.
    files = store.want("t", [first], slow)
    assert files[0]["url"].endswith(store.name(first)) and files[0]["done"] is False
    assert store.path(first).stat().st_size == 0


def test_file_names_need_the_key_and_change_with_what_they_hold(tmp_path, monkeypatch):
    monkeypatch.setenv("SDWEC_CACHE_DIR", str(tmp_path / "one"))
    block = ahead.Block("f", "eps", (1.0,), (("lam", 1.0),))
    one = ahead.Ahead(tmp_path / "a").name(block)
    assert ahead.Ahead(tmp_path / "b").name(block) == one  # one key per cache folder
    assert ahead.Ahead(tmp_path / "a").name(ahead.Block("f", "eps", (2.0,), (("lam", 1.0),))) != one
    monkeypatch.setenv("SDWEC_CACHE_DIR", str(tmp_path / "two"))
    assert ahead.Ahead(tmp_path / "a").name(block) != one  # another key, another name


def test_files_are_capped_least_recently_written_first(tmp_path, monkeypatch):
    monkeypatch.setenv("SDWEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(ahead, "MAX_BYTES", 3000)
    store = ahead.Ahead(tmp_path / "ahead")
    store.usable()
    noise = np.random.default_rng(0).bytes(900).hex()  # incompressible enough
    blocks = [ahead.Block("f", "beta", (float(i),), ()) for i in range(6)]
    for i, block in enumerate(blocks):
        store._write(block, {str(i): noise})
        time.sleep(0.01)
    kept = [store.done(b) for b in blocks]
    assert kept[-1] and not kept[0]
    assert sum(p.stat().st_size for p in (tmp_path / "ahead").glob("*.json.gz")) <= 3000


@pytest.mark.parametrize("markdown,expected", [
    ("a **b** *c* d", "a <strong>b</strong> <em>c</em> d"),
    # A code span shows its text as it is, Markdown and HTML included.
    ("x `**y** <z>` w", "x <code>**y** &lt;z&gt;</code> w"),
    ("`` a`b ``", "<code>a`b</code>"),  # a longer fence, one space stripped at each end
    (r"\*not\* 5 \< 6 & <b>", "*not* 5 &lt; 6 &amp; &lt;b&gt;"),
    ("an unclosed ` stays", "an unclosed ` stays"),
])
def test_sentences_become_html_as_markdown_reads_them(markdown, expected):
    assert explorer_answer.html_of(markdown) == expected


def test_the_lambda_help_states_where_this_page_keeps_no_tree_and_every_tree():
    def line(*rows):
        return {f"{lam:g}|15|15|1": {"kept": list(kept)} for lam, kept in rows}

    note = explorer_answer.lambda_note(line(
        (0.001, (0.0, 10, 10, 200)), (0.002, (0.0, 10, 10, 200)), (0.005, (0.5, 9, 10, 200)),
        (10.0, (28.1, 0, 10, 200)), (500.0, (200.0, 0, 10, 200)),
        (1000.0, (200.0, 0, 10, 200))), "sonar")
    assert "(sonar," in note
    assert "no tree at λ ≤ 0.002;" in note and "every tree is kept from λ = 500." in note
    # Every tree kept somewhere in the middle only, and never none: neither is said.
    assert explorer_answer.lambda_note(line(
        (0.001, (3.0, 0, 10, 200)), (1.0, (200.0, 0, 10, 200)),
        (1000.0, (150.0, 0, 10, 200))), "wine") == ""
