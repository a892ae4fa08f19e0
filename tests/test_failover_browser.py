"""A failover that a real browser survives: Chromium pages through ``scripts/serve.sh``
(2 replicas behind nginx) while their replica is killed (SIGKILL) and then stopped (SIGSTOP).

What kills a page in a failover: Streamlit's "Connection error ... Cached
ForwardMsg MISS" dialog, page greyed until reloaded.  The browser keeps the large messages
of a page (>= ``global.minCachedMessageSize``) by hash, advertises those hashes with every
rerun request, and the server sends a short reference instead of a message the browser said
it holds.  The browser also forgets a message that went unused for
``global.maxCachedMessageAge`` (2) runs, counted when a run's ``script_finished`` arrives.
Its guard against a run finishing between a request and its answer (``hasReceivedNewSession``)
fails when two requests go out before the first run's ``new_session`` arrives: a failover's
reconnect sends a whole-page run at once, and a slider moved before its answer arrives (a
busy survivor, a slow classroom network) sends a fragment run that does not pre-empt it; the
whole run's end then forgets a message the fragment run was told the browser holds, and the
fragment run's reference to it is fatal.  So the served settings cache no message at all
(``global.minCachedMessageSize`` in deploy/streamlit.toml; docs/deploy.md).

The test makes that timing certain instead of waiting for it: the pages hold the messages
they receive (a slow network, in the page's JavaScript) from just before the fault until
the reconnect's run has ended on the server (seen in the browser's network traffic) and a
slider inside one of the How-it-works page's fragments has been moved back to where it
was, then let them through.  Each page moved that slider one step first, so its original
figure is two runs old when the fault comes (with caching on, exactly the message the
browser drops).  Every page must come back on the other replica without a reload, without
an error dialog, and answer a slider move afterwards; and no message may be sent as a
cached one or a reference.  Without the setting every page died here (results/serve.md).

The fault benchmark's websocket client keeps the same cache (harness/faults.py,
``PageCache``); the first test checks it follows the page's rules, the race included.
"""

import os
import shutil
import signal
import time

import pytest

from harness import faults, load, serve

#: How-it-works pages, each moving the slider (by its widget key) of another fragment.
SLIDERS = ("how_sign_eps", "how_abs_gamma", "how_pen_beta")
PAGE = "/how_it_works?dataset=sonar&task=binary&seed=0&l=20&r=1"
IDLE_JS = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
DEAD_WORDS = ("Cached ForwardMsg", "Connection error", "Bad message format")
#: Idle (no run in progress), or dead (a dead page stays "running" for ever).
SETTLED_JS = ("() => !document.querySelector('[data-testid=\"stStatusWidget\"]') || "
              f"{list(DEAD_WORDS)!r}.some(w => document.body.innerText.includes(w))")
#: Run in every page before its own scripts: an id that a reload would change, and a hold
#: on the websocket messages the page receives (released one per task, as a network
#: delivers them: the page processes each before the next arrives).
HOLD_JS = """
(() => {
  window.__loadId = Math.random();
  window.__hold = false;
  const queue = [];
  const add = WebSocket.prototype.addEventListener;
  WebSocket.prototype.addEventListener = function (type, listener, options) {
    if (type !== 'message') return add.call(this, type, listener, options);
    const socket = this;
    return add.call(this, type, (event) => {
      if (window.__hold || queue.length) { queue.push([socket, listener, event]); return; }
      listener.call(socket, event);
    }, options);
  };
  window.__release = () => {
    window.__hold = false;
    const next = () => {
      const item = queue.shift();
      if (item === undefined) return;
      item[1].call(item[0], item[2]);
      setTimeout(next, 0);
    };
    next();
  };
  window.__held = () => queue.length;
})();
"""


class Traffic:
    """A page's websocket frames as the network carried them (Chrome's DevTools protocol,
    before the page's own JavaScript sees them): per socket, the ``rerun_script`` requests
    sent and the ``script_finished`` statuses received; every cached message or reference
    received."""

    def __init__(self, page):
        self.sockets = []
        self.cached = []  # hashes of messages the server marked cacheable
        self.references = []  # hashes the server sent a reference for
        page.on("websocket", self._opened)

    def _opened(self, socket):
        record = {"sent": [], "finished": []}
        self.sockets.append(record)
        socket.on("framesent", lambda payload: self._sent(record, payload))
        socket.on("framereceived", lambda payload: self._received(record, payload))

    @staticmethod
    def _sent(record, payload):
        from streamlit.proto.BackMsg_pb2 import BackMsg

        msg = BackMsg.FromString(payload)
        if msg.WhichOneof("type") == "rerun_script":
            record["sent"].append(msg.rerun_script.fragment_id)

    def _received(self, record, payload):
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = ForwardMsg.FromString(payload)
        kind = msg.WhichOneof("type")
        if kind == "ref_hash":
            self.references.append(msg.ref_hash)
        elif msg.metadata.cacheable:
            self.cached.append(msg.hash)
        elif kind == "script_finished":
            record["finished"].append(ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished))


def _wait(page, condition, what, timeout=60.0):
    """Pump the page's events (Playwright delivers them only while it waits) until
    ``condition()``."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        page.wait_for_timeout(50)


def _thumb(page, key):
    return page.locator(f".st-key-{key} input[type=range]").first


def _dead(page):
    body = page.locator("body").inner_text()
    return [word for word in DEAD_WORDS if word in body]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    if serve.NGINX is None:
        pytest.fail("Debian's nginx is not installed: run `apt-get install nginx` "
                    "(scripts/test.sh does this)")
    with serve.Served(2, tmp_path_factory.mktemp("pools"),
                      run_dir=tmp_path_factory.mktemp("serve") / "run") as target:
        yield target


def _wait_all_healthy(served, timeout=120):
    deadline = time.monotonic() + timeout
    while not faults._all_healthy(served, 2):
        assert time.monotonic() < deadline, (served.run_dir / "status").read_text()
        time.sleep(0.3)


def _cookie(context):
    return {c["name"]: c["value"] for c in context.cookies()}.get("sdwec_replica")


def _fail_over(served, pages, fault):
    """Hold every page's messages, fault the replica holding them, and per page: once the
    reconnect's run has ended on the server, move its slider back (a second request before
    the first one's answer), then release.  Return the replica the pages were on."""
    replicas = {_cookie(p["context"]) for p in pages}
    assert len(replicas) == 1, replicas
    replica = replicas.pop()
    sockets = []
    for p in pages:
        p["page"].evaluate("window.__hold = true")
        sockets.append(len(p["traffic"].sockets))
    os.killpg(served._pid(f"replica-{replica}.pid"),
              signal.SIGKILL if fault == "kill" else signal.SIGSTOP)
    for p, before in zip(pages, sockets):
        page, traffic, key = p["page"], p["traffic"], p["key"]

        def reconnected():
            new = traffic.sockets[before:]
            return new and new[-1]["sent"] and "FINISHED_SUCCESSFULLY" in new[-1]["finished"]

        _wait(page, reconnected, f"{key}'s page to reconnect and its run to end")
        socket = traffic.sockets[-1]
        assert socket["sent"][0] == "", socket  # the reconnect's request: the whole page
        assert page.evaluate("window.__held()") > 0  # its answer not seen by the page yet
        thumb = _thumb(page, key)
        thumb.focus()
        thumb.press("ArrowLeft")
        _wait(page, lambda: len(socket["sent"]) >= 2, f"{key}'s slider move to be sent")
        assert socket["sent"][1] != ""  # a fragment's run, which does not pre-empt
        page.evaluate("window.__release()")
    return replica


def _check_back(pages, moved_from):
    for p in pages:
        context, page, traffic, key = p["context"], p["page"], p["traffic"], p["key"]
        page.wait_for_function("() => window.__held() === 0", timeout=60_000)
        page.wait_for_timeout(500)
        page.wait_for_function(SETTLED_JS, timeout=60_000)
        assert _dead(page) == [], (key, page.locator("body").inner_text()[-600:])
        assert page.evaluate("window.__loadId") == p["load_id"], f"{key}'s page reloaded"
        assert _cookie(context) not in (None, moved_from)
        # The page still works: a slider move is answered by a run that ends.
        socket = traffic.sockets[-1]
        done = socket["finished"].count("FINISHED_FRAGMENT_RUN_SUCCESSFULLY")
        thumb = _thumb(page, key)
        thumb.focus()
        thumb.press("ArrowRight")
        _wait(page, lambda: socket["finished"].count("FINISHED_FRAGMENT_RUN_SUCCESSFULLY")
              > done, f"{key}'s page to answer a move after the failover")
        page.wait_for_function(IDLE_JS, timeout=60_000)
        assert _dead(page) == [], key


def _message(kind, **fields):
    """A serialized ForwardMsg: a cacheable delta (``hash``, ``fragment``), a reference
    (``ref``), ``new_session`` or ``script_finished`` (``status``, ``fragments``)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    msg = ForwardMsg()
    if kind == "delta":
        msg.hash = fields["hash"]
        msg.metadata.cacheable = True
        msg.delta.fragment_id = fields.get("fragment", "")
        msg.delta.new_element.markdown.body = "x" * 20_000
    elif kind == "ref":
        msg.ref_hash = fields["ref"]
    elif kind == "new_session":
        msg.new_session.config.max_cached_message_age = 2
    else:
        msg.script_finished = getattr(ForwardMsg, fields.get("status", "FINISHED_SUCCESSFULLY"))
        msg.metadata.run.script_run_id = "run"
        msg.metadata.run.fragment_ids.extend(fields.get("fragments", ()))
    return msg.SerializeToString()


def _answer(cache, *messages):
    """What the page makes of a run's answer: the payloads it processes (None: a miss)."""
    return [cache.receive(message) for message in messages]


def test_the_fault_client_keeps_the_pages_message_cache():
    cache = faults.PageCache()
    # A page load: one large figure in fragment F, kept.
    cache.request_sent()
    _answer(cache, _message("new_session"), _message("delta", hash="h0", fragment="F"),
            _message("finished"))
    assert cache.hashes() == ["h0"] and cache.runs == 1
    # A slider in F: its new figure is kept too; h0, unused for 2 runs, still is.
    cache.request_sent()
    _answer(cache, _message("new_session"), _message("delta", hash="h1", fragment="F"),
            _message("finished", status="FINISHED_FRAGMENT_RUN_SUCCESSFULLY", fragments=["F"]))
    assert cache.hashes() == ["h0", "h1"] and cache.runs == 2
    advertised = cache.hashes()
    # The race: a whole run (a reconnect) and then F's run, both asked for before the whole
    # run's answer.  Its end counts (a new_session came after the last request) and forgets
    # h0, which F's run, told h0 is held, refers to: the page's fatal miss.
    cache.request_sent()
    cache.request_sent()
    got = _answer(cache, _message("new_session"), _message("ref", ref="h1"),
                  _message("finished"))
    assert got[1] is not None and cache.references == 1  # h1 answered from the cache
    assert cache.hashes() == ["h1"] and "h0" in advertised
    assert _answer(cache, _message("new_session"), _message("ref", ref="h0"))[1] is None
    assert cache.misses == ["h0"]
    # The page's guard: a run that ends after a later request went out does not count.
    cache.clear()
    cache.request_sent()
    _answer(cache, _message("new_session"), _message("delta", hash="h2"))
    cache.request_sent()
    runs = cache.runs
    _answer(cache, _message("finished"))
    assert cache.runs == runs
    # Nothing cacheable (the served settings): nothing kept, nothing advertised.
    cache.clear()
    plain = _message("delta", hash="h3")
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    msg = ForwardMsg.FromString(plain)
    msg.metadata.cacheable = False
    cache.request_sent()
    _answer(cache, _message("new_session"), msg.SerializeToString(), _message("finished"))
    assert cache.hashes() == []


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.timeout(300)
def test_pages_survive_kill_and_stop_of_their_replica(served):
    from playwright.sync_api import sync_playwright

    _wait_all_healthy(served)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"),
                                    args=load.LAUNCH_ARGS)
        try:
            pages = []
            for key in SLIDERS:
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                # Every page on replica 1 (the proxy's cookie names the replica).
                context.add_cookies([{"name": "sdwec_replica", "value": "1",
                                      "url": served.url}])
                page = context.new_page()
                page.add_init_script(HOLD_JS)
                pages.append({"context": context, "page": page, "traffic": Traffic(page),
                              "key": key})
                page.goto(served.url + PAGE, wait_until="commit")
            for p in pages:
                page = p["page"]
                page.wait_for_selector(f".st-key-{p['key']} input[type=range]", timeout=120_000)
                page.wait_for_function(IDLE_JS, timeout=120_000)
                p["load_id"] = page.evaluate("window.__loadId")
                # One step right: the figure the page opened with is now two runs old.
                thumb = _thumb(page, p["key"])
                thumb.focus()
                thumb.press("ArrowRight")
            for p in pages:
                socket = p["traffic"].sockets[-1]
                _wait(p["page"], lambda: "FINISHED_FRAGMENT_RUN_SUCCESSFULLY" in socket["finished"],
                      f"{p['key']}'s first move")
                p["page"].wait_for_function(IDLE_JS, timeout=60_000)
            for fault in ("kill", "stop"):
                _wait_all_healthy(served)
                replica = _fail_over(served, pages, fault)
                _check_back(pages, replica)
            # The setting that makes this safe: no message cached, no reference sent.
            assert [p["traffic"].cached for p in pages] == [[], [], []]
            assert [p["traffic"].references for p in pages] == [[], [], []]
        finally:
            browser.close()
    _wait_all_healthy(served)
