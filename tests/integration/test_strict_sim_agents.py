"""Agents with the bugs a new user's agent had, against the simulator as strict as the provider:
each FAILS (not a warning), with a finding naming the rule it broke and the fault charged to the
agent, not to the endpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.api import load_scenarios, run
from harness.checks.scoring import endpoint_failed
from harness.records import RunRecord
from harness.runner import RunConfig
from harness.targets import Target
from tests.helpers.cli import REPO

FAULTY = "tests.helpers.faulty_agents:"


def run_agent(agent: str, scenario: str, tmp_path: Path) -> RunRecord:
    target = Target.build(
        agent, format="openai-chat", model="sim-conformant", base_url="sim", agent=FAULTY + agent
    )
    suite = load_scenarios(REPO / "scenarios", select=[scenario])
    (record,) = run(suite, [target], RunConfig(mode="record", cassettes=tmp_path)).records
    return record


def failed(record: RunRecord, check_id: str) -> list[tuple[str, str]]:
    (check,) = [c for c in record.checks if c.id == check_id]
    assert check.status == "fail", check
    return [(f.check_id, f.detail) for f in check.findings if not f.passed and f.severity == "error"]


def assert_charged_to_the_agent(record: RunRecord) -> None:
    assert record.outcome == "fail" and record.score == 0 and not record.passed
    assert not endpoint_failed(record.checks), [c for c in record.checks if c.status == "fail"]


def test_an_agent_blanking_every_result_gets_a_different_answer_and_fails(tmp_path: Path) -> None:
    record = run_agent("run_blanking_results", "todo.sequential.create_complete", tmp_path)
    assert_charged_to_the_agent(record)
    ((_, final),) = failed(record, "expect.final")
    assert "I could not use the tool results: they came back empty or not at all (todo, todo)" in final
    assert {i for i, _ in failed(record, "protocol.agent_conduct")} == {"agent.tool_result_changed"}


@pytest.mark.parametrize("scenario", ["tool_choice.named.time", "tool_choice.required.weather"])
def test_an_agent_ignoring_a_forced_tool_choice_fails_naming_it(scenario: str, tmp_path: Path) -> None:
    record = run_agent("run_ignoring_tool_choice", scenario, tmp_path)
    assert_charged_to_the_agent(record)
    ((finding, detail),) = failed(record, "protocol.agent_conduct")
    assert finding == "agent.tool_choice_not_sent" and detail.endswith(
        "the agent's first request sent 'auto'"
    )
    assert failed(record, "expect.calls")  # the simulator, not forced, made no call
    (check,) = [c for c in record.checks if c.id == "protocol.tool_choice"]
    assert check.status != "fail"  # the model was never asked: not charged to it


def test_an_agent_sending_the_scenarios_tool_choice_shape_is_refused_as_openai_refuses(
    tmp_path: Path,
) -> None:
    record = run_agent("run_raw_tool_choice", "tool_choice.named.time", tmp_path)
    assert_charged_to_the_agent(record)
    request = record.transcript.exchanges[0].request.body
    assert isinstance(request, dict) and request["tool_choice"] == {"name": "get_time"}
    response = record.transcript.exchanges[0].response
    assert response is not None and response.status == 400
    assert json.loads(response.body)["error"]["type"] == "invalid_request_error"
    refused = dict(failed(record, "protocol.agent_conduct"))["agent.request_refused"]
    assert "HTTP 400: Missing required parameter: 'tool_choice.type'" in refused
    assert "the rule broken: tool_choice.form [O2, O23]" in refused
    (provider,) = [c for c in record.checks if c.id == "protocol.provider_error"]
    assert provider.status == "pass" and "the agent's fault" in provider.findings[0].detail
