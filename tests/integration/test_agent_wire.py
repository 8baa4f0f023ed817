"""The user's agent on the wire, as a new user met it in the first hour: a live run writes
nothing (for every kind of target and every entry point), a live run of a buggy agent leaves the
replay failing with the change named, a cassette holding the conversation out of order replays
in the agent's order, and an endpoint that never answers is an ``error`` with its cause and the
agent's traceback. Against the simulator on 127.0.0.1, with the example agents (examples/)."""

from __future__ import annotations

import hashlib
import json
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.api import RunResult, load_scenarios, run
from harness.reports.html import FILES, read_details
from harness.runner import RunConfig
from harness.targets import Target
from harness.targets_file import load_config
from tests.helpers.cli import REPO, harness

EXAMPLES = REPO / "examples"
AGENT = f"{EXAMPLES / 'openai_agent' / 'agent.py'}:run"
BLANKING = "tests.helpers.faulty_agents:run_blanking_results"
SCENARIO_FILES = ("single/weather_paris.yaml", "mcp/find_symbol.yaml")  # the loop, an MCP server
RECORDED = ("sim-openai", "my-agent")


def tree(root: Path) -> dict[str, str]:
    """Every folder and file under ``root``: a file as the SHA-256 of its bytes."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "/"
        for path in sorted(root.rglob("*"))
    }


def write_config(root: Path, agent: str = AGENT) -> Path:
    """``harness.toml`` with ``my-agent`` (the example openai-SDK agent, or ``agent``) and
    ``new-agent`` (the same, never recorded: it has no cassette folder), against the simulator."""
    path = root / "harness.toml"
    path.write_text(
        "".join(
            f'[targets.{name}]\nformat = "openai-chat"\nmodel = "sim-conformant"\nbase_url = "sim"\n'
            f'agent = "{agent}"\n\n'
            for name in ("my-agent", "new-agent")
        )
    )
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with two scenarios (one using an MCP server) recorded for the built-in loop
    (``sim-openai``) and for an agent (``my-agent``): its ``cassettes/`` is what a team commits."""
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    (tmp_path / "scenarios").mkdir()
    for name in SCENARIO_FILES:
        shutil.copy(REPO / "scenarios" / name, tmp_path / "scenarios")
    write_config(tmp_path)
    recorded = run_project(tmp_path, list(RECORDED), mode="record")
    assert [r.outcome for r in recorded.records] == ["pass"] * 4, [r.error for r in recorded.records]
    assert (tmp_path / "cassettes" / "my-agent" / "mcp.single.find_symbol.mcp.yaml").is_file()
    return tmp_path


def common(root: Path) -> dict[str, Path]:
    return {"scenarios": root / "scenarios", "cassettes": root / "cassettes", "config": root / "harness.toml"}


def run_project(root: Path, targets: list[str], **how: Any) -> RunResult:
    """``harness.run`` over the project's scenarios, cassettes and targets file (as :func:`cli`)."""
    paths = common(root)
    return run(
        paths["scenarios"], targets, RunConfig(cassettes=paths["cassettes"], **how), config=paths["config"]
    )


def cli(root: Path, *targets: str, live: bool) -> subprocess.CompletedProcess[str]:
    picked = [arg for name in targets for arg in ("-t", name)]
    return harness(
        "run",
        *picked,
        *(f"--{name}={path}" for name, path in common(root).items()),
        f"--out={root / 'out'}",
        *(["--live"] if live else []),
    )


def plugin(root: Path, *targets: str, live: bool) -> subprocess.CompletedProcess[str]:
    """The pytest plugin's items, and a test of the user's own using the ``harness`` fixture."""
    test = root / "test_my_agent.py"
    test.write_text(
        "def test_my_agent(harness):\n"
        f"    record = harness.run('weather.single.paris', 'my-agent', scenarios={str(root / 'scenarios')!r})"
        "\n"
        "    assert record.passed, harness.explain(record)\n"
    )
    mode = "live" if live else "replay"
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--harness-mode", mode]
    command += ["--harness-targets", ",".join(targets), f"--harness-config={root / 'harness.toml'}"]
    command += [f"--harness-cassettes={root / 'cassettes'}", str(root / "scenarios"), str(test)]
    return subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=600)


def test_live_and_replay_leave_the_cassettes_byte_identical(project: Path) -> None:
    """Every kind of target (the built-in loop, an MCP server, the user's agent, one never
    recorded) through every entry point (CLI, API, pytest plugin and fixture), live then replay:
    ``cassettes/`` stays byte for byte as committed, and no folder appears."""
    committed = tree(project / "cassettes")
    assert {"my-agent", "sim-openai"} == {name.split("/")[0] for name in committed}
    live = (*RECORDED, "new-agent")
    for mode, targets in (("live", live), ("replay", RECORDED)):
        result = cli(project, *targets, live=mode == "live")
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        runs = json.loads((project / "out" / "report.json").read_text())["runs"]
        assert [r["outcome"] for r in runs] == ["pass"] * 2 * len(targets), result.stderr
        assert tree(project / "cassettes") == committed, f"CLI {mode} changed cassettes/"

        records = run_project(project, list(targets), mode=mode).records
        assert [r.outcome for r in records] == ["pass"] * 2 * len(targets), [r.error for r in records]
        assert tree(project / "cassettes") == committed, f"API {mode} changed cassettes/"

        tested = plugin(project, *targets, live=mode == "live")
        assert f"{2 * len(targets) + 1} passed" in tested.stdout, tested.stdout[-3000:]
        assert tree(project / "cassettes") == committed, f"pytest {mode} changed cassettes/"


def test_a_live_run_of_a_buggy_agent_leaves_its_replay_failing_on_the_change(project: Path) -> None:
    """The agent gets a bug (it sends every tool result back as ""): live, the run fails its
    checks; the replay CI runs then exits 3, its first line naming the value that changed."""
    write_config(project, agent=BLANKING)
    cli(project, "my-agent", live=True)
    runs = json.loads((project / "out" / "report.json").read_text())["runs"]
    assert {r["outcome"] for r in runs} == {"fail"} and all(
        r["checks"]["protocol.agent_conduct"] == "fail" for r in runs
    )
    replay = cli(project, "my-agent", live=False)
    assert replay.returncode == 3, replay.stdout[-2000:] + replay.stderr[-2000:]
    recorded = yaml.safe_load((project / "cassettes" / "my-agent" / "weather.single.paris.yaml").read_text())
    returned = json.loads(recorded["interactions"][1]["request"]["body"])["messages"][3]["content"]
    (lead,) = [
        line for line in replay.stderr.splitlines() if "drift in scenario 'weather.single.paris'" in line
    ]
    assert f"messages[3].content changed from {returned[:40]!r}"[:-1] in lead and lead.endswith(" to ''"), (
        lead
    )
    assert "tool_choice" not in replay.stderr and "added" not in replay.stderr


def test_recording_once_over_a_cassette_is_drift_not_a_missing_response(project: Path) -> None:
    """Record mode ``once`` plays an existing cassette and never goes live: the buggy agent's
    request it does not hold is drift, as in replay, and nothing is written."""
    committed = tree(project / "cassettes")
    write_config(project, agent=BLANKING)
    result = run_project(project, ["my-agent"], mode="record", record_mode="once")
    assert [(r.outcome, r.error and r.error.kind) for r in result.records] == [
        ("error", "CassetteDriftError")
    ] * 2
    assert tree(project / "cassettes") == committed


def test_a_cassette_holding_the_conversation_out_of_order_replays_in_the_agents_order(tmp_path: Path) -> None:
    """vcrpy appends what a ``new_episodes`` recording adds at the end: a cassette's order need not
    be the conversation's. The transcript follows the order the agent sent its requests."""
    name = "todo.sequential.create_complete"
    target = load_config(EXAMPLES / "harness.toml").targets["openai-sdk-agent"]
    data = yaml.safe_load((EXAMPLES / "cassettes" / target.name / f"{name}.yaml").read_text())
    assert len(data["interactions"]) >= 3
    data["interactions"].reverse()
    (tmp_path / target.name).mkdir()
    (tmp_path / target.name / f"{name}.yaml").write_text(yaml.safe_dump(data))
    suite = load_scenarios(REPO / "scenarios", select=[name])
    (record,) = run(suite, [target], RunConfig(cassettes=tmp_path)).records
    assert record.score == 100, [(c.id, c.findings) for c in record.checks if c.status != "pass"]
    sizes = [len(e.request.body["messages"]) for e in record.transcript.exchanges]
    assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes) == len(data["interactions"])


@pytest.fixture(scope="module")
def hangs_up() -> Iterator[str]:
    """A server that accepts each connection and closes it without a byte of response."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            connection.recv(65536)
            connection.close()

    threading.Thread(target=serve, daemon=True).start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    server.close()


def closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.mark.parametrize(
    ("fault", "cause"),
    [
        ("refused", "ConnectionRefusedError: [Errno 111] Connection refused"),
        ("reset", "ConnectionResetError: [Errno 104] Connection reset by peer"),
        ("hang-up", "Server disconnected without sending a response"),
    ],
)
def test_an_endpoint_that_never_answers_an_agent_is_an_error_with_cause_and_traceback(
    fault: str, cause: str, hangs_up: str, tmp_path: Path
) -> None:
    base = {"refused": closed_port(), "reset": "sim~reset", "hang-up": hangs_up}[fault]
    agent = Target.build(
        f"agent-{fault}", format="openai-chat", model="sim-conformant", base_url=base, agent=AGENT
    )
    result = run(
        load_scenarios(REPO / "scenarios", select=["weather.single.paris"]), [agent], RunConfig(mode="live")
    )
    (record,) = result.records
    assert record.outcome == "error" and record.score is None, (record.outcome, record.error)
    assert record.error is not None and record.error.cause == "transport"
    assert (
        cause in record.error.message and "no usable response from http://127.0.0.1" in record.error.message
    )
    (exchange,) = record.transcript.exchanges
    assert exchange.response is None and record.transcript.stop_reason == "transport_error"
    (raised,) = [f for f in record.transcript.findings if f.check_id == "agent.raised"]
    assert "APIConnectionError" in raised.detail and raised.evidence is not None
    traceback = raised.evidence["traceback"]
    assert traceback.startswith("Traceback (most recent call last)") and "agent.py" in traceback
    assert "APIConnectionError" in traceback
    result.write_reports(tmp_path, ["json", "html"])
    (summary,) = json.loads((tmp_path / "report.json").read_text())["runs"]
    (shown,) = [f for f in summary["findings"] if f["check_id"] == "agent.raised"]
    assert shown["evidence"]["traceback"] == traceback
    (detail,) = read_details(tmp_path / FILES).values()  # report.html's run, opened
    assert "Traceback (most recent call last)" in detail


def test_an_agent_client_retrying_a_reset_makes_one_exchange_of_three_attempts() -> None:
    """pydantic-ai's OpenAI client retries twice: three sends of one request, none answered."""
    agent = Target.build(
        "pydantic-reset",
        format="openai-chat",
        model="sim-conformant",
        base_url="sim~reset",
        agent=f"{EXAMPLES / 'pydantic_ai_agent' / 'agent.py'}:run",
    )
    suite = load_scenarios(REPO / "scenarios", select=["weather.single.paris"])
    (record,) = run(suite, [agent], RunConfig(mode="live")).records
    assert record.outcome == "error" and record.error is not None and record.error.cause == "transport"
    assert "after 3 attempts" in record.error.message and "Connection reset by peer" in record.error.message
    (exchange,) = record.transcript.exchanges
    assert [a.status for a in exchange.attempts] == [None, None, None]
