"""The unit tier means what it says: no socket and no subprocess (those tests live in
``tests/integration``). Any attempt fails the test that made it."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest


class NotAUnitTest(AssertionError):
    """A unit test tried to open a socket or start a process."""


@pytest.fixture(autouse=True)
def _no_sockets_or_processes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Refuse network sockets and child processes for the duration of each unit test."""

    def refuse_socket(*args: Any, **kwargs: Any) -> Any:
        raise NotAUnitTest("a unit test opened a socket: move it to tests/integration")

    def refuse_process(*args: Any, **kwargs: Any) -> Any:
        raise NotAUnitTest("a unit test started a process: move it to tests/integration")

    monkeypatch.setattr(socket.socket, "connect", refuse_socket)
    monkeypatch.setattr(socket.socket, "bind", refuse_socket)
    monkeypatch.setattr(subprocess.Popen, "__init__", refuse_process)
    yield
