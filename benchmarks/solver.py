"""Solver benchmark: ``sdwec.solve`` against the literal transcription of Algorithm 1.

Both run on real pools' vote matrices, in the same process, one after the other, with k = 25.
The literal transcription (``harness/literal.py``, row-scaled S since a dense m x m S does not fit
in memory at m = 100,778) is the baseline of every ratio.  "fast (H, y)" includes the row
compression; "fast (table)" is a solve on votes compressed beforehand (``compress``, or a pool's
``votes("val")``), as the dashboard does.
"""

import numpy as np

from harness.common import best_of, table
from harness.literal import literal_sdwec
from sdwec import compress, datasets, paper, solve
from sdwec.pool import load_pool, prediction_matrix
from sdwec.solver import PRESETS

PARAMS = PRESETS["SDWEC-B"]

# The paper's Table 5 (seconds on their machine): dataset -> (training rows m, seconds per l).
PAPER_TABLE5, SIZES = paper.TABLE5, paper.TABLE5_L


def train_votes(name, n_trees, progress=None):
    """Votes of a pool's trees on its training split (the m of the paper's Table 5), and labels."""
    pool = load_pool(name, "binary", n_trees=n_trees, seed=0, n_jobs=-1, progress=progress)
    return prediction_matrix(pool.estimators, pool.X_train, pool.classes).astype(np.int8), pool


def compare(H, y, repeats=3):
    """Time literal vs fast on one matrix; returns a dict of figures."""
    t_lit, w_lit = best_of(lambda: literal_sdwec(H, y, **PARAMS, iterations=25, dense=False),
                           repeats=1 if H.size > 5e7 else repeats)
    t_fast, sol = best_of(lambda: solve(H, y, **PARAMS, threshold="none"), repeats)
    t_comp, tab = best_of(lambda: compress(H, y), repeats)
    t_tab, _ = best_of(lambda: solve(tab, None, **PARAMS, threshold="none"), repeats)
    return {"m": H.shape[0], "l": H.shape[1], "unique": len(tab.counts), "literal": t_lit,
            "fast": t_fast, "compress": t_comp, "table": t_tab,
            "diff": float(np.abs(sol.raw_weights - w_lit).max())}


def _row(label, r, paper=None):
    return [label, r["m"], r["l"], r["unique"], f"{r['literal']:.3f}", f"{r['fast']:.3f}",
            f"{r['literal'] / r['fast']:.0f}x", f"{r['table'] * 1000:.1f} ms",
            f"{r['literal'] / r['table']:.0f}x", f"{r['diff']:.1e}",
            "" if paper is None else f"{paper:.2f}"]


HEADER = ["case", "m", "l", "unique rows", "literal s", "fast (H, y) s", "speed-up",
          "fast (table)", "speed-up (table)", "max |Δw|", "paper s (their machine)"]


def run(quick=False, log=print):
    """Run the benchmark; return its Markdown section."""
    rows, notes = [], []
    big = 200 if quick else 1000
    H, pool = train_votes("nsl_kdd", big)
    y_train = pool.y_train
    for l in ((200,) if quick else (200, 1000)):
        r = compare(np.ascontiguousarray(H[:, :l]), y_train)
        log(f"nsl_kdd train m={r['m']} l={l}: literal {r['literal']:.2f}s fast {r['fast']:.3f}s "
            f"table {r['table']:.3f}s diff {r['diff']:.1e}")
        rows.append(_row("NSL-KDD training split", r, PAPER_TABLE5["nsl_kdd"][1][SIZES.index(l)]))
    val = prediction_matrix(pool.estimators[:200], pool.X_val, pool.classes).astype(np.int8)
    r = compare(val, pool.y_val)
    rows.append(_row("NSL-KDD validation split", r))
    log(f"nsl_kdd val: {r}")
    grid = [] if quick else [n for n in datasets.names() if n != "nsl_kdd"]
    for name in grid:
        Hn, pn = train_votes(name, 1000)
        for l in SIZES:
            r = compare(np.ascontiguousarray(Hn[:, :l]), pn.y_train)
            rows.append(_row(f"{name} (Table 5 grid)", r, PAPER_TABLE5[name][1][SIZES.index(l)]))
        log(f"{name}: done")
    notes.append("Targets: NSL-KDD m = 100,778, l = 200: at least 30x faster than the literal "
                 "transcription and under 0.3 s; l = 1000 under 3 s; identical weights.")
    return "## Solver\n\n" + __doc__.strip() + "\n\n" + table(HEADER, rows) + "\n\n" + "\n".join(notes) + "\n"


def upload_case(old_ref="main", m=120_000, l=200, seed=0, repeats=2, log=print):
    """The first solve of a large upload: ``m`` x ``l`` random votes, nearly all
    rows distinct, solved by this checkout's solver and by ``old_ref``'s
    (``git show old_ref:sdwec/solver.py`` imported under another name), alternately in one
    process; returns a Markdown table with the best times and the largest weight difference."""
    import importlib.util
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    from harness.common import load_average

    source = subprocess.run(["git", "show", f"{old_ref}:sdwec/solver.py"], check=True,
                            capture_output=True, text=True).stdout
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "old_solver.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location("old_solver", path)
        old = importlib.util.module_from_spec(spec)
        sys.modules["old_solver"] = old   # its dataclasses look their module up there
        spec.loader.exec_module(old)
    rng = np.random.default_rng(seed)
    y = rng.choice([-1, 1], m)
    H = np.where(rng.random((m, l)) < rng.uniform(0.55, 0.8, l), y[:, None], -y[:, None])
    votes = compress(H.astype(np.int8), y)
    log(f"{len(votes.counts):,} distinct rows of {m:,}; load {load_average()}")
    times = {"old": [], "new": []}
    weights = {}
    for _ in range(repeats):
        for name, module in (("old", old), ("new", None)):
            fn = solve if module is None else module.solve
            seconds, sol = best_of(lambda: fn(votes, None, **PRESETS["SDWEC-A"]), 1)
            times[name].append(seconds)
            weights[name] = sol.raw_weights
    diff = float(np.abs(weights["old"] - weights["new"]).max())
    log(f"load after: {load_average()}")
    return table(["solver", "m", "l", "distinct rows", "best s", "max |Δw|"],
                 [[f"{old_ref} (before)", m, l, len(votes.counts), f"{min(times['old']):.2f}", ""],
                  ["this checkout", m, l, len(votes.counts), f"{min(times['new']):.2f}",
                   f"{diff:.1e}"]])


if __name__ == "__main__":
    import sys

    if "--upload" in sys.argv:
        print(upload_case())
    else:
        print(run(quick="--quick" in sys.argv))
