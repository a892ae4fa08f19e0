"""The replica's memory budget (dashboard/memory_budget.py) and the one upload a session
holds (dashboard/upload_plans.SessionUploads), with fake sizes: a hand-set RSS, numpy arrays
as pools."""

import logging
import time

import numpy as np
import pytest

from dashboard import memory_budget, pool_memory, upload_plans
from dashboard.memory_budget import MemoryBudget, MemoryRefused
from sdwec import pool

MIB = 2**20


class FakeProcess:
    """The process's RSS, set by hand; ``trim`` hands back ``freeable`` bytes."""

    def __init__(self, rss, freeable=0):
        self.now, self.freeable, self.trims = rss, freeable, 0

    def rss(self):
        return self.now

    def trim(self):
        self.trims += 1
        self.now -= self.freeable
        self.freeable = 0


def _budget(rss, cap=1000 * MIB, freeable=0):
    process = FakeProcess(rss, freeable)
    return MemoryBudget(cap=cap, rss=process.rss, trim=process.trim), process


def test_a_request_that_fits_is_admitted_and_its_reservation_counts_until_released():
    budget, _ = _budget(400 * MIB)
    token = budget.admit(500 * MIB, "reading this file")
    assert budget.reserved() == 500 * MIB
    budget.release(token)
    assert budget.reserved() == 0


def test_the_newest_request_is_refused_with_what_to_do_and_the_first_goes_on():
    budget, _ = _budget(400 * MIB)
    first = budget.admit(350 * MIB, "reading this file")
    # 400 held + 350 reserved + 300 asked = 1050 MiB > 1000 MiB.
    with pytest.raises(MemoryRefused) as refused:
        budget.admit(300 * MIB, "reading this file")
    text = str(refused.value)
    assert "short of memory" in text and "try again in a minute" in text.lower()
    assert "random sample of the rows" in text and "reading this file" in text
    assert "300 MiB" in text and "750 MiB" in text and "1,000 MiB" in text
    assert budget.reserved() == 350 * MIB  # the refused request reserved nothing
    budget.release(first)
    budget.admit(300 * MIB, "reading this file")  # room again once the first is done


def test_a_request_is_admitted_once_the_process_holds_less_again():
    budget, process = _budget(800 * MIB)
    with pytest.raises(MemoryRefused):
        budget.admit(300 * MIB, "bringing this file's pools into memory")
    process.now = 600 * MIB  # another session's pools were let go
    assert budget.admit(300 * MIB, "bringing this file's pools into memory")


def test_free_memory_is_handed_back_before_a_refusal_and_counts():
    budget, process = _budget(900 * MIB, freeable=400 * MIB)
    budget.admit(200 * MIB, "reading this file")  # 900 + 200 > 1000 until the trim
    assert process.trims == 1 and process.now == 500 * MIB
    budget.admit(100 * MIB, "reading this file")  # fits without trimming
    assert process.trims == 1


def test_the_boundary_is_inclusive():
    budget, _ = _budget(600 * MIB)
    budget.admit(400 * MIB, "x")  # exactly the cap
    with pytest.raises(MemoryRefused):
        budget.admit(1, "x")


def test_a_request_for_nothing_is_admitted_even_over_the_cap():
    budget, _ = _budget(2000 * MIB)
    with budget.reserve(0, "x"):  # e.g. pools a worker trains: nothing comes into memory
        pass
    with pytest.raises(MemoryRefused):
        budget.admit(1, "x")


def test_reserve_releases_when_the_block_fails():
    budget, _ = _budget(0)
    with pytest.raises(RuntimeError), budget.reserve(900 * MIB, "x"):
        assert budget.reserved() == 900 * MIB
        raise RuntimeError
    assert budget.reserved() == 0


def test_a_refusal_is_a_memory_error_for_guards_that_do_not_know_it():
    assert issubclass(MemoryRefused, MemoryError)


@pytest.mark.parametrize("raw, expected", [("", memory_budget.DEFAULT_REPLICA_MEMORY_BYTES),
                                           ("1e9", 10**9), ("2147483648", 2**31),
                                           ("-5", memory_budget.DEFAULT_REPLICA_MEMORY_BYTES),
                                           ("lots", memory_budget.DEFAULT_REPLICA_MEMORY_BYTES)])
def test_the_cap_comes_from_the_environment(monkeypatch, caplog, raw, expected):
    monkeypatch.setenv(memory_budget.REPLICA_MEMORY_ENV, raw)
    with caplog.at_level(logging.WARNING, logger="dashboard"):
        assert memory_budget.replica_memory_cap() == expected
        assert MemoryBudget().cap == expected
    assert (memory_budget.REPLICA_MEMORY_ENV in caplog.text) == (raw in ("-5", "lots"))


def test_the_default_leaves_room_under_serve_sh_s_guard():
    # serve.sh kills a replica past --max-memory, 3072 MiB by default.
    assert memory_budget.DEFAULT_REPLICA_MEMORY_BYTES <= 3072 * MIB - 512 * MIB


def test_the_process_rss_is_read_and_grows_with_an_array():
    # 128 MiB written, 100 asked: the rest of the process may free a few MiB meanwhile.
    before = memory_budget.process_rss()
    block = np.ones(128 * MIB // 8)
    assert memory_budget.process_rss() - before >= 100 * MIB
    del block


# ------------------------------------------------------------------ one upload per session


def _key(source, seed=0):
    return pool.PoolKey(source=source, task="binary", n_trees=10, seed=seed)


class Slot(dict):
    pass


def _hold(memory, source, seed=0):
    slot = Slot(pool=np.zeros(1000))
    memory.hold(_key(source, seed), slot)
    return slot


@pytest.fixture
def uploads_world():
    memory = pool_memory.PoolMemory()
    trims, stopped = [], []
    sessions = upload_plans.SessionUploads(memory, trim=lambda: trims.append(1),
                                           stop_training=lambda *a: stopped.append(a))
    sessions.stopped = stopped
    return memory, sessions, trims


A, B = "sha256:" + "a" * 64, "sha256:" + "b" * 64


def test_a_sessions_end_lets_go_of_its_uploads_pools_and_previews(uploads_world):
    memory, sessions, trims = uploads_world
    state = {}
    held = sessions.holder("s1", state)
    held.file, held.previews, held.source = "f", ("p", {}), A
    a0, a1, b0 = _hold(memory, A, 0), _hold(memory, A, 1), _hold(memory, B)
    sessions.end("s1")
    assert a0["pool"] is None and a1["pool"] is None
    assert b0["pool"] is not None and set(memory.held()) == {_key(B)}
    assert held.previews is None and held.source is None and trims
    assert sessions.stopped == [(A, "s1")]  # its trainings of the upload are not wanted


def test_a_replaced_file_lets_go_of_the_earlier_ones_data(uploads_world):
    memory, sessions, _ = uploads_world
    state = {"user_dataset": ("old key", "old data")}
    held = sessions.holder("s1", state)
    held.file, held.previews, held.source = "old", ("p", {}), A
    slot = _hold(memory, A)
    sessions.replace(held, "old", state)  # the same file: nothing goes
    assert slot["pool"] is not None and "user_dataset" in state
    sessions.replace(held, "new", state)
    assert slot["pool"] is None and "user_dataset" not in state and held.previews is None
    assert held.file == "new" and sessions.stopped == [(A, "s1")]


def test_an_upload_another_session_holds_keeps_its_pools(uploads_world):
    memory, sessions, _ = uploads_world
    first, second = sessions.holder("s1", {}), sessions.holder("s2", {})
    first.source = second.source = A
    slot = _hold(memory, A)
    sessions.end("s1")
    assert slot["pool"] is not None
    sessions.end("s2")
    assert slot["pool"] is None


def test_a_session_dropped_by_streamlit_leaves_no_entry_and_its_memory_is_handed_back(
        uploads_world, monkeypatch):
    _, sessions, trims = uploads_world
    monkeypatch.setattr(upload_plans, "TRIM_DELAY_SECONDS", 0.01)
    state = {}
    sessions.holder("s1", state)
    del state  # Streamlit dropped the session and its state
    sessions.end("s1")  # nothing of its own to let go, and no error
    assert "s1" not in sessions._held
    for _ in range(200):
        if trims:
            break
        time.sleep(0.01)
    assert trims  # once its state is gone


def test_a_session_stops_wanting_only_its_own_trainings_of_the_upload(monkeypatch):
    from types import SimpleNamespace

    from dashboard import training

    jobs = [SimpleNamespace(key=_key(A, 0), sessions={"s1": 0.0, "s2": 0.0}),
            SimpleNamespace(key=_key(A, 1), sessions={"s2": 0.0}),
            SimpleNamespace(key=_key(B, 0), sessions={"s1": 0.0})]
    cancelled = []
    registry = SimpleNamespace(running=lambda: jobs[:1], queued=lambda: jobs[1:],
                               cancel=lambda key, session: cancelled.append((key, session)))
    monkeypatch.setattr(training, "pool_jobs", lambda: registry)
    upload_plans._stop_training(A, "s1")
    assert cancelled == [(_key(A, 0), "s1")]
