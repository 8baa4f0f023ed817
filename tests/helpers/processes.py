"""Waiting for processes to end: on the exit event itself (a pidfd), never on a fixed sleep."""

from __future__ import annotations

import contextlib
import os
import select
import time
from pathlib import Path

from harness.tools.mcp._proc import TOKEN_VARIABLE


def still_running(pids: list[int], within: float = 30.0) -> list[int]:
    """The ``pids`` still running after waiting up to ``within`` seconds for each to exit
    (an exited, unreaped process counts as gone). Each wait is woken by the process's exit,
    so a fast machine does not wait at all and a loaded one waits as long as it needs."""
    deadline = time.monotonic() + within
    left = []
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                left.append(pid)
        finally:
            os.close(fd)
    return left


def mcp_processes() -> list[int]:
    """Processes started by an MCPManager (they carry its token variable), anywhere on the machine."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            if f"{TOKEN_VARIABLE}=".encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
    return found
