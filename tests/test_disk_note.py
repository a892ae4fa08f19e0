"""The sidebar's "Pools on disk" note: each shipped dataset is counted against
what its default view needs (its own default splits, the sidebar's task, pool size and
seed), and only the datasets whose task it is are listed.

The cache is a temporary folder holding a few stand-in pool entries (a header and a tiny
payload: the note reads headers only), so nothing is trained.  The expected notes are
written out by hand from the datasets' sizes: a test split is a tenth of the rows, and the
default takes the fewest of 1, 3, 5, 10 splits with 1,000 test rows in all (10 for the small
UCI sets, 3 for waveform's 5,000 rows, 1 for NSL-KDD's 125,973); under the multi-class task
only heart (5 classes), vehicle (4), waveform (3), wine (3) and nsl_kdd (5) have more than
two classes.
"""

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dashboard import pools
from dashboard.config import Config
from dashboard.sidebar import _disk_caption
from sdwec import cache as disk_cache
from sdwec import pool

PAGE = str(Path(__file__).resolve().parent.parent / "pages" / "your_data.py")
L = 10
TAIL = " A dataset with all its pools on disk opens in seconds; the others are trained first."


def _fake_pool(name, task, seed):
    """A cache entry for that pool (what the note looks for), without training it."""
    key = pool.PoolKey.for_dataset(name, task, L, seed)
    disk_cache.store(key._cache_key(), "stand-in", key._label())


@pytest.fixture
def fake_cache(cache):
    # sonar: all 10 default splits; waveform: 2 of its 3; nsl_kdd: its one split; vehicle:
    # 3 of 10 (what a 3-split view would have); wine: all 10, but under multiclass only.
    for seed in range(10):
        _fake_pool("sonar", "binary", seed)
        _fake_pool("wine", "multiclass", seed)
    for seed in (0, 1):
        _fake_pool("waveform", "binary", seed)
    _fake_pool("nsl_kdd", "binary", 0)
    for seed in (0, 1, 2):
        _fake_pool("vehicle", "binary", seed)
    st.cache_data.clear()
    yield cache
    st.cache_data.clear()


def test_binary_note_counts_each_dataset_at_its_default_splits(fake_cache):
    counts = {name: (n, needed) for name, n, needed in pools.warm_pools(L, 0, "binary")}
    assert counts == {"breast": (0, 10), "heart": (0, 10), "ionosphere": (0, 10),
                      "sonar": (10, 10), "vehicle": (3, 10), "vote": (0, 10),
                      "waveform": (2, 3), "wdbc": (0, 10), "wine": (0, 10),
                      "wpbc": (0, 10), "nsl_kdd": (1, 1)}
    # The sidebar's own splits (here 3) do not matter: each dataset has its own default.
    note = _disk_caption(Config(dataset="sonar", n_trees=L, seed=0, splits=3),
                         pools.warm_pools)
    assert note == ("Pools on disk for l = 10, the binary task, seed 0 onward, each dataset "
                    "at its default splits: all of them for 2 of 11 datasets; not yet: "
                    "breast, heart, ionosphere, vehicle (3 of 10 splits), vote, waveform "
                    "(2 of 3 splits), wdbc, wine, wpbc." + TAIL)


def test_note_follows_the_seed(fake_cache):
    note = _disk_caption(Config(dataset="sonar", n_trees=L, seed=1), pools.warm_pools)
    # Seeds 1-10 for the small sets (sonar has 1-9), 1-3 for waveform (has 1), 1 for NSL-KDD.
    assert note.startswith("Pools on disk for l = 10, the binary task, seed 1 onward, ")
    assert "all of them for 0 of 11 datasets" in note
    assert "sonar (9 of 10 splits)" in note and "vehicle (2 of 10 splits)" in note
    assert "waveform (1 of 3 splits)" in note and note.endswith("nsl_kdd." + TAIL)


def test_multiclass_note_lists_only_datasets_with_more_than_two_classes(fake_cache):
    note = _disk_caption(Config(dataset="vehicle", task="multiclass", n_trees=L, seed=0),
                         pools.warm_pools)
    assert note == ("Pools on disk for l = 10, the multi-class task, seed 0 onward, each "
                    "dataset at its default splits: all of them for 1 of 5 datasets; not "
                    "yet: heart, vehicle, waveform, nsl_kdd." + TAIL + " The other 6 have "
                    "two classes: their multi-class task is the binary one.")
    for binary_only in ("sonar", "breast", "ionosphere", "vote", "wdbc", "wpbc"):
        assert binary_only not in note


def test_an_upload_counts_the_shipped_datasets_binary_task(fake_cache):
    note = _disk_caption(Config(dataset="your data", task="auto", n_trees=L, seed=0),
                         pools.warm_pools)
    assert note.startswith("Pools on disk for l = 10, the binary task, seed 0 onward, ")


def test_sidebar_shows_the_note(fake_cache):
    # The Your-data page without a file trains nothing: only the sidebar and a hint.
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params.update({"dataset": "waveform", "task": "multiclass", "l": str(L)})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    (note,) = [c.value for c in at.sidebar.caption if c.value.startswith("Pools on disk")]
    assert note.startswith("Pools on disk for l = 10, the multi-class task, seed 0 onward")
    assert "all of them for 1 of 5 datasets; not yet: heart, vehicle, waveform, nsl_kdd." \
        in note
