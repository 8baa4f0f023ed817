"""Run the real ``harness`` command in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def harness(
    *args: str | Path, cwd: Path = REPO, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m harness ARGS`` in a subprocess; ``env`` adds variables to this one's (output
    200 columns wide, as in a log with no ``COLUMNS``, unless ``env`` says otherwise)."""
    return subprocess.run(
        [sys.executable, "-m", "harness", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )
