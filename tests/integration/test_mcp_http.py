"""MCP servers over Streamable HTTP: the fixture server on 127.0.0.1 gives the verdicts it gives
over stdio, live (record) and replayed; replay opens no socket and starts no process; a header
secret reaches no written byte; a pinned older revision is spoken."""

from __future__ import annotations

import base64
import dataclasses
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness import scenarios
from harness.api import run_targets as run
from harness.records import RunRecord
from harness.runner import RunConfig
from harness.servers.mcp_fixture import MODULE, fixture_spec
from harness.tools.mcp import manager as mcp_module
from harness.tools.mcp.manager import MCPManager
from harness.tools.mcp.types import MCPServerDecl, MCPServerSpec
from tests.helpers.cli import REPO, harness
from tests.helpers.mcp_http import fixture_http, free_port, serving

TOKEN = "tok-9f3a61c2e7d84b05"
TOKEN_VARIABLE = "HARNESS_TEST_MCP_TOKEN"
SIM = "sim-openai"
FIXTURE_SUITE = [
    s
    for s in scenarios.select(scenarios.load([REPO / "scenarios"]), ["mcp"])
    if s.mcp_servers and all(MODULE in d.args for d in s.mcp_servers)
]


@pytest.fixture(scope="module")
def url() -> Any:
    """The fixture server over HTTP, requiring ``Bearer TOKEN``."""
    with fixture_http(TOKEN) as found:
        yield found


def over_http(scenario: scenarios.Scenario, url: str, **extra: Any) -> scenarios.Scenario:
    headers = {"Authorization": f"Bearer {{env:{TOKEN_VARIABLE}}}"}
    servers = tuple(MCPServerDecl(d.name, url=url, headers=headers, **extra) for d in scenario.mcp_servers)
    return dataclasses.replace(scenario, mcp_servers=servers)


def verdicts(records: list[RunRecord]) -> dict[str, Any]:
    return {r.scenario: (r.error, r.score, sorted((c.id, c.status) for c in r.checks)) for r in records}


def refuse(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a replay opened a socket or started a process")


def test_fixture_scenarios_give_the_same_verdicts_over_stdio_and_http(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.targets import pick
    from harness.targets_file import load_targets

    assert len(FIXTURE_SUITE) >= 5, [s.id for s in FIXTURE_SUITE]
    monkeypatch.setenv(TOKEN_VARIABLE, TOKEN)
    targets = pick(load_targets(), [SIM])
    http_suite = [over_http(s, url) for s in FIXTURE_SUITE]
    found = {}
    for name, suite in (("stdio", FIXTURE_SUITE), ("http", http_suite)):
        config = RunConfig(mode="record", cassettes=tmp_path / name, concurrency=2)
        found[name, "record"] = verdicts(run(targets, suite, config))
    with monkeypatch.context() as patch:  # replay: no socket, no process, no server
        patch.setattr(socket.socket, "connect", refuse)
        patch.setattr(subprocess.Popen, "__init__", refuse)
        patch.setattr(mcp_module.MCPManager, "start", refuse)
        patch.delenv(TOKEN_VARIABLE)
        for name, suite in (("stdio", FIXTURE_SUITE), ("http", http_suite)):
            found[name, "replay"] = verdicts(run(targets, suite, RunConfig(cassettes=tmp_path / name)))
    expected = found["stdio", "record"]
    assert all(score == 100 and error is None for error, score, _ in expected.values()), expected
    for key, got in found.items():
        assert got == expected, key
    for stdio in sorted((tmp_path / "stdio").rglob("*.mcp.yaml")):
        http = tmp_path / "http" / stdio.relative_to(tmp_path / "stdio")
        assert http.read_text() == stdio.read_text()  # the same listing, calls, results and revision
        assert yaml.safe_load(http.read_text())["protocol_versions"] == {"codeindex": "2026-07-28"}


def record_and_replay(tmp_path: Path, folder: Path, *targets: str) -> list[str]:
    """The scenarios in ``folder`` recorded (the token in the environment) then replayed (without
    it) with the CLI, each exiting 0: their consoles."""
    common = (*targets, "--scenarios", folder, "--cassettes", tmp_path / "cassettes")
    recorded = harness(
        "run", "--mode", "record", *common, "--out", tmp_path / "out", env={TOKEN_VARIABLE: TOKEN}
    )
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    replayed = harness("run", *common, "--out", tmp_path / "out-replay")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    return [p.stdout + p.stderr for p in (recorded, replayed)]


def leaks(tmp_path: Path, folder: Path, forms: list[str], consoles: list[str]) -> list[tuple[str, str]]:
    """(where, form) for each of ``forms`` found in a file written under ``tmp_path`` (the scenarios
    in ``folder`` aside) or on a console."""
    written = [p for p in tmp_path.rglob("*") if p.is_file() and folder not in p.parents]
    assert len(written) > 6, written
    outputs = {str(path): path.read_bytes() for path in written}
    outputs |= {f"console {i}": text.encode() for i, text in enumerate(consoles)}
    return [(where, form) for where, data in outputs.items() for form in forms if form.encode() in data]


def test_a_header_secret_reaches_no_written_byte(url: str, tmp_path: Path) -> None:
    """Record and replay with the CLI; every file it wrote, and its console, lack the token in
    every form it travels in (the ``Bearer`` header's base64 too)."""
    folder = tmp_path / "scenarios"
    folder.mkdir()
    literal = "lit-5c0ffee5ecret"
    for scenario in ("find_symbol", "tool_error"):
        data = yaml.safe_load((REPO / "scenarios" / "mcp" / f"{scenario}.yaml").read_text())
        headers = {"Authorization": f"Bearer {{env:{TOKEN_VARIABLE}}}", "X-Team-Key": literal}
        data["mcp_servers"] = {
            "codeindex": {"url": url, "headers": headers, "protocol_version": "2025-06-18"}
        }
        (folder / f"{scenario}.yaml").write_text(yaml.safe_dump(data))
    consoles = record_and_replay(tmp_path, folder, "-t", SIM)
    recordings = sorted(tmp_path.glob("cassettes/**/*.mcp.yaml"))
    assert len(recordings) == 2
    for recording in recordings:
        assert yaml.safe_load(recording.read_text())["protocol_versions"] == {"codeindex": "2025-06-18"}
    forms = [
        TOKEN,
        literal,
        base64.b64encode(f"Bearer {TOKEN}".encode()).decode(),
        base64.b64encode(literal.encode()).decode(),
    ]
    assert leaks(tmp_path, folder, forms, consoles) == []


def test_a_secret_given_to_a_hosted_connector_reaches_no_written_byte(url: str, tmp_path: Path) -> None:
    """The same server handed to the providers' connectors (Responses' ``mcp`` tool takes its
    headers, Anthropic's ``mcp_servers`` the bare token after ``Bearer``): the token from the
    environment, a literal bearer token, a literal credential header, and the URL's password and
    token parameter are in no file a record and a replay write, nor on the console."""
    folder = tmp_path / "scenarios"
    folder.mkdir()
    literal, bearer = "lit-5c0ffee5ecret", "lit-b3arer70ken"
    password, parameter = "pw-5ecretpa55", "qtok-5ecret123"
    credentialed = url.replace("http://", f"http://someone:{password}@") + f"?token={parameter}"
    for scenario, authorization in (("find_symbol", f"{{env:{TOKEN_VARIABLE}}}"), ("tool_error", bearer)):
        data = yaml.safe_load((REPO / "scenarios" / "mcp" / f"{scenario}.yaml").read_text())
        headers = {"Authorization": f"Bearer {authorization}", "X-Team-Key": literal}
        data["mcp_servers"] = {"codeindex": {"url": credentialed, "headers": headers}}
        (folder / f"{scenario}.yaml").write_text(yaml.safe_dump(data))
    hosted = ("-t", "sim-openai-responses-hosted-mcp-stream", "-t", "sim-anthropic-hosted-mcp")
    consoles = record_and_replay(tmp_path, folder, *hosted)
    cassettes = sorted(tmp_path.glob("cassettes/**/*.yaml"))
    assert len(cassettes) == 4, cassettes
    bodies = "".join(c.read_text() for c in cassettes)
    assert "authorization_token" in bodies and "server_url" in bodies  # both connectors were given it
    forms = [TOKEN, literal, bearer, password, parameter]
    forms += [base64.b64encode(f"Bearer {secret}".encode()).decode() for secret in (TOKEN, bearer)]
    forms.append(base64.b64encode(f"someone:{password}".encode()).decode())
    assert leaks(tmp_path, folder, forms, consoles) == []


def test_a_pinned_revision_is_spoken_over_http_and_stdio(url: str) -> None:
    """An older handshake-era revision over both transports, and the stateless one over HTTP."""
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    pins = {"http-old": "2025-03-26", "stdio-old": "2025-03-26", "http-new": "2026-07-28"}
    http = [
        MCPServerSpec(n, url=url, headers=bearer, protocol_version=v) for n, v in pins.items() if "http" in n
    ]
    stdio = dataclasses.replace(fixture_spec(name="stdio-old"), protocol_version=pins["stdio-old"])
    with MCPManager([*http, stdio]) as manager:
        assert manager.issues == []
        for server, version in pins.items():
            assert manager.protocol_version(server) == version
            result = manager.call(server, "find_symbol", {"name": "Point"})
            assert result.structured == {"path": "src/geometry.py", "line": 8, "kind": "class"}


def test_negotiation_picks_the_newest_revision_and_a_refused_header_is_a_start_failure(url: str) -> None:
    good = MCPServerSpec("good", url=url, headers={"Authorization": f"Bearer {TOKEN}"})
    bad = MCPServerSpec("bad", url=url, headers={"Authorization": "Bearer not-the-token"}, timeout_s=5)
    with MCPManager([good, bad]) as manager:
        assert manager.protocol_version("good") == "2026-07-28"
        (issue,) = manager.issues
        assert (issue.server, issue.kind) == ("bad", "start_failed")
        assert f"could not connect to {url}" in issue.detail and "not-the-token" not in issue.detail


def test_a_target_pins_the_revision_of_servers_whose_scenario_pins_none(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.targets import Target

    monkeypatch.setenv(TOKEN_VARIABLE, TOKEN)
    target = Target.build(
        SIM, format="openai-chat", model="sim-conformant", base_url="sim", mcp_protocol_version="2025-03-26"
    )
    (stdio,) = [s for s in FIXTURE_SUITE if s.id == "mcp.single.find_symbol"]
    http = over_http(stdio, url, protocol_version="2025-06-18")
    found = {}
    for name, scenario in (("stdio", stdio), ("http", http)):
        (record,) = run([target], [scenario], RunConfig(mode="record", cassettes=tmp_path / name))
        assert record.score == 100
        (recording,) = (tmp_path / name).rglob("*.mcp.yaml")
        found[name] = yaml.safe_load(recording.read_text())["protocol_versions"]
    assert found == {"stdio": {"codeindex": "2025-03-26"}, "http": {"codeindex": "2025-06-18"}}


def test_a_handshake_only_server_is_reached_by_falling_back_and_a_pin_it_refuses_is_an_issue() -> None:
    """A server that knows no ``server/discover``: negotiation falls back to ``initialize`` and
    takes the older revision it answers; pinned to another, the answer is a protocol_error."""
    script = str(REPO / "tests/helpers/hostile_mcp.py")
    plain = MCPServerSpec("plain", "python3", [script, "plain"])
    old = MCPServerSpec("old", "python3", [script, "old"])
    pinned = MCPServerSpec("pinned", "python3", [script, "old"], protocol_version="2025-06-18")
    with MCPManager([plain, old, pinned]) as manager:
        assert [manager.protocol_version(s) for s in ("plain", "old", "pinned")] == [
            "2025-11-25",  # the newest handshake revision, offered after the probe failed
            "2025-03-26",  # the server's older answer, taken
            "2025-03-26",
        ]
        (issue,) = manager.issues
        assert (issue.server, issue.kind) == ("pinned", "protocol_error")
        assert "protocol_version 2025-06-18 was asked for, the server answered 2025-03-26" in issue.detail
        assert manager.call("old", "echo", {"text": "hi"}).text == "echo: hi"


def test_a_handshake_era_server_over_http_is_reached_by_falling_back() -> None:
    """The fixture refusing ``server/discover`` as a 2025-era server does: negotiation over HTTP
    falls back to the ``initialize`` handshake (the newest handshake revision, a session id), the
    tools answer; pinned to the stateless revision, the refusal is a start failure, named."""
    with fixture_http(TOKEN, "--handshake-only") as legacy:
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        auto = MCPServerSpec("auto", url=legacy, headers=bearer)
        pinned = MCPServerSpec(
            "pinned", url=legacy, headers=bearer, protocol_version="2026-07-28", timeout_s=10
        )
        with MCPManager([auto, pinned]) as manager:
            assert manager.protocol_version("auto") == "2025-11-25"
            result = manager.call("auto", "find_symbol", {"name": "Point"})
            assert result.structured == {"path": "src/geometry.py", "line": 8, "kind": "class"}
            assert [(i.server, i.kind) for i in manager.issues] == [("pinned", "start_failed")], (
                manager.issues
            )


def test_a_third_party_server_over_http_records_and_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mcp-server-motherduck (PyPI, built on FastMCP) serves an in-memory DuckDB over Streamable
    HTTP, offline: a SQL call through the runner, recorded, then replayed with no server."""
    server = shutil.which("mcp-server-motherduck", path=str(Path(sys.executable).parent))
    if server is None:
        pytest.skip("mcp-server-motherduck is not installed")
    from harness.targets import pick
    from harness.targets_file import load_targets

    port = free_port()
    data = {
        "id": "mcp.http.duckdb",
        "category": "mcp",
        "mcp_servers": {"duck": {"url": f"http://127.0.0.1:{port}/mcp", "timeout_s": 20}},
        "tools": [{"mcp": "duck", "tools": ["execute_query"]}],
        "messages": [{"role": "user", "content": "Ask DuckDB what six times seven is."}],
        "expect": {"calls": [{"name": "mcp__duck__execute_query", "args": {"sql": "SELECT 6*7 AS answer"}}]},
        "limits": {"max_turns": 3},
    }
    (tmp_path / "duck.yaml").write_text(yaml.safe_dump(data))
    scenario = scenarios.load_file(tmp_path / "duck.yaml")
    targets = pick(load_targets(), [SIM])
    argv = [server, "--transport", "http", "--host", "127.0.0.1", "--port", str(port), "--read-write"]
    with serving(argv, {"HOME": str(tmp_path)}, port):
        (recorded,) = run(targets, scenario, RunConfig(mode="record", cassettes=tmp_path / "cassettes"))
    (execution,) = recorded.transcript.executions
    assert execution.source == "mcp:duck" and '"rows"' in execution.result.content
    assert "42" in execution.result.content and recorded.score == 100
    monkeypatch.setattr(socket.socket, "connect", refuse)
    (replayed,) = run(targets, scenario, RunConfig(cassettes=tmp_path / "cassettes"))
    assert verdicts([replayed]) == verdicts([recorded])
    (recording,) = (tmp_path / "cassettes").rglob("*.mcp.yaml")
    assert yaml.safe_load(recording.read_text())["protocol_versions"] == {"duck": "2026-07-28"}


def test_a_hung_call_and_a_vanished_server_over_http_are_issues() -> None:
    """A call that never answers times out (the session is left); a server gone between calls is
    ``crashed`` at once. Both are issues, not exceptions out of the manager."""
    with fixture_http() as address:
        manager = MCPManager([MCPServerSpec(n, url=address, timeout_s=2) for n in ("hang", "gone")])
        manager.start()
        try:
            with pytest.raises(mcp_module.MCPCallError, match="timed out after 2s"):
                manager.call("hang", "flaky", {"mode": "hang"})
            assert manager.call("gone", "flaky", {"mode": "ok"}).text == "ok"
        except BaseException:
            manager.close()
            raise
    with pytest.raises(mcp_module.MCPCallError, match="crashed during 'flaky'"):
        manager.call("gone", "flaky", {"mode": "ok"})
    manager.close()
    assert [(i.server, i.kind) for i in manager.issues] == [("hang", "timeout"), ("gone", "crashed")]
