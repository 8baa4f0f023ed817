"""Where the harness keeps what it can rebuild: ``$HARNESS_CACHE``, else
``$XDG_CACHE_HOME/toolcall-harness``, else ``~/.cache/toolcall-harness``."""

from __future__ import annotations

import functools
import os
from pathlib import Path


def cache_root() -> Path:
    env = os.environ
    return _root(env.get("HARNESS_CACHE"), env.get("XDG_CACHE_HOME"), env.get("HOME"))


@functools.lru_cache(maxsize=8)
def _root(harness: str | None, xdg: str | None, home: str | None) -> Path:
    """The folder for these variables (asked once per replayed run: kept, not rebuilt)."""
    if harness:
        return Path(harness)
    return Path(xdg or Path(home or Path.home()) / ".cache") / "toolcall-harness"
