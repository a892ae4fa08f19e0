"""Pools: splits, label mapping, determinism, the vote table, the disk cache and uploads."""

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from sdwec import cache as disk_cache
from sdwec import datasets, pool, solver
from sdwec.errors import DataError


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


def _same_tree(a, b):
    """Same nodes, splits and predicted class in every leaf (``value`` columns may differ
    when a tree's rows lacked a class: compare the classes the leaves predict)."""
    ta, tb = a.tree_, b.tree_
    for name in ("children_left", "children_right", "feature", "threshold", "n_node_samples",
                 "weighted_n_node_samples", "impurity"):
        if not np.array_equal(getattr(ta, name), getattr(tb, name)):
            return False
    return np.array_equal(a.classes_[ta.value[:, 0, :].argmax(axis=1)],
                          b.classes_[tb.value[:, 0, :].argmax(axis=1)])


@pytest.mark.parametrize("tree_params", [{}, {"max_depth": 4, "min_samples_leaf": 3},
                                         {"min_samples_leaf": 0.05},
                                         {"class_weight": "balanced"}])
def test_members_fitted_on_their_drawn_rows_are_scikit_learns_own_trees(tree_params):
    # The pool's members fit on the rows their bootstrap drew (DrawnRowsTree); scikit-learn's
    # bagging fits each on all rows with zero weights for the rest. Every node must be the
    # same, with a row budget (a rare class is then often not drawn) and without.
    from sklearn.ensemble import BaggingClassifier
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(7)
    X = rng.normal(size=(600, 4)).round(1)   # rounding: ties between feature values
    y = np.where(X[:, 0] + rng.normal(scale=0.7, size=600) > 0, 1, -1)
    y[:6] = 2                                 # six rows of a rare third class
    for max_samples in (None, 30):
        p = pool.build_pool(X, y, n_trees=12, seed=5, tree_params=tree_params,
                            max_samples=max_samples)
        ref = BaggingClassifier(estimator=DecisionTreeClassifier(**tree_params),
                                n_estimators=12, random_state=5,
                                max_samples=1.0 if max_samples is None else max_samples)
        ref.fit(np.asarray(p.X_train, dtype=np.float32), p.y_train)
        assert all(_same_tree(a, b) for a, b in zip(p.estimators, ref.estimators_))
        if max_samples is not None and not tree_params:
            assert any(len(t.classes_) < 3 for t in p.estimators)   # the rare class undrawn
        assert np.array_equal(p.ensemble.predict(p.X_test), ref.predict(p.X_test))


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


def test_progress_weighs_training_as_most_of_the_work():
    data = datasets.load("wine", "binary")
    calls = []
    pool.build_pool(data.X, data.y, n_trees=40, seed=0,
                    progress=lambda done, total, msg: calls.append((done / total, msg)))
    trained = [f for f, msg in calls if msg.startswith("trained")]
    # 40 trees in chunks of 20: half and all of the training, i.e. 47.5 % and 95 % of the bar.
    assert trained == pytest.approx([0.475, 0.95])
    assert calls[-1][0] == 1.0


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


def counting_builder(monkeypatch):
    """Count pool trainings of any source (shipped or uploaded)."""
    calls = []
    real = pool.build_pool

    def build_pool(X, y, **kwargs):
        calls.append(len(y))
        return real(X, y, **kwargs)

    monkeypatch.setattr(pool, "build_pool", build_pool)
    return calls


def test_cache_dir_follows_the_environment(cache):
    assert pool.cache_dir() == cache == disk_cache.cache_dir()
    assert pool.CACHE_ENV == disk_cache.CACHE_ENV == "SDWEC_CACHE_DIR"


def test_cache_hit_returns_the_same_pool_without_training(cache, monkeypatch):
    calls = counting_loader(monkeypatch)
    assert not pool.is_cached("wine", n_trees=10, seed=1)
    a = pool.load_pool("wine", n_trees=10, seed=1)
    path = pool.cache_path("wine", n_trees=10, seed=1)
    assert path.exists() and calls == ["wine"]
    assert path.parent == cache and path.name.startswith("pool-wine-binary-l10-s1-")
    assert pool.is_cached("wine", n_trees=10, seed=1)
    b = pool.load_pool("wine", n_trees=10, seed=1)
    assert calls == ["wine"]  # a hit does not touch the data
    assert np.array_equal(a.P_val, b.P_val) and np.array_equal(a.P_test, b.P_test)
    assert np.array_equal(b.ensemble.predict(b.X_test), a.ensemble.predict(a.X_test))
    assert not pool.is_cached("wine", n_trees=10, seed=2)
    pool.load_pool("wine", n_trees=10, seed=2)  # another seed is another entry
    assert calls == ["wine", "wine"] and len(list(cache.glob("pool-*.pkl"))) == 2


def test_hit_reports_progress(cache):
    pool.load_pool("wine", n_trees=5)
    calls = []
    pool.load_pool("wine", n_trees=5, progress=lambda *args: calls.append(args))
    assert calls == [(1, 1, "loaded from cache")]


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "flip", "append"])
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
    elif damage == "flip":  # one flipped byte in the payload: only the checksum can notice
        i = len(blob) - 100
        path.write_bytes(blob[:i] + bytes([blob[i] ^ 0xFF]) + blob[i + 1:])
    else:
        path.write_bytes(blob + b"\0")
    calls = counting_loader(monkeypatch)
    again = pool.load_pool("wine", n_trees=10, seed=0)
    assert calls == ["wine"]  # rebuilt, not trusted
    assert np.array_equal(first.P_val, again.P_val)
    assert pool.is_cached("wine", n_trees=10, seed=0)  # and the entry is whole again
    pool.load_pool("wine", n_trees=10, seed=0)
    assert calls == ["wine"]


@pytest.mark.parametrize("damage", ["truncate", "empty", "append"])
def test_a_damaged_entry_is_not_reported_cached(cache, damage):
    pool.load_pool("wine", n_trees=5)
    path = pool.cache_path("wine", n_trees=5)
    blob = path.read_bytes()
    path.write_bytes({"truncate": blob[:-1], "empty": b"", "append": blob + b"x"}[damage])
    assert not pool.is_cached("wine", n_trees=5)


def test_an_entry_stored_under_another_key_is_rebuilt(cache, monkeypatch):
    # The file of this pool holds a pool made under other library versions (a stale entry,
    # or a collision of the 16-digit name): the stored key differs, so it is a miss.
    key = pool.PoolKey.for_dataset("wine", n_trees=5)
    path = pool.cache_path(key)
    stale_key = dict(key._cache_key(), versions={"sklearn": "0.0"})
    stale = pool.load_pool("wine", n_trees=5, seed=1, cache=False)
    disk_cache.store(stale_key, stale, key._label()).rename(path)
    assert not pool.is_cached(key)
    calls = counting_loader(monkeypatch)
    fresh = pool.load_pool(key)
    assert calls == ["wine"] and fresh.meta["seed"] == 0
    assert pool.is_cached(key)


def test_library_versions_are_part_of_the_key(cache, monkeypatch):
    pool.load_pool("wine", n_trees=5)
    before = pool.cache_path("wine", n_trees=5)
    monkeypatch.setattr(pool.sklearn, "__version__", "0.0")
    assert pool.cache_path("wine", n_trees=5) != before
    assert not pool.is_cached("wine", n_trees=5)
    calls = counting_loader(monkeypatch)
    pool.load_pool("wine", n_trees=5)
    assert calls == ["wine"]


def test_tree_params_are_part_of_the_key(cache):
    shallow = pool.load_pool("wine", n_trees=5, seed=0, tree_params={"max_depth": 1})
    assert shallow.meta["tree_params"] == {"max_depth": 1}
    assert all(t.get_depth() == 1 for t in shallow.estimators)
    assert pool.cache_path("wine", n_trees=5, tree_params={"max_depth": 1}) != \
        pool.cache_path("wine", n_trees=5)
    assert pool.is_cached("wine", n_trees=5, tree_params={"max_depth": 1})
    assert not pool.is_cached("wine", n_trees=5)


def test_concurrent_threads_train_once(cache, monkeypatch):
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


# Each process counts its trainings in a shared file, waits for the others to be ready, then
# asks for the same pool; the build is slowed so that every request arrives during it.
_RACER = """
import hashlib, os, sys, time
from sdwec import datasets, pool
counter, ready, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
real = datasets.load
def load(name, task="binary"):
    with open(counter, "a") as fh:
        fh.write(f"{os.getpid()}\\n")
    time.sleep(1.0)
    return real(name, task)
datasets.load = load
open(os.path.join(ready, str(os.getpid())), "w").close()
while len(os.listdir(ready)) < n:
    time.sleep(0.01)
p = pool.load_pool("wine", n_trees=6, seed=3)
print(hashlib.sha256(p.P_val.tobytes() + p.P_test.tobytes()).hexdigest(), flush=True)
"""


def test_concurrent_processes_train_once(cache, tmp_path):
    counter, ready = tmp_path / "builds.txt", tmp_path / "ready"
    ready.mkdir()
    env = dict(os.environ, **{pool.CACHE_ENV: str(cache)})
    procs = [subprocess.Popen([sys.executable, "-c", _RACER, str(counter), str(ready), "3"],
                              stdout=subprocess.PIPE, text=True, env=env) for _ in range(3)]
    outputs = [proc.communicate(timeout=300)[0].strip() for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0, 0]
    assert len(counter.read_text().split()) == 1  # one process trained, two waited and read
    assert len(set(outputs)) == 1  # and all three got the same pool
    assert pool.is_cached("wine", n_trees=6, seed=3)


def test_interrupted_write_leaves_no_entry(cache, monkeypatch):
    def killed(src, dst):
        raise KeyboardInterrupt  # the process dies between writing and renaming

    monkeypatch.setattr(disk_cache.os, "replace", killed)
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
    with pytest.raises(ValueError, match="n_trees must be at least 1"):
        pool.load_pool("wine", n_trees=0)


def test_cache_entry_carries_the_compressed_votes(cache):
    built = pool.load_pool("wine", n_trees=6)
    warm = pool.load_pool("wine", n_trees=6)
    assert warm.val_votes is not None and warm.test_votes is not None
    assert np.array_equal(warm.votes("test").counts, built.votes("test").counts)


def test_killed_writer_leaves_no_entry_and_stale_temp_files_are_swept(cache):
    script = (
        "import os, time\n"
        "from sdwec import pool\n"
        "def stall(fd):\n"
        "    print('writing', flush=True)\n"
        "    time.sleep(120)\n"
        "os.fsync = stall\n"
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
    assert pool.load_pool("wine", n_trees=5).n_trees == 5  # the lock died with its holder
    # Its name says which pid wrote it, dead on this host: the next write swept it at once.
    assert path.exists() and list(cache.glob(".tmp-*")) == []


# ---------------------------------------------------------------- keys and uploads


def upload(rows=None, name="mine.csv", task="auto"):
    """A small uploaded CSV, read by the CSV loader as the dashboard does."""
    rows = rows if rows is not None else separable_rows()
    text = "a,b,label\n" + "".join(f"{a},{b},{c}\n" for a, b, c in rows)
    return datasets.from_csv(text.encode(), name=name, task=task)


def separable_rows(n=60):
    X, y = separable(n=n, labels=("x", "y", "z"), seed=1)
    return [(round(a, 6), round(b, 6), c) for (a, b), c in zip(X, y)]


def test_pool_key_is_frozen_hashable_and_canonical():
    a = pool.PoolKey.for_dataset("heartC", "binary", n_trees=np.int64(10), seed=2,
                                 tree_params={"max_depth": 3, "criterion": "gini"})
    b = pool.PoolKey("heart", "binary", 10, 2, (("max_depth", 3), ("criterion", "gini")))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a.source == "heart" and a.tree_params == (("criterion", "gini"), ("max_depth", 3))
    assert type(a.n_trees) is int and not a.is_upload
    with pytest.raises(AttributeError):
        a.seed = 3
    assert pool.PoolKey.for_dataset("wine") == pool.PoolKey("wine", "binary", 200, 0)


def test_pool_key_refuses_bad_values():
    with pytest.raises(ValueError, match="Unknown dataset"):
        pool.PoolKey.for_dataset("iris")
    with pytest.raises(DataError, match="task"):
        pool.PoolKey.for_dataset("wine", "regression")
    with pytest.raises(TypeError, match="n_trees must be an integer"):
        pool.PoolKey.for_dataset("wine", n_trees=2.5)
    with pytest.raises(TypeError, match="not hashable"):
        pool.PoolKey.for_dataset("wine", tree_params={"class_weight": {1: 2.0}})
    with pytest.raises(TypeError, match="dataset name or a sdwec.datasets.Dataset"):
        pool.PoolKey.for_dataset(np.zeros((3, 3)))


def test_load_pool_takes_a_key(cache, monkeypatch):
    key = pool.PoolKey.for_dataset("wine", "multiclass", n_trees=6, seed=1)
    by_key = pool.load_pool(key)
    calls = counting_loader(monkeypatch)
    by_name = pool.load_pool("wine", "multiclass", n_trees=6, seed=1)
    assert calls == [] and np.array_equal(by_key.P_val, by_name.P_val)  # one entry
    assert pool.is_cached(key) and pool.cache_path(key) == pool.cache_path(
        "wine", "multiclass", n_trees=6, seed=1)
    with pytest.raises(TypeError, match="already fixes n_trees"):
        pool.load_pool(key, n_trees=6)


def test_same_upload_same_key_one_changed_cell_another():
    rows = separable_rows()
    first = pool.PoolKey.for_dataset(upload(rows), n_trees=10)
    again = pool.PoolKey.for_dataset(upload(rows, name="renamed.csv"), n_trees=10)
    assert first == again and first.is_upload
    assert first.source == "sha256:" + upload(rows).fingerprint
    changed = list(rows)
    changed[7] = (changed[7][0] + 1.0, *changed[7][1:])
    assert pool.PoolKey.for_dataset(upload(changed), n_trees=10) != first
    relabelled = list(rows)
    relabelled[7] = (*relabelled[7][:2], "z" if relabelled[7][2] != "z" else "x")
    assert pool.PoolKey.for_dataset(upload(relabelled), n_trees=10) != first


def test_an_upload_is_one_task_view():
    binary = upload([(r[0], r[1], "x" if r[2] == "x" else "y") for r in separable_rows()])
    assert binary.task == "binary"
    assert pool.PoolKey.for_dataset(binary).task == "binary"
    with pytest.raises(DataError, match="from_csv"):
        pool.PoolKey.for_dataset(binary, "multiclass")


def test_uploads_are_cached_on_disk(cache, monkeypatch):
    builds = counting_builder(monkeypatch)
    rows = separable_rows()
    data = upload(rows)
    assert not pool.is_cached(data, n_trees=8)
    built = pool.load_pool(data, n_trees=8, seed=1)
    assert builds == [len(data.y)] and pool.is_cached(data, n_trees=8, seed=1)
    path = pool.cache_path(data, n_trees=8, seed=1)
    assert path.exists() and path.name.startswith("pool-upload-")
    assert built.meta["dataset"] == "mine.csv" and built.meta["fingerprint"] == data.fingerprint
    # The same data uploaded again under another name: no training, the caller's name.
    warm = pool.load_pool(upload(rows, name="copy.csv"), n_trees=8, seed=1)
    assert builds == [len(data.y)] and warm.meta["dataset"] == "copy.csv"
    assert np.array_equal(warm.P_test, built.P_test)
    assert np.array_equal(built.P_val[:, 0], built.y_val)  # trained on this upload's labels


def test_an_upload_key_finds_its_pool_and_needs_the_data_to_train(cache):
    data = upload()
    key = pool.PoolKey.for_dataset(data, n_trees=5)
    with pytest.raises(ValueError, match="pass its Dataset"):
        pool.load_pool(key)
    other = upload(separable_rows(n=70))
    with pytest.raises(ValueError, match="not the data"):
        pool.load_pool(key, dataset=other)
    with pytest.raises(ValueError, match="only for an upload's PoolKey"):
        pool.load_pool("wine", n_trees=5, dataset=data)
    with pytest.raises(ValueError, match="only for an upload's PoolKey"):
        pool.load_pool(data, n_trees=5, dataset=data)
    trained = pool.load_pool(key, dataset=data)
    assert np.array_equal(pool.load_pool(key).P_val, trained.P_val)  # cached: no data needed


# ---------------------------------------------------------------- the class's pools go last


def _stand_in(key, size, mtime):
    """A cache entry of about ``size`` bytes under ``key``, instead of a trained pool."""
    path = disk_cache.store(key._cache_key(), b"p" * size, key._label())
    os.utime(path, (mtime, mtime))
    return path


def test_ten_uploads_leave_every_shipped_pool_on_disk(cache, monkeypatch):
    monkeypatch.setenv(disk_cache.MAX_BYTES_ENV, "none")
    shipped = [pool.PoolKey.for_dataset(name, "binary", 200, seed) for name, seed in
               [("nsl_kdd", 0), ("waveform", 0), ("waveform", 1), ("waveform", 2),
                ("vehicle", 0), ("vehicle", 1)]]
    paths = [_stand_in(key, 20_000, 1000 + i) for i, key in enumerate(shipped)]
    # Full: the shipped pools fill the cap but for less than any entry.
    cap = sum(p.stat().st_size for p in paths) + 1_000
    monkeypatch.setenv(disk_cache.MAX_BYTES_ENV, str(cap))
    uploads = [pool.PoolKey(f"sha256:{i:064x}", "binary", 200, 0) for i in range(10)]
    assert all(key.is_upload for key in uploads)
    for i, key in enumerate(uploads):  # one after another, each forcing an eviction
        _stand_in(key, 50_000, 2000 + i)
        assert all(pool.is_cached(key) for key in shipped), f"upload {i + 1}"
    assert [pool.is_cached(key) for key in uploads] == [False] * 9 + [True]
    assert not disk_cache.is_upload_entry(pool.cache_path(shipped[0]))
    assert disk_cache.is_upload_entry(pool.cache_path(uploads[0]))

    # Only shipped pools over the cap: the least recently used of them goes.
    assert disk_cache.load(shipped[0]._cache_key(), shipped[0]._label())  # NSL-KDD: read now
    wine = pool.PoolKey.for_dataset("wine", "binary", 200, 0)
    _stand_in(wine, 20_000, 3000)
    assert not pool.is_cached(uploads[-1])  # the upload first, then waveform's seed 0
    assert [pool.is_cached(key) for key in shipped] == [True, False, True, True, True, True]
    assert pool.is_cached(wine)
    # No lock file outlives its entry.
    assert sorted(p.stem for p in cache.glob("*.lock")) == []
