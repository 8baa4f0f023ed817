"""Hosted MCP: a scenario's MCP servers handed to the provider's own connector.

A target with ``hosted_mcp`` runs the same scenarios as one whose MCP servers run in the
harness's loop, but starts none of them: each server is declared to the provider
(:class:`~harness.model.HostedServer`: OpenAI Responses' ``mcp`` tool, Anthropic's
``mcp_servers`` + ``mcp_toolset``), which lists and calls its tools itself. The tools the
scenario offers from a server become its ``allowed_tools``.

A provider reaches a server by URL. A Streamable HTTP server declared with a ``url`` is
declared with it, and with its headers, ``{env:NAME}`` filled in. The header values, each
variable's value, the credentials after a credential header's scheme (``Bearer``) and the URL's
own credentials are registered as secrets, so they are redacted from every written byte. A stdio
server has no URL a provider could reach, so it is declared as ``stdio://<name>``, which only
the reference simulator serves (it plays the provider's connector from the scenario's toolset:
see :mod:`harness.servers.sim.hosted`).
"""

from __future__ import annotations

from typing import Any

from harness.model import Approval, HostedServer
from harness.tools.mcp.types import MCPUse, fill_env
from harness.transport.credentials import register_headers, register_url

STDIO_SCHEME = "stdio://"
"""The URL a stdio server is declared under (no provider can reach it; the simulator serves it)."""


def hosted_servers(use: MCPUse, settings: dict[str, Any]) -> tuple[HostedServer, ...]:
    """The scenario's MCP servers as the provider's connector is given them: ``settings`` is the
    target's ``hosted_mcp`` table (``require_approval``)."""
    approval: Approval = "always" if settings.get("require_approval") == "always" else "never"
    offered = dict(use.tools)
    servers = []
    for server in use.servers:
        if server.name not in offered:  # declared, none of its tools offered
            continue
        if server.url:
            register_url(server.url)  # its userinfo and credential query values
        url = server.url or f"{STDIO_SCHEME}{server.name}"
        # a replay, which sends nothing to the provider, may run without the variable: kept as written
        headers = {name: fill_env(value, lambda n: f"{{env:{n}}}") for name, value in server.headers.items()}
        register_headers(headers)
        allowed = offered.get(server.name)
        servers.append(HostedServer(server.name, url, allowed, approval, headers))
    return tuple(servers)
