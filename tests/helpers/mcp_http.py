"""The fixture MCP server over Streamable HTTP on 127.0.0.1, for integration tests."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator

from tests.helpers.cli import REPO


@contextlib.contextmanager
def fixture_http(token: str | None = None) -> Iterator[str]:
    """``python -m harness.servers.mcp_fixture --http --port 0`` (requiring ``Bearer <token>``
    when given): yields its URL, stops it after."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("MCP_FIXTURE_TOKEN", None)
    if token is not None:
        env["MCP_FIXTURE_TOKEN"] = token
    process = subprocess.Popen(
        [sys.executable, "-m", "harness.servers.mcp_fixture", "--http", "--port", "0"],
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
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
