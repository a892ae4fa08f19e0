"""A hostile or careless class: real Chromium pages and one student's misuse, against
``scripts/serve.sh --replicas 2``.

Each case measures one "done when" figure of a class served by two replicas behind nginx,
with what a student does (or what one slow network does) to everyone else:

``failover``
    K Chromium pages on the Explorer (each moved a few slider steps first), then F failovers
    alternating kill -9 and kill -STOP of the replica holding them (serve.sh starts it
    again); after each, every page must be back without a reload within a deadline: a new
    websocket, the charts drawn, no Streamlit error dialog, the sidebar's widgets enabled.
    Then each page moves λ one step and must show the new value.
``new-visitor``
    R times: kill -9 of a replica (alternating), wait until serve.sh's status shows it
    healthy again, then a fresh Chromium context (no cookie) opens the Explorer; the time
    until its charts are drawn.  The browser opens one page before (reported, not held to
    the target): a student's browser is running before the class, and Chromium's own first
    page in a new process (its renderer, fonts, caches) is not what a restart costs.
``uploads``
    One page uploads N different 1.2M-row CSVs through the Your data page's uploader, one
    after the other without leaving, while a bystander page sits on each replica; both
    replicas' resident memory is sampled; replicas serve.sh killed (its ``health.log``) and
    sessions cut (a page's websocket closed or the page reloaded).
``trickle``
    S students (each from its own loopback address, with its own cookies and session) hold
    2 uploads each, sending 1 KB every 5 s; meanwhile another page uploads a small CSV: did
    its upload get through, and what does its page show.
``pools``
    Its own serve.sh, whose cache cap is the class's default pools plus a small slack; one
    page uploads U small CSVs (each trained into a pool); then which default pools are
    still in the cache.
``abandon``
    A page opens a link to an untrained pool (a large l on a big dataset), and closes once
    its training runs; the time until no training runs (no ``_pool-job`` worker under the
    replicas, no progress file in the cache).
``inject``
    Links whose query values carry Markdown and HTML: nothing on the page may be made from
    them (no link, image, bold or HTML element; no request to their addresses).
``planted``
    A cache entry written from the format's description with a valid header and payload
    checksum but no valid signature, whose pickle would create a file; a page opens its
    pool: the file must not appear, and the pool is rebuilt (signed).

Every random step is seeded (the CSVs by :func:`harness.upload_data.synthetic_csv`'s seeds,
the slider directions by the settings' seed).  A case that cannot measure its figure says
why and counts as neither PASS nor MISS.  ``python -m benchmarks.classroom --help``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import pickle
import random
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field, fields
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from harness import faults, load
from harness.common import CHARTS, load_average, machine, table
from harness.serve import EntryWrites, Served, _mib, _rss
from harness.upload_data import SessionPeak, synthetic_csv

HEADING = "# A hostile or careless class"
VIEWPORT = {"width": 1400, "height": 1000}
LAMBDA = "λ (data fidelity, log scale)"
DEAD_WORDS = ("Cached ForwardMsg", "Connection error", "Bad message format")
#: Warm pool copies kept between runs, so that a run's fresh cache starts warm in seconds.
WARM_DIR = Path(tempfile.gettempdir()) / "sdwec-classroom-warm"
#: What the page shows, read in one call (no reads while a run is drawing).
STATE_JS = """
(dead) => {
  const app = document.querySelector('[data-testid="stApp"]');
  const text = (sel) => Array.from(document.querySelectorAll(sel)).map(e => e.innerText.slice(0, 300));
  const body = document.body ? document.body.innerText : '';
  const side = document.querySelector('[data-testid="stSidebar"]');
  const disabled = side ? side.querySelectorAll(
    'input:disabled, [role="slider"][aria-disabled="true"], button:disabled').length : -1;
  return {
    loadId: window.__loadId,
    connection: app ? app.getAttribute('data-test-connection-state') : null,
    script: app ? app.getAttribute('data-test-script-state') : null,
    charts: Array.from(document.querySelectorAll('__CHARTS__'))
      .filter(c => c.data && c.data.length).length,
    dead: dead.filter(w => body.includes(w)),
    disabled: disabled,
    errors: text('[data-testid="stAlertContentError"]').concat(text('[data-testid="stException"]')),
    warnings: text('[data-testid="stAlertContentWarning"]'),
    files: text('[data-testid="stFileUploaderFile"]'),
    read: body.includes('Target column'),
    train: Array.from(document.querySelectorAll('button')).some(b => b.innerText.startsWith('Train now')),
    progress: document.querySelectorAll('[data-testid="stProgress"]').length,
  };
}
""".replace("__CHARTS__", CHARTS)
#: Elements made from an injected value: a link or image to its host (``.invalid``), or a
#: link, image, emphasis or HTML element whose own text holds one of its words.  The page's
#: own links (its navigation keeps the query string) carry the value in their address
#: without being made from it.
MADE_JS = """
(markers) => {
  const found = [];
  const host = (url) => { try { return new URL(url, location.href).hostname; } catch (e) { return ''; } };
  for (const e of document.querySelectorAll('a, img, strong, b, em, i, iframe, script')) {
    const address = e.getAttribute('href') || e.getAttribute('src') || '';
    const own = (e.textContent || '') + ' ' + (e.getAttribute('alt') || '');
    if ((address && host(address).endsWith('.invalid')) || markers.some(m => own.includes(m)))
      found.push(e.tagName + ': ' + (address + ' ' + own).slice(0, 120));
  }
  return found;
}
"""


@dataclass
class Settings:
    """Sizes of the cases (``python -m benchmarks.classroom --help``); each has its flag."""

    pages: int = 4  # failover: Chromium pages
    failovers: int = 20
    deadline: float = 60.0  # failover: seconds a page has to come back
    visitors: int = 6  # new-visitor: restarts, each followed by one new visitor
    uploads: int = 6  # uploads: files from one session
    upload_rows: int = 1_200_000
    settle: float = 30.0  # uploads: seconds sampled after the last upload
    tricklers: int = 4  # trickle: students holding 2 uploads each
    trickle_seconds: float = 60.0
    pool_uploads: int = 10  # pools: small uploads
    pool_rows: int = 10_000
    pool_slack_mb: float = 40.0  # pools: cache cap = the default pools + this
    abandon_dataset: str = "nsl_kdd"
    abandon_trees: int = 1000
    abandon_limit: float = 180.0  # abandon: seconds watched after the tab closed
    inject_values: int = 5  # inject: hostile values (each put in every key)
    planted_dataset: str = "wpbc"
    n_trees: int = 200  # the Explorer's pool size (200: the warmed default pools)
    seed: int = 0  # slider directions, CSV seeds' offset
    warm: bool = True  # pre-warm the default pools (False: the pages train what they need)


@dataclass
class Figure:
    """One measured figure: PASS (``passed`` True), MISS (False) or not measured (None)."""

    case: str
    what: str
    target: str
    value: str
    passed: bool | None
    detail: list = field(default_factory=list)

    @property
    def verdict(self):
        if self.target == "-" and self.passed is None:
            return "information"
        return {True: "PASS", False: "MISS", None: "not measured"}[self.passed]


# --------------------------------------------------------------------------- the cache


def default_keys(n_trees=200):
    """The class's default pools: every shipped dataset's default splits (``sdwec warm``)."""
    from sdwec import warm

    return [key for key, _ in warm.plan(n_trees=n_trees)]


@contextlib.contextmanager
def cache_env(cache_dir):
    """This process's ``SDWEC_CACHE_DIR`` set to ``cache_dir`` for a while."""
    from sdwec.pool import CACHE_ENV

    old = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = str(cache_dir)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(CACHE_ENV, None)
        else:
            os.environ[CACHE_ENV] = old


def prepare_cache(cache_dir, warm_dir=WARM_DIR, log=print):
    """Fill ``cache_dir`` with the default pools: ``python -m sdwec warm`` into ``warm_dir``
    (it skips what is there), then a copy of its entries."""
    warm_dir = Path(warm_dir)
    warm_dir.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "sdwec", "warm", "--quiet"], cwd=load.ROOT,
                   env=dict(os.environ, SDWEC_CACHE_DIR=str(warm_dir)), check=True)
    Path(cache_dir).mkdir(parents=True, exist_ok=True)
    for entry in warm_dir.glob("*.pkl"):
        shutil.copy2(entry, Path(cache_dir) / entry.name)
    log(f"  default pools warm in {cache_dir} ({time.monotonic() - start:.0f} s)")


def cached_defaults(cache_dir, n_trees=200):
    """``(cached, all)``: how many of the default pools ``cache_dir`` holds (signed)."""
    from sdwec import pool

    keys = default_keys(n_trees)
    with cache_env(cache_dir):
        return sum(pool.is_cached(key) for key in keys), len(keys)


# --------------------------------------------------------------------------- serve.sh


def replica_pid(served, replica):
    return served._pid(f"replica-{replica}.pid")


def wait_healthy(served, timeout=240.0, other_than=None):
    """Wait until serve.sh's status shows every replica healthy (and, with ``other_than=
    (replica, pid)``, that replica under a new pid); seconds waited, or None."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        fresh = other_than is None or replica_pid(served, other_than[0]) not in (
            None, other_than[1])
        if fresh and faults._all_healthy(served, served.replicas):
            return time.monotonic() - start
        time.sleep(0.2)
    return None


def restarts_since(served, since):
    """serve.sh's ``health.log`` lines since ``since`` (``time.time()``) that restarted a
    replica."""
    try:
        text = (served.run_dir / "health.log").read_text()
    except OSError:
        return []
    return [line for _, line in faults.health_notes(text, since, time.time() + 1)
            if "started again" in line and line.startswith("replica")]


def replica_processes(served):
    """``{"replica N": psutil.Process}`` of the replicas now."""
    return {k: v for k, v in served.processes().items() if k.startswith("replica")}


def training_now(served, cache_dir):
    """What trains now: ``_pool-job`` workers under the replicas, and progress files of
    builds in the cache (a build in a replica's own thread)."""
    import psutil

    found = []
    for proc in replica_processes(served).values():
        with contextlib.suppress(psutil.Error):
            for child in proc.children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    if "_pool-job" in " ".join(child.cmdline()):
                        found.append(f"worker pid {child.pid}")
    found += [f"progress file {p.name}" for p in Path(cache_dir).glob("*.progress")]
    return found


class MemorySampler(SessionPeak):
    """Both replicas' resident memory every ``every`` s in a thread: the peak of each
    replica's own RSS (what serve.sh's --max-memory watches) and with its children."""

    def __init__(self, served, every=0.5):
        super().__init__(interval=every)
        self.served, self.own, self.total = served, {}, {}

    def _run(self):
        import psutil

        while not self._stop.is_set():
            for label, proc in replica_processes(self.served).items():
                with contextlib.suppress(psutil.Error):
                    own = proc.memory_info().rss
                    total = own + sum(_rss(c) for c in proc.children(recursive=True))
                    self.own[label] = max(self.own.get(label, 0), own)
                    self.total[label] = max(self.total.get(label, 0), total)
            self._stop.wait(self.interval)


# --------------------------------------------------------------------------- pages


class Page:
    """One Chromium context and its page: a student's browser (no cookie, or pinned to a
    replica by the proxy's cookie); notes its websockets and the page loads it did."""

    def __init__(self, browser, url, replica=None, watch_cache=False):
        self.url = url
        self.context = browser.new_context(viewport=VIEWPORT)
        if replica is not None:
            self.context.add_cookies([{"name": "sdwec_replica", "value": str(replica),
                                       "url": url}])
        self.page = self.context.new_page()
        self.page.add_init_script("window.__loadId = Math.random();")
        self.sockets = []  # [opened, closed or None] (time.monotonic())
        self.references = self.cacheable = 0
        self.responses = []  # (url, status) of upload requests
        self.requests = []  # every address the page asked for
        self.page.on("websocket", lambda ws: self._opened(ws, watch_cache))
        self.page.on("response", self._response)
        self.page.on("request", lambda request: self.requests.append(request.url))

    def _opened(self, ws, watch_cache):
        record = [time.monotonic(), None]
        self.sockets.append(record)
        ws.on("close", lambda _: record.__setitem__(1, time.monotonic()))
        if watch_cache:
            ws.on("framereceived", self._frame)

    def _frame(self, payload):
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = ForwardMsg.FromString(payload)
        if msg.WhichOneof("type") == "ref_hash":
            self.references += 1
        elif msg.metadata.cacheable:
            self.cacheable += 1

    def _response(self, response):
        if "/_stcore/upload_file/" in response.url:
            self.responses.append((response.url, response.status))

    def close(self):
        with contextlib.suppress(Exception):
            self.context.close()

    def replica(self):
        return {c["name"]: c["value"] for c in self.context.cookies()}.get("sdwec_replica")

    def goto(self, path):
        self.page.goto(self.url + path, wait_until="commit", timeout=120_000)

    def state(self):
        return self.page.evaluate(STATE_JS, list(DEAD_WORDS))

    def wait(self, done, timeout, every=0.25):
        """Poll :meth:`state` until ``done(state)``; ``(seconds, last state)``, seconds None
        at the time-out."""
        start = time.monotonic()
        while True:
            try:
                st = self.state()
            except Exception as exc:  # noqa: BLE001 -- a page between two documents
                st = {"error": f"{type(exc).__name__}: {str(exc)[:120]}"}
            if "error" not in st and done(st):
                return time.monotonic() - start, st
            if time.monotonic() - start > timeout:
                return None, st
            self.page.wait_for_timeout(every * 1e3)

    def lambda_step(self, direction):
        thumb = self.page.locator('[data-testid="stSidebar"]').get_by_role(
            "group", name=LAMBDA, exact=True).first.locator('input[type="range"]').first
        thumb.focus(timeout=30_000)
        thumb.press(direction)

    def upload(self, path):
        self.page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
            str(path), timeout=120_000)


def drawn(st):
    """The Explorer is there: connected, idle, every chart drawn, no error dialog."""
    return (st["connection"] == "CONNECTED" and st["script"] == "notRunning"
            and st["charts"] >= load.N_CHARTS and not st["dead"] and not st["errors"])


def usable(st):
    """:func:`drawn`, and the sidebar's widgets enabled."""
    return drawn(st) and st["disabled"] == 0


def _launch(playwright):
    chromium = shutil.which("chromium")
    if chromium is None:
        raise RuntimeError("Debian's chromium is not installed (apt-get install chromium)")
    return playwright.chromium.launch(executable_path=chromium, args=load.LAUNCH_ARGS)


def explorer_path(dataset, n_trees, **more):
    return "/?" + urlencode({"dataset": dataset, "l": n_trees, **more})


def _move(page, rng, timeout=60.0):
    """One λ step of ``page``, in a seeded direction; ``(seconds, problem or None)``."""
    before = load.params_of(page.page.url)
    page.lambda_step(rng.choice(("ArrowRight", "ArrowLeft")))
    seconds, st = page.wait(lambda s: usable(s) and load.params_of(page.page.url) != before,
                            timeout)
    return seconds, None if seconds is not None else f"the move was not answered: {_brief(st)}"


def _brief(st):
    keep = ("connection", "script", "charts", "dead", "disabled", "errors", "warnings", "files",
            "error")
    return json.dumps({k: st[k] for k in keep if st.get(k)}, ensure_ascii=False)[:300]


# --------------------------------------------------------------------------- cases


def case_failover(room, st, log):
    rng = random.Random(st.seed)
    pages = []
    for _ in range(st.pages):
        page = Page(room.browser, room.served.url, replica=1, watch_cache=True)
        page.goto(explorer_path("sonar", st.n_trees))
        pages.append(page)
    for page in pages:
        if page.wait(usable, 300)[0] is None:
            return [Figure("failover", "pages lost in browser failovers", "0", "-", None,
                           [f"a page never showed the Explorer: {_brief(page.state())}"])]
        for _ in range(3):  # a few moves first, so that the page holds messages of runs
            _move(page, rng)
    lost, back, moves_failed, detail = 0, [], 0, []
    for n in range(st.failovers):
        fault = "kill -9" if n % 2 == 0 else "kill -STOP"
        wait_healthy(room.served)
        on = [p.replica() for p in pages]
        replica = max(sorted(set(on)), key=on.count)
        pid = replica_pid(room.served, replica)
        before = [(len(p.sockets), p.state()["loadId"]) for p in pages]
        os.killpg(pid, signal.SIGKILL if n % 2 == 0 else signal.SIGSTOP)
        at = time.monotonic()
        pending = dict(enumerate(pages))
        while pending and time.monotonic() - at < st.deadline:
            for i, page in list(pending.items()):
                count, load_id = before[i]
                st_ = page.state()
                if st_["loadId"] != load_id:
                    lost += 1
                    detail.append(f"failover {n + 1} ({fault}): page {i} reloaded")
                    del pending[i]
                elif len(page.sockets) > count and usable(st_):
                    back.append(time.monotonic() - at)
                    del pending[i]
            pages[0].page.wait_for_timeout(250)
        for i, page in pending.items():
            lost += 1
            detail.append(f"failover {n + 1} ({fault}): page {i} not back in "
                          f"{st.deadline:g} s: {_brief(page.state())}")
            page.goto(explorer_path("sonar", st.n_trees))  # the student reloads
            page.wait(usable, 300)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGCONT)
        for i, page in enumerate(pages):
            seconds, problem = _move(page, rng)
            if problem:
                moves_failed += 1
                detail.append(f"failover {n + 1}: page {i}: {problem}")
        log(f"    failover {n + 1} ({fault} of replica {replica}): lost so far {lost}, "
            f"slowest back {max(back, default=0):.1f} s")
    references = sum(p.references for p in pages)
    cacheable = sum(p.cacheable for p in pages)
    for page in pages:
        page.close()
    total = st.failovers * st.pages
    return [
        Figure("failover", f"pages lost in {st.failovers} browser failovers "
                           f"({st.pages} pages each)", "0", f"{lost} of {total}", lost == 0,
               detail[:20] + [f"page back after a failover: median "
                              f"{_median(back):.1f} s, slowest {max(back, default=0):.1f} s "
                              f"({len(back)} page failovers); a λ move after it failed "
                              f"{moves_failed} times; messages the pages received as "
                              f"cacheable / as references: {cacheable} / {references}"]),
    ]


def _median(values):
    import statistics

    return statistics.median(values) if values else float("nan")


def _new_visitor(room):
    """A new visitor (a fresh context, no cookie): ``(seconds until the Explorer is drawn or
    None, the page's last state, the replica that served it)``."""
    page = Page(room.browser, room.served.url)
    start = time.monotonic()
    page.goto("/")
    seconds, state = page.wait(drawn, 300, every=0.1)
    seconds = None if seconds is None else time.monotonic() - start
    went = page.replica()
    page.close()
    return seconds, state, went


def case_new_visitor(room, st, log):
    waits, detail = [], []
    wait_healthy(room.served)
    first, _, went = _new_visitor(room)
    detail.append("the browser's first page, before any restart (not held to the target): "
                  + ("no Explorer in 300 s" if first is None else
                     f"{first:.1f} s (replica {went})"))
    log(f"    {detail[-1]}")
    for n in range(st.visitors):
        replica = str(n % 2 + 1)
        wait_healthy(room.served)
        pid = replica_pid(room.served, replica)
        os.killpg(pid, signal.SIGKILL)
        if wait_healthy(room.served, other_than=(replica, pid)) is None:
            detail.append(f"restart {n + 1}: replica {replica} not healthy again in 240 s")
            continue
        seconds, state, went = _new_visitor(room)
        # The control: the next new visitor, to a replica that has served a page.
        warm, _, again_went = _new_visitor(room)
        control = ("no Explorer in 300 s" if warm is None else
                   f"{warm:.1f} s (replica {again_went})")
        if seconds is None:
            detail.append(f"visit {n + 1}: no Explorer in 300 s: {_brief(state)}")
            waits.append(float("inf"))
        else:
            waits.append(seconds)
            detail.append(f"visit {n + 1}: {seconds:.1f} s after replica {replica} was "
                          f"reported healthy again, served by replica {went}; the next new "
                          f"visitor: {control}")
        log(f"    {detail[-1]}")
    if not waits:
        return [Figure("new-visitor", "worst wait of a new visitor after a replica restart",
                       "≤ 3 s", "-", None, detail)]
    worst = max(waits)
    return [Figure("new-visitor", f"worst wait of a new visitor after a replica restart "
                                  f"({len(waits)} restarts)", "≤ 3 s", f"{worst:.1f} s",
                   worst <= 3.0, detail)]


def _wait_read(page, timeout):
    """After an upload: the page has read the file (its column preview), refused it, or
    stopped; ``(seconds, state)``."""
    def done(s):
        return s["script"] == "notRunning" and (s["read"] or s["errors"] or s["dead"]
                                                 or any("rror" in f for f in s["files"]))
    return page.wait(done, timeout)


def _outcome(st_):
    if st_.get("error"):
        return st_["error"]
    parts = [f"error: {e}" for e in st_.get("errors", [])]
    parts += [f"uploader: {f}" for f in st_.get("files", []) if "rror" in f]
    parts += [f"warning: {w}" for w in st_.get("warnings", [])][:2]
    if st_.get("read"):
        parts.insert(0, "read" + (", 'Train now' offered" if st_.get("train") else ""))
    return "; ".join(parts) or _brief(st_)


def case_uploads(room, st, log):
    from sdwec.csv_loader import MAX_ROWS, MAX_UPLOAD_BYTES

    files = [synthetic_csv(st.upload_rows, seed=st.seed + k) for k in range(st.uploads)]
    too_big = [f.name for f in files if f.stat().st_size > MAX_UPLOAD_BYTES]
    if too_big or st.upload_rows > MAX_ROWS:
        return [Figure("uploads", "replicas killed by one user's uploads", "0", "-", None,
                       [f"the files are over the stated limits: {too_big or st.upload_rows}"])]
    bystanders = [Page(room.browser, room.served.url, replica=r) for r in (1, 2)]
    for page in bystanders:
        page.goto(explorer_path("wine", st.n_trees))
        page.wait(usable, 300)
    uploader = Page(room.browser, room.served.url)
    uploader.goto("/your_data")
    uploader.page.wait_for_selector('[data-testid="stFileUploader"]', timeout=120_000)
    pages = bystanders + [uploader]
    before = [p.state()["loadId"] for p in pages]
    since, opened = time.time(), time.monotonic()
    detail = []
    with MemorySampler(room.served) as memory:
        for k, path in enumerate(files):
            start, sent = time.monotonic(), len(uploader.responses)
            uploader.upload(path)
            # The previous file's preview stays until the new one's run replaces it: first
            # the file's PUT is answered, then the page reads it.
            while len(uploader.responses) == sent and time.monotonic() - start < 600:
                uploader.page.wait_for_timeout(250)
            uploader.page.wait_for_timeout(1000)
            seconds, state = _wait_read(uploader, 600)
            seconds = None if seconds is None else time.monotonic() - start
            detail.append(f"upload {k + 1} ({path.stat().st_size / 2**20:.0f} MiB): "
                          + (f"{seconds:.0f} s, " if seconds is not None else "no answer in "
                             "600 s, ") + _outcome(state))
            log(f"    {detail[-1][:160]}")
        time.sleep(st.settle)
    killed = restarts_since(room.served, since)
    cut = 0
    for page, load_id in zip(pages, before):
        st_ = page.state()
        closed = [gone for _, gone in page.sockets if gone is not None and gone >= opened]
        if st_["loadId"] != load_id or closed or st_["connection"] != "CONNECTED":
            cut += 1
    for page in pages:
        page.close()
    peaks = ", ".join(f"{label} {_mib(memory.own.get(label, 0))} MiB "
                      f"({_mib(memory.total.get(label, 0))} with its workers)"
                      for label in sorted(memory.own))
    detail = [f"peak resident memory: {peaks}"] + detail + [f"serve.sh: {line}"
                                                            for line in killed]
    top = max(memory.own.values(), default=0)
    return [
        Figure("uploads", f"replicas killed by one user's {st.uploads} uploads of "
                          f"{st.upload_rows:,} rows", "0", str(len(killed)), not killed,
               detail),
        Figure("uploads", "sessions cut meanwhile (the uploader's and one bystander per "
                          "replica)", "0", f"{cut} of {len(pages)}", cut == 0),
        Figure("uploads", "peak replica memory (own RSS, the guard's measure)", "-",
               f"{_mib(top)} MiB", None),
    ]


def _trickle(host, port, address, path, cookies, token, stop, chunk=1024, every=5.0,
             length=1_000_000):
    """One upload sending ``chunk`` bytes every ``every`` s from ``address`` until ``stop``;
    the answer's status line if the proxy answered, else "held"."""
    head = (f"PUT {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: {length}\r\n"
            f"Cookie: {'; '.join(f'{k}={v}' for k, v in cookies.items())}\r\n"
            f"X-Xsrftoken: {token}\r\n\r\n").encode()
    part = (b"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"slow.csv\"\r\n"
            b"Content-Type: text/csv\r\n\r\na,b,label\n")
    try:
        sock = socket.create_connection((host, port), timeout=30, source_address=(address, 0))
    except OSError as exc:
        return f"no connection: {exc}"
    with sock:
        try:
            sock.sendall(head + part)
            while True:
                sock.sendall(b"1,2,yes\n" * (chunk // 8))
                if select.select([sock], [], [], every)[0]:
                    answer = sock.recv(4096).split(b"\r\n", 1)[0].decode(errors="replace")
                    return answer or "closed by the proxy"
                if stop.is_set():
                    return "held"
        except OSError as exc:
            return f"cut: {type(exc).__name__}"


def case_trickle(room, st, log):

    url, port = room.served.url, room.served.port
    students = []
    for i in range(st.tricklers):
        jar = {}
        faults.fetch(url + "/_stcore/health", jar)
        students.append(jar)
    ready, stop, sessions = threading.Event(), threading.Event(), {}

    async def hold():
        from harness.wsclient import Session

        opened = []
        for i, jar in enumerate(students):
            client = Session(url, timeout=120,
                             headers={"Cookie": "; ".join(f"{k}={v}" for k, v in jar.items())})
            await client.open(urlencode({"dataset": "wine", "l": st.n_trees}))
            jar.update(client.cookies)
            sessions[i] = client.session_id
            opened.append(client)
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.2)
        for client in opened:
            await client.close()

    holder = threading.Thread(target=lambda: asyncio.run(hold()), daemon=True)
    holder.start()
    if not ready.wait(300):
        stop.set()
        return [Figure("trickle", "another session uploads while 8 trickle", "yes", "-", None,
                       ["the trickling students' sessions did not open"])]
    results, threads = [], []
    for i, jar in enumerate(students):
        for _ in range(2):
            path = f"/_stcore/upload_file/{sessions[i]}/{uuid.uuid4()}"
            args = ("127.0.0.1", port, f"127.0.0.{20 + i}", path, jar,
                    jar.get("_streamlit_xsrf", ""), stop)
            thread = threading.Thread(target=lambda a=args: results.append(_trickle(*a)),
                                      daemon=True)
            thread.start()
            threads.append(thread)
    started = time.monotonic()
    time.sleep(6.0)  # every trickle has sent its first kilobytes and waits
    other = Page(room.browser, url)
    other.goto("/your_data")
    other.page.wait_for_selector('[data-testid="stFileUploader"]', timeout=120_000)
    other.upload(synthetic_csv(2_000, seed=300 + st.seed))
    seconds, state = _wait_read(other, 120)
    statuses = [status for _, status in other.responses]
    during = time.monotonic() - started < st.trickle_seconds
    time.sleep(max(0.0, st.trickle_seconds - (time.monotonic() - started)))
    stop.set()
    for thread in threads:
        thread.join(15)
    holder.join(30)
    other.close()
    ok = bool(state.get("read")) and 204 in statuses and during
    held = sum(1 for r in results if r == "held")
    return [Figure(
        "trickle", f"another session uploads while {2 * st.tricklers} uploads trickle "
                   f"(1 KB / 5 s from {st.tricklers} students)", "yes",
        ("yes" if ok else "no") + f": HTTP {', '.join(map(str, statuses)) or 'none'}; "
        f"the page: {_outcome(state)[:200]}", ok,
        [f"the trickling uploads after {st.trickle_seconds:g} s: {held} still held, "
         f"others: {[r for r in results if r != 'held']}",
         "the other upload was " + ("read by its page in "
                                    f"{seconds:.1f} s" if seconds is not None and state.get(
                                        "read") else "not read")
         + ("" if during else " (after the trickle had ended: not a test)")])]


def case_pools(room, st, log):
    from sdwec import cache as disk_cache

    room_cache = Path(tempfile.mkdtemp(prefix="sdwec-cache-classroom-pools-"))
    if st.warm:
        prepare_cache(room_cache, room.warm_dir, log)
    defaults = {p.name for p in room_cache.glob("*.pkl")}
    base = sum(p.stat().st_size for p in room_cache.glob("*.pkl"))
    cap = int(base + st.pool_slack_mb * 2**20)
    served = Served(2, room_cache, extra=room.extra)
    served.env[disk_cache.MAX_BYTES_ENV] = str(cap)
    seen, detail = {}, []
    with served, EntryWrites(room_cache) as writes:
        wait_healthy(served)
        page = Page(room.browser, served.url)
        page.goto("/your_data")
        page.page.wait_for_selector('[data-testid="stFileUploader"]', timeout=120_000)
        for k in range(st.pool_uploads):
            page.upload(synthetic_csv(st.pool_rows, seed=200 + st.seed + k))
            seconds, state = page.wait(
                lambda s: s["script"] == "notRunning" and (s["charts"] > 0 or s["train"]
                                                           or s["errors"]), 600)
            if state.get("train"):  # over a minute on this machine: accept, as a user would
                page.page.get_by_role("button", name="Train now").first.click()
                seconds, state = page.wait(
                    lambda s: s["script"] == "notRunning" and (s["charts"] > 0 or s["errors"]),
                    900)
            for entry in room_cache.glob("*.pkl"):
                if entry.name not in defaults:
                    with contextlib.suppress(OSError):
                        seen[entry.name] = entry.stat().st_size
            detail.append(f"upload {k + 1}: " + ("pool trained and shown" if seconds is not None
                                                 and state.get("charts") else _outcome(state)))
            log(f"    {detail[-1][:160]}")
        page.close()
        uploaded = sum(n for name, n in writes.counts().items() if name not in defaults)
    kept, total = cached_defaults(room_cache, st.n_trees)
    entries = list(room_cache.glob("*.pkl"))
    locks = list(room_cache.glob("*.lock"))
    written = base + sum(seen.values())
    detail = [f"cache cap {_mib(cap)} MiB = the default pools ({_mib(base)} MiB) + "
              f"{st.pool_slack_mb:g} MiB; upload pools written {uploaded} (inotify), "
              f"{len(seen)} of them seen between uploads ({_mib(sum(seen.values()))} MiB), "
              f"{sum(1 for e in entries if e.name in seen)} still there; {len(entries)} entries and {len(locks)} lock files at the end"
              ] + detail
    shutil.rmtree(room_cache, ignore_errors=True)
    if written <= cap:
        return [Figure("pools", "default pools still cached after uploads", "all", "-", None,
                       detail + ["the uploads never filled the cache: nothing had to go"])]
    return [Figure("pools", f"the class's default pools still cached after "
                            f"{st.pool_uploads} uploads", "all", f"{kept} of {total}",
                   kept == total, detail)]


def case_abandon(room, st, log):
    page = Page(room.browser, room.served.url)
    page.goto(explorer_path(st.abandon_dataset, st.abandon_trees))
    start, clicked = time.monotonic(), False
    ask = page.page.get_by_role("button", name=re.compile(r"^Train (it|now)"))
    while not training_now(room.served, room.cache_dir):
        if not clicked and ask.count():  # a link asks before a long training: the student
            ask.first.click()  # clicks, then leaves
            clicked = True
        if time.monotonic() - start > 120:
            shown = page.page.evaluate("() => document.body.innerText.slice(0, 600)")
            page.close()
            return [Figure("abandon", "training still running after its last waiter left",
                           "< 60 s", "-", None,
                           [f"no training started within 120 s of the link "
                            f"(l = {st.abandon_trees} on {st.abandon_dataset}); the page "
                            f"showed: {shown!r}"])]
        time.sleep(0.5)
    time.sleep(3.0)  # the page shows its progress
    what = training_now(room.served, room.cache_dir)
    what += ["started by a click on the page's 'Train' button"] if clicked else []
    page.close()
    closed = time.monotonic()
    while training_now(room.served, room.cache_dir):
        if time.monotonic() - closed > st.abandon_limit:
            break
        time.sleep(0.5)
    left = training_now(room.served, room.cache_dir)
    seconds = time.monotonic() - closed
    value = (f"still training {st.abandon_limit:g} s later" if left
             else f"{seconds:.1f} s")
    return [Figure("abandon", f"training after its last waiter left (l = {st.abandon_trees} "
                              f"on {st.abandon_dataset}, tab closed)", "< 60 s", value,
                   not left and seconds < 60.0,
                   [f"training when the tab closed: {', '.join(what)}"]
                   + ([f"still there: {', '.join(left)}"] if left else []))]


#: Hostile values: each carries a marker that must not end up in an element.
INJECTED = (("**INJBOLD** text", ("INJBOLD",)),
            ("[INJLINK](https://evil.invalid/login)", ("INJLINK", "evil.invalid")),
            ("![INJIMG](https://tracker.invalid/p.png)", ("INJIMG", "tracker.invalid")),
            ("<strong>INJHTML</strong><img src=https://tracker.invalid/h.png>",
             ("INJHTML", "tracker.invalid")),
            ("x` **INJTICK** [INJTLINK](https://evil.invalid/t) `y",
             ("INJTICK", "INJTLINK", "evil.invalid")))
INJECT_KEYS = ("dataset", "task", "thr", "lam")


def case_inject(room, st, log):
    made, shown, loads, detail = 0, 0, 0, []
    page = Page(room.browser, room.served.url)
    for value, markers in INJECTED[:st.inject_values]:
        for key in INJECT_KEYS:
            query = {"dataset": "sonar", "l": st.n_trees, key: value}
            start = len(page.requests)
            page.page.goto(room.served.url + "/?" + urlencode(query), wait_until="commit")
            seconds, state = page.wait(lambda s: s["connection"] == "CONNECTED"
                                       and s["script"] == "notRunning", 120)
            page.page.wait_for_timeout(1000)  # images and links a render would add
            loads += 1
            found = page.page.evaluate(MADE_JS, list(markers))
            fetched = [u for u in page.requests[start:]
                       if (urlsplit(u).hostname or "").endswith(".invalid")]
            if seconds is None:
                detail.append(f"{key}={value!r}: the page did not settle: {_brief(state)}")
            if found or fetched:
                made += 1
                detail.append(f"{key}={value!r}: made {found[:3]}, fetched {fetched[:2]}")
            if page.page.evaluate("(m) => document.body.innerText.includes(m)", markers[0]):
                shown += 1
    page.close()
    detail.append(f"{shown} of {loads} pages showed the value's text (the others did not "
                  f"echo it)")
    return [Figure("inject", f"links whose text was rendered as markdown or HTML ({loads} "
                             f"links: {st.inject_values} values × {len(INJECT_KEYS)} keys)",
                   "0", str(made), made == 0, detail)]


class _Planted:
    """A pickle that creates a file when it is loaded: what a planted entry could run."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def planted_entry(key, payload):
    """An entry file's bytes written from the format's description (sdwec/cache.py): magic,
    header (key length, the payload's SHA-256, its length), a tag of zeros, key, payload."""
    from sdwec import cache as disk_cache

    key_bytes = json.dumps(key, sort_keys=True, separators=(",", ":")).encode()
    header = struct.pack(">Q32sQ", len(key_bytes), hashlib.sha256(payload).digest(),
                         len(payload))
    return disk_cache._MAGIC + header + bytes(32) + key_bytes + payload


def case_planted(room, st, log):
    from sdwec import cache as disk_cache
    from sdwec import pool

    marker = Path(tempfile.mkdtemp(prefix="sdwec-planted-")) / "the planted pickle ran"
    key = pool.PoolKey.for_dataset(st.planted_dataset, "binary", st.n_trees, 0)
    payload = pickle.dumps(_Planted(marker))
    pickle.loads(payload)  # the payload is live: loaded, it creates the file
    if not marker.exists():
        return [Figure("planted", "a planted cache entry refused", "refused", "-", None,
                       ["the planted pickle does not create its file when loaded"])]
    marker.unlink()
    with cache_env(room.cache_dir):
        path = pool.cache_path(key)
        path.write_bytes(planted_entry(key._cache_key(), payload))
    page = Page(room.browser, room.served.url)
    page.goto(explorer_path(st.planted_dataset, st.n_trees))
    seconds, state = page.wait(drawn, 600)
    page.close()
    with cache_env(room.cache_dir):
        signed = disk_cache.contains(key._cache_key(), path.name.rsplit("-", 1)[0])
    logged = [line for line in room.served.log().splitlines() if path.name in line]
    ran = marker.exists()
    shutil.rmtree(marker.parent, ignore_errors=True)
    detail = [f"planted {path.name}: the page " + ("drew its charts" if seconds is not None
                                                    else f"did not: {_brief(state)}"),
              "the entry is now " + ("signed (rebuilt)" if signed else "not signed"),
              f"replica log: {logged[0][:200] if logged else 'nothing about it'}"]
    if seconds is None and not ran:
        return [Figure("planted", "a planted cache entry refused", "refused", "-", None,
                       detail)]
    return [Figure("planted", "a planted cache entry refused (never unpickled)", "refused",
                   "its code ran" if ran else "refused", not ran, detail)]


CASES = {"failover": case_failover, "new-visitor": case_new_visitor, "uploads": case_uploads,
         "trickle": case_trickle, "pools": case_pools, "abandon": case_abandon,
         "inject": case_inject, "planted": case_planted}
#: The order a run takes: cheap checks first, the cases that strain the replicas last.
ORDER = ("inject", "planted", "failover", "new-visitor", "abandon", "trickle", "uploads",
         "pools")


@dataclass
class Room:
    """What the cases share: serve.sh, its cache folder, one Chromium."""

    served: Served
    cache_dir: Path
    browser: object
    warm_dir: Path = WARM_DIR
    extra: tuple = ()


def run(cases, settings, log=print, warm_dir=WARM_DIR, extra=()):
    """Run ``cases`` (names of :data:`CASES`) against a fresh serve.sh; return the figures."""
    from playwright.sync_api import sync_playwright

    cache_dir = Path(tempfile.mkdtemp(prefix="sdwec-cache-classroom-"))
    if settings.warm:
        prepare_cache(cache_dir, warm_dir, log)
    figures = []
    try:
        with Served(2, cache_dir, extra=extra) as served, sync_playwright() as playwright:
            log(f"  serve.sh up: {served.url}, run directory {served.run_dir}")
            wait_healthy(served)
            browser = _launch(playwright)
            room = Room(served, cache_dir, browser, Path(warm_dir), tuple(extra))
            for name in [c for c in ORDER if c in cases]:
                log(f"  {name} (load average {load_average()})")
                start = time.monotonic()
                try:
                    found = CASES[name](room, settings, log)
                except Exception as exc:  # noqa: BLE001 -- the case says why, the run goes on
                    # A case that could not run is a miss, not information.
                    found = [Figure(name, f"the {name} case", "it runs to the end",
                                    "it could not run", False,
                                    [f"it could not run: {type(exc).__name__}: "
                                     f"{str(exc)[:300]}"])]
                found[0].detail.append(f"case wall time {time.monotonic() - start:.0f} s")
                for figure in found:
                    log(f"  {line(figure)}")
                figures += found
            browser.close()
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    return figures


# --------------------------------------------------------------------------- report


def line(figure):
    return (f"{figure.case:12} {figure.what}: {figure.value} (target {figure.target}) "
            f"{figure.verdict}")


def report(figures, settings, command=None, wall=0.0, when=None):
    """The Markdown section of a run (starts with :data:`HEADING`)."""
    sizes = ", ".join(f"{f.name} {getattr(settings, f.name)}" for f in fields(settings))
    lines = [HEADING, ""]
    if command:
        lines += ["Command:", "", f"```\n{command}\n```", ""]
    lines += [f"Run {when or time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on "
              f"{machine()}; load average at the end {load_average()}; wall time "
              f"{wall:.0f} s.", "",
              "`bash scripts/serve.sh --replicas 2` on a free port with its own run "
              "directory and a fresh pool cache"
              + (" (the class's default pools pre-warmed: `sdwec warm`)" if settings.warm
                 else "") + f", Debian's Chromium through Playwright. Settings: {sizes}.", "",
              table(["case", "figure", "measured", "target", ""],
                    [[f.case, f.what, f.value, f.target, f"**{f.verdict}**"]
                     for f in figures]), "", "Details:", ""]
    for f in figures:
        lines += [f"- {f.case}: {text}" for text in f.detail]
    lines.append("")
    return "\n".join(lines)


def write_section(path, text):
    """Put ``text`` (starting with :data:`HEADING`) in ``path`` in place of its old section
    (up to the next top-level heading), else before the fault section (whose writer keeps
    what comes before it), else at the end; the other sections stay."""
    path = Path(path)
    old = path.read_text() if path.exists() else ""
    body = text.rstrip() + "\n"
    if HEADING in old:
        head, rest = old.split(HEADING, 1)
        after = rest.split("\n# ", 1)
        tail = "\n# " + after[1] if len(after) > 1 else ""
        new = head + body + ("\n" + tail.lstrip("\n") if tail else "")
    elif "\n# Serving a class through faults" in old:
        head, tail = old.split("\n# Serving a class through faults", 1)
        new = head.rstrip() + "\n\n" + body + "\n# Serving a class through faults" + tail
    else:
        new = (old.rstrip() + "\n\n" if old.strip() else "") + body
    path.write_text(new)


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.classroom",
        description="A hostile or careless class against scripts/serve.sh --replicas 2: "
                    "one line per 'done when' figure with its target and PASS or MISS.")
    parser.add_argument("--case", action="append", choices=sorted(CASES),
                        help="run this case (repeatable; default: all)")
    defaults = Settings()
    flags = {"pages": "failover: Chromium pages", "failovers": "failover: how many",
             "deadline": "failover: seconds a page has to come back",
             "visitors": "new-visitor: replica restarts, one new visitor after each",
             "uploads": "uploads: files one session uploads",
             "upload_rows": "uploads: rows per file", "settle": "uploads: seconds after",
             "tricklers": "trickle: students holding 2 uploads each",
             "trickle_seconds": "trickle: how long they trickle",
             "pool_uploads": "pools: uploads", "pool_rows": "pools: rows per upload",
             "pool_slack_mb": "pools: cache cap above the default pools, MiB",
             "abandon_dataset": "abandon: dataset of the untrained pool",
             "abandon_trees": "abandon: its pool size l",
             "abandon_limit": "abandon: seconds watched after the tab closed",
             "inject_values": f"inject: hostile values (1-{len(INJECTED)})",
             "planted_dataset": "planted: dataset whose first pool is planted",
             "n_trees": "the pages' pool size l (200: the warmed default pools)",
             "seed": "seeds the slider directions and offsets the CSVs' seeds"}
    for name, text in flags.items():
        value = getattr(defaults, name)
        parser.add_argument("--" + name.replace("_", "-"), type=type(value), default=value,
                            help=f"{text} (default {value})")
    parser.add_argument("--no-warm", action="store_true",
                        help="do not pre-warm the default pools (the pages train them)")
    parser.add_argument("--warm-dir", default=str(WARM_DIR),
                        help="where warmed default pools are kept between runs")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes: 2 pages, 2 failovers, 2 visitors, 2 uploads of "
                             "100,000 rows, 2 tricklers for 20 s, 3 pool uploads, 1 value")
    parser.add_argument("--write", metavar="FILE",
                        help=f"put the report's section ({HEADING!r}) into FILE")
    args = parser.parse_args(argv)
    values = {name: getattr(args, name) for name in flags}
    if args.quick:
        values.update(pages=2, failovers=2, visitors=2, uploads=2, upload_rows=100_000,
                      settle=5.0, tricklers=2, trickle_seconds=20.0, pool_uploads=3,
                      inject_values=1, abandon_limit=90.0)
    settings = Settings(**values, warm=not args.no_warm)
    if not 1 <= settings.inject_values <= len(INJECTED):
        parser.error(f"--inject-values must be 1 to {len(INJECTED)}")
    if min(settings.pages, settings.failovers, settings.visitors, settings.uploads,
           settings.tricklers, settings.pool_uploads) < 1:
        parser.error("every size must be at least 1")
    cases = args.case or list(ORDER)
    command = " ".join(["python -m benchmarks.classroom"]
                       + list(sys.argv[1:] if argv is None else argv))
    start = time.monotonic()
    try:
        figures = run(cases, settings, warm_dir=args.warm_dir)
    except RuntimeError as exc:  # nginx, chromium or serve.sh missing or not starting
        print(f"classroom: {exc}", file=sys.stderr)
        return 1
    text = report(figures, settings, command, time.monotonic() - start)
    print()
    for figure in figures:
        print(line(figure))
    print()
    print(text)
    if args.write:
        write_section(args.write, text)
    return 0 if all(f.passed is not False for f in figures) else 1
