"""Browser latency of the Explorer: from an input event to every chart drawn, in real Chromium.

One Chromium (Debian's, driven by Playwright) opens the Explorer of one or more app checkouts
(``--app-dir``, repeatable; each served by its own ``streamlit run app.py``), one tab per
checkout, used one at a time.  For every dataset and every control it measures the time from
the input event until every chart of the Explorer shows the new data:

* **λ, β, γ, ε, k**: one arrow-key press on the sidebar slider (one step, the way
  ``tests/test_browser.py`` moves a slider).  Each slider walks in one direction from the
  start configuration, so every move asks for a solution the server has not computed (its
  caches are keyed on the whole configuration); it turns back only at the end of its range.
* **switch**: the sidebar's dataset select box, typed and committed with Enter, from a
  partner dataset back to the measured one.  Before each switch, untimed, the tab switches to
  the partner and moves k one step there, so the measured dataset comes back with a
  configuration it has not solved: its pool is in the server's memory, its solve is not.
* **load**: a fresh page load of a shared link (a new Streamlit session) whose query string
  sets a whole configuration, drawn from a generator seeded by (dataset, sample), the same for
  every checkout.  The pool is in the server's memory.
* **first load** (one sample per dataset and checkout, reported apart): the first page load
  of the dataset in that server, which reads the pool from the disk cache.

**When is the page drawn?**  The page records, from an init script, every websocket message
it receives (time, size, top-level type), every key press (the keydown event's timestamp: the
slider and the select box act on keydown, and under load the release can come after the
rerun has started), and every
``plotly_afterplot`` event of every chart with the data it drew, and the second animation
frame after it (by then the frame holding the new chart has been rendered: an upper bound on
the paint, within one frame).  A move is over when the server has finished its last run after
the event (``script_finished``) and Streamlit's running indicator is gone.  The charts the run
changed are then known exactly: the run's messages are decoded (Streamlit's protobuf) and each
chart element's content hash is compared with the previous run's of the same chart: the one
with the same key (the element's id ends with its user key), else the one at the same place
on the page (an element shown or hidden above the charts moves them).  An unchanged chart is
not redrawn (Streamlit gives a Plotly chart an element id derived from its figure; the
in-place chart component skips a figure it has drawn), and need not be.  A sample's time is
the later of the run's end (``script_finished`` received) and the paint of **every changed
chart's first draw of the figure the run sent** (the first ``afterplot`` after the event whose
trace x/y data equal the sent figure's).  Every chart, changed or not, must show the run's
figure at the end, or the sample is recorded with a problem (and left out of the statistics).
After a page load or a dataset switch every chart counts as changed.  "settled" is the last
redraw before the page went quiet (Streamlit draws a changed chart twice: once with the new
figure, again when the chart's figure state updates; the user sees the first).

Besides the latency, each sample records the server's CPU seconds (psutil, the streamlit
process and its children) and the browser's (every Chromium process), from just before the
input to the quiet page; the bytes received on the websocket; and the phases seen by the page:
input → the server's run starts (``new_session`` received; includes the slider's debounce),
the run (until ``script_finished``), the changed charts drawn, painted, settled.

Checkouts are interleaved per (dataset, control), their order alternating, so that the load
of the (shared) machine falls on each alike; every ratio is later / first checkout, measured
in the same run.  **Where the time goes**: for one λ move on sonar and one on NSL-KDD (when
in the run) and each checkout, a Chromium performance trace (main-thread time by kind:
scripting, style and layout, paint, GC) and a V8 CPU profile (JavaScript self time by script:
Plotly's chunk, Streamlit's bundle, JSON parsing) of the same move, plus the websocket bytes
per chart.

**The floor** (``--floor``): the last checkout's ``benchmarks/floor/app.py``, timed as one more
checkout.  It is the Explorer with everything but its sidebar, its solve and its four charts
taken out, so it shows how fast a slider move can be while every move is a Streamlit rerun of
this sidebar and these charts: no trimming of the Explorer's other content can go below it.

Run ``python -m benchmarks.browser --help``; the committed report came from the command in
``results/browser.md``'s header.
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from harness.common import (
    CHART_COMPONENT,
    CHART_CONTAINERS,
    CHARTS,
    load_average,
    machine,
    percentile,
    table,
)
from harness.load import LAUNCH_ARGS, UCI, Server

ROOT = Path(__file__).resolve().parent.parent
DATASETS = UCI + ("nsl_kdd",)
#: Datasets whose λ move is traced and profiled (when in the run).
TRACED = ("sonar", "nsl_kdd")
VIEWPORT = {"width": 1400, "height": 1000}
#: Sidebar sliders: URL key -> (label, column header).
SLIDERS = {"lam": ("λ (data fidelity, log scale)", "λ"),
           "beta": ("β (non-negativity penalty)", "β"),
           "gamma": ("γ (log-sum-exp sharpness)", "γ"), "eps": ("ε (log scale)", "ε"),
           "k": ("Iterations k", "k")}
CONTROLS = tuple(SLIDERS) + ("switch", "load")
HEADERS = {**{k: v[1] for k, v in SLIDERS.items()}, "switch": "switch", "load": "load"}
#: Where the sliders start: the paper's SDWEC-B but λ, which starts at SDWEC-A's 0.1 so that
#: its walk (up, where there is more room) crosses the range where the weights change, and ε,
#: which starts one step above SDWEC-B's 1 so that its walk down has room for 10 moves.
START = {"lam": "0.1", "beta": "15", "gamma": "15", "eps": "2", "k": "25", "thr": "paper"}
QUIET_MS = 250  # the page counts as settled after this long without a message or a redraw
ACTION_TIMEOUT = 300.0  # seconds; a first NSL-KDD load on a busy machine reads 90 MB
KEYED_TIMEOUT = 120.0  # seconds for a key press's run, and for charts to draw after a run

# --------------------------------------------------------------------------- in the page

#: Installed before any page script.  Records every websocket message (time, size, top-level
#: ForwardMsg field, the bytes), every key press, and every ``plotly_afterplot`` with the data
#: drawn.  Plotly gives each chart div its own ``emit`` (``Events.init``); a setter on
#: ``HTMLElement.prototype`` catches that assignment and wraps it, so the very first draw of a
#: chart is seen too.  Times are epoch milliseconds (``performance.timeOrigin`` + ``now``), so
#: they compare with this process's clock across page loads.
INIT_JS = r"""
(() => {
  const now = () => performance.timeOrigin + performance.now();
  const S = window.__bench = {msgs: [], keys: [], lastDraw: 0, lastMsg: 0};
  Object.defineProperty(HTMLElement.prototype, 'emit', {
    configurable: true,
    get() { return undefined; },
    set(fn) {
      const gd = this;
      Object.defineProperty(gd, 'emit', {configurable: true, writable: true, value(name, arg) {
        if (name === 'plotly_afterplot') {
          // [drawn, data, painted]: "painted" is the second animation frame after the
          // draw, so the frame holding the new chart has been rendered by then.
          const t = now(), entry = [t, gd.data, null];
          (gd.__benchDraws = gd.__benchDraws || []).push(entry);
          S.lastDraw = t;
          S.pending = (S.pending || 0) + 1;
          requestAnimationFrame(() => requestAnimationFrame(() => {
            entry[2] = now();
            S.lastDraw = Math.max(S.lastDraw, entry[2]);
            S.pending -= 1;
          }));
        }
        return fn.call(this, name, arg);
      }});
    }});
  // A key's input time is its keydown event's timestamp (when the browser created the event):
  // the slider and the select box act on keydown, and a release can come after the rerun.
  window.addEventListener('keydown', (ev) => {
    S.keys.push(performance.timeOrigin + ev.timeStamp);
    performance.mark('bench-input');
  }, true);
  // Top-level field of a ForwardMsg (its oneof "type"; 6 = script_finished, with its status).
  const kind = (buf) => {
    const b = new Uint8Array(buf);
    let i = 0, type = 0, status = -1;
    const varint = () => {
      let x = 0, s = 1, c;
      do { c = b[i++]; x += (c & 0x7f) * s; s *= 128; } while ((c & 0x80) && i < b.length);
      return x;
    };
    while (i < b.length) {
      const tag = varint(), f = Math.floor(tag / 8), w = tag % 8;
      if (w === 0) { const v = varint(); if (f === 6) { type = 6; status = v; } }
      else if (w === 2) { const n = varint(); i += n; if (f !== 1 && f !== 2) type = f; }
      else if (w === 5) i += 4;
      else if (w === 1) i += 8;
      else break;
    }
    return [type, status];
  };
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      S.msgs = [];
      this.addEventListener('message', (ev) => {
        const t = now(), d = ev.data;
        if (d instanceof ArrayBuffer) {
          const [type, status] = kind(d);
          S.msgs.push({t, n: d.byteLength, type, status, data: d});
        } else {
          S.msgs.push({t, n: d.size || d.length || 0, type: -1, status: -1, data: null});
        }
        S.lastMsg = t;
      });
    }
  };
})();
"""

#: Forget what came before an action (the page is quiet when this runs).
MARK_JS = f"""
() => {{
  const S = window.__bench;
  if (!S) return null;
  S.msgs = [];
  for (const gd of document.querySelectorAll('{CHARTS}')) gd.__benchDraws = [];
  return S.keys.length;
}}
"""

#: The last run after the mark has finished and Streamlit shows it as over.
DONE_JS = """
() => {
  const S = window.__bench;
  if (!S) return false;
  const m = S.msgs;
  let start = -1;
  for (let i = m.length - 1; i >= 0; i--) if (m[i].type === 4) { start = i; break; }
  if (start < 0) return false;
  let finished = false;
  for (let i = start + 1; i < m.length; i++)
    if (m[i].type === 6 && (m[i].status === 0 || m[i].status === 3)) finished = true;
  if (!finished) return false;
  if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
  const app = document.querySelector('[data-testid="stApp"]');
  return !(app && app.getAttribute('data-test-script-state') === 'running');
}
"""

#: Quiet: no message and no redraw for ``ms``, and every chart container holds a drawn chart
#: (on a fresh page Plotly's 4.7 MB chunk loads after the run is over).
QUIET_JS = f"""
(ms) => {{
  const S = window.__bench;
  const t = performance.timeOrigin + performance.now();
  return !S.pending && t - Math.max(S.lastDraw, S.lastMsg) >= ms
    && document.querySelectorAll('{CHART_CONTAINERS}').length
       === document.querySelectorAll('{CHARTS}').length;
}}
"""

#: What happened since the mark: messages (with ``true``, the last run's element messages as
#: base64), key presses, the charts' draw times, problems on the page.
COLLECT_JS = f"""
(withData) => {{
  const S = window.__bench;
  const b64 = (buf) => {{
    const b = new Uint8Array(buf);
    let s = '';
    for (let i = 0; i < b.length; i += 0x8000)
      s += String.fromCharCode.apply(null, b.subarray(i, i + 0x8000));
    return btoa(s);
  }};
  let start = -1;
  for (let i = S.msgs.length - 1; i >= 0; i--) if (S.msgs[i].type === 4) {{ start = i; break; }}
  const msgs = S.msgs.map((m, i) => ({{t: m.t, n: m.n, type: m.type, status: m.status,
    data: (withData && i >= start && (m.type === 5 || m.type === 11) && m.data)
      ? b64(m.data) : null}}));
  const charts = Array.from(document.querySelectorAll('{CHARTS}')).map(
    gd => (gd.__benchDraws || []).map(d => d[0]));
  return {{
    msgs, charts, keys: S.keys.length, key: S.keys[S.keys.length - 1],
    url: location.href,
    exception: document.querySelectorAll('[data-testid="stException"]').length,
    errors: Array.from(document.querySelectorAll('[data-testid="stAlertContentError"]'))
      .map(e => e.innerText.slice(0, 300)),
    traceback: document.body.textContent.includes('Traceback'),
  }};
}}
"""

#: A chart's identity for "shows this figure": its traces' x and y as JSON (Plotly adds
#: private keys such as ``_inputArray`` to typed-array specs; they are left out).
_FP = """
const fp = (data) => JSON.stringify((data || []).map(t => [t.x, t.y]),
                                    (k, v) => (k[0] === '_' ? undefined : v));
"""

#: Remember the fingerprints of the figures the run sent (one per chart, DOM order).
WANT_JS = f"""
(specs) => {{
  {_FP}
  window.__benchSpecs = specs;
  window.__bench.want = specs.map(s => (s === null ? null : fp(JSON.parse(s).data)));
}}
"""

#: Every chart shows the run's figure, and every changed chart drew it after ``t0``.
READY_JS = f"""
([changed, t0]) => {{
  {_FP}
  const want = window.__bench.want;
  const gds = Array.from(document.querySelectorAll('{CHARTS}'));
  if (gds.length !== want.length) return false;
  return gds.every((gd, i) => want[i] === null || (fp(gd.data) === want[i]
    && (!changed.includes(i)
        || (gd.__benchDraws || []).some(d => d[0] >= t0 && d[2] !== null
                                               && fp(d[1]) === want[i]))));
}}
"""

#: Per chart: the first draw after ``t0`` that showed the run's figure, and whether the chart
#: shows it now.
MATCH_JS = f"""
(t0) => {{
  {_FP}
  const want = window.__bench.want;
  const gds = Array.from(document.querySelectorAll('{CHARTS}'));
  return want.map((w, i) => {{
    const gd = gds[i];
    if (!gd || w === null) return {{first: null, shows: null}};
    const draws = gd.__benchDraws || [];
    const hit = draws.find(d => d[0] >= t0 && fp(d[1]) === w);
    return {{first: hit ? hit[0] : null, painted: hit ? hit[2] : null,
             shows: fp(gd.data) === w, after: draws.filter(d => d[0] >= t0).length,
             before: draws.some(d => d[0] < t0 && fp(d[1]) === w)}};
  }});
}}
"""


# --------------------------------------------------------------------------- processes


@dataclass
class App:
    """One checkout of the dashboard under test, and the script its server runs."""

    label: str
    directory: Path
    commit: str = ""
    script: str = "app.py"

    @property
    def floor(self):
        """Whether this is a checkout's floor page (:data:`FLOOR_SCRIPT`), not its app."""
        return self.script == FLOOR_SCRIPT


def describe_checkout(directory):
    """``git`` commit (short hash, subject, and "+ changes" if the tree is dirty) of a checkout."""
    def git(*args):
        try:
            return subprocess.run(["git", "-C", str(directory), *args], capture_output=True,
                                  text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    head = git("log", "-1", "--format=%h %s")
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return (head[:90] or "not a git checkout") + (" (+ uncommitted changes)" if dirty else "")


#: The Explorer's floor page (``--floor``): its sidebar, solve and four charts, nothing else.
FLOOR_SCRIPT = "benchmarks/floor/app.py"


def make_apps(directories, floor=False):
    """:class:`App` per directory, labelled by its folder name (made unique); with ``floor``,
    then the last checkout's floor page (:data:`FLOOR_SCRIPT`), labelled "<label> floor"."""
    apps, seen = [], {}
    for d in directories:
        path = Path(d).resolve()
        if not (path / "app.py").is_file():
            raise SystemExit(f"--app-dir {d}: no app.py there; give a checkout of this project")
        name = path.name
        seen[name] = seen.get(name, 0) + 1
        label = name if seen[name] == 1 else f"{name}-{seen[name]}"
        apps.append(App(label, path, describe_checkout(path)))
    if floor:
        last = apps[-1]
        if not (last.directory / FLOOR_SCRIPT).is_file():
            raise SystemExit(f"--floor: {last.directory} has no {FLOOR_SCRIPT}")
        apps.append(App(f"{last.label} floor", last.directory, last.commit, FLOOR_SCRIPT))
    return apps


def warm_pools(app, datasets, n_trees, cache_dir, extra=(), log=print):
    """Put the pools the run reads in the disk cache, with ``app``'s own ``sdwec``.

    Runs in a subprocess whose import path starts at the checkout, so each checkout reads and
    writes the cache format of its own code.  ``extra`` are more ``(dataset, n_trees)`` pairs.
    """
    jobs = [(name, n_trees) for name in datasets] + list(extra)
    code = ("import sys, time\nsys.path.insert(0, sys.argv[1])\n"
            "from sdwec.pool import load_pool\n"
            "for job in sys.argv[2:]:\n"
            "    name, l = job.split(':'); t = time.perf_counter()\n"
            "    load_pool(name, 'binary', n_trees=int(l), seed=0)\n"
            "    print(f'  {name} l={l}: {time.perf_counter() - t:.1f} s', flush=True)\n")
    env = dict(os.environ, SDWEC_CACHE_DIR=str(cache_dir))
    log(f"warming the pool cache for {app.label} ({len(jobs)} pools)")
    done = subprocess.run([sys.executable, "-c", code, str(app.directory)]
                          + [f"{n}:{l}" for n, l in jobs], cwd=app.directory, env=env,
                          capture_output=True, text=True)
    for line in done.stdout.splitlines():
        log(line)
    if done.returncode != 0:
        raise RuntimeError(f"warming {app.label}'s pools failed:\n{done.stderr[-3000:]}")


class AppServer(Server):
    """``streamlit run app.py`` in a checkout, on loopback (:class:`harness.load.Server`,
    as ``scripts/dashboard.sh`` starts it: ``MALLOC_ARENA_MAX=2``, no file watching), with
    the CPU seconds it has used."""

    def __init__(self, app, cache_dir, log_dir):
        # The floor page lives below the checkout: put the checkout on its import path.
        env = {"PYTHONPATH": str(app.directory)} if app.floor else {}
        super().__init__(cache_dir=cache_dir, log_dir=log_dir, cwd=app.directory,
                         script=app.script, env=env,
                         log_name=f"server-{app.label.replace(' ', '-')}.log",
                         start_timeout=120)
        self.app = app

    def cpu(self):
        """CPU seconds of the server process and its children so far."""
        import psutil

        try:
            t = psutil.Process(self.proc.pid).cpu_times()
            return t.user + t.system + t.children_user + t.children_system
        except psutil.NoSuchProcess:
            return 0.0


def browser_cpu():
    """CPU seconds used so far by every Chromium process (``pid -> seconds``)."""
    import psutil

    out = {}
    for p in psutil.Process().children(recursive=True):
        try:
            if p.name().startswith("chrom"):
                t = p.cpu_times()
                out[p.pid] = t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return out


def _cpu_delta(before, after):
    # A renderer that ended between the two readings is lost; one that started counts whole.
    return sum(v - before.get(pid, 0.0) for pid, v in after.items())


# --------------------------------------------------------------------------- samples


@dataclass
class Sample:
    """One action and what the page showed after it (times in ms from the input event)."""

    app: str
    dataset: str
    control: str  # a key of SLIDERS, "switch", "load", "first" or "warm-up"
    timed: bool  # False: a step that sets the page up for the next sample
    ms: float | None = None  # input -> every changed chart painted and the run over
    start_ms: float | None = None  # input -> the server's run starts (new_session received)
    finished_ms: float | None = None  # input -> script_finished received
    charts_ms: float | None = None  # input -> the last changed chart drawn (afterplot)
    painted_ms: float | None = None  # input -> the frame after its paint (two frames later)
    settled_ms: float | None = None  # input -> the last redraw before the page went quiet
    runs: int = 0  # script runs started after the input
    messages: int = 0
    bytes: int = 0  # websocket bytes received after the input
    chart_bytes: list = field(default_factory=list)  # bytes of each chart's message (DOM order)
    charts: int = 0  # charts on the page at the end
    changed: list = field(default_factory=list)  # indices of the charts the run changed
    drawn: list = field(default_factory=list)  # indices of changed charts that drew the new data
    server_cpu: float = 0.0
    browser_cpu: float = 0.0
    url: str = ""
    expected: dict = field(default_factory=dict)  # query values the page must show
    value: str = ""  # the control's new value
    cold: bool = False  # first load: the pool came from disk, not the server's memory
    load_average: float = 0.0
    problems: list = field(default_factory=list)

    @property
    def ok(self):
        return not self.problems and self.ms is not None


def _chart_spec(element, kind):
    """The figure JSON of a chart element: Streamlit's Plotly element, or the in-place chart
    component of ``dashboard/charts.py`` (its data's ``spec``); ``None`` for anything else."""
    if kind == "plotly_chart":
        return element.plotly_chart.spec
    if kind == "bidi_component" and element.bidi_component.component_name == CHART_COMPONENT:
        return json.loads(element.bidi_component.json)["spec"]
    return None


def _chart_identity(element, kind, path):
    """What names a chart across reruns: its user key, which Streamlit appends to the
    element's id (``$$ID-<hash>-<key>``, ``None`` when there is none), else its delta path.

    The path alone is not enough: an element shown or hidden above the charts (the first
    load's training progress, the warning that the ensemble abstains) moves every chart below
    it to another path, while a keyed chart keeps its element, and what it drew, across the
    move."""
    element_id = getattr(element, kind).id
    key = element_id.split("-", 2)[2] if element_id.count("-") >= 2 else "None"
    return ("key", key) if key != "None" else ("path", path)


def _chart_messages(msgs, start, known):
    """Chart elements of the run starting at ``msgs[start]``: ``{delta path: (hash, spec,
    bytes, identity)}`` for Plotly charts in the main area (identity: see
    :func:`_chart_identity`).  ``known`` maps message hashes to ``(element type, spec,
    identity)`` across the session, to resolve Streamlit's cached-message references
    (``ref_hash``)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    charts, unknown = {}, 0
    for m in msgs[start:]:
        if not m["data"]:
            continue
        msg = ForwardMsg.FromString(base64.b64decode(m["data"]))
        path = tuple(msg.metadata.delta_path)
        if msg.WhichOneof("type") == "delta":
            if msg.delta.WhichOneof("type") != "new_element":
                continue
            element = msg.delta.new_element
            kind = element.WhichOneof("type")
            spec = _chart_spec(element, kind)
            identity = None
            if spec is not None:
                identity = _chart_identity(element, kind, path)
                kind = "plotly_chart"
            if msg.hash:
                known[msg.hash] = (kind, spec, identity)
            digest = msg.hash
        elif msg.WhichOneof("type") == "ref_hash":
            if msg.ref_hash not in known:
                unknown += 1
                continue
            kind, spec, identity = known[msg.ref_hash]
            digest = msg.ref_hash
        else:
            continue
        if kind == "plotly_chart" and path and path[0] == 0:
            if identity[0] == "path":  # a cached chart without a key is where it is now
                identity = ("path", path)
            charts[path] = (digest, spec, m["n"], identity)
    return charts, unknown


def _problems_on_page(state):
    problems = []
    if state["traceback"]:
        problems.append("'Traceback' on the page")
    if state["exception"]:
        problems.append(f"{state['exception']} exception box(es)")
    problems += [f"st.error: {text}" for text in state["errors"]]
    return problems


def query_of(url):
    """The page address's query string as a flat dict."""
    return {k: v[-1] for k, v in parse_qs(urlparse(url).query).items()}


class Tab:
    """One checkout's server and its tab in the shared browser; every action goes through
    :meth:`act`, which times it and checks the page after it."""

    def __init__(self, app, server, context, log=print):
        self.app = app
        self.server = server
        self.context = context
        self.page = context.new_page()
        self.log = log
        self.known = {}  # message hash -> (element type, spec, identity), for ref_hash
        self.previous = None  # the last run's charts: {identity: hash}
        self.directions = {}  # slider key -> +1 / -1
        self.seen = set()  # (dataset, l) of the pools this server has loaded
        self.page_errors = []
        self.page.on("pageerror", lambda exc: self.page_errors.append(str(exc)[:300]))

    # -- the actions

    def open(self, dataset, query, control="load", timed=True):
        """Load the Explorer from a link: ``dataset`` and the query values ``query``."""
        full = {"dataset": dataset, **query}
        url = f"{self.server.url}/?{urlencode(full)}"
        pool = (dataset, full.get("l"))
        cold = pool not in self.seen

        def go():
            t0 = time.time() * 1e3
            self.page.goto(url, wait_until="commit", timeout=ACTION_TIMEOUT * 1e3)
            return t0

        sample = self.act(dataset, control, timed, go, expected=full, all_changed=True)
        sample.cold = cold
        self.seen.add(pool)
        return sample

    def slide(self, dataset, key, timed=True):
        """One arrow-key step of the slider ``key`` (see :data:`SLIDERS`)."""
        current = query_of(self.page.url).get(key)
        value, direction = self.next_value(key, current)
        label = SLIDERS[key][0]
        thumb = self.page.locator('[data-testid="stSidebar"]').get_by_role(
            "group", name=label, exact=True).first.locator('input[type="range"]').first

        def press():
            thumb.focus(timeout=ACTION_TIMEOUT * 1e3)
            thumb.press(direction)

        sample = self.act(dataset, key, timed, press, expected={key: value}, keyed=True)
        sample.value = value
        return sample

    def switch(self, to, dataset, timed=True):
        """Choose ``to`` in the sidebar's dataset select box (typed, committed with Enter);
        the sample is filed under ``dataset``."""
        box = self.page.get_by_test_id("stSelectbox").filter(has_text="Dataset").first

        def choose():
            box.locator("input").click(timeout=ACTION_TIMEOUT * 1e3)
            self.page.keyboard.type(to)
            self.page.keyboard.press("Enter")

        sample = self.act(dataset, "switch", timed, choose, expected={"dataset": to},
                          keyed=True, all_changed=True)
        sample.value = to
        self.seen.add((to, query_of(self.page.url).get("l")))
        return sample

    def next_value(self, key, current):
        """The value one step from ``current`` on slider ``key`` and the key that goes there
        (see :func:`slider_step`); remembers the slider's direction."""
        value, direction, self.directions[key] = slider_step(key, current,
                                                             self.directions.get(key))
        return value, direction

    # -- timing and checking

    def act(self, dataset, control, timed, do, expected, keyed=False, all_changed=False):
        """Do ``do()``, wait until the page is drawn and quiet, and return the :class:`Sample`.

        ``keyed``: the input event is the last key pressed in the page; otherwise ``do``
        returns the event's time (epoch ms).  ``all_changed``: every chart counts as changed
        (a new page, another dataset).

        Nothing is read from the page until the run is over and the page quiet, so that the
        harness does not compete with the drawing it times; the draws' times were recorded by
        the page itself.
        """
        page = self.page
        sample = Sample(self.app.label, dataset, control, timed, expected=dict(expected),
                        load_average=os.getloadavg()[0])
        self.page_errors.clear()
        page.bring_to_front()
        keys = page.evaluate(MARK_JS) or 0
        cpu0, browser0 = self.server.cpu(), browser_cpu()
        try:
            t0 = do()
            # A first load may read a large pool; a key press that starts no run is an error
            # sooner.
            page.wait_for_function(DONE_JS, polling=50,
                                   timeout=(KEYED_TIMEOUT if keyed else ACTION_TIMEOUT) * 1e3)
            self._quiet(page, sample)
            state = page.evaluate(COLLECT_JS, True)
            if keyed:
                if state["keys"] <= keys:
                    raise RuntimeError("no key press seen in the page")
                t0 = state["key"]
            changed = self._run(sample, state, t0, all_changed)
            try:  # normally true at once; a chart still to draw is waited for (bounded)
                page.wait_for_function(READY_JS, arg=[changed, t0], polling=100,
                                       timeout=KEYED_TIMEOUT * 1e3)
            except PlaywrightTimeout:  # recorded chart by chart below
                pass
            self._quiet(page, sample)
            state = page.evaluate(COLLECT_JS, False)
        except Exception as exc:  # noqa: BLE001 -- a failed action is recorded, not fatal
            sample.problems.append(f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
            self.previous = None
            self.log(f"  {self.app.label} {dataset} {control}: {sample.problems[-1]}")
            return sample
        sample.server_cpu = self.server.cpu() - cpu0
        sample.browser_cpu = _cpu_delta(browser0, browser_cpu())
        self._draws(sample, state, t0, changed)
        sample.problems += _problems_on_page(state)
        sample.problems += [f"page error: {e}" for e in self.page_errors]
        sample.url = state["url"]
        shown = query_of(state["url"])
        wrong = {k: (v, shown.get(k)) for k, v in expected.items()
                 if not _same(shown.get(k), v)}
        if wrong:
            sample.problems.append(f"the address did not follow: (asked, shown) {wrong}")
        if sample.problems:
            self.log(f"  {self.app.label} {dataset} {control}: {'; '.join(sample.problems)}")
        return sample

    @staticmethod
    def _quiet(page, sample):
        try:
            page.wait_for_function(QUIET_JS, arg=QUIET_MS, timeout=30_000, polling=50)
        except Exception:  # noqa: BLE001 -- a page that keeps redrawing: measured as it is
            sample.problems.append(f"the page did not go quiet for {QUIET_MS} ms within 30 s")

    def _run(self, sample, state, t0, all_changed):
        """Read the messages after the input: the run's phases and bytes, and its charts
        (decoded; the page is told their figures).  Returns the indices of the charts the
        last run changed."""
        msgs = state["msgs"]
        starts = [i for i, m in enumerate(msgs) if m["type"] == 4]
        start = starts[-1]
        finish = next(m for m in msgs[start:] if m["type"] == 6 and m["status"] in (0, 3))
        sample.runs, sample.messages = len(starts), len(msgs)
        sample.bytes = sum(m["n"] for m in msgs)
        sample.start_ms = msgs[starts[0]]["t"] - t0
        sample.finished_ms = finish["t"] - t0
        charts, unknown = _chart_messages(msgs, start, self.known)
        if unknown:
            sample.problems.append(f"{unknown} cached message(s) could not be resolved")
        paths = sorted(charts)  # the charts' order on the page
        previous = None if all_changed else self.previous
        sample.changed = changed_charts(charts, previous)
        sample.chart_bytes = [charts[p][2] for p in paths]
        self.previous = {charts[p][3]: charts[p][0] for p in paths}
        self.page.evaluate(WANT_JS, [charts[p][1] for p in paths])
        return sample.changed

    def _draws(self, sample, state, t0, changed):
        """When each changed chart first showed the run's figure; the sample's times."""
        sample.charts = len(state["charts"])
        if len(sample.chart_bytes) != sample.charts:
            sample.problems.append(f"the run sent {len(sample.chart_bytes)} charts, the page "
                                   f"has {sample.charts}")
        drawn, painted = [], []
        for i, m in enumerate(self.page.evaluate(MATCH_JS, t0)):
            if m["shows"] is False:
                sample.problems.append(f"chart {i} does not show the figure of this run")
            if i in changed:
                if m["first"] is not None and m["painted"] is not None:
                    sample.drawn.append(i)
                    drawn.append(m["first"])
                    painted.append(m["painted"])
                else:
                    why = ("its draw was not painted" if m["first"] is not None else
                           "it drew the new figure before the input" if m["before"] else
                           f"none of its {m['after']} draws after the input showed it")
                    sample.problems.append(f"chart {i} changed but did not draw the new "
                                           f"figure: {why}")
        draws = [t for chart in state["charts"] for t in chart if t >= t0]
        sample.settled_ms = (max(draws) - t0) if draws else None
        if drawn:
            sample.charts_ms = max(drawn) - t0
            sample.painted_ms = max(painted) - t0
        if sample.drawn == changed:
            sample.ms = max([sample.finished_ms] + ([sample.painted_ms] if painted else []))


def changed_charts(charts, previous):
    """Indices (in page order) of the charts in ``charts`` (from :func:`_chart_messages`)
    whose message differs from the previous run's message of the same chart (``previous``:
    identity -> hash; ``None``: every chart counts as changed)."""
    return [i for i, p in enumerate(sorted(charts))
            if previous is None or previous.get(charts[p][3]) != charts[p][0]]


def slider_step(key, current, step=None):
    """One step of slider ``key`` from the query value ``current``.

    A slider walks one way -- ``step`` (+1 or -1), or when ``None`` towards the side of its
    range with more room -- and turns back at the end.

    Returns
    -------
    value : str
        The new query value.
    arrow : str
        ``"ArrowRight"`` or ``"ArrowLeft"``.
    step : int
        The direction taken.
    """
    from dashboard import config as grids

    grid = {"lam": grids.LAMBDA_GRID, "eps": grids.EPS_GRID}.get(key)
    if grid is None:
        low, high, width = {"beta": grids.BETA_RANGE, "gamma": grids.GAMMA_RANGE,
                            "k": grids.ITERATIONS_RANGE}[key]
        grid = [low + i * width for i in range(int(round((high - low) / width)) + 1)]
    value = float(current)
    index = min(range(len(grid)), key=lambda i: abs(grid[i] - value))
    if step is None:
        step = 1 if len(grid) - 1 - index >= index else -1
    if not 0 <= index + step < len(grid):
        step = -step
    return f"{grid[index + step]:g}", ("ArrowRight" if step > 0 else "ArrowLeft"), step


def _same(shown, asked):
    if shown is None:
        return False
    try:
        return float(shown) == float(asked)
    except ValueError:
        return shown == asked


# --------------------------------------------------------------------------- the run


@dataclass
class Settings:
    """What one run measures (see ``python -m benchmarks.browser --help``)."""

    app_dirs: tuple = (str(ROOT),)
    datasets: tuple = DATASETS
    n_trees: int = 200
    moves: int = 10  # timed samples per (checkout, dataset, control)
    warmup: int = 2  # untimed λ moves at the start of each (checkout, dataset)
    trace: bool = True  # trace and profile a λ move on the TRACED datasets
    trace_only: bool = False  # nothing but those traces
    floor: bool = False  # also time the last checkout's floor page (FLOOR_SCRIPT)
    cache_dir: str | None = None  # $SDWEC_CACHE_DIR for the servers (None: the current one)


@dataclass
class Outcome:
    settings: Settings
    apps: list
    samples: list = field(default_factory=list)
    traces: list = field(default_factory=list)
    scrubs: list = field(default_factory=list)  # the λ scrubber's frame rate (scrub_rate)
    load_start: tuple = ()
    load_end: tuple = ()
    started: str = ""
    wall: float = 0.0
    server_tracebacks: dict = field(default_factory=dict)
    server_commands: dict = field(default_factory=dict)
    command: str | None = None  # the command line, for the report's header
    trace_command: str | None = None  # the command that measured the traces, if another
    machine: str = ""


def partner_of(dataset, datasets):
    """The dataset a switch comes from: the previous one of the run (the next for the first;
    wine, or sonar for wine, when the run has one dataset)."""
    others = [d for d in datasets if d != dataset]
    if not others:
        return "sonar" if dataset == "wine" else "wine"
    i = list(datasets).index(dataset)
    return datasets[i - 1] if i > 0 else others[0]


def link_query(dataset, i, n_trees):
    """The ``i``-th shared link's configuration for ``dataset`` (seeded, the same for every
    checkout and run)."""
    from dashboard import config as grids

    rng = random.Random(f"{dataset}:{i}")
    return {"task": "binary", "seed": "0", "l": str(n_trees),
            "lam": f"{rng.choice(grids.LAMBDA_GRID):g}", "beta": str(rng.randint(0, 50)),
            "gamma": str(rng.randint(1, 50)), "eps": f"{rng.choice(grids.EPS_GRID):g}",
            "k": str(rng.randint(5, 50)), "thr": "paper"}


def start_query(n_trees):
    return {"task": "binary", "seed": "0", "l": str(n_trees), **START}


def measure(settings=None, log=print, out_json=None, command=None):
    """Run the benchmark and return an :class:`Outcome` (servers and browser always stopped).

    ``out_json``: also write the raw samples there after every dataset (a partial file
    survives an interrupted run).
    """
    from playwright.sync_api import sync_playwright

    settings = settings or Settings()
    chromium = shutil.which("chromium")
    if chromium is None:
        raise RuntimeError("Debian's chromium is missing: `apt-get install chromium` "
                           "(scripts/test.sh does this)")
    cache_dir = Path(settings.cache_dir or os.environ.get("SDWEC_CACHE_DIR")
                     or Path.home() / ".cache" / "sdwec")
    apps = make_apps(settings.app_dirs, settings.floor)
    outcome = Outcome(settings, apps, load_start=os.getloadavg(), command=command,
                      machine=machine(),
                      started=f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC")
    names = tuple(settings.datasets)
    first = names[0]
    partners = {partner_of(d, names) for d in names}
    extra = [(p, settings.n_trees) for p in sorted(partners - set(names))] + [(first, 10)]
    log_dir = Path(tempfile.mkdtemp(prefix="sdwec-browser-bench-"))
    from contextlib import ExitStack

    with sync_playwright() as playwright, ExitStack() as stack:
        # The servers' start-up (imports only: no pool is read before a page opens) overlaps
        # the pools' warming and the browser's start.
        servers = []
        for app in apps:
            server = AppServer(app, cache_dir, log_dir)
            stack.callback(server.__exit__, None, None, None)
            servers.append(server.start())
        for app in apps:
            if not app.floor:  # the floor shares its checkout's pools
                warm_pools(app, names, settings.n_trees, cache_dir, extra, log)
        begin = time.monotonic()
        browser = playwright.chromium.launch(executable_path=chromium, args=LAUNCH_ARGS)
        stack.callback(browser.close)
        for s in servers:
            s.wait_started()
            outcome.server_commands[s.app.label] = " ".join(s.command()[1:])
        tabs = []
        for app, server in zip(apps, servers):
            context = browser.new_context(viewport=VIEWPORT)
            context.add_init_script(INIT_JS)
            tab = Tab(app, server, context, log)
            # Warm-up: imports, the browser's caches, the JIT; a small pool of the first
            # dataset so that its measured pool still comes from disk.
            warm = tab.open(first, {**start_query(10)}, control="warm-up", timed=False)
            outcome.samples.append(warm)
            tabs.append(tab)
        for index, dataset in enumerate(names):
            order = tabs if index % 2 == 0 else tabs[::-1]
            if not settings.trace_only:
                log(f"{dataset} ({index + 1}/{len(names)}): "
                    f"{', '.join(t.app.label for t in order)}")
                outcome.samples += measure_dataset(order, dataset, names, settings, log)
            if settings.trace and dataset in TRACED:
                for tab in (t for t in order if not t.app.floor):  # no scrubber there
                    outcome.traces.append(trace_move(browser, tab, dataset, settings.n_trees,
                                                     log))
                    outcome.scrubs.append(scrub_rate(tab, dataset, settings.n_trees, log))
            if out_json:
                write_json(outcome, out_json)
        for s in servers:
            outcome.server_tracebacks[s.app.label] = s.log().count("Traceback")
    outcome.load_end = os.getloadavg()
    outcome.wall = time.monotonic() - begin
    if out_json:
        write_json(outcome, out_json)
    return outcome


def measure_dataset(tabs, dataset, names, settings, log=print):
    """Every control on ``dataset`` for each tab, interleaved per control (order alternating).
    """
    samples = []
    n = settings.moves
    partner = partner_of(dataset, names)

    def each(fn, flip):
        for tab in (tabs[::-1] if flip else tabs):
            fn(tab)

    # The first load of the dataset in this server (pool from disk), then the warm-up moves.
    each(lambda t: samples.append(t.open(dataset, start_query(settings.n_trees), "first",
                                         timed=True)), False)
    for _ in range(settings.warmup):
        each(lambda t: samples.append(t.slide(dataset, "lam", timed=False)), False)
    flip = False
    for key in SLIDERS:
        for _ in range(n):
            each(lambda t: samples.append(t.slide(dataset, key)), flip)
            flip = not flip
    for i in range(n):
        query = link_query(dataset, i, settings.n_trees)
        each(lambda t: samples.append(t.open(dataset, query)), flip)
        flip = not flip
    for _ in range(n):
        def one_switch(t):
            samples.append(t.switch(partner, dataset, timed=False))
            samples.append(t.slide(dataset, "k", timed=False))
            samples.append(t.switch(dataset, dataset))
        each(one_switch, flip)
        flip = not flip
    timed = [s for s in samples if s.timed and s.control != "first"]
    bad = sum(1 for s in timed if not s.ok)
    log(f"  {dataset}: {len(timed)} timed samples" + (f", {bad} with problems" if bad else ""))
    return samples


# --------------------------------------------------------------------------- trace


TRACE_CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline",
                    "disabled-by-default-devtools.timeline.frame", "blink.user_timing",
                    "v8.execute", "v8", "toplevel", "blink", "cc", "loading",
                    "disabled-by-default-v8.gc"]

#: Kinds of main-thread work (close to DevTools' "Summary"), tried in order on each trace
#: event's name; anything else (task dispatch, IPC, loading) is "other".
KINDS = (
    ("garbage collection", ("GC", "Sweep", "Scavenge", "Marking", "MinorMS")),
    ("scripting", ("FunctionCall", "RunMicrotasks", "v8.", "V8.", "EvaluateScript", "TimerFire",
                   "EventDispatch", "FireAnimationFrame", "serviceScriptedAnimations",
                   "Microtask", "SerializedScriptValue", "PostMessage", "FireIdleCallback")),
    ("style and layout", ("Style", "style", "Layout", "layout", "PrePaint", "HitTest",
                          "Intersection", "ResizeObserver", "CompositingInputs",
                          "ShapeText")),
    ("paint and composite", ("Paint", "Composit", "Raster", "Layerize", "commit", "Commit",
                             "LayerTree", "UpdateLifecycle")),
    ("HTML parse", ("ParseHTML",)),
)
KIND_NAMES = tuple(k for k, _ in KINDS) + ("other",)


def kind_of(event_name):
    """The kind of main-thread work a trace event's name stands for (see :data:`KINDS`)."""
    for kind, parts in KINDS:
        if any(part in event_name for part in parts):
            return kind
    return "other"


def _self_times(events):
    """Self time (µs) per event name on one thread, from complete ('X') events (nested)."""
    spans = sorted(((e["ts"], e["ts"] + e.get("dur", 0), e["name"]) for e in events),
                   key=lambda s: (s[0], -s[1]))
    out, stack = {}, []  # stack of [start, end, name, time of direct children]

    def close(until):
        while stack and stack[-1][1] <= until:
            start, end, name, child = stack.pop()
            out[name] = out.get(name, 0.0) + (end - start) - child
            if stack:
                stack[-1][3] += end - start

    for start, end, name in spans:
        close(start)
        if stack and end > stack[-1][1]:  # overlapping, not nested: cut to the parent
            end = stack[-1][1]
        stack.append([start, end, name, 0.0])
    close(float("inf"))
    return out


def summarise_trace(trace, window_ms):
    """Main-thread time by kind in a traced move's window (``window_ms`` from its key
    press, marked in the page as ``bench-input``).

    Returns
    -------
    dict
        ``kinds``: self ms per kind on the page's main thread; ``events``: the largest event
        names (self ms); ``busy_ms``; ``window_ms``; ``raster_ms``: raster tasks on the
        renderer's other threads.
    """
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    marks = [e for e in events if e.get("name") == "bench-input"]
    if not marks:
        return {"error": "the trace has no key-press mark"}
    mark = max(marks, key=lambda e: e["ts"])
    lo, hi = mark["ts"], mark["ts"] + window_ms * 1e3
    thread = (mark["pid"], mark["tid"])  # the page's main thread: where the mark was made
    main_events, raster = [], 0.0
    for e in events:
        if e.get("ph") != "X" or "dur" not in e or e["ts"] + e["dur"] < lo or e["ts"] > hi:
            continue
        clipped = dict(e, ts=max(e["ts"], lo))
        clipped["dur"] = min(e["ts"] + e["dur"], hi) - clipped["ts"]
        if (e["pid"], e["tid"]) == thread:
            main_events.append(clipped)
        elif e["name"] == "RasterTask" and e["pid"] == thread[0]:
            raster += clipped["dur"]
    if not main_events:
        return {"error": f"no events on the page's main thread ({names.get(thread)})"}
    self_us = _self_times(main_events)
    kinds = dict.fromkeys(KIND_NAMES, 0.0)
    for name, us in self_us.items():
        kinds[kind_of(name)] += us / 1e3
    top = sorted(self_us.items(), key=lambda kv: -kv[1])[:25]
    return {"kinds": kinds, "events": [(n, us / 1e3) for n, us in top],
            "busy_ms": sum(kinds.values()), "window_ms": window_ms, "raster_ms": raster / 1e3}


_PSEUDO = ("(idle)", "(program)", "(garbage collector)", "(root)")


#: Plotly.js, whichever copy ran: Streamlit's chunk (``st.plotly_chart``) or the plotly
#: package's bundle served from ``app/static`` (the in-place charts of dashboard/charts.py).
PLOTLY_SCRIPT = "Plotly.js"


def _script(url):
    """A bundle chunk's name without its content hash (``PlotlyChart.D9Z0_fxz.js`` ->
    ``PlotlyChart``); either copy of Plotly.js is :data:`PLOTLY_SCRIPT`."""
    name = Path(urlparse(url).path).name.split(".")[0] or url
    return PLOTLY_SCRIPT if name in ("PlotlyChart", "plotly") else name


def summarise_profile(profile):
    """JavaScript self time (ms) of a V8 CPU profile by script and by function.

    A native function called from JavaScript (``getBoundingClientRect``, ``setAttribute``:
    the DOM work a script causes, forced layouts included) counts for the script that called
    it, and is also summed apart per script (``native``).  V8's pseudo-frames (idle, program,
    garbage collector) are their own groups.
    """
    nodes = {n["id"]: n for n in profile["nodes"]}
    parent = {c: n["id"] for n in profile["nodes"] for c in n.get("children", ())}
    self_us = {}
    deltas = list(profile.get("timeDeltas", []))
    # A sample's time is the gap to the next sample.
    for sample, dt in zip(profile.get("samples", []), deltas[1:] + [0]):
        self_us[sample] = self_us.get(sample, 0) + dt
    scripts, native, functions = {}, {}, {}
    for node_id, us in self_us.items():
        frame = nodes[node_id]["callFrame"]
        name, url = frame.get("functionName") or "(anonymous)", frame.get("url", "")
        ms = us / 1e3
        if name in _PSEUDO:
            scripts[name] = scripts.get(name, 0.0) + ms
            continue
        owner = node_id
        while owner is not None and not nodes[owner]["callFrame"].get("url"):
            owner = parent.get(owner)
        script = _script(nodes[owner]["callFrame"]["url"]) if owner is not None else "(native)"
        scripts[script] = scripts.get(script, 0.0) + ms
        if not url:
            native[script] = native.get(script, 0.0) + ms
        label = f"{name} ({_script(url) if url else 'native'})"
        functions[label] = functions.get(label, 0.0) + ms
    top = sorted(functions.items(), key=lambda kv: -kv[1])[:12]
    return {"scripts": scripts, "native": native, "functions": top,
            "busy_ms": sum(v for k, v in scripts.items() if k != "(idle)")}


#: Time ``JSON.parse`` of the figures the last run changed, as Streamlit's Plotly element
#: parses its ``spec`` (repeated to get above the timer's resolution).
PARSE_JS = """
(changed) => {
  const specs = window.__benchSpecs || [];
  const chosen = specs.filter((s, i) => s !== null && changed.includes(i));
  const n = 20, t = performance.now();
  for (let r = 0; r < n; r++) for (const s of chosen) JSON.parse(s);
  return (performance.now() - t) / n;
}
"""


#: Where the traced moves start (with :data:`START`'s β, γ, ε): λ = 5, then two untimed moves
#: (to 10 and 20, so that the page's code is warm however the run began), the traced move to
#: 50 and the profiled one to 100, which change the selected trees on sonar and NSL-KDD alike
#: (every chart redraws; below λ = 10 NSL-KDD keeps no tree); k = 24, which no sample uses
#: (the k walk goes up from 25), so every move is solved afresh.
TRACE_START = {"lam": "5", "k": "24"}


#: Drag the λ scrubber's slider across its whole grid, as a fast hand would: a mouse press on
#: the rail, then one mouse move per animation frame, each to the next λ, then a release.
#: Plotly's slider animates at most once per animation frame, to the latest position, so a
#: slow frame makes it skip λ values.  Every animation frame, the page reads which λ the chart
#: shows (the heading drawn in its SVG, not the figure's state); a change is one redraw on
#: screen.  Returns, per pass, the redraws and the time from the first move to the last λ
#: shown; and each λ's lag (its move to its heading).
SCRUB_JS = """
async (passes) => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')]
    .find(el => el.querySelector('.slider-container'));
  if (!gd) return {error: 'no scrubber on the page'};
  const touch = gd.querySelector('.slider-rail-touch-rect');
  const rail = gd.querySelector('.slider-rail-rect').getBoundingClientRect();
  // A frame's heading: its text trace, or (older scrubbers) its layout title.
  const heading = (f) => {
    const text = (f.data || []).find(d => d.mode === 'text');
    return text ? text.text[0] : f.layout.title.text;
  };
  const titles = gd._transitionData._frames.map(heading);
  const drawn = () => [...gd.querySelectorAll('.gtitle, .scatterlayer text')]
    .map(t => t.textContent).find(t => titles.includes(t));
  const n = titles.length, y = rail.top + rail.height / 2;
  const frame = () => new Promise(r => requestAnimationFrame(r));
  const fire = (type, j) => touch.dispatchEvent(new MouseEvent(type, {bubbles: true,
    cancelable: true, view: window, buttons: 1,
    clientX: rail.left + rail.width * j / (n - 1), clientY: y}));
  const out = [];
  for (let pass = 0; pass < passes; pass++) {
    const order = [...Array(n).keys()];
    if (pass % 2) order.reverse();
    fire('mousedown', order[0]);
    while (drawn() !== titles[order[0]]) await frame();
    await frame();
    let shown = drawn(), redraws = 0;
    const asked = {}, lag = [];
    const look = (t) => {
      const now = drawn();
      if (now !== shown) {
        shown = now;
        redraws += 1;
        const j = titles.indexOf(now);
        if (j in asked) lag.push(t - asked[j]);
      }
    };
    await frame();
    const t0 = performance.now();
    for (const j of order.slice(1)) {
      asked[j] = performance.now();
      fire('mousemove', j);
      await frame();
      look(performance.now());
    }
    const last = titles[order[n - 1]], deadline = performance.now() + 5000;
    let t1 = performance.now();
    while (shown !== last) {
      if (performance.now() > deadline) return {error: 'the last λ never drew', out};
      await frame();
      t1 = performance.now();
      look(t1);
    }
    fire('mouseup', order[n - 1]);
    out.push({redraws, ms: t1 - t0, lag});
    await frame();
  }
  return {passes: out, frames: n};
}
"""
SCRUB_PASSES = 4


def _open_trace_start(tab, dataset, n_trees, what):
    """Open the Explorer on ``dataset`` at :data:`TRACE_START` (untimed); raise if it fails."""
    setup = tab.open(dataset, {**start_query(n_trees), **TRACE_START}, f"{what} set-up",
                     timed=False)
    if setup.problems:
        raise RuntimeError(f"the link before the {what} failed: {setup.problems}")


def scrub_rate(tab, dataset, n_trees, log=print):
    """Frames per second of the λ scrubber dragged across its λ grid on ``tab`` (no server
    round trip is involved; the page's websocket is watched to make sure)."""
    out = {"app": tab.app.label, "dataset": dataset}
    try:
        _open_trace_start(tab, dataset, n_trees, "scrub")
        page = tab.page
        page.get_by_text("Scrub λ in your browser").click()
        page.wait_for_function("() => [...document.querySelectorAll('.js-plotly-plot')]"
                               ".some(el => el.querySelector('.slider-container'))",
                               timeout=KEYED_TIMEOUT * 1e3)
        page.wait_for_function(QUIET_JS, arg=1000, timeout=KEYED_TIMEOUT * 1e3)
        page.locator(".slider-container").first.scroll_into_view_if_needed()
        sent = page.evaluate("() => window.__bench.msgs.length")
        result = page.evaluate(SCRUB_JS, SCRUB_PASSES)
        if "error" in result:
            raise RuntimeError(result["error"])
        page.wait_for_timeout(500)
        passes = result["passes"]
        out.update(passes=passes, frames=result["frames"],
                   messages=page.evaluate("() => window.__bench.msgs.length") - sent,
                   fps=1e3 * sum(p["redraws"] for p in passes) / sum(p["ms"] for p in passes))
        # The toggle is part of the session's state: turn it off for what follows.
        page.get_by_text("Scrub λ in your browser").click()
        page.wait_for_function(QUIET_JS, arg=1000, timeout=KEYED_TIMEOUT * 1e3)
    except Exception as exc:  # noqa: BLE001 -- report, keep going
        out["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        log(f"  scrub of {tab.app.label} on {dataset} failed: {out['error']}")
    return out


def trace_move(browser, tab, dataset, n_trees, log=print):
    """Trace one λ move (Chromium's performance trace) and profile the next (V8's sampling
    profiler) on ``tab``, from a link to :data:`TRACE_START`; return the breakdown (a dict)."""
    out = {"app": tab.app.label, "dataset": dataset}
    try:
        _open_trace_start(tab, dataset, n_trees, "traced move")
        tab.directions["lam"] = 1
        for _ in range(2):
            tab.slide(dataset, "lam", timed=False)
        browser.start_tracing(page=tab.page, categories=TRACE_CATEGORIES)
        try:
            traced = tab.slide(dataset, "lam", timed=False)
        finally:
            raw = browser.stop_tracing()
        out["traced"] = asdict(traced)
        window = max(traced.settled_ms or 0.0, traced.ms or 0.0)
        out["trace"] = summarise_trace(json.loads(raw), window)
        out["json_parse_ms"] = tab.page.evaluate(PARSE_JS, traced.changed)
        cdp = tab.context.new_cdp_session(tab.page)
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 200})
        cdp.send("Profiler.start")
        try:
            profiled = tab.slide(dataset, "lam", timed=False)
        finally:
            profile = cdp.send("Profiler.stop")["profile"]
            cdp.send("Profiler.disable")
            cdp.detach()
        out["profiled"] = asdict(profiled)
        out["profile"] = summarise_profile(profile)
    except Exception as exc:  # noqa: BLE001 -- the breakdown is extra: report, keep going
        out["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        log(f"  trace of {tab.app.label} on {dataset} failed: {out['error']}")
    return out


# --------------------------------------------------------------------------- report


def write_json(outcome, path):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = asdict(outcome)
    path.write_text(json.dumps(data, indent=1, default=str))


def read_json(path):
    """The :class:`Outcome` written by :func:`write_json` (to redo a report)."""
    data = json.loads(Path(path).read_text())
    data["settings"] = Settings(**{k: tuple(v) if isinstance(v, list) else v
                                   for k, v in data["settings"].items()})
    data["apps"] = [App(a["label"], Path(a["directory"]), a["commit"],
                        a.get("script", "app.py")) for a in data["apps"]]
    data["samples"] = [Sample(**s) for s in data["samples"]]
    return Outcome(**data)


def timed_samples(outcome, app=None, dataset=None, control=None):
    return [s for s in outcome.samples if s.timed and s.ms is not None and s.ok
            and (app is None or s.app == app) and (dataset is None or s.dataset == dataset)
            and (control is None or s.control == control)]


def _pct(values):
    return (percentile(values, 50), percentile(values, 95)) if values else None


def _cell(p):
    return f"{p[0]:.0f} / {p[1]:.0f}" if p else "–"


def _ratio(new, old):
    if not new or not old:
        return "–"
    return f"{new[0] / old[0]:.2f} / {new[1] / old[1]:.2f}"


def report(outcome, command=None):
    """The Markdown report of a run."""
    command = command or outcome.command
    st = outcome.settings
    datasets = list(st.datasets)
    lines = ["# Browser latency of the Explorer", ""]
    if command:
        lines += ["Command (from the repository root):", "", f"```\n{command}\n```", ""]
    if outcome.trace_command:
        lines += ["The last section (trace and profile) was measured by another run:", "",
                  f"```\n{outcome.trace_command}\n```", ""]
    lines += ["Checkouts (the first is the baseline of every ratio):", ""]
    lines += [f"- **{a.label}**: `{a.directory}` at {a.commit}"
              + (f", its floor page `{a.script}`: the same sidebar, solve and four charts, "
                 f"nothing else" if a.floor else "") for a in outcome.apps]
    # A checkout with dashboard/launch.py is served by it, an older one by plain streamlit.
    commands = dict.fromkeys(outcome.server_commands.values())
    if len(commands) <= 1:
        servers = f"each server: `MALLOC_ARENA_MAX=2 python {next(iter(commands), '')}`"
    else:
        servers = "servers: " + "; ".join(
            f"{label} `MALLOC_ARENA_MAX=2 python {command}`"
            for label, command in outcome.server_commands.items())
    lines += ["", f"Machine: {outcome.machine or machine()}", "",
              f"Run: {outcome.started}, {outcome.wall / 60:.0f} min of wall time; datasets "
              f"{', '.join(datasets)} (binary, l = {st.n_trees}, split seed 0); {st.moves} "
              f"timed samples per (checkout, dataset, control), {st.warmup} untimed λ moves "
              f"first; one Chromium ({', '.join(LAUNCH_ARGS)}), viewport "
              f"{VIEWPORT['width']}×{VIEWPORT['height']}, one tab per checkout used one at a "
              f"time; {servers} (port varies) with one "
              f"shared, warm pool cache.", "",
              f"Machine load (1, 5, 15-minute load average; 2 cores, shared with other work): "
              f"{load_average(outcome.load_start)} at the start, "
              f"{load_average(outcome.load_end)} at the end; over the samples (1-minute) "
              + _load_range(outcome) + ".", ""]
    lines += _headline(outcome)
    lines += ["## What is measured", "", __doc__.split("\n\n", 1)[1].split(
        "Run ``python")[0].strip(), ""]
    for section in (_latency_section, _targets, _scrub_section, _phase_section, _cpu_section,
                    _trace_section, _checks_section):
        lines += section(outcome)
    return "\n".join(lines)


def _latency_section(outcome):
    """p50 / p95 per (dataset, control) for each checkout, and the ratios to the first."""
    labels = [a.label for a in outcome.apps]
    rows_of = list(outcome.settings.datasets) + ["all UCI"]

    def pct(label, d, c):
        sel = UCI if d == "all UCI" else (d,)
        return _pct([s.ms for s in timed_samples(outcome, label, None, c) if s.dataset in sel])

    lines = ["## Time to every chart drawn (ms, p50 / p95)", "",
             "From the input event (keydown; for **load**, the navigation's start) to every "
             "chart the run changed painted with its new figure and the run over. **first "
             "load**: one sample, the dataset's first page load in that server (pool read from "
             "the disk cache; \"–\" where the pool was already in memory).", ""]
    header = ["dataset"] + [HEADERS[c] for c in CONTROLS]
    for label in labels:
        rows = []
        for d in rows_of:
            first = [s for s in outcome.samples if s.app == label and s.control == "first"
                     and s.dataset == d and s.ms is not None and s.cold]
            rows.append([d] + [_cell(pct(label, d, c)) for c in CONTROLS]
                        + [f"{first[0].ms:.0f}" if first else "–"])
        lines += [f"### {label}", "", table(header + ["first load"], rows), ""]
    for label in labels[1:]:
        rows = [[d] + [_ratio(pct(label, d, c), pct(labels[0], d, c)) for c in CONTROLS]
                for d in rows_of]
        lines += [f"### Ratio {label} / {labels[0]} (p50 / p95; below 1 is faster)", "",
                  table(header, rows), ""]
    return lines


def _phase_section(outcome):
    lines = ["## Where the time goes, by phase (ms, p50 over every dataset)", "",
             "**to run start**: input → the server's `new_session` message received (the "
             "slider's debounce, the request); **run**: → `script_finished` received; "
             "**drawn**: → the last changed chart's `afterplot`; **painted**: → its frame "
             "rendered; **settled**: → the last redraw; **total**: the sample's time; "
             "**KB**: websocket bytes received per action (p50); **changed**: charts the run "
             "changed (p50 of 4).", ""]

    def med(values):
        values = [v for v in values if v is not None]
        return f"{percentile(values, 50):.0f}" if values else "–"

    rows = []
    for app in outcome.apps:
        for c in CONTROLS:
            sel = timed_samples(outcome, app.label, None, c)
            if sel:
                rows.append([app.label, HEADERS[c], len(sel), med([s.start_ms for s in sel]),
                             med([s.finished_ms - s.start_ms for s in sel]),
                             med([s.charts_ms for s in sel]), med([s.painted_ms for s in sel]),
                             med([s.settled_ms for s in sel]), med([s.ms for s in sel]),
                             med([s.bytes / 1e3 for s in sel]),
                             med([len(s.changed) for s in sel])])
    return lines + [table(["checkout", "control", "n", "to run start", "run", "drawn",
                           "painted", "settled", "total", "KB", "changed"], rows), ""]


def _cpu_section(outcome):
    lines = ["## CPU seconds (server / browser), summed over the timed samples", "",
             "psutil: the streamlit process (and children) and every Chromium process, from "
             "just before each input to the quiet page.", ""]
    rows = []
    for app in outcome.apps:
        for c in CONTROLS:
            sel = timed_samples(outcome, app.label, None, c)
            if sel:
                server, browser = (sum(s.server_cpu for s in sel),
                                   sum(s.browser_cpu for s in sel))
                rows.append([app.label, HEADERS[c], len(sel), f"{server:.1f}", f"{browser:.1f}",
                             f"{1e3 * server / len(sel):.0f}", f"{1e3 * browser / len(sel):.0f}"])
        every = [s for s in outcome.samples if s.app == app.label]
        rows.append([app.label, "every action", len(every),
                     f"{sum(s.server_cpu for s in every):.1f}",
                     f"{sum(s.browser_cpu for s in every):.1f}", "", ""])
    return lines + [table(["checkout", "control", "n", "server CPU-s", "browser CPU-s",
                           "server ms / sample", "browser ms / sample"], rows), ""]


def _checks_section(outcome):
    problems = [s for s in outcome.samples if s.problems]
    bad = [s for s in problems if s.timed]
    lines = ["## Checks", "",
             f"{len(outcome.samples)} actions, {len([s for s in outcome.samples if s.timed])} "
             f"timed; {len(bad)} timed and {len(problems) - len(bad)} untimed with a problem "
             f"(a sample with a problem is left out of the tables); tracebacks in the server "
             f"logs: " + ", ".join(f"{k} {v}" for k, v in outcome.server_tracebacks.items())
             + ".", ""]
    lines += [f"- {s.app}, {s.dataset}, {s.control}{'' if s.timed else ' (untimed)'}: "
              + "; ".join(s.problems)[:400] for s in problems[:30]]
    return lines + ([""] if problems else [])


def _headline(outcome):
    """The run in a few lines: p50 / p95 pooled over the UCI datasets and on NSL-KDD."""
    labels = [a.label for a in outcome.apps]
    names = set(outcome.settings.datasets)
    groups = [("UCI", [d for d in UCI if d in names]), ("NSL-KDD", ["nsl_kdd"])]
    groups = [(g, ds) for g, ds in groups if set(ds) & names]
    kinds = [("λ move", ("lam",)), ("β, γ, ε, k move", ("beta", "gamma", "eps", "k")),
             ("dataset switch", ("switch",)), ("page load from a link", ("load",))]

    def pct(label, controls, datasets):
        return _pct([s.ms for s in outcome.samples if s.timed and s.ok and s.app == label
                     and s.control in controls and s.dataset in datasets])

    rows = []
    for kind, controls in kinds:
        for group, datasets in groups:
            cells = [pct(label, controls, datasets) for label in labels]
            row = [f"{kind}, {group}"] + [_cell(c) for c in cells]
            rows += [row + [_ratio(c, cells[0]) for c in cells[1:]]]
    for group, datasets in groups:
        cells = []
        for label in labels:
            first = [s.ms for s in outcome.samples if s.app == label and s.control == "first"
                     and s.cold and s.ms is not None and s.dataset in datasets]
            cells.append(f"{percentile(first, 50):.0f}" if first else "–")
        rows.append([f"first load (pool from disk), {group}, median"] + cells
                    + [""] * (len(labels) - 1))
    cpu = []
    for label in labels:
        sel = timed_samples(outcome, label)
        cpu.append(f"{1e3 * sum(s.server_cpu for s in sel) / len(sel):.0f} / "
                   f"{1e3 * sum(s.browser_cpu for s in sel) / len(sel):.0f}" if sel else "–")
    rows.append(["CPU ms per timed sample, server / browser"] + cpu + [""] * (len(labels) - 1))
    header = ["ms, p50 / p95"] + labels + [f"{label} / {labels[0]}" for label in labels[1:]]
    return ["## Headline", "", table(header, rows), ""]


#: The latency targets, p95 in ms: (every UCI dataset, NSL-KDD).
TARGETS = {**{key: (250, 500) for key in SLIDERS}, "switch": (600, 600), "load": (1000, 1000)}


def _targets(outcome):
    """Worst UCI p95 and NSL-KDD p95 per control and checkout, against the latency targets."""
    datasets = list(outcome.settings.datasets)
    uci = [d for d in datasets if d in UCI]
    rows = []
    for c in CONTROLS:
        for app in outcome.apps:
            p95 = {d: _pct([s.ms for s in timed_samples(outcome, app.label, d, c)])
                   for d in datasets}
            worst = max(((p[1], d) for d, p in p95.items() if d in uci and p), default=None)
            nsl = p95.get("nsl_kdd")
            target_uci, target_nsl = TARGETS[c]
            met = [worst[0] <= target_uci] if worst else []
            met += [nsl[1] <= target_nsl] if nsl else []
            rows.append([HEADERS[c], app.label,
                         f"{worst[0]:.0f} ({worst[1]})" if worst else "–",
                         f"{nsl[1]:.0f}" if nsl else "–",
                         f"{target_uci} / {target_nsl}",
                         ("yes" if all(met) else "**no**") if met else "–"])
    return ["## Against the latency targets (p95, ms)", "",
            "Slider moves: p95 ≤ 250 ms on every UCI dataset, ≤ 500 ms on NSL-KDD; dataset "
            "switch ≤ 600 ms; page load from a link ≤ 1 s (pool on disk or in memory).", "",
            table(["control", "checkout", "worst UCI p95 (dataset)", "NSL-KDD p95",
                   "target UCI / NSL-KDD", "met"], rows), ""]


#: The target frame rate for scrubbing λ in the page.
SCRUB_TARGET_FPS = 30


def _scrub_section(outcome):
    """The λ scrubber's frame rate per checkout and traced dataset."""
    if not outcome.scrubs:
        return []
    rows = []
    for scrub in outcome.scrubs:
        if "error" in scrub:
            rows.append([scrub["app"], scrub["dataset"], f"failed: {scrub['error']}"]
                        + [""] * 5)
            continue
        passes = scrub["passes"]
        steps = (scrub["frames"] - 1) * len(passes)
        redraws = sum(p["redraws"] for p in passes)
        lag = _pct([x for p in passes for x in p["lag"]])
        rows.append([scrub["app"], scrub["dataset"], str(scrub["frames"]),
                     f"{redraws} of {steps}", f"{lag[0]:.0f} / {lag[1]:.0f}" if lag else "–",
                     f"{scrub['fps']:.0f}", str(scrub["messages"]),
                     "yes" if scrub["fps"] >= SCRUB_TARGET_FPS else "**no**"])
    return ["## Scrubbing λ in the page (frames per second)", "",
            f"The Explorer's λ scrubber (one Plotly figure with a frame per λ of the sidebar's "
            f"grid) dragged across its whole slider {SCRUB_PASSES} times, back and forth, by "
            f"mouse events in the page, one move per animation frame, each to the next λ: as "
            f"fast as a hand can ask. Plotly's slider animates at most once per animation "
            f"frame, to the latest position, skipping λ values when a frame is slow. "
            f"**redraws**: λ values the chart showed on screen (read every animation frame); "
            f"**fps**: redraws per second of dragging (target ≥ {SCRUB_TARGET_FPS}; the "
            f"display's 60 bounds it); **lag**: from a λ's mouse move to the frame showing it; "
            f"**messages**: websocket messages received during the drags (0: no server round "
            f"trip).", "",
            table(["checkout", "dataset", "λ values", "redraws", "lag ms, p50 / p95", "fps",
                   "messages", f"≥ {SCRUB_TARGET_FPS} fps"], rows), ""]


def _load_range(outcome):
    loads = [s.load_average for s in outcome.samples]
    if not loads:
        return "none"
    return (f"min {min(loads):.1f}, median {percentile(loads, 50):.1f}, max {max(loads):.1f}")


def _share(value, total):
    return f"{value:.0f} ({100 * value / total:.0f}%)" if total else f"{value:.0f}"


def _trace_section(outcome):
    if not outcome.traces:
        return []
    lines = ["## Where the time goes in the browser (one λ move, traced)", "",
             "Per checkout and dataset, one λ move under Chromium's performance trace, then "
             "the next under V8's sampling profiler (200 µs); both are slowed by the "
             "instrumentation, so their shares matter, not their totals.", "",
             "- **KB**: websocket bytes received for the move, and per chart (methods, "
             "convergence, weights, the trees' accuracies under them, prediction time; a "
             "chart Streamlit had sent before arrives as a reference of ~70 bytes).",
             "- **trace**: self time on the page's main thread from the key press to the "
             "last redraw or paint (**window**), by kind (DevTools' groups: scripting "
             "includes the "
             "JavaScript of Streamlit, React and Plotly; style and layout includes the "
             "layouts that Plotly's text measuring forces); raster runs on other threads.",
             "- **JSON.parse**: the figures the move changed, parsed again in the page as "
             "Streamlit's Plotly element does (`JSON.parse(spec)`).",
             "- **profile**: JavaScript self time by script (bundle chunk), a native DOM "
             "call counted with the script that made it (`Plotly.js`: Streamlit's Plotly "
             "chunk with its React wrapper, or the plotly package's bundle that the in-place "
             "charts of dashboard/charts.py load from app/static; `react-dom` React's "
             "reconciliation; `emotion-styled` Streamlit's CSS-in-JS; `index` Streamlit's "
             "core, protobuf decoding included).",
             ""]
    rows, prof_rows, tops = [], [], []
    for t in outcome.traces:
        head = [t["app"], t["dataset"]]
        if "error" in t or "error" in t.get("trace", {}):
            rows.append(head + [f"failed: {t.get('error') or t['trace']['error']}"]
                        + [""] * (len(KIND_NAMES) + 5))
            continue
        tr, sm = t["trace"], t["traced"]
        per_chart = " + ".join(f"{b / 1e3:.1f}" for b in sm["chart_bytes"])
        rows.append(head + [f"{sm['ms']:.0f}" if sm["ms"] else "–",
                            f"{sm['bytes'] / 1e3:.0f} ({per_chart})",
                            f"{len(sm['changed'])}", f"{tr['window_ms']:.0f}",
                            _share(tr["busy_ms"], tr["window_ms"])]
                    + [_share(tr["kinds"].get(k, 0.0), tr["busy_ms"]) for k in KIND_NAMES]
                    + [f"{tr['raster_ms']:.0f}", f"{t['json_parse_ms']:.2f}"])
        pr = t["profile"]
        ranked = sorted(((k, v) for k, v in pr["scripts"].items() if k != "(idle)"),
                        key=lambda kv: -kv[1])
        prof_rows.append(head + [f"{t['profiled']['ms']:.0f}" if t["profiled"]["ms"] else "–",
                                 f"{pr['busy_ms']:.0f}",
                                 "; ".join(f"{k} {_share(v, pr['busy_ms'])}"
                                           for k, v in ranked[:7]),
                                 "; ".join(f"{k} {v:.0f}" for k, v in sorted(
                                     pr["native"].items(), key=lambda kv: -kv[1])[:3])])
        tops.append(f"- {t['app']}, {t['dataset']}: functions (profile, self ms): " + "; ".join(
            f"{name} {ms:.0f}" for name, ms in pr["functions"][:8]) + "; trace events "
            "(self ms): " + "; ".join(f"{name} {ms:.0f}" for name, ms in tr["events"][:8]))
    lines += ["Trace (ms; shares of the main thread's busy time):", "",
              table(["checkout", "dataset", "drawn", "KB (per chart)", "changed", "window",
                     "main thread busy"] + list(KIND_NAMES)
                    + ["raster (other threads)", "JSON.parse"], rows), "",
              "Profile of the next move (ms; shares of non-idle time):", "",
              table(["checkout", "dataset", "drawn", "non-idle", "by script",
                     "of which native DOM calls"], prof_rows), "",
              "Largest items:", ""] + tops + [""]
    return lines


def run(quick=False, log=print):
    """``python -m benchmarks``'s section: this checkout alone (``--quick``: sonar and wine,
    l = 20, 3 samples per control, no trace)."""
    settings = Settings(datasets=("sonar", "wine") if quick else DATASETS,
                        n_trees=20 if quick else 200, moves=3 if quick else 10,
                        trace=not quick)
    outcome = measure(settings, log=log)
    text = report(outcome)
    return "## Browser latency\n\n" + text.split("\n", 2)[2].replace("\n## ", "\n### ")


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(prog="python -m benchmarks.browser",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--app-dir", action="append", default=None, metavar="DIR",
                        help="a checkout of the dashboard to serve (repeatable; the first is "
                             "the baseline of the ratios; default: this checkout)")
    parser.add_argument("--datasets", default=",".join(DATASETS),
                        help="comma-separated dataset names (default: the 10 UCI datasets "
                             "and nsl_kdd)")
    parser.add_argument("--moves", type=int, default=10,
                        help="timed samples per (checkout, dataset, control)")
    parser.add_argument("--trees", type=int, default=200, help="pool size l")
    parser.add_argument("--warmup", type=int, default=2,
                        help="untimed λ moves at the start of each (checkout, dataset)")
    parser.add_argument("--floor", action="store_true",
                        help="also time the last checkout's floor page (benchmarks/floor/app.py: "
                             "the Explorer's sidebar, solve and four charts, nothing else)")
    parser.add_argument("--no-trace", action="store_true",
                        help="skip the traced and profiled λ moves on sonar and nsl_kdd")
    parser.add_argument("--out", default="results/browser.md",
                        help="Markdown report; the raw samples go beside it (.json)")
    parser.add_argument("--trace-only", action="store_true",
                        help="measure only the traced and profiled λ moves; when the report's "
                             "raw samples (.json beside --out) exist, replace their traces and "
                             "write the report again")
    parser.add_argument("--report-only", metavar="JSON",
                        help="write the report again from a run's raw samples; measure nothing")
    args = parser.parse_args(argv)
    # Stopped with SIGTERM, leave through the context managers that stop the servers.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    out = Path(args.out)
    if args.report_only:
        text = report(read_json(args.report_only))
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        print(f"wrote {out}")
        return 0
    if args.moves < 1 or args.warmup < 0:
        parser.error("--moves must be at least 1 and --warmup at least 0")
    from sdwec import datasets as shipped

    names = tuple(n.strip() for n in args.datasets.split(",") if n.strip())
    unknown = [n for n in names if n not in shipped.names()]
    if unknown or not names:
        parser.error(f"unknown dataset(s) {unknown}; choose from {', '.join(shipped.names())}")
    if args.trace_only and args.no_trace:
        parser.error("--trace-only and --no-trace exclude each other")
    settings = Settings(app_dirs=tuple(args.app_dir or [str(ROOT)]), datasets=names,
                        n_trees=args.trees, moves=args.moves, warmup=args.warmup,
                        trace=not args.no_trace, trace_only=args.trace_only,
                        floor=args.floor)
    command = " ".join(["python -m benchmarks.browser"]
                       + list(sys.argv[1:] if argv is None else argv))
    cache = os.environ.get("SDWEC_CACHE_DIR")
    if cache:
        command = f"SDWEC_CACHE_DIR={cache} " + command
    raw = out.with_suffix(".json")
    if args.trace_only:
        traced = measure(settings, command=command)
        if raw.exists():  # keep the latency samples, renew the breakdown
            outcome = read_json(raw)
            outcome.traces, outcome.trace_command = traced.traces, command
            outcome.scrubs = traced.scrubs
        else:
            outcome = traced
        write_json(outcome, raw)
    else:
        outcome = measure(settings, out_json=raw, command=command)
    text = report(outcome)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text)
    print(f"wrote {out} and {out.with_suffix('.json')}")
    return 0 if not any(s.problems for s in outcome.samples if s.timed) else 1


if __name__ == "__main__":
    sys.exit(main())
