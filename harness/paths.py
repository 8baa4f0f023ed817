"""Where the harness keeps what it can rebuild: ``$HARNESS_CACHE``, else
``$XDG_CACHE_HOME/toolcall-harness``, else ``~/.cache/toolcall-harness``."""

from __future__ import annotations

import functools
import hashlib
import os
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


def parsed(path: str | Path, kind: str, parse: Callable[[str], Any]) -> Any:
    """``parse`` of the text of the file at ``path``, kept in the cache folder by the SHA-256 of
    its bytes (``<kind>/<hash>.msgpack``; bytes stay bytes): a replay parses each recording's
    YAML once, not on every run. The file stays the one source of truth: a changed file has
    another hash. ``kind`` names the parser (equal text parsed another way is another entry)."""
    import msgspec

    with open(path, "rb") as file:
        raw = file.read()
    key = hashlib.sha256(raw).hexdigest()
    cached = os.path.join(cache_root(), kind, key[:2], f"{key}.msgpack")
    try:
        with open(cached, "rb") as file:
            return msgspec.msgpack.decode(file.read())
    except (OSError, msgspec.DecodeError):
        pass
    data = parse(raw.decode("utf-8"))
    try:
        os.makedirs(os.path.dirname(cached), exist_ok=True)
        partial = f"{cached}.{os.getpid()}.tmp"
        with open(partial, "wb") as file:
            file.write(msgspec.msgpack.encode(data))
        os.replace(partial, cached)
    except (OSError, TypeError):  # a read-only cache, or data msgpack cannot hold: parse each time
        pass
    return data
