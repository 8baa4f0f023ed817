"""The fixture MCP server over Streamable HTTP on 127.0.0.1, for integration tests."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

from tests.helpers.cli import REPO


@contextlib.contextmanager
def fixture_http(token: str | None = None, *flags: str) -> Iterator[str]:
    """``python -m harness.servers.mcp_fixture --http --port 0`` (requiring ``Bearer <token>``
    when given; ``flags`` added, ``--handshake-only``): yields its URL, stops it after."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("MCP_FIXTURE_TOKEN", None)
    if token is not None:
        env["MCP_FIXTURE_TOKEN"] = token
    process = subprocess.Popen(
        [sys.executable, "-m", "harness.servers.mcp_fixture", "--http", "--port", "0", *flags],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), f"the fixture printed {url!r}, not its URL"
        yield url
    finally:
        stop(process)


@contextlib.contextmanager
def serving(argv: list[str], env: dict[str, str], port: int, within: float = 60.0) -> Iterator[None]:
    """``argv`` started (a server that listens on 127.0.0.1:``port``), waited for until it accepts
    a connection (bounded by ``within`` seconds), stopped after."""
    process = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **env}
    )
    try:
        deadline = time.monotonic() + within
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(
                        f"{argv[0]} did not listen on {port} (exit {process.poll()})"
                    ) from None
                time.sleep(0.2)
        yield
    finally:
        stop(process)


def stop(process: subprocess.Popen[Any]) -> None:
    """``process`` asked to stop, killed if it has not within 10 s, and reaped."""
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def free_port() -> int:
    """A port free on 127.0.0.1 now (for a server that cannot be asked to pick one and say it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
