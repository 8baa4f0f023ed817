"""Waiting for processes to end: on the exit event itself (a pidfd), never on a fixed sleep;
finding a process's descendants and what it wrote to a file on its stderr, through /proc."""

from __future__ import annotations

import contextlib
import os
import select
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from harness.tools.mcp._proc import TOKEN_VARIABLE

T = TypeVar("T")


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


def children(pid: int) -> list[int]:
    """The live children of ``pid`` (of each of its threads), through /proc."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found += [int(kid) for kid in (task / "children").read_text().split()]
    return found


def descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (children, their children...). A process started in its
    own session (an MCP server, a local model server) is one too, until its parent exits."""
    found: list[int] = []
    todo = [pid]
    while todo:
        kids = children(todo.pop())
        found += kids
        todo += kids
    return found


def stderr_file(pid: int) -> bytes:
    """What ``pid`` wrote to its stderr when that is a regular file (an MCP server's, which the
    manager keeps in a temporary file); ``b""`` for a pipe or terminal (never read: it would block)."""
    path = f"/proc/{pid}/fd/2"
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return b""
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def wait_for(probe: Callable[[], T], within: float, what: str) -> T:
    """The first truthy value of ``probe()``, polled every 50 ms for up to ``within`` seconds
    (for events that announce themselves nowhere else: a process appearing, a line written)."""
    deadline = time.monotonic() + within
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {within:g}s for {what}")
        time.sleep(0.05)
