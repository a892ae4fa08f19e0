"""Load and memory test of the dashboard against the real server.

Starts ``streamlit run app.py`` on a free loopback port and opens N concurrent sessions, as
websocket clients (``--client ws``, the default: :mod:`harness.wsclient` speaks Streamlit's
protocol, so a session costs the server what a user's browser costs it) or as real browsers
(``--client browser``: Debian's Chromium driven by Playwright, one context per session).  For
a bounded time each session, driven by its own seeded random generator, repeatedly

* moves a sidebar slider one step (λ most often, also β, γ, ε and k),
* switches the dataset in the sidebar's select box, or
* opens a link whose query string sets the whole configuration (dataset, λ, β, γ, ε, k) --
  a new page load, so a new server session,

then waits until the run is over and the Explorer's four Plotly charts have arrived (in a
browser: are drawn again), and reads the result for ``--think`` seconds (drawn uniformly)
before its next action.  The time from the action to that point is the *time to updated
charts*.  With websocket clients it ends when the run's last message (``script_finished``,
after every chart's delta) is received: the browser's drawing is not in it.  In a browser it
includes Streamlit's slider debounce and the drawing; the server's part alone (the
``rerun_script`` message to ``script_finished``, read off the websocket) is reported beside
it.  ``--browsers K`` adds K real browser sessions beside the websocket clients, to measure
what a user sees while the others load the server.

After every action the run is checked for a traceback, an exception box or an ``st.error``
box (none is caused on purpose, so each counts as an error), for fewer than three charts with
data, and for a configuration the page did not apply; an action not served within the
time-out counts as an error too.  The server's resident memory (psutil, the process and its
children) is sampled every 2 s; the report gives it at start (idle), after the warm-up phase
and at the end, and checks the server log for tracebacks.  Only loopback is used, every loop
is bounded by a deadline, and the server and browser are stopped at the end whatever
happens.

The websocket clients can also be pointed at a target that is already running, such as the
proxy of ``scripts/serve.sh``: ``run_load(settings, server=...)`` with
``Settings(page_cookies=True)``, so that each client first loads the page and keeps its
cookies, as a browser does (``harness/serve.py``).

Run ``python -m benchmarks.load --help`` for the options; the full run is
``python -m benchmarks.load --sessions 10 --duration 120 --out results/load.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import numpy as np

from harness.common import CHART_CONTAINERS, CHARTS, healthy, machine, percentile, stop, table

ROOT = Path(__file__).resolve().parent.parent
UCI = ("breast", "heart", "ionosphere", "sonar", "vehicle", "vote", "waveform", "wdbc", "wine",
       "wpbc")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync"]
#: Plotly charts on the Explorer: accuracy, costs, weights, the trees' accuracies (timing on
#: request)
N_CHARTS = 4
#: Environment the server runs with, as ``scripts/dashboard.sh`` starts it.
SERVER_ENV = {"MALLOC_ARENA_MAX": "2"}
#: Sidebar sliders moved by the sessions: URL key -> (label, relative frequency).
SLIDERS = {"lam": ("λ (data fidelity, log scale)", 5), "beta": ("β (non-negativity penalty)", 2),
           "gamma": ("γ (log-sum-exp sharpness)", 2), "eps": ("ε (log scale)", 1),
           "k": ("Iterations k", 1)}
#: Query-string keys that make up one parameter set.
PARAM_KEYS = ("dataset", "task", "seed", "l", "lam", "beta", "gamma", "eps", "k", "thr")
#: Action mix: slider moves, dataset switches in the select box, links with a full query.
ACTIONS = (("slider", 0.6), ("dataset", 0.15), ("url", 0.25))
#: Progress-bar text of a pool being trained (``sdwec.pool.build_pool``'s progress message).
TRAINING_TEXT = "training trees"

# Counts the websocket messages the page has been handed (Streamlit's own handler runs right
# after this listener, in the same event).  With the count of frames up to the server's
# "script finished" message, seen by Playwright on the wire, this tells when the page has
# received a whole run.  (The app root's data-test-script-state attribute alone is not
# enough: under load React batches "running" and "notRunning" into one render, and a run can
# pass without the attribute ever changing.)
COUNTER_JS = """
(() => {
  window.__sdwec = {messages: 0};
  const Native = window.WebSocket;
  class Counted extends Native {
    constructor(...args) {
      super(...args);
      window.__sdwec.messages = 0;
      this.addEventListener('message', () => { window.__sdwec.messages += 1; });
    }
  }
  window.WebSocket = Counted;
})();
"""

READY_JS = """
([messages, n]) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!window.__sdwec || window.__sdwec.messages < messages || !app
      || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  const charts = document.querySelectorAll('__CHARTS__');
  if (charts.length < n) return false;
  for (const c of charts) { if (!c.data || !c.data.length) return false; }
  return true;
}
""".replace("__CHARTS__", CHARTS)

STATE_JS = """
() => JSON.stringify([window.__sdwec,
  (document.querySelector('[data-testid="stApp"]') || {getAttribute: () => null})
    .getAttribute('data-test-script-state')])
"""

CHARTS_JS = """
() => ({containers: document.querySelectorAll('__CONTAINERS__').length,
        drawn: Array.from(document.querySelectorAll('__CHARTS__'))
          .map(c => c.data ? c.data.length : -1),
        metrics: document.querySelectorAll('[data-testid="stMetric"]').length,
        warnings: Array.from(document.querySelectorAll('[data-testid="stAlertContentWarning"]'))
          .map(e => e.innerText.slice(0, 200))})
""".replace("__CONTAINERS__", CHART_CONTAINERS).replace("__CHARTS__", CHARTS)

CHECK_JS = """
() => ({
  exception: document.querySelectorAll('[data-testid="stException"]').length,
  error: Array.from(document.querySelectorAll('[data-testid="stAlertContentError"]'))
           .map(e => e.innerText.slice(0, 300)),
  traceback: document.body.textContent.includes('Traceback'),
  connection: (document.querySelector('[data-testid="stApp"]') || {getAttribute: () => null})
                .getAttribute('data-test-connection-state'),
})
"""


@dataclass
class Settings:
    """What one load run does (see ``python -m benchmarks.load --help``)."""

    sessions: int = 10
    duration: float = 120.0  # seconds of measured load, after the warm-up
    warmup: float = 30.0
    datasets: tuple = UCI
    n_trees: int = 200
    seed: int = 0  # the pools' split seed (fixed: another seed would train new pools)
    rng_seed: int = 0  # seeds the sessions' choices of actions and parameters
    action_timeout: float = 180.0  # slow is measured, not an error; only this is
    min_distinct: int = 0  # keep going past ``duration`` until this many distinct parameter
    max_extra: float = 300.0  # sets were served, for at most this many more seconds
    cache_dir: str | None = None  # $SDWEC_CACHE_DIR for the server; None keeps the current
    client: str = "ws"  # "ws": websocket clients; "browser": Chromium sessions
    browsers: int = 0  # with client "ws": this many browser sessions beside them
    think: tuple = (0.5, 2.5)  # seconds a session reads the result before its next action
    options: tuple = ()  # extra ``streamlit run`` flags, e.g. ("--runner.postScriptGC", "true")
    env: tuple = ()  # extra (name, value) pairs for the server's environment
    # Websocket clients first load the page over HTTP and send its cookies with every
    # websocket, as a browser does: a proxy's sticky-session cookie (harness/serve.py).
    page_cookies: bool = False
    prewarm: bool = True  # train the pools before the sessions start (False: the server does)
    # Each websocket session's first action after its page is one kind of ACTIONS in turn
    # (session i: kind i mod 3), then they are drawn at random: a short run serves every kind.
    cover: bool = False


@dataclass
class Action:
    session: int  # browser sessions beside websocket clients are numbered after them
    phase: str  # "warm-up" or "load"
    kind: str  # "slider:<key>", "dataset", "url"
    dataset: str
    seconds: float | None  # time to updated charts
    run_seconds: float | None  # the server's part: rerun request -> script finished
    params: tuple | None
    error: str | None = None
    client: str = "ws"  # "ws" or "browser"
    trained: bool = False  # the run showed a pool-training progress bar (websocket clients)


@dataclass
class Outcome:
    settings: Settings
    actions: list = field(default_factory=list)
    rss: list = field(default_factory=list)  # (t, bytes)
    connections: list = field(default_factory=list)  # (t, open websocket connections)
    rss_start: int = 0
    rss_warm: int = 0
    rss_end: int = 0
    sessions_held: int = 0
    session_failures: list = field(default_factory=list)
    server_alive: bool = False
    server_log_tracebacks: int = 0
    server_log_tail: str = ""
    wall: float = 0.0
    warm_seconds: float = 0.0
    load_seconds: float = 0.0
    final_seconds: float | None = None  # a fresh page load after the run
    final_error: str | None = None
    cpu_server: float = 0.0
    cpu_other: float = 0.0  # Playwright's driver and Chromium (browser sessions)
    cpu_harness: float = 0.0
    load_average: list = field(default_factory=list)  # (t, 1-minute load average)
    server_setup: str = ""  # the server's environment settings and extra flags
    routes: dict = field(default_factory=dict)  # session -> the proxy's X-SDWEC-Replica
    warm_at: float = 0.0  # time.monotonic() when the warm-up ended
    load_end_at: float = 0.0  # time.monotonic() when the measured load ended


# --------------------------------------------------------------------------- server


def free_port():
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``streamlit run app.py`` (or another ``script``) on loopback, from ``cwd``; a context
    manager that always stops it."""

    def __init__(self, cache_dir=None, log_dir=None, script="app.py", options=(), env=(),
                 cwd=ROOT, log_name="server.log", start_timeout=90):
        self.script = str(script)
        self.options = list(options)
        self.cwd = Path(cwd)
        self.start_timeout = start_timeout
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = Path(log_dir or tempfile.mkdtemp(prefix="sdwec-load-")) / log_name
        self.env = dict(SERVER_ENV, **os.environ)
        self.env.update(dict(env))
        if cache_dir is not None:
            self.env["SDWEC_CACHE_DIR"] = str(cache_dir)
        self.proc = None
        self.started = None

    def command(self):
        # The dashboard's launcher where the checkout has one (dashboard/launch.py: the
        # Explorer's fragment is used only under it); an older checkout timed beside it
        # (benchmarks.browser --app-dir) starts as it always did.
        launcher = ("dashboard.launch" if (self.cwd / "dashboard" / "launch.py").is_file()
                    else "streamlit")
        return [sys.executable, "-m", launcher, "run", self.script, "--server.headless",
                "true", "--server.port", str(self.port), "--server.address", "127.0.0.1",
                "--browser.gatherUsageStats", "false",
                # Others edit the tree while the test runs: no file watching, no reloads.
                "--server.fileWatcherType", "none"] + self.options

    def __enter__(self):
        return self.start().wait_started()

    def start(self):
        """Start the server's process without waiting for it to answer (then
        :meth:`wait_started`), so that several servers, or other set-up, boot at once."""
        with open(self.log_path, "wb") as out:
            self.proc = subprocess.Popen(self.command(), cwd=self.cwd, env=self.env, stdout=out,
                                         stderr=subprocess.STDOUT)
        self.started = time.monotonic()
        return self

    def wait_started(self):
        """Wait until the started server answers; stop it and raise if it ends or takes
        longer than ``start_timeout`` from its start."""
        deadline = self.started + self.start_timeout
        while not self.healthy():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.__exit__(None, None, None)
                raise RuntimeError(f"streamlit in {self.cwd} did not start:\n"
                                   f"{self.log()[-3000:]}")
            time.sleep(0.3)
        return self

    def __exit__(self, *exc):
        stop(self.proc)

    def healthy(self):
        return healthy(self.url)

    def _processes(self):
        import psutil

        try:
            main = psutil.Process(self.proc.pid)
            return [main] + main.children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def rss(self):
        """Resident memory of the server and its children, in bytes."""
        import psutil

        total = 0
        for p in self._processes():
            try:
                total += p.memory_info().rss
            except psutil.NoSuchProcess:
                pass
        return total

    def connections(self):
        """Established TCP connections to the server's port (one websocket per session)."""
        import psutil

        try:
            conns = psutil.Process(self.proc.pid).net_connections(kind="tcp")
        except psutil.NoSuchProcess:
            return 0
        return sum(1 for c in conns if c.status == psutil.CONN_ESTABLISHED
                   and c.laddr and c.laddr.port == self.port)

    def log(self):
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""


def ensure_pools(datasets, n_trees, seed, cache_dir=None, log=print):
    """Put every dataset's pool in the disk cache the server will read (trains if missing)."""
    from sdwec.pool import CACHE_ENV, load_pool

    old = os.environ.get(CACHE_ENV)
    if cache_dir is not None:
        os.environ[CACHE_ENV] = str(cache_dir)
    try:
        for name in datasets:
            start = time.perf_counter()
            load_pool(name, "binary", n_trees=n_trees, seed=seed)
            log(f"  pool {name} (l = {n_trees}) ready in {time.perf_counter() - start:.1f} s")
    finally:
        if cache_dir is not None:
            if old is None:
                os.environ.pop(CACHE_ENV, None)
            else:
                os.environ[CACHE_ENV] = old


# --------------------------------------------------------------------------- sessions


def _grids():
    from dashboard import config as dashboard

    return dashboard


def random_query(rng, settings):
    """A full, valid configuration as a query string dict (values on the sliders' grids)."""
    d = _grids()
    return {"dataset": rng.choice(settings.datasets), "task": "binary",
            "seed": str(settings.seed), "l": str(settings.n_trees),
            "lam": f"{rng.choice(d.LAMBDA_GRID):g}",
            "beta": f"{rng.randint(int(d.BETA_RANGE[0]), int(d.BETA_RANGE[1])):g}",
            "gamma": f"{rng.randint(int(d.GAMMA_RANGE[0]), int(d.GAMMA_RANGE[1])):g}",
            "eps": f"{rng.choice(d.EPS_GRID):g}", "k": str(rng.randint(5, 50)), "thr": "paper"}


def params_of(url):
    """The parameter set in a page address (``None`` if it lacks any key)."""
    query = parse_qs(urlparse(url).query)
    if not all(k in query for k in PARAM_KEYS):
        return None
    return tuple(query[k][-1] for k in PARAM_KEYS)


def _slider_step(rng, params):
    """A slider to move and the arrow key that really changes its value."""
    d = _grids()
    keys = list(SLIDERS)
    key = rng.choices(keys, weights=[SLIDERS[k][1] for k in keys])[0]
    values = dict(zip(PARAM_KEYS, params)) if params else {}
    value = float(values.get(key, "nan"))
    grid = {"lam": d.LAMBDA_GRID, "eps": d.EPS_GRID}.get(key)
    low, high = {"beta": d.BETA_RANGE[:2], "gamma": d.GAMMA_RANGE[:2],
                 "k": d.ITERATIONS_RANGE[:2]}.get(key, (grid[0], grid[-1]) if grid else (0, 0))
    if value <= low:
        direction = "ArrowRight"
    elif value >= high:
        direction = "ArrowLeft"
    else:
        direction = rng.choice(("ArrowLeft", "ArrowRight"))
    return key, direction


async def _wait_ready(page, wire, start, timeout):
    """Wait until a run that finished after ``start`` has reached the page and its charts
    are drawn."""
    limit = time.monotonic() + timeout
    while wire.since(start) is None:
        if time.monotonic() > limit:
            raise TimeoutError(f"no finished script run on the websocket within {timeout:.0f} s")
        await asyncio.sleep(0.02)
    await page.wait_for_function(READY_JS, arg=[wire.last[2], N_CHARTS],
                                 timeout=max(1.0, limit - time.monotonic()) * 1e3, polling=50)
    # Two animation frames: Plotly has handed the new data to the browser to paint.
    await page.evaluate("() => new Promise(r => requestAnimationFrame(() => "
                        "requestAnimationFrame(r)))")


async def _check(page):
    state = await page.evaluate(CHECK_JS)
    problems = []
    if state["traceback"]:
        problems.append("'Traceback' on the page")
    if state["exception"]:
        problems.append(f"{state['exception']} exception box(es)")
    problems += [f"st.error: {text}" for text in state["error"]]
    return problems, state


async def _diagnose(page, before):
    """What the page looked like when an action failed (for the report)."""
    try:
        seen = await page.evaluate(STATE_JS)
        charts = await page.evaluate(CHARTS_JS)
        problems, _ = await _check(page)
        now = params_of(page.url)
        changed = ({k: (a, b) for k, a, b in zip(PARAM_KEYS, before, now) if a != b}
                   if before and now else "?")
        return (f" [page script state {seen}; charts {charts}; URL changes {changed}; "
                f"page problems {problems or 'none'}]")
    except Exception as exc:  # noqa: BLE001
        return f" [page unreadable: {type(exc).__name__}]"


async def _act(page, kind, rng, settings, url):
    """Do one action; return its kind and the query values it must lead to (or None)."""
    params = params_of(page.url)
    if kind == "url":
        query = random_query(rng, settings)
        await page.goto(f"{url}/?{urlencode(query)}", wait_until="commit",
                        timeout=settings.action_timeout * 1e3)
        return "url", query
    if kind == "dataset":
        name = _other_dataset(rng, settings, params)
        box = page.get_by_test_id("stSelectbox").filter(has_text="Dataset").first
        await box.locator("input").click(timeout=settings.action_timeout * 1e3)
        await page.keyboard.type(name)
        await page.keyboard.press("Enter")
        return "dataset", {"dataset": name}
    key, direction = _slider_step(rng, params)
    label = SLIDERS[key][0]
    thumb = page.get_by_role("group", name=label).locator('input[type="range"]').first
    await thumb.focus(timeout=settings.action_timeout * 1e3)
    # One step per move: a burst of presses would be split by the client's debounce into
    # several runs, and the time to the last of them is not one user's wait.
    await thumb.press(direction)
    return f"slider:{key}", None


class Wire:
    """Times each script run on the session's websocket: from the browser's ``rerun_script``
    message to the server's ``script_finished`` message, as seen by Playwright.  This is the
    server's part of a move (network on loopback included, the browser's drawing excluded)."""

    def __init__(self):
        self.sent = None
        self.socket = None  # frames received on the current websocket
        self.last = None  # (finished at, seconds, frames received up to it)

    def attach(self, page):
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        finished = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}

        def sent(payload):
            if isinstance(payload, (bytes, bytearray)):
                try:
                    if BackMsg.FromString(bytes(payload)).WhichOneof("type") == "rerun_script":
                        self.sent = time.perf_counter()
                except Exception:  # noqa: BLE001 -- not a message this cares about
                    pass

        def received(socket, payload):
            socket["frames"] += 1
            if (socket is not self.socket or self.sent is None
                    or not isinstance(payload, (bytes, bytearray))):
                return
            try:
                msg = ForwardMsg.FromString(bytes(payload))
            except Exception:  # noqa: BLE001
                return
            if msg.WhichOneof("type") == "script_finished" and msg.script_finished in finished:
                now = time.perf_counter()
                self.last = (now, now - self.sent, socket["frames"])

        def on_socket(ws):
            socket = self.socket = {"frames": 0}  # a new page load opens a new socket
            ws.on("framesent", sent)
            ws.on("framereceived", lambda payload: received(socket, payload))

        page.on("websocket", on_socket)

    def since(self, start):
        """Seconds of the last run finished after ``start`` (``None`` if none)."""
        return self.last[1] if self.last is not None and self.last[0] >= start else None


def total_sessions(settings):
    """Sessions of a run: the websocket clients or browsers, plus browsers beside clients."""
    return settings.sessions + (settings.browsers if settings.client == "ws" else 0)


async def _think(rng, settings, clock):
    """A user reading the result before the next action (never past the deadline)."""
    low, high = settings.think
    pause = min(rng.uniform(low, high), max(0.0, clock.deadline() - time.monotonic()))
    if pause > 0:
        await asyncio.sleep(pause)


def _dataset_of(params):
    return dict(zip(PARAM_KEYS, params))["dataset"] if params else "?"


def _other_dataset(rng, settings, params):
    """A dataset to switch to: any of the run's but the one ``params`` shows."""
    current = _dataset_of(params)
    return rng.choice([n for n in settings.datasets if n != current] or list(settings.datasets))


def _chart_problems(charts):
    return [f"{charts} of {N_CHARTS} charts arrived with data"] if charts < N_CHARTS else []


async def _after(action, outcome, clock, first_page, rng, settings, log):
    """Record ``action``, then pause like a user; after an error return a fresh link to
    start again from (a known state), else ``None``."""
    outcome.actions.append(action)
    if first_page:
        clock.first_page_done()
    if action.error:
        log(f"  session {action.session}: {action.kind} on {action.dataset}: "
            f"ERROR {action.error}")
        return ("url", random_query(rng, settings))
    await _think(rng, settings, clock)
    return None


def _next_value(widget, current, direction):
    """The value one arrow-key step from ``current`` (a query-string value) on ``widget``."""
    step = 1 if direction == "ArrowRight" else -1
    if widget.kind == "select_slider":
        options = list(widget.options)
        index = options.index(current) if current in options else 0
        return options[min(max(index + step, 0), len(options) - 1)]
    value = float(current) + step * widget.step
    return min(max(value, widget.low), widget.high)


def _served(kind, query, before, params, run_problems, charts):
    """Problems with a served action: the page's own, missing charts, a request not applied."""
    problems = list(run_problems) + _chart_problems(charts)
    if params is None:
        problems.append("the page address lacks the configuration")
    elif query is not None:
        got = dict(zip(PARAM_KEYS, params))
        wrong = [k for k, v in query.items() if k in got and got[k] != v]
        if wrong:
            problems.append(f"the page did not apply {', '.join(wrong)} "
                            f"(asked {query}, got {got})")
    if kind.startswith("slider") and params is not None and params == before:
        problems.append("the slider move changed nothing")
    return problems


def page_cookies(url, timeout):
    """``(Cookie header, replica)`` a browser holds after loading the page at ``url``.

    The cookie header carries every cookie the answer set (behind ``scripts/serve.sh``'s
    proxy, its sticky-session cookie); the replica is the proxy's ``X-SDWEC-Replica``
    header ("" without a proxy).
    """
    from http.cookies import SimpleCookie

    jar = SimpleCookie()
    with urllib.request.urlopen(f"{url}/", timeout=timeout) as reply:
        reply.read()
        for header in reply.headers.get_all("Set-Cookie") or []:
            jar.load(header)
        replica = reply.headers.get("X-SDWEC-Replica", "")
    return "; ".join(f"{name}={morsel.value}" for name, morsel in jar.items()), replica


async def ws_session(index, url, settings, outcome, clock, log):
    """One websocket client acting until the clock's deadline (see :mod:`harness.wsclient`)."""
    from harness.wsclient import Session

    rng = random.Random(settings.rng_seed * 1000 + index)
    client = Session(url, timeout=settings.action_timeout)
    kinds, weights = zip(*ACTIONS)
    first = random_query(rng, settings)
    first["dataset"] = settings.datasets[index % len(settings.datasets)]
    pending = ("url", first)
    first_page, alive, cover = True, True, settings.cover
    try:
        if settings.page_cookies:
            cookie, outcome.routes[index] = await asyncio.to_thread(
                page_cookies, url, settings.action_timeout)
            if cookie:
                client.headers["Cookie"] = cookie
        while time.monotonic() < clock.deadline():
            phase = clock.phase()
            before = params_of("/?" + client.query) if client.socket else None
            seconds = params = None
            trained = False
            try:
                if pending is not None:
                    (kind, query), pending = pending, None
                else:
                    kind = rng.choices(kinds, weights=weights)[0]
                    if cover:
                        kind, cover = kinds[index % len(kinds)], False
                    query = random_query(rng, settings) if kind == "url" else None
                if kind == "url":
                    run = await client.open(urlencode(query))
                elif kind == "dataset":
                    name = _other_dataset(rng, settings, before)
                    query = {"dataset": name}
                    run = await client.set("Dataset", name)
                else:
                    key, direction = _slider_step(rng, before)
                    kind = f"slider:{key}"
                    label = SLIDERS[key][0]
                    widget = client.widgets.get(label)
                    if widget is None or before is None:
                        raise RuntimeError(f"no {label!r} slider on the page")
                    value = _next_value(widget, dict(zip(PARAM_KEYS, before))[key], direction)
                    run = await client.set(label, value)
                seconds = run.seconds
                params = params_of("/?" + run.query)
                trained = any(TRAINING_TEXT in text for text in run.progress)
                error = "; ".join(_served(kind, query, before, params, run.problems,
                                          run.charts)) or None
            except Exception as exc:  # noqa: BLE001 -- a failed action is counted, not fatal
                error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
            # The whole of a websocket client's time is the server's part: no separate figure.
            action = Action(index, phase, kind, _dataset_of(params or before), seconds, None,
                            params if error is None else None, error, "ws", trained)
            pending = await _after(action, outcome, clock, first_page, rng, settings, log)
            first_page = False
        alive = client.socket is not None and pending is None
    except Exception as exc:  # noqa: BLE001
        alive = False
        outcome.session_failures.append(f"session {index}: {type(exc).__name__}: {exc}")
    finally:
        await client.close()
    return alive


class Clock:
    """Phases of a run: the warm-up ends once ``warmup`` seconds have passed *and* every
    session has drawn its first page (the server's first runs import the libraries and read
    the pools); the measured load then lasts ``duration`` seconds."""

    def __init__(self, settings, actions):
        self.settings = settings
        self.actions = actions
        self.t0 = time.monotonic()
        self.first_pages = 0
        self.warm_end = None
        self.warm = asyncio.Event()

    def first_page_done(self):
        self.first_pages += 1

    def phase(self):
        return "warm-up" if self.warm_end is None else "load"

    def deadline(self):
        """Monotonic time the sessions stop at (far ahead while warming up)."""
        st = self.settings
        if self.warm_end is None:
            return self.t0 + st.warmup + 3 * st.action_timeout + st.duration
        end = self.warm_end + st.duration
        if self.distinct() < st.min_distinct:
            end += st.max_extra
        return end

    def distinct(self):
        return len({a.params for a in self.actions if a.params is not None and a.error is None})

    async def watch(self):
        """End the warm-up (bounded: at most three action time-outs past ``warmup``)."""
        limit = self.t0 + self.settings.warmup + 3 * self.settings.action_timeout
        while time.monotonic() < limit and (
                time.monotonic() < self.t0 + self.settings.warmup
                or self.first_pages < total_sessions(self.settings)):
            await asyncio.sleep(0.2)
        self.warm_end = time.monotonic()
        self.warm.set()


async def session(index, browser, url, settings, outcome, clock, log):
    """One browser session acting until the clock's deadline."""
    rng = random.Random(settings.rng_seed * 1000 + index)
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    await context.add_init_script(COUNTER_JS)
    page = await context.new_page()
    wire = Wire()
    wire.attach(page)
    alive = True
    try:
        first = random_query(rng, settings)
        first["dataset"] = settings.datasets[index % len(settings.datasets)]
        kinds, weights = zip(*ACTIONS)
        pending = ("url", first)
        first_page = True
        while time.monotonic() < clock.deadline():
            phase = clock.phase()
            before = params_of(page.url)
            start = time.perf_counter()
            error = None
            seconds = run_seconds = params = None
            try:
                if pending is not None:
                    kind, query = pending
                    pending = None
                    await page.goto(f"{url}/?{urlencode(query)}", wait_until="commit",
                                    timeout=settings.action_timeout * 1e3)
                else:
                    kind = rng.choices(kinds, weights=weights)[0]
                    kind, query = await _act(page, kind, rng, settings, url)
                remaining = max(1.0, min(settings.action_timeout,
                                         clock.deadline() + 30 - time.monotonic()))
                await _wait_ready(page, wire, start, remaining)
                seconds = time.perf_counter() - start
                problems, _ = await _check(page)
                run_seconds = wire.since(start)
                params = params_of(page.url)
                charts = await page.evaluate(CHARTS_JS)
                drawn = sum(1 for n in charts["drawn"] if n > 0)
                error = "; ".join(_served(kind, query, before, params, problems, drawn)) or None
            except Exception as exc:  # noqa: BLE001 -- a failed action is counted, not fatal
                error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
                error += await _diagnose(page, before)
            action = Action(index, phase, kind, _dataset_of(params or before), seconds,
                            run_seconds, params if error is None else None, error, "browser")
            pending = await _after(action, outcome, clock, first_page, rng, settings, log)
            first_page = False
        state = await page.evaluate(CHECK_JS)
        alive = state["connection"] in (None, "CONNECTED") and not page.is_closed()
    except Exception as exc:  # noqa: BLE001
        alive = False
        outcome.session_failures.append(f"session {index}: {type(exc).__name__}: {exc}")
    finally:
        await context.close()
    return alive


async def _monitor(server, outcome, t0, stop):
    while not stop.is_set():
        outcome.rss.append((time.monotonic() - t0, server.rss()))
        outcome.connections.append((time.monotonic() - t0, server.connections()))
        outcome.load_average.append((time.monotonic() - t0, os.getloadavg()[0]))
        try:
            await asyncio.wait_for(stop.wait(), timeout=2.0)
        except asyncio.TimeoutError:
            pass


async def _final_page(browser, url, settings):
    """A fresh session after the load: the server still serves a clean Explorer."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    await context.add_init_script(COUNTER_JS)
    page = await context.new_page()
    wire = Wire()
    wire.attach(page)
    start = time.perf_counter()
    try:
        query = {"dataset": settings.datasets[0], "l": str(settings.n_trees)}
        await page.goto(f"{url}/?{urlencode(query)}", wait_until="commit",
                        timeout=settings.action_timeout * 1e3)
        await _wait_ready(page, wire, start, settings.action_timeout)
        problems, _ = await _check(page)
        return time.perf_counter() - start, "; ".join(problems) or None
    except Exception as exc:  # noqa: BLE001
        return None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    finally:
        await context.close()


async def _final_ws_page(url, settings):
    """A fresh websocket session after the load: the server still serves a clean Explorer."""
    from harness.wsclient import Session

    query = {"dataset": settings.datasets[0], "l": str(settings.n_trees)}
    try:
        async with Session(url, timeout=settings.action_timeout) as client:
            run = await client.open(urlencode(query))
    except Exception as exc:  # noqa: BLE001
        return None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    problems = run.problems + _chart_problems(run.charts)
    return run.seconds, "; ".join(problems) or None


async def _drive(server, settings, outcome, log):
    clock = Clock(settings, outcome.actions)
    stop = asyncio.Event()
    monitor = asyncio.create_task(_monitor(server, outcome, clock.t0, stop))
    n_browsers = settings.sessions if settings.client == "browser" else settings.browsers
    n_clients = settings.sessions if settings.client == "ws" else 0
    playwright = browser = None
    try:
        if n_browsers:
            from playwright.async_api import async_playwright

            chromium = shutil.which("chromium")
            if chromium is None:
                raise RuntimeError("Debian's chromium is missing (`apt-get install chromium`)")
            playwright = await async_playwright().start()
            browser = await playwright.chromium.launch(executable_path=chromium,
                                                       args=LAUNCH_ARGS)
        tasks = [asyncio.create_task(ws_session(i, server.url, settings, outcome, clock, log))
                 for i in range(n_clients)]
        tasks += [asyncio.create_task(session(n_clients + i, browser, server.url, settings,
                                              outcome, clock, log))
                  for i in range(n_browsers)]
        watcher = asyncio.create_task(clock.watch())

        async def mark_warm():
            await clock.warm.wait()
            outcome.warm_at = clock.warm_end
            outcome.rss_warm = server.rss()
            outcome.warm_seconds = clock.warm_end - clock.t0
            log(f"  warm-up over after {outcome.warm_seconds:.0f} s: server RSS "
                f"{outcome.rss_warm / 2**20:.0f} MiB, {len(outcome.actions)} actions so far")

        warm = asyncio.create_task(mark_warm())
        # Bounded: sessions stop at the deadline; anything left 2 minutes later is cut.
        limit = (settings.warmup + 3 * settings.action_timeout + settings.duration
                 + settings.max_extra + 120)
        done = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True),
                                      timeout=limit)
        await watcher
        await warm
        outcome.load_end_at = time.monotonic()
        outcome.load_seconds = outcome.load_end_at - clock.warm_end
        outcome.sessions_held = sum(1 for d in done if d is True)
        if browser is not None:
            outcome.final_seconds, outcome.final_error = await _final_page(
                browser, server.url, settings)
        else:
            outcome.final_seconds, outcome.final_error = await _final_ws_page(
                server.url, settings)
    finally:
        stop.set()
        await monitor
        outcome.cpu_other = _descendants_cpu(exclude=server.proc.pid)
        if browser is not None:
            await browser.close()
        if playwright is not None:
            await playwright.stop()


def _cpu(proc):
    import psutil

    try:
        t = proc.cpu_times()
        return t.user + t.system + t.children_user + t.children_system
    except psutil.NoSuchProcess:
        return 0.0


def _descendants_cpu(exclude):
    """CPU seconds of this process's descendants (Playwright's driver and Chromium), not
    counting the server's process tree."""
    import psutil

    total = 0.0
    for p in psutil.Process().children(recursive=True):
        if p.pid == exclude or exclude in {a.pid for a in _ancestors(p)}:
            continue
        total += _cpu(p)
    return total


def _ancestors(proc):
    out = []
    try:
        while (proc := proc.parent()) is not None:
            out.append(proc)
    except Exception:  # noqa: BLE001 -- a process that ended has no ancestors to list
        pass
    return out


def run_load(settings=None, log=print, server=None):
    """Start the server, drive the sessions, stop everything; return an :class:`Outcome`.

    ``server``, if given, is a target already running (like :class:`Server`: ``url``,
    ``proc``, ``env``, ``rss()``, ``connections()``, ``healthy()``, ``log()``; e.g.
    ``harness.serve.Served``, the proxy of ``scripts/serve.sh``): the sessions are driven
    against it instead of a new ``streamlit run``, and it is left running.
    """
    settings = settings or Settings()
    outcome = Outcome(settings=settings)
    log(f"load: {settings.sessions} sessions, {settings.warmup:g} s warm-up + "
        f"{settings.duration:g} s, datasets {', '.join(settings.datasets)}, l = {settings.n_trees}")
    if settings.prewarm:
        ensure_pools(settings.datasets, settings.n_trees, settings.seed, settings.cache_dir, log)
    start = time.monotonic()
    target = (Server(cache_dir=settings.cache_dir, options=settings.options, env=settings.env)
              if server is None else contextlib.nullcontext(server))
    with target as server:
        time.sleep(1.0)
        names = list(SERVER_ENV) + [k for k, _ in settings.env if k not in SERVER_ENV]
        setup = [f"{k}={server.env.get(k, 'unset')}" for k in names]
        if settings.options:
            setup.append(" ".join(settings.options))
        outcome.server_setup = ", ".join(setup)
        outcome.rss_start = server.rss()
        log(f"  server on {server.url}, idle RSS {outcome.rss_start / 2**20:.0f} MiB")
        import psutil

        own = psutil.Process().cpu_times()
        server_cpu0, own_cpu0 = _cpu(psutil.Process(server.proc.pid)), own.user + own.system
        asyncio.run(_drive(server, settings, outcome, log))
        outcome.rss_end = server.rss()
        outcome.cpu_server = _cpu(psutil.Process(server.proc.pid)) - server_cpu0
        t = psutil.Process().cpu_times()
        outcome.cpu_harness = t.user + t.system - own_cpu0
        outcome.server_alive = server.healthy() and server.proc.poll() is None
        text = server.log()
        outcome.server_log_tracebacks = text.count("Traceback")
        outcome.server_log_tail = text[-3000:]
    outcome.wall = time.monotonic() - start
    return outcome


# --------------------------------------------------------------------------- report


def _pcts(values):
    return (percentile(values, 50), percentile(values, 95)) if values else (float("nan"),) * 2


def summary(outcome):
    """The headline figures of a run (a dict), computed from the recorded actions.

    The percentiles are over the measured phase's served actions of the run's own client
    (``settings.client``); ``browser_*`` are those of browser sessions run beside
    websocket clients, if any.
    """
    main = outcome.settings.client
    load = [a for a in outcome.actions if a.phase == "load"]
    ok = [a for a in load if a.error is None and a.seconds is not None]
    mine = [a for a in ok if a.client == main]
    uci = [a.seconds for a in mine if a.dataset in UCI]
    uci_server = [a.run_seconds for a in mine if a.dataset in UCI and a.run_seconds is not None]
    beside = [a.seconds for a in ok if a.client != main and a.dataset in UCI]
    moves = [a for a in ok if a.kind.startswith("slider")]
    distinct = {a.params for a in outcome.actions if a.params is not None and a.error is None}
    errors = [a for a in outcome.actions if a.error is not None]
    (p50_all, p95_all), (p50_uci, p95_uci) = _pcts([a.seconds for a in mine]), _pcts(uci)
    server_p50_uci, server_p95_uci = _pcts(uci_server)
    browser_p50_uci, browser_p95_uci = _pcts(beside)
    return {
        "actions": len(outcome.actions), "load_actions": len(load),
        "slider_moves": sum(1 for a in outcome.actions if a.kind.startswith("slider")
                            and a.error is None),
        "slider_moves_load": len(moves),
        "dataset_switches": sum(1 for a in outcome.actions if a.kind == "dataset"
                                and a.error is None),
        "links": sum(1 for a in outcome.actions if a.kind == "url" and a.error is None),
        "distinct": len(distinct), "errors": len(errors) + outcome.server_log_tracebacks,
        "action_errors": errors,
        "p50_all": p50_all, "p95_all": p95_all, "p50_uci": p50_uci, "p95_uci": p95_uci,
        "server_p50_uci": server_p50_uci, "server_p95_uci": server_p95_uci,
        "browser_n": len(beside), "browser_p50_uci": browser_p50_uci,
        "browser_p95_uci": browser_p95_uci,
        "rss_growth": outcome.rss_end - outcome.rss_warm,
        "max_connections": max((c for _, c in outcome.connections), default=0),
    }


def _by_kind(outcome):
    rows = []
    load = [a for a in outcome.actions if a.phase == "load" and a.error is None
            and a.seconds is not None]
    for client, kind in sorted({(a.client, a.kind) for a in load}):
        sel = [a for a in load if a.kind == kind and a.client == client]
        secs = [a.seconds for a in sel]
        runs = [a.run_seconds for a in sel if a.run_seconds is not None]
        rows.append([client, kind, len(sel), f"{percentile(secs, 50) * 1e3:.0f}",
                     f"{percentile(secs, 95) * 1e3:.0f}", f"{max(secs) * 1e3:.0f}",
                     f"{percentile(runs, 50) * 1e3:.0f}" if runs else "",
                     f"{percentile(runs, 95) * 1e3:.0f}" if runs else ""])
    return rows


def _by_dataset(outcome):
    rows = []
    load = [a for a in outcome.actions if a.phase == "load" and a.error is None
            and a.seconds is not None]
    for client, name in sorted({(a.client, a.dataset) for a in load}):
        secs = [a.seconds for a in load if a.dataset == name and a.client == client]
        rows.append([client, name, len(secs), f"{percentile(secs, 50) * 1e3:.0f}",
                     f"{percentile(secs, 95) * 1e3:.0f}"])
    return rows


def _describe(settings):
    """Who the sessions were, in words."""
    if settings.client == "browser":
        return f"{settings.sessions} Chromium session" + "s" * (settings.sessions != 1)
    text = f"{settings.sessions} websocket client" + "s" * (settings.sessions != 1)
    if settings.browsers:
        text += f" and {settings.browsers} Chromium session(s) beside them"
    return text


def report(outcome, command=None):
    """The Markdown report of a run."""
    s, st = summary(outcome), outcome.settings
    mib = lambda b: f"{b / 2**20:.0f} MiB"  # noqa: E731
    verdict = lambda ok: "yes" if ok else "**no**"  # noqa: E731
    ms = lambda a, b: f"{a * 1e3:.0f} / {b * 1e3:.0f} ms"  # noqa: E731
    n = total_sessions(st)
    browser = st.client == "browser"
    charts = ("time to updated charts (drawn in the browser), UCI, p50 / p95" if browser else
              "time to updated charts (every chart's message received), UCI, p50 / p95")
    head = [
        ["sessions held to the end", f"{outcome.sessions_held} / {n}", f"{n}",
         verdict(outcome.sessions_held == n)],
        ["measured load (after a warm-up of " f"{outcome.warm_seconds:.0f} s)",
         f"{outcome.load_seconds:.0f} s", "120 s", verdict(outcome.load_seconds >= 120)],
        ["slider moves served (all / after warm-up)",
         f"{s['slider_moves']} / {s['slider_moves_load']}", "", ""],
        ["dataset switches (select box) / links opened", f"{s['dataset_switches']} / {s['links']}",
         "", ""],
        ["distinct parameter sets served", s["distinct"], "≥ 500", verdict(s["distinct"] >= 500)],
        [charts, ms(s["p50_uci"], s["p95_uci"]), "p95 < 1000 ms", verdict(s["p95_uci"] < 1.0)],
    ]
    if browser:
        head.append(["server's part alone (websocket), UCI, p50 / p95",
                     ms(s["server_p50_uci"], s["server_p95_uci"]), "", ""])
    if s["browser_n"]:
        head.append([f"the Chromium session(s) beside them: time to drawn charts, UCI, "
                     f"p50 / p95 (n = {s['browser_n']})",
                     ms(s["browser_p50_uci"], s["browser_p95_uci"]), "", ""])
    head += [
        ["errors (page + time-outs + server-log tracebacks)",
         f"{len(s['action_errors'])} + {outcome.server_log_tracebacks}", "0",
         verdict(s["errors"] == 0)],
        ["server RSS at start (idle) / after warm-up / at end",
         f"{mib(outcome.rss_start)} / {mib(outcome.rss_warm)} / {mib(outcome.rss_end)}", "", ""],
        ["RSS growth, warm-up → end", mib(s["rss_growth"]), "< 200 MiB",
         verdict(s["rss_growth"] < 200 * 2**20)],
        ["peak RSS", mib(max((r for _, r in outcome.rss), default=0)), "", ""],
        ["server alive at the end; a fresh session's Explorer",
         ("yes" if outcome.server_alive else "no") + "; " + (
             f"FAILED: {outcome.final_error}" if outcome.final_error is not None
             else "not checked" if outcome.final_seconds is None
             else f"clean, drawn in {outcome.final_seconds:.1f} s"), "yes; clean",
         verdict(outcome.server_alive and outcome.final_error is None
                 and outcome.final_seconds is not None)],
        ["most TCP connections to the server (websockets and HTTP)", s["max_connections"],
         "", ""],
    ]
    lines = ["# Load and memory test of the dashboard", ""]
    if command:
        lines += ["Command:", "", f"```\n{command}\n```", ""]
    lines += [f"Machine: {machine()}", "",
              f"Settings: {_describe(st)}, {st.warmup:g} s warm-up then {st.duration:g} s "
              f"measured; datasets {', '.join(st.datasets)} (binary, l = {st.n_trees}, split "
              f"seed {st.seed}); action mix " + ", ".join(f"{k} {w:.0%}" for k, w in ACTIONS)
              + f"; after each served action a session waits {st.think[0]:g}–{st.think[1]:g} s "
              f"(uniform) before the next; session choices seeded with {st.rng_seed}; action "
              f"time-out {st.action_timeout:g} s; the load continues past {st.duration:g} s "
              f"until {st.min_distinct} distinct parameter sets were served (at most "
              f"{st.max_extra:g} s more); server started with {outcome.server_setup}; wall "
              f"time {outcome.wall:.0f} s.", "",
              table(["figure", "measured", "target", "met"], head), "",
              "Time to updated charts by session kind and action (after warm-up; ms). For "
              "websocket clients it ends when the run's `script_finished` message arrives; for "
              "browsers when the charts are drawn, and \"server\" is the browser's "
              "`rerun_script` message to the server's `script_finished` message on its "
              "websocket:", "",
              table(["client", "action", "n", "p50", "p95", "max", "server p50", "server p95"],
                    _by_kind(outcome)), "", "By dataset (after warm-up; ms):", "",
              table(["client", "dataset", "n", "p50", "p95"], _by_dataset(outcome)), ""]
    loads = [x for _, x in outcome.load_average]
    wall = outcome.warm_seconds + outcome.load_seconds
    lines += [f"1-minute load average over the run: min {min(loads, default=float('nan')):.1f}, "
              f"mean {np.mean(loads) if loads else float('nan'):.1f}, max "
              f"{max(loads, default=float('nan')):.1f} (2 cores). CPU seconds used during the "
              f"{wall:.0f} s of sessions: server {outcome.cpu_server:.0f}, Chromium and "
              f"Playwright's driver {outcome.cpu_other:.0f}, this harness (with the websocket "
              f"clients) {outcome.cpu_harness:.0f} (of {2 * wall:.0f} available on 2 cores).",
              ""]
    every = max(1, len(outcome.rss) // 20)
    trace = ", ".join(f"{t:.0f}s {r / 2**20:.0f}" for t, r in outcome.rss[::every])
    lines += [f"Server RSS over time (s after the sessions start, MiB): {trace}.", ""]
    if s["action_errors"] or outcome.session_failures:
        lines += ["Errors:", ""]
        lines += [f"- session {a.session} ({a.client}), {a.phase}, {a.kind} on {a.dataset}: "
                  f"{a.error}" for a in s["action_errors"][:30]]
        lines += [f"- {f}" for f in outcome.session_failures]
        lines.append("")
    if outcome.server_log_tracebacks:
        lines += ["Server log (tail):", "", "```", outcome.server_log_tail, "```", ""]
    return "\n".join(lines)


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--duration", type=float, default=120.0,
                        help="seconds of measured load after the warm-up")
    parser.add_argument("--warmup", type=float, default=30.0)
    parser.add_argument("--datasets", default=",".join(UCI),
                        help="comma-separated dataset names (default: the 10 UCI datasets)")
    parser.add_argument("--trees", type=int, default=200, help="pool size l")
    parser.add_argument("--rng-seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=180.0,
                        help="seconds an action may take before it counts as an error")
    parser.add_argument("--min-distinct", type=int, default=500,
                        help="continue past --duration until this many distinct parameter sets "
                             "were served (at most --max-extra seconds more)")
    parser.add_argument("--max-extra", type=float, default=300.0)
    parser.add_argument("--client", choices=("ws", "browser"), default="ws",
                        help="sessions as websocket clients (default) or Chromium browsers")
    parser.add_argument("--browsers", type=int, default=0,
                        help="with --client ws: this many Chromium sessions beside the clients")
    parser.add_argument("--think", default="0.5,2.5",
                        help="LOW,HIGH: seconds a session waits after each served action "
                             "(uniform; 0,0 for none)")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="extra `streamlit run` config flag, e.g. runner.postScriptGC=true "
                             "(repeatable; to compare settings)")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="extra environment variable for the server, e.g. "
                             "MALLOC_ARENA_MAX=8 (repeatable)")
    parser.add_argument("--out", help="write the Markdown report to this file")
    parser.add_argument("--quick", action="store_true",
                        help="3 sessions, 20 s, wine and sonar, l = 20")
    args = parser.parse_args(argv)
    try:
        low, high = (float(x) for x in args.think.split(","))
    except ValueError:
        parser.error(f"--think takes LOW,HIGH in seconds, e.g. 0.5,2.5 (got {args.think!r})")
    if not 0 <= low <= high:
        parser.error(f"--think needs 0 <= LOW <= HIGH (got {args.think!r})")
    pairs = {}
    for flag in ("option", "env"):
        pairs[flag] = [tuple(item.split("=", 1)) for item in getattr(args, flag)]
        if any(len(p) != 2 or not p[0] for p in pairs[flag]):
            parser.error(f"--{flag} takes NAME=VALUE (got {getattr(args, flag)})")
    options = tuple(x for name, value in pairs["option"] for x in (f"--{name}", value))
    common = dict(rng_seed=args.rng_seed, action_timeout=args.timeout, client=args.client,
                  browsers=args.browsers, think=(low, high), options=options,
                  env=tuple(pairs["env"]))
    if args.quick:
        settings = Settings(sessions=3, duration=20, warmup=8, datasets=("wine", "sonar"),
                            n_trees=20, **common)
    else:
        settings = Settings(sessions=args.sessions, duration=args.duration, warmup=args.warmup,
                            datasets=tuple(args.datasets.split(",")), n_trees=args.trees,
                            min_distinct=args.min_distinct, max_extra=args.max_extra, **common)
    outcome = run_load(settings)
    command = " ".join(["python -m benchmarks.load"] + list(sys.argv[1:] if argv is None else argv))
    cache = os.environ.get("SDWEC_CACHE_DIR")
    if cache:
        command = f"SDWEC_CACHE_DIR={cache} " + command
    text = report(outcome, command)
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    return 0 if summary(outcome)["errors"] == 0 and outcome.final_error is None else 1


if __name__ == "__main__":
    sys.exit(main())
