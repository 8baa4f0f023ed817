"""The bundled fixture MCP server ("codeindex"): a tiny, deterministic code index.

Scenarios and tests need an MCP server that behaves the same everywhere, needs no
network and fails on demand; :func:`fixture_command` says how to start it. This
module imports neither ``mcp`` nor the server, so naming it costs nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.tools.mcp.types import MCPServerSpec

SERVER_NAME = "codeindex"
"""The name runs use for this server in their MCP configuration."""

MODULE = "harness.servers.mcp_fixture.server"


def fixture_command() -> tuple[str, list[str], dict[str, str]]:
    """(command, args, env) that start the fixture server with this interpreter.

    ``PYTHONPATH`` points at the directory holding the ``harness`` package because
    the MCP SDK gives stdio servers only a minimal environment (HOME, PATH, ...),
    so an uninstalled checkout would otherwise not be importable.
    """
    root = str(
        Path(__file__).resolve().parents[3]
    )  # harness/servers/mcp_fixture/ -> the folder holding harness
    return sys.executable, ["-m", MODULE], {"PYTHONPATH": root}


def fixture_spec(timeout_s: float = 10.0, name: str = SERVER_NAME) -> MCPServerSpec:
    """The fixture server as an :class:`MCPServerSpec` named ``codeindex``."""
    from harness.tools.mcp.types import MCPServerSpec

    command, args, env = fixture_command()
    return MCPServerSpec(name, command, args, env, timeout_s=timeout_s)
