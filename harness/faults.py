"""Faults under load: ``scripts/serve.sh`` loses a replica or nginx while a class works.

One serve.sh (2 replicas behind nginx) serves ``sessions`` websocket clients that behave as
browsers do: each loads the page over HTTP first and keeps the cookies it gets (the proxy's
cookie naming the replica that holds its session, Streamlit's XSRF cookie), moves sliders
with pauses, and when its websocket closes (noticed at once, also between two moves, as the
page's ``onclose`` does) it reconnects with the timing of Streamlit's page: a first wait of
0.25-0.5 s, ``/_stcore/health`` pings 0.1 s apart doubling up to 4 s, then a new session with
the page's address (its query string holds the whole configuration); a failed websocket
waits 0.5-1 s, 1-2 s, ... (up to 4 s) before the next round (:func:`reconnect_delay`,
:func:`ping_retry_delay`).  Meanwhile a *visitor* loads the page
without cookies every half second (a student arriving).

Like the page, each session keeps Streamlit's browser-side cache of large messages
(:class:`PageCache`, the frontend's ``ForwardMessageCache``): a message the server marks
cacheable is kept by its hash, every rerun request advertises the hashes kept, the server
sends a short reference instead of a message the session advertised, and a message unused
for ``maxCachedMessageAge`` runs is forgotten when a run's ``script_finished`` arrives (not
while a request sent since has had no ``new_session``: the page's ``hasReceivedNewSession``).
A reference to a message the session no longer holds is the page's fatal "Cached ForwardMsg
MISS": counted as a *dead page* (an error a user sees), after which the session reloads, as
a student would.  A slider inside a fragment asks for a run of that fragment, as the page
does (the Explorer's solver sliders); the session's widgets are those of its last whole run
updated by the fragment runs since.  With ``move_while_reconnecting`` the student's next
move goes out after a reconnect once the reconnect's run has ended on the server and before
the session has read its answer (a page slow to read: a busy laptop, a slow network; the
page takes input once its websocket is open): then the end of the reconnect's whole run,
read first, can make the cache forget a message the move's run was told it holds (so
the served settings cache no message, deploy/streamlit.toml).

Then, one after the other, each fault of ``faults``:

- ``replica-kill``: SIGKILL to the process group of the replica holding most sessions;
- ``replica-stop``: SIGSTOP to it (a hung replica: it accepts connections and answers
  nothing); SIGCONT after ``stop_for`` s if it still exists;
- ``nginx-kill``: SIGKILL to nginx's master (its workers live on as orphans).

Each fault is measured for ``window`` seconds, then every session uploads a file (PUT
``/_stcore/upload_file/<its session>/...`` with its cookies: 204 expected) and downloads one
(the Explorer's "Weights (CSV)" button, built on request and fetched over HTTP: 200 and the
file's format line expected), both through the proxy, as a user would after a failover.

Per fault: actions served and interrupted, errors a user would see, sessions lost (no
working session at the end of the window), the time from the fault until each interrupted
session showed its page again, whether every session kept its configuration (the page after
the reconnect shows the configuration it had, and the next slider move changes only that
slider), uploads and downloads that worked, the longest any request waited (actions,
reconnects, page loads, health pings, transfers), the new visitors' page loads (slowest,
failed), and when serve.sh reported every process healthy again (capacity back).  A
*timeline* per fault puts serve.sh's ``health.log`` (millisecond times) beside the hit
sessions' steps (websocket closed, health answered, websocket open on which replica, page
drawn again), and a probe asks each replica's ``/_stcore/health`` directly every half second
to show how long a busy replica takes to answer it (the margin against killing a slow one).

``python -m benchmarks.serve --faults`` runs it (``harness/serve.py``); the test suite
runs a reduced version (``tests/test_serve.py``) that asserts the outcomes, not the times.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import datetime
import http.client
import os
import random
import re
import signal
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from urllib.parse import urlencode

from harness import load
from harness.common import percentile
from sdwec.export import FORMAT as WEIGHTS_FORMAT

FAULTS = {
    "replica-kill": "kill -9 of a replica (its process group)",
    "replica-stop": "kill -STOP of a replica (hung: accepts connections, answers nothing)",
    "nginx-kill": "kill -9 of nginx's master process",
}
DOWNLOAD = "Weights (CSV)"
DOWNLOAD_HEAD = f'# format: "{WEIGHTS_FORMAT}"'.encode()  # what the weights CSV starts with
UPLOAD_BODY = (b"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.csv\"\r\n"
               b"Content-Type: text/csv\r\n\r\n" + b"a,b,label\n1,2,yes\n3,4,no\n" * 50
               + b"\r\n--b--\r\n")


def reconnect_delay(attempt, rng):
    """Seconds Streamlit's page waits before its ``attempt``-th try to reach the server again
    after its websocket closed or failed (Streamlit 1.67's frontend, ``WebsocketConnection.
    nextReconnectDelayMs``): 0.25-0.5 s the first time, then between half and all of
    min(4 s, 0.5 s x 2^(attempt-1)); the count starts again once connected."""
    top = min(4.0, 0.5 * 2 ** (attempt - 1))
    return rng.uniform(0.25 if attempt == 1 else top / 2, top)


def ping_retry_delay(failed, rng):
    """Seconds between the page's health pings after ``failed`` pings got no answer
    (Streamlit 1.67's ping loop): 0.1 s after the first, then doubling up to 4 s, each
    after the first cut to a random 70-100 %."""
    top = min(4.0, 0.1 * 2 ** (failed - 1))
    return top if failed == 1 else top * rng.uniform(0.7, 1.0)


@dataclass
class FaultSettings:
    """What one fault run does (see ``python -m benchmarks.serve --help``)."""

    sessions: int = 15
    faults: tuple = tuple(FAULTS)
    steady: float = 20.0  # seconds of load before each fault
    window: float = 30.0  # seconds measured after each fault
    stop_for: float = 30.0  # a stopped replica still there after this long gets SIGCONT
    think: tuple = (0.5, 2.5)
    datasets: tuple = ("wine", "sonar", "heart", "ionosphere")
    n_trees: int = 50
    seed: int = 0
    rng_seed: int = 0
    request_timeout: float = 60.0  # a request that waits longer is given up (and counted)
    visitor_every: float = 0.5
    move_while_reconnecting: bool = True  # after a reconnect, a move before its answer is read


@dataclass
class Request:
    """One timed request of a session or a visitor."""

    who: str  # "session K" or "visitor"
    kind: str  # "action", "reconnect", "page", "health", "upload", "download"
    start: float  # time.monotonic()
    seconds: float
    ok: bool
    error: str | None = None
    replica: str = ""  # the proxy's X-SDWEC-Replica (HTTP) or the session's cookie


@dataclass
class Fault:
    """One fault and what the sessions saw in its window."""

    name: str
    at: float
    target: str
    affected: list  # sessions on the faulted replica (all of them for nginx)
    replicas_before: dict  # session -> replica before the fault
    replicas_after: dict = field(default_factory=dict)
    requests: list = field(default_factory=list)
    recovered: dict = field(default_factory=dict)  # session -> s from fault to its page
    outages: dict = field(default_factory=dict)  # session -> s from its unanswered action
    config_lost: list = field(default_factory=list)  # "session K: what changed"
    lost: list = field(default_factory=list)
    transfers: dict = field(default_factory=dict)  # session -> (upload status, download clicks)
    transfer_errors: list = field(default_factory=list)
    capacity_back: float | None = None  # s until serve.sh's status showed all healthy
    pid_changed: bool = False  # the faulted process was replaced by a new one
    wall: float = 0.0  # time.time() of the fault (for serve.sh's health.log)
    steps: dict = field(default_factory=dict)  # session -> its reconnect's steps (s after)
    health_notes: list = field(default_factory=list)  # (s after the fault, health.log line)
    probes: list = field(default_factory=list)  # (replica, s after, seconds, status)
    dead: list = field(default_factory=list)  # "session K: ..." pages killed by a cache miss
    references: int = 0  # cached messages the sessions were sent as a reference to


def _cookies_from(headers, jar):
    for value in headers.get_all("Set-Cookie") or []:
        parsed = SimpleCookie()
        parsed.load(value)
        jar.update({name: morsel.value for name, morsel in parsed.items()})


def fetch(url, cookies=None, method="GET", body=None, headers=None, timeout=60.0):
    """``(status, headers, body)`` of one request (status 0: no answer); the cookies the
    answer sets go into ``cookies``."""
    request = urllib.request.Request(url, data=body, method=method, headers=dict(headers or {}))
    if cookies:
        request.add_header("Cookie", "; ".join(f"{k}={v}" for k, v in cookies.items()))
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            data = reply.read()
            status, answer = reply.status, reply.headers
    except urllib.error.HTTPError as exc:
        data, status, answer = exc.read(), exc.code, exc.headers
    except (OSError, http.client.HTTPException):  # no answer, or an answer cut short
        return 0, None, b""
    if cookies is not None:
        _cookies_from(answer, cookies)
    return status, answer, data


class PageCache:
    """The page's cache of large messages, as Streamlit 1.67's frontend keeps it
    (``ForwardMessageCache`` and ``App.handleScriptFinished`` in its bundle).

    A message the server marked ``metadata.cacheable`` (a new element of at least
    ``global.minCachedMessageSize`` bytes) is kept under its hash, with the run count at
    which it was last used and its fragment; a reference (``ref_hash``) is answered from
    it.  At each ``script_finished`` of a whole or fragment run that succeeded, if a
    ``new_session`` has arrived since the page last sent a request, the run count goes up
    and every message of the run's scope (all for a whole run, the run's fragments' for a
    fragment run) unused for more than ``max_age`` runs is forgotten.  A reload empties it
    (:meth:`clear`); a websocket reconnect keeps it.
    """

    def __init__(self):
        self.entries = {}  # hash -> [payload, run count when last used, fragment id or ""]
        self.runs = 0
        self.max_age = 2  # the Config of the last new_session says (maxCachedMessageAge)
        self.answered = True  # the page's hasReceivedNewSession
        self.references = 0  # references resolved
        self.misses = []  # hashes referred to and not held

    def clear(self):
        self.entries.clear()
        self.answered = True

    def hashes(self):
        """The hashes a rerun request advertises (the page's ``getCachedMessageHashes``)."""
        return list(self.entries)

    def request_sent(self):
        self.answered = False

    def receive(self, payload):
        """What the page processes for ``payload``: itself, the message a reference stands
        for (with the reference's metadata), or ``None`` for a reference to a message not
        held (the page's fatal "Cached ForwardMsg MISS"; the hash goes to :attr:`misses`)."""
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = ForwardMsg.FromString(payload)
        kind = msg.WhichOneof("type")
        if kind == "ref_hash":
            entry = self.entries.get(msg.ref_hash)
            if entry is None:
                self.misses.append(msg.ref_hash)
                return None
            entry[1] = self.runs
            self.references += 1
            cached = ForwardMsg.FromString(entry[0])
            cached.metadata.CopyFrom(msg.metadata)
            return cached.SerializeToString()
        if msg.metadata.cacheable and msg.hash:
            if msg.hash in self.entries:
                self.entries[msg.hash][1] = self.runs
            else:
                fragment = msg.delta.fragment_id if kind == "delta" else ""
                self.entries[msg.hash] = [payload, self.runs, fragment]
        elif kind == "new_session":
            self.answered = True
            self.max_age = msg.new_session.config.max_cached_message_age
        elif kind == "script_finished" and msg.script_finished in (
                ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY):
            if self.answered and msg.metadata.run.script_run_id:
                self.finished(tuple(msg.metadata.run.fragment_ids))
        return payload

    def finished(self, fragment_ids=()):
        """A run ended: count it, forget what went unused too long (in the run's scope)."""
        self.runs += 1
        for key, (_, used, fragment) in list(self.entries.items()):
            if fragment_ids and (not fragment or fragment not in fragment_ids):
                continue
            if self.runs - used > self.max_age:
                del self.entries[key]


def _browser_session(url, timeout):
    """A :class:`harness.wsclient.Session` that keeps the page's message cache
    (:class:`PageCache`, :attr:`cache`), advertises it, runs a fragment's slider as a run
    of that fragment, and can send a move before it reads a page load's answer
    (:meth:`open` with ``then``)."""
    from harness.wsclient import Session, _widget, widget_state

    class BrowserSession(Session):
        def __init__(self):
            super().__init__(url, timeout=timeout)
            self.cache = PageCache()
            self.fragments = {}  # widget label -> the fragment it is drawn in ("" if none)
            self.then_run = None  # the answer to open()'s ``then`` move
            self._then = None
            self._buffer = []  # payloads received and not yet read by the page
            self.first_at = None  # with ``then``: when the page's own run had been read
            self._fragment = ""

        def reload(self):
            """A page reload: a new page, nothing cached."""
            self.cache.clear()

        async def open(self, query="", then=None):
            """Load the page at ``/?query`` in a new session (a reconnect keeps the cache).
            With ``then=(label, value)`` the slider ``label`` (of the page before) is moved
            to ``value`` once the page's run has ended on the server and before the page
            has read its answer; :attr:`then_run` is the run that answered the move."""
            self.then_run, self._then, self._buffer, self.first_at = None, None, [], None
            if then is not None:
                label, value = then
                self._then = (widget_state(self.widgets[label], value),
                              self.fragments.get(label, ""), self.page_hash)
            return await super().open(query)

        async def set(self, label, value):
            if label not in self.widgets:
                return await super().set(label, value)
            return await self._run([widget_state(self.widgets[label], value)],
                                   fragment=self.fragments.get(label, ""))

        def _request(self, states, fragment="", page_hash=None):
            from streamlit.proto.BackMsg_pb2 import BackMsg

            message = BackMsg()
            request = message.rerun_script
            request.query_string = self.query
            request.page_script_hash = self.page_hash if page_hash is None else page_hash
            request.widget_states.widgets.extend(states)
            request.cached_message_hashes.extend(self.cache.hashes())
            if fragment:
                request.fragment_id = fragment
            self.cache.request_sent()
            return message

        async def _run(self, states, fragment=""):
            from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

            from harness.wsclient import ProtocolError

            if self.socket is None:
                raise ProtocolError("the session is not open")
            then, self._then = self._then, None
            start = time.perf_counter()
            self._fragment = fragment
            await self._send(self._request(states, fragment))
            if then is None:
                return await self._receive(start)
            # The page is slow to read its answer (a busy laptop, a slow network): the run
            # has ended on the server, and the student's move goes out before the page has
            # processed any of it (the cache and its guard as they were).
            limit = start + self.timeout
            while True:
                payload = await Session._next(self, limit, "script_finished")
                self._buffer.append(payload)
                msg = ForwardMsg.FromString(payload)
                if (msg.WhichOneof("type") == "script_finished"
                        and msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN):
                    break
            state, then_fragment, page_hash = then
            moved = time.perf_counter()
            await self._send(self._request([state], then_fragment, page_hash))
            first = await self._receive(start)
            self.first_at = time.monotonic()
            self._fragment = then_fragment
            self.then_run = await self._receive(moved)
            return first

        async def _next(self, limit, what):
            payload = (self._buffer.pop(0) if self._buffer
                       else await super()._next(limit, what))
            resolved = self.cache.receive(payload)
            return payload if resolved is None else resolved  # unresolved: a problem below

        async def _receive(self, start):
            known, misses = self.widgets, len(self.cache.misses)
            run = await super()._receive(start)
            if run.status == "FINISHED_FRAGMENT_RUN_SUCCESSFULLY":  # a success, not a problem
                run.problems = [p for p in run.problems if not p.startswith("script finished")]
            if self._fragment:  # a fragment's run draws only that fragment's widgets
                self.widgets = run.widgets = {**known, **run.widgets}
            if len(self.cache.misses) > misses:
                run.problems = [p for p in run.problems if p != _REFERENCE_PROBLEM] + [
                    f"{DEAD_PAGE} [hash={self.cache.misses[-1]}]"]
            return run

        def _delta(self, delta, run, widgets):
            Session._delta(delta, run, widgets)
            if delta.WhichOneof("type") == "new_element":
                element = delta.new_element
                kind = element.WhichOneof("type")
                found = _widget(kind, getattr(element, kind))
                if found is not None:
                    self.fragments[found.label] = delta.fragment_id

    return BrowserSession()


#: What a session records when its page died of a cache miss.
DEAD_PAGE = "Cached ForwardMsg MISS: the page is dead until reloaded"
#: harness.wsclient's problem for a reference it cannot resolve (it holds no cache).
_REFERENCE_PROBLEM = "the server referred to a cached message"


class Client:
    """One student: a websocket session that reconnects as Streamlit's page does."""

    def __init__(self, index, url, settings, record):
        self.index = index
        self.who = f"session {index}"
        self.url = url
        self.settings = settings
        self.record = record  # record(Request)
        self.rng = random.Random(settings.rng_seed * 1000 + index)
        # The page's reconnect timing draws from its own generator: the moves stay the same.
        self.backoff_rng = random.Random(settings.rng_seed * 1000 + index + 500_000)
        self.session = _browser_session(url, settings.request_timeout)
        self.params = None  # the configuration the page shows
        self.ready = asyncio.Event()  # a first page shown
        self.interrupted_at = None  # when the action that got no answer was sent
        self.action_start = None
        self.recoveries = []  # (interrupted at, page back at)
        self.steps = []  # per reconnect: {"closed", "pinged", "opened", "back": monotonic}
        self.config_lost = []  # (at, what changed)
        self.check_next = False  # the next move must change only its slider
        self.transfer_request = None  # a future the loop answers with (upload, download)
        self.dead = []  # (at, what): the page died of a cache miss (then reloaded)

    @property
    def replica(self):
        return self.session.cookies.get("sdwec_replica", "")

    async def _timed(self, kind, coro, record_ok=True):
        start = time.monotonic()
        try:
            result = await coro
        except Exception as exc:  # every failure is recorded, then passed on
            self.record(Request(self.who, kind, start, time.monotonic() - start, False,
                                f"{type(exc).__name__}: {str(exc)[:160]}", self.replica))
            raise
        if record_ok:
            self.record(Request(self.who, kind, start, time.monotonic() - start, True, None,
                                self.replica))
        return start, result

    async def _http(self, kind, path, ok=(200,), **kwargs):
        start = time.monotonic()
        status, headers, body = await asyncio.to_thread(
            fetch, self.url + path, self.session.cookies,
            timeout=self.settings.request_timeout, **kwargs)
        replica = headers.get("X-SDWEC-Replica", "") if headers else ""
        good = status in ok
        self.record(Request(self.who, kind, start, time.monotonic() - start, good,
                            None if good else f"HTTP {status or 'no answer'}", replica))
        return status, headers, body

    async def _open_page(self, query, give_up=120.0, reconnect=False, steps=None, then=None):
        """A new session at ``query`` as Streamlit's page opens one: health pings until one
        answers, then the websocket; a failed websocket waits and pings again.  With
        ``reconnect`` the page's first wait comes before (its websocket has just closed).
        ``steps`` gets the times of the last health answer and the socket's opening.  After
        ``give_up`` seconds without a page, :class:`RuntimeError` (a lost session).
        ``then``: a move sent with the first try before its answer is read
        (``BrowserSession.open``); a page that died of a cache miss is reloaded (its cache
        emptied) and tried again."""
        limit = time.monotonic() + give_up
        attempt = 0  # the page's reconnectAttempt
        if reconnect:
            attempt = 1
            await asyncio.sleep(reconnect_delay(attempt, self.backoff_rng))
        while True:
            failed = 0
            while True:
                if time.monotonic() > limit:
                    raise RuntimeError(f"no page within {give_up:.0f} s")
                status, _, _ = await self._http("health", "/_stcore/health")
                if status == 200:
                    break
                failed += 1
                await asyncio.sleep(ping_retry_delay(failed, self.backoff_rng))
            if steps is not None:
                steps["pinged"] = time.monotonic()
            try:
                _, run = await self._timed("reconnect", self.session.open(query, then))
            except Exception:  # noqa: BLE001 -- try again, as the page does
                then = None  # the move went with the page that failed
                attempt += 1
                await asyncio.sleep(reconnect_delay(attempt, self.backoff_rng))
                continue
            if steps is not None:
                steps["opened"] = self.session.opened_at
                steps["replica"] = self.replica
            if run.problems or run.charts < load.N_CHARTS:
                self.record(Request(self.who, "page", time.monotonic(), 0.0, False,
                                    "; ".join(run.problems) or "charts missing",
                                    self.replica))
                self._died(run)
                then = None
                await asyncio.sleep(0.5)
                continue
            return run

    def _died(self, run):
        """If ``run`` killed the page (a cache miss), note it and reload: True."""
        dead = [p for p in run.problems if p.startswith(DEAD_PAGE)]
        if dead:
            self.dead.append((time.monotonic(), dead[0]))
            self.session.reload()
        return bool(dead)

    async def start(self):
        await self._http("page", "/")
        query = load.random_query(self.rng, self.settings)
        query["dataset"] = self.settings.datasets[self.index % len(self.settings.datasets)]
        run = await self._open_page(urlencode(query))
        self.params = load.params_of("/?" + run.query)
        self.ready.set()

    def _pick(self):
        """The next move: ``(key, label, value)`` (``None`` if that slider is not shown)."""
        key, direction = load._slider_step(self.rng, self.params)
        label = load.SLIDERS[key][0]
        widget = self.session.widgets.get(label)
        if widget is None:
            return None
        value = load._next_value(widget, dict(zip(load.PARAM_KEYS, self.params))[key], direction)
        return key, label, value

    async def _move(self):
        move = self._pick()
        if move is None:
            raise RuntimeError("no slider to move on the page")
        key, label, value = move
        self.action_start = time.monotonic()
        start, run = await self._timed("action", self.session.set(label, value),
                                       record_ok=False)
        self._judge(key, start, run)
        if self._died(run):
            await self._open_page(urlencode(dict(zip(load.PARAM_KEYS, self.params))))

    def _judge(self, key, start, run):
        """Record a slider move's run (the ``key`` slider moved, sent at ``start``)."""
        params = load.params_of("/?" + run.query)
        problems = load._served(f"slider:{key}", None, self.params, params, run.problems,
                                run.charts)
        if params is not None and self.check_next:
            changed = [k for k, a, b in zip(load.PARAM_KEYS, self.params, params)
                       if a != b and k != key]
            if changed:
                self.config_lost.append((start, f"the first move after the reconnect "
                                                f"changed {', '.join(changed)} too"))
            self.check_next = False
        self.record(Request(self.who, "action", start, run.seconds, not problems,
                            "; ".join(problems) or None, self.replica))
        self.action_start = None
        if params is not None:
            self.params = params

    async def _reconnect(self):
        steps = {"closed": time.monotonic()}
        self.steps.append(steps)
        self.interrupted_at = self.interrupted_at or self.action_start or time.monotonic()
        before = self.params
        then = move = None
        if self.settings.move_while_reconnecting and before is not None:
            move = self._pick()  # the student's next move, before the page is back
        if move is not None:
            then = move[1:]
        run = await self._open_page(urlencode(dict(zip(load.PARAM_KEYS, before))),
                                    reconnect=True, steps=steps, then=then)
        # The page was back when its own run had been read (the move's run came after).
        steps["back"] = self.session.first_at or time.monotonic()
        self.params = load.params_of("/?" + run.query)
        if self.params != before:
            changed = [k for k, a, b in zip(load.PARAM_KEYS, before, self.params or ())
                       if a != b]
            self.config_lost.append((time.monotonic(), f"after the reconnect: "
                                                       f"{', '.join(changed) or 'all'}"))
        self.recoveries.append((self.interrupted_at, steps["back"]))
        self.interrupted_at = None
        self.check_next = True
        moved = self.session.then_run
        if move is not None and moved is not None:
            self._judge(move[0], time.monotonic() - moved.seconds, moved)
            if self._died(moved):
                await self._open_page(urlencode(dict(zip(load.PARAM_KEYS, self.params))))

    async def transfers(self, spread=3.0):
        """Upload a file and download one through the proxy, as a user would after a
        failover: ``(upload status, clicks the download took (0: it never came), problems)``.

        A download that answers 404 from the session's own replica is clicked again (up to
        3 clicks): Streamlit 1.67 keeps a file built on request only until two script runs
        of any session have ended (``MediaFileManager.remove_orphaned_files``), so in a busy
        class a click can lose that race; that is not the proxy's doing.  An answer from
        another replica than the session's is a problem (the proxy's doing).
        """
        problems = []
        # Students do not click in the same millisecond: over ``spread`` seconds.
        await asyncio.sleep(self.rng.uniform(0, spread))
        token = self.session.cookies.get("_streamlit_xsrf")
        if token is None:  # Streamlit sets it on HTTP answers, the health check's too
            await self._http("health", "/_stcore/health")
            token = self.session.cookies.get("_streamlit_xsrf", "")
        home = self.session.response_headers.get("x-sdwec-replica", "")
        status, headers, _ = await self._http(
            "upload", f"/_stcore/upload_file/{self.session.session_id}/{uuid.uuid4()}",
            ok=(204,), method="PUT", body=UPLOAD_BODY,
            headers={"Content-Type": "multipart/form-data; boundary=b", "X-Xsrftoken": token})
        replica = headers.get("X-SDWEC-Replica", "") if headers else ""
        if status != 204 or replica != home:
            problems.append(f"upload: HTTP {status} from replica {replica or '?'}, the "
                            f"session's websocket is on replica {home or '?'}")
        for click in (1, 2, 3):
            try:
                _, address = await self._timed("download", self.session.deferred_url(DOWNLOAD))
            except Exception as exc:  # noqa: BLE001
                problems.append(f"download: {type(exc).__name__}: {exc}")
                return status, 0, problems
            if address.startswith(("http://", "https://")):
                address = "/" + address.split("/", 3)[3]
            path = address if address.startswith("/") else "/" + address
            got, headers, body = await self._http("download", path, ok=(200, 404))
            replica = headers.get("X-SDWEC-Replica", "") if headers else ""
            if replica != home:
                problems.append(f"download: HTTP {got} from replica {replica or '?'}, the "
                                f"session's websocket is on replica {home or '?'}")
                return status, 0, problems
            if got == 200 and body.startswith(DOWNLOAD_HEAD):
                return status, click, problems
        problems.append(f"download: HTTP {got} at each of 3 clicks, {body[:40]!r}")
        return status, 0, problems

    async def run(self, stopping):
        await self.start()
        while not stopping.is_set():
            if self.transfer_request is not None and self.session.socket is not None:
                future, self.transfer_request = self.transfer_request, None
                try:
                    future.set_result(await self.transfers())
                except Exception as exc:  # noqa: BLE001
                    future.set_result((0, 0, [f"{type(exc).__name__}: {exc}"]))
                    await self._reconnect()
            try:
                await self._move()
            except Exception:  # noqa: BLE001 -- the connection is gone: back as a page would
                await self._reconnect()
                continue
            low, high = self.settings.think
            # The page notices a closed websocket at once, also while the user thinks.
            waits = [asyncio.ensure_future(stopping.wait())]
            if self.session.socket is not None:
                waits.append(asyncio.ensure_future(self.session.socket.wait_closed()))
            await asyncio.wait(waits, timeout=self.rng.uniform(low, high),
                               return_when=asyncio.FIRST_COMPLETED)
            closed = len(waits) > 1 and waits[1].done()
            for waiting in waits:
                waiting.cancel()
            if closed and not stopping.is_set():
                await self._reconnect()
        await self.session.close()


async def _visitors(url, settings, record, until):
    """A new visitor (no cookies) loads the page every ``visitor_every`` seconds."""
    n = 0
    pending = set()

    async def one(k):
        start = time.monotonic()
        status, headers, _ = await asyncio.to_thread(fetch, url + "/", {},
                                                     timeout=settings.request_timeout)
        replica = headers.get("X-SDWEC-Replica", "") if headers else ""
        record(Request(f"visitor {k}", "page", start, time.monotonic() - start, status == 200,
                       None if status == 200 else f"HTTP {status or 'no answer'}", replica))

    while time.monotonic() < until:
        n += 1
        task = asyncio.ensure_future(one(n))
        pending.add(task)
        task.add_done_callback(pending.discard)
        await asyncio.sleep(settings.visitor_every)
    if pending:
        await asyncio.gather(*pending)


async def _capacity_back(served, pid_file, old_pid, at, until):
    """Seconds from ``at`` until the faulted process was replaced (``pid_file`` names
    another process) and serve.sh's status shows every replica healthy; ``None`` if that
    did not happen before ``until``."""
    while time.monotonic() < until:
        pid = served._pid(pid_file)
        if (pid is not None and pid != old_pid
                and await asyncio.to_thread(_all_healthy, served, served.replicas)):
            return time.monotonic() - at
        await asyncio.sleep(0.2)
    return None


def replica_ports(served):
    """``{replica number: port}`` from serve.sh's summary (``serve.txt``)."""
    try:
        text = (served.run_dir / "serve.txt").read_text()
    except OSError:
        return {}
    return {m[1]: int(m[2]) for m in re.finditer(r"replica (\d+)\s+http://[^:]+:(\d+)", text)}


async def _probe_replicas(served, record, stopping, every=0.5, timeout=10.0):
    """Ask each replica's own ``/_stcore/health`` (not through the proxy) every ``every``
    seconds, one request at a time per replica; ``record((replica, start, seconds,
    status))``: how long a replica busy with the class takes to answer its health check."""
    async def one(replica, port):
        while not stopping.is_set():
            start = time.monotonic()
            status, _, _ = await asyncio.to_thread(
                fetch, f"http://127.0.0.1:{port}/_stcore/health", None, timeout=timeout)
            record((replica, start, time.monotonic() - start, status))
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stopping.wait(), every)

    await asyncio.gather(*(one(r, port) for r, port in replica_ports(served).items()))


_NOTE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?[+-]\d\d:?\d\d) (.*)$")


def health_notes(text, since, until):
    """``[(time.time(), text)]``: the lines of serve.sh's ``health.log`` written between
    ``since`` and ``until`` (``time.time()`` values)."""
    found = []
    for line in text.splitlines():
        match = _NOTE.match(line)
        if match is None:
            continue
        when = datetime.datetime.fromisoformat(match[1].replace(",", ".")).timestamp()
        if since <= when <= until:
            found.append((when, match[2]))
    return found


def _all_healthy(served, replicas):
    """True when serve.sh's status file shows every replica healthy (and nginx up)."""
    try:
        status = (served.run_dir / "status").read_text()
    except OSError:
        return False
    return status.count(": healthy,") == replicas and served.healthy()


def _apply(fault, served, clients):
    """Do ``fault``; return (target label, pid hit, sessions affected)."""
    if fault == "nginx-kill":
        pid = served._pid("nginx.pid")
        os.kill(pid, signal.SIGKILL)
        return "nginx", pid, [c.index for c in clients]
    counts = {}
    for c in clients:
        counts[c.replica] = counts.get(c.replica, 0) + 1
    replica = max(sorted(counts), key=lambda r: counts[r]) if counts else "1"
    pid = served._pid(f"replica-{replica}.pid")
    os.killpg(pid, signal.SIGKILL if fault == "replica-kill" else signal.SIGSTOP)
    return f"replica {replica}", pid, [c.index for c in clients if c.replica == replica]


async def run_faults(settings, served, log=print):
    """Drive ``settings.sessions`` clients through ``served`` and apply each fault; return
    the list of :class:`Fault`."""
    # Every session's HTTP requests run in threads: enough of them that a page waiting on a
    # hung replica does not hold up another session's health ping (a browser's do not wait
    # for each other), as asyncio's default of min(32, cores + 4) threads would.
    asyncio.get_running_loop().set_default_executor(
        concurrent.futures.ThreadPoolExecutor(max_workers=4 * settings.sessions + 32))
    requests, probes = [], []
    stopping = asyncio.Event()
    clients = [Client(i, served.url, settings, requests.append) for i in range(settings.sessions)]
    tasks = [asyncio.ensure_future(c.run(stopping)) for c in clients]
    tasks.append(asyncio.ensure_future(_probe_replicas(served, probes.append, stopping)))
    faults = []
    try:
        await asyncio.wait_for(asyncio.gather(*(c.ready.wait() for c in clients)), 600)
        log(f"  {len(clients)} sessions up")
        for name in settings.faults:
            await asyncio.sleep(settings.steady)
            before = {c.index: c.replica for c in clients}
            references = sum(c.session.cache.references for c in clients)
            target, pid, affected = _apply(name, served, clients)
            at, wall = time.monotonic(), time.time()
            log(f"  {name}: {target} (pid {pid}), {len(affected)} session(s) on it")
            fault = Fault(name, at, target, affected, before, wall=wall)
            pid_file = "nginx.pid" if target == "nginx" else f"replica-{target.split()[1]}.pid"
            watch = asyncio.ensure_future(_capacity_back(served, pid_file, pid, at,
                                                         at + settings.window + 120))
            await _visitors(served.url, settings, requests.append, at + settings.window)
            while time.monotonic() < at + settings.window:
                await asyncio.sleep(0.2)
            if name == "replica-stop":
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGCONT)
            fault.capacity_back = await watch
            now_pid = served._pid(pid_file)
            fault.pid_changed = now_pid is not None and now_pid != pid
            # Transfers after the failover, each session on its own loop.
            futures = {}
            for c in clients:
                futures[c.index] = asyncio.get_running_loop().create_future()
                c.transfer_request = futures[c.index]
            done = await asyncio.wait_for(asyncio.gather(*futures.values()), 300)
            for c, (upload, clicks, problems) in zip(clients, done):
                fault.transfers[c.index] = (upload, clicks)
                fault.transfer_errors += [f"session {c.index}: {p}" for p in problems]
            end = time.monotonic()
            fault.requests = [r for r in requests if at <= r.start < end]
            for c in clients:
                back = [(start, end) for start, end in c.recoveries if end >= at]
                if back:
                    fault.recovered[c.index] = back[0][1] - at
                    fault.outages[c.index] = back[0][1] - max(back[0][0], at)
                fault.config_lost += [f"session {c.index}: {what}" for t, what in c.config_lost
                                      if at <= t < end]
                fault.dead += [f"session {c.index}: {what}" for t, what in c.dead
                               if at <= t < end]
                if c.session.socket is None or c.interrupted_at is not None:
                    fault.lost.append(c.index)
            fault.replicas_after = {c.index: c.replica for c in clients}
            fault.references = sum(c.session.cache.references for c in clients) - references
            for c in clients:
                hit = [st for st in c.steps if st["closed"] >= at and "back" in st]
                if hit:
                    fault.steps[c.index] = {k: (v - at if isinstance(v, float) else v)
                                            for k, v in hit[0].items()}
            with contextlib.suppress(OSError):
                fault.health_notes = [
                    (when - wall, text) for when, text in health_notes(
                        (served.run_dir / "health.log").read_text(), wall - 1,
                        wall + (end - at))]
            fault.probes = [(r, start - at, seconds, status)
                            for r, start, seconds, status in probes if at <= start < end]
            faults.append(fault)
            f = fault_figures(fault)
            log(f"    served {f['served']}, interrupted {f['interrupted']}, errors "
                f"{f['errors']}, lost {len(fault.lost)}, pages dead (cache miss) "
                f"{len(fault.dead)}, recovered in max "
                f"{f['recover_max']:.1f} s, longest wait {f['max_wait']:.1f} s, visitors max "
                f"{f['visitor_max']:.1f} s, capacity back {fault.capacity_back}")
    finally:
        stopping.set()
        await asyncio.gather(*tasks, return_exceptions=True)
    return faults


def _connection_lost(request):
    """A request cut by the fault (its websocket closed, or no answer in time): the session
    reconnects; not an error a user reads on the page."""
    return (request.error or "").split(":")[0] in ("ProtocolError", "TimeoutError")


def fault_figures(fault):
    """The figures of one fault (a dict)."""
    reqs = fault.requests
    sessions = [r for r in reqs if r.who.startswith("session")]
    actions = [r for r in sessions if r.kind == "action"]
    visitors = [r for r in reqs if r.who.startswith("visitor")]
    recovered = list(fault.recovered.values())
    return {
        "served": sum(1 for r in actions if r.ok),
        "interrupted": sum(1 for r in actions if not r.ok and _connection_lost(r)),
        "errors": [r for r in sessions if not r.ok and r.kind in ("action", "page")
                   and not _connection_lost(r)],
        "max_wait": max((r.seconds for r in reqs), default=0.0),
        "slowest": max(reqs, key=lambda r: r.seconds, default=None),
        "recover_max": max(recovered, default=0.0),
        "recover_p50": percentile(recovered, 50) if recovered else 0.0,
        "outage_max": max(fault.outages.values(), default=0.0),
        "outage_p50": percentile(list(fault.outages.values()), 50) if fault.outages else 0.0,
        "visitor_max": max((r.seconds for r in visitors), default=0.0),
        "visitor_failed": sum(1 for r in visitors if not r.ok),
        "visitors": len(visitors),
        "dead": len(fault.dead),
        "references": fault.references,
        "visitor_replicas": sorted({r.replica for r in visitors if r.ok}),
        "uploads_ok": sum(1 for u, _ in fault.transfers.values() if u == 204),
        "downloads_ok": sum(1 for _, clicks in fault.transfers.values() if clicks),
        "downloads_clicked_again": sum(1 for _, clicks in fault.transfers.values()
                                       if clicks > 1),
        "visitor_errors": [r for r in visitors if not r.ok],
        "sessions": len(fault.transfers),
    }


STEPS = (("closed", "the hit sessions' websockets closed (noticed by each session)"),
         ("pinged", "their health pings answered through the proxy"),
         ("opened", "their new websockets open"),
         ("back", "their pages drawn again (a whole run, configuration kept)"))


def fault_timeline(fault):
    """Markdown lines: serve.sh's health.log and the hit sessions' reconnect steps in time
    order (seconds after the fault; a step as median and range over the sessions), and how
    fast the replicas that were not hit answered their health checks meanwhile."""
    events = [(t, f"serve.sh: {text}") for t, text in fault.health_notes]
    hit = [fault.steps[i] for i in sorted(fault.steps) if i in fault.affected]
    for key, label in STEPS:
        values = [st[key] for st in hit if st.get(key) is not None]
        if not values:
            continue
        text = (f"{label}: median; first {min(values):.2f}, last {max(values):.2f}"
                if len(values) > 1 else label)
        if key == "opened":
            counts = {}
            for st in hit:
                counts[st.get("replica") or "?"] = counts.get(st.get("replica") or "?", 0) + 1
            text += "; on replica " + ", ".join(f"{r} ({n})" for r, n in sorted(counts.items()))
        events.append((percentile(values, 50), text))
    lines = [f"- **{fault.name}** ({fault.target}, {len(fault.affected)} session(s) on it), "
             f"seconds after the fault:"]
    lines += [f"  - {t:+6.2f}  {text}" for t, text in sorted(events, key=lambda e: e[0])]
    hit_replica = fault.target.split()[1] if fault.target.startswith("replica") else None
    others = [p for p in fault.probes if p[0] != hit_replica]
    if others:
        answered = [seconds for _, _, seconds, status in others if status == 200]
        lines.append(
            f"  - health checks of the replica(s) not hit ({', '.join(sorted({p[0] for p in others}))}; "
            f"asked directly every 0.5 s while they served the class): {len(others)}, "
            f"median {percentile(answered, 50) if answered else 0:.3f} s, "
            f"slowest {max(answered, default=0):.3f} s, "
            f"{len(others) - len(answered)} without a 200")
    return lines


def fault_report(faults, settings, command=None, wall=0.0, machine_text=""):
    """The Markdown section of a fault run."""
    lines = ["# Serving a class through faults", ""]
    if command:
        lines += ["Command:", "", f"```\n{command}\n```", ""]
    st = settings
    eager = (" and once after a reconnect before reading its answer"
             if st.move_while_reconnecting else "")
    lines += [
        f"Machine: {machine_text}", "",
        f"Settings: `bash scripts/serve.sh --replicas 2` (defaults: health check every 1 s "
        f"with 2 s to answer, 2 misses in a row: killed and started again); {st.sessions} "
        f"websocket sessions that reconnect as Streamlit's page does and keep its message "
        f"cache, each moving a slider every {st.think[0]:g}–{st.think[1]:g} s{eager} "
        f"(datasets {', '.join(st.datasets)}, "
        f"l = {st.n_trees}); a new visitor (no cookies) every {st.visitor_every:g} s during "
        f"each window; {st.steady:g} s of load before each fault, {st.window:g} s measured "
        f"after it, then every session uploads and downloads a file through the proxy; "
        f"wall time {wall:.0f} s.", ""]
    rows = []
    for fault in faults:
        f = fault_figures(fault)
        slow = f["slowest"]
        rows.append([
            fault.name, f"{fault.target} ({len(fault.affected)} sessions)",
            f["served"], f["interrupted"], len(f["errors"]),
            f"{len(fault.lost)} / {f['sessions']}",
            f"{f['dead']} ({f['references']} references)",
            f"{len(fault.recovered)}: {f['recover_p50']:.1f} / {f['recover_max']:.1f}",
            f"{f['outage_p50']:.1f} / {f['outage_max']:.1f}",
            "yes" if not fault.config_lost else f"**no** ({len(fault.config_lost)})",
            f"{f['uploads_ok']} / {f['sessions']}",
            f"{f['downloads_ok']} / {f['sessions']}"
            + (f" ({f['downloads_clicked_again']} at a 2nd or 3rd click)"
               if f["downloads_clicked_again"] else ""),
            f"{f['max_wait']:.1f} ({slow.kind})" if slow else "-",
            f"{f['visitors']}: {f['visitor_max']:.2f} s, {f['visitor_failed']} failed",
            "-" if fault.capacity_back is None else f"{fault.capacity_back:.1f}"])
    lines += [
        "| fault | hit | actions served | interrupted | errors | sessions lost | "
        "pages dead of a cache miss (cached messages sent as references) | "
        "page back after the fault: p50 / max s | outage: p50 / max s | configuration kept | "
        "uploads | downloads | longest wait s | new visitors: slowest | all healthy after s |",
        "|" + "---|" * 15]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    lines += ["",
              "*Interrupted*: an action whose websocket closed or stopped answering; the "
              "session then reconnected and went on.  *Errors*: what a user would see (an "
              "error box, missing charts, a configuration not applied, a page dead of a cache "
              "miss).  *Pages dead of a cache miss*: a reference to a message the session's "
              "page cache no longer held, Streamlit's fatal \"Cached ForwardMsg MISS\" (the "
              "session then reloads); none can happen when no message is cached (the served "
              "settings), and then no reference is sent.  *Page back*: from "
              "the fault to the session's page drawn again, over the sessions that lost it; "
              "*outage*: from the session's first action that got no answer (or the fault, "
              "if later) to its page drawn again (after kill -9 of nginx its old websocket "
              "works until the dead nginx's workers stop, 10 s later).  "
              "*Longest wait*: any single request of a session or a visitor (actions, "
              "reconnects, health pings, page loads, uploads, downloads).  *All healthy "
              "after*: serve.sh's status file showing every replica healthy again and the "
              "proxy answering.", ""]
    details = []
    for fault in faults:
        f = fault_figures(fault)
        for r in f["errors"][:10]:
            details.append(f"- {fault.name}: {r.who} action: {r.error}")
        details += [f"- {fault.name}: {text}" for text in fault.config_lost[:10]]
        details += [f"- {fault.name}: {text}" for text in fault.transfer_errors[:10]]
        details += [f"- {fault.name}: {r.who} page load at +{r.start - fault.at:.1f} s: "
                    f"{r.error}" for r in f["visitor_errors"][:10]]
        details += [f"- {fault.name}: session {s} lost" for s in fault.lost]
        details += [f"- {fault.name}: {text}" for text in fault.dead[:10]]
    if details:
        lines += ["Problems:", ""] + details + [""]
    moved = []
    for fault in faults:
        after = fault.replicas_after
        counts = {}
        for replica in after.values():
            counts[replica] = counts.get(replica, 0) + 1
        moved.append(f"{fault.name}: sessions per replica after it "
                     + ", ".join(f"{k or '?'}: {v}" for k, v in sorted(counts.items()))
                     + "; new visitors went to replica(s) "
                     + ", ".join(fault_figures(fault)["visitor_replicas"]))
    lines += ["Where the sessions went: " + "; ".join(moved) + ".", ""]
    lines += ["Timelines (serve.sh's health.log beside the sessions' steps):", ""]
    for fault in faults:
        lines += fault_timeline(fault)
    lines.append("")
    return "\n".join(lines)


def outcome_ok(faults):
    """The failover's 'done when', without times: nothing lost, configuration kept, uploads
    and downloads work, no user-visible error, every replica healthy again."""
    for fault in faults:
        f = fault_figures(fault)
        if (fault.lost or fault.config_lost or f["errors"] or fault.dead
                or fault.capacity_back is None
                or fault.transfer_errors or f["visitor_errors"]
                or f["uploads_ok"] != f["sessions"] or f["downloads_ok"] != f["sessions"]):
            return False
    return True

