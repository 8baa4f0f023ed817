"""``sim~reasoning-required``: a thinking model per reasoning format that refuses (or, for Cohere,
answers worse) a turn whose reasoning did not come back. The harness's own loop sends each back and
passes; an agent that drops it fails, and ``protocol.agent_conduct`` names what it dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.api import load_scenarios, run
from harness.records import RunRecord
from harness.runner import RunConfig
from harness.servers.sim.wire_reasoning import RULES
from harness.targets import Target
from tests.helpers.cli import REPO

SCENARIO = "todo.sequential.create_complete"  # two tool turns in a row, then a final answer


def run_target(target: Target, tmp_path: Path, scenario: str = SCENARIO) -> RunRecord:
    suite = load_scenarios(REPO / "scenarios", select=[scenario])
    (record,) = run(suite, [target], RunConfig(mode="record", cassettes=tmp_path)).records
    return record


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("fmt", sorted(RULES))
def test_the_harness_loop_sends_reasoning_back_and_passes(fmt: str, stream: bool, tmp_path: Path) -> None:
    target = Target.build(
        f"r-{fmt}", format=fmt, model="sim-thinking", base_url="sim~reasoning-required", stream=stream
    )
    record = run_target(target, tmp_path)
    assert record.passed and record.score == 100, [
        (c.id, c.status, [f.detail for f in c.findings if not f.passed]) for c in record.checks
    ]
    bodies = [e.request.body for e in record.transcript.exchanges]
    assert len(bodies) >= 3  # the later requests carried the reasoning the simulator checks


def test_an_agent_dropping_reasoning_fails_and_conduct_names_it(tmp_path: Path) -> None:
    target = Target.build(
        "dropping",
        format="openai-chat",
        model="sim-thinking",
        base_url="sim~reasoning-required",
        agent="tests.helpers.faulty_agents:run_dropping_reasoning",
    )
    record = run_target(target, tmp_path)
    assert not record.passed and record.outcome == "fail"
    (conduct,) = [c for c in record.checks if c.id == "protocol.agent_conduct"]
    dropped = [f for f in conduct.findings if f.check_id == "agent.reasoning_dropped"]
    assert conduct.status == "fail" and len(dropped) == 1, conduct
    assert dropped[0].detail.startswith(
        "the endpoint returned a reasoning_content with the calls of turn 0 (todo); the agent sent that "
        "turn back without it in the next request"
    )
    refused = record.transcript.exchanges[1].response
    assert refused.status == 400 and "must be passed back to the API" in refused.body


def test_the_example_agent_keeps_reasoning_and_passes(tmp_path: Path) -> None:
    """The example openai-SDK agent appends the SDK's message whole, ``reasoning_content`` included."""
    target = Target.build(
        "example",
        format="openai-chat",
        model="sim-thinking",
        base_url="sim~reasoning-required",
        agent="examples.openai_agent.agent:run",
    )
    record = run_target(target, tmp_path)
    (conduct,) = [c for c in record.checks if c.id == "protocol.agent_conduct"]
    assert conduct.status == "pass" and record.passed, conduct
