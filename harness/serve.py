"""One replica against two behind nginx: the load test's clients pointed at ``scripts/serve.sh``.

Each *phase* starts ``bash scripts/serve.sh --replicas N`` (nginx in front of N Streamlit
processes, one shared pool cache), drives ``--clients`` websocket clients of
:mod:`harness.load` through the proxy, and stops it with SIGTERM.  Phases alternate
1, 2, 1, 2, ... replicas (``--rounds`` pairs) so that both settings see the same background
load on a shared machine.  Every client first loads the page over HTTP and keeps the cookies
it got (the proxy's sticky-session cookie), as a browser does, so its websockets all reach one
replica.

The pool cache starts empty in every phase: the replicas train the pools themselves while
the clients' first pages wait, and the run checks that each pool was trained once across
replicas.  Two independent counts: the completed writes of each cache entry (Linux inotify
on the cache folder: ``sdwec.pool`` renames a finished entry into place, one event per
training), and the script runs in which a client received a training progress bar.

Per phase the report gives: actions served per second in the measured window, the time to
updated charts (p50/p95), errors (an action with fewer than three charts with data, a
configuration the page did not apply, an error box or traceback, a time-out, a traceback in a
replica's log), sessions per replica, resident memory of every process (idle, after the
warm-up, at the end, peak), CPU seconds of the replicas, nginx, this harness and everything
else on the machine, and whether the stop left any process behind.

    python -m benchmarks.serve --out results/serve.md       # 30 clients, 2 rounds of 1 vs 2
    python -m benchmarks.serve --quick                      # 3 clients, seconds
    python -m benchmarks.serve --faults --out results/serve.md   # faults under 15 sessions

``--faults`` runs :mod:`harness.faults` instead: one serve.sh with 2 replicas, kill -9 and
kill -STOP of a replica and kill -9 of nginx under load; its report replaces the section
"Serving a class through faults" of ``--out`` (the rest of the file stays).
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from harness import load
from harness.common import healthy, machine, percentile, table

SCRIPT = load.ROOT / "scripts" / "serve.sh"
NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx")
                                  else None)


# --------------------------------------------------------------------------- serve.sh


def _default_sigint():
    # A job started in the background by a non-interactive shell inherits SIGINT ignored,
    # and bash cannot trap a signal ignored at its start: give serve.sh the terminal's default.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Served:
    """``bash scripts/serve.sh --replicas N`` on loopback; a context manager that stops it.

    Parameters
    ----------
    replicas : int
        Streamlit processes behind the proxy.
    cache_dir : path
        ``SDWEC_CACHE_DIR`` of every replica.
    run_dir : path, optional
        serve.sh's run directory (default: a new temporary folder).
    timeout : float
        Seconds serve.sh may take to report that everything is up.
    extra : list of str
        More serve.sh options (e.g. ``["--max-memory", "40"]``).

    Attributes
    ----------
    url : str
        The proxy's address.
    proc : subprocess.Popen
        serve.sh itself.
    """

    def __init__(self, replicas, cache_dir, run_dir=None, timeout=240.0, extra=()):
        self.replicas = int(replicas)
        self.cache_dir = Path(cache_dir)
        self.run_dir = Path(run_dir or tempfile.mkdtemp(prefix="sdwec-serve-"))
        self.port = load.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.timeout = timeout
        self.extra = list(extra)
        self.output_path = self.run_dir.parent / f"{self.run_dir.name}.out"
        self.env = dict(os.environ, SDWEC_PYTHON=sys.executable,
                        SDWEC_CACHE_DIR=str(self.cache_dir))
        self.proc = None
        self.known = {}  # pid -> psutil.Process: everything serve.sh started

    def __enter__(self):
        if NGINX is None:
            raise RuntimeError("nginx is missing: `apt-get install nginx` (scripts/test.sh and "
                               "scripts/serve.sh install it)")
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        cmd = ["bash", str(SCRIPT), "--replicas", str(self.replicas), "--port", str(self.port),
               "--listen", "127.0.0.1", "--run-dir", str(self.run_dir)] + self.extra
        with open(self.output_path, "wb") as out:
            self.proc = subprocess.Popen(cmd, cwd=load.ROOT, env=self.env, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True,
                                         preexec_fn=_default_sigint)
        deadline = time.monotonic() + self.timeout
        while "Stop with" not in self.output():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.__exit__(None, None, None)
                raise RuntimeError(f"serve.sh did not start:\n{self.output()[-3000:]}")
            time.sleep(0.3)
        self._remember()
        return self

    def __exit__(self, *exc):
        if self.proc is not None and self.proc.poll() is None:
            self.stop()
        # Last resort, for a serve.sh that failed to stop its children.
        for proc in self.survivors():
            with contextlib.suppress(Exception):
                proc.kill()

    def output(self):
        """What serve.sh printed so far."""
        try:
            return self.output_path.read_text(errors="replace")
        except OSError:
            return ""

    def _pid(self, name):
        try:
            return int((self.run_dir / name).read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def processes(self):
        """``{label: psutil.Process}``: each replica, nginx's master and its workers."""
        import psutil

        found = {}
        # psutil.Process(None) is this process: a missing pid file (no proxy, or stopped)
        # must give nothing, not the caller (which __exit__ would then kill).
        for i in range(1, self.replicas + 1):
            pid = self._pid(f"replica-{i}.pid")
            if pid is not None:
                with contextlib.suppress(psutil.Error):
                    found[f"replica {i}"] = psutil.Process(pid)
        pid = self._pid("nginx.pid")
        if pid is not None:
            with contextlib.suppress(psutil.Error):
                master = found["nginx master"] = psutil.Process(pid)
                for n, worker in enumerate(master.children(), 1):
                    found[f"nginx worker {n}"] = worker
        return found

    def _remember(self):
        import psutil

        with contextlib.suppress(psutil.Error):
            for proc in psutil.Process(self.proc.pid).children(recursive=True):
                self.known[proc.pid] = proc
        for proc in self.processes().values():
            self.known[proc.pid] = proc

    def survivors(self):
        """Processes serve.sh started that still run (zombies do not count)."""
        import psutil

        alive = []
        for proc in self.known.values():
            with contextlib.suppress(psutil.Error):
                if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                    alive.append(proc)
        return alive

    def stop(self, sig=signal.SIGTERM, timeout=60.0):
        """Send ``sig`` to serve.sh (SIGINT: to its process group, as Ctrl-C in a terminal
        does) and wait; return its exit code and the processes it left running."""
        self._remember()
        if sig == signal.SIGINT:
            os.killpg(self.proc.pid, sig)
        else:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
        return code, self.survivors()

    def rss(self):
        """Resident memory of the replicas and nginx, in bytes."""
        return sum(_rss(p) for p in self.processes().values())

    def connections(self):
        """Established connections to the proxy's port (one websocket per session, plus
        HTTP requests)."""
        import psutil

        count = 0
        for label, proc in self.processes().items():
            if label.startswith("nginx worker"):
                with contextlib.suppress(psutil.Error):
                    count += sum(1 for c in proc.net_connections(kind="tcp")
                                 if c.status == psutil.CONN_ESTABLISHED and c.laddr
                                 and c.laddr.port == self.port)
        return count

    def healthy(self):
        return healthy(self.url)

    def log(self):
        """The replicas' logs, one after the other."""
        parts = []
        for path in sorted(self.run_dir.glob("replica-*.log")):
            parts.append(path.read_text(errors="replace"))
        return "\n".join(parts)


def _rss(proc):
    import psutil

    try:
        return proc.memory_info().rss
    except psutil.Error:
        return 0


def _cpu(proc):
    import psutil

    try:
        t = proc.cpu_times()
        return t.user + t.system
    except psutil.Error:
        return 0.0


# --------------------------------------------------------------------------- cache writes


class EntryWrites:
    """Counts completed writes of pool cache entries in a folder (Linux inotify).

    ``sdwec.pool`` writes an entry to a temporary file and renames it into place, so each
    training that reaches the disk cache is one ``IN_MOVED_TO`` event named after its entry
    -- whichever process trained it.  A context manager; :meth:`counts` reads the events.

    The kernel merges an event into the previous unread one when both are the same (mask,
    name): two renames onto one entry would count once.  Watching ``IN_MOVED_FROM`` too puts
    each rename's "from" event (the temporary file) between two "to" events.
    """

    IN_MOVED_FROM, IN_MOVED_TO = 0x40, 0x80
    _EVENT = struct.Struct("iIII")  # wd, mask, cookie, length of the name that follows

    def __init__(self, folder):
        self.folder = Path(folder)
        self.fd = None
        self.seen = Counter()

    def __enter__(self):
        self.folder.mkdir(parents=True, exist_ok=True)
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        mask = self.IN_MOVED_FROM | self.IN_MOVED_TO
        if libc.inotify_add_watch(self.fd, os.fsencode(self.folder), mask) < 0:
            error = ctypes.get_errno()
            os.close(self.fd)
            raise OSError(error, f"cannot watch {self.folder}")
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            self.counts()
            os.close(self.fd)
            self.fd = None

    def counts(self):
        """``Counter`` of completed writes by entry file name (``pool-*.pkl``) so far."""
        while self.fd is not None:
            try:
                buffer = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            offset = 0
            while offset < len(buffer):
                _, mask, _, length = self._EVENT.unpack_from(buffer, offset)
                offset += self._EVENT.size
                name = buffer[offset:offset + length].rstrip(b"\0").decode()
                offset += length
                if mask & self.IN_MOVED_TO and re.fullmatch(r"pool-.*\.pkl", name):
                    self.seen[name] += 1
        return Counter(self.seen)


def clear_pool_cache(folder):
    """Remove the pool entries (and their lock and temporary files) from ``folder``."""
    for pattern in ("pool-*.pkl", "pool-*.lock", ".tmp-*.pkl"):
        for path in Path(folder).glob(pattern):
            path.unlink()


# --------------------------------------------------------------------------- sampling


class Sampler(threading.Thread):
    """Every ``every`` seconds: RSS and CPU time of each of serve.sh's processes, this
    process's CPU time and the whole machine's busy CPU time."""

    def __init__(self, served, every=1.0):
        super().__init__(daemon=True)
        self.served = served
        self.every = every
        self.samples = []  # (monotonic t, {label: (rss, cpu)}, own cpu, machine busy cpu)
        self._done = threading.Event()

    def run(self):
        import psutil

        me = psutil.Process()
        while not self._done.is_set():
            procs = {label: (_rss(p), _cpu(p)) for label, p in self.served.processes().items()}
            t = psutil.cpu_times()
            busy = t.user + t.nice + t.system + t.irq + t.softirq + getattr(t, "steal", 0.0)
            own = me.cpu_times()
            self.samples.append((time.monotonic(), procs, own.user + own.system, busy))
            self._done.wait(self.every)

    def stop(self):
        self._done.set()
        self.join()


# --------------------------------------------------------------------------- phases


@dataclass
class Phase:
    """One serve.sh start, load and stop."""

    replicas: int
    outcome: load.Outcome
    samples: list
    writes: Counter
    entries: list  # pool entry files in the cache at the end
    stop_code: int | None
    survivors: list  # "pid name" of processes left after the stop
    labels: list = field(default_factory=list)
    long: bool = False  # the longer phase after the rounds (memory over time)


def run_phase(replicas, settings, cache_dir, log=print, long=False):
    """Empty the pool cache, start serve.sh with ``replicas``, drive ``settings``' clients
    through its proxy, stop it; return a :class:`Phase`."""
    clear_pool_cache(cache_dir)
    log(f"phase: {replicas} replica(s)")
    with EntryWrites(cache_dir) as writes, Served(replicas, cache_dir) as served:
        log(f"  serve.sh up: {served.url}, run directory {served.run_dir}")
        sampler = Sampler(served)
        sampler.start()
        try:
            outcome = load.run_load(settings, log=log, server=served)
        finally:
            sampler.stop()
        labels = list(served.processes())
        code, left = served.stop()
        survivors = [f"{p.pid} {p.name()}" for p in left]
        counts = writes.counts()
    entries = sorted(p.name for p in Path(cache_dir).glob("pool-*.pkl"))
    return Phase(replicas, outcome, sampler.samples, counts, entries, code, survivors, labels,
                 long)


def phase_figures(phase):
    """The figures of one phase (a dict)."""
    o = phase.outcome
    s = load.summary(o)
    load_actions = [a for a in o.actions if a.phase == "load"]
    served = [a for a in load_actions if a.error is None and a.seconds is not None]
    first = phase.samples[0]
    warm, end = _window(phase)
    seconds = end[0] - warm[0]
    cpu = {label: end[1].get(label, (0, 0))[1] - warm[1].get(label, (0, 0))[1]
           for label in end[1]}
    replicas_cpu = sum(v for k, v in cpu.items() if k.startswith("replica"))
    nginx_cpu = sum(v for k, v in cpu.items() if k.startswith("nginx"))
    harness_cpu = end[2] - warm[2]
    busy = end[3] - warm[3]
    rss = {}
    for label in phase.labels:
        trace = [smp[1][label][0] for smp in phase.samples if label in smp[1]]
        rss[label] = (first[1].get(label, (0, 0))[0], warm[1].get(label, (0, 0))[0],
                      end[1].get(label, (0, 0))[0], max(trace, default=0))
    return {
        "replicas": phase.replicas, "served": len(served), "seconds": o.load_seconds,
        "rate": len(served) / o.load_seconds if o.load_seconds else float("nan"),
        "times": [a.seconds for a in served], "p50": s["p50_all"], "p95": s["p95_all"],
        "errors": s["errors"] + len(o.session_failures), "action_errors": s["action_errors"],
        "held": o.sessions_held, "sessions": load.total_sessions(o.settings),
        "all_actions": len(o.actions),
        "correct": sum(1 for a in o.actions if a.error is None and a.seconds is not None),
        "routes": Counter(o.routes.values()),
        "writes": phase.writes, "entries": phase.entries,
        "trained_runs": sum(1 for a in o.actions if a.trained),
        "rss": rss, "cpu_window": seconds, "cpu_replicas": replicas_cpu,
        "cpu_each": [v for k, v in sorted(cpu.items()) if k.startswith("replica")],
        "cpu_nginx": nginx_cpu,
        "cpu_harness": harness_cpu, "cpu_busy": busy,
        "cpu_other": busy - replicas_cpu - nginx_cpu - harness_cpu,
        "final": o.final_error is None and o.final_seconds is not None,
        "alive": o.server_alive, "stop_code": phase.stop_code, "survivors": phase.survivors,
        "log_tracebacks": o.server_log_tracebacks,
    }


def _window(phase):
    """The samples nearest to the end of the warm-up and to the end of the measured load."""
    def nearest(when):
        return min(phase.samples, key=lambda sample: abs(sample[0] - when))

    return nearest(phase.outcome.warm_at), nearest(phase.outcome.load_end_at)


# --------------------------------------------------------------------------- report


def _ms(value):
    return f"{value * 1e3:.0f}"


def _mib(value):
    return f"{value / 2**20:.0f}"


def _long_text(phases):
    durations = [p.outcome.settings.duration for p in phases if p.long]
    return (f" ({durations[0]:g} s in the last phase, a longer one with 2 replicas, for memory "
            f"over time)" if durations else "")


def report(phases, settings, command=None, wall=0.0):
    """The Markdown report of a run."""
    figures = [phase_figures(p) for p in phases]
    lines = ["# Serving a class: 1 replica vs 2 behind nginx", ""]
    if command:
        lines += ["Command:", "", f"```\n{command}\n```", ""]
    st = settings
    lines += [
        f"Machine: {machine()}", "",
        f"Settings: each phase starts `bash scripts/serve.sh --replicas N` (nginx in front, "
        f"sticky cookie, one shared pool cache emptied before the phase) and drives "
        f"{st.sessions} websocket clients through the proxy, each first loading the page over "
        f"HTTP and keeping its cookies as a browser does; {st.warmup:g} s warm-up (the "
        f"replicas train the pools while the first pages wait) then {st.duration:g} s "
        f"measured{_long_text(phases)}; datasets {', '.join(st.datasets)} (binary, "
        f"l = {st.n_trees}); action mix "
        + ", ".join(f"{k} {w:.0%}" for k, w in load.ACTIONS)
        + f"; after each served action a client waits {st.think[0]:g}–{st.think[1]:g} s "
        f"(uniform), so {st.sessions} clients offer at most "
        f"{st.sessions / (sum(st.think) / 2):.0f} actions per second; choices seeded with "
        f"{st.rng_seed} (the same in every phase); phases in the order "
        f"{', '.join(str(p.replicas) for p in phases)} replica(s); wall time {wall:.0f} s.", ""]

    by = {}
    for f, phase in zip(figures, phases):
        if not phase.long:  # no 1-replica partner: not in the comparison
            by.setdefault(f["replicas"], []).append(f)
    head = []
    for n, group in sorted(by.items()):
        served = sum(f["served"] for f in group)
        seconds = sum(f["seconds"] for f in group)
        times = [t for f in group for t in f["times"]]
        head.append([n, len(group), served, f"{seconds:.0f}", f"{served / seconds:.1f}",
                     f"{_ms(percentile(times, 50))} / {_ms(percentile(times, 95))}",
                     sum(f["errors"] for f in group)])
    lines += ["## Headline", "",
              "Pooled over the rounds' phases with the same number of replicas (time to "
              "updated charts in ms: from an action to the run's last message, every chart "
              "received):", "",
              table(["replicas", "phases", "actions served", "measured s", "actions / s",
                     "p50 / p95 ms", "errors"], head), ""]
    if 1 in by and 2 in by:
        rate = {n: sum(f["served"] for f in g) / sum(f["seconds"] for f in g)
                for n, g in by.items()}
        pairs = [f"{b['rate'] / a['rate']:.2f}" for a, b in zip(by[1], by[2])]
        lines += [f"Ratio, 2 replicas / 1: **{rate[2] / rate[1]:.2f}x** actions per second "
                  f"(per round: {', '.join(pairs)}).", ""]

    rows = []
    for i, (f, phase) in enumerate(zip(figures, phases), 1):
        rows.append([f"{i} (long)" if phase.long else i, f["replicas"],
                     f"{f['held']} / {f['sessions']}", f["served"],
                     f"{f['seconds']:.0f}", f"{f['rate']:.1f}", _ms(f["p50"]), _ms(f["p95"]),
                     f["errors"], f"{f['correct']} / {f['all_actions']}",
                     ", ".join(f"{k or '?'}: {v}" for k, v in sorted(f["routes"].items())),
                     "yes" if f["final"] else "**no**"])
    lines += ["## Phases", "",
              f"\"Charts correct\" counts the actions whose run delivered all {load.N_CHARTS} "
              "Explorer charts with data, applied the requested configuration and showed no error "
              "(over every action of the phase, warm-up included); \"sessions per replica\" is "
              "the proxy's `X-SDWEC-Replica` on each client's page load.", "",
              table(["phase", "replicas", "sessions held", "actions served", "measured s",
                     "actions / s", "p50 ms", "p95 ms", "errors", "charts correct",
                     "sessions per replica", "fresh session clean"], rows), ""]

    rows = []
    for i, f in enumerate(figures, 1):
        writes = f["writes"]
        rows.append([i, f["replicas"], len(f["entries"]), sum(writes.values()),
                     max(writes.values(), default=0), f["trained_runs"]])
    lines += ["## The pool trained once across replicas", "",
              "Per phase (the cache starts empty): pool entries in the cache at the end; "
              "completed writes of entries (inotify on the cache folder, one per training); "
              "the most writes of one entry; client runs that received a training progress "
              "bar (a lower bound on trainings: Streamlit may merge a fast bar's updates).", "",
              table(["phase", "replicas", "entries", "writes", "most writes of one entry",
                     "runs showing training"], rows), ""]

    rows = []
    for i, f in enumerate(figures, 1):
        for label, (idle, warm, end, peak) in f["rss"].items():
            if label.startswith("nginx worker") and label != "nginx worker 1":
                continue
            rows.append([i, f["replicas"], label, _mib(idle), _mib(warm), _mib(end),
                         _mib(end - warm), _mib(peak)])
    lines += ["## Memory per process", "",
              "Resident memory in MiB at the start of the sessions (idle), after the warm-up, "
              "at the end, its growth over the measured window and its peak (sampled every "
              "second; nginx's other workers are like the first):", "",
              table(["phase", "replicas", "process", "idle", "after warm-up", "end",
                     "growth", "peak"], rows), "",
              "Each replica's resident memory over time (s after the sessions start: MiB, "
              "every 15 s):", ""]
    for i, phase in enumerate(phases, 1):
        t0 = phase.samples[0][0]
        for label in phase.labels:
            if not label.startswith("replica"):
                continue
            trace, next_t = [], 0.0
            for t, procs, *_ in phase.samples:
                if t - t0 >= next_t and label in procs:
                    trace.append(f"{t - t0:.0f} s: {_mib(procs[label][0])}")
                    next_t += 15.0
            lines.append(f"- phase {i}, {label}: " + ", ".join(trace))
    lines.append("")

    rows = []
    for i, f in enumerate(figures, 1):
        window = f["cpu_window"] or float("nan")
        each = " + ".join(f"{v:.0f}" for v in f["cpu_each"])
        per_cpu = f["served"] / f["cpu_replicas"] if f["cpu_replicas"] else float("nan")
        rows.append([i, f["replicas"], f"{window:.0f}",
                     f"{f['cpu_replicas']:.0f}" + (f" ({each})" if len(f["cpu_each"]) > 1 else ""),
                     f"{per_cpu:.1f}",
                     f"{f['cpu_nginx']:.1f}", f"{f['cpu_harness']:.0f}",
                     f"{f['cpu_other']:.0f}",
                     f"{f['cpu_busy']:.0f} ({f['cpu_busy'] / window / 2:.0%})"])
    lines += ["## Where the CPU went", "",
              "CPU seconds over each measured window (2 cores = 2 CPU seconds per second): "
              "the replicas together (each one in brackets), nginx (master and workers), "
              "this harness (the websocket clients), and every other process on the machine (other people's "
              "jobs included); the last column is the machine's total.  \"Actions per "
              "replica CPU s\" divides the actions served by the replicas' CPU seconds.", "",
              table(["phase", "replicas", "window s", "replicas", "actions per replica CPU s",
                     "nginx", "harness", "other processes", "machine busy"], rows), ""]

    stops = [f"phase {i}: exit code {f['stop_code']}, "
             + (f"left running: {', '.join(f['survivors'])}" if f["survivors"]
                else "no process left") for i, f in enumerate(figures, 1)]
    lines += ["Stop with SIGTERM: " + "; ".join(stops) + ".", ""]
    errors = [(i, a) for i, f in enumerate(figures, 1) for a in f["action_errors"]]
    if errors:
        lines += ["Errors:", ""]
        lines += [f"- phase {i}, session {a.session}, {a.phase}, {a.kind} on {a.dataset}: "
                  f"{a.error}" for i, a in errors[:30]]
        lines.append("")
    return "\n".join(lines)


def run(settings, rounds=2, cache_dir=None, log=print, long=0.0):
    """Phases 1, 2, 1, 2, ... replicas (``rounds`` pairs), then, if ``long``, one phase of 2
    replicas measured for ``long`` seconds (memory over time); return the list of phases."""
    cache_dir = Path(cache_dir or tempfile.mkdtemp(prefix="sdwec-cache-serve-"))
    plan = [(replicas, settings, False) for _ in range(rounds) for replicas in (1, 2)]
    if long:
        plan.append((2, dataclasses.replace(settings, duration=long), True))
    phases = []
    for replicas, phase_settings, is_long in plan:
        phases.append(run_phase(replicas, phase_settings, cache_dir, log, is_long))
        f = phase_figures(phases[-1])
        log(f"  {replicas} replica(s): {f['rate']:.1f} actions/s, p50/p95 "
            f"{_ms(f['p50'])}/{_ms(f['p95'])} ms, {f['errors']} errors, "
            f"{sum(f['writes'].values())} entry writes for {len(f['entries'])} entries")
    return phases


FAULT_HEADING = "# Serving a class through faults"


def write_fault_section(path, text):
    """Put ``text`` (starting with :data:`FAULT_HEADING`) in ``path`` in place of its old
    fault section (from that heading to the end), or after the rest of the file."""
    path = Path(path)
    old = path.read_text() if path.exists() else ""
    keep = old.split(FAULT_HEADING, 1)[0].rstrip()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text((keep + "\n\n" if keep else "") + text.rstrip() + "\n")


def run_fault_mode(args, command):
    """``--faults``: the fault benchmark of :mod:`harness.faults`; return the exit code."""
    import asyncio

    from harness import faults

    low, high = (float(x) for x in args.think.split(","))
    chosen = tuple(args.fault_list.split(",")) if args.fault_list else tuple(faults.FAULTS)
    unknown = [name for name in chosen if name not in faults.FAULTS]
    if unknown:
        print(f"unknown fault(s) {', '.join(unknown)}; choose from {', '.join(faults.FAULTS)}",
              file=sys.stderr)
        return 2
    settings = faults.FaultSettings(sessions=args.clients, steady=args.steady,
                                    window=args.window, think=(low, high), n_trees=args.trees,
                                    faults=chosen)
    cache_dir = Path(args.cache_dir or tempfile.mkdtemp(prefix="sdwec-cache-faults-"))
    start = time.monotonic()
    with Served(2, cache_dir) as served:
        print(f"serve.sh up: {served.url}, run directory {served.run_dir}")
        found = asyncio.run(faults.run_faults(settings, served))
        code, left = served.stop()
    text = faults.fault_report(found, settings, command, time.monotonic() - start, machine())
    text += (f"\nStop with SIGTERM after the faults: exit code {code}, "
             + (f"left running: {', '.join(f'{p.pid} {p.name()}' for p in left)}" if left
                else "no process left") + ".\n")
    print(text)
    if args.out:
        write_fault_section(args.out, text)
    return 0 if faults.outcome_ok(found) and not left else 1


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=30)
    parser.add_argument("--duration", type=float, default=90.0,
                        help="measured seconds per phase, after the warm-up")
    parser.add_argument("--warmup", type=float, default=30.0)
    parser.add_argument("--rounds", type=int, default=2, help="pairs of phases (1 then 2 replicas)")
    parser.add_argument("--long", type=float, default=0.0, metavar="SECONDS",
                        help="then one phase of 2 replicas measured this long (memory over time)")
    parser.add_argument("--trees", type=int, default=200, help="pool size l")
    parser.add_argument("--think", default="0.5,2.5",
                        help="LOW,HIGH: seconds a client waits after each served action")
    parser.add_argument("--cache-dir", help="the shared pool cache (emptied before each phase; "
                        "default: a new temporary folder)")
    parser.add_argument("--out", help="write the Markdown report to this file")
    parser.add_argument("--faults", action="store_true",
                        help="the fault benchmark instead (harness/faults.py): --clients "
                             "sessions (15 is a classroom's figure), --trees, --think, --steady, "
                             "--window")
    parser.add_argument("--steady", type=float, default=20.0,
                        help="with --faults: seconds of load before each fault")
    parser.add_argument("--window", type=float, default=30.0,
                        help="with --faults: seconds measured after each fault")
    parser.add_argument("--fault-list", metavar="NAME,NAME",
                        help="with --faults: which faults, in this order (default: "
                             "replica-kill,replica-stop,nginx-kill)")
    parser.add_argument("--quick", action="store_true",
                        help="3 clients, 15 s per phase, wine and sonar, l = 20, one round")
    args = parser.parse_args(argv)
    command = " ".join(["python -m benchmarks.serve"]
                       + list(sys.argv[1:] if argv is None else argv))
    if args.faults:
        return run_fault_mode(args, command)
    low, high = (float(x) for x in args.think.split(","))
    if args.quick:
        settings = load.Settings(sessions=3, duration=15, warmup=5, datasets=("wine", "sonar"),
                                 n_trees=20, think=(low, high), page_cookies=True,
                                 prewarm=False, min_distinct=0, action_timeout=120)
        rounds = 1
    else:
        settings = load.Settings(sessions=args.clients, duration=args.duration,
                                 warmup=args.warmup, n_trees=args.trees, think=(low, high),
                                 page_cookies=True, prewarm=False, min_distinct=0)
        rounds = args.rounds
    start = time.monotonic()
    phases = run(settings, rounds=rounds, cache_dir=args.cache_dir,
                 long=0.0 if args.quick else args.long)
    text = report(phases, settings, command, time.monotonic() - start)
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    figures = [phase_figures(p) for p in phases]
    ok = all(f["errors"] == 0 and f["held"] == f["sessions"] and f["final"]
             and not f["survivors"] and max(f["writes"].values(), default=0) <= 1
             for f in figures)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
