"""Pool benchmark: the NSL-KDD 200-tree pool cold (train + predict) and warm (disk cache).

Cold runs in a fresh, empty cache folder; warm reads the entry the cold run wrote, in the same
process.  The ratio is cold / warm.
"""

import os
import tempfile
import time

from benchmarks.common import table
from sdwec.pool import load_pool


def run(quick=False, log=print):
    name, trees = ("wine", 200) if quick else ("nsl_kdd", 200)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        old = os.environ.get("SDWEC_CACHE_DIR")
        os.environ["SDWEC_CACHE_DIR"] = folder
        try:
            start = time.perf_counter()
            pool = load_pool(name, "binary", n_trees=trees, seed=0, n_jobs=-1)
            cold = time.perf_counter() - start
            warm = min(_timed(lambda: load_pool(name, "binary", n_trees=trees, seed=0))
                       for _ in range(3))
            size = sum(f.stat().st_size for f in __import__("pathlib").Path(folder).rglob("*")
                       if f.is_file())
        finally:
            if old is None:
                os.environ.pop("SDWEC_CACHE_DIR")
            else:
                os.environ["SDWEC_CACHE_DIR"] = old
    fit = pool.meta.get("fit_seconds")
    log(f"pool {name}: cold {cold:.1f}s warm {warm:.3f}s")
    rows.append([name, trees, len(pool.y_train), f"{cold:.1f}", f"{warm:.3f}",
                 f"{cold / warm:.0f}x", f"{size / 2**20:.0f} MiB"])
    text = table(["dataset", "trees", "training rows", "cold s", "warm s", "cold / warm",
                  "cache entry"], rows)
    bound = (f"Cold time is bound by fitting {trees} full-depth CART trees on "
             f"{len(pool.y_train):,} rows x {pool.X_train.shape[1]} features on "
             f"{os.cpu_count()} cores (scikit-learn's tree builder, one tree per core at a time), "
             f"then one prediction pass per tree over the validation and test splits. "
             f"Fit seconds recorded by the pool: {fit}. Target: warm under 2 s.")
    return "## Pool\n\n" + __doc__.strip() + "\n\n" + text + "\n\n" + bound + "\n"


def _timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


if __name__ == "__main__":
    import sys

    print(run(quick="--quick" in sys.argv))
