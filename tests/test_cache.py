"""Cache hygiene (issue 22, item 5): a size cap with least-recently-used eviction, dead
writers' temporary files swept at first use, and links that cannot start heavy training
without the viewer confirming it.
"""

import os
import subprocess
import sys
import tempfile
import warnings

import pytest

from sdwec import cache as disk_cache

LABEL = "hygiene"
PAYLOAD = b"x" * 4000  # every entry the same size: its key differs by one digit only


def _key(name):
    return {"kind": "test", "name": name}


def _store(name, mtime=None):
    path = disk_cache.store(_key(name), PAYLOAD, LABEL)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def _names(cache):
    return sorted(p.name for p in cache.glob(f"{LABEL}-*.pkl"))


# --------------------------------------------------------------------------- the cap


@pytest.mark.parametrize("text, expected", [
    ("", disk_cache.DEFAULT_MAX_BYTES), ("123456", 123456), ("500M", 500 * 1024 ** 2),
    ("2G", 2 * 1024 ** 3), ("2GiB", 2 * 1024 ** 3), ("1.5k", 1536), ("none", None)])
def test_the_cap_reads_bytes_and_units(monkeypatch, text, expected):
    monkeypatch.setenv(disk_cache.MAX_BYTES_ENV, text)
    assert disk_cache.max_bytes() == expected


def test_the_default_cap_is_two_gibibytes(monkeypatch):
    monkeypatch.delenv(disk_cache.MAX_BYTES_ENV, raising=False)
    assert disk_cache.max_bytes() == 2 * 1024 ** 3


def test_an_unreadable_cap_warns_and_keeps_the_default(monkeypatch):
    monkeypatch.setenv(disk_cache.MAX_BYTES_ENV, "two gigs")
    with pytest.warns(RuntimeWarning, match="not a size"):
        assert disk_cache.max_bytes() == 2 * 1024 ** 3


def test_least_recently_used_entries_go_first(cache, monkeypatch):
    a, b, c = _store("a", 1000), _store("b", 2000), _store("c", 3000)
    size = a.stat().st_size
    assert b.stat().st_size == c.stat().st_size == size
    assert disk_cache.load(_key("a"), LABEL) == PAYLOAD  # a read makes "a" the most recent
    monkeypatch.setenv(disk_cache.MAX_BYTES_ENV, str(int(2.5 * size)))
    d = _store("d")
    # 4 entries > 2.5: "b" (t=2000) goes, then "c" (t=3000); "a" was read, "d" just written.
    assert _names(cache) == sorted([a.name, d.name])
    assert disk_cache.load(_key("b"), LABEL) is None and disk_cache.load(_key("d"), LABEL)


def test_under_the_cap_nothing_is_deleted(cache, monkeypatch):
    paths = [_store(n, t) for n, t in (("a", 1000), ("b", 2000), ("c", 3000))]
    monkeypatch.setenv(disk_cache.MAX_BYTES_ENV, str(3 * paths[0].stat().st_size))
    assert disk_cache.evict() == []
    assert _names(cache) == sorted(p.name for p in paths)


def test_an_entry_whose_lock_is_held_is_not_evicted(cache, monkeypatch):
    a = _store("a", 1000)
    _store("b", 2000), _store("c", 3000)
    size = a.stat().st_size
    monkeypatch.setenv(disk_cache.MAX_BYTES_ENV, str(int(1.5 * size)))
    # Another builder holds "a"'s lock (a second open of the lock file: flock locks belong
    # to the open file, so this excludes the evicting store exactly as another process does).
    with disk_cache.locked(_key("a"), LABEL):
        d = _store("d")
        assert _names(cache) == sorted([a.name, d.name])  # still over the cap, but "a" stays
    e = _store("e")  # the lock is free now: "a" (oldest), then "d", go
    assert _names(cache) == [e.name]


def test_an_entry_larger_than_the_cap_is_kept_once_written(cache, monkeypatch):
    monkeypatch.setenv(disk_cache.MAX_BYTES_ENV, "10")
    a = _store("a")
    assert _names(cache) == [a.name]  # the entry just written is never deleted
    b = _store("b")
    assert _names(cache) == [b.name]


def test_temporary_files_are_not_counted_or_evicted(cache, monkeypatch):
    a = _store("a", 1000)
    fd, live = tempfile.mkstemp(dir=cache, prefix=disk_cache._temp_prefix(".tmp-"),
                                suffix=".pkl")  # a writer of this (live) process
    os.write(fd, b"y" * 100_000)
    os.close(fd)
    monkeypatch.setenv(disk_cache.MAX_BYTES_ENV, str(2 * a.stat().st_size))
    b = _store("b")
    assert _names(cache) == sorted([a.name, b.name]) and os.path.exists(live)


# --------------------------------------------------------------------------- dead writers


_DEAD_WRITER = ("import sys, tempfile\n"
                "from sdwec import cache\n"
                "fd, path = tempfile.mkstemp(dir=sys.argv[1], suffix='.pkl',\n"
                "                            prefix=cache._temp_prefix('.tmp-'))\n"
                "print(path)\n")


def test_dead_writers_temp_files_go_at_first_use(cache):
    cache.mkdir(parents=True)
    # A writer that exits (as a killed one would) without renaming its temporary file.
    dead = subprocess.run([sys.executable, "-c", _DEAD_WRITER, str(cache)], check=True,
                          capture_output=True, text=True).stdout.strip()
    assert os.path.basename(dead).startswith(".tmp-")
    alive = tempfile.mkstemp(dir=cache, prefix=disk_cache._temp_prefix(".tmp-"),
                             suffix=".pkl")[1]  # this process: alive
    elsewhere = cache / ".tmp-12345-0badc0de-abc.pkl"  # another host: its pid cannot be asked
    elsewhere.write_bytes(b"")
    old = cache / ".tmp-oldstyle.pkl"  # no pid in the name, and old
    old.write_bytes(b"")
    os.utime(old, (0, 0))
    # The first use of the folder in a process sweeps it: here, asking whether an entry exists.
    assert not disk_cache.contains(_key("a"), LABEL)
    left = sorted(p.name for p in cache.iterdir())
    assert left == sorted([os.path.basename(alive), elsewhere.name])
    os.utime(elsewhere, (0, 0))  # once older than the bound, another host's file goes too
    assert disk_cache.remove_dead_temp_files() == [elsewhere]


def test_a_new_process_sweeps_at_its_first_read(cache):
    cache.mkdir(parents=True)
    subprocess.run([sys.executable, "-c", _DEAD_WRITER, str(cache)], check=True,
                   capture_output=True)
    assert len(list(cache.glob(".tmp-*"))) == 1
    reader = ("from sdwec import cache\n"
              "assert cache.load({'kind': 'test', 'name': 'a'}, 'hygiene') is None\n")
    subprocess.run([sys.executable, "-c", reader], check=True,
                   env=dict(os.environ, **{disk_cache.CACHE_ENV: str(cache)}))
    assert list(cache.glob(".tmp-*")) == []


def test_a_dead_progress_writers_temp_file_goes_too(cache):
    cache.mkdir(parents=True)
    script = _DEAD_WRITER.replace("'.tmp-'", "'.progress-tmp-'").replace("'.pkl'",
                                                                           "'.progress'")
    dead = subprocess.run([sys.executable, "-c", script, str(cache)], check=True,
                          capture_output=True, text=True).stdout.strip()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert disk_cache.remove_dead_temp_files() == [cache / os.path.basename(dead)]


# --------------------------------------------------------------------------- links


def test_a_link_asking_for_1000_trees_on_nsl_kdd_needs_confirmation():
    from dashboard import budget

    # 100k training rows x 41 features x 1000 exact CART trees: minutes at the very least.
    ask = budget.training_ask(125_973, 41, 1000, pools=1, label="nsl_kdd", budget=30)
    assert ask.needs_confirmation and ask.seconds[0] > 60
    assert "1,000 trees on nsl_kdd" in ask.message() and "Train it" in ask.message()


def test_the_default_link_trains_without_asking():
    from dashboard import budget

    # sonar: 208 rows x 60 features, 200 trees: a few seconds.
    ask = budget.training_ask(208, 60, 200, pools=1, label="sonar", budget=30)
    assert not ask.needs_confirmation and ask.seconds[1] < 30
    # Pools on disk cost nothing, whatever their size.
    assert not budget.training_ask(125_973, 41, 1000, pools=0, label="nsl_kdd",
                                   budget=30).needs_confirmation


#: The dashboard's default number of splits of each shipped dataset: enough for 1,000 test
#: rows (a tenth of the rows each), at most 10 (sdwec.comparison.default_splits).
DEFAULT_SPLITS = {"breast": 10, "heart": 10, "ionosphere": 10, "sonar": 10, "vehicle": 10,
                  "vote": 10, "wdbc": 10, "wine": 10, "wpbc": 10, "waveform": 3, "nsl_kdd": 1}


def test_the_default_budget_lets_every_default_configuration_but_nsl_kdd_train(monkeypatch):
    from dashboard import budget
    from sdwec import datasets

    monkeypatch.delenv(budget.LINK_BUDGET_ENV, raising=False)
    assert budget.link_budget_seconds() == 60.0
    asks = {}
    for name, splits in DEFAULT_SPLITS.items():
        rows, features = datasets.load(name).X.shape
        asks[name] = budget.training_ask(rows, features, 200, pools=splits, label=name)
    assert [n for n, ask in asks.items() if ask.needs_confirmation] == ["nsl_kdd"]
    # ... and a larger pool over ten new splits of a small set waits for the click.
    assert budget.training_ask(208, 60, 1000, pools=10, label="sonar").needs_confirmation


def test_configurations_are_costed_by_their_untrained_pools(cache, monkeypatch):
    from dashboard import budget
    from dashboard.config import Config
    from sdwec import pool

    monkeypatch.delenv(budget.LINK_BUDGET_ENV, raising=False)
    assert budget.config_ask(Config(dataset="nsl_kdd", n_trees=1000, seed=1234)) \
        .needs_confirmation
    assert not budget.config_ask(Config()).needs_confirmation  # sonar, l = 200, one split
    pool.load_pool("wine", n_trees=10, seed=5)
    ask = budget.config_ask(Config(dataset="wine", n_trees=10, seed=5, splits=3), budget=0)
    assert ask.pools == 2 and ask.needs_confirmation  # seed 5 is on disk, 6 and 7 are not
    monkeypatch.setenv(budget.LINK_BUDGET_ENV, "0")
    assert budget.link_budget_seconds() == 0.0


@pytest.fixture
def app_cache(tmp_path, monkeypatch):
    """An empty pool cache, and Streamlit's in-memory caches empty, for one AppTest."""
    import streamlit as st

    from sdwec import pool

    folder = tmp_path / "pools"
    monkeypatch.setenv(pool.CACHE_ENV, str(folder))
    st.cache_data.clear()
    st.cache_resource.clear()
    yield folder
    st.cache_data.clear()
    st.cache_resource.clear()


def _pool_files(folder):
    return sorted(p.name for p in folder.glob("pool-*.pkl")) if folder.exists() else []


def _confirm_buttons(at):
    return [b for b in at.button if b.key == "link_train_it"]


def test_a_heavy_link_waits_for_the_click(app_cache, monkeypatch):
    from tests.test_app import _app

    monkeypatch.delenv("SDWEC_LINK_BUDGET_SECONDS", raising=False)
    at = _app({"dataset": "nsl_kdd", "l": "1000", "seed": "1234", "r": "1"})
    assert not at.exception and not at.error
    assert len(_confirm_buttons(at)) == 1
    assert any("1,000 trees on nsl_kdd" in w.value for w in at.warning)
    assert not at.metric  # the Explorer stopped before its results
    assert _pool_files(app_cache) == []  # and nothing was trained
    at.run()  # a rerun (any widget) still trains nothing
    assert len(_confirm_buttons(at)) == 1 and _pool_files(app_cache) == []
    at.switch_page("pages/frontier.py").run()  # nor does another page that trains
    assert len(_confirm_buttons(at)) == 1 and _pool_files(app_cache) == []
    assert not at.exception and not at.error
    at.switch_page("pages/how_it_works.py").run()  # a page that trains nothing is not held
    assert not _confirm_buttons(at) and at.title and _pool_files(app_cache) == []


def test_the_click_trains_and_the_viewers_own_moves_need_none(app_cache, monkeypatch):
    from tests.test_app import _app

    monkeypatch.setenv("SDWEC_LINK_BUDGET_SECONDS", "0")  # any training is over budget
    at = _app({"dataset": "wine", "l": "10", "seed": "1234", "r": "1"})
    assert _confirm_buttons(at) and _pool_files(app_cache) == []
    _confirm_buttons(at)[0].click().run()
    assert not at.exception and not at.error and not _confirm_buttons(at)
    (trained,) = _pool_files(app_cache)
    assert trained.startswith("pool-wine-binary-l10-s1234-")
    assert at.metric  # the Explorer drew its results

    at = _app({"dataset": "wine", "l": "10", "seed": "4321", "r": "1"})
    assert _confirm_buttons(at)
    at.number_input(key="cfg_seed").set_value(4322).run()  # the viewer's own choice
    assert not _confirm_buttons(at) and at.metric
    assert any("-s4322-" in name for name in _pool_files(app_cache))
    assert not any("-s4321-" in name for name in _pool_files(app_cache))
