"""Test-wide settings."""

import os

# scikit-learn's estimator checks include an array-API check that runs only when SciPy was
# imported with this set; setting it here (before any test imports SciPy) runs it instead of
# skipping it.
os.environ.setdefault("SCIPY_ARRAY_API", "1")


import pytest  # noqa: E402  (after the environment variable above, on purpose)


@pytest.fixture(scope="module")
def app_pool_dir(tmp_path_factory):
    """A pool disk cache shared by one test module's AppTest runs."""
    return tmp_path_factory.mktemp("pools")


@pytest.fixture
def fresh_streamlit(app_pool_dir, monkeypatch):
    """Streamlit's in-memory caches empty before and after a test; pools in the module's
    disk cache (modules that drive the app use it with ``usefixtures``)."""
    import streamlit as st

    from sdwec import pool

    monkeypatch.setenv(pool.CACHE_ENV, str(app_pool_dir))
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty pool disk cache for one test (its folder)."""
    from sdwec import pool

    folder = tmp_path / "cache"
    monkeypatch.setenv(pool.CACHE_ENV, str(folder))
    return folder


@pytest.fixture
def training_notes(monkeypatch):
    """``(notes, drawn)``: every sidebar cold-pool note as computed before the pools train
    (the sidebar redraws it away once they land, so AppTest's last tree cannot show it),
    and every progress text drawn, in order."""
    from dashboard import page_pools, progress

    notes, drawn = [], []
    real_note, real_draw = page_pools.cold_start_note, progress.Progress._draw

    def note(config):
        notes.append(real_note(config))
        return notes[-1]

    def draw(self, fraction, text):
        drawn.append(text)
        real_draw(self, fraction, text)

    monkeypatch.setattr(page_pools, "cold_start_note", note)
    monkeypatch.setattr(progress.Progress, "_draw", draw)
    return notes, drawn
