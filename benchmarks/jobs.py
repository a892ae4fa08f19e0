"""Other sessions while one trains a pool: a λ move's time, idle and beside a training.

Issue 22 (item 4) asks that a λ move in one session take no more than twice its idle time
while another session trains a pool.  One real server (``streamlit run app.py`` on loopback,
a fresh disk cache) and two websocket sessions (:mod:`benchmarks.wsclient`):

* **B** opens the Explorer on sonar (l = 200, its pool already on disk) and moves the λ
  slider through every value of the grid: each move is a new solve and new figures, timed
  from the ``rerun_script`` message to ``script_finished``.
* **A** opens the Explorer on waveform with l = 500 (about a minute of training), whose pool
  is not on disk, and B's moves are timed while it trains.

Phases: B alone (*idle*), B beside A training in a worker process (the dashboard's default:
:mod:`dashboard.jobs`), B alone again; then a second server with
``SDWEC_OFF_PAGE_SECONDS=inf`` (training in the page's own script thread, as before issue
22): B alone, B beside A training in the page.  Each phase uses another seed for both pools,
so no solve and no training is answered by a cache.  After the worker phase A's tab is
closed and the time until the worker process is gone is reported (the reaper's timeout is
:data:`dashboard.jobs.INTEREST_TIMEOUT_SECONDS`).

Run: ``python -m benchmarks.jobs --out results/jobs.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import tempfile
import time
from pathlib import Path

from benchmarks.common import machine, median, percentile, table
from benchmarks.load import Server, ensure_pools
from benchmarks.wsclient import Session as Client

LAM = "λ (data fidelity, log scale)"
B_DATASET, B_TREES = "sonar", 200
A_DATASET, A_TREES = "waveform", 500


def _gone(pid):
    import psutil

    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def _moves(client, seed, log):
    """Open the Explorer on B's pool of ``seed`` and time a move to every other λ."""
    first = await client.open(f"dataset={B_DATASET}&l={B_TREES}&seed={seed}")
    if first.problems:
        raise RuntimeError(f"B's page failed: {first.problems}")
    options = client.widgets[LAM].options
    start = dict(p.split("=") for p in client.query.split("&")).get("lam")
    times = []
    for value in options:
        if start is not None and float(value) == float(start):
            continue
        run = await client.set(LAM, value)
        if run.problems or run.charts < 2:
            raise RuntimeError(f"B's λ move to {value} failed: {run.problems}")
        times.append(run.seconds)
    log(f"    B: {len(times)} λ moves, median {median(times) * 1e3:.0f} ms")
    return times


async def _training_phase(url, seed, a_seed, offpage, log):
    """B's moves while A trains waveform's pool of ``a_seed``; returns the phase's figures."""
    from sdwec import pool

    key = pool.PoolKey.for_dataset(A_DATASET, "binary", A_TREES, a_seed)
    a, b = Client(url, timeout=600), Client(url, timeout=120)
    await b.open(f"dataset={B_DATASET}&l={B_TREES}&seed={seed}")  # B's pool in memory first
    opened = asyncio.create_task(a.open(f"dataset={A_DATASET}&l={A_TREES}&seed={a_seed}"))
    deadline = time.monotonic() + 120
    while pool.training_progress(key) is None:
        if time.monotonic() > deadline:
            raise RuntimeError("A's training did not start within 120 s")
        await asyncio.sleep(0.2)
    trainer = pool.training_progress(key).pid
    loads = [os.getloadavg()[0]]
    times = await _moves(b, seed, log)
    loads.append(os.getloadavg()[0])
    record = pool.training_progress(key)
    overlap = record is not None and not pool.is_cached(key)
    figures = {"times": times, "overlap": overlap, "trainer": trainer,
               "progress": record.message if record else "finished", "loads": loads}
    if offpage:
        run = await opened  # the page ended its run at once, showing progress and Cancel
        figures["cancel_button"] = "Cancel training" in run.widgets
        figures["a_run_seconds"] = run.seconds
        await a.close()
        closed = time.monotonic()
        while not _gone(trainer) and time.monotonic() - closed < 180:
            await asyncio.sleep(0.5)
        figures["stopped_after_close"] = (time.monotonic() - closed if _gone(trainer)
                                          else float("nan"))
        figures["cached_after_stop"] = pool.is_cached(key)
    else:
        opened.cancel()
        await a.close()
    await b.close()
    return figures


async def _idle_phase(url, seed, log):
    async with Client(url, timeout=120) as b:
        return {"times": await _moves(b, seed, log), "loads": [os.getloadavg()[0]]}


def _server_phases(cache, env, plan, log):
    results = {}
    with Server(cache_dir=cache, env=env) as server:
        for name, seed, a_seed in plan:
            log(f"  phase {name}")
            if a_seed is None:
                results[name] = asyncio.run(_idle_phase(server.url, seed, log))
            else:
                results[name] = asyncio.run(_training_phase(
                    server.url, seed, a_seed, env.get("SDWEC_OFF_PAGE_SECONDS") != "inf", log))
    return results


def run(log=print):
    from dashboard import jobs
    from sdwec import pool

    cache = Path(tempfile.mkdtemp(prefix="sdwec-jobs-bench-"))
    os.environ[pool.CACHE_ENV] = str(cache)
    log(f"cache {cache}; B's pools:")
    ensure_pools([B_DATASET], B_TREES, 0, cache, log)
    for seed in range(1, 5):
        ensure_pools([B_DATASET], B_TREES, seed, cache, log)
    started = time.monotonic()
    log("server 1 (training in a worker process, the default)")
    results = _server_phases(cache, {}, [("idle", 0, None), ("worker", 1, 101),
                                         ("idle again", 2, None)], log)
    log("server 2 (SDWEC_OFF_PAGE_SECONDS=inf: training in the page, as before)")
    results.update({f"{k} (in-page server)": v for k, v in _server_phases(
        cache, {"SDWEC_OFF_PAGE_SECONDS": "inf"},
        [("idle", 3, None), ("in-page", 4, 102)], log).items()})
    wall = time.monotonic() - started
    return report(results, jobs.INTEREST_TIMEOUT_SECONDS, wall)


def report(results, timeout, wall):
    idle1 = results["idle"]["times"] + results["idle again"]["times"]
    idle2 = results["idle (in-page server)"]["times"]
    worker, inpage = results["worker"], results["in-page (in-page server)"]
    ms = lambda v: f"{v * 1e3:.0f}"  # noqa: E731

    def row(name, times, idle, phase):
        return [name, len(times), ms(median(times)), ms(percentile(times, 90)),
                f"{median(times) / median(idle):.2f}" if idle is not None else "1 (baseline)",
                " → ".join(f"{x:.1f}" for x in phase["loads"])]

    rows = [row("B alone (server 1, before and after)", idle1, None, results["idle"]),
            row("B while A trains in a worker process", worker["times"], idle1, worker),
            row("B alone (server 2)", idle2, None, results["idle (in-page server)"]),
            row("B while A trains in its page (as before)", inpage["times"], idle2, inpage)]
    ratio = median(worker["times"]) / median(idle1)
    lines = [
        "# Other sessions while a pool trains (issue 22, item 4)",
        "",
        f"Machine: {machine()}. Run: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, "
        f"`python -m benchmarks.jobs --out results/jobs.md`, {wall:.0f} s of wall time.",
        "",
        f"Session B moves the λ slider of the Explorer on {B_DATASET} (l = {B_TREES}) through "
        f"the whole grid (every move a new solve); session A opens {A_DATASET} with l = "
        f"{A_TREES}, whose pool is not trained. Times from the websocket (rerun request to "
        "script finished), medians and 90th percentiles in ms; ratio = median ÷ the idle "
        "median on the same server. Load average (1 min) at the start and end of the phase "
        "(other agents share this machine).",
        "",
        table(["phase", "moves", "median ms", "p90 ms", "÷ idle", "load"], rows),
        "",
        f"- **Target (≤ 2× idle) with training in a worker process: "
        f"{'met' if ratio <= 2 else 'NOT met'}**, {ratio:.2f}×. A's training was still "
        f"running when B's last move finished: {'yes' if worker['overlap'] else 'no'} "
        f"({worker['progress']}); in the page-training phase: "
        f"{'yes' if inpage['overlap'] else 'no'} ({inpage['progress']}).",
        f"- A's page ended its run in {worker['a_run_seconds']:.1f} s showing the progress and "
        f"a Cancel button: {'yes' if worker['cancel_button'] else 'no'}.",
        f"- After A's tab closed, the worker (pid {worker['trainer']}) was gone after "
        f"{worker['stopped_after_close']:.0f} s (interest timeout {timeout:.0f} s, reaper every "
        f"5 s); its pool was {'stored anyway (it finished first)' if worker['cached_after_stop'] else 'not stored'}.",
    ]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.jobs", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=None, help="write the Markdown report here")
    args = parser.parse_args(argv)
    text = run()
    print(text)
    if args.out:
        Path(args.out).write_text(text)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
