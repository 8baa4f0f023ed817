"""The processes the harness started, so that leaving at once still stops them.

A first Ctrl-C, SIGTERM or SIGHUP stops a run in order: every context closes and stops what it
started. A second one must exit at once, with no time for that, and must not leave an MCP
server, a local model server or a forked worker behind (they live in their own sessions, so the
terminal's signal does not reach them). So whatever starts a process registers here how to kill
it at once (:func:`track`), and :func:`exit_now` runs those kills before ``os._exit``.

A forked worker starts with an empty list (what its parent started is the parent's to stop), and
:func:`die_with_parent` has the kernel signal it when its parent dies, even by ``kill -9``.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import signal
import sys
from collections.abc import Callable
from typing import Any, NoReturn

Kill = Callable[[], None]

_kills: dict[int, Kill] = {}
_keys = itertools.count()
PR_SET_PDEATHSIG = 1


def track(kill: Kill) -> int:
    """Register ``kill`` (quick, never blocking: signals, no waiting) until :func:`untrack`."""
    key = next(_keys)
    _kills[key] = kill
    return key


def untrack(key: int) -> None:
    """Forget a kill registered by :func:`track` (what it kills was stopped in order)."""
    _kills.pop(key, None)


def kill_all() -> None:
    """Run every registered kill (newest first); one that fails does not stop the others.
    Lock-free: it runs in signal handlers, which may interrupt a thread inside :func:`track`."""
    for kill in reversed(list(_kills.values())):
        with contextlib.suppress(Exception):
            kill()


def exit_now(code: int) -> NoReturn:
    """Kill everything registered and leave the process at once (no cleanup, no atexit)."""
    kill_all()
    os._exit(code)


def kill_group(pid: int, sig: int = signal.SIGKILL) -> Kill:
    """A kill for a process started in its own session: ``sig`` to its whole process group."""

    def kill() -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)

    return kill


@functools.cache
def _prctl() -> Callable[..., Any] | None:
    if sys.platform != "linux":
        return None
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl  # type: ignore[no-any-return]
    except (OSError, AttributeError):
        return None


def preload() -> None:
    """Load what :func:`die_with_parent` needs, in a parent about to fork (each child then
    finds it loaded instead of loading it again)."""
    _prctl()


def die_with_parent(parent: int, sig: int = signal.SIGTERM) -> None:
    """In a forked child of ``parent``: have the kernel send ``sig`` to this process when the
    parent dies, however it dies (Linux ``PR_SET_PDEATHSIG``); exit at once when the parent
    is already gone. Elsewhere only the second check is made."""
    prctl = _prctl()
    if prctl is not None:
        prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


os.register_at_fork(after_in_child=_kills.clear)
