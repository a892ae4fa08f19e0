"""Pools: splits, label mapping, determinism, the vote table and the disk cache."""

import threading
import time

import numpy as np
import pytest

from sdwec import datasets, pool, solver
from sdwec.errors import DataError


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(pool.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def separable(n=200, labels=(10, 20, 30), seed=0):
    """Three classes decided by one feature: every fully grown tree predicts them exactly."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(len(labels), size=n)
    X = np.column_stack([codes + rng.uniform(0.1, 0.9, n), rng.normal(size=n)])
    return X, np.asarray(labels)[codes]


def test_split_is_a_stratified_80_10_10_partition():
    y = np.repeat([0, 1, 2], [500, 300, 200])
    tr, va, te = pool.split_indices(y, seed=3)
    assert np.array_equal(np.sort(np.concatenate([tr, va, te])), np.arange(1000))
    assert (len(tr), len(va), len(te)) == (800, 100, 100)
    for c, n in [(0, 500), (1, 300), (2, 200)]:
        assert abs((y[va] == c).sum() - n / 10) <= 1
        assert abs((y[te] == c).sum() - n / 10) <= 1


def test_split_is_seeded():
    y = np.repeat([0, 1], [60, 40])
    a, b = pool.split_indices(y, 1), pool.split_indices(y, 1)
    c = pool.split_indices(y, 2)
    assert all(np.array_equal(u, v) for u, v in zip(a, b))
    assert not np.array_equal(a[1], c[1])


def test_split_rejects_too_few_rows():
    with pytest.raises(DataError, match="at least 10 rows"):
        pool.split_indices(np.arange(9) % 2, 0)


def test_predictions_are_in_the_original_label_space():
    X, y = separable()
    p = pool.build_pool(X, y, n_trees=8, seed=0)
    assert list(p.classes) == [10, 20, 30]
    # every tree is exact on this data, so each column must equal the original labels
    assert np.array_equal(p.P_val, np.repeat(p.y_val[:, None], 8, axis=1))
    assert np.array_equal(p.P_test, np.repeat(p.y_test[:, None], 8, axis=1))
    assert np.array_equal(p.single_test, p.y_test)


def test_string_labels_map_back():
    X, y = separable(labels=("cat", "dog", "emu"))
    p = pool.build_pool(X, y, n_trees=5, seed=1)
    assert set(np.unique(p.P_val)) <= {"cat", "dog", "emu"}
    assert np.array_equal(p.P_val[:, 0], p.y_val)


def test_pool_is_deterministic_and_seeded():
    data = datasets.load("sonar", "binary")
    a = pool.build_pool(data.X, data.y, n_trees=10, seed=4)
    b = pool.build_pool(data.X, data.y, n_trees=10, seed=4)
    c = pool.build_pool(data.X, data.y, n_trees=10, seed=5)
    assert np.array_equal(a.P_val, b.P_val) and np.array_equal(a.P_test, b.P_test)
    assert np.array_equal(a.single_test, b.single_test)
    assert not np.array_equal(a.y_val, c.y_val) or not np.array_equal(a.P_val, c.P_val)


def test_chunked_training_equals_one_bagging_fit():
    from sklearn.ensemble import BaggingClassifier
    from sklearn.tree import DecisionTreeClassifier

    data = datasets.load("wine", "binary")
    p = pool.build_pool(data.X, data.y, n_trees=25, seed=2)  # grown in chunks of 20
    ref = BaggingClassifier(estimator=DecisionTreeClassifier(), n_estimators=25,
                            random_state=2).fit(p.X_train, p.y_train)
    assert np.array_equal(pool.prediction_matrix(ref.estimators_, p.X_val, ref.classes_), p.P_val)


def test_prediction_matrix_equals_each_members_own_predict():
    # Leaf lookup must give exactly the labels the members' own predict() gives: bagged
    # members, members that never saw some classes (fewer classes_), stumps with tied
    # leaves, and inputs that are float64, Fortran-ordered or strided.
    from sklearn.ensemble import BaggingClassifier
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(4)
    labels = np.array(["a", "b", "c", "d"])
    X = rng.normal(size=(120, 3))
    codes = np.minimum(rng.integers(0, 12, size=120) // 3, 3)
    members = list(BaggingClassifier(DecisionTreeClassifier(), n_estimators=20, max_samples=8,
                                     random_state=1).fit(X, labels[codes]).estimators_)
    for depth in (None, 1, 3):
        for seen in ([1, 2], [0, 3], [2]):
            rows = np.isin(codes, seen)
            members.append(DecisionTreeClassifier(max_depth=depth, random_state=0)
                           .fit(X[rows], codes[rows]))
    assert any(len(m.classes_) < len(labels) for m in members)
    for X_eval in (X, np.asfortranarray(X), X[::2], X[:1]):
        expected = np.column_stack([labels[m.predict(X_eval).astype(int)] for m in members])
        assert np.array_equal(pool.prediction_matrix(members, X_eval, labels), expected)
    stump = DecisionTreeClassifier(max_depth=1).fit([[0.0], [0.0], [1.0], [1.0]], [0, 1, 0, 1])
    leaves = stump.tree_.value[stump.tree_.children_left == -1, 0, :]
    assert np.all(leaves[:, 0] == leaves[:, 1])  # tied leaves: both must choose class 0
    X_tie = [[0.0], [1.0]]
    assert np.array_equal(pool.prediction_matrix([stump], X_tie, np.array([5, 7]))[:, 0],
                          np.array([5, 7])[stump.predict(X_tie)])


def test_pool_fields_prior_table_and_progress():
    data = datasets.load("wine", "binary")
    calls = []
    p = pool.build_pool(data.X, data.y, n_trees=12, seed=0,
                        progress=lambda done, total, msg: calls.append((done, total)))
    assert p.P_val.shape == (len(p.y_val), 12) and p.n_trees == 12
    assert len(p.estimators) == 12 and p.ensemble.estimators_ == p.estimators
    counts = {c: (p.y_val == c).sum() for c in p.classes}
    assert counts[p.prior[0]] == max(counts.values())
    assert p.votes("val").m == len(p.y_val) and p.votes("val").counts.sum() == len(p.y_val)
    C = np.where(p.P_val == p.y_val[:, None], 1.0, -1.0)
    assert {tuple(r) for r in C} == {tuple(r) for r in p.votes("val").correctness}
    dones = [d for d, _ in calls]
    assert dones == sorted(dones) and calls[-1][0] == calls[-1][1]


def test_multiclass_table_uses_the_correctness_matrix():
    data = datasets.load("wine", "multiclass")
    p = pool.build_pool(data.X, data.y, n_trees=6, seed=0)
    assert len(p.classes) == 3
    ref = solver.compress(solver.correctness_matrix(p.P_val, p.y_val), np.ones(len(p.y_val)))
    form = p.votes("val").correctness_form
    assert np.array_equal(ref.correctness, form.correctness)
    assert np.array_equal(ref.counts, form.counts)


def test_bad_inputs_get_clear_messages():
    X, y = separable(n=40)
    with pytest.raises(DataError, match="single class"):
        pool.build_pool(X, np.zeros(40), n_trees=2)
    X[0, 0] = np.nan
    with pytest.raises(DataError, match="NaN"):
        pool.build_pool(X, y, n_trees=2)
    with pytest.raises(ValueError, match="tree parameter"):
        pool.build_pool(*separable(n=40), n_trees=2, tree_params={"no_such": 1})


# ---------------------------------------------------------------- disk cache


def counting_loader(monkeypatch, delay=0.0):
    calls = []
    real = datasets.load

    def load(name, task="binary"):
        calls.append(name)
        time.sleep(delay)
        return real(name, task)

    monkeypatch.setattr(datasets, "load", load)
    return calls


def test_cache_dir_follows_the_environment(cache):
    assert pool.cache_dir() == cache


def test_cache_hit_returns_the_same_pool_without_training(cache, monkeypatch):
    calls = counting_loader(monkeypatch)
    a = pool.load_pool("wine", n_trees=10, seed=1)
    path = pool.cache_path("wine", n_trees=10, seed=1)
    assert path.exists() and calls == ["wine"]
    b = pool.load_pool("wine", n_trees=10, seed=1)
    assert calls == ["wine"]  # a hit does not touch the data
    assert np.array_equal(a.P_val, b.P_val) and np.array_equal(a.P_test, b.P_test)
    assert np.array_equal(b.ensemble.predict(b.X_test), a.ensemble.predict(a.X_test))
    pool.load_pool("wine", n_trees=10, seed=2)  # another seed is another entry
    assert calls == ["wine", "wine"] and len(list(cache.glob("pool-*.pkl"))) == 2


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "flip"])
def test_corrupt_cache_entry_is_rebuilt(cache, monkeypatch, damage):
    first = pool.load_pool("wine", n_trees=10, seed=0)
    path = pool.cache_path("wine", n_trees=10, seed=0)
    blob = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(blob[: len(blob) // 2])
    elif damage == "garbage":
        path.write_bytes(np.random.default_rng(0).bytes(len(blob)))
    elif damage == "empty":
        path.write_bytes(b"")
    else:  # one flipped byte in the payload: only the checksum can notice
        i = len(blob) - 100
        path.write_bytes(blob[:i] + bytes([blob[i] ^ 0xFF]) + blob[i + 1:])
    calls = counting_loader(monkeypatch)
    again = pool.load_pool("wine", n_trees=10, seed=0)
    assert calls == ["wine"]  # rebuilt, not trusted
    assert np.array_equal(first.P_val, again.P_val)
    key = pool._cache_key("wine", "binary", 10, 0, None)
    assert pool._read_entry(path, key) is not None  # and the entry is healthy again


def test_stale_key_is_rebuilt(cache, monkeypatch):
    pool.load_pool("wine", n_trees=10, seed=0)
    path = pool.cache_path("wine", n_trees=10, seed=0)
    key = pool._cache_key("wine", "binary", 10, 0, None)
    stale = dict(key, versions=dict(key["versions"], sklearn="0.0"))
    pool._write_entry(path, stale, pool.load_pool("wine", n_trees=10, seed=0))
    calls = counting_loader(monkeypatch)
    pool.load_pool("wine", n_trees=10, seed=0)
    assert calls == ["wine"]


def test_tree_params_are_part_of_the_key(cache):
    shallow = pool.load_pool("wine", n_trees=5, seed=0, tree_params={"max_depth": 1})
    assert shallow.meta["tree_params"] == {"max_depth": 1}
    assert all(t.get_depth() == 1 for t in shallow.estimators)
    assert pool.cache_path("wine", n_trees=5, tree_params={"max_depth": 1}) != \
        pool.cache_path("wine", n_trees=5)


def test_concurrent_requests_train_once(cache, monkeypatch):
    calls = counting_loader(monkeypatch, delay=0.5)
    results = []
    threads = [threading.Thread(target=lambda: results.append(pool.load_pool("wine", n_trees=8)))
               for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == ["wine"]
    assert len(results) == 3 and all(np.array_equal(r.P_val, results[0].P_val) for r in results)


def test_interrupted_write_leaves_no_entry(cache, monkeypatch):
    def killed(src, dst):
        raise KeyboardInterrupt  # the process dies between writing and renaming

    monkeypatch.setattr(pool.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        pool.load_pool("wine", n_trees=5)
    assert not pool.cache_path("wine", n_trees=5).exists()
    assert list(cache.glob(".tmp-*")) == []
    monkeypatch.undo()
    monkeypatch.setenv(pool.CACHE_ENV, str(cache))
    assert pool.load_pool("wine", n_trees=5).n_trees == 5


def test_cache_false_does_not_write(cache):
    pool.load_pool("wine", n_trees=5, cache=False)
    assert not cache.exists() or not list(cache.glob("pool-*.pkl"))


def test_load_pool_names_and_tasks(cache):
    with pytest.raises(ValueError, match="Unknown dataset"):
        pool.load_pool("no_such_dataset", n_trees=2)
    with pytest.raises(DataError, match="task"):
        pool.load_pool("wine", task="regression", n_trees=2)


def test_cache_entry_carries_the_compressed_votes(cache):
    built = pool.load_pool("wine", n_trees=6)
    warm = pool.load_pool("wine", n_trees=6)
    assert warm.val_votes is not None and warm.test_votes is not None
    assert np.array_equal(warm.votes("test").counts, built.votes("test").counts)


def test_killed_writer_leaves_no_entry_and_stale_temp_files_are_swept(cache):
    import os
    import subprocess
    import sys

    script = (
        "import os, sys, time\n"
        "from sdwec import pool\n"
        "def stall(fd):\n"
        "    print('writing', flush=True)\n"
        "    time.sleep(120)\n"
        "pool.os.fsync = stall\n"
        "pool.load_pool('wine', n_trees=5)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, **{pool.CACHE_ENV: str(cache)}))
    try:
        assert proc.stdout.readline().strip() == "writing"  # mid-write: temp file open
    finally:
        proc.kill()  # SIGKILL: no cleanup handler runs
        proc.wait()
    path = pool.cache_path("wine", n_trees=5)
    leftovers = list(cache.glob(".tmp-*"))
    assert not path.exists() and len(leftovers) == 1
    os.utime(leftovers[0], (0, 0))  # pretend the dead writer's file is old
    assert pool.load_pool("wine", n_trees=5).n_trees == 5  # rebuilt, and written properly
    assert path.exists() and list(cache.glob(".tmp-*")) == []
