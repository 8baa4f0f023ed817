"""Hosted MCP, shared by the adapters whose provider runs MCP servers itself (private to
:mod:`harness.providers`).

OpenAI's Responses API takes an ``mcp`` tool per server and reports ``mcp_list_tools``,
``mcp_approval_request`` and ``mcp_call`` output items [RS21]; Anthropic's Messages API takes
``mcp_servers`` with one ``mcp_toolset`` tool per server (beta ``mcp-client-2025-11-20``) and
reports ``mcp_tool_use`` and ``mcp_tool_result`` content blocks [A19]. Either way the provider
lists and calls the tools, and the turn carries what it did as :class:`~harness.model.HostedCall`
values, apart from the calls the client runs.
"""

from __future__ import annotations

from typing import Any

from harness.model import HostedCall, HostedServer
from harness.providers._calls import Notes, parse_arguments

MCP_BETA = "mcp-client-2025-11-20"
"""The ``anthropic-beta`` value of the MCP connector's current version [A19]."""


def text_of(content: Any) -> str | None:
    """A hosted result's content as text: a string as it is, a list of text blocks joined."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text") or "") for b in content if isinstance(b, dict))
    return None


def hosted_call(
    notes: Notes,
    where: str,
    kind: Any,
    server: Any,
    name: Any,
    raw_arguments: Any,
    *,
    wire_type: str,
    call_id: Any = None,
) -> HostedCall:
    """A hosted call or approval request from its wire parts, each wrong part noted."""
    label = notes.string(f"{where}server", server)
    if not label:
        notes.note_each("hosted_call_without_server", where, "hosted MCP calls that name no server")
    tool = notes.string(f"{where}name", name)
    if not tool:
        notes.note_each("hosted_call_without_name", where, "hosted MCP calls that name no tool")
    arguments, _, findings = parse_arguments(
        raw_arguments, wire_type=wire_type, label=f"hosted call {tool or '?'}: the arguments"
    )
    for finding in findings:
        notes.note(finding)
    return HostedCall(
        kind, label or "", tool or "", arguments, raw_arguments, notes.string(f"{where}id", call_id)
    )


def listing(notes: Notes, where: str, server: Any, tools: Any, error: Any) -> HostedCall:
    """A hosted tool listing: the names of the tools the provider found, or its error."""
    label = notes.string(f"{where}server_label", server) or ""
    names = [
        str(t.get("name")) for _, t in notes.objects(f"{where}tools", tools) if isinstance(t.get("name"), str)
    ]
    failed = error if isinstance(error, str) else (None if error is None else str(error))
    return HostedCall("list_tools", label, tools=names, error=failed)


def server_declarations(servers: tuple[HostedServer, ...]) -> list[dict[str, Any]]:
    """The Responses API's ``mcp`` tools for ``servers`` [RS21]."""
    tools = []
    for server in servers:
        tool: dict[str, Any] = {"type": "mcp", "server_label": server.name, "server_url": server.url}
        if server.allowed_tools is not None:
            tool["allowed_tools"] = list(server.allowed_tools)
        tool["require_approval"] = server.require_approval
        if server.headers:
            tool["headers"] = dict(server.headers)
        tools.append(tool)
    return tools


def connector_declarations(
    servers: tuple[HostedServer, ...],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Anthropic's ``mcp_servers`` and their ``mcp_toolset`` tools for ``servers`` [A19]: an
    allowlist turns every tool off by default and the allowed ones on. An ``Authorization:
    Bearer`` header becomes the ``authorization_token`` (the connector takes no other header)."""
    definitions, toolsets = [], []
    for server in servers:
        definition: dict[str, Any] = {"type": "url", "url": server.url, "name": server.name}
        token = next((v for k, v in server.headers.items() if k.lower() == "authorization"), None)
        if token:
            definition["authorization_token"] = token.removeprefix("Bearer ").strip()
        definitions.append(definition)
        toolset: dict[str, Any] = {"type": "mcp_toolset", "mcp_server_name": server.name}
        if server.allowed_tools is not None:
            toolset["default_config"] = {"enabled": False}
            toolset["configs"] = {name: {"enabled": True} for name in server.allowed_tools}
        toolsets.append(toolset)
    return definitions, toolsets
