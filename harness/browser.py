"""What a reader feels in real Chromium: from an input on a control to the page drawn again.

One Chromium (Debian's, driven by Playwright) opens the pages of one or more checkouts of
the app (``--app-dir``, repeatable: a checkout of an older commit beside this one measures
before and after in one run), each served by its own server, one tab per checkout, used in
turn, the order alternating by dataset so that the load of the shared machine falls on each
alike.  At 1280 × 720, for each dataset (its default splits) and each checkout:

* **keys**: the Explorer's λ, β, γ and ε sliders, one arrow-key press at a time;
* **drag**: each slider's thumb dragged by the mouse, one step of the grid per move;
* **Frontier**: a λ key press (the cross at the sidebar's setting) and the x-axis switch.

A step's time runs from the input event (its ``timeStamp``) to the paint after the last
change the step made to what can be seen: the headline's numbers (Streamlit's metrics, or
the live headline) and every Plotly chart in the window (its ``plotly_afterplot``), with one
animation frame added for the paint; a step is over when nothing has changed for
:data:`QUIET_MS`.  A step that changes nothing is counted apart (an older checkout draws
nothing while a thumb is dragged: Streamlit sends a slider's value on release).  The page's
websocket frames are counted: a drag should send none before the release; after the
release, the time until the address holds the new value is measured.

Before a checkout's steps, the page waits until what it computes ahead is in (the answers
are read by the browser): the benchmark measures moves within the computed grids.

``python -m benchmarks.browser --help``; the committed report's command is in its header.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from harness.common import load_average, machine, percentile, table
from harness.load import LAUNCH_ARGS, Server

ROOT = Path(__file__).resolve().parent.parent
DATASETS = ("sonar", "vehicle", "waveform", "nsl_kdd")
VIEWPORT = {"width": 1280, "height": 720}
#: The sidebar's solver sliders: URL key -> widget key.
SLIDERS = {"lam": "cfg_lam", "beta": "cfg_beta", "gamma": "cfg_gamma", "eps": "cfg_eps"}
#: Nothing drawn for this long ends a step.
QUIET_MS = 400
#: A step that draws nothing is given up after this long.
STEP_TIMEOUT_MS = 30_000
#: Targets of the issue this benchmark was written for (the report says which are met).
TARGET_STEP_MS = 50
TARGET_FRONTIER_MS = 100
TARGET_URL_MS = 1000

# --------------------------------------------------------------------------- in the page

#: Installed before any page script: the inputs, the websocket frames sent, and each change
#: to what can be seen (a chart in the window redrawn, the headline's text), each followed by
#: the next animation frame (its paint).
INIT_JS = """
(() => {
  const b = window.__bench = {inputs: [], sent: [], drawn: []};
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) { b.sent.push(performance.now()); return send.call(this, data); };
  for (const type of ['keydown', 'pointermove', 'pointerdown', 'pointerup', 'click']) {
    document.addEventListener(type, (e) => b.inputs.push([type, e.timeStamp]), true);
  }
  const painted = (what) => {
    const t = performance.now();
    requestAnimationFrame(() => b.drawn.push([what, t, performance.now()]));
  };
  const seen = (el) => {
    const r = el.getBoundingClientRect();
    return r.bottom > 0 && r.top < innerHeight && r.height > 0;
  };
  const watch = () => {
    for (const gd of document.querySelectorAll('.js-plotly-plot')) {
      if (gd.__benchWatched || !gd.on) continue;
      gd.__benchWatched = true;
      gd.on('plotly_afterplot', () => { if (seen(gd)) painted('chart'); });
    }
  };
  new MutationObserver((list) => {
    watch();
    for (const m of list) {
      const el = m.target.nodeType === 1 ? m.target : m.target.parentElement;
      if (el && el.closest && el.closest('[data-testid="stMetric"], .sdwec-headline')) {
        painted('headline');
        break;
      }
    }
  }).observe(document, {subtree: true, childList: true, characterData: true});
})();
"""

#: The page is ready: its charts drawn (at least the number given), the Explorer's headline,
#: nothing running, and (where the page computes ahead) every file of answers it asked for
#: read.
READY_JS = """
([charts, ahead]) => {
  const explorer = charts > 1;
  const head = document.querySelector('[data-testid="stMetric"], .sdwec-headline');
  const drawn = document.querySelectorAll('.js-plotly-plot').length;
  const running = document.querySelector('[data-testid="stStatusWidget"]');
  const rt = window.__sdwecLive;
  const waiting = rt && ahead ? [...rt.loading.values()].filter((v) => v !== 'done').length : 0;
  // The server has drawn the setting the sliders show (its answers ahead then listed).
  const drawnHere = !rt || rt.key === null || rt.key === rt.released;
  return (!explorer || !!head) && drawn >= charts && !running && waiting === 0 && drawnHere;
}
"""
#: Charts a page draws when it is ready.
CHARTS = {"": 3, "frontier": 1}

#: The time of the step that began at ``t0``: ``[first input, last paint, changes]``, once
#: nothing has been drawn for ``quiet`` ms (null before).
STEP_JS = """
([t0, quiet]) => {
  const b = window.__bench, now = performance.now();
  const input = b.inputs.find(([, t]) => t >= t0);
  if (!input) return null;
  const after = b.drawn.filter(([, t]) => t >= input[1]);
  const last = after.length ? Math.max(...after.map(([, , p]) => p)) : input[1];
  if (now - Math.max(last, input[1]) < quiet) return null;
  return [input[1], after.length ? last : null, after.length];
}
"""


# --------------------------------------------------------------------------- checkouts
def describe_checkout(directory):
    """``git`` commit (short hash and subject, "+ changes" if the tree is dirty)."""
    def git(*args):
        try:
            return subprocess.run(["git", "-C", str(directory), *args], capture_output=True,
                                  text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    head = git("log", "-1", "--format=%h %s")
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return (head[:80] or "not a git checkout") + (" (+ uncommitted changes)" if dirty else "")


def _label(path, seen):
    name = Path(path).resolve().name
    seen[name] = seen.get(name, 0) + 1
    return name if seen[name] == 1 else f"{name}-{seen[name]}"


# --------------------------------------------------------------------------- one tab
class Tab:
    """One checkout's page in the shared browser."""

    def __init__(self, browser, label, url):
        self.label, self.url = label, url
        self.context = browser.new_context(viewport=VIEWPORT)
        self.context.add_init_script(INIT_JS)
        self.page = self.context.new_page()

    def open(self, path, query, timeout=300, ahead=True):
        self.page.goto(f"{self.url}/{path}?" + "&".join(f"{k}={v}" for k, v in query.items()))
        self.ready(path, timeout, ahead)

    def ready(self, path="", timeout=300, ahead=True):
        """Wait until the page is drawn, and (``ahead``) every answer it asked for is read."""
        self.page.wait_for_function(READY_JS, arg=[CHARTS[path], ahead],
                                    timeout=timeout * 1e3)
        self.page.wait_for_timeout(QUIET_MS)

    def now(self):
        return self.page.evaluate("performance.now()")

    def sent_since(self, t0):
        return self.page.evaluate("(t0) => window.__bench.sent.filter((t) => t >= t0).length", t0)

    def step(self, act):
        """Do ``act()`` and return ``{"ms": input to last paint (None: nothing drawn),
        "changes": n}``."""
        t0 = self.now()
        act()
        deadline = time.monotonic() + STEP_TIMEOUT_MS / 1e3
        while True:
            got = self.page.evaluate(STEP_JS, [t0, QUIET_MS])
            if got is not None:
                start, last, changes = got
                return {"ms": None if last is None else last - start, "changes": changes}
            if time.monotonic() > deadline:
                return {"ms": None, "changes": 0, "timeout": True}
            self.page.wait_for_timeout(50)

    def slider(self, key):
        return self.page.locator(f".st-key-{key} input[type=range]")

    def thumb_and_track(self, key):
        """Centre of the thumb and the track's (left, width) of the slider ``key``."""
        # Streamlit 1.67's slider: the range input sits in a visually hidden box inside the
        # thumb, which sits on the track.
        return self.page.evaluate("""(key) => {
            const input = document.querySelector(`.st-key-${key} input[type=range]`);
            const thumb = input.parentElement.parentElement;
            const track = thumb.parentElement.getBoundingClientRect(), t = thumb.getBoundingClientRect();
            return [t.x + t.width / 2, t.y + t.height / 2, track.x, track.width,
                    +input.min, +input.max, +input.value];
        }""", key)


def key_steps(tab, key, n):
    """``n`` arrow-key presses on slider ``key``, up then back down (its end reached)."""
    out = []
    tab.slider(key).focus()
    for i in range(n):
        value, high = tab.page.evaluate(
            "(k) => { const i = document.querySelector(`.st-key-${k} input[type=range]`); "
            "return [+i.value, +i.max]; }", key)
        press = "ArrowRight" if (i < n // 2 and value < high) or value <= 0 else "ArrowLeft"
        out.append(tab.step(lambda press=press: tab.page.keyboard.press(press)))
    return out


def drag_steps(tab, key, n):
    """A drag of slider ``key``'s thumb, one grid step per mouse move, ``n`` moves; returns
    the steps, the websocket frames sent before the release, and the ms from the release
    until the address holds the value."""
    tab.slider(key).scroll_into_view_if_needed()
    x, y, left, width, low, high, value = tab.thumb_and_track(key)
    stride = width / max(high - low, 1)
    page = tab.page
    page.mouse.move(x, y)
    t_down = tab.now()
    page.mouse.down()
    page.wait_for_timeout(QUIET_MS)
    direction = -1 if value - low > high - value else 1
    steps = []
    for i in range(1, n + 1):
        target = x + direction * i * stride
        steps.append(tab.step(lambda target=target: page.mouse.move(target, y)))
    sent = tab.sent_since(t_down)
    shown = page.evaluate("(k) => document.querySelector(`.st-key-${k} input[type=range]`)"
                          ".getAttribute('aria-valuetext')", key)
    t_up = time.monotonic()
    page.mouse.up()
    url_ms = None
    param = next(k for k, v in SLIDERS.items() if v == key)
    while time.monotonic() - t_up < 10:
        if f"{param}={shown}" in page.evaluate("location.search"):
            url_ms = 1e3 * (time.monotonic() - t_up)
            break
        page.wait_for_timeout(20)
    tab.ready()
    return steps, sent, url_ms


def frontier_steps(tab, n):
    """λ key presses on the Frontier (the cross), then the x-axis switched back and forth:
    the page's own buttons, or an older checkout's radio."""
    page = tab.page
    lam = key_steps(tab, "cfg_lam", n)
    switch = []
    for choice in ["sparsity", "trees"] * (n // 2):
        button = page.locator(f"button[data-value={choice}]")
        if button.count():
            switch.append(tab.step(lambda b=button: b.click()))
        else:
            option = page.locator(".st-key-frontier_x").get_by_text(choice, exact=True)
            switch.append(tab.step(lambda o=option: o.click()))
    return lam, switch


# --------------------------------------------------------------------------- a run
def measure(apps, datasets, n_trees=200, steps=10, log=print):
    """Every step on every dataset and checkout: a list of sample dicts."""
    from playwright.sync_api import sync_playwright

    samples = []
    cache = os.environ.get("SDWEC_CACHE_DIR") or tempfile.mkdtemp(prefix="sdwec-bench-")
    with ExitStack() as stack:
        servers = [stack.enter_context(Server(cache_dir=cache, cwd=directory,
                                              start_timeout=180)) for _, directory in apps]
        play = stack.enter_context(sync_playwright())
        browser = play.chromium.launch(executable_path=shutil.which("chromium"),
                                       args=LAUNCH_ARGS)
        stack.callback(browser.close)
        tabs = [Tab(browser, label, server.url) for (label, _), server in zip(apps, servers)]
        for index, dataset in enumerate(datasets):
            for tab in tabs if index % 2 == 0 else tabs[::-1]:
                log(f"{dataset}: {tab.label}")
                query = {"dataset": dataset, "l": n_trees}
                tab.open("", query)
                for param, key in SLIDERS.items():
                    for s in key_steps(tab, key, steps):
                        samples.append(dict(s, app=tab.label, dataset=dataset, page="Explorer",
                                            control=param, how="key"))
                    tab.open("", query)
                    moves, sent, url_ms = drag_steps(tab, key, steps)
                    for s in moves:
                        samples.append(dict(s, app=tab.label, dataset=dataset, page="Explorer",
                                            control=param, how="drag"))
                    samples.append(dict(app=tab.label, dataset=dataset, page="Explorer",
                                        control=param, how="release", sent=sent,
                                        url_ms=url_ms))
                tab.open("frontier", query)
                lam, switch = frontier_steps(tab, steps)
                samples += [dict(s, app=tab.label, dataset=dataset, page="Frontier",
                                 control="λ", how="key") for s in lam]
                samples += [dict(s, app=tab.label, dataset=dataset, page="Frontier",
                                 control="x axis", how="click") for s in switch]
    return samples


# --------------------------------------------------------------------------- the report
def _cell(values):
    if not values:
        return "—"
    return (f"{statistics.median(values):.0f} / {percentile(values, 95):.0f}"
            f" / {max(values):.0f}")


def report(samples, apps, command):
    """The Markdown report of ``samples``: per checkout, dataset and control."""
    labels = [label for label, _ in apps]
    out = [f"# Browser latency: input to page drawn\n\nRun: "
           f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, `{command}`.\n",
           f"Machine: {machine()}; load average at the end {load_average()}.\n"]
    for label, directory in apps:
        out.append(f"- **{label}**: {describe_checkout(directory)}")
    out.append("\nTimes in ms, p50 / p95 / max over the steps, from the input event to the "
               "paint after the last change it made to what can be seen (the headline, every "
               "chart in the 1280 × 720 window). **drawn**: steps that changed the page; a "
               "drag's move that draws nothing (a slider that sends its value only on release) "
               "is not a time.\n")
    rows = []
    keys = sorted({(s["page"], s["dataset"], s["control"], s["how"]) for s in samples
                   if "ms" in s}, key=lambda k: (k[0] != "Explorer", DATASETS.index(k[1])
                                                if k[1] in DATASETS else 99, k[2], k[3]))
    for page, dataset, control, how in keys:
        row = [page, dataset, control, how]
        for label in labels:
            got = [s for s in samples if (s["page"], s["dataset"], s["control"], s["how"],
                                          s["app"]) == (page, dataset, control, how, label)]
            ms = [s["ms"] for s in got if s["ms"] is not None]
            row += [_cell(ms), f"{len(ms)} of {len(got)}"]
        rows.append(row)
    header = ["page", "dataset", "control", "input"]
    for label in labels:
        header += [f"{label} ms", f"{label} drawn"]
    out.append(table(header, rows))
    out.append("\n## Releases\n\nA drag's websocket frames sent before the release, and the "
               "time from the release until the address holds the new value.\n")
    rows = []
    for s in samples:
        if s["how"] == "release":
            rows.append([s["app"], s["dataset"], s["control"], str(s["sent"]),
                         "—" if s["url_ms"] is None else f"{s['url_ms']:.0f}"])
    out.append(table(["checkout", "dataset", "slider", "frames sent while dragging",
                      "release → address (ms)"], rows))
    out.append("\n## Targets\n")
    for label in labels:
        explorer = [s["ms"] for s in samples if s["app"] == label and s["page"] == "Explorer"
                    and "ms" in s and s["ms"] is not None]
        frontier = [s["ms"] for s in samples if s["app"] == label and s["page"] == "Frontier"
                    and "ms" in s and s["ms"] is not None]
        drags = [s for s in samples if s["app"] == label and s.get("how") == "drag"]
        drawn = sum(s["ms"] is not None for s in drags)
        sent = [s["sent"] for s in samples if s["app"] == label and s["how"] == "release"]
        urls = [s["url_ms"] for s in samples if s["app"] == label and s["how"] == "release"]
        p95 = percentile(explorer, 95) if explorer else float("nan")
        fp95 = percentile(frontier, 95) if frontier else float("nan")
        late = [u for u in urls if u is None or u > TARGET_URL_MS]
        out.append(f"- **{label}**: Explorer p95 {p95:.0f} ms (target ≤ {TARGET_STEP_MS}: "
                   f"{'met' if p95 <= TARGET_STEP_MS else 'not met'}); drag moves drawn "
                   f"{drawn} of {len(drags)}; frames sent while dragging {sum(sent)} (target "
                   f"0: {'met' if not sum(sent) else 'not met'}); address after release ≤ "
                   f"{TARGET_URL_MS} ms in {len(urls) - len(late)} of {len(urls)}; Frontier "
                   f"p95 {fp95:.0f} ms (target ≤ {TARGET_FRONTIER_MS}: "
                   f"{'met' if fp95 <= TARGET_FRONTIER_MS else 'not met'}).")
    return "\n".join(out) + "\n"


def run(quick=False, log=print):
    """The section of ``python -m benchmarks``: this checkout alone, sonar (and vehicle)."""
    apps = [("this checkout", ROOT)]
    datasets = ("sonar",) if quick else ("sonar", "vehicle")
    samples = measure(apps, datasets, n_trees=50 if quick else 200, steps=4 if quick else 8,
                      log=log)
    return report(samples, apps, "python -m benchmarks --only browser")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.browser", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--app-dir", action="append", default=None,
                        help="a checkout to measure (repeatable; default: this one)")
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS))
    parser.add_argument("--trees", type=int, default=200)
    parser.add_argument("--steps", type=int, default=10, help="steps per control")
    parser.add_argument("--out", default="results/browser.md")
    args = parser.parse_args(argv)
    seen = {}
    apps = [(_label(d, seen), Path(d).resolve()) for d in (args.app_dir or [ROOT])]
    command = "python -m benchmarks.browser " + " ".join(sys.argv[1:] if argv is None else argv)
    samples = measure(apps, args.datasets, args.trees, args.steps)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).with_suffix(".json").write_text(json.dumps(samples, indent=1))
    text = report(samples, apps, command.strip())
    Path(args.out).write_text(text)
    print(text)
    return 0
