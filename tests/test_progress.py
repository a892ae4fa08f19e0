"""Visible waits: the disk cache's progress files, and the training-time range.

A builder records its progress beside the entry's lock; a caller that finds the lock taken
reads it instead of waiting in silence.  Records of builders that died are ignored.
"""

import json
import os
import subprocess
import sys
import threading
import time

import pytest

from dashboard import estimates, page_pools, paper_cache, training
from sdwec import cache as disk_cache

KEY = {"kind": "test", "n": 1}
LABEL = "progress-test"


def test_a_record_reads_back_with_the_writers_identity(cache):
    started = time.time() - 30
    disk_cache.write_progress(KEY, LABEL, 40, 200, "trained 40 of 200 trees", started)
    record = disk_cache.read_progress(KEY, LABEL)
    assert (record.done, record.total, record.message) == (40, 200, "trained 40 of 200 trees")
    assert record.pid == os.getpid() and record.started == started
    assert record.fraction == 0.2
    assert started < record.updated <= time.time()
    # Beside the entry's lock, named after the same key; nothing else is left in the folder.
    path = disk_cache.progress_path(KEY, LABEL)
    assert path.parent == disk_cache.entry_path(KEY, LABEL).parent
    assert path.stem == disk_cache.entry_path(KEY, LABEL).stem
    assert [p.name for p in cache.iterdir()] == [path.name]


def test_no_record_and_an_unreadable_one_read_as_none(cache):
    assert disk_cache.read_progress(KEY, LABEL) is None
    cache.mkdir(parents=True, exist_ok=True)
    disk_cache.progress_path(KEY, LABEL).write_text('{"done": 1, "tot')
    assert disk_cache.read_progress(KEY, LABEL) is None
    disk_cache.progress_path(KEY, LABEL).write_text('{"unexpected": 1}')
    assert disk_cache.read_progress(KEY, LABEL) is None


def test_a_dead_writers_record_is_ignored(cache):
    script = ("import sys, time\n"
              "from sdwec import cache\n"
              "cache.write_progress({'kind': 'test', 'n': 1}, 'progress-test', 1, 2, 'half',"
              " time.time())\n")
    subprocess.run([sys.executable, "-c", script], check=True,
                   env=dict(os.environ, **{disk_cache.CACHE_ENV: str(cache)}))
    on_disk = json.loads(disk_cache.progress_path(KEY, LABEL).read_text())
    assert on_disk["message"] == "half"  # the record is there, fresh...
    assert disk_cache.read_progress(KEY, LABEL) is None  # ...but its writer has exited


def _rewrite(**changes):
    path = disk_cache.progress_path(KEY, LABEL)
    record = json.loads(path.read_text())
    record.update(changes)
    path.write_text(json.dumps(record))


def test_another_hosts_record_counts_until_it_is_stale(cache):
    disk_cache.write_progress(KEY, LABEL, 1, 4, "a quarter", time.time())
    # A pid that cannot be checked (another machine on a shared disk): judged by its age.
    _rewrite(host="another-machine", pid=2 ** 22 + 12345)
    assert disk_cache.read_progress(KEY, LABEL).message == "a quarter"
    _rewrite(updated=time.time() - disk_cache.STALE_PROGRESS_SECONDS - 1)
    assert disk_cache.read_progress(KEY, LABEL) is None


def test_records_are_replaced_atomically(cache):
    """A reader polling while the writer rewrites never sees a part of a record."""
    disk_cache.write_progress(KEY, LABEL, 0, 500, "step 0", time.time())
    seen, stop = [], threading.Event()

    def reader():
        while not stop.is_set():
            seen.append(disk_cache.read_progress(KEY, LABEL))

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for step in range(1, 501):
            disk_cache.write_progress(KEY, LABEL, step, 500, f"step {step}", time.time())
    finally:
        stop.set()
        thread.join()
    assert seen and all(r is not None and r.message == f"step {int(r.done)}" for r in seen)
    assert [p.name for p in cache.iterdir()] == [disk_cache.progress_path(KEY, LABEL).name]


def test_a_build_records_its_progress_and_removes_it_when_done(cache):
    during = []

    def build(report):
        during.append(disk_cache.read_progress(KEY, LABEL))  # written before build starts
        report(3, 10, "three of ten")
        during.append(disk_cache.read_progress(KEY, LABEL))
        return "value"

    forwarded = []
    value, built = disk_cache.get_or_build(KEY, build, LABEL,
                                           progress=lambda *a: forwarded.append(a))
    assert (value, built) == ("value", True)
    assert during[0].done == 0 and during[0].message == "starting"
    assert (during[1].done, during[1].total, during[1].message) == (3, 10, "three of ten")
    assert during[0].started == during[1].started
    assert forwarded == [(3, 10, "three of ten")]
    assert not disk_cache.progress_path(KEY, LABEL).exists()


def test_a_failed_build_removes_its_record(cache):
    def build(report):
        report(1, 2, "half")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        disk_cache.get_or_build(KEY, build, LABEL)
    assert not disk_cache.progress_path(KEY, LABEL).exists()


# A builder in another process: it takes the lock, reports two steps slowly, then stores.
_SLOW_BUILDER = """
import sys, time
from sdwec import cache
key, label = {"kind": "test", "n": 1}, "progress-test"
def build(report):
    report(1, 4, "first quarter")
    print("building", flush=True)
    time.sleep(1.5)
    report(2, 4, "second quarter")
    time.sleep(1.5)
    return "built elsewhere"
cache.get_or_build(key, build, label)
"""


def test_a_waiter_reports_the_other_processes_progress(cache):
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_BUILDER], stdout=subprocess.PIPE,
                            text=True, env=dict(os.environ, **{disk_cache.CACHE_ENV: str(cache)}))
    try:
        assert proc.stdout.readline().strip() == "building"
        records = []

        def never(report):
            raise AssertionError("the waiter must read the other process's value")

        value, built = disk_cache.get_or_build(KEY, never, LABEL, waiting=records.append)
    finally:
        proc.wait(timeout=60)
    assert (value, built) == ("built elsewhere", False)
    messages = [r.message for r in records if r is not None]
    assert "first quarter" in messages and "second quarter" in messages
    assert {r.pid for r in records if r is not None} == {proc.pid}
    assert messages.index("first quarter") < messages.index("second quarter")


# ---------------------------------------------------------------- the training-time range


def test_training_time_is_a_range_increasing_in_every_size():
    base = dict(n_rows=1000, n_features=20, n_trees=200, pools=1)
    low, high = estimates.training_seconds_range(**base)
    assert 0 < low < high
    for name, bigger in (("n_rows", 5000), ("n_features", 40), ("n_trees", 500),
                         ("pools", 3)):
        more = estimates.training_seconds_range(**dict(base, **{name: bigger}))
        assert more[0] > low and more[1] > high, name
    # r pools one after the other take r times as long.
    assert estimates.training_seconds_range(**dict(base, pools=3)) == pytest.approx(
        (3 * low, 3 * high))


def test_training_time_range_holds_the_measured_pools():
    """Pools measured on this project's machine (l = 200, one core, busy): sonar 0.7–1.7 s,
    waveform 8–12 s, NSL-KDD 144–152 s a pool (455 s for 3 splits)."""
    for rows, features, measured in ((208, 60, 1.2), (5000, 21, 10.0), (125973, 41, 150.0)):
        low, high = estimates.training_seconds_range(rows, features, 200)
        assert low <= measured <= high, (rows, low, high)


@pytest.mark.parametrize("low,high,text", [
    (5, 20, "5–20 s"), (0.2, 3, "1–3 s"), (120, 540, "2–9 min"), (40, 200, "40 s–3 min")])
def test_duration_ranges_read_as_a_person_says_them(low, high, text):
    assert estimates.duration_range(low, high) == text


def test_time_left_while_waiting_is_timed_on_the_other_process():
    """Half of the first of two equal pools took the other process 10 s: 10 s more for it,
    20 s for the second."""
    now = time.time()
    record = disk_cache.BuildProgress(50, 100, "trained 100 of 200 trees", now - 10, now, 1, "h")
    done, total, message, left = page_pools._waiting_report(record, 0.0, 1.0, 2.0, "split 1 of 2: ")
    assert (done, total) == (0.5, 2.0)
    assert left == pytest.approx(30.0, rel=0.05)
    assert message.startswith("split 1 of 2: another process is training this pool")
    assert "pid" not in message  # the page names no process
    assert "trained 100 of 200 trees" in message
    # Too early to time: no guess; and a holder that reported nothing is said so.
    early = disk_cache.BuildProgress(1, 100, "starting", now - 10, now, 1, "h")
    assert page_pools._waiting_report(early, 0.0, 1.0, 1.0)[3] is None
    assert "no progress reported yet" in page_pools._waiting_report(None, 0.0, 1.0, 1.0)[2]


def test_a_busy_machine_is_said_to_slow_training_down():
    assert estimates.busy_note(load=0.5, cores=2) == ""
    assert estimates.busy_note(load=1.5, cores=2) == ""  # a core to spare: the calibration
    # 9 processes running on 2 cores: a new one gets about 2 / 10 of a core, 5× slower.
    assert "(load 9 on 2 cores): expect about 5× that" in estimates.busy_note(load=9.0, cores=2)


def test_a_row_budget_shortens_the_training_time_range():
    """An upload's row budget: each tree grows on at most that many rows, so the range is the
    one of a dataset whose training split has that many rows (0.8 x 12,500 = 10,000)."""
    budgeted = estimates.training_seconds_range(300_000, 10, 200, max_samples=10_000)
    assert budgeted == pytest.approx(estimates.training_seconds_range(12_500, 10, 200))
    assert budgeted[1] < estimates.training_seconds_range(300_000, 10, 200)[0]
    # A budget above the training rows changes nothing.
    assert estimates.training_seconds_range(1000, 10, 200, max_samples=10**6) == \
        estimates.training_seconds_range(1000, 10, 200)


# ------------------------------------------------- before a shipped dataset's pools train


@pytest.fixture
def explorer_app(cache, monkeypatch, training_notes):
    """The app through AppTest on an empty pool cache, pools trained in the run, with the
    sidebar's cold-pool notes and the progress texts (conftest's ``training_notes``)."""
    from pathlib import Path

    import streamlit as st
    from streamlit.testing.v1 import AppTest

    monkeypatch.setattr(training, "OFF_PAGE_SECONDS", float("inf"))  # trained in the run
    st.cache_data.clear()
    st.cache_resource.clear()
    app = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app.py"),
                            default_timeout=120)
    yield (app, *training_notes)
    st.cache_data.clear()
    st.cache_resource.clear()


def test_a_shipped_datasets_new_seed_says_how_many_pools_and_how_long(explorer_app):
    """On a shipped dataset, a seed no pool exists for says how many
    pools train and roughly how long before they start, however short (even under 10 s),
    and the bar says which split.  By hand (estimates._TRAINING_RATES):
    sonar's 208 rows train on 166.4, 166.4 log2(166.4) x 60 features = 73,666 units; a
    tree takes 0.002 + 0.00074 to 0.010 + 0.00516 s, so ten pools of 10 trees 0.27 to
    1.52 s ("1–2 s") and one pool 0.027 to 0.15 s ("<1 s")."""
    at, notes, drawn = explorer_app
    at.query_params.update({"dataset": "sonar", "l": "10", "seed": "4321"})
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    said = [n for n in notes if n]
    assert said and said[0].startswith("The 10 pools (one per split) are not trained yet: "
                                       "10 × 10 trees in all on sonar take roughly 1–2 s "
                                       "on this 2-core machine"), notes
    assert [i for i in range(1, 11) if any(f"split {i} of 10:" in t for t in drawn)] == \
        list(range(1, 11)), drawn
    # Once trained, no note: the sidebar's note was redrawn away.
    assert not [i.value for i in at.sidebar.info if "not trained yet" in i.value]
    # The seed moved by one: seeds 4322-4331, one pool new.
    del notes[:], drawn[:]
    at.number_input(key="cfg_seed").set_value(4322).run()
    assert not at.exception
    said = [n for n in notes if n]
    assert said and said[0].startswith("1 of the 10 pools (one per split) is not trained "
                                       "yet: 10 trees on sonar take roughly <1 s"), notes
    assert drawn and all("split 10 of 10:" in t for t in drawn), drawn


def test_the_paper_pages_live_run_says_what_it_trains_and_how_long(tmp_path, monkeypatch):
    """The estimate before Run comes from the selection (not a sentence of typed times):
    each untrained pool at the sidebar's rate for its dataset, times the load factor."""
    from sdwec import pool

    monkeypatch.setenv("SDWEC_CACHE_DIR", str(tmp_path))
    pool.load_pool("wine", "binary", n_trees=10, seed=1)  # 1 of wine's 3 pools on disk
    wine, sonar = estimates.shape_of("wine"), estimates.shape_of("sonar")
    w_low, w_high = estimates.training_seconds_range(*wine, 10, pools=2)
    s_low, s_high = estimates.training_seconds_range(*sonar, 10, pools=3)
    quiet = paper_cache.reproduction_note(["wine", "sonar"], 3, 10, load=0.0, cores=2)
    assert quiet.startswith("6 pools (2 dataset(s) × 3 repeats), 5 of them not trained yet. ")
    assert estimates.duration_range(w_low + s_low, w_high + s_high) in quiet
    assert "each dataset's size)" in quiet
    busy = paper_cache.reproduction_note(["wine", "sonar"], 3, 10, load=5.0, cores=2)  # x3
    assert estimates.duration_range(3 * (w_low + s_low), 3 * (w_high + s_high)) in busy
    assert "the machine's load" in busy
    assert paper_cache.reproduction_note(["wine"], 2, 10, load=0.0, cores=2).endswith(
        "1 of them not trained yet. Training those comes first, "
        f"roughly {estimates.duration_range(*estimates.training_seconds_range(*wine, 10))} "
        "on this machine now (estimated from each dataset's size); the pools are then kept "
        "on disk.")
    pool.load_pool("wine", "binary", n_trees=10, seed=0)
    assert paper_cache.reproduction_note(["wine"], 2, 10).endswith(
        "0 of them not trained yet. Every pool is on disk: the run only solves, a matter of "
        "seconds.")
