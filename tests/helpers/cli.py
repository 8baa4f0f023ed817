"""Run the real ``harness`` command in a subprocess."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO

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


def deviant_beside(
    root: Path, bundled: Sequence[str], deviant: str, config: str, scenarios: Sequence[str]
) -> Path:
    """The reports folder of ``scenarios`` replayed on the ``bundled`` targets (their cassettes
    copied into ``root``) beside ``deviant``, a target ``config`` declares, recorded first."""
    for target in bundled:
        shutil.copytree(REPO / "cassettes" / target, root / "cassettes" / target)
    (root / "harness.toml").write_text(config)
    common = ["--config", root / "harness.toml", "--cassettes", root / "cassettes"]
    common += [arg for scenario in scenarios for arg in ("-s", scenario)]
    recorded = harness("record", "-t", deviant, *common, "--out", root / "recorded")
    assert recorded.returncode == 0, recorded.stderr
    targets = [arg for target in (*bundled, deviant) for arg in ("-t", target)]
    replay = harness("run", *targets, *common, "--out", root / "reports")
    assert replay.returncode == 0, replay.stderr  # failed runs fail no gate without --strict
    return root / "reports"


def _default_signals() -> None:
    # a test runner started in the background ignores SIGINT (and nohup SIGHUP); the harness
    # keeps a signal it was started ignoring ignored, so give it the ordinary dispositions
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def harness_process(
    *args: str | Path, output: IO[bytes], cwd: Path = REPO, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """``python -m harness ARGS`` started, not waited for (to be signalled), its stdout and stderr
    going to ``output``, SIGINT and SIGHUP not ignored whatever this process ignores."""
    return subprocess.Popen(
        [sys.executable, "-m", "harness", *map(str, args)],
        cwd=cwd,
        stdout=output,
        stderr=subprocess.STDOUT,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        preexec_fn=_default_signals,
    )
