"""The headline held to the truth, live against the simulator over the whole bundled suite.

A model that never calls a tool, or whose calls are all broken, scores no more than what never
calling is worth (the scenarios whose right answer is no call); a simulator of known quality
(``sim~fail-share:p``, failing a share ``p`` of the scenarios) scores within 5 points of
``100 * (1 - p)``, in order.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from statistics import mean

import pytest

from harness import scenarios
from harness.api import run_targets
from harness.records import RunRecord
from harness.reports.json_report import build
from harness.runner import RunConfig
from harness.servers.sim.script import ScriptedModel
from harness.targets import Target
from tests.helpers.cli import REPO

SUITE = scenarios.load([REPO / "scenarios"])
SHARES = (0.0, 0.1, 0.3, 0.5, 1.0)
BROKEN = ("no-calls", "unknown-tool", "schema-violation", "text-leak")
FORMATS = ("openai-chat", "anthropic-messages", "gemini-generate", "ollama-chat", "mistral-chat")


def no_call_worth(records: Iterable[RunRecord]) -> float:
    """The headline of a model that is right exactly where no call is right: per category, the
    share of its scenarios in which the conformant script makes no call in any phase; their mean."""
    model = ScriptedModel(SUITE)
    by_id = {s.id: s for s in SUITE}
    by_category: dict[str, list[bool]] = defaultdict(list)
    for scenario_id, category in sorted({(r.scenario, r.category) for r in records}):
        scenario = by_id[scenario_id]
        phases = range(len(scenario.follow_ups) + 1)
        by_category[category].append(not any(model.plan(scenario.phase(i)) for i in phases))
    return 100 * mean(mean(flags) for flags in by_category.values())


@pytest.fixture(scope="module")
def headlines(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, float], float]:
    targets = [
        Target.build(f"share-{share:g}", format=FORMATS[i], model="sim", base_url=f"sim~fail-share:{share:g}")
        for i, share in enumerate(SHARES)
    ] + [Target.build(name, format="openai-chat", model="sim", base_url=f"sim~{name}") for name in BROKEN]
    results = tmp_path_factory.mktemp("headline") / "results.jsonl"
    records = run_targets(targets, SUITE, RunConfig(mode="live", results=results, concurrency=16))
    assert not [r.key for r in records if r.error], "every run must be tested"
    summary = build(records).summary.targets
    return {name: target.score for name, target in summary.items()}, no_call_worth(records)


@pytest.mark.parametrize("deviation", BROKEN)
def test_a_model_whose_calls_never_work_scores_what_never_calling_is_worth(
    headlines: tuple[dict[str, float], float], deviation: str
) -> None:
    scores, worth = headlines
    assert 5 < worth < 25  # irrelevance, tool_choice none, restraint: a minority of the suite
    assert scores[deviation] <= round(worth, 2), (deviation, scores[deviation], worth)  # as reported


def test_a_simulator_of_known_quality_scores_its_quality_in_order(
    headlines: tuple[dict[str, float], float],
) -> None:
    scores, _ = headlines
    found = [scores[f"share-{share:g}"] for share in SHARES]
    for share, score in zip(SHARES, found, strict=True):
        assert abs(score - 100 * (1 - share)) <= 5, (share, score)
    assert found == sorted(found, reverse=True) and len(set(found)) == len(found)
