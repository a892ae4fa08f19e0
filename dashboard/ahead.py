"""Answers computed ahead: the Explorer's answers for the settings around a page's own.

While a page is open, one background thread per server process computes, for the settings a
slider can reach from the page's own, the answer the page would draw there
(:func:`dashboard.explorer_answer.answer`): every λ of the sidebar's grid, then β, γ and ε
over their grids in blocks, nearest first.  Each block is a small gzip-compressed JSON file
in the app's static folder, which Streamlit serves (``app/static/ahead/``) and the browser
reads while it waits (``dashboard/live.js``); no message goes through the page's websocket,
and a browser reads a file once.  A file's name is a keyed hash of what it holds, with a key
kept in the pool cache's folder (not served), so that nobody can guess the answers of a
configuration they have not opened.

The work is per session: a session that moves to another setting replaces what it waits
for, and blocks nobody waits for any more are dropped (their files that exist stay, for the
next session that passes by).  The thread runs at a lower CPU priority than the pages, and a
block is computed by the same calls as a page's own answer, so the browser draws the very
numbers and words the server would.  The files are capped in bytes (least recently written
go first).  Where the static folder cannot be written, nothing is computed ahead and the
pages work as before (every move a server run).
"""

from __future__ import annotations

import gzip
import hashlib
import hmac
import json
import logging
import os
import secrets
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from sdwec import cache

LOG = logging.getLogger("dashboard")

#: Where the files are, under the app's static folder, and the URL the page reads them at.
FOLDER_NAME = "ahead"
#: Bytes of files kept (``$SDWEC_AHEAD_BYTES``); past it the least recently written go.
MAX_BYTES = int(os.environ.get("SDWEC_AHEAD_BYTES", 256 * 2**20))
#: A session that has not asked again for this long waits for nothing.
WANT_SECONDS = 600.0
#: Settings of a line per file (β and γ have a hundred each: they come in blocks, nearest
#: block first).
BLOCK = 10


def _code_digest():
    """A hash of the library's and the app's code: a file's answers are those of the code
    that wrote it (another version's files are never read)."""
    import sdwec

    digest = hashlib.blake2b(digest_size=8)
    for folder in (Path(sdwec.__file__).parent, Path(__file__).parent):
        for path in sorted(folder.glob("*.py")):
            digest.update(path.read_bytes())
    return digest.hexdigest()


#: What a file's content depends on beyond its arguments: the code that computed it.
FORMAT = _code_digest()


@dataclass(frozen=True)
class Block:
    """Some settings of one line through a configuration: ``param`` takes ``values``, the
    other three of λ, β, γ, ε keep the page's."""

    family: str
    param: str
    values: tuple
    fixed: tuple  # ((name, value), ...) of the other three


@dataclass
class _Want:
    when: float
    blocks: list
    compute: object  # compute(params_changes: dict) -> answer dict
    tasks: list  # [(key, fn)]: other work a page will ask for, after the blocks


def family_id(*parts):
    """A configuration's name in the browser and in the files' names: a hash of ``parts``
    (its pools, fit, k, threshold rule, pin)."""
    return hashlib.blake2b(repr(parts).encode(), digest_size=10).hexdigest()


def _grid_blocks(grid, value, size=BLOCK):
    """``grid`` cut into blocks of ``size``, nearest to ``value`` first (the block holding
    it, then by the distance of their nearest value)."""
    blocks = [tuple(grid[i:i + size]) for i in range(0, len(grid), size)]
    return sorted(blocks, key=lambda block: min(abs(v - value) for v in block))


def cross(family, setting, grids):
    """The blocks around ``setting`` (``{"lam": .., "beta": .., "gamma": .., "eps": ..}``)
    along each parameter's ``grids`` (``{name: values}``), in the order they are computed:
    the whole λ line first, then the blocks of β, γ and ε, nearest first, in turn."""
    def block(name, values):
        fixed = tuple((k, float(setting[k])) for k in ("lam", "beta", "gamma", "eps")
                      if k != name)
        return Block(family, name, tuple(float(v) for v in values), fixed)

    lines = {name: _grid_blocks(list(grid), setting[name], len(grid) if name == "lam" else BLOCK)
             for name, grid in grids.items()}
    out = [block("lam", values) for values in lines.pop("lam", [])]
    while any(lines.values()):
        for name in list(lines):
            if lines[name]:
                out.append(block(name, lines[name].pop(0)))
    return out


class Ahead:
    """The files of answers and the thread that writes them (one per process: :func:`get`)."""

    def __init__(self, folder):
        self.folder = Path(folder)
        self._lock = threading.Condition()
        self._wants = {}
        self._thread = None
        self._secret = None
        self._bytes = None
        self._tasks_done = set()
        self.computed = 0  # answers computed (for the benchmarks)

    # ------------------------------------------------------------------ names and files
    def _key(self):
        if self._secret is None:
            path = cache.cache_dir() / "ahead.key"
            try:
                self._secret = path.read_bytes()
            except FileNotFoundError:
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".ahead.key-")
                with os.fdopen(fd, "wb") as fh:
                    fh.write(secrets.token_bytes(32))
                try:
                    os.link(tmp, path)  # the first writer's key wins, for every process
                except FileExistsError:
                    pass
                os.unlink(tmp)
                self._secret = path.read_bytes()
        return self._secret

    def name(self, block):
        """The file name of ``block``: a keyed hash of what it holds."""
        what = json.dumps([FORMAT, block.family, block.param, block.values, block.fixed])
        return hmac.new(self._key(), what.encode(), hashlib.sha256).hexdigest()[:40] + ".json.gz"

    def path(self, block):
        return self.folder / self.name(block)

    def usable(self):
        """Whether files can be written here (else nothing is computed ahead)."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            return os.access(self.folder, os.W_OK)
        except OSError:
            return False

    def _write(self, block, answers):
        body = gzip.compress(json.dumps({"answers": answers}, separators=(",", ":"),
                                        allow_nan=False).encode(), 6)
        fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".part-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(body)
        os.chmod(tmp, 0o644)
        os.replace(tmp, self.path(block))
        self._trim(len(body))

    def _trim(self, added):
        if self._bytes is None:
            self._bytes = sum(p.stat().st_size for p in self.folder.glob("*.json.gz"))
        else:
            self._bytes += added
        if self._bytes <= MAX_BYTES:
            return
        files = sorted(self.folder.glob("*.json.gz"), key=lambda p: p.stat().st_mtime)
        for path in files:
            if self._bytes <= 0.8 * MAX_BYTES:
                break
            try:
                size = path.stat().st_size
                path.unlink()
                self._bytes -= size
            except OSError:
                pass

    # ------------------------------------------------------------------ wanting
    def want(self, session, blocks, compute=None, tasks=()):
        """Session ``session`` now waits for ``blocks`` (its previous wish is dropped);
        ``compute(changes)`` gives the answer at the page's setting with ``changes``
        (``{param: value}``); ``tasks`` (``[(key, fn)]``) are calls whose results a page
        caches itself (the Frontier's other sweeps), made once each after the blocks.
        Returns ``[{"url", "done"}]`` of the blocks, in order."""
        files = []
        self.folder.mkdir(parents=True, exist_ok=True)
        for block in blocks:
            done = self.done(block)
            if not done:
                # An empty file until the answers are in: the page's reads of a block not
                # computed yet find it (no "not found" in the browser's console), empty.
                self.path(block).touch(exist_ok=True)
            files.append({"url": f"./app/static/{FOLDER_NAME}/{self.name(block)}",
                          "done": done})
        with self._lock:
            self._wants[session] = _Want(time.monotonic(), list(blocks), compute,
                                         [t for t in tasks if t[0] not in self._tasks_done])
            self._start()
            self._lock.notify()
        return files

    def read(self, block):
        """``block``'s answers (``{setting key: answer}``), or ``None`` before they are in."""
        try:
            return json.loads(gzip.decompress(self.path(block).read_bytes()))["answers"]
        except (OSError, EOFError, ValueError, KeyError):
            return None

    def done(self, block):
        """Whether ``block``'s answers are written (an empty file is a block not yet)."""
        try:
            return self.path(block).stat().st_size > 0
        except FileNotFoundError:
            return False

    def forget(self, session):
        with self._lock:
            self._wants.pop(session, None)

    def _start(self):
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="sdwec-ahead", daemon=True)
            self._thread.start()

    def _wanted(self, block):
        return any(block in want.blocks for want in self._wants.values())

    def _next(self):
        """The next block to compute: the newest wish's first block without a file."""
        now = time.monotonic()
        for session, want in list(self._wants.items()):
            if now - want.when > WANT_SECONDS:
                del self._wants[session]
        wants = sorted(self._wants.values(), key=lambda w: -w.when)
        # First every session's nearest blocks (the λ line, the block holding each of β, γ
        # and ε): in a busy class a session moves on before its far blocks are reached.
        for first in (True, False):
            for want in wants:
                seen = set()
                for block in want.blocks:
                    home = block.param not in seen
                    seen.add(block.param)
                    if home == first and not self.done(block):
                        return block, want.compute
        for want in wants:
            while want.tasks:
                key, fn = want.tasks.pop(0)
                if key not in self._tasks_done:
                    if len(self._tasks_done) > 10_000:
                        self._tasks_done.clear()
                    self._tasks_done.add(key)
                    return None, fn
        return None

    def _run(self):
        try:  # below the pages: a move's server run never waits for this thread's work
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
        except (AttributeError, OSError):
            pass
        # The pages' caches, filled from here for them, warn at each call that this thread
        # runs no script: expected here, and nothing a reader of the log can act on.
        logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").addFilter(
            lambda record: threading.current_thread() is not self._thread)
        while True:
            with self._lock:
                job = self._next()
                while job is None:
                    self._lock.wait(timeout=30)
                    job = self._next()
            block, compute = job
            try:
                if block is None:
                    compute()
                else:
                    self._compute(block, compute)
            except Exception:  # noqa: BLE001 - a failed block is logged, the pages go on
                if block is None:
                    LOG.exception("answers ahead: a task failed")
                    continue
                LOG.exception("answers ahead: block %s %s failed", block.param, block.values)
                with self._lock:
                    for want in self._wants.values():
                        if block in want.blocks:
                            want.blocks.remove(block)

    def _compute(self, block, compute):
        answers = {}
        for value in block.values:
            with self._lock:
                if not self._wanted(block):
                    return  # nobody waits for it any more
            _after_the_pages()
            answer = compute({block.param: value})
            answers[answer["key"]] = answer
            self.computed += 1
        self._write(block, answers)


def _after_the_pages(most=1.0):
    """Wait (at most ``most`` seconds) while a page's script runs in this process: the pages
    and this thread share one interpreter lock, and a move's run comes first.  (Streamlit
    runs each session's script in a thread of this name while it runs.)"""
    deadline = time.monotonic() + most
    while time.monotonic() < deadline and any(
            t.name == "ScriptRunner.scriptThread" for t in threading.enumerate()):
        time.sleep(0.005)


_AHEAD = None
_AHEAD_LOCK = threading.Lock()


def get(folder):
    """This process's :class:`Ahead` writing into ``folder`` (``None`` where it cannot, or
    where ``$SDWEC_AHEAD`` is ``0``: every move is then the server's)."""
    global _AHEAD
    if os.environ.get("SDWEC_AHEAD", "1") == "0":
        return None
    with _AHEAD_LOCK:
        if _AHEAD is None or _AHEAD.folder != Path(folder):
            candidate = Ahead(folder)
            _AHEAD = candidate if candidate.usable() else None
        return _AHEAD
