"""The bytes of pools one process holds, capped.

:mod:`dashboard.pools` bounds how many pools are held (a count); this bounds their bytes,
which vary 1000-fold between datasets: 24 NSL-KDD pools of 200 trees are ~2.7 GB, 24 of
sonar ~25 MB.  Held pools are tracked least recently used first; before a pool is read from
disk (room for its entry's size) and once it is loaded (its counted size), the oldest are
let go while the total is over the cap (their slots emptied: the next use reads them back
from the disk cache).  The pools one request asks for together (a configuration's splits)
are never let go for each other, so a configuration larger than the cap is held whole
(NSL-KDD's 10 splits at l = 200: ~1.1 GB) instead of reloading its own pools on every
rerun.  No Streamlit.
"""

from __future__ import annotations

import logging
import os
import threading
import types
import weakref
from collections import OrderedDict

import numpy as np

LOG = logging.getLogger("dashboard")

#: Environment variable: bytes of pools one process (a replica) holds in memory.
POOL_MEMORY_ENV = "SDWEC_POOL_MEMORY_BYTES"
DEFAULT_POOL_MEMORY_BYTES = 2**30


def bytes_from_env(name, default):
    """A positive number of bytes from the environment variable ``name``, else ``default``
    (a value that is not one is logged)."""
    raw = os.environ.get(name, "").strip()
    try:
        cap = int(float(raw)) if raw else default
    except (ValueError, OverflowError):
        cap = 0
    if cap <= 0:
        LOG.warning("%s=%r is not a positive number of bytes; using %d", name, raw, default)
        return default
    return cap


def pool_memory_cap():
    """The byte cap from :data:`POOL_MEMORY_ENV` (a positive integer), else the default."""
    return bytes_from_env(POOL_MEMORY_ENV, DEFAULT_POOL_MEMORY_BYTES)


def pool_nbytes(obj):
    """Bytes a pool holds: its arrays' ``nbytes``, and each fitted tree's nodes (64 bytes
    each in scikit-learn's node record) and leaf values; objects reached twice count once."""
    seen, total, todo = set(), 0, [obj]
    while todo:
        item = todo.pop()
        if item is None or id(item) in seen or isinstance(item, (str, bytes, int, float, bool)):
            continue
        seen.add(id(item))
        if isinstance(item, np.ndarray):
            if isinstance(item.base, np.ndarray):
                todo.append(item.base)  # a view: its owner counts
            else:
                total += item.nbytes
        elif isinstance(item, (type, types.ModuleType, types.FunctionType)):
            continue
        elif hasattr(item, "node_count") and hasattr(item, "value"):  # sklearn.tree Tree
            total += 64 * int(item.node_count) + int(item.value.nbytes)
        elif isinstance(item, dict):
            todo.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            todo.extend(item)
        elif hasattr(item, "__dict__"):
            todo.extend(vars(item).values())
    return total


class PoolMemory:
    """The pools held in slots, least recently used first, with their bytes."""

    def __init__(self):
        self._lock = threading.Lock()
        self._held = OrderedDict()  # PoolKey -> (weak reference to its slot, bytes)

    def touch(self, keys):
        """Mark the pools of ``keys`` as just used."""
        with self._lock:
            for key in keys:
                if key in self._held:
                    self._held.move_to_end(key)

    def hold(self, key, slot, keep=()):
        """Count ``slot``'s pool (just loaded) and let go of the least recently used other
        pools, except those of ``keep``, while the total is over the cap; return the keys
        let go."""
        size = pool_nbytes(slot["pool"])
        with self._lock:
            self._held[key] = (weakref.ref(slot), size)
            self._held.move_to_end(key)
            return self._let_go(0, {key, *keep})

    def make_room(self, nbytes, keep=()):
        """Before a pool of about ``nbytes`` is loaded: let go of the least recently used
        pools, except those of ``keep``, until it fits under the cap (so that the pools held
        never pass the cap, not even while one is read); return the keys let go."""
        with self._lock:
            return self._let_go(nbytes, set(keep))

    def _let_go(self, extra, keep):
        cap = pool_memory_cap()
        self._purge()
        total = extra + sum(size for _, size in self._held.values())
        let_go = []
        for old in [k for k in self._held if k not in keep]:
            if total <= cap:
                break
            ref, size = self._held.pop(old)
            victim = ref()
            if victim is not None:
                victim["pool"] = None
            total -= size
            let_go.append(old)
        if let_go:
            LOG.info("pool memory over %d bytes: let go of %d pools", cap, len(let_go))
        return let_go

    def release(self, source):
        """Let go of every pool held of ``source`` (a dataset's name or an upload's
        fingerprint: :attr:`sdwec.pool.PoolKey.source`), e.g. an upload nobody uses any more;
        return the keys let go (their disk cache entries stay)."""
        with self._lock:
            gone = [key for key in self._held if key.source == source]
            for key in gone:
                victim = self._held.pop(key)[0]()
                if victim is not None:
                    victim["pool"] = None
            return gone

    def _purge(self):
        for key, (ref, _) in list(self._held.items()):
            slot = ref()
            if slot is None or slot["pool"] is None:
                del self._held[key]

    def held(self):
        """``{key: bytes}`` of the pools held now, least recently used first."""
        with self._lock:
            self._purge()
            return {key: size for key, (_, size) in self._held.items()}


POOL_MEMORY = PoolMemory()
