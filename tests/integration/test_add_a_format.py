"""A throwaway wire format, registered through its one registry entry, runs end to end against the
simulator: the simulator serves it at its own prefix, the harness's loop speaks it, and each run
records what its first request offered."""

from __future__ import annotations

from pathlib import Path

from harness import scenarios
from harness.api import run_targets
from harness.runner import RunConfig
from harness.targets import Target
from tests.helpers.cli import REPO
from tests.helpers.fake_format import registered

CASES = ["weather.single.paris", "tool_choice.required.weather", "billing.single.create_invoice"]


def test_a_registered_format_runs_live_against_the_simulator(tmp_path: Path) -> None:
    suite = scenarios.select(scenarios.load([REPO / "scenarios"]), CASES)
    with registered():
        target = Target.build("fake-sim", format="fake-chat", model="sim", base_url="sim")
        records = run_targets([target], suite, RunConfig(mode="live", results=tmp_path / "results.jsonl"))
    assert [(r.scenario, r.outcome) for r in records] == [(case, "pass") for case in sorted(CASES)]
    urls = {e.request.url for r in records for e in r.transcript.exchanges}
    assert all("/fake-chat/fake/v1/talk" in url for url in urls), urls
    by_case = {r.scenario: r.offered for r in records}
    assert by_case["tool_choice.required.weather"] is not None
    assert by_case["tool_choice.required.weather"].tool_choice == "required"
    assert by_case["billing.single.create_invoice"] is not None
    assert "ref" in by_case["billing.single.create_invoice"].schema_features
