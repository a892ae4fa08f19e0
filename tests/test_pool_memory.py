"""The dashboard's pools in memory are capped by bytes, least recently used let go first.
Small pools and a tiny cap; sizes derived from the arrays by hand."""

import threading

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from dashboard import page_pools, pool_memory
from dashboard.pool_memory import POOL_MEMORY_ENV, PoolMemory, pool_nbytes
from dashboard.pools import PoolRef, _pool_slot, _Slot
from sdwec import pool


class Box:
    """A stand-in pool: attributes holding arrays."""

    def __init__(self, **arrays):
        self.__dict__.update(arrays)


def _slot(nbytes):
    return _Slot(lock=threading.Lock(), pool=Box(P=np.zeros(nbytes, dtype=np.uint8)))


def test_a_pools_bytes_are_its_arrays_each_counted_once():
    shared = np.zeros((10, 20))  # 1,600 bytes
    box = Box(a=shared, b=shared, view=shared[:5], parts=[np.ones(3, dtype=np.int32)],
              meta={"name": "x", "seed": 0, "y": np.arange(4, dtype=np.int64)}, cls=Box)
    assert pool_nbytes(box) == 1600 + 12 + 32


def test_a_trees_bytes_are_its_node_records_and_leaf_values():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, 3)), rng.integers(0, 3, 200)
    tree = DecisionTreeClassifier(random_state=0).fit(X, y)
    state = tree.tree_.__getstate__()  # scikit-learn's own copy of the nodes and values
    # ... and the estimator's own array of class labels (3 int64).
    expected = state["nodes"].nbytes + state["values"].nbytes + 3 * 8
    assert tree.tree_.node_count > 10
    assert pool_nbytes(Box(estimators=[tree], ensemble=Box(estimators_=[tree]))) == expected


def test_over_the_cap_the_least_recently_used_pools_are_let_go(monkeypatch):
    monkeypatch.setenv(POOL_MEMORY_ENV, "2500")
    memory = PoolMemory()
    slots = {name: _slot(1000) for name in "abcd"}
    assert memory.hold("a", slots["a"]) == []
    assert memory.hold("b", slots["b"]) == []
    memory.touch(["a"])  # a is now more recent than b
    assert memory.hold("c", slots["c"]) == ["b"]
    assert slots["b"]["pool"] is None  # its slot is emptied: read from disk next time
    assert list(memory.held()) == ["a", "c"]
    # The pools of one request are kept together, even over the cap.
    assert memory.hold("d", slots["d"], keep={"a", "c", "d"}) == []
    assert list(memory.held()) == ["a", "c", "d"] and sum(memory.held().values()) == 3000


def test_room_is_made_before_a_pool_is_read(monkeypatch):
    # The pools held never pass the cap, not even while a new one is read from disk.
    monkeypatch.setenv(POOL_MEMORY_ENV, "2500")
    memory = PoolMemory()
    slots = {name: _slot(1000) for name in "abc"}
    memory.hold("a", slots["a"])
    memory.hold("b", slots["b"])
    assert memory.make_room(1000) == ["a"]  # 2,000 held + 1,000 to come > 2,500
    assert memory.make_room(400) == []
    assert memory.make_room(1000, keep={"b"}) == []  # the same request's pools stay
    assert list(memory.held()) == ["b"] and slots["a"]["pool"] is None


def test_a_dropped_slot_is_no_longer_counted(monkeypatch):
    monkeypatch.setenv(POOL_MEMORY_ENV, "1500")
    memory = PoolMemory()
    first = _slot(1000)
    memory.hold("a", first)
    del first  # the resource cache dropped it: its pool is freed, not held by the count
    second = _slot(1000)
    assert memory.hold("b", second) == []
    assert memory.held() == {"b": 1000}


@pytest.mark.parametrize("raw, cap", [("", 2**30), ("5000", 5000), ("2e9", 2_000_000_000),
                                      ("0", 2**30), ("-1", 2**30), ("lots", 2**30)])
def test_the_cap_comes_from_the_environment(monkeypatch, raw, cap):
    monkeypatch.setenv(POOL_MEMORY_ENV, raw)
    assert pool_memory.pool_memory_cap() == cap


@pytest.mark.usefixtures("fresh_streamlit")
def test_the_dashboards_pools_follow_the_cap(monkeypatch):
    refs = [PoolRef(pool.PoolKey.for_dataset("wine", "binary", 10, seed), None, "wine")
            for seed in range(4)]
    monkeypatch.setattr(pool_memory, "POOL_MEMORY", PoolMemory())

    def in_memory():
        return [_pool_slot(r)["pool"] is not None for r in refs]

    size = pool_nbytes(page_pools.get_pool(refs[0]))
    monkeypatch.setenv(POOL_MEMORY_ENV, str(int(size * 1.5)))  # room for one pool, not two
    page_pools.get_pool(refs[1])
    assert in_memory() == [False, True, False, False]
    # A configuration's splits are held together, over the cap.
    pools = page_pools.get_pools(refs[:3])
    assert in_memory() == [True, True, True, False]
    assert [p.meta["seed"] for p in pools] == [0, 1, 2]
    sizes = pool_memory.POOL_MEMORY.held()
    assert set(sizes) == {r.key for r in refs[:3]}
    assert sizes[refs[0].key] == size
    # Room for two and a half: a new pool lets go of the two least recently used.
    monkeypatch.setenv(POOL_MEMORY_ENV, str(int(max(sizes.values()) * 2.5)))
    assert page_pools.get_pool(refs[0]) is pools[0]  # from memory: now the most recent
    page_pools.get_pool(refs[3])
    assert in_memory() == [True, False, False, True]
    assert list(pool_memory.POOL_MEMORY.held()) == [refs[0].key, refs[3].key]
    # Reading a pool back from disk: room is made before it is read (its entry's size).
    monkeypatch.setenv(POOL_MEMORY_ENV, str(int(max(sizes.values()) * 1.5)))
    read, seen = pool.load_pool, []

    def spy(*args, **kwargs):
        seen.append(in_memory())
        return read(*args, **kwargs)

    monkeypatch.setattr(pool, "load_pool", spy)
    page_pools.get_pool(refs[1])
    assert seen == [[False, False, False, False]]
    assert in_memory() == [False, True, False, False]
