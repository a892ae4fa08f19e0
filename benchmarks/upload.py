"""Upload benchmark: a CSV of N rows x 10 features, from its bytes to the first
Explorer chart, by size, and what the row budget per tree costs in accuracy.

Usage::

    nice python -m benchmarks.upload                       # 100k, 1.2M and 5M rows
    nice python -m benchmarks.upload --sizes hostile       # 24.9M lines of "1.0,0.0"
    nice python -m benchmarks.upload --sizes 100000 --stages
    nice python -m benchmarks.upload --accuracy            # budget vs full bootstraps

Each size runs in a fresh child process with an empty pool cache, so its peak RSS
(``ru_maxrss``) is the upload's own; the baseline (the app started, before the upload) is
subtracted. ``page`` drives the real page through Streamlit's AppTest: the file is handed to
the uploader and the script runs, with the default choices (l = 200, the default row
budget), until the Explorer's first chart exists; the time is from the upload to the end of
the run that draws it (when the default's estimate passes the minute, the page asks for a
click; the benchmark clicks, and says so). A long training runs in a worker process whose
progress the page's fragment polls every second; AppTest runs no timers, so the benchmark
polls the job as the fragment does and reruns the page when it has finished, and reports
the worker's own peak RSS beside the page's. ``--stages`` times the same path through the library
(preview, parse, the rate probe, the pool, the first solve) to say where the time goes.
The machine is shared with other agents: the load average is printed beside every run.

The CSV: 10 standard normal features written with 4 decimals and a label that depends on
four of them through a product and a sine, with noise (about 78 bytes a row: 1.2M rows are
89 MiB); trees on it grow deep, the slow end of the estimate.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from harness.common import load_average, machine, table
from harness.upload_data import HOSTILE_LINES, SessionPeak, synthetic_csv

ROOT = Path(__file__).resolve().parent.parent
SIZES = (100_000, 1_200_000, 5_000_000)
#: Longest wait for a worker's pool before the benchmark gives up.
POLL_LIMIT_SECONDS = 1800


def _rss_now():
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmRSS"))


def _peak_rss(who=resource.RUSAGE_SELF):
    """Peak RSS in bytes of this process (or of its largest finished child)."""
    return resource.getrusage(who).ru_maxrss * 1024


def _wait_like_the_fragment(deadline):
    """Every ``JOB_POLL_SECONDS``, what the page's progress fragment does: refresh the
    sessions' interest in the running jobs; return once none is running (or at
    ``deadline``, a ``time.perf_counter()``)."""
    from dashboard import training

    registry = training.pool_jobs()
    while True:
        time.sleep(training.JOB_POLL_SECONDS)
        running = [job for job in list(registry._jobs.values()) if job.state == "running"]
        if not running or time.perf_counter() > deadline:
            return
        for job in running:
            for session in list(job.sessions):
                registry.touch(session)


def _page_budget(at):
    """The row budget per tree the page proposed ("full" when it proposed none)."""
    import re

    for m in at.markdown:
        found = re.search(r"row budget of ([\d,]+) rows", m.value)
        if found:
            return found.group(1)
    return "full"


def _child_page(path):
    """The page through AppTest: seconds from the upload to the first chart, and RSS."""
    from streamlit.testing.v1 import AppTest

    from harness.apptest_charts import chart_figures

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=3600)
    at.query_params.update({"dataset": "wine"})
    at.run()
    at.switch_page("pages/your_data.py").run()
    data = Path(path).read_bytes()
    baseline = _rss_now()
    session = SessionPeak().__enter__()
    start = time.perf_counter()
    at.file_uploader(key="upload_file").upload(Path(path).name, data, "text/csv").run()
    asked = time.perf_counter() - start
    clicked = [b for b in at.button if b.key == "upload_train"]
    if clicked:   # the default's estimate passed the minute: accept it, as a user would
        clicked[0].click().run()
    # A long training runs in a worker process (dashboard/jobs.py); in the browser the page's
    # progress fragment checks it every second and reruns the page once it has finished.
    # AppTest runs no fragments on a timer, so do what the fragment does: every second,
    # refresh this session's interest and look at the job; rerun the page when it is over.
    # (Rerunning the whole page every second instead would compete with the worker for the
    # two cores, which the browser's fragment does not.)
    off_page = any(b.key == "_cancel_training" for b in at.button)
    reruns = 0
    while not chart_figures(at) and any(b.key == "_cancel_training" for b in at.button) \
            and time.perf_counter() - start < POLL_LIMIT_SECONDS:
        _wait_like_the_fragment(start + POLL_LIMIT_SECONDS)
        at.run()
        reruns += 1
    seconds = time.perf_counter() - start
    session.__exit__()
    errors = ([e.value for e in at.error] + [str(e.value) for e in at.exception]
              + [f"warning: {w.value}" for w in at.warning])
    plan = at.session_state["upload_choice"] if "upload_choice" in at.session_state else None
    return {"seconds": seconds, "to the plan": asked, "clicked": bool(clicked),
            "off page": off_page, "reruns": reruns,
            "charts": len(chart_figures(at)), "errors": errors,
            "baseline": baseline, "peak": _peak_rss(), "choice": plan,
            "worker peak": _peak_rss(resource.RUSAGE_CHILDREN),
            "session peak": session.peak,
            "markdown": [m.value for m in at.markdown if "trees" in m.value][:2],
            "budget": _page_budget(at)}


def _child_stages(path):
    """The same path through the library, stage by stage."""
    from sdwec import budget, comparison, datasets, pool
    from sdwec.errors import DataError

    baseline = _rss_now()
    times = {}

    def timed(name, fn):
        start = time.perf_counter()
        out = fn()
        times[name] = time.perf_counter() - start
        return out

    data = timed("read", lambda: Path(path).read_bytes())
    try:
        timed("preview", lambda data=data: datasets.inspect_csv(data))
    except DataError as refused:
        return {"times": times, "refused": str(refused), "baseline": baseline,
                "peak": _peak_rss()}
    ds = timed("parse", lambda data=data: datasets.from_csv(data, name=Path(path).name))
    del data
    rate = timed("rate probe", lambda: budget.measure_rate(ds.X, ds.y))
    n, d = ds.X.shape
    m = budget.row_budget(n, d, 200, rate=rate)
    estimate = budget.estimate_pool(n, d, 200, m, rate=rate)
    key = pool.PoolKey.for_dataset(ds, n_trees=200, max_samples=m)
    trained = timed("pool", lambda: pool.load_pool(key, dataset=ds))
    # What the page does once the worker has stored the pool: read it from the disk cache.
    trained = timed("pool read back", lambda: pool.load_pool(key, dataset=ds))
    timed("first solve", lambda: comparison.compare(trained))
    return {"times": times, "max_samples": m, "estimate_seconds": estimate.seconds,
            "estimate_peak": estimate.peak_bytes, "baseline": baseline, "peak": _peak_rss()}


def _run_child(mode, path):
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, SDWEC_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
        before = load_average()
        out = subprocess.run([sys.executable, "-m", "benchmarks.upload", "--child", mode,
                              str(path)], env=env, cwd=ROOT, capture_output=True, text=True)
        after = load_average()
    if out.returncode != 0:
        return {"failed": out.stderr[-2000:], "load": (before, after)}
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["load"] = (before, after)
    return result


def _mib(n_bytes):
    return f"{n_bytes / 2**20:,.0f}"


def sizes_report(sizes, stages):
    rows = []
    for n in sizes:
        path = synthetic_csv(n)
        label = f"{HOSTILE_LINES:,} lines (hostile)" if n == "hostile" else f"{n:,}"
        size = path.stat().st_size
        page = _run_child("page", path)
        print(json.dumps({"rows": n, "page": page}, default=str), flush=True)
        if "failed" in page:
            rows.append([label, _mib(size), "", "failed", "", "", "", "", page["failed"][-200:],
                         ""])
            continue
        outcome = (f"{page['charts']} charts" if page["charts"] else
                   "; ".join(page["errors"]) or "no chart")
        rows.append([label, _mib(size), page["budget"] if page["charts"] else "–",
                     f"{page['seconds']:.1f}"
                     + (" (clicked *Train now*)" if page["clicked"] else ""),
                     _mib(page["peak"] - page["baseline"]), _mib(page["peak"]),
                     _mib(page["worker peak"]) if page.get("off page") else "",
                     _mib(page["session peak"] - page["baseline"]),
                     outcome,
                     f"{page['load'][0]} → {page['load'][1]}"])
        if stages:
            st_ = _run_child("stages", path)
            print(json.dumps({"rows": n, "stages": st_}, default=str), flush=True)
    print(table(["rows", "file MiB", "rows per tree", "upload → first chart (s)", "peak RSS over baseline MiB",
                 "peak RSS MiB", "worker peak RSS MiB",
                 "page + worker at once, over baseline MiB (sampled)", "outcome",
                 "load average before → after"], rows))


def accuracy_report(seeds, n_trees, budgets, synthetic_rows, shipped=("nsl_kdd",)):
    """Test accuracy of SDWEC, bagging and the single tree: full bootstraps vs row budgets."""
    from sdwec import comparison, datasets, pool

    cases = [(name, None) for name in shipped]
    if synthetic_rows:
        cases.append((f"synthetic {synthetic_rows:,}",
                      datasets.from_csv(synthetic_csv(synthetic_rows, seed=1))))
    rows = []
    for name, ds in cases:
        for m in (None, *budgets):
            scores = {"SDWEC": [], "bagging": [], "single": []}
            seconds = []
            for seed in seeds:
                source = ds if ds is not None else name
                key = pool.PoolKey.for_dataset(source, "binary", n_trees, seed, max_samples=m)
                start = time.perf_counter()
                p = pool.load_pool(key, dataset=ds) if ds is not None else pool.load_pool(key)
                seconds.append(p.meta.get("fit_seconds", np.nan)
                               + p.meta.get("predict_seconds", np.nan))
                result = comparison.compare(p)
                for method in result.methods:
                    if method["method"] in scores:
                        scores[method["method"]].append(100 * method["test"])
                print(f"{name} m={m} seed={seed} {time.perf_counter() - start:.0f} s "
                      f"load {load_average()}", flush=True)
            rows.append([name, "full" if m is None else f"{m:,}",
                         *(f"{np.mean(v):.2f} ± {np.std(v, ddof=1):.2f}"
                           for v in scores.values()),
                         f"{np.mean(seconds):.0f}"])
    print(f"l = {n_trees}, splits (seeds) {list(seeds)}; test accuracy in %, mean ± sd over "
          "the splits; train s = the pool's own fit + predict seconds (mean)")
    print(table(["data", "rows per tree", "SDWEC", "bagging", "single tree", "train s"], rows))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES))
    parser.add_argument("--stages", action="store_true")
    parser.add_argument("--accuracy", action="store_true")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--trees", type=int, default=200)
    parser.add_argument("--budgets", default="5000,20000")
    parser.add_argument("--synthetic-rows", type=int, default=300_000)
    parser.add_argument("--shipped", default="nsl_kdd",
                        help="shipped datasets to compare on, comma-separated ('' for none)")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        mode, path = args.child
        result = _child_page(path) if mode == "page" else _child_stages(path)
        print(json.dumps(result, default=float))
        return
    print(machine())
    print(f"load average at start: {load_average()}")
    if args.accuracy:
        accuracy_report(range(args.seeds), args.trees,
                        [int(b) for b in args.budgets.split(",") if b], args.synthetic_rows,
                        [s for s in args.shipped.split(",") if s])
    else:
        sizes_report([s if s == "hostile" else int(s) for s in args.sizes.split(",")],
                     args.stages)


if __name__ == "__main__":
    main()
