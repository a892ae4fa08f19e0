"""The upload benchmarks' synthetic data and memory sampler, shared by benchmarks/upload.py
and harness/classroom.py.

The CSV: 10 standard normal features written with 4 decimals and a label that depends on
four of them through a product and a sine, with noise (about 78 bytes a row: 1.2M rows are
89 MiB); trees on it grow deep, the slow end of the training estimate.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

N_FEATURES = 10
DATA_DIR = Path(tempfile.gettempdir()) / "sdwec-upload-bench"
WHOLE_NUMBERS_FROM = 2_000_000
HOSTILE_LINES = 24_900_000


def synthetic(n_rows, n_features=N_FEATURES, seed=0):
    """Features and ±1 labels of the benchmark's data (see the module docstring)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features)).round(4)
    signal = X[:, 0] + X[:, 1] * X[:, 2] + 0.5 * np.sin(3 * X[:, 3])
    y = np.where(signal + rng.normal(scale=0.5, size=n_rows) > 0, 1, -1)
    return X, y


def synthetic_csv(n_rows, seed=0) -> Path:
    """The benchmark's CSV of ``n_rows`` rows, written once into a temporary folder.

    From :data:`WHOLE_NUMBERS_FROM` rows on, the features are written as whole numbers
    (about 22 bytes a row), so that the file stays under the 200 MiB upload limit and what
    is measured is the row limit, not the byte limit. ``"hostile"``: a 199 MB
    file of 24.9 million lines ``1.0,0.0``.
    """
    path = DATA_DIR / f"synthetic-{n_rows}-s{seed}.csv"
    if not path.exists():
        import pandas as pd

        DATA_DIR.mkdir(exist_ok=True)
        partial = path.with_suffix(".part")
        if n_rows == "hostile":
            partial.write_bytes(b"1.0,0.0\n" * HOSTILE_LINES)
        else:
            X, y = synthetic(n_rows, seed=seed)
            table_ = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
            table_["label"] = y
            whole = n_rows >= WHOLE_NUMBERS_FROM
            table_.to_csv(partial, index=False, float_format="%.0f" if whole else "%.4f")
        partial.rename(path)
    return path


class SessionPeak:
    """The largest sum, sampled every ``interval`` seconds, of this process's RSS and its
    children's (the training worker): what one session's upload holds at once.  The two
    processes' own peaks need not coincide, so their sum is only an upper bound."""

    def __init__(self, interval=0.05):
        import threading

        import psutil

        self._me, self.interval, self.peak = psutil.Process(), interval, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _total(self):
        import psutil

        total = self._me.memory_info().rss
        for child in self._me.children(recursive=True):
            try:
                total += child.memory_info().rss
            except psutil.Error:  # ended between the listing and the reading
                pass
        return total

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self._total())
            self._stop.wait(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
