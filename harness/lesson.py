"""A class dragging sliders: ``scripts/serve.sh --replicas 2`` under students, checkouts in turn.

For each checkout given (``--app-dir``, repeatable: an older commit beside this one measures
before and after in one run), one phase: that checkout's ``scripts/serve.sh --replicas 2``
on loopback, then *students* sessions for ``--minutes`` after a warm-up:

* most are websocket clients (:mod:`harness.load`, their cookies from a page load, as a
  browser's): each moves a sidebar slider one step, waits for the page, reads it a few
  seconds, and moves again: the server's side of a student who releases a slider;
* ``--browsers`` are real Chromium pages (:mod:`harness.browser`'s tab) dragging λ, β, γ or
  ε a few grid steps at a time, as a hand does, releasing, and reading for a few seconds.
  Each step's time runs from the input event to the paint after the last change it made to
  the page (the headline and the charts in the window); a step whose setting's answer the
  page had in hand is *within the computed grids*, else it waits for the server.  A release
  is timed the same way (an older checkout draws only then).

Per phase: the steps' times (p50/p95), how many were drawn without the server, the
replicas' CPU seconds over the measured minutes, per student-minute, and errors.

    python -m benchmarks.lesson --app-dir /path/to/older/checkout --app-dir . --out results/lesson.md
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from harness import browser as pages
from harness import load
from harness.common import healthy, load_average, machine, percentile, table

#: Sliders the Chromium students drag (URL key -> widget key) and how many steps at a time.
SLIDERS = pages.SLIDERS
STEPS = (1, 4)
THINK = (2.0, 5.0)


class ServedCheckout:
    """``bash <checkout>/scripts/serve.sh --replicas N`` on loopback, stopped on exit."""

    def __init__(self, root, replicas, cache_dir, timeout=300.0, env=()):
        self.root, self.replicas = Path(root), int(replicas)
        self.cache_dir = Path(cache_dir)
        self.run_dir = Path(tempfile.mkdtemp(prefix="sdwec-lesson-"))
        self.port = load.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = dict(os.environ, SDWEC_PYTHON=sys.executable,
                        SDWEC_CACHE_DIR=str(self.cache_dir), **dict(env))
        self.timeout = timeout
        self.out = self.run_dir.parent / f"{self.run_dir.name}.out"
        self.proc = None

    def __enter__(self):
        cmd = ["bash", str(self.root / "scripts" / "serve.sh"), "--replicas",
               str(self.replicas), "--port", str(self.port), "--listen", "127.0.0.1",
               "--run-dir", str(self.run_dir)]
        with open(self.out, "wb") as out:
            self.proc = subprocess.Popen(cmd, cwd=self.root, env=self.env, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + self.timeout
        while "Stop with" not in self.out.read_text(errors="replace"):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.__exit__()
                raise RuntimeError(f"serve.sh did not start:\n{self.out.read_text()[-2000:]}")
            time.sleep(0.3)
        return self

    def __exit__(self, *exc):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)

    def replicas_cpu(self):
        """CPU seconds of the replicas (and what they started) so far."""
        import psutil

        total = 0.0
        for path in self.run_dir.glob("replica-*.pid"):
            with contextlib.suppress(OSError, ValueError, IndexError, psutil.Error):
                proc = psutil.Process(int(path.read_text().split()[0]))
                t = proc.cpu_times()
                total += t.user + t.system + t.children_user + t.children_system
        return total

    # harness.load's run_load asks these of a target it does not start.
    def rss(self):
        return 0

    def connections(self):
        return 0

    def healthy(self):
        return healthy(self.url)

    def log(self):
        return "\n".join(p.read_text(errors="replace") for p in self.run_dir.glob("*.log"))


def _student(tab, rng, until, dataset, n_trees, out, log):
    """One Chromium student: drags, releases and reads until ``until``."""
    tab.open("", {"dataset": dataset, "l": n_trees}, ahead=False)
    page = tab.page
    while time.monotonic() < until:
        param = rng.choice(list(SLIDERS))
        key = SLIDERS[param]
        tab.slider(key).scroll_into_view_if_needed()
        x, y, _, width, low, high, value = tab.thumb_and_track(key)
        stride = width / max(high - low, 1)
        moves = rng.randint(*STEPS)
        direction = 1 if value + moves <= high and (value - moves < low or rng.random() < 0.5) \
            else -1
        page.mouse.move(x, y)
        page.mouse.down()
        for i in range(1, moves + 1):
            step = tab.step(lambda i=i: page.mouse.move(x + direction * i * stride, y))
            ahead = page.evaluate("() => { const rt = window.__sdwecLive; return !!rt && "
                                  "rt.key !== null && (rt.key === rt.released || "
                                  "rt.answer(rt.family, rt.key) !== undefined); }")
            out.append(dict(step, input="drag", param=param, ahead=ahead))
        step = tab.step(lambda: page.mouse.up())
        out.append(dict(step, input="release", param=param, ahead=False))
        with contextlib.suppress(Exception):
            tab.ready(timeout=120, ahead=False)
        page.wait_for_timeout(1e3 * rng.uniform(*THINK))


def run_phase(root, label, students, browsers, minutes, dataset, n_trees, cache_dir, log,
              env=()):
    """One checkout's phase: a dict of its figures."""
    from playwright.sync_api import sync_playwright

    steps = []
    ws = students - browsers
    settings = load.Settings(sessions=ws, duration=60 * minutes, warmup=30,
                             datasets=(dataset,), n_trees=n_trees, cache_dir=str(cache_dir),
                             page_cookies=True, think=THINK)
    with ServedCheckout(root, 2, cache_dir, env=env) as served:
        log(f"{label}: serve.sh up at {served.url}")
        result = {}
        driver = threading.Thread(
            target=lambda: result.update(outcome=load.run_load(settings, log=log,
                                                               server=served)))
        driver.start()
        time.sleep(settings.warmup)
        cpu0, t0 = served.replicas_cpu(), time.monotonic()
        until = t0 + 60 * minutes
        with sync_playwright() as play:
            chromium = play.chromium.launch(executable_path=shutil.which("chromium"),
                                            args=load.LAUNCH_ARGS)
            tabs = [pages.Tab(chromium, f"student {i}", served.url) for i in range(browsers)]
            rng = random.Random(0)
            # One page at a time in this thread (Playwright's sync API), each student in turn.
            index = 0
            while time.monotonic() < until:
                tab = tabs[index % browsers]
                try:
                    _student(tab, rng, min(until, time.monotonic() + 20), dataset, n_trees,
                             steps, log)
                except Exception as exc:  # noqa: BLE001 - counted, the class goes on
                    steps.append({"ms": None, "changes": 0, "input": "error",
                                  "error": f"{type(exc).__name__}: {str(exc)[:200]}"})
                index += 1
            chromium.close()
        cpu, seconds = served.replicas_cpu() - cpu0, time.monotonic() - t0
        driver.join()
    outcome = result.get("outcome")
    return {"label": label, "steps": steps, "cpu": cpu, "seconds": seconds,
            "students": students, "ws_actions": [] if outcome is None else [
                a for a in outcome.actions if a.phase == "load"]}


def report(phases, command):
    out = [f"# A class dragging sliders\n\nRun: "
           f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, `{command}`; machine: "
           f"{machine()}; load average at the end {load_average()}.\n",
           "Each phase: `scripts/serve.sh --replicas 2` of one checkout, its students (websocket "
           "clients moving a slider one step, reading a few seconds, moving again; and Chromium "
           "pages dragging λ, β, γ or ε a few steps, releasing, reading). Times in ms, input "
           "to the paint after the page's last change (the headline and the charts in the "
           "window). **drawn in the page**: drag steps whose setting's answer the page had; "
           "**CPU**: the replicas' seconds over the measured minutes.\n"]
    rows = []
    for p in phases:
        drags = [s for s in p["steps"] if s.get("input") == "drag"]
        drawn = [s["ms"] for s in drags if s["ms"] is not None and s.get("ahead")]
        released = [s for s in p["steps"] if s.get("input") == "release"]
        releases = [s["ms"] for s in released if s["ms"] is not None]
        ws = [a.seconds * 1e3 for a in p["ws_actions"] if a.error is None and a.seconds]
        errors = sum(1 for s in p["steps"] if s.get("input") == "error") + sum(
            1 for a in p["ws_actions"] if a.error is not None)
        student_minutes = p["students"] * p["seconds"] / 60

        def cell(values):
            return "—" if not values else (f"{statistics.median(values):.0f} / "
                                           f"{percentile(values, 95):.0f}")

        redrawn = f"{cell(releases)} ({len(releases)} of {len(released)} redrew)"
        rows.append([p["label"], f"{len(drawn)} of {len(drags)}", cell(drawn), redrawn,
                     cell(ws), f"{p['cpu']:.0f}", f"{p['cpu'] / student_minutes:.2f}",
                     str(errors)])
    out.append(table(["checkout", "drag steps drawn in the page", "those: p50 / p95",
                      "release → drawn: p50 / p95", "websocket moves: p50 / p95",
                      "replicas' CPU (s)", "CPU s per student-minute", "errors"], rows))
    return "\n".join(out) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.lesson", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--app-dir", action="append", default=None)
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--browsers", type=int, default=3)
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--dataset", default="sonar")
    parser.add_argument("--trees", type=int, default=200)
    parser.add_argument("--out", default="results/lesson.md")
    parser.add_argument("--without-ahead", action="store_true",
                        help="one more phase of the last checkout with SDWEC_AHEAD=0 (nothing "
                             "computed ahead): what the background thread's CPU is")
    args = parser.parse_args(argv)
    seen = {}
    apps = [(pages._label(d, seen), Path(d).resolve(), ())
            for d in (args.app_dir or [load.ROOT])]
    if args.without_ahead:
        label, root, _ = apps[-1]
        apps.append((f"{label}, nothing ahead", root, (("SDWEC_AHEAD", "0"),)))
    cache = Path(os.environ.get("SDWEC_CACHE_DIR") or tempfile.mkdtemp(prefix="sdwec-class-"))
    phases = [run_phase(root, label, args.students, args.browsers, args.minutes, args.dataset,
                        args.trees, cache, print, env) for label, root, env in apps]
    command = " ".join(["python -m benchmarks.lesson", *(sys.argv[1:] if argv is None else argv)])
    text = report(phases, command)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)
    return 0
