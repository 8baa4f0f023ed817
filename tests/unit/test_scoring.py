"""The headline (task success), compliance and how sure each figure is, held to hand-computed cases."""

from __future__ import annotations

import dataclasses

import pytest

from harness.checks.scoring import (
    Figure,
    Scores,
    compliance_turns,
    difference,
    record_score,
    run_success,
    wilson,
)
from harness.model import Finding, ParsedTurn, Usage
from harness.records import CheckResult, RunError, RunRecord, TargetInfo
from tests.helpers.transcripts import call, transcript

INFO = TargetInfo("t", "openai-chat", "m", False, False, "native", "openai")


def result(check_id: str, status: str, kind: str = "protocol", turn: int | None = None) -> CheckResult:
    severity = {"fail": "error", "warn": "warning"}.get(status, "info")
    finding = Finding(check_id, severity, status == "pass", f"{check_id} {status}", turn)  # type: ignore[arg-type]
    return CheckResult.of(check_id, kind, 1.0, [finding])  # type: ignore[arg-type]


def run(
    scenario: str, category: str, *checks: CheckResult, error: bool = False, repeat: int = 0
) -> RunRecord:
    return RunRecord(
        target=INFO,
        scenario=scenario,
        category=category,
        repeat=repeat,
        mode="replay",
        score=None,
        passed=False,
        error=RunError("TransportError", "no response", cause="transport") if error else None,
        checks=checks,
        usage=Usage(),
        transcript=transcript([call("get_weather", city="Paris")], "It is 18C."),
        outcome="error" if error else "fail" if any(c.status == "fail" for c in checks) else "pass",
    )


HELD = result("expect.calls", "pass", "expectation")
MISSED = result("expect.calls", "fail", "expectation")


def test_wilson_is_held_to_hand_computed_intervals() -> None:
    """5 of 10: centre 0.5, half-width z*sqrt(p(1-p)/n + z^2/4n^2)/(1+z^2/n) = 0.2634; 0 of 5:
    the upper bound is z^2/(n+z^2) = 3.8415/8.8415."""
    low, high = wilson(0.5, 10)  # type: ignore[misc]
    assert (round(low, 4), round(high, 4)) == (0.2366, 0.7634)
    assert wilson(0, 5) == (0.0, pytest.approx(3.841459 / 8.841459, abs=1e-6))
    assert wilson(1, 0) is None


def test_newcombe_difference_matches_the_published_example() -> None:
    """Newcombe (1998), Statistics in Medicine 17:873-890, Table II, example (a): 56/70 vs 48/80,
    method 10 (the hybrid score interval): 0.0524 to 0.3339."""
    low, high = difference((48 / 80, 80), (56 / 70, 70))  # type: ignore[misc]
    assert (round(low, 4), round(high, 4)) == (0.0524, 0.3339)
    # one run each side cannot tell a drop from noise: the interval of -1 reaches past 0
    low, high = difference((1, 1), (0, 1))  # type: ignore[misc]
    assert low == -1 and 0 < high < 0.2


def test_the_headline_interval_uses_kishs_effective_runs() -> None:
    """Category A: two scenarios (1 of 1, 0 of 1); B: one (1 of 1). Each category weighs a half, so
    the runs weigh 1/4, 1/4 and 1/2: sum(w^2) = 3/8, n_eff = 8/3; the headline is (0.5 + 1)/2."""
    figure = Figure({"a": [(1, 1), (0, 1)], "b": [(1, 1)]})
    assert figure.share() == 0.75 and figure.effective_runs() == pytest.approx(8 / 3)
    low, high = wilson(0.75, 8 / 3)  # type: ignore[misc]
    assert figure.data() == (75.0, [round(100 * low, 1), round(100 * high, 1)], 2.7)
    assert Figure({"a": [(0, 0)]}).data() == (None, None, 0)  # nothing tested
    # repeats count: 3 of 4 runs of one scenario rest on 4 runs
    assert Figure({"a": [(3, 4)]}).effective_runs() == pytest.approx(4)


def test_a_run_succeeds_only_when_every_expectation_held_and_no_call_broke() -> None:
    assert run_success([HELD, result("protocol.wire", "fail")])  # compliance, not success
    assert run_success([HELD, result("expect.extra_calls", "warn", "expectation")])
    assert not run_success([MISSED])
    assert not run_success([HELD, result("protocol.arguments_schema", "fail")])
    assert not run_success([HELD, result("protocol.tools_delivered", "fail")])  # the endpoint failed it
    assert record_score(run("s", "single", HELD)) == 100.0
    assert record_score(run("s", "single", MISSED)) == 0.0
    assert record_score(run("s", "single", error=True)) is None  # never scored


def test_compliance_counts_call_turns_free_of_violations() -> None:
    """Two call turns and a final text turn; a wire warning at turn 1 and a leaked call at turn 2
    (a call turn too, violating): 3 call turns, 1 clean. A request-side quirk counts for nothing."""
    record = run(
        "s",
        "single",
        HELD,
        result("protocol.wire", "warn", turn=1),
        result("protocol.native_delivery", "fail", turn=2),
    )
    t = transcript([call("a")], [call("b")], "done")
    assert compliance_turns(dataclasses.replace(record, transcript=t)) == (3, 1)
    quirk = CheckResult.of(
        "protocol.wire", "protocol", 1.0, [Finding("wire.quirk:x", "warning", False, "worked around", 0)]
    )
    assert compliance_turns(dataclasses.replace(record, checks=(HELD, quirk), transcript=t)) == (2, 2)
    text_only = dataclasses.replace(record, checks=(HELD,), transcript=transcript(ParsedTurn(text="hi")))
    assert compliance_turns(text_only) == (0, 0)


def test_a_target_row_says_what_its_figures_rest_on() -> None:
    """A target most of whose runs are in error shows its figure and its run counts, and no grade."""
    scores = Scores()
    scores.add(run("a.1", "single", HELD))
    for index in range(5):
        scores.add(run(f"a.{index + 2}", "single", error=True))
    target = scores.summary().targets["t"]
    assert (target.score, target.runs, target.tested, target.errors) == (100.0, 6, 1, 5)
    assert target.grade is None and target.categories["single"].grade is None
    assert target.interval == [20.7, 100.0]  # one run: Wilson's 1 of 1
    scores.add(run("b.1", "single", MISSED))
    scores.add(run("b.2", "single", HELD, repeat=1))
    scores.add(run("b.2", "single", MISSED, repeat=0))
    target = scores.summary().targets["t"]
    assert target.scenarios["b.2"].score == 50 and target.scenarios["b.2"].tested == 2
    assert target.pass_at_1 == 0.5 and target.pass_all_k == pytest.approx(1 / 8)
