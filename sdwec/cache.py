"""A disk cache of expensive, deterministic results (trained pools), safe across processes.

An entry is one file in :func:`cache_dir`, named after a SHA-256 of its *key*: a JSON-able
mapping of everything that determines the value, which callers fill with the inputs, the
library versions and a format number, so that a change of any of them reads as a miss. The
guarantees:

* **Atomic writes.** An entry is written to a temporary file, flushed to disk and renamed into
  place, so readers see no entry or a whole one; a killed writer leaves at most a temporary
  file. Its name carries the writer's pid and host (with its pid namespace), so the first
  use of the folder in a process (and every later write) deletes the temporary files of
  writers that are dead on this host, and those of any host once they are
  :data:`STALE_TEMP_SECONDS` old.
* **Checked reads.** A file holds a magic line, a header, the key and the pickled value. A read
  checks the magic, the lengths, the key (byte for byte, so a stale entry or a hash-prefix
  collision is a miss) and the SHA-256 of the payload; an entry that fails any check, or
  that fails to unpickle, is a miss and is rebuilt, never trusted.
* **Authenticated entries.** Unpickling runs code, and a checksum anyone can recompute proves
  nothing about who wrote a file. So the header also holds an HMAC-SHA256 tag over the magic,
  the header's fields (the payload's SHA-256 among them) and the key, made with a secret
  kept *outside* the cache folder (:func:`key_file`: ``$SDWEC_CACHE_KEY_FILE``, default
  ``~/.config/sdwec/cache.key``, created with mode 0600 at first use). The tag is checked
  before the payload is read; an entry without a valid tag (an older format, another
  secret, or a planted file) is a miss, logged, and is rebuilt. Processes that share a
  cache folder must share the secret (the same file, or a copy of it).
* **Compute once.** :func:`get_or_build` takes a per-entry ``fcntl.flock`` lock and reads again
  before building, so concurrent requests for the same missing entry (threads or processes)
  build it once and the others wait and read it. The kernel releases the lock when its
  holder dies, so a killed builder never blocks the next one.
* **Visible waits.** The builder keeps a small progress file beside the lock (work done and
  total, its message, when it started, its pid and host), rewritten atomically at each step
  and removed when it is done. A caller that finds the lock taken polls that file and
  reports the other builder's progress instead of blocking in silence; the file of a builder
  that died (its pid gone on this host, or no update for :data:`STALE_PROGRESS_SECONDS`)
  is ignored.

* **Bounded size; the class's pools go last.** After each write, entries are deleted until
  the entries together fit in :func:`max_bytes` (``$SDWEC_CACHE_MAX_BYTES``; default
  :data:`DEFAULT_MAX_BYTES`, 2 GiB: the shipped datasets' pools of two pool sizes and a few
  splits, or about 17 NSL-KDD pools of 200 trees at ~110 MB each): first the entries of
  users' uploads, least recently used first, and the others (the shipped datasets' pools
  every session shares) only as far as they alone exceed the cap, least recently used
  first too (see :func:`evict` for why an order and not a budget per class). An entry's
  class is read from its file name, so eviction opens no entry: an upload's label has the
  word :data:`UPLOAD_WORD` among its dash-separated words (:func:`is_upload_entry`). An
  entry's recency is its modification time, set when it is written and again on every
  :func:`load` that reads it. An entry whose lock is held (being built or rebuilt) and the
  entry just written are never deleted; temporary files of writers still writing are not
  entries.
* **Lock files are cleaned.** A lock file is deleted with its entry when the entry is
  evicted, when its holder leaves it without an entry (a build that failed), and when
  nobody holds it and no entry exists for it (:func:`remove_stale_locks`, after each write
  and at a process's first use of the folder: a killed builder's). A lock file is only ever
  deleted by a process holding its lock, and whoever acquires a lock checks that its open
  file is still the one the lock's name points to, and starts again if not: a waiter that
  opened a lock file before it was deleted cannot hold it alongside whoever locks the new
  file under that name, so an entry is still built once.

Why a small module and not a library:

* ``joblib.Memory`` (already a dependency) writes atomically but has no lock, so two
  processes that miss together both compute: minutes each for an NSL-KDD pool on two cores,
  which is the case this cache exists for. Its maintainers chose renames over locks
  (joblib pull request #491). It does not checksum its pickles either.
* ``diskcache`` has a process-safe ``Lock``, but it is a key in its SQLite database that a
  killed holder leaves set until an expiry we would have to guess; it would also be a new
  dependency replacing about 150 lines.
* ``pickle`` rather than ``joblib.dump``: the payload is hashed as bytes before it is
  written, and joblib's gains (memory-mapped or compressed arrays in files) do not apply.

Pickles run code when loaded: an entry is unpickled only once its tag proves it was written
with the secret; keep that file readable by you alone, and the cache folder writable by you
alone too (others could still delete entries, which costs only their rebuilding).
The lock uses ``fcntl``, so this module needs a POSIX system.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import logging
import os
import pickle
import re
import secrets
import socket
import struct
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["CACHE_ENV", "cache_dir", "entry_path", "contains", "load", "store", "locked",
           "get_or_build", "BuildProgress", "progress_path", "write_progress", "read_progress",
           "STALE_PROGRESS_SECONDS", "MAX_BYTES_ENV", "DEFAULT_MAX_BYTES", "max_bytes",
           "evict", "remove_dead_temp_files", "STALE_TEMP_SECONDS", "KEY_FILE_ENV",
           "key_file", "CacheKeyError", "UPLOAD_WORD", "is_upload_entry",
           "remove_stale_locks"]

LOG = logging.getLogger(__name__)

CACHE_ENV = "SDWEC_CACHE_DIR"
"""Environment variable naming the cache folder."""
KEY_FILE_ENV = "SDWEC_CACHE_KEY_FILE"
"""Environment variable naming the file that holds the secret the entries are signed with."""

_MAGIC = b"SDWEC-CACHE\x03\n"
_OLD_MAGIC = b"SDWEC-CACHE"  # any format's start: an entry of an older one has no tag
_HEADER = struct.Struct(">Q32sQ")  # key length, SHA-256 of the payload, payload length
_TAG_SIZE = 32  # HMAC-SHA256 of the magic, the header and the key, after the header
_MIN_SECRET_BYTES = 32
_SUFFIX = ".pkl"
_TEMP_PREFIX = ".tmp-"
#: A temporary file this old belongs to a writer that died, whatever its host (an entry is
#: written in seconds: the value is pickled before its temporary file is opened).
STALE_TEMP_SECONDS = 600.0
_PROGRESS_SUFFIX = ".progress"
_PROGRESS_TEMP_PREFIX = ".progress-tmp-"
#: A progress file not rewritten for this long is a dead builder's (when its pid cannot be
#: checked: another host on a shared disk). A pool reports at least every 20 trees, which
#: takes well under a minute even for NSL-KDD on a busy machine.
STALE_PROGRESS_SECONDS = 600.0
#: How often a caller waiting for another builder reads its progress file.
POLL_SECONDS = 0.5


MAX_BYTES_ENV = "SDWEC_CACHE_MAX_BYTES"
"""Environment variable capping the entries' total size: bytes, or with a unit (``500M``,
``2G``, ``2GiB``: powers of 1024), or ``none`` for no cap."""
DEFAULT_MAX_BYTES = 2 * 1024 ** 3
"""The cap when :data:`MAX_BYTES_ENV` is not set: 2 GiB."""
UPLOAD_WORD = "upload"
"""A label with this word among its dash-separated words marks an entry of a user's upload:
evicted before any other (:func:`evict`). Pool entries of uploads are labelled
``pool-upload-<fingerprint>-...`` (:class:`sdwec.pool.PoolKey`), as they were before the
word had this meaning, so older upload entries are told apart too."""
_UNITS = {"": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3, "T": 1024 ** 4}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*([KMGT]?)(?:I?B)?\s*$")


def cache_dir() -> Path:
    """Folder of the cache: ``$SDWEC_CACHE_DIR`` if set, else ``~/.cache/sdwec``."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "sdwec"


def max_bytes() -> int | None:
    """The cap on the entries' total size in bytes (``None``: no cap).

    Read from ``$SDWEC_CACHE_MAX_BYTES`` at every call; :data:`DEFAULT_MAX_BYTES` (2 GiB)
    when it is not set. A value that cannot be read warns and gives the default, so a typo
    never stops a pool from being trained.
    """
    text = os.environ.get(MAX_BYTES_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_BYTES
    if text.lower() in ("none", "off", "unlimited"):
        return None
    match = _SIZE.match(text.upper())
    if match is None:
        warnings.warn(f"{MAX_BYTES_ENV}={text!r} is not a size (e.g. 2000000000, 500M, 2G or "
                      f"none); using {DEFAULT_MAX_BYTES} bytes", RuntimeWarning, stacklevel=2)
        return DEFAULT_MAX_BYTES
    return int(float(match.group(1)) * _UNITS[match.group(2)])


class CacheKeyError(RuntimeError):
    """The cache's secret (:func:`key_file`) cannot be read, created or trusted."""


def key_file() -> Path:
    """File holding the secret that signs the entries: ``$SDWEC_CACHE_KEY_FILE`` if set, else
    ``$XDG_CONFIG_HOME/sdwec/cache.key`` (``~/.config/sdwec/cache.key``).

    It must not be inside the cache folder: whoever can write there could replace it.
    """
    env = os.environ.get(KEY_FILE_ENV)
    if env:
        return Path(env).expanduser()
    config = os.environ.get("XDG_CONFIG_HOME")
    return (Path(config).expanduser() if config else Path.home() / ".config") / "sdwec" / \
        "cache.key"


_SECRETS: dict[str, tuple[tuple, bytes]] = {}  # key file -> (its stat signature, the secret)
_WARNED: set[str] = set()


def _create_secret(path: Path) -> None:
    """Write a new random secret to ``path`` (mode 0600), unless another process wins."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".cache.key-")  # mode 0600
    except OSError as exc:
        raise CacheKeyError(
            f"cannot create the pool cache's key {path} ({exc.strerror or exc}); set "
            f"{KEY_FILE_ENV} to a file you can write, outside the cache folder") from None
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(_MIN_SECRET_BYTES) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        # A hard link creates the name only if it is free, with the whole file behind it:
        # two processes starting together end up with the same secret.
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    except OSError as exc:
        raise CacheKeyError(f"cannot create the pool cache's key {path} "
                            f"({exc.strerror or exc}); set {KEY_FILE_ENV} to a file you "
                            f"can write, outside the cache folder") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    LOG.warning("created the pool cache's key %s: processes sharing the cache folder %s "
                "must use the same key (%s)", path, cache_dir(), KEY_FILE_ENV)


def _secret() -> bytes:
    """The secret of :func:`key_file`, created at first use; re-read when the file changes."""
    path = key_file()
    inside = False
    with contextlib.suppress(OSError, RuntimeError):  # a path that cannot be resolved
        inside = path.resolve().is_relative_to(cache_dir().resolve())
    if inside:
        raise CacheKeyError(
            f"the pool cache's key {path} is inside the cache folder {cache_dir()}: whoever "
            f"can write the folder could replace it. Set {KEY_FILE_ENV} to a file outside it")
    try:
        stat = path.stat()
    except FileNotFoundError:
        _create_secret(path)
        stat = None
    except OSError as exc:
        raise CacheKeyError(f"cannot read the pool cache's key {path} "
                            f"({exc.strerror or exc})") from None
    try:
        if stat is None:
            stat = path.stat()
        signature = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
        known = _SECRETS.get(str(path))
        if known is not None and known[0] == signature:
            return known[1]
        secret = path.read_bytes().strip()
    except OSError as exc:
        raise CacheKeyError(f"cannot read the pool cache's key {path} "
                            f"({exc.strerror or exc})") from None
    if len(secret) < _MIN_SECRET_BYTES:
        raise CacheKeyError(
            f"the pool cache's key {path} holds {len(secret)} bytes; it needs at least "
            f"{_MIN_SECRET_BYTES} (e.g. the 64 hex digits of `openssl rand -hex 32`)")
    if stat.st_mode & 0o077 and str(path) not in _WARNED:
        _WARNED.add(str(path))
        LOG.warning("the pool cache's key %s can be read or written by other users "
                    "(mode %o): they could forge cache entries. chmod 600 it",
                    path, stat.st_mode & 0o777)
    _SECRETS[str(path)] = (signature, secret)
    return secret


def _tag(fields: bytes, key_bytes: bytes) -> bytes:
    """The HMAC-SHA256 of an entry: over the magic, the header's fields and the key.

    The fields hold the payload's SHA-256 and length, so the tag vouches for the payload
    too, without a second pass over it.
    """
    return hmac.new(_secret(), _MAGIC + fields + key_bytes, hashlib.sha256).digest()


def _key_bytes(key: Mapping) -> bytes:
    # Canonical JSON: the same mapping always gives the same bytes. ``repr`` covers values
    # JSON lacks (they must have a deterministic repr to be useful in a key).
    if not isinstance(key, Mapping):
        raise TypeError(f"a cache key must be a mapping, not {type(key).__name__}")
    return json.dumps(key, sort_keys=True, separators=(",", ":"), default=repr).encode()


def entry_path(key: Mapping, label: str = "entry") -> Path:
    """Path of the entry for ``key`` (which may not exist yet).

    Parameters
    ----------
    key : mapping
        Everything that determines the value (JSON-able; other values by their ``repr``).
    label : str, default="entry"
        Readable start of the file name (letters, digits, ``-``, ``_`` and ``.``); only the
        key decides which entry is meant.

    Returns
    -------
    pathlib.Path
        ``cache_dir() / "<label>-<first 16 hex digits of the key's SHA-256>.pkl"``.
    """
    digest = hashlib.sha256(_key_bytes(key)).hexdigest()
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in str(label))
    return cache_dir() / f"{safe}-{digest[:16]}{_SUFFIX}"


_ENTRY_NAME = re.compile(r"^(?P<label>.*)-[0-9a-f]{16}$")


def is_upload_entry(path) -> bool:
    """Whether the entry at ``path`` holds a user's upload's data, from its file name alone.

    Its label (the file name before the key's 16 hex digits) has :data:`UPLOAD_WORD` among
    its dash-separated words. No shipped dataset's name is that word.

    Parameters
    ----------
    path : str or pathlib.Path

    Returns
    -------
    bool
    """
    stem = Path(path).name.removesuffix(_SUFFIX)
    match = _ENTRY_NAME.match(stem)
    label = match.group("label") if match else stem
    return UPLOAD_WORD in label.split("-")


_PREAMBLE = len(_MAGIC) + _HEADER.size + _TAG_SIZE  # bytes before the key


def _read_header(fh, key_bytes: bytes):
    """``(digest, payload length, authentic)`` if the open entry starts right for this key,
    else None; ``authentic``: its tag was made with this cache's secret."""
    head = fh.read(_PREAMBLE)
    if len(head) != _PREAMBLE or not head.startswith(_MAGIC):
        return None
    fields = head[len(_MAGIC):len(_MAGIC) + _HEADER.size]
    key_length, digest, payload_length = _HEADER.unpack(fields)
    if key_length != len(key_bytes) or fh.read(key_length) != key_bytes:
        return None
    authentic = hmac.compare_digest(head[-_TAG_SIZE:], _tag(fields, key_bytes))
    return digest, payload_length, authentic


def contains(key: Mapping, label: str = "entry") -> bool:
    """Whether an entry for ``key`` is on disk, judged from its header alone.

    Cheap enough to ask for many entries (it reads the header and the key, not the
    payload): the magic, the stored key, the tag and the file's length must be right. A
    payload damaged inside (a flipped byte) still counts; :func:`load` finds it and misses.

    Parameters
    ----------
    key : mapping
    label : str, default="entry"
        As given to :func:`entry_path`.

    Returns
    -------
    bool
    """
    key_bytes = _key_bytes(key)
    path = entry_path(key, label)
    _first_use(path.parent)
    try:
        with open(path, "rb") as fh:
            header = _read_header(fh, key_bytes)
            size = os.fstat(fh.fileno()).st_size
    except OSError:
        return False
    if header is None or not header[2]:
        return False
    return size == _PREAMBLE + len(key_bytes) + header[1]


# Entries already said to be refused: a load looks once before its lock and once under it.
_said_refused = set()


def _refused(path, why):
    """Log once per process and entry file that ``path`` is refused, and why."""
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        stamp = None
    if (path, stamp) not in _said_refused:
        _said_refused.add((path, stamp))
        LOG.warning("cache entry %s %s: ignored, it will be rebuilt", path, why)


def load(key: Mapping, label: str = "entry"):
    """The value stored for ``key``, or ``None`` if there is no entry or it fails a check.

    A successful read sets the entry's modification time to now: its recency, which decides
    what :func:`evict` deletes first.

    Parameters
    ----------
    key : mapping
    label : str, default="entry"

    Returns
    -------
    object or None
    """
    key_bytes = _key_bytes(key)
    path = entry_path(key, label)
    _first_use(path.parent)
    try:
        with open(path, "rb") as fh:
            header = _read_header(fh, key_bytes)
            if header is None:
                fh.seek(0)
                start = fh.read(len(_MAGIC))
                if start.startswith(_OLD_MAGIC) and start != _MAGIC:
                    _refused(path, "is unsigned, as an older sdwec wrote them (or not "
                             "written by sdwec)")
                return None
            digest, length, authentic = header
            if not authentic:  # before a byte of the payload is read, let alone unpickled
                _refused(path, f"is not signed with this cache's key {key_file()} (written "
                         f"with another key, or not by sdwec)")
                return None
            payload = fh.read(length + 1)  # one byte more reveals trailing data
    except OSError:
        return None
    if len(payload) != length or hashlib.sha256(payload).digest() != digest:
        return None
    try:
        value = pickle.loads(payload)
    except Exception:  # checksummed, yet unreadable (e.g. a class that moved): rebuild
        return None
    with contextlib.suppress(OSError):  # recency for evict(); a read-only cache still reads
        os.utime(path)
    return value


def _host_tag() -> str:
    """Eight hex digits naming where this process's pids mean something: the host name and,
    on Linux, the pid namespace (two containers sharing a folder and a host name do not see
    each other's pids, so each takes the other's files for another host's)."""
    try:
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        namespace = 0
    return hashlib.sha256(f"{socket.gethostname()}:{namespace}".encode()).hexdigest()[:8]


def _temp_prefix(kind: str) -> str:
    """Start of a temporary file's name: ``kind``, then the writer's pid and host."""
    return f"{kind}{os.getpid()}-{_host_tag()}-"


_TEMP_WRITER = re.compile(r"^(?:\.tmp-|\.progress-tmp-)(\d+)-([0-9a-f]{8})-")


def _writer_is_dead(name: str, age: float) -> bool:
    """Whether the writer of the temporary file ``name`` (``age`` seconds old) has died."""
    if age > STALE_TEMP_SECONDS:
        return True
    match = _TEMP_WRITER.match(name)
    # Another host's pid cannot be checked, nor an old-style name: the age decides those.
    return (match is not None and match.group(2) == _host_tag()
            and not _alive(int(match.group(1))))


def remove_dead_temp_files(folder: Path | None = None) -> list[Path]:
    """Delete the temporary files of writers that died (see the module docstring).

    Parameters
    ----------
    folder : pathlib.Path, optional
        Default :func:`cache_dir`.

    Returns
    -------
    list of pathlib.Path
        The files deleted.
    """
    folder = cache_dir() if folder is None else Path(folder)
    now = time.time()
    removed = []
    temps = [*folder.glob(f"{_TEMP_PREFIX}*{_SUFFIX}"),
             *folder.glob(f"{_PROGRESS_TEMP_PREFIX}*{_PROGRESS_SUFFIX}")]
    for tmp in temps:
        with contextlib.suppress(OSError):  # another process may remove it first
            if _writer_is_dead(tmp.name, now - tmp.stat().st_mtime):
                tmp.unlink()
                removed.append(tmp)
    return removed


_TIDIED: set[str] = set()  # folders this process has swept since it started


def _first_use(folder: Path) -> None:
    """Sweep dead writers' temporary files and stale lock files the first time this process
    uses ``folder``."""
    name = str(folder)
    if name not in _TIDIED:
        _TIDIED.add(name)
        remove_dead_temp_files(folder)
        remove_stale_locks(folder)


def _lock_path(path: Path) -> Path:
    return path.with_suffix(".lock")


def _is_current(fh, lock: Path) -> bool:
    """Whether the open lock file ``fh`` is still the file named ``lock``: not deleted (and
    perhaps created again) by another process since it was opened."""
    opened = os.fstat(fh.fileno())
    try:
        named = os.stat(lock)
    except FileNotFoundError:
        return False
    return opened.st_nlink > 0 and (opened.st_dev, opened.st_ino) == (named.st_dev,
                                                                       named.st_ino)


def _acquire(lock: Path, wait=None):
    """Open ``lock`` and take its lock: the open file, or ``None`` if another holder has it
    and ``wait`` is None (else ``wait()`` runs between attempts until it is free).

    The lock counts only on the file the name points to once it is held. A lock file is
    deleted only by a holder, so whoever opened it before that and acquires it after finds
    it deleted here, and starts again on the file now under that name; without this check
    it would hold a lock nobody else sees, beside the holder of the new file.
    """
    while True:
        fh = open(lock, "a+b")
        try:
            while not _try_lock(fh):
                if wait is None:
                    fh.close()
                    return None
                wait()
            if _is_current(fh, lock):
                return fh
        except BaseException:
            fh.close()
            raise
        fh.close()  # releases the lock on the deleted file


def _release(fh, lock: Path, delete: bool = False) -> bool:
    """Release a lock taken by :func:`_acquire`; with ``delete``, delete its file first,
    while still holding it (see :func:`_acquire`). Whether the file was deleted."""
    deleted = False
    try:
        if delete:
            with contextlib.suppress(OSError):  # gone already, or a folder we may not write
                os.unlink(lock)
                deleted = True
    finally:
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
        fh.close()
    return deleted


def remove_stale_locks(folder: Path | None = None) -> list[Path]:
    """Delete the lock files nobody holds whose entry does not exist (a killed builder's,
    or from before lock files were cleaned), and the progress files beside them.

    A held lock (a build under way) is left alone: each lock is tried without waiting, and
    deleted only while held (see :func:`_acquire`). Run after each write and at a
    process's first use of the folder.

    Parameters
    ----------
    folder : pathlib.Path, optional
        Default :func:`cache_dir`.

    Returns
    -------
    list of pathlib.Path
        The lock files deleted.
    """
    folder = cache_dir() if folder is None else Path(folder)
    removed = []
    for lock in folder.glob("*.lock"):
        entry = lock.with_suffix(_SUFFIX)
        if entry.exists():
            continue
        try:
            fh = _acquire(lock)
        except OSError:  # gone meanwhile with its folder, or not ours to open
            continue
        if fh is None:
            continue
        # Asked again under the lock: a build may have stored its entry meanwhile.
        stale = not entry.exists()
        if stale:
            with contextlib.suppress(OSError):  # a builder removes it under the lock: dead
                lock.with_suffix(_PROGRESS_SUFFIX).unlink()
        if _release(fh, lock, delete=stale):
            removed.append(lock)
    return removed


def evict(limit: int | None = None, keep=()) -> list[Path]:
    """Delete entries until they fit in ``limit`` bytes: users' uploads first.

    The entries of uploads (:func:`is_upload_entry`) go first, least recently used first;
    the others (the shipped datasets' pools) only as far as they alone exceed ``limit``,
    least recently used first. Recency is an entry's modification time (set on write and
    on every :func:`load`). An entry whose lock another caller holds (being built) is
    skipped, and so are ``keep``; so are temporary files, which are not entries. An entry
    goes with its lock file and any progress file. Run by :func:`store` after each write.

    Parameters
    ----------
    limit : int, optional
        Default :func:`max_bytes` (``None`` there: no cap, nothing deleted).
    keep : iterable of pathlib.Path
        Entries never deleted (the one just written).

    Returns
    -------
    list of pathlib.Path
        The entries deleted, in the order deleted.
    """
    # An order, not a share of the cap for uploads: the shipped datasets' pools are what
    # every session of a class opens (NSL-KDD's takes minutes to train again), an upload's
    # serves one student. With an order no number of uploads pushes one of them out, uploads
    # still get all the room those pools leave, and there is no share to tune (a share big
    # enough for a few 280 MB uploads would leave too little for the pools in a 2 GiB cap,
    # or go unused). The price: when the shipped pools alone fill the cap, the upload just
    # written stays over it (it is kept) until the next write evicts it.
    limit = max_bytes() if limit is None else limit
    if limit is None:
        return []
    keep = {Path(p) for p in keep}
    entries = []
    for path in cache_dir().glob(f"*{_SUFFIX}"):
        if path.name.startswith("."):  # a temporary file
            continue
        with contextlib.suppress(OSError):
            stat = path.stat()
            entries.append((not is_upload_entry(path), stat.st_mtime_ns, path.name, path,
                            stat.st_size))
    total = sum(entry[-1] for entry in entries)
    shared = sum(entry[-1] for entry in entries if entry[0])
    removed = []
    for is_shared, _, _, path, size in sorted(entries):  # uploads first, then by recency
        if total <= limit or (is_shared and shared <= limit):
            break
        if path not in keep and _delete_entry(path):
            total -= size
            shared -= size if is_shared else 0
            removed.append(path)
    return removed


def _delete_entry(path: Path) -> bool:
    """Delete the entry ``path`` with its lock file and any progress file, if nobody holds
    its lock (taken while deleting, so no builder starts on it meanwhile); whether the entry
    was deleted."""
    lock = _lock_path(path)
    try:
        fh = _acquire(lock)
    except OSError:  # not ours to delete
        return False
    if fh is None:
        return False
    deleted = False
    try:
        path.unlink()
        deleted = True
        with contextlib.suppress(OSError):  # held lock: no live builder wrote it
            path.with_suffix(_PROGRESS_SUFFIX).unlink()
    except OSError:  # gone already, or not ours to delete
        pass
    finally:
        _release(fh, lock, delete=not path.exists())
    return deleted


def store(key: Mapping, value, label: str = "entry") -> Path:
    """Write ``value`` as the entry for ``key``, atomically; returns the entry's path.

    Temporary files of dead writers are removed first, and least recently used entries
    after it, down to :func:`max_bytes` (:func:`evict`; never this entry).

    Parameters
    ----------
    key : mapping
    value : object
        Anything picklable.
    label : str, default="entry"

    Returns
    -------
    pathlib.Path
    """
    key_bytes = _key_bytes(key)
    path = entry_path(key, label)
    path.parent.mkdir(parents=True, exist_ok=True)
    _TIDIED.add(str(path.parent))
    remove_dead_temp_files(path.parent)
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    fields = _HEADER.pack(len(key_bytes), hashlib.sha256(payload).digest(), len(payload))
    header = _MAGIC + fields + _tag(fields, key_bytes)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=_temp_prefix(_TEMP_PREFIX),
                               suffix=_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(header)
            fh.write(key_bytes)
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)  # atomic: readers see the old state or the whole new file
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    evict(keep=(path,))
    remove_stale_locks(path.parent)
    return path


@dataclass(frozen=True)
class BuildProgress:
    """What a builder last reported about the entry it is building (its progress file).

    Attributes
    ----------
    done, total : float
        Work done and the whole work, in the builder's units (``done / total`` is the
        fraction done).
    message : str
        The builder's last message (e.g. ``"trained 40 of 200 trees"``).
    started : float
        When the builder took the lock (``time.time()`` seconds).
    updated : float
        When the builder wrote this record.
    pid : int
    host : str
        The builder's process id and host name.
    """

    done: float
    total: float
    message: str
    started: float
    updated: float
    pid: int
    host: str

    @property
    def fraction(self) -> float:
        """``done / total`` clipped to [0, 1] (0 when the total is not known yet)."""
        return min(max(self.done / self.total, 0.0), 1.0) if self.total > 0 else 0.0


def progress_path(key: Mapping, label: str = "entry") -> Path:
    """Path of the progress file of the entry for ``key`` (beside its lock)."""
    return entry_path(key, label).with_suffix(_PROGRESS_SUFFIX)


def write_progress(key: Mapping, label: str, done: float, total: float, message: str,
                   started: float) -> None:
    """Record a builder's progress on the entry for ``key``, atomically.

    The record is written to a temporary file and renamed into place, so a reader sees the
    previous record or the new one, never a part. Not flushed to disk: a record is worth
    nothing after a crash, and a build reports many.

    Parameters
    ----------
    key : mapping
    label : str
    done, total : float
    message : str
    started : float
        When the build started (``time.time()``).
    """
    path = progress_path(key, label)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = BuildProgress(float(done), float(total), str(message), float(started),
                           time.time(), os.getpid(), socket.gethostname())
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=_temp_prefix(_PROGRESS_TEMP_PREFIX),
                               suffix=_PROGRESS_SUFFIX)
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(asdict(record), fh)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    return True


def read_progress(key: Mapping, label: str = "entry") -> BuildProgress | None:
    """The progress a live builder last recorded for ``key``'s entry, or ``None``.

    ``None`` when there is no record, when it cannot be read, when it belongs to a process
    of this host that no longer exists, or when it was not rewritten for
    :data:`STALE_PROGRESS_SECONDS` (a builder on another host that died).

    Parameters
    ----------
    key : mapping
    label : str, default="entry"

    Returns
    -------
    BuildProgress or None
    """
    try:
        with open(progress_path(key, label)) as fh:
            record = BuildProgress(**json.load(fh))
    except (OSError, ValueError, TypeError):
        return None
    if record.host == socket.gethostname() and not _alive(record.pid):
        return None
    if time.time() - record.updated > STALE_PROGRESS_SECONDS:
        return None
    return record


def _try_lock(fh) -> bool:
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@contextlib.contextmanager
def locked(key: Mapping, label: str = "entry", waiting=None):
    """Hold the entry's exclusive lock (waits until it is free).

    ``flock`` locks belong to the open file description, so two opens exclude each other
    across threads of one process as well as across processes.

    Parameters
    ----------
    key : mapping
    label : str, default="entry"
    waiting : callable, optional
        ``waiting(record)`` every :data:`POLL_SECONDS` while another holder has the lock,
        with that holder's :func:`read_progress` record (``None`` if it has none).
    """
    path = entry_path(key, label)
    path.parent.mkdir(parents=True, exist_ok=True)
    _first_use(path.parent)
    lock = _lock_path(path)

    def wait():
        if waiting is not None:
            waiting(read_progress(key, label))
        time.sleep(POLL_SECONDS)

    fh = _acquire(lock, wait)
    try:
        yield
    finally:
        # Left without an entry (a build that failed, or nothing to build): nobody needs
        # the lock file any more.
        _release(fh, lock, delete=not path.exists())


def get_or_build(key: Mapping, build: Callable, label: str = "entry", *, progress=None,
                 waiting=None):
    """The cached value for ``key``, or ``build(report)`` stored under it, built once.

    Parameters
    ----------
    key : mapping
    build : callable
        ``build(report)`` returns the value (not ``None``, which means a miss); it runs only
        on a miss, under the entry's lock, so concurrent callers with the same key run it
        once. It calls ``report(done, total, message)`` as it goes: each call rewrites the
        entry's progress file (:func:`write_progress`) and is passed on to ``progress``.
    label : str, default="entry"
    progress : callable, optional
        ``progress(done, total, message)``: this call's own build progress.
    waiting : callable, optional
        ``waiting(record)`` while another thread or process holds the lock: called every
        :data:`POLL_SECONDS` with the other builder's :class:`BuildProgress`, or ``None``
        when it has recorded none (yet, or it died).

    Returns
    -------
    value : object
    built : bool
        True if this call ran ``build``.
    """
    value = load(key, label)
    if value is not None:
        return value, False
    with locked(key, label, waiting=waiting):
        value = load(key, label)  # another thread or process may have built it meanwhile
        if value is not None:
            return value, False
        _secret()  # a key that cannot be used says so now, not after minutes of building
        started = time.time()

        def report(done, total, message):
            write_progress(key, label, done, total, message, started)
            if progress is not None:
                progress(done, total, message)

        write_progress(key, label, 0, 0, "starting", started)
        try:
            value = build(report)
            if value is None:
                raise TypeError("build() returned None, which the cache cannot tell from a "
                                "miss")
            store(key, value, label)
        finally:
            with contextlib.suppress(FileNotFoundError):
                progress_path(key, label).unlink()
        return value, True
