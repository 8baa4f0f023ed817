"""``sim~reasoning-required``: a thinking model per reasoning format that refuses (or, for Cohere,
answers worse) a turn whose reasoning did not come back. The harness's own loop sends each back and
passes; an agent that drops it fails, and ``protocol.agent_conduct`` names what it dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.api import load_scenarios, run
from harness.records import RunRecord
from harness.runner import RunConfig
from harness.servers.sim.reasoning import RULES
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
