"""Expectations per phase (follow-ups) and the batch mode check, over hand-built transcripts."""

from pathlib import Path

from harness.checks import RunContext, run_checks
from harness.model import Finding
from tests.helpers.transcripts import call, scenario, transcript

PARIS = {"calls": [{"name": "get_weather", "args": {"city": "Paris"}}], "final": {"contains": "18"}}
LYON = {"calls": [{"name": "get_weather", "args": {"city": "Lyon"}}], "final": {"contains": "20"}}


def results(context: RunContext) -> dict[str, tuple[str, list[Finding]]]:
    return {r.id: (r.status, list(r.findings)) for r in run_checks(context)}


def test_each_follow_up_is_judged_on_its_own_turns(tmp_path: Path) -> None:
    s = scenario(
        tmp_path, category="multi_turn", expect=PARIS, follow_ups=[{"content": "And Lyon?", "expect": LYON}]
    )
    t = transcript(
        [call("get_weather", city="Paris")], "It is 18C.", [call("get_weather", city="Lyon")], "20C."
    )
    t.phases = [0, 2]
    r = results(RunContext(t, s))
    assert r["expect.calls"][0] == "pass" and r["expect.final"][0] == "pass"
    assert [f.detail.split(":")[0] for f in r["expect.calls"][1]] == ["opening", "follow-up 1"]
    assert r["expect.extra_calls"][0] == "pass"  # Lyon is not an extra call of the opening


def test_a_follow_up_call_made_in_the_wrong_phase_fails_there(tmp_path: Path) -> None:
    no_call = {"no_call": True, "final": {"contains": "Paris"}}
    s = scenario(
        tmp_path,
        category="multi_turn",
        expect=PARIS,
        follow_ups=[{"content": "Which city?", "expect": no_call}],
    )
    t = transcript(
        [call("get_weather", city="Paris")], "It is 18C.", [call("get_weather", city="Paris")], "Paris."
    )
    t.phases = [0, 2]
    status, findings = results(RunContext(t, s))["expect.no_call"]
    assert status == "fail"
    assert [f.detail for f in findings if not f.passed] == [
        "follow-up 1: expected no call; got get_weather(city='Paris')"
    ]


def test_a_follow_up_the_run_never_reached_is_not_reached_not_failed(tmp_path: Path) -> None:
    s = scenario(
        tmp_path, category="multi_turn", expect=PARIS, follow_ups=[{"content": "And Lyon?", "expect": LYON}]
    )
    t = transcript([call("get_weather", city="Paris")], [call("get_weather", city="Paris")], stop="max_turns")
    t.phases = [0]
    r = results(RunContext(t, s))
    reached = [f for f in r["expect.calls"][1] if f.detail.startswith("follow-up 1")]
    assert [(f.severity, f.detail) for f in reached] == [
        ("info", "follow-up 1: not reached: the conversation ended (max_turns) before follow-up 1")
    ]
    assert r["expect.turn_budget"][0] == "fail"  # the opening phase, where the model ran out of turns


def batch(tmp_path: Path, mode: str) -> dict[str, object]:
    cities = ["Paris", "Lyon", "Nice"]
    return {
        "calls": [{"name": "get_weather", "args": {"city": c}} for c in cities],
        "order": "any",
        "batch": mode,
    }


def test_a_one_turn_batch_answered_item_by_item_is_a_finding(tmp_path: Path) -> None:
    s = scenario(tmp_path, category="batch", expect=batch(tmp_path, "one_turn"))
    loop = transcript(*[[call("get_weather", city=c)] for c in ("Paris", "Lyon", "Nice")], "done")
    at_once = transcript(
        [call("get_weather", i, city=c) for i, c in enumerate(("Paris", "Lyon", "Nice"))], "done"
    )
    status, findings = results(RunContext(loop, s))["expect.batch"]
    assert status == "fail" and "turn 0: 1, turn 1: 1, turn 2: 1" in findings[0].detail
    assert "one turn with 3 calls" in findings[0].detail
    assert results(RunContext(loop, s))["expect.calls"][0] == "pass"  # the calls themselves are right
    assert results(RunContext(at_once, s))["expect.batch"][0] == "pass"


def test_a_per_item_batch_answered_at_once_is_a_finding(tmp_path: Path) -> None:
    s = scenario(tmp_path, category="batch", expect=batch(tmp_path, "per_item"), limits={"max_turns": 4})
    at_once = transcript(
        [call("get_weather", i, city=c) for i, c in enumerate(("Paris", "Lyon", "Nice"))], "done"
    )
    loop = transcript(*[[call("get_weather", city=c)] for c in ("Paris", "Lyon", "Nice")], "done")
    status, findings = results(RunContext(at_once, s))["expect.batch"]
    assert status == "fail" and "a per-item loop" in findings[0].detail
    assert results(RunContext(loop, s))["expect.batch"][0] == "pass"
