"""Where the harness keeps what it can rebuild: ``$HARNESS_CACHE``, else
``$XDG_CACHE_HOME/toolcall-harness``, else ``~/.cache/toolcall-harness``."""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def cache_root() -> Path:
    env = os.environ
    return _root(env.get("HARNESS_CACHE"), env.get("XDG_CACHE_HOME"), env.get("HOME"))


@functools.lru_cache(maxsize=8)
def _root(harness: str | None, xdg: str | None, home: str | None) -> Path:
    """The folder for these variables (asked once per replayed run: kept, not rebuilt)."""
    if harness:
        return Path(harness)
    return Path(xdg or Path(home or Path.home()) / ".cache") / "toolcall-harness"


RACY_NS = 2_000_000_000
"""A file changed less than this long ago (in nanoseconds) may change again within its
filesystem's timestamp tick and keep its stat: its bytes are read and hashed (git's racy rule)."""


class Refused(ValueError):
    """A file not read at all, or not to its end: not a regular file (a FIFO, a device, a socket),
    or larger than the limit. The message says which (the caller names the file)."""


def parsed(path: str | Path, kind: str, parse: Callable[[str], Any], *, limit: int) -> Any:
    """``parse`` of the text of the file at ``path``, kept in the cache folder (``<kind>/``) as
    msgpack (bytes stay bytes): a replay parses each recording's YAML once, not on every run.

    An entry is found by the SHA-256 of the file's bytes, so the file stays the one source of
    truth, and again by the file's stat (path, device, inode, size, modification and change
    times, as git's index and CPython's ``.pyc`` files trust a file's stat): a replay then
    neither reads nor hashes the file. A file changed less than :data:`RACY_NS` ago is always
    read and hashed. ``kind`` names the parser (equal text parsed another way is another entry).

    Only a regular file of at most ``limit`` bytes is read (:class:`Refused` otherwise): a FIFO
    would block forever, ``/dev/zero`` never ends, and a file may grow, or say it is empty
    (``/proc``), so the limit is checked before reading and again while reading."""
    root = os.path.join(cache_root(), kind)
    seen = os.stat(path)
    _check(seen, limit)
    by_stat = None
    if time.time_ns() - max(seen.st_mtime_ns, seen.st_ctime_ns) >= RACY_NS:
        identity = (
            os.path.abspath(path),
            seen.st_dev,
            seen.st_ino,
            seen.st_size,
            seen.st_mtime_ns,
            seen.st_ctime_ns,
        )
        by_stat = _entry(root, "stat", repr(identity).encode("utf-8", "surrogateescape"))
        found = _read(by_stat)
        if found is not _MISSING:
            return found
    handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO put there since must not block
    try:
        opened = os.fstat(handle)
        _check(opened, limit)
        if by_stat is not None and _stat_of(opened) != _stat_of(seen):
            by_stat = None  # replaced since: this content is not what that stat saw
        raw = _bounded(handle, limit)
    finally:
        os.close(handle)
    by_bytes = _entry(root, "", raw)
    data = _read(by_bytes)
    if data is _MISSING:
        data = _write(by_bytes, parse(raw.decode("utf-8")))
    if by_stat is not None:
        _link(by_bytes, by_stat)
    return data


_MISSING = object()


def known(kind: str, key: bytes) -> bool:
    """Whether :func:`note` kept ``key`` under ``kind``: a verdict found again by what it was
    reached on (an empty file named by the SHA-256 of ``key``), not by a file's name or stat."""
    return os.path.exists(_verdict(kind, key))


def note(kind: str, key: bytes) -> None:
    """Keep ``key`` under ``kind`` for :func:`known` (a read-only cache keeps nothing)."""
    _store(_verdict(kind, key), b"")


def _verdict(kind: str, key: bytes) -> str:
    return _entry(os.path.join(cache_root(), kind), "", key, "")


def _check(seen: os.stat_result, limit: int) -> None:
    if stat.S_ISDIR(seen.st_mode):  # as open() says it: a folder is no file at all
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    if not stat.S_ISREG(seen.st_mode):
        raise Refused(f"it is a {_kind(seen.st_mode)}, not a regular file")
    if seen.st_size > limit:
        raise Refused(_too_large(limit))


def _kind(mode: int) -> str:
    kinds = {stat.S_IFIFO: "FIFO", stat.S_IFCHR: "character device", stat.S_IFBLK: "block device"}
    return {**kinds, stat.S_IFSOCK: "socket"}.get(stat.S_IFMT(mode), "special file")


def _too_large(limit: int) -> str:
    return f"it holds more than {limit:,} bytes"


def _bounded(handle: int, limit: int) -> bytes:
    """The bytes of an open file, at most ``limit``: :class:`Refused` as soon as it holds more."""
    chunks, size = [], 0
    while chunk := os.read(handle, min(1 << 20, limit + 1 - size)):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise Refused(_too_large(limit))
    return b"".join(chunks)


def _stat_of(seen: os.stat_result) -> tuple[int, ...]:
    return (seen.st_dev, seen.st_ino, seen.st_size, seen.st_mtime_ns, seen.st_ctime_ns)


def _entry(root: str, folder: str, key: bytes, suffix: str = ".msgpack") -> str:
    digest = hashlib.sha256(key).hexdigest()
    return os.path.join(root, folder, digest[:2], digest + suffix)


def _read(entry: str) -> Any:
    import msgspec

    try:
        return msgspec.msgpack.decode(_slurp(entry))
    except (OSError, msgspec.DecodeError):
        return _MISSING


def _slurp(path: str) -> bytes:
    """A file's bytes through the bare system calls (``open()``'s buffered reader costs half as
    much again as the read, on every replayed run)."""
    handle = os.open(path, os.O_RDONLY)
    try:
        chunks = []
        while chunk := os.read(handle, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(handle)
    return b"".join(chunks)


def _write(entry: str, data: Any) -> Any:
    """Keep ``data`` as the entry; returns it as every later read gives it (msgpack's types: a
    date as text, a tuple as a list), so the first run sees what the others see."""
    import msgspec

    try:
        encoded = msgspec.msgpack.encode(data)
    except (TypeError, OverflowError):  # data msgpack cannot hold (an int past 64 bits): parsed each time
        return data
    _store(entry, encoded)  # a read-only cache keeps nothing: parsed each time
    return msgspec.msgpack.decode(encoded)


def _store(entry: str, data: bytes) -> None:
    """Write ``data`` as ``entry``, whole or not at all (a read-only cache keeps nothing)."""
    try:
        os.makedirs(os.path.dirname(entry), exist_ok=True)
        partial = _partial(entry)
        with open(partial, "wb") as file:
            file.write(data)
        os.replace(partial, entry)
    except OSError:
        pass


def _partial(entry: str) -> str:
    """A name to write ``entry`` under before it replaces it: this process's and thread's own."""
    return f"{entry}.{os.getpid()}.{threading.get_ident()}.tmp"


def _link(entry: str, alias: str) -> None:
    """``alias`` names the same cache entry as ``entry`` (a hard link: no second copy)."""
    try:
        os.makedirs(os.path.dirname(alias), exist_ok=True)
        partial = _partial(alias)
        os.link(entry, partial)
        os.replace(partial, alias)
    except OSError:  # no entry (a read-only cache), or a file system without hard links
        pass
