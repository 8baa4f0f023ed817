"""Hostile MCP servers (tests/helpers/hostile_mcp.py) through the real ``harness run``: what a
server does wrong is a finding of that server, the run goes on, and nothing printed or written
carries a secret it was given.

One live run on two simulated targets whose naming rules forbid ``.`` (OpenAI's, Anthropic's):

* ``secret``: prints its ``secret_env`` value on stdout, where the MCP SDK expects JSON-RPC;
* ``garbage``: prints lines that are not JSON-RPC before each answer;
* ``empty``: lists a tool named ``""`` beside its ``echo``;
* ``twins``: lists ``echo.x`` and ``echo_x``, one name once ``.`` is replaced.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers.cli import REPO, harness

SECRET = "hostile-secret-7f3a9c1e"
TARGETS = ("sim-openai", "sim-anthropic")


def scenario(behaviour: str, call: str, **server: Any) -> dict[str, Any]:
    script = str(REPO / "tests/helpers/hostile_mcp.py")
    declared = {"command": "{python}", "args": [script, behaviour], "timeout_s": 20, **server}
    return {
        "id": f"hostile.{behaviour.replace('-', '_')}",
        "category": "mcp",
        "mcp_servers": {"evil": declared},
        "tools": [{"mcp": "evil"}],
        "messages": [{"role": "user", "content": f"Echo hello with the {behaviour} server's {call}."}],
        "expect": {"calls": [{"name": f"mcp__evil__{call}", "args": {"text": "hello"}}]},
        "limits": {"max_turns": 3},
    }


SUITE = [
    scenario("secret", "echo", secret_env=["HOSTILE_SECRET"]),
    scenario("garbage", "echo"),
    scenario("empty-name", "echo"),
    scenario("twins", "echo.x"),
]


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path, Any]:
    """The console output, the output folder and the report of one live run of the suite."""
    folder = tmp_path_factory.mktemp("hostile")
    (folder / "suite.yaml").write_text(yaml.safe_dump(SUITE, sort_keys=False))
    targets = [arg for name in TARGETS for arg in ("-t", name)]
    done = harness(
        "run", "--mode", "live", *targets, "--scenarios", folder / "suite.yaml", "--out", folder / "out",
        env={"HOSTILE_SECRET": SECRET},
    )  # fmt: skip
    report = json.loads((folder / "out" / "report.json").read_text())
    return done, folder / "out", report


def runs(report: Any, scenario_id: str) -> list[dict[str, Any]]:
    found = [run for run in report["runs"] if run["scenario"] == scenario_id]
    assert len(found) == len(TARGETS)
    return found


def mcp_findings(run: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in run["findings"] if f["check_id"].startswith("mcp.")]


def test_the_run_goes_on_to_every_result(ran: Any) -> None:
    done, _, report = ran
    assert done.returncode == 0, done.stderr
    assert len(report["runs"]) == len(SUITE) * len(TARGETS)
    assert all(run["error"] is None for run in report["runs"])


def test_a_secret_a_server_prints_reaches_neither_console_nor_disk(ran: Any) -> None:
    done, out, report = ran
    assert SECRET not in done.stdout + done.stderr
    assert [p for p in out.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()] == []
    for run in runs(report, "hostile.secret"):
        (finding,) = mcp_findings(run)
        assert finding["check_id"] == "mcp.protocol_error"
        assert "'leaking <redacted>'" in finding["detail"]


def test_garbage_on_stdout_is_a_finding_of_the_server_not_a_traceback(ran: Any) -> None:
    done, _, report = ran
    for run in runs(report, "hostile.garbage"):
        (finding,) = mcp_findings(run)
        assert finding["check_id"] == "mcp.protocol_error"
        assert "wrote 3 lines on stdout that are not JSON-RPC messages" in finding["detail"]
        # the server's fault, named by its check: the model still did what was asked
        assert run["checks"]["protocol.mcp_servers"] in ("warn", "fail") and run["score"] == 100
    console = done.stdout + done.stderr
    assert "Traceback" not in console and "input_value" not in console


def test_a_tool_without_a_name_is_left_out_as_a_finding(ran: Any) -> None:
    _, _, report = ran
    for run in runs(report, "hostile.empty_name"):
        (finding,) = mcp_findings(run)
        assert finding["check_id"] == "mcp.protocol_error"
        assert "listed a tool without a name: left out" in finding["detail"]
        assert run["calls"] == [["mcp__evil__echo", {"text": "hello"}]]  # the server's other tool
        assert run["checks"]["expect.calls"] == "pass" and run["checks"]["protocol.mcp_servers"] == "warn"


def test_the_simulator_calls_the_twin_under_the_name_the_harness_offered(ran: Any) -> None:
    _, _, report = ran
    for run in runs(report, "hostile.twins"):
        assert run["score"] == 100, [f["detail"] for f in run["findings"] if not f["passed"]]
