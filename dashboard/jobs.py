"""Pool training off the page: one worker process per pool, cancellable, shared by sessions.

A page that needs an untrained pool asks the :class:`JobRegistry` for it (:meth:`~JobRegistry.
want`); the registry starts ``python -m sdwec _pool-job`` (or attaches to the one already
running for that pool), and the worker trains the pool into the disk cache through
:func:`sdwec.pool.load_pool`, so its progress is the cache's progress file that the page
already shows for any other builder (:func:`sdwec.pool.training_progress`).  Why another
process, not the page's script thread or another thread: a thread
cannot be stopped from outside, so Cancel would wait for the next progress report (20 trees,
a minute on NSL-KDD) and a closed tab's training went on; the page's run stays blocked while
it trains; and the training shares the server's GIL and memory.  A worker process at low
priority (``nice 10``) is killed at once, returns its memory when it exits, and leaves the
server's threads free: another session's λ move took 0.96× its idle time (median over 3
rounds) beside a worker, 1.94× beside a training in the page (results/jobs.md).

* **Cancel** kills the worker's process group (the worker and anything it started): SIGTERM,
  which the worker turns into an exit that runs its clean-up (no temporary file or progress
  record left), then SIGKILL after :data:`KILL_GRACE_SECONDS`.
* **Interest.** Each job keeps the sessions that want it and when each last said so (a page
  run or its polling fragment).  A session stops wanting a job when it cancels, or when it
  has not said so for ``timeout`` seconds and is not connected any more (``alive``; without
  it, the time alone decides).  A job nobody wants is stopped by :meth:`~JobRegistry.reap`,
  which a daemon thread runs every :data:`REAP_SECONDS`.
* **Reruns and page switches** find the job by its pool key and attach to it: the training
  goes on and its progress with it.
* **A cap on the machine's training workers** (:mod:`dashboard.worker_slots`: one per core,
  or ``$SDWEC_TRAINING_WORKERS``), shared by every replica of one cache folder: a running
  worker holds one of that many *slot* files (``slot-<i>.lock``) with ``flock``, inherited from the registry, so a slot is free the moment its worker is gone,
  whoever killed it (the kernel releases the lock; a killed replica's workers die with it).
  A job with no free slot is ``"queued"``: a *ticket* file in the same folder, named by the
  time it was asked for and locked by its registry while it waits, so every replica sees the
  one queue (a ticket whose lock can be taken belongs to a dead process and is deleted).  A
  queued job starts when no more tickets stand before it than slots are free (first come,
  first served across replicas); each registry with queued jobs looks every
  :data:`QUEUE_POLL_SECONDS`, and at once when one of its own workers ends.  Interest works
  as for a running job: a queued job nobody wants any more leaves the queue, never started.
* **A worker dies with its server.**  The worker runs in a session of its own (so that Cancel
  can kill its group), so a killed server (SIGKILL by serve.sh's health check, a killed
  serve.sh, the OOM killer) would leave it training, re-parented to pid 1, until its pool was
  written.  On Linux each worker is started through :data:`_GUARD`, which asks the kernel
  (``PR_SET_PDEATHSIG``) to send it SIGTERM the moment its parent goes, then execs the
  worker; SIGTERM makes it exit through its clean-up.  The kernel counts the *thread* that
  forked the worker as its parent, and Streamlit runs each page in a thread that ends with
  the run, so every worker is forked by one thread that lives as long as this process
  (:class:`_Spawner`).

Nothing here computes anything: it starts, queues, watches and stops processes.  It runs
past 500 lines because a job's life (asked, queued, started, watched, reaped, stopped) is one
state machine under one lock; split, each half would reach into the other's state.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import sdwec
from dashboard import worker_slots

#: The server's log: the worker's pid is named there, not on the page.
LOG = logging.getLogger("dashboard")
#: A session that has not refreshed its interest for this long, and is not connected, no
#: longer wants the job (the page polls every second; a closed tab stops within this).
INTEREST_TIMEOUT_SECONDS = 30.0
#: How often the reaper thread looks for jobs nobody wants.
REAP_SECONDS = 5.0
#: After SIGTERM, how long the worker has to exit before SIGKILL.
KILL_GRACE_SECONDS = 3.0
#: The worker: trains the pickled ``(PoolKey, Dataset or None)`` read on stdin.
WORKER_COMMAND = (sys.executable, "-m", "sdwec", "_pool-job")
#: How often a registry with queued jobs looks for a slot another replica freed.
QUEUE_POLL_SECONDS = 0.25


@dataclass(eq=False)
class Job:
    """One pool's training: queued for a slot, then one worker process.

    Attributes
    ----------
    key : sdwec.pool.PoolKey
    process : subprocess.Popen or None
        ``None`` while queued (or dropped from the queue).
    asked : float
        ``time.time()`` when it was first asked for.
    started : float or None
        ``time.time()`` when its worker started (``None`` while queued).
    sessions : dict
        Session id -> ``time.monotonic()`` when it last wanted the job.
    cancelled : bool
        Stopped or dropped from the queue by a cancel or by the reaper (not finished).
    error : str
        The worker's last lines on stderr when it failed.
    """

    key: object
    process: subprocess.Popen | None = None
    asked: float = field(default_factory=time.time)
    started: float | None = None
    sessions: dict = field(default_factory=dict)
    cancelled: bool = False
    error: str = ""
    _finished: threading.Event = field(default_factory=threading.Event)
    _dataset: object = field(default=None, repr=False)
    _ticket: object = field(default=None, repr=False)

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    @property
    def state(self) -> str:
        """``"queued"`` (waiting for a slot), ``"running"``, ``"done"`` (the pool is in the
        cache), ``"failed"`` or ``"cancelled"`` (stopped, or dropped from the queue)."""
        if not self._finished.is_set():
            return "queued" if self.process is None else "running"
        if self.cancelled:
            return "cancelled"
        return "done" if self.process is not None and self.process.returncode == 0 else "failed"

    def wait(self, timeout=None) -> bool:
        """Wait until the job has finished (its worker exited and its output is read, or it
        left the queue); False on timeout."""
        return self._finished.wait(timeout)


@dataclass(frozen=True)
class Standing:
    """Where a queued job stands, on this machine (every replica of the cache folder).

    Attributes
    ----------
    position : int
        1: the next to start.
    queued : int
        Jobs waiting for a slot.
    running : int
        Training workers running (slots held).
    """

    position: int
    queued: int
    running: int

    @property
    def text(self) -> str:
        """The sentence a page shows: ``"Queued: position 2 of 3 (1 training running)"``."""
        plural = "" if self.running == 1 else "s"
        return (f"Queued: position {self.position} of {self.queued} "
                f"({self.running} training{plural} running)")


class JobRegistry:
    """The pool-training jobs of this server process, one per pool key, under the machine's
    cap on running workers.

    Parameters
    ----------
    timeout : float, default=INTEREST_TIMEOUT_SECONDS
        Seconds without a refresh after which a session (not connected) no longer wants a job.
    alive : callable, optional
        ``alive(session_id) -> bool``: whether a session is still connected (a connected
        session keeps wanting the jobs it asked for).  Default: only the time decides.
    command : sequence of str, default=WORKER_COMMAND
        The worker; it reads the pickled ``(key, dataset)`` on stdin.
    reap_every : float or None, default=REAP_SECONDS
        Seconds between the reaper thread's rounds; ``None``: no thread (call :meth:`reap`).
    workers : int, optional
        The cap on running workers, shared with every registry of ``slots``; ``0``: no cap
        (no queue).  Default: :func:`~dashboard.worker_slots.max_workers` (the environment,
        else one per core).
    slots : path-like, optional
        The folder of the slots and the queue.  Default:
        :func:`~dashboard.worker_slots.slot_folder`.
    poll_every : float, default=QUEUE_POLL_SECONDS
        Seconds between two looks for a free slot while jobs are queued.
    """

    def __init__(self, timeout=INTEREST_TIMEOUT_SECONDS, alive=None, command=WORKER_COMMAND,
                 reap_every=REAP_SECONDS, workers=None, slots=None,
                 poll_every=QUEUE_POLL_SECONDS):
        self.timeout = float(timeout)
        self.alive = alive
        self.command = tuple(command)
        self.workers = worker_slots.max_workers() if workers is None else int(workers) or None
        self.slots = Path(worker_slots.slot_folder() if slots is None else slots)
        self.poll_every = float(poll_every)
        self._jobs = {}
        self._lock = threading.RLock()
        self._wake = threading.Event()
        self._dispatcher = None
        if reap_every is not None:
            threading.Thread(target=self._reap_forever, args=(float(reap_every),),
                             name="sdwec-job-reaper", daemon=True).start()

    # -- asking --------------------------------------------------------------------------

    def want(self, key, dataset, session):
        """The job training ``key``'s pool, started now if a slot is free and nobody waits
        before it, else queued, unless one is queued or running already; ``session`` wants it
        (its interest is refreshed).

        Parameters
        ----------
        key : sdwec.pool.PoolKey
        dataset : sdwec.datasets.Dataset or None
            An upload's data (``None`` for a shipped dataset).
        session : str

        Returns
        -------
        Job
            A finished job (done, failed or cancelled) stays until a new :meth:`want` after
            it starts another; the caller reads its state.
        """
        with self._lock:
            job = self._jobs.get(key)
            if job is None:
                job = self._jobs[key] = Job(key, _dataset=dataset)
                if self.workers is not None:
                    job._ticket = worker_slots.Ticket(self.slots)
                    self._keep_dispatching()
            if job.state in ("queued", "running"):
                job.sessions[session] = time.monotonic()
            self._dispatch()
            return job

    def get(self, key):
        """The job of ``key`` (queued, running or finished), or ``None``."""
        with self._lock:
            return self._jobs.get(key)

    def standing(self, key):
        """Where ``key``'s job stands in the machine's queue; ``None`` unless it is queued.

        Returns
        -------
        Standing or None
        """
        with self._lock:
            job = self._jobs.get(key)
            if job is None or job.state != "queued" or job._ticket is None:
                return None
            tickets = worker_slots.Ticket.live(self.slots)
            position = worker_slots.place(tickets, job._ticket) + 1
            return Standing(position, max(position, len(tickets)),
                            worker_slots.busy_slots(self.slots, self.workers))

    def forget(self, key):
        """Drop a finished job of ``key`` (so the next :meth:`want` starts a new one)."""
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and job.state not in ("queued", "running"):
                del self._jobs[key]

    def touch(self, session, keys=None):
        """Refresh ``session``'s interest in the jobs it wants (of ``keys``)."""
        now = time.monotonic()
        with self._lock:
            for key, job in self._jobs.items():
                if session in job.sessions and (keys is None or key in keys):
                    job.sessions[session] = now

    def cancel(self, key, session):
        """``session`` no longer wants ``key``'s job; stopped now (or dropped from the queue)
        if nobody else does.

        Returns
        -------
        bool
            Whether the job was stopped (False: other sessions still want it, or none runs).
        """
        with self._lock:
            job = self._jobs.get(key)
            if job is None or job.state not in ("queued", "running"):
                return False
            job.sessions.pop(session, None)
            if job.sessions:
                return False
            running = self._end(job)
        if running:
            _stop(job)
        return True

    def reap(self):
        """Stop the running jobs no session wants any more, and drop such queued jobs from
        the queue; returns them."""
        now = time.monotonic()
        stopped = []
        with self._lock:
            for job in self._jobs.values():
                if job.state not in ("queued", "running"):
                    continue
                for session, seen in list(job.sessions.items()):
                    if self.alive is not None and self.alive(session):
                        job.sessions[session] = now
                    elif now - seen > self.timeout:
                        del job.sessions[session]
                if not job.sessions:
                    stopped.append(job)
            running = [job for job in stopped if self._end(job)]
        for job in running:
            _stop(job)
        return stopped

    def running(self):
        """The jobs of this registry running now."""
        with self._lock:
            return [job for job in self._jobs.values() if job.state == "running"]

    def queued(self):
        """The jobs of this registry waiting for a slot, first in line first."""
        with self._lock:
            return sorted((job for job in self._jobs.values() if job.state == "queued"),
                          key=lambda job: (job._ticket.name if job._ticket else "", job.asked))

    def stop_all(self):
        """Stop every running job and empty the queue (server shutdown, tests)."""
        with self._lock:
            jobs = [job for job in self._jobs.values() if job.state in ("queued", "running")]
            running = [job for job in jobs if self._end(job)]
        for job in running:
            _stop(job)

    # -- the queue -----------------------------------------------------------------------

    def _end(self, job):
        """Mark ``job`` cancelled (under the lock); a queued one leaves the queue at once.
        Returns whether it runs (its worker is the caller's to stop, outside the lock)."""
        job.cancelled = True
        if job.process is not None:
            return True
        if job._ticket is not None:
            job._ticket.close()
        job._dataset = None
        job._finished.set()
        return False

    def _dispatch(self):
        """Start the queued jobs that may start (under the lock): without a cap, all; with
        one, a job when no more tickets stand before it than slots are free, in a slot."""
        waiting = self.queued()
        if not waiting:
            return
        if self.workers is None:
            for job in waiting:
                self._launch(job, None)
            return
        tickets = worker_slots.Ticket.live(self.slots)
        free = self.workers - worker_slots.busy_slots(self.slots, self.workers)
        for job in waiting:
            if worker_slots.place(tickets, job._ticket) >= free:
                break
            slot = worker_slots.take_slot(self.slots, self.workers)
            if slot is None:  # taken meanwhile by another replica
                break
            if job._ticket.name in tickets:
                tickets.remove(job._ticket.name)
            free -= 1
            job._ticket.close()
            self._launch(job, slot)

    def _keep_dispatching(self):
        """Run the dispatcher thread while jobs are queued (under the lock)."""
        if self._dispatcher is None:
            self._dispatcher = threading.Thread(target=self._dispatch_forever,
                                                name="sdwec-job-queue", daemon=True)
            self._dispatcher.start()

    def _dispatch_forever(self):
        while True:
            self._wake.wait(self.poll_every)
            self._wake.clear()
            with self._lock:
                with contextlib.suppress(Exception):  # a dispatcher that dies strands the queue
                    self._dispatch()
                if not self.queued():
                    self._dispatcher = None
                    return

    # -- processes -----------------------------------------------------------------------

    def _launch(self, job, slot):
        """Start ``job``'s worker, holding the slot file descriptor ``slot`` (or none)."""
        payload = pickle.dumps((job.key, job._dataset), protocol=pickle.HIGHEST_PROTOCOL)
        job._dataset = None
        try:
            # A session of its own: the worker and whatever it starts form one process group
            # that Cancel kills as a whole.  It inherits the slot's locked descriptor, so the
            # slot is held exactly as long as the worker's group lives.
            job.process = _SPAWNER.popen(
                _guarded(self.command), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, start_new_session=True, env=_worker_env(),
                pass_fds=() if slot is None else (slot,))
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            job.error = f"its worker process could not be started: {exc}"
            LOG.warning("pool training %s: %s", job.key, job.error)
            job._finished.set()
            return
        finally:
            if slot is not None:
                os.close(slot)
        job.started = time.time()
        LOG.info("pool training %s: worker pid %d started", job.key, job.process.pid)
        threading.Thread(target=_watch, args=(job, payload, self._wake.set),
                         name=f"sdwec-job-{job.process.pid}", daemon=True).start()

    def _reap_forever(self, every):
        while True:
            time.sleep(every)
            with contextlib.suppress(Exception):  # a reaper that dies would leak workers
                self.reap()


#: Run as ``python -c _GUARD PARENT COMMAND...``: SIGTERM to this process when its parent
#: (thread) goes, then exec COMMAND (the setting survives exec).  A parent already gone
#: before the setting took effect is caught by comparing the parent pid.
_GUARD = """\
import ctypes, os, signal, sys
ulong = ctypes.c_ulong
ctypes.CDLL(None).prctl(1, ulong(signal.SIGTERM), ulong(0), ulong(0), ulong(0))  # PDEATHSIG
if os.getppid() != int(sys.argv[1]):
    sys.exit("the server that started this worker is gone")
os.execvp(sys.argv[2], sys.argv[2:])
"""


def _guarded(command):
    """``command``, started so that it gets SIGTERM when this process dies (Linux only;
    elsewhere ``command`` as it is)."""
    if not sys.platform.startswith("linux"):
        return list(command)
    return [sys.executable, "-I", "-S", "-c", _GUARD, str(os.getpid()), *command]


class _Spawner:
    """Starts processes from one daemon thread that lives as long as this process, so that
    a parent-death signal fires when the process ends, not when the (page's) thread that
    asked for the worker ends."""

    def __init__(self):
        self._requests = queue.SimpleQueue()
        self._thread = None
        self._lock = threading.Lock()

    def popen(self, args, **kwargs):
        """``subprocess.Popen(args, **kwargs)``, run on the spawner thread."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name="sdwec-job-spawner",
                                                daemon=True)
                self._thread.start()
        done, box = threading.Event(), {}
        self._requests.put((args, kwargs, box, done))
        done.wait()
        if "error" in box:
            raise box["error"]
        return box["process"]

    def _serve(self):
        while True:
            args, kwargs, box, done = self._requests.get()
            try:
                box["process"] = subprocess.Popen(args, **kwargs)
            except BaseException as exc:  # handed to the caller, which raises it
                box["error"] = exc
            finally:
                done.set()


_SPAWNER = _Spawner()


def _worker_env():
    """This environment, with the ``sdwec`` this process runs first on the worker's path
    (a checkout's, when the server runs from one)."""
    root = str(Path(sdwec.__file__).resolve().parent.parent)
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": root if not path else root + os.pathsep + path}


def _watch(job, payload, ended):
    """Feed the worker its pool key and data, collect its stderr, mark the job finished,
    then call ``ended()`` (its slot is free: the next queued job may start)."""
    try:
        _, err = job.process.communicate(payload)
    except (BrokenPipeError, OSError, ValueError):  # killed before it read its input
        job.process.wait()
        err = b""
    code = job.process.returncode
    if code != 0:
        lines = err.decode(errors="replace").strip().splitlines()
        job.error = "\n".join(lines[-5:]) or _silent_end(code)
    if code > 0 or (code < 0 and not job.cancelled):
        LOG.warning("pool training %s: worker pid %d failed (exit status %d): %s", job.key,
                    job.pid, code, job.error.splitlines()[-1])
    else:
        LOG.info("pool training %s: worker pid %d %s", job.key, job.pid,
                 "done" if code == 0 else f"stopped (signal {-code})")
    job._finished.set()
    ended()


def _silent_end(code):
    """Why a worker that wrote nothing on stderr stopped: a signal ends it without a word
    (SIGKILL from the kernel when memory runs out, or from an operator; SIGTERM through the
    worker's handler, as exit status 128 + 15), which the page showed as "(no message)"."""
    number = -code if code < 0 else code - 128 if 128 < code < 128 + signal.NSIG else None
    if number is None:
        return f"its worker process exited with status {code} and no message"
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    why = "; the system does this when memory runs out" if name == "SIGKILL" else ""
    return (f"its worker process was killed by {name} before it had stored the pool, so "
            f"nothing was written to the cache{why}")


def _signal_group(job, signum):
    try:
        os.killpg(job.pid, signum)
    except ProcessLookupError:
        pass
    except PermissionError:  # the group is gone and the id reused: only the worker itself
        with contextlib.suppress(ProcessLookupError):
            os.kill(job.pid, signum)


def _stop(job):
    """SIGTERM the worker's process group, SIGKILL it if it has not exited in time."""
    _signal_group(job, signal.SIGTERM)
    job.wait(KILL_GRACE_SECONDS)
    _signal_group(job, signal.SIGKILL)  # what is left of the group, if anything
    job.wait()
