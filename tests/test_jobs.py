"""Pool training off the page: worker processes, Cancel, the reaper.

The real worker (``python -m sdwec _pool-job``) trains small pools; stand-in workers (a
sleeping Python, a shell with a child) show what happens to processes without training.
No timing is asserted: waits are bounded only so that a broken test fails instead of hanging.
"""

import logging
import os
import signal
import sys
import time

import pytest
from streamlit.testing.v1 import AppTest

from dashboard import jobs, training, worker_slots
from sdwec import pool
from tests.shown import as_read

# Reads its input like the real worker, then sleeps: a training that never ends by itself.
SLEEPER = (sys.executable, "-c", "import sys, time; sys.stdin.buffer.read(); time.sleep(120)")


def _gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _until(condition, seconds=60.0):
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            raise AssertionError("condition not met in time")
        time.sleep(0.1)


@pytest.fixture
def registry(tmp_path):
    """``make(**options)``: a registry stopped after the test; by default its slots are
    this test's own and more than any test starts (the cap is tested on its own)."""
    made = []

    def make(**options):
        options.setdefault("reap_every", None)
        options.setdefault("slots", tmp_path / "slots")
        options.setdefault("workers", 8)
        made.append(jobs.JobRegistry(**options))
        return made[-1]

    yield make
    for one in made:
        one.stop_all()


def test_a_job_trains_the_pool_into_the_disk_cache(cache, registry):
    key = pool.PoolKey.for_dataset("wine", "binary", n_trees=6, seed=3)
    job = registry().want(key, None, "session-a")
    assert job.wait(120)
    assert job.state == "done", job.error
    assert pool.is_cached(key)
    trained = pool.load_pool(key)
    assert len(trained.estimators) == 6 and trained.meta["dataset"] == "wine"
    # Only the entry and its lock are left: no progress record, no temporary file.
    assert sorted(p.suffix for p in cache.iterdir()) == [".lock", ".pkl"]


def test_an_uploads_data_reaches_the_worker(cache, registry):
    import dataclasses

    from sdwec import datasets

    upload = dataclasses.replace(datasets.load("wine"), name="my-wine.csv")
    key = pool.PoolKey.for_dataset(upload, n_trees=4, seed=0)
    job = registry().want(key, upload, "session-a")
    assert job.wait(120) and job.state == "done", job.error
    assert pool.load_pool(key, dataset=upload).meta["fingerprint"] == upload.fingerprint


def test_cancel_stops_the_worker_mid_training_and_leaves_nothing(cache, registry):
    # waveform with 2000 trees trains for minutes: cancelled while it reports progress.
    key = pool.PoolKey.for_dataset("waveform", "binary", n_trees=2000, seed=0)
    jobs_ = registry()
    job = jobs_.want(key, None, "session-a")
    _until(lambda: pool.training_progress(key) is not None)
    assert pool.training_progress(key).pid == job.pid  # the worker itself trains it
    assert jobs_.cancel(key, "session-a")
    assert job.state == "cancelled" and _gone(job.pid)
    assert not pool.is_cached(key) and pool.training_progress(key) is None
    # No entry, no temporary file, no progress record, and no lock file: the worker left
    # its lock without an entry, so it deleted the file.
    assert list(cache.iterdir()) == []


def test_cancel_kills_the_workers_whole_process_group(tmp_path, registry):
    child = tmp_path / "child.pid"
    command = ("sh", "-c", f"cat > /dev/null; sleep 120 & echo $! > {child}; wait")
    jobs_ = registry(command=command)
    job = jobs_.want("some-pool", None, "session-a")
    _until(lambda: child.exists() and child.read_text().strip())
    grandchild = int(child.read_text())
    assert not _gone(grandchild)
    assert jobs_.cancel("some-pool", "session-a")
    assert _gone(job.pid)
    _until(lambda: _gone(grandchild), 10)  # killed with its group (init reaps it)


def test_a_second_request_attaches_to_the_running_job(registry):
    jobs_ = registry(command=SLEEPER)
    first = jobs_.want("pool-1", None, "session-a")
    # A rerun of the same session, and another session: the same process, not a new one.
    assert jobs_.want("pool-1", None, "session-a") is first
    assert jobs_.want("pool-1", None, "session-b") is first
    assert jobs_.running() == [first]
    assert set(first.sessions) == {"session-a", "session-b"}
    # One session's cancel leaves the job to the session that still wants it.
    assert not jobs_.cancel("pool-1", "session-a")
    assert first.state == "running" and not _gone(first.pid)
    assert jobs_.cancel("pool-1", "session-b")
    assert first.state == "cancelled" and _gone(first.pid)
    # Asked again after it stopped: a new worker once the finished job is forgotten.
    jobs_.forget("pool-1")
    again = jobs_.want("pool-1", None, "session-a")
    assert again is not first and again.pid != first.pid and again.state == "running"


def test_the_reaper_stops_a_job_nobody_has_wanted_for_the_timeout(registry):
    jobs_ = registry(command=SLEEPER, timeout=0.3)
    job = jobs_.want("pool-1", None, "session-a")
    assert jobs_.reap() == []  # wanted just now
    time.sleep(0.5)
    assert jobs_.reap() == [job]
    assert job.state == "cancelled" and _gone(job.pid)
    assert job.sessions == {}


def test_refreshed_interest_or_a_connected_session_keeps_a_job(registry):
    jobs_ = registry(command=SLEEPER, timeout=0.3)
    job = jobs_.want("pool-1", None, "session-a")
    for _ in range(3):
        time.sleep(0.2)
        jobs_.touch("session-a")  # the page's polling fragment
        assert jobs_.reap() == []
    connected = {"session-b"}
    jobs_b = registry(command=SLEEPER, timeout=0.3, alive=connected.__contains__)
    job_b = jobs_b.want("pool-2", None, "session-b")
    time.sleep(0.5)
    assert jobs_b.reap() == []  # no refresh, but its tab is open (e.g. on another page)
    connected.clear()  # the tab was closed
    assert jobs_b.reap() == []  # the reaper saw it connected just before: one more timeout
    time.sleep(0.5)
    assert jobs_b.reap() == [job_b] and _gone(job_b.pid)
    assert job.state == "running"


def test_the_reaper_thread_runs_by_itself(registry):
    jobs_ = registry(command=SLEEPER, timeout=0.2, reap_every=0.1)
    job = jobs_.want("pool-1", None, "session-a")
    assert job.wait(30)
    assert job.state == "cancelled" and _gone(job.pid)


def test_a_worker_that_fails_reports_its_last_line(registry):
    command = (sys.executable, "-c", "import sys; sys.stdin.buffer.read(); "
                                     "raise MemoryError('no room for the trees')")
    job = registry(command=command).want("pool-1", None, "session-a")
    assert job.wait(60)
    assert job.state == "failed"
    assert job.error.splitlines()[-1] == "MemoryError: no room for the trees"


def _page():
    import streamlit as st

    from dashboard import page_pools, pools
    from sdwec import pool

    key = pool.PoolKey.for_dataset("wine", "binary", 10, 77)
    page_pools.get_pools([pools.PoolRef(key, None, "wine")])
    st.write("the pool is ready")


def test_the_page_shows_progress_and_cancel_while_a_job_runs(cache, monkeypatch, registry):
    slow = registry(command=SLEEPER)
    monkeypatch.setattr(training, "_JOBS", slow)
    monkeypatch.setattr(training, "OFF_PAGE_SECONDS", 0.0)  # even this small pool
    at = AppTest.from_function(_page, default_timeout=60).run()
    assert not at.exception
    assert [b.label for b in at.button] == ["Cancel training"]
    assert "Training 10 trees on wine in a background process" in at.get("progress")[0].proto.text
    assert all("the pool is ready" not in m.value for m in at.markdown)  # the run stopped
    (job,) = slow.running()
    # A rerun (e.g. a widget moved) attaches to the same worker.
    at.run()
    assert slow.running() == [job] and [b.label for b in at.button] == ["Cancel training"]
    at.button(key="_cancel_training").click().run()
    assert job.state == "cancelled" and _gone(job.pid)
    assert "cancelled" in at.info[0].value
    assert [b.label for b in at.button] == ["Train again"]
    at.run()  # no new training until asked
    assert slow.running() == []
    at.button(key="_train_again").click().run()
    assert len(slow.running()) == 1 and slow.running()[0] is not job


def test_a_queued_training_shows_its_place_and_can_be_cancelled(cache, monkeypatch, registry,
                                                                 tmp_path):
    # Another replica holds the machine's only worker slot.
    other = registry(command=SLEEPER, slots=tmp_path / "one-slot", workers=1)
    busy = other.want("another-pool", None, "someone else")
    page = registry(command=SLEEPER, slots=tmp_path / "one-slot", workers=1)
    monkeypatch.setattr(training, "_JOBS", page)
    monkeypatch.setattr(training, "OFF_PAGE_SECONDS", 0.0)
    at = AppTest.from_function(_page, default_timeout=60).run()
    assert not at.exception and busy.state == "running"
    (job,) = page.queued()
    assert at.get("progress")[0].proto.text == (
        "Training 10 trees on wine: Queued: position 1 of 1 (1 training running)")
    assert [b.label for b in at.button] == ["Cancel training"]
    at.button(key="_cancel_training").click().run()
    assert job.state == "cancelled" and job.pid is None and page.queued() == []
    assert [b.label for b in at.button] == ["Train again"]


def _page_of_three_splits():
    import streamlit as st

    from dashboard import page_pools, pools
    from sdwec import pool

    key = pool.PoolKey.for_dataset("wine", "binary", 10, 80)
    ref = pools.PoolRef(key, None, "wine")
    page_pools.get_pools([ref.with_seed(80 + i) for i in range(3)])
    st.write("the pools are ready")


def test_splits_train_one_after_the_other(cache, monkeypatch, registry, caplog):
    caplog.set_level(logging.INFO, logger="dashboard")
    slow = registry(command=SLEEPER)
    monkeypatch.setattr(training, "_JOBS", slow)
    monkeypatch.setattr(training, "OFF_PAGE_SECONDS", 0.0)
    at = AppTest.from_function(_page_of_three_splits, default_timeout=60).run()
    assert not at.exception
    (job,) = slow.running()  # one worker (one core) per session, not three
    assert job.key.seed == 80
    (bar,) = at.get("progress")
    assert bar.proto.text.startswith("Training 3 pools of 10 trees on wine in a background "
                                     "process: split 1 of 3: "), bar.proto.text
    assert bar.proto.value == 0
    # The worker's pid is the server's business: in its log, not on the page.
    assert "pid" not in bar.proto.text and str(job.pid) not in bar.proto.text
    assert f"worker pid {job.pid} started" in caplog.text


def test_the_bar_over_splits_says_which_split_and_goes_on_when_a_pool_lands(
        cache, monkeypatch, registry):
    """Off the page too, the line says "split i of r", and a pool that lands does not
    restart the bar (each pool is a new worker in a new run, so counting pools left would
    say "pool 1 of the 3 not trained yet", then "pool 1 of the 2", from 0 each time)."""
    slow = registry(command=SLEEPER)
    monkeypatch.setattr(training, "_JOBS", slow)
    monkeypatch.setattr(training, "OFF_PAGE_SECONDS", 0.0)
    at = AppTest.from_function(_page_of_three_splits, default_timeout=60).run()
    assert not at.exception
    # The first split's pool lands (trained here, as its worker would).
    pool.load_pool(pool.PoolKey.for_dataset("wine", "binary", 10, 80))
    # The rest of a training begun in a worker stays there, even when it is short enough
    # for the page on its own (its bar would restart in the page).
    monkeypatch.setattr(training, "OFF_PAGE_SECONDS", float("inf"))
    at.run()
    assert not at.exception
    second = [job for job in slow.running() if job.key.seed == 81]
    assert second, [job.key for job in slow.running()]
    (bar,) = at.get("progress")
    # Still the training of 3 pools, now at the second split: a third of the bar is done.
    assert bar.proto.text.startswith("Training 3 pools of 10 trees on wine in a background "
                                     "process: split 2 of 3: "), bar.proto.text
    assert bar.proto.value == 33


def test_a_failed_training_says_why_without_a_traceback(cache, monkeypatch, registry):
    command = (sys.executable, "-c", "import sys; sys.stdin.buffer.read(); "
                                     "raise MemoryError('no room for the trees')")
    failing = registry(command=command)
    monkeypatch.setattr(training, "_JOBS", failing)
    monkeypatch.setattr(training, "OFF_PAGE_SECONDS", 0.0)
    at = AppTest.from_function(_page, default_timeout=60).run()
    job = failing.get(pool.PoolKey.for_dataset("wine", "binary", 10, 77))
    assert job.wait(60)
    at.run()
    assert not at.exception
    (error,) = at.error
    assert "(MemoryError: no room for the trees)" in as_read(error.value)
    assert "Traceback" not in error.value
    assert [b.label for b in at.button] == ["Try again"]


def test_the_off_page_threshold_reads_the_environment(monkeypatch):
    monkeypatch.setenv("SDWEC_OFF_PAGE_SECONDS", "inf")
    assert training._off_page_seconds(10.0) == float("inf")
    monkeypatch.setenv("SDWEC_OFF_PAGE_SECONDS", "2.5")
    assert training._off_page_seconds(10.0) == 2.5
    monkeypatch.setenv("SDWEC_OFF_PAGE_SECONDS", "ten")  # a typo: the default, not a crash
    assert training._off_page_seconds(10.0) == 10.0
    monkeypatch.delenv("SDWEC_OFF_PAGE_SECONDS")
    assert training._off_page_seconds(10.0) == 10.0


def test_the_line_keeps_its_last_record_between_two(cache, monkeypatch, registry):
    """While a worker runs, a moment without a progress record (the worker dropped it as it
    stored the pool) keeps the last line shown: it fell back to "starting" at 0, so the bar
    went back and the time left rose."""
    from sdwec import cache as disk_cache

    slow = registry(command=SLEEPER)
    monkeypatch.setattr(training, "_JOBS", slow)
    monkeypatch.setattr(training, "OFF_PAGE_SECONDS", 0.0)
    at = AppTest.from_function(_page_of_three_splits, default_timeout=60).run()
    assert not at.exception
    key = pool.PoolKey.for_dataset("wine", "binary", 10, 80)
    where = (key._cache_key(), key._label())
    disk_cache.write_progress(*where, 8, 10, "trained 8 of 10 trees", time.time() - 3)
    at.run()
    (bar,) = at.get("progress")
    assert "split 1 of 3: trained 8 of 10 trees" in bar.proto.text, bar.proto.text
    assert "pid" not in bar.proto.text and str(os.getpid()) not in bar.proto.text
    before = bar.proto.value
    assert before > 0
    disk_cache.progress_path(*where).unlink()
    at.run()
    assert not at.exception
    (bar,) = at.get("progress")
    assert "split 1 of 3: trained 8 of 10 trees" in bar.proto.text, bar.proto.text
    assert "starting" not in bar.proto.text and bar.proto.value == before


def test_a_training_of_some_splits_says_of_how_many(cache, monkeypatch, registry):
    """Two of three splits untrained: "Training 2 of 3 pools … split 2 of 3" (it said
    "Training 2 pools … split 2 of 3", which read as a miscount)."""
    slow = registry(command=SLEEPER)
    monkeypatch.setattr(training, "_JOBS", slow)
    monkeypatch.setattr(training, "OFF_PAGE_SECONDS", 0.0)
    pool.load_pool(pool.PoolKey.for_dataset("wine", "binary", 10, 80))  # split 1 on disk
    at = AppTest.from_function(_page_of_three_splits, default_timeout=60).run()
    assert not at.exception
    (job,) = slow.running()
    (bar,) = at.get("progress")
    assert bar.proto.text.startswith("Training 2 of 3 pools of 10 trees on wine in a background "
                                     "process: split 2 of 3: "), bar.proto.text
    assert f"pid {job.pid}" not in bar.proto.text


def test_a_progress_files_message_is_shown_as_text(cache, monkeypatch, registry):
    """A progress file lies in the cache folder, which other processes write: its message is
    shown as the characters it holds, never as a link or bold text."""
    from sdwec import cache as disk_cache

    slow = registry(command=SLEEPER)
    monkeypatch.setattr(training, "_JOBS", slow)
    monkeypatch.setattr(training, "OFF_PAGE_SECONDS", 0.0)
    at = AppTest.from_function(_page_of_three_splits, default_timeout=60).run()
    key = pool.PoolKey.for_dataset("wine", "binary", 10, 80)
    message = "**trained** [8 of 10](https://evil.example) ![x](https://evil.example/t.png)"
    disk_cache.write_progress(key._cache_key(), key._label(), 8, 10, message, time.time())
    at.run()
    assert not at.exception
    (bar,) = at.get("progress")
    # Every Markdown character escaped (CommonMark: a backslash makes it literal) ...
    assert (r"\*\*trained\*\* \[8 of 10\]\(https\:" in bar.proto.text
            and r"\!\[x\]" in bar.proto.text), bar.proto.text
    # ... and read as exactly what the file holds.
    assert f"split 1 of 3: {message} ·" in as_read(bar.proto.text), bar.proto.text


@pytest.mark.parametrize("how, name", [
    ("os.kill(os.getpid(), signal.SIGKILL)", "SIGKILL"),
    # The real worker's SIGTERM handler exits with 128 + 15 and prints nothing.
    ("signal.signal(signal.SIGTERM, lambda *a: sys.exit(128 + a[0])); "
     "os.kill(os.getpid(), signal.SIGTERM); time.sleep(5)", "SIGTERM"),
])
def test_a_worker_killed_without_a_word_is_named_as_killed(registry, how, name):
    # A worker killed while it trains or writes the pool leaves no stderr: the page said
    # "stopped with an error (no message)".
    command = (sys.executable, "-c", "import os, signal, sys, time; sys.stdin.buffer.read(); "
                                     + how)
    job = registry(command=command).want("pool-1", None, "session-a")
    assert job.wait(60)
    assert job.state == "failed"
    assert job.error == (f"its worker process was killed by {name} before it had stored the "
                         "pool, so nothing was written to the cache"
                         + ("; the system does this when memory runs out"
                            if name == "SIGKILL" else ""))


def test_a_worker_that_exits_silently_says_its_status(registry):
    command = (sys.executable, "-c", "import sys; sys.stdin.buffer.read(); sys.exit(3)")
    job = registry(command=command).want("pool-1", None, "session-a")
    assert job.wait(60) and job.state == "failed"
    assert job.error == "its worker process exited with status 3 and no message"


# -- the cap on running workers, shared by registries of one slot folder (the replicas) ----

# Logs "<time> <key> start" / "... end" to argv[1]; ends once the file argv[2] exists.
LOGGED = (sys.executable, "-c", """
import pickle, sys, time
key, _ = pickle.load(sys.stdin.buffer)
log, gate = sys.argv[1], sys.argv[2]
def note(what):
    with open(log, "a") as fh:
        fh.write(f"{time.time()!r} {key} {what}\\n")
note("start")
while True:
    try:
        open(gate).close()
        break
    except FileNotFoundError:
        time.sleep(0.05)
note("end")
""")


@pytest.fixture
def logged(tmp_path):
    """``(command, events, open_gate)``: the logging worker, its events ``(time, key,
    what)`` in the order of their times, and the call that lets every worker end."""
    log, gate = tmp_path / "events.log", tmp_path / "gate"

    def events():
        rows = [line.split() for line in log.read_text().splitlines()] if log.exists() else []
        return sorted((float(t), key, what) for t, key, what in rows)

    return (*LOGGED, str(log), str(gate)), events, gate.touch


def _replicas(registry, tmp_path, workers, **options):
    """Two registries sharing one slot folder: two replicas of one cache folder."""
    return [registry(slots=tmp_path / "shared-slots", workers=workers, poll_every=0.1,
                     **options) for _ in range(2)]


def _most_at_once(events):
    running = most = 0
    for _, _, what in events:
        running += 1 if what == "start" else -1
        most = max(most, running)
    return most


def test_two_registries_never_run_more_workers_than_their_shared_cap(
        registry, tmp_path, logged):
    command, events, open_gate = logged
    a, b = _replicas(registry, tmp_path, workers=2, command=command)
    asked = [(a if i % 2 == 0 else b).want(f"pool-{i}", None, "session") for i in range(6)]
    assert [job.state for job in asked] == ["running"] * 2 + ["queued"] * 4
    assert all(job.pid is None and job.started is None for job in asked[2:])
    # Both dispatchers look for slots every 0.1 s: still two running a while later.
    time.sleep(1.0)
    assert len(a.running()) + len(b.running()) == 2
    assert [(a if i % 2 == 0 else b).standing(f"pool-{i}") for i in range(6)] == [
        None, None, *(jobs.Standing(k, 4, 2) for k in (1, 2, 3, 4))]
    open_gate()
    for job in asked:
        assert job.wait(60)
    assert [job.state for job in asked] == ["done"] * 6
    happened = events()
    assert sorted(key for _, key, what in happened if what == "start") == [
        f"pool-{i}" for i in range(6)]
    assert _most_at_once(happened) <= 2
    assert a.queued() == b.queued() == []


def test_queued_jobs_start_in_the_order_they_were_asked_for_across_registries(
        registry, tmp_path, logged):
    command, events, open_gate = logged
    a, b = _replicas(registry, tmp_path, workers=1, command=command)
    order = ["p0", "p1", "p2", "p3", "p4"]
    asked = [(b if i % 2 else a).want(key, None, "session") for i, key in enumerate(order)]
    assert [job.state for job in asked] == ["running"] + ["queued"] * 4
    assert a.queued() == [asked[2], asked[4]] and b.queued() == [asked[1], asked[3]]
    open_gate()
    for job in asked:
        assert job.wait(60) and job.state == "done"
    assert [key for _, key, what in events() if what == "start"] == order
    assert _most_at_once(events()) == 1


def test_a_queued_job_nobody_wants_leaves_the_queue_without_starting(
        registry, tmp_path, logged):
    command, events, _ = logged
    jobs_ = registry(workers=1, command=command, timeout=1.0, slots=tmp_path / "slots")
    running = jobs_.want("p0", None, "session-a")
    left = jobs_.want("p1", None, "session-b")
    stays = jobs_.want("p2", None, "session-c")
    assert jobs_.standing("p2") == jobs.Standing(2, 2, 1)
    _until(events)  # p0's worker has begun
    time.sleep(1.5)
    jobs_.touch("session-a")
    jobs_.touch("session-c")
    assert jobs_.reap() == [left]  # session-b's tab closed: not refreshed for the timeout
    assert left.state == "cancelled" and left.pid is None and left.wait(0)
    assert jobs_.standing("p1") is None
    assert jobs_.standing("p2") == jobs.Standing(1, 1, 1)
    assert jobs_.cancel("p2", "session-c")  # a cancel leaves the queue the same way
    assert stays.state == "cancelled" and stays.pid is None
    assert list((tmp_path / "slots" / "queue").iterdir()) == []  # no ticket left behind
    jobs_.cancel("p0", "session-a")
    assert running.state == "cancelled"
    assert [key for _, key, what in events() if what == "start"] == ["p0"]


def test_a_running_job_cancelled_frees_its_slot_for_the_next(registry):
    jobs_ = registry(command=SLEEPER, workers=1, poll_every=0.1)
    first = jobs_.want("p0", None, "session-a")
    second = jobs_.want("p1", None, "session-b")
    assert (first.state, second.state) == ("running", "queued")
    assert jobs_.cancel("p0", "session-a")
    assert _gone(first.pid)
    _until(lambda: second.state == "running")
    assert jobs_.queued() == []


def test_a_slot_is_freed_when_its_worker_is_killed(registry):
    jobs_ = registry(command=SLEEPER, workers=1, poll_every=0.1)
    first = jobs_.want("p0", None, "session-a")
    second = jobs_.want("p1", None, "session-a")
    os.kill(first.pid, signal.SIGKILL)  # e.g. the kernel, out of memory
    assert first.wait(30) and first.state == "failed"
    _until(lambda: second.state == "running")


# Another replica: a registry of one slot that starts a worker and queues one job, then
# says so and waits to be killed.
_OTHER_REPLICA = """
import sys, time
from dashboard import jobs
other = jobs.JobRegistry(command={command!r}, workers=1, slots={slots!r}, reap_every=None)
job = other.want("theirs-0", None, "session")
other.want("theirs-1", None, "session")
print(job.pid, flush=True)
time.sleep(300)
"""


def test_a_killed_replica_frees_its_slot_and_its_place_in_the_queue(registry, tmp_path):
    import subprocess
    from pathlib import Path

    slots = tmp_path / "shared-slots"
    code = _OTHER_REPLICA.format(command=SLEEPER, slots=str(slots))
    other = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                             cwd=Path(jobs.__file__).resolve().parent.parent, text=True)
    try:
        their_worker = int(other.stdout.readline())
        mine = registry(command=SLEEPER, workers=1, slots=slots, poll_every=0.1)
        job = mine.want("mine", None, "session")
        # Their running worker holds the slot and their queued job stands before mine.
        assert job.state == "queued"
        assert mine.standing("mine") == jobs.Standing(2, 2, 1)
    finally:
        other.kill()  # SIGKILL: no clean-up of its own
        other.wait()
    # The kernel released their ticket's lock and, once their worker died with its parent,
    # the slot's: mine starts.
    _until(lambda: job.state == "running")
    _until(lambda: _gone(their_worker), 30)  # init reaps it
    assert list((slots / "queue").iterdir()) == []


def test_without_a_cap_every_job_starts_at_once(registry, tmp_path):
    jobs_ = registry(command=SLEEPER, workers=0, slots=tmp_path / "slots")
    started = [jobs_.want(f"pool-{i}", None, "session") for i in range(3)]
    assert [job.state for job in started] == ["running"] * 3
    assert jobs_.standing("pool-0") is None
    assert not (tmp_path / "slots").exists()  # no slot taken, no ticket written


def test_the_standing_reads_as_a_sentence():
    assert jobs.Standing(2, 3, 1).text == "Queued: position 2 of 3 (1 training running)"
    assert jobs.Standing(1, 1, 2).text == "Queued: position 1 of 1 (2 trainings running)"


def test_the_cap_reads_the_environment(monkeypatch, caplog):
    cores = len(os.sched_getaffinity(0))
    monkeypatch.delenv(worker_slots.WORKERS_ENV, raising=False)
    assert worker_slots.max_workers() == worker_slots.default_workers() == cores
    monkeypatch.setenv(worker_slots.WORKERS_ENV, "3")
    assert worker_slots.max_workers() == 3
    monkeypatch.setenv(worker_slots.WORKERS_ENV, "0")
    assert worker_slots.max_workers() is None
    for typo in ("two", "-1", "1.5"):
        monkeypatch.setenv(worker_slots.WORKERS_ENV, typo)
        assert worker_slots.max_workers() == cores
        assert f"{worker_slots.WORKERS_ENV}={typo!r} is not a whole number" in caplog.text
