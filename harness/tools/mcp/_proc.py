"""Finding and ending MCP server processes through ``/proc`` (Linux).

The SDK spawns each stdio server itself and does not expose the process, so the
manager puts a unique token in the server's environment (``HARNESS_MCP_TOKEN``) and
looks for it here. Every descendant that keeps the environment (a ``uvx``/``npx``
wrapper's child, say) carries it too, so "no process with this token" means "nothing
left behind", and a reused PID can never be mistaken for the server. Where ``/proc``
is missing these functions find nothing: cleanup then relies on the SDK alone.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

TOKEN_VARIABLE = "HARNESS_MCP_TOKEN"


def token_pids(token: str) -> list[int]:
    """PIDs of the live (non-zombie) processes whose environment carries ``token``."""
    needle = f"{TOKEN_VARIABLE}={token}".encode()
    pids = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone, or another user's process
            continue
        if needle in environ.split(b"\0") and not _is_zombie(entry):
            pids.append(int(entry.name))
    return sorted(pids)


def root_pid(token: str) -> int | None:
    """The server process itself: the token carrier whose parent is this process."""
    me = os.getpid()
    for pid in token_pids(token):
        if _parent(pid) == me:
            return pid
    return None


def is_alive(pid: int, token: str) -> bool:
    """Whether ``pid`` is still the (non-zombie) process with ``token``."""
    return pid in token_pids_of([pid], token)


def token_pids_of(pids: list[int], token: str) -> list[int]:
    """The subset of ``pids`` still alive with ``token`` (cheaper than a full scan)."""
    needle = f"{TOKEN_VARIABLE}={token}".encode()
    alive = []
    for pid in pids:
        entry = Path(f"/proc/{pid}")
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0") and not _is_zombie(entry):
                alive.append(pid)
        except OSError:
            continue
    return alive


def kill_all(pids: list[int], sig: int = signal.SIGKILL) -> None:
    """Signal each PID, ignoring the ones already gone."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _stat_fields(entry: Path) -> list[str]:
    text = (entry / "stat").read_text()
    return text[text.rindex(")") + 2 :].split()  # the command name may hold spaces


def _is_zombie(entry: Path) -> bool:
    try:
        return _stat_fields(entry)[0] in ("Z", "X")
    except (OSError, ValueError, IndexError):
        return True


def _parent(pid: int) -> int | None:
    try:
        return int(_stat_fields(Path(f"/proc/{pid}"))[1])
    except (OSError, ValueError, IndexError):
        return None
