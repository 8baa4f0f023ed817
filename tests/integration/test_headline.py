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
from typing import NamedTuple

import pytest

from harness import scenarios
from harness.api import run_targets
from harness.checks.scoring import asks_refusal
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


class Headlines(NamedTuple):
    scores: dict[str, float]  # each target's headline
    intervals: dict[str, list[float] | None]  # and its reported 95 % interval
    worth: float  # what never calling is worth on this suite


def no_call_worth(records: Iterable[RunRecord]) -> float:
    """The headline of a model that is right exactly where no call is right: per category, the
    share of its scenarios in which the conformant script makes no call in any phase; their mean."""
    model = ScriptedModel(SUITE)
    by_id = {s.id: s for s in SUITE}
    by_category: dict[str, list[bool]] = defaultdict(list)
    for scenario_id, category in sorted({(r.scenario, r.category) for r in records if not asks_refusal(r)}):
        scenario = by_id[scenario_id]
        phases = range(len(scenario.follow_ups) + 1)
        by_category[category].append(not any(model.plan(scenario.phase(i)) for i in phases))
    return 100 * mean(mean(flags) for flags in by_category.values())


@pytest.fixture(scope="module")
def headlines(tmp_path_factory: pytest.TempPathFactory) -> Headlines:
    targets = [
        Target.build(f"share-{share:g}", format=FORMATS[i], model="sim", base_url=f"sim~fail-share:{share:g}")
        for i, share in enumerate(SHARES)
    ] + [Target.build(name, format="openai-chat", model="sim", base_url=f"sim~{name}") for name in BROKEN]
    results = tmp_path_factory.mktemp("headline") / "results.jsonl"
    records = run_targets(targets, SUITE, RunConfig(mode="live", results=results, concurrency=16))
    assert not [r.key for r in records if r.error], "every run must be tested"
    summary = build(records).summary.targets
    return Headlines(
        {name: target.score for name, target in summary.items()},
        {name: target.interval for name, target in summary.items()},
        no_call_worth(records),
    )


@pytest.mark.parametrize("deviation", BROKEN)
def test_a_model_whose_calls_never_work_scores_what_never_calling_is_worth(
    headlines: Headlines, deviation: str
) -> None:
    scores, worth = headlines.scores, headlines.worth
    # irrelevance, tool_choice none, restraint, and histories whose answer is in what they hold
    assert 5 < worth < 35
    assert scores[deviation] <= round(worth, 2), (deviation, scores[deviation], worth)  # as reported


def test_a_simulator_of_known_quality_scores_its_quality_in_order(
    headlines: Headlines,
) -> None:
    scores = headlines.scores
    found = [scores[f"share-{share:g}"] for share in SHARES]
    for share, score in zip(SHARES, found, strict=True):
        low, high = headlines.intervals[f"share-{share:g}"] or (score, score)
        assert abs(score - 100 * (1 - share)) <= 5, (share, score)
        assert low - 1 <= 100 * (1 - share) <= high + 1, (share, score, low, high)  # within its 95 % interval
    assert found == sorted(found, reverse=True) and len(set(found)) == len(found)
