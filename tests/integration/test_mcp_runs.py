"""MCP scenarios through the runner: hermetic replay, live third-party servers, failures as findings."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness import scenarios
from harness.api import run_targets as run
from harness.records import RunRecord
from harness.runner import RunConfig
from harness.targets import Target, pick
from harness.targets_file import load_targets
from harness.tools.mcp import manager as mcp_module
from tests.helpers.cli import REPO
from tests.helpers.processes import mcp_processes, still_running

MCP_SUITE = scenarios.select(scenarios.load([REPO / "scenarios"]), ["mcp"])
SIM = Target.build("sim-openai", format="openai-chat", model="sim-conformant", base_url="sim")


def failing(record: RunRecord) -> list[str]:
    return [
        f"{c.id}: {f.detail}"
        for c in record.checks
        for f in c.findings
        if not f.passed and f.severity != "info"
    ]


def test_replay_needs_no_mcp_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: Any) -> None:
        raise AssertionError("replay must not start an MCP server")

    monkeypatch.setattr(mcp_module.MCPManager, "start", refuse)
    targets = pick(
        load_targets(), ["sim-openai", "sim-gemini-stream", "sim-openai-prompted-xml", "local-gemma3-270m"]
    )
    records = run(targets, MCP_SUITE, RunConfig(results=tmp_path / "r.jsonl"))
    assert len(records) == len(targets) * len(MCP_SUITE) >= 4 * 8
    for record in records:
        assert record.error is None, record.error
        if record.target.simulated:
            assert record.score == 100, failing(record)
    names = {r.scenario: r.transcript.tool_names for r in records if r.target.name == "sim-openai"}
    assert names["mcp.naming.sanitised"] == {"mcp__codeindex__search_files": "mcp__codeindex__search.files"}
    gemini = {r.scenario: r.transcript.tool_names for r in records if r.target.name == "sim-gemini-stream"}
    assert gemini["mcp.naming.dotted"] == {"codeindex.list_files": "codeindex.list_files"}


def test_live_mcp_reproduces_the_recording_of_the_fixture_and_git_servers(tmp_path: Path) -> None:
    """--live-mcp: real servers during replay; their results must match what was recorded."""
    if importlib.util.find_spec("mcp_server_git") is None:
        pytest.skip("mcp-server-git is not installed")
    suite = [
        s
        for s in MCP_SUITE
        if s.id in ("mcp.single.find_symbol", "mcp.thirdparty.git_log", "mcp.two_servers.code_and_history")
    ]
    records = run([SIM], suite, RunConfig(results=tmp_path / "r.jsonl", live_mcp=True))
    for record in records:
        assert record.error is None, record.error
        assert record.score == 100, failing(record)
        sources = {e.source for e in record.transcript.executions}
        assert sources and all(s.startswith("mcp:") for s in sources)


def test_third_party_servers_live_through_the_same_path(tmp_path: Path) -> None:
    for module in ("mcp_server_git", "mcp_server_time"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed")
    suite = [s for s in MCP_SUITE if s.id in ("mcp.thirdparty.git_log", "mcp.thirdparty.time_convert")]
    records = run([SIM], suite, RunConfig(mode="live", results=tmp_path / "r.jsonl"))
    by_id = {r.scenario: r for r in records}
    git = by_id["mcp.thirdparty.git_log"].transcript
    assert {"mcp__git__git_log", "mcp__git__git_status", "mcp__git__git_show"} <= {t.name for t in git.tools}
    (log,) = git.executions
    assert log.source == "mcp:git" and "Raise MAX_ITEMS to 250" in log.result.content
    time = by_id["mcp.thirdparty.time_convert"].transcript
    assert {"mcp__time__get_current_time", "mcp__time__convert_time"} == {t.name for t in time.tools}
    (convert,) = time.executions
    assert convert.source == "mcp:time" and '"timezone": "Asia/Tokyo"' in convert.result.content
    assert all(r.score == 100 for r in records), [failing(r) for r in records]
    assert mcp_processes() == []


def scenario_file(tmp_path: Path, name: str, server: dict[str, Any], mode: str) -> scenarios.Scenario:
    data = {
        "id": f"mcp.test.{name}",
        "category": "mcp",
        "mcp_servers": {"codeindex": server},
        "tools": [{"mcp": "codeindex", "tools": ["flaky", "list_files"]}]
        if name != "no_server"
        else [{"mcp": "codeindex"}, "get_weather"],
        "messages": [
            {"role": "user", "content": f"Call the flaky tool with mode {mode}, then tell me what happened."}
        ],
        "expect": {
            "calls": [{"name": "mcp__codeindex__flaky", "args": {"mode": mode}}]
            if name != "no_server"
            else [{"name": "get_weather", "args": {"city": "Paris"}}],
            "final": {"contains": "failed"},
        },
        "limits": {"max_turns": 3},
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return scenarios.load_file(path)[0]


FIXTURE = {"command": "{python}", "args": ["-m", "harness.servers.mcp_fixture.server"], "timeout_s": 3}


def test_a_server_killed_mid_run_is_a_finding_and_leaves_no_process(tmp_path: Path) -> None:
    before = set(mcp_processes())  # only this test's servers are its business
    crash = scenario_file(tmp_path, "crash", FIXTURE, "crash")
    (record,) = run([SIM], [crash], RunConfig(mode="live", results=tmp_path / "r.jsonl"))
    assert record.error is None, record.error
    assert record.transcript.stop_reason == "final"  # the run went on to a final answer
    (execution,) = record.transcript.executions
    assert execution.result.is_error
    mcp_check = next(c for c in record.checks if c.id == "protocol.mcp_servers")
    assert mcp_check.status == "fail"
    crashed = [f for f in mcp_check.findings if f.check_id == "mcp.crashed"]
    assert crashed and "'codeindex'" in crashed[0].detail
    assert "crash requested" in (crashed[0].evidence or {})["stderr_tail"]
    assert still_running(sorted(set(mcp_processes()) - before)) == []


def test_a_hung_call_times_out_as_a_finding(tmp_path: Path) -> None:
    before = set(mcp_processes())
    hang = scenario_file(tmp_path, "hang", {**FIXTURE, "timeout_s": 1}, "hang")
    (record,) = run([SIM], [hang], RunConfig(mode="live", results=tmp_path / "r.jsonl"))
    assert record.error is None
    ids = [f.check_id for c in record.checks for f in c.findings]
    assert "mcp.timeout" in ids
    assert still_running(sorted(set(mcp_processes()) - before)) == []


def test_a_server_that_does_not_start_is_a_finding_and_the_run_goes_on(tmp_path: Path) -> None:
    broken = scenario_file(
        tmp_path, "no_server", {"command": "/nonexistent/mcp-server", "timeout_s": 2}, "ok"
    )
    (record,) = run([SIM], [broken], RunConfig(mode="live", results=tmp_path / "r.jsonl"))
    assert record.error is None, record.error
    assert [e.call.name for e in record.transcript.executions] == ["get_weather"]
    ids = [f.check_id for c in record.checks for f in c.findings]
    assert "mcp.start_failed" in ids
