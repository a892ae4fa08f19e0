"""The memory one server process (a replica) lets uploads take, across all its sessions.

``scripts/serve.sh`` kills a replica whose resident memory passes ``--max-memory`` (3072 MiB
by default), cutting every session on it.  One session uploading large files in a row, or a
class uploading at once, could push it there: each parse of a 90 MB CSV costs several
hundred MiB for a few seconds, and an upload's pool a few hundred more.  So before a request
that takes a large amount of memory (reading an upload, bringing an upload's pools into this
process), its need is estimated and compared with what the process holds now (its RSS) plus
what the other requests under way have reserved; over the cap (:data:`REPLICA_MEMORY_ENV`,
default :data:`DEFAULT_REPLICA_MEMORY_BYTES`) the newest request is refused with
:class:`MemoryRefused`, a sentence saying what happened and what to do, and nothing that
was already there is lost.  Before refusing, memory the allocator holds free is handed back
to the system (:func:`release_free_memory`), so a refusal means the memory is really in use.

The default, 2.5 GiB, leaves 512 MiB under serve.sh's guard for what is not reserved: the
solves, figures and pools of the shipped datasets other sessions use meanwhile, and the
estimates' error.  No Streamlit.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import logging
import os
import threading

from dashboard.pool_memory import bytes_from_env

LOG = logging.getLogger("dashboard")

#: Environment variable: bytes one process may hold before requests for more are refused.
REPLICA_MEMORY_ENV = "SDWEC_REPLICA_MEMORY_BYTES"
DEFAULT_REPLICA_MEMORY_BYTES = 2560 * 2**20
#: Peak bytes beyond the file's own that reading an upload takes, per byte of the file: the
#: preview and the parse (pandas' columns, the float64 matrix, its checks) measured on
#: benchmarks/upload.py's 1.2M-row CSV (89 MiB): 330-365 MiB above what the process held,
#: about 4 per byte (results/upload.md, "Memory of uploads across sessions"); 6 leaves room
#: for text columns, which pandas holds as Python strings.
READ_BYTES_PER_FILE_BYTE = 6


def replica_memory_cap():
    """The cap from :data:`REPLICA_MEMORY_ENV` (a positive number of bytes), else the
    default."""
    return bytes_from_env(REPLICA_MEMORY_ENV, DEFAULT_REPLICA_MEMORY_BYTES)


def process_rss():
    """This process's resident memory in bytes (what serve.sh's guard reads); 0 where
    ``/proc`` is not there."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _malloc_trim():
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):  # not glibc
        return None


_TRIM = _malloc_trim()


def release_free_memory():
    """Hand the memory the C allocator keeps free back to the system (glibc's
    ``malloc_trim``): freed arrays of a parse otherwise stay in this process's RSS."""
    if _TRIM is not None:
        _TRIM(0)


def _mib(n_bytes):
    return f"{n_bytes / 2**20:,.0f} MiB" if n_bytes < 2**30 else f"{n_bytes / 2**30:.1f} GiB"


class MemoryRefused(MemoryError):
    """A request refused because the process has no room for it; its text is for the page.

    A ``MemoryError``, so that a page's guard that does not know it still shows a
    sentence about memory, never a traceback.
    """


class MemoryBudget:
    """Admission of large requests against one cap on the process's memory.

    Parameters
    ----------
    cap : int or callable, optional
        Bytes, or a function returning them (default :func:`replica_memory_cap`, read at
        every request).
    rss : callable
        ``rss() -> bytes`` the process holds now (default :func:`process_rss`).
    trim : callable
        Called once before a refusal to hand free memory back (default
        :func:`release_free_memory`).
    """

    def __init__(self, cap=None, rss=process_rss, trim=release_free_memory):
        self._cap = replica_memory_cap if cap is None else (
            cap if callable(cap) else (lambda: int(cap)))
        self.rss = rss
        self.trim = trim
        self._lock = threading.Lock()
        self._reserved = {}  # token -> bytes
        self._next = 0

    @property
    def cap(self):
        return int(self._cap())

    def reserved(self):
        """Bytes the requests under way have reserved."""
        with self._lock:
            return sum(self._reserved.values())

    def admit(self, nbytes, what):
        """Reserve ``nbytes`` for a request, or raise :class:`MemoryRefused`; return a token
        for :meth:`release`.

        Parameters
        ----------
        nbytes : int
            The request's estimated peak, beyond what the process holds now.
        what : str
            What the request does, as the refusal names it ("reading this file").
        """
        nbytes = max(0, int(nbytes))
        with self._lock:
            cap, others = self.cap, sum(self._reserved.values())
            held = self.rss()
            if nbytes and held + others + nbytes > cap:
                self.trim()
                held = self.rss()
            if nbytes and held + others + nbytes > cap:  # nothing asked: nothing to refuse
                LOG.warning("memory budget: refused %s (%d bytes; %d held, %d reserved, cap %d)",
                            what, nbytes, held, others, cap)
                raise MemoryRefused(refusal(what, nbytes, held + others, cap))
            self._next += 1
            self._reserved[self._next] = nbytes
            return self._next

    def release(self, token):
        """End the reservation ``token`` (:meth:`admit`'s); unknown tokens are ignored."""
        with self._lock:
            self._reserved.pop(token, None)

    @contextlib.contextmanager
    def reserve(self, nbytes, what):
        """:meth:`admit` for the ``with`` block, released when it ends (however it ends)."""
        token = self.admit(nbytes, what)
        try:
            yield
        finally:
            self.release(token)


def refusal(what, nbytes, in_use, cap):
    """The sentence a refused request shows: what happened and what to do."""
    return (f"This server is short of memory right now: the data and work of everyone on it, "
            f"yours included, hold {_mib(in_use)} (its limit is {_mib(cap)}), and {what} needs "
            f"about {_mib(nbytes)} more, so it was not started. Your file is still in the "
            "uploader: try again in a minute (press R to rerun the page), or upload a smaller "
            "file: fewer columns, or a random sample of the rows (in pandas, "
            "df.sample(n=100_000, random_state=0).to_csv(...)).")


#: The budget of this process, shared by its sessions.
REPLICA = MemoryBudget()
