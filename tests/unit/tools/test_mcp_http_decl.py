"""Streamable HTTP MCP servers as scenarios declare them: clear errors for a bad url or headers
(never quoting a header's value), ``{env:NAME}`` filled and registered as a secret, the
protocol revisions the schema knows, and a replay from the recording (no socket: unit tier)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest
import yaml
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

from harness import secrets
from harness.errors import CassetteCorruptError, ConfigError, ScenarioError
from harness.scenarios import load_file
from harness.tools.mcp.session import MCPSession
from harness.tools.mcp.types import MCPServerDecl, MCPUse

SCENARIO = """\
id: mcp.http.demo
category: mcp
mcp_servers:
  web: {SERVER}
tools: [{mcp: web}]
messages: [{role: user, content: Where is Point defined?}]
expect: {final: {contains: geometry}}
"""
SECRET = "hdr-secret-8c1e4a"


def load(tmp_path: Path, server: str) -> MCPServerDecl:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.replace("{SERVER}", server))
    (scenario,) = load_file(path)
    (declared,) = scenario.mcp_servers
    return declared


def problems(tmp_path: Path, server: str) -> list[tuple[str | None, str]]:
    with pytest.raises(ScenarioError) as error:
        load(tmp_path, server)
    return [(p.pointer, p.message) for p in error.value.problems]


def test_an_http_server_loads_with_its_headers_and_pinned_revision(tmp_path: Path) -> None:
    server = (
        '{url: "https://mcp.example/mcp", headers: {Authorization: "Bearer {env:MCP_TOKEN}"}, '
        "protocol_version: 2025-06-18, timeout_s: 5}"
    )
    declared = load(tmp_path, server)
    assert (declared.url, declared.command, declared.timeout_s) == ("https://mcp.example/mcp", "", 5.0)
    assert declared.headers == {"Authorization": "Bearer {env:MCP_TOKEN}"}
    assert declared.protocol_version == "2025-06-18"


@pytest.mark.parametrize(
    ("server", "pointer", "says"),
    [
        ("{}", "/mcp_servers/web", "has neither 'command' nor 'url'"),
        ('{command: x, url: "http://h/mcp"}', "/mcp_servers/web", "has both 'command' and 'url'"),
        ('{url: "ftp://h/mcp"}', "/mcp_servers/web/url", "is not an http:// or https:// URL with a host"),
        ('{url: "/mcp"}', "/mcp_servers/web/url", "is not an http:// or https:// URL with a host"),
        ('{url: "http://h/mcp", args: [a]}', "/mcp_servers/web/args", "'args' is for stdio servers"),
        ('{url: "http://h/mcp", fixture: git-repo}', "/mcp_servers/web/fixture", "is for stdio servers"),
        ("{command: x, headers: {A: b}}", "/mcp_servers/web/headers", "headers are for url servers"),
        ('{url: "http://h/mcp", headers: {"A B": c}}', "/mcp_servers/web/headers", "does not match"),
        ('{url: "http://h/mcp", headers: {A: 3}}', "/mcp_servers/web/headers/A", "is not of type 'string'"),
        (
            '{url: "http://h/mcp", protocol_version: "2025-01-01"}',
            "/mcp_servers/web/protocol_version",
            "not one of",
        ),
    ],
)
def test_a_bad_server_is_refused_at_its_field(tmp_path: Path, server: str, pointer: str, says: str) -> None:
    found = problems(tmp_path, server)
    assert any(p == pointer and says in m for p, m in found), found


@pytest.mark.parametrize(
    ("value", "says"),
    [(f"Bearer {SECRET}\\nX-Other: 1", "holds a line break"), (f"{SECRET} {{env:1X}}", "is not {env:NAME}")],
)
def test_a_bad_header_value_is_refused_without_quoting_it(tmp_path: Path, value: str, says: str) -> None:
    ((pointer, message),) = problems(
        tmp_path, f'{{url: "http://h/mcp", headers: {{Authorization: "{value}"}}}}'
    )
    assert pointer == "/mcp_servers/web/headers/Authorization" and says in message
    assert SECRET not in message


def test_url_credentials_are_not_quoted_in_an_error(tmp_path: Path) -> None:
    ((_, message),) = problems(tmp_path, '{url: "ftp://user:pw-4d9e2b@h/mcp?token=tk-77aa01"}')
    assert "pw-4d9e2b" not in message and "tk-77aa01" not in message


def test_the_schema_knows_the_revisions_the_sdk_knows() -> None:
    schema = json.loads(resources.files("harness").joinpath("schemas/scenario.schema.json").read_text())
    server = schema["properties"]["mcp_servers"]["additionalProperties"]
    assert tuple(server["properties"]["protocol_version"]["enum"]) == KNOWN_PROTOCOL_VERSIONS


def session(tmp_path: Path, declared: MCPServerDecl) -> MCPSession:
    use = MCPUse("mcp.http.demo", (declared,), ((declared.name, None),))
    return MCPSession("t", use, "openai-chat", tmp_path / "s.mcp.yaml", live=False, record=False, reserved=[])


def test_env_references_fill_the_headers_as_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    declared = MCPServerDecl("web", url="http://h/mcp", headers={"Authorization": "Bearer {env:MCP_T}"})
    with pytest.raises(ConfigError, match=r"needs the environment variable MCP_T \(headers.Authorization\)"):
        session(tmp_path, declared)._spec(declared)
    monkeypatch.setenv("MCP_T", SECRET)
    spec = session(tmp_path, declared)._spec(declared)
    assert spec.headers == {"Authorization": f"Bearer {SECRET}"} and spec.url == "http://h/mcp"
    assert secrets.redact(f"echo: {SECRET}") == f"echo: {secrets.REDACTED}"


def test_an_http_server_replays_from_its_recording(tmp_path: Path) -> None:
    """Replay reads the recording alone: no socket (the unit tier refuses one), no header needed."""
    declared = MCPServerDecl("web", url="http://h/mcp", headers={"Authorization": "Bearer {env:UNSET_VAR}"})
    tool = {"name": "find_symbol", "description": "Find.", "input_schema": {"type": "object"}}
    call = {"server": "web", "tool": "find_symbol", "arguments": {"name": "Point"}, "text": "src/geometry.py"}
    recording = {
        "scenario": "mcp.http.demo",
        "servers": {"web": [tool]},
        "protocol_versions": {"web": "2025-06-18"},
        "calls": [call],
        "issues": [],
    }
    (tmp_path / "s.mcp.yaml").write_text(yaml.safe_dump(recording))
    replayed = session(tmp_path, declared).start()
    (registered,) = replayed.tools()
    assert registered.execute({"name": "Point"}).text == "src/geometry.py"
    assert replayed.protocol_versions == {"web": "2025-06-18"}
    (tmp_path / "s.mcp.yaml").write_text(yaml.safe_dump({**recording, "protocol_versions": ["2025-06-18"]}))
    with pytest.raises(CassetteCorruptError, match="protocol_versions"):
        session(tmp_path, declared).start()


def test_a_target_may_pin_the_revision() -> None:
    from harness.targets_file import ConfigFileError, read_config

    text = '[targets.x]\nformat = "openai-chat"\nmodel = "m"\nmcp_protocol_version = "{}"\n'
    assert read_config("t.toml", text.format("2025-03-26")).targets["x"].mcp_protocol_version == "2025-03-26"
    with pytest.raises(ConfigFileError, match="mcp_protocol_version"):
        read_config("t.toml", text.format("2025-13-01"))
