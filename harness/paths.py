"""Where the harness keeps what it can rebuild: ``$HARNESS_CACHE``, else
``$XDG_CACHE_HOME/toolcall-harness``, else ``~/.cache/toolcall-harness``."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    base = os.environ.get("HARNESS_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "toolcall-harness"
    )
    return Path(base)
