"""The example agents (examples/): real frameworks under test, graded from the wire.

They replay from their committed cassettes (recorded against the simulator) over the bundled
single, sequential, parallel and error scenarios: the openai SDK agent on Chat Completions and on
the Responses API (whole and streamed), and the pydantic-ai one; an agent broken on purpose (it
drops a tool result) is caught by the checks.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from harness.api import load_scenarios, run
from harness.runner import RunConfig
from harness.targets import Target
from harness.targets_file import load_config
from tests.helpers.cli import REPO

EXAMPLES = REPO / "examples"
SUITE = load_scenarios(REPO / "scenarios", select=["single", "sequential", "parallel", "error"])
CONFIG = load_config(EXAMPLES / "harness.toml")


@pytest.mark.parametrize(
    "name",
    [
        "openai-sdk-agent",
        "pydantic-ai-agent",
        "openai-sdk-responses-agent",
        "openai-sdk-responses-agent-stream",
    ],
)
def test_the_example_agent_replays_and_is_graded_from_the_wire(name: str) -> None:
    result = run(SUITE, [CONFIG.targets[name]], RunConfig(mode="replay", cassettes=EXAMPLES / "cassettes"))
    assert not result.errors, [r.error for r in result.errors]
    assert len(result.records) == len(SUITE) >= 12
    for record in result.records:
        assert record.target.mode == "agent" and record.transcript.agent
        assert record.transcript.exchanges, record.scenario  # rebuilt from the recorded wire
        statuses = {c.id: c.status for c in record.checks}
        assert statuses["protocol.agent_conduct"] == "pass", record.scenario
        assert record.score == 100, (record.scenario, [c for c in record.checks if c.status != "pass"])
    parallel = next(r for r in result.records if r.scenario == "weather.parallel.two_cities")
    assert [c.name for _, c in parallel.transcript.calls] == ["get_weather", "get_weather"]
    assert {e.call.arguments["city"].lower() for e in parallel.transcript.executions} == {"paris", "tokyo"}


def output_items(body: str, *, stream: bool) -> list[Any]:
    """A Response's output items as the wire carried them (a stream's from its terminal event)."""
    if not stream:
        return list(json.loads(body)["output"])
    datas = [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ")]
    return list(datas[-1]["response"]["output"])


@pytest.mark.parametrize("name", ["openai-sdk-responses-agent", "openai-sdk-responses-agent-stream"])
def test_the_responses_agent_replays_each_turns_output_items_as_received(name: str) -> None:
    """Stateless: each request sends the whole history, every earlier turn's output items
    (reasoning, function_call) exactly as the response held them, each call answered by a
    function_call_output with its call_id."""
    target = CONFIG.targets[name]
    suite = [s for s in SUITE if s.id == "todo.sequential.create_complete"]
    (record,) = run(suite, [target], RunConfig(cassettes=EXAMPLES / "cassettes")).records
    exchanges = record.transcript.exchanges
    assert record.score == 100 and len(exchanges) >= 3
    executions = iter(record.transcript.executions)
    expected = list(exchanges[0].request.body["input"])
    for before, after in itertools.pairwise(exchanges):
        assert before.response is not None
        output = output_items(before.response.body, stream=target.stream)
        assert {item["type"] for item in output} >= {"reasoning", "function_call"}
        expected += output
        for call in [item for item in output if item["type"] == "function_call"]:
            result = next(executions).result.content
            expected.append({"type": "function_call_output", "call_id": call["call_id"], "output": result})
        assert after.request.body["input"] == expected
        assert "previous_response_id" not in after.request.body
    assert next(executions, None) is None


def test_an_agent_that_drops_a_tool_result_fails_the_checks(tmp_path: Path) -> None:
    base = CONFIG.targets["openai-sdk-agent"]
    broken = Target.build(
        "broken-agent",
        profile=base.profile,
        model=base.model,
        base_url="sim",
        agent="openai_agent/agent.py:run_dropping_a_result",
        origin=str(EXAMPLES / "harness.toml"),
    )
    (scenario,) = [s for s in SUITE if s.id == "todo.sequential.create_complete"]
    (record,) = run([scenario], [broken], RunConfig(mode="record", cassettes=tmp_path)).records
    conduct = next(c for c in record.checks if c.id == "protocol.agent_conduct")
    assert conduct.status == "fail"
    (missing,) = [f for f in conduct.findings if f.check_id == "agent.tool_result_missing"]
    assert "todo" in missing.detail and missing.turn_index == 1
    assert record.score is not None and record.score < 100 and not record.passed


def test_an_agent_that_blanks_every_tool_result_fails_the_checks(tmp_path: Path) -> None:
    """Every result sent back as "": an error of the agent's conduct (not a warning the run
    passes with), naming the call, what was sent and what the tool returned."""
    base = CONFIG.targets["openai-sdk-agent"]
    blanking = Target.build(
        "blanking-agent",
        profile=base.profile,
        model=base.model,
        base_url="sim",
        agent="tests.helpers.faulty_agents:run_blanking_results",
    )
    (scenario,) = [s for s in SUITE if s.id == "todo.sequential.create_complete"]
    (record,) = run([scenario], [blanking], RunConfig(mode="record", cassettes=tmp_path)).records
    conduct = next(c for c in record.checks if c.id == "protocol.agent_conduct")
    assert conduct.status == "fail" and not record.passed
    changed = [f for f in conduct.findings if f.check_id == "agent.tool_result_changed"]
    assert len(changed) == len(record.transcript.executions) >= 2
    for finding, execution in zip(changed, record.transcript.executions, strict=True):
        assert finding.severity == "error" and finding.evidence is not None
        assert finding.evidence == {"returned": execution.result.content, "sent": ""}
        assert finding.detail.startswith(
            f"the agent sent back an empty result for {execution.call.name} (call "
        )
        assert f"the tool returned {execution.result.content[:40]!r}"[:-1] in finding.detail
