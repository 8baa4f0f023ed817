"""A scenario's MCP servers as the provider's connector is handed them (hosted MCP)."""

from __future__ import annotations

import json

import pytest

from harness import secrets
from harness.model import HostedCall, Message, ToolChoice
from harness.providers import RequestOptions
from harness.providers.openai_responses import OpenAIResponsesAdapter
from harness.tools.mcp.hosted import hosted_servers
from harness.tools.mcp.types import MCPServerDecl, MCPUse
from harness.tools.naming import raw_name

SECRET = "hdr-secret-7f3a9c1e"


def test_offered_tools_become_allowed_tools_and_stdio_servers_a_placeholder_url() -> None:
    use = MCPUse(
        "s",
        (
            MCPServerDecl("codeindex", "python"),
            MCPServerDecl("git", "python"),
            MCPServerDecl("unused", "python"),
        ),
        (("codeindex", ("find_symbol",)), ("git", None)),
    )
    code, git = hosted_servers(use, {"require_approval": "always"})
    assert (code.name, code.url, code.allowed_tools, code.require_approval) == (
        "codeindex",
        "stdio://codeindex",
        ("find_symbol",),
        "always",
    )
    assert (git.allowed_tools, git.require_approval) == (None, "always")  # all its tools; unused: none
    assert hosted_servers(use, {})[0].require_approval == "never"


def test_an_http_server_keeps_its_url_and_its_header_values_are_secrets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a Streamable HTTP server as scenarios declare it: the header names a variable, filled in here
    monkeypatch.setenv("HOSTED_TOKEN", SECRET)
    server = MCPServerDecl(
        "remote", url="https://mcp.example.com/mcp", headers={"Authorization": "Bearer {env:HOSTED_TOKEN}"}
    )
    (remote,) = hosted_servers(MCPUse("s", (server,), (("remote", None),)), {})
    assert remote.url == "https://mcp.example.com/mcp"
    assert remote.headers == {"Authorization": f"Bearer {SECRET}"}
    body = (
        OpenAIResponsesAdapter()
        .build_request([Message("user", "hi")], (), ToolChoice(), RequestOptions("m", hosted_mcp=(remote,)))
        .body
    )
    written = secrets.redact(json.dumps(body))
    assert SECRET in json.dumps(body) and SECRET not in written and secrets.REDACTED in written


def test_the_scenario_names_a_hosted_call_as_its_own_loop_would() -> None:
    call = HostedCall("call", "codeindex", "find_symbol")
    assert raw_name("prefixed", call.server, call.name) == "mcp__codeindex__find_symbol"
    assert raw_name("dotted", call.server, call.name) == "codeindex.find_symbol"
