"""Cache hygiene: a size cap with least-recently-used eviction, dead
writers' temporary files swept at first use, and links that cannot start heavy training
without the viewer confirming it. Uploads' entries are evicted before the shipped datasets'
pools, and lock files are deleted without letting two builders in. Entries are signed with a
secret kept outside the cache folder: a planted entry is refused before it is unpickled.
"""

import hashlib
import hmac
import json
import logging
import os
import pickle
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import warnings

import pytest

from harness.apptest_charts import headline
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


# --------------------------------------------------------------------------- uploads go first

UPLOAD_LABEL = "upload-0123456789ab"  # what a pool of an upload is labelled like


def _store_upload(name, mtime=None):
    path = disk_cache.store(_key(name), PAYLOAD, UPLOAD_LABEL)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def _all_names(cache):
    return sorted(p.name for p in cache.glob("*.pkl"))


@pytest.mark.parametrize("name, upload", [
    ("pool-upload-0123456789ab-binary-l200-s0-0123456789abcdef.pkl", True),
    ("upload-0123456789abcdef.pkl", True),
    ("pool-nsl_kdd-binary-l200-s0-0123456789abcdef.pkl", False),
    ("pool-uploaded-binary-l200-s0-0123456789abcdef.pkl", False),  # a word, not a substring
    ("hygiene-0123456789abcdef.pkl", False)])
def test_an_entrys_class_is_read_from_its_file_name(name, upload):
    assert disk_cache.is_upload_entry(name) is upload


def test_uploads_go_before_older_shared_entries(cache, monkeypatch):
    a, b = _store("a", 1000), _store("b", 2000)
    u = _store_upload("u", 3000)  # the most recently used entry of all
    size = a.stat().st_size
    assert b.stat().st_size == u.stat().st_size == size
    monkeypatch.setenv(disk_cache.MAX_BYTES_ENV, str(3 * size))
    d = _store("d")
    assert _all_names(cache) == sorted([a.name, b.name, d.name])


def test_shared_entries_go_least_recently_used_first_once_no_upload_is_left(cache):
    u1, u2 = _store_upload("u", 5000), _store_upload("v", 500)
    a, b, c = _store("a", 1000), _store("b", 2000), _store("c", 3000)
    d = _store("d", 4000)
    assert disk_cache.load(_key("a"), LABEL) == PAYLOAD  # "a" becomes the most recent
    size = a.stat().st_size
    removed = disk_cache.evict(limit=int(2.5 * size))
    # Both uploads first (least recently used first), then the shared ones by recency.
    assert removed == [u2, u1, b, c]
    assert _all_names(cache) == sorted([a.name, d.name])


def test_shared_entries_are_not_evicted_to_make_room_for_an_upload(cache, monkeypatch):
    shared = [_store(n, t) for n, t in (("a", 1000), ("b", 2000), ("c", 3000))]
    size = shared[0].stat().st_size
    monkeypatch.setenv(disk_cache.MAX_BYTES_ENV, str(3 * size))  # full
    u = _store_upload("u")
    # The upload just written stays, over the cap; no shared entry went for it.
    assert _all_names(cache) == sorted([p.name for p in shared] + [u.name])
    v = _store_upload("v")
    assert _all_names(cache) == sorted([p.name for p in shared] + [v.name])


# --------------------------------------------------------------------------- lock files


def _locks(cache):
    return sorted(p.stem for p in cache.glob("*.lock"))


def _entries(cache):
    return sorted(p.stem for p in cache.glob("*.pkl") if not p.name.startswith("."))


def test_an_evicted_entry_takes_its_lock_file_with_it(cache, monkeypatch):
    def build(name):
        return disk_cache.get_or_build(_key(name), lambda report: PAYLOAD, LABEL)

    build("a")
    size = disk_cache.entry_path(_key("a"), LABEL).stat().st_size
    monkeypatch.setenv(disk_cache.MAX_BYTES_ENV, str(3 * size))
    for name in "bcdefg":
        build(name)
    assert _entries(cache) == sorted(disk_cache.entry_path(_key(n), LABEL).stem
                                     for n in "efg")
    assert _locks(cache) == _entries(cache)  # one lock file per entry, none more


def test_a_failed_build_leaves_no_lock_file(cache):
    def build(report):
        report(1, 2, "half way")
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        disk_cache.get_or_build(_key("a"), build, LABEL)
    assert list(cache.iterdir()) == []


_HOLDER = ("import sys\nfrom sdwec import cache\n"
           "with cache.locked({'kind': 'test', 'name': 'held'}, 'hygiene'):\n"
           "    print('held', flush=True)\n"
           "    sys.stdin.readline()\n")

_BUILDER = ("import time\nfrom sdwec import cache\n"
            "def build(report):\n"
            "    report(1, 10, 'one tenth')\n"
            "    print('building', flush=True)\n"
            "    time.sleep(600)\n"
            "cache.get_or_build({'kind': 'test', 'name': 'killed'}, build, 'hygiene')\n")


def test_stale_lock_files_go_and_held_ones_stay(cache):
    cache.mkdir(parents=True)
    env = dict(os.environ, **{disk_cache.CACHE_ENV: str(cache)})
    # A builder killed in the middle leaves its lock file and its progress file.
    builder = subprocess.Popen([sys.executable, "-c", _BUILDER], env=env,
                               stdout=subprocess.PIPE, text=True)
    assert builder.stdout.readline().strip() == "building"
    builder.kill()
    builder.wait()
    killed = disk_cache.entry_path(_key("killed"), LABEL)
    assert killed.with_suffix(".lock").exists() and killed.with_suffix(".progress").exists()
    # Another process holds a lock (a build under way, no entry yet).
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER], env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        held = disk_cache.entry_path(_key("held"), LABEL).with_suffix(".lock")
        inode = held.stat().st_ino
        a = _store("a")  # a write sweeps the lock files
        assert not killed.with_suffix(".lock").exists()
        assert not killed.with_suffix(".progress").exists()
        assert held.stat().st_ino == inode  # the held one is the same file, untouched
        assert disk_cache.remove_stale_locks() == []
        assert sorted(p.name for p in cache.iterdir()) == sorted([a.name, held.name])
    finally:
        holder.communicate("\n", timeout=60)
    # Its holder left it without an entry: gone with it.
    assert sorted(p.name for p in cache.iterdir()) == [a.name]


def test_a_process_sweeps_stale_lock_files_at_its_first_use(cache):
    cache.mkdir(parents=True)
    stale = cache / "hygiene-0123456789abcdef.lock"  # as older versions left them
    stale.write_bytes(b"")
    reader = ("from sdwec import cache\n"
              "assert not cache.contains({'kind': 'test', 'name': 'a'}, 'hygiene')\n")
    subprocess.run([sys.executable, "-c", reader], check=True,
                   env=dict(os.environ, **{disk_cache.CACHE_ENV: str(cache)}))
    assert list(cache.iterdir()) == []


def test_a_waiter_on_a_deleted_lock_file_does_not_join_the_new_holder(cache, monkeypatch):
    """The classic race of deleting flock files, played step by step: a waiter opens the
    lock file; its holder leaves without an entry and deletes it; a newcomer creates and
    locks a new file under the name; the waiter then gets the lock of the deleted file. It
    must not enter while the newcomer holds the lock: two builders of one entry."""
    monkeypatch.setattr(disk_cache, "POLL_SECONDS", 0.01)
    key = _key("race")
    lock = disk_cache.entry_path(key, LABEL).with_suffix(".lock")
    first_refusal, go_on, refused_again = (threading.Event() for _ in range(3))
    entered = threading.Event()

    def on_wait(record):
        if not first_refusal.is_set():
            first_refusal.set()
            go_on.wait(30)  # hold the waiter here, its lock file open
        else:
            refused_again.set()

    def waiter():
        with disk_cache.locked(key, LABEL, waiting=on_wait):
            entered.set()

    thread = threading.Thread(target=waiter, daemon=True)
    with disk_cache.locked(key, LABEL):
        deleted_inode = lock.stat().st_ino
        thread.start()
        assert first_refusal.wait(30)
    assert not lock.exists()  # left without an entry: deleted by its holder
    with disk_cache.locked(key, LABEL):  # the newcomer
        assert lock.stat().st_ino != deleted_inode
        go_on.set()  # the waiter now takes the deleted file's lock, free since it was left
        assert refused_again.wait(30), "the waiter entered beside the newcomer"
        assert not entered.is_set()
    thread.join(30)
    assert entered.is_set() and not lock.exists()


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
    assert not headline(at)  # the Explorer stopped before its results
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
    assert headline(at)  # the Explorer drew its results

    at = _app({"dataset": "wine", "l": "10", "seed": "4321", "r": "1"})
    assert _confirm_buttons(at)
    at.number_input(key="cfg_seed").set_value(4322).run()  # the viewer's own choice
    assert not _confirm_buttons(at) and headline(at)
    assert any("-s4322-" in name for name in _pool_files(app_cache))
    assert not any("-s4321-" in name for name in _pool_files(app_cache))


# --------------------------------------------------------------------------- authenticated entries


@pytest.fixture
def key_file(tmp_path, monkeypatch):
    """The cache's secret in a file of this test's own (created at first use)."""
    path = tmp_path / "config" / "sdwec" / "cache.key"
    monkeypatch.setenv(disk_cache.KEY_FILE_ENV, str(path))
    return path


_OLD_MAGIC = b"SDWEC-CACHE\x02\n"  # the format before entries were signed: no tag
_MAGIC = b"SDWEC-CACHE\x03\n"
_FIELDS = struct.Struct(">Q32sQ")  # key length, SHA-256 of the payload, payload length


class _Planted:
    """A pickle that creates ``marker`` when it is loaded: what a planted entry could run."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _entry(key, payload, *, magic=_MAGIC, secret=None, tag=None):
    """An entry file's bytes, written from the format's description (not by the cache):
    magic, header, tag (HMAC-SHA256 of magic + header + key with ``secret``), key, payload;
    the old format has no tag."""
    key_bytes = json.dumps(key, sort_keys=True, separators=(",", ":")).encode()
    fields = _FIELDS.pack(len(key_bytes), hashlib.sha256(payload).digest(), len(payload))
    if magic == _OLD_MAGIC:
        return magic + fields + key_bytes + payload
    if tag is None:
        tag = hmac.new(secret, magic + fields + key_bytes, hashlib.sha256).digest()
    return magic + fields + tag + key_bytes + payload


def test_an_entry_is_signed_with_the_secret_in_the_key_file(cache, key_file):
    path = disk_cache.store(_key("a"), PAYLOAD, LABEL)
    # Created at first use, readable by its owner alone, outside the cache folder.
    assert key_file.exists() and stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert not key_file.resolve().is_relative_to(cache.resolve())
    secret = key_file.read_bytes().strip()
    assert len(secret) >= 32
    # The file is exactly what the format says, signed with that secret.
    payload = pickle.dumps(PAYLOAD, protocol=pickle.HIGHEST_PROTOCOL)
    assert path.read_bytes() == _entry(_key("a"), payload, secret=secret)
    # An entry written from the description with the right secret is accepted.
    _key_b = _key("b")
    disk_cache.entry_path(_key_b, LABEL).write_bytes(
        _entry(_key_b, pickle.dumps("made by hand"), secret=secret))
    assert disk_cache.contains(_key_b, LABEL)
    assert disk_cache.load(_key_b, LABEL) == "made by hand"


@pytest.mark.parametrize("forgery", ["old format", "no tag", "another secret"])
def test_a_planted_entry_is_refused_and_never_unpickled(cache, key_file, tmp_path, caplog,
                                                        forgery):
    marker = tmp_path / "the planted pickle ran"
    payload = pickle.dumps(_Planted(marker))
    pickle.loads(payload)  # the pickle is live: loaded, it creates the marker
    assert marker.exists()
    marker.unlink()
    disk_cache.store(_key("other"), PAYLOAD, LABEL)  # the secret exists, as in a used cache
    entry = {"old format": lambda: _entry(_key("a"), payload, magic=_OLD_MAGIC),
             "no tag": lambda: _entry(_key("a"), payload, tag=bytes(32)),
             "another secret": lambda: _entry(_key("a"), payload, secret=b"s" * 64)}[forgery]()
    path = disk_cache.entry_path(_key("a"), LABEL)
    path.write_bytes(entry)  # a valid header, the payload's right SHA-256: all but the tag
    with caplog.at_level(logging.WARNING, logger="sdwec.cache"):
        assert not disk_cache.contains(_key("a"), LABEL)
        assert disk_cache.load(_key("a"), LABEL) is None
        assert disk_cache.load(_key("a"), LABEL) is None  # as a build's second look does
    assert not marker.exists()
    # Said once per entry, not at every look.
    assert len([r for r in caplog.records if str(path) in r.getMessage()
                and "rebuilt" in r.getMessage()]) == 1, caplog.text
    # A miss: the entry is built again, and signed this time.
    value, built = disk_cache.get_or_build(_key("a"), lambda report: "rebuilt", LABEL)
    assert built and value == "rebuilt" and not marker.exists()
    assert disk_cache.load(_key("a"), LABEL) == "rebuilt"


def test_a_planted_pool_is_retrained_not_loaded(cache, key_file, tmp_path, monkeypatch):
    from sdwec import pool

    key = pool.PoolKey.for_dataset("wine", n_trees=4, seed=0)
    marker = tmp_path / "the planted pool ran"
    path = pool.cache_path(key)
    path.parent.mkdir(parents=True)
    path.write_bytes(_entry(key._cache_key(), pickle.dumps(_Planted(marker)),
                            secret=b"not this cache's secret" * 3))
    trained = []
    real = pool.build_pool
    monkeypatch.setattr(pool, "build_pool", lambda *a, **k: trained.append(1) or real(*a, **k))
    assert not pool.is_cached(key)
    p = pool.load_pool(key)
    assert trained == [1] and p.n_trees == 4 and not marker.exists()
    assert pool.is_cached(key)


def test_processes_share_entries_only_through_the_same_key(cache, key_file, tmp_path):
    disk_cache.store(_key("a"), PAYLOAD, LABEL)
    reader = ("import sys\nfrom sdwec import cache\n"
              "print(cache.load({'kind': 'test', 'name': 'a'}, 'hygiene') is not None)\n")

    def read(key_path):
        env = dict(os.environ, **{disk_cache.CACHE_ENV: str(cache),
                                  disk_cache.KEY_FILE_ENV: str(key_path)})
        return subprocess.run([sys.executable, "-c", reader], env=env, check=True,
                              capture_output=True, text=True).stdout.strip()

    assert read(key_file) == "True"  # another replica with the same key file reads it
    copy = tmp_path / "copy.key"
    copy.write_bytes(key_file.read_bytes())
    copy.chmod(0o600)
    assert read(copy) == "True"  # another machine with a copy of the key
    assert read(tmp_path / "fresh.key") == "False"  # a key of its own: a miss


def test_a_key_inside_the_cache_folder_is_refused(cache, monkeypatch):
    monkeypatch.setenv(disk_cache.KEY_FILE_ENV, str(cache / "keys" / "cache.key"))
    with pytest.raises(disk_cache.CacheKeyError, match="inside the cache folder"):
        disk_cache.store(_key("a"), PAYLOAD, LABEL)
    assert not (cache / "keys" / "cache.key").exists()


def test_the_command_line_says_what_is_wrong_with_the_key(cache, monkeypatch, capsys):
    from sdwec.__main__ import main

    monkeypatch.setenv(disk_cache.KEY_FILE_ENV, str(cache / "cache.key"))
    assert main(["warm", "--datasets", "wine", "--trees", "2", "--seeds", "1", "--n-jobs", "1",
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "error: the pool cache's key" in err and "inside the cache folder" in err
    assert "Traceback" not in err


def test_a_short_key_is_refused_with_what_it_needs(cache, key_file):
    key_file.parent.mkdir(parents=True)
    key_file.write_text("secret\n")
    key_file.chmod(0o600)
    with pytest.raises(disk_cache.CacheKeyError, match="holds 6 bytes; it needs at least 32"):
        disk_cache.store(_key("a"), PAYLOAD, LABEL)


def test_a_key_others_can_read_is_reported(cache, key_file, caplog):
    key_file.parent.mkdir(parents=True)
    key_file.write_text("0123456789abcdef" * 4)
    key_file.chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="sdwec.cache"):
        disk_cache.store(_key("a"), PAYLOAD, LABEL)
    assert "can be read or written by other users" in caplog.text
    assert disk_cache.load(_key("a"), LABEL) == PAYLOAD  # still used: a warning, not a stop


def test_a_new_key_makes_every_entry_a_miss(cache, key_file):
    disk_cache.store(_key("a"), PAYLOAD, LABEL)
    key_file.write_text("f" * 64)  # the key changed (rotated): old entries are foreign
    assert not disk_cache.contains(_key("a"), LABEL)
    assert disk_cache.load(_key("a"), LABEL) is None
