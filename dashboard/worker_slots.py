"""The machine's cap on training workers: slot files and queue tickets.

Every replica of one cache folder shares :func:`slot_folder`.  A running worker holds the
``flock`` lock of one ``slot-<i>.lock`` file (the lock belongs to the open file description
the worker inherits, so the kernel frees the slot however the worker or its replica dies); a
job waiting for a slot holds the lock of a ticket ``queue/<ns>-<pid>-<n>.ticket``, so the
queue's order is the order jobs were asked for on the whole machine, and a dead registry's
tickets are told by their free lock.  :class:`dashboard.jobs.JobRegistry` decides with these.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import logging
import os
import socket
import time
from pathlib import Path

from sdwec import cache

LOG = logging.getLogger("dashboard")

#: How many training workers may run at once on this machine (every replica of one cache
#: folder together); ``0``: no cap.  Read by :func:`max_workers`.
WORKERS_ENV = "SDWEC_TRAINING_WORKERS"
def default_workers() -> int:
    """The cores this process may run on (at least 1).

    A worker trains on one core at low priority (nice 10), so the replicas' page runs
    already win the cores from it; a worker beyond one per core only shares a core with
    another (they finish no sooner together) while it holds its memory, about 200 MB
    (results/jobs.md: ten small pools at once, 2 GiB).
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def max_workers() -> int | None:
    """The cap on running training workers on this machine: ``$SDWEC_TRAINING_WORKERS``
    if set (``0``: no cap, ``None``), else :func:`default_workers`.  A value that is not a
    whole number >= 0 warns and gives the default, so a typo never stops training."""
    text = os.environ.get(WORKERS_ENV, "").strip()
    if not text:
        return default_workers()
    try:
        value = int(text)
        if value < 0:
            raise ValueError(text)
    except ValueError:
        LOG.warning("%s=%r is not a whole number >= 0; using %d", WORKERS_ENV, text,
                    default_workers())
        return default_workers()
    return value or None


def slot_folder() -> Path:
    """Where the slots and the queue live: ``training-slots/<host>`` in the pool cache's
    folder, which the replicas share (one folder per machine: the cap is about its cores)."""
    return cache.cache_dir() / "training-slots" / socket.gethostname()


def _slot_paths(folder, workers):
    return [Path(folder) / f"slot-{i}.lock" for i in range(workers)]


def _lock_nb(fd) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _open_lock(path):
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)


def take_slot(folder, workers):
    """A free slot's file descriptor, locked (``flock`` locks belong to the open file
    description, so a worker that inherits it holds the slot); ``None`` if all are held."""
    for path in _slot_paths(folder, workers):
        fd = _open_lock(path)
        if _lock_nb(fd):
            return fd
        os.close(fd)
    return None


def busy_slots(folder, workers):
    """How many slots are held.  Asking means taking a free slot's lock for an instant; a
    replica that meets it then finds no slot and takes one at its next look."""
    busy = 0
    for path in _slot_paths(folder, workers):
        fd = _open_lock(path)
        try:
            busy += not _lock_nb(fd)
        finally:
            os.close(fd)  # releases the lock if it was taken here
    return busy


class Ticket:
    """A queued job's place: ``queue/<ns since epoch>-<pid>-<n>.ticket`` in the slot folder,
    locked by its registry while the job waits, so its order is the order jobs were asked
    for, on the whole machine, and a dead registry's tickets can be told (their lock is free).
    """

    _SUFFIX = ".ticket"
    _numbers = itertools.count()
    #: A temporary file older than this whose lock is free was left by a dead registry.
    _STALE_TEMP_SECONDS = 60.0

    def __init__(self, folder):
        queue_dir = Path(folder) / "queue"
        queue_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.name = f"{time.time_ns():020d}-{os.getpid()}-{next(self._numbers)}"
        self.path = queue_dir / f"{self.name}{self._SUFFIX}"
        # Locked before it is visible under its name: a ticket seen unlocked is a dead one.
        temp = queue_dir / f".{self.name}.tmp"
        self._fd = os.open(temp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        os.rename(temp, self.path)

    def close(self):
        """Leave the queue (deleted before its lock is released)."""
        if self._fd is None:
            return
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        os.close(self._fd)
        self._fd = None

    @classmethod
    def live(cls, folder):
        """The names of the tickets waiting on the machine, first in line first; the
        tickets (and old temporary files) of dead registries are deleted on the way."""
        queue_dir = Path(folder) / "queue"
        names = []
        with contextlib.suppress(FileNotFoundError):
            for path in queue_dir.iterdir():
                name = path.name
                if name.endswith(cls._SUFFIX) and not _dead(path):
                    names.append(name[:-len(cls._SUFFIX)])
                elif name.endswith(".tmp"):
                    with contextlib.suppress(FileNotFoundError):
                        if time.time() - path.stat().st_mtime > cls._STALE_TEMP_SECONDS:
                            _dead(path)
        return sorted(names)


def place(tickets, ticket):
    """How many of ``tickets`` (names, in order) stand before ``ticket`` (all of them if its
    file was deleted under it)."""
    return tickets.index(ticket.name) if ticket.name in tickets else len(tickets)


def _dead(path) -> bool:
    """Whether nobody holds ``path``'s lock; if so it is deleted (a dead process's file)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return True
    try:
        if not _lock_nb(fd):
            return False
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return True
    finally:
        os.close(fd)
