"""Switching wires (:mod:`harness.analysis.migration`): which targets form a migration group, and
each difference between their wires named with its check, status, cause and finding."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import pytest

from harness.analysis.migration import Migrations, Verdict, cause_of
from harness.checks.attribution import not_reached
from harness.checks.scoring import Scores
from harness.model import Finding, Usage
from harness.records import CheckResult, RunError, RunRecord, TargetInfo
from harness.reports import html, markdown
from harness.reports.json_report import build
from harness.reports.report import Report
from tests.helpers.transcripts import call, transcript

CHAT = TargetInfo(
    "chat", "openai-chat", "m", False, False, "native", "openai", endpoint="https://api.example.com"
)
RESPONSES = dataclasses.replace(CHAT, name="responses", format="openai-responses", profile="openai-responses")
LEAKY = "wire.arguments_object_not_string"


def passed(check_id: str, kind: str = "protocol") -> CheckResult:
    return CheckResult.of(check_id, kind, 1.0, [Finding(check_id, "info", True, "ok")])  # type: ignore[arg-type]


def failed(
    check_id: str, detail: str, kind: str = "protocol", finding_id: str = "", warn: bool = False
) -> CheckResult:
    finding = Finding(finding_id or check_id, "warning" if warn else "error", False, detail, 0)
    return CheckResult.of(check_id, kind, 1.0, [finding])  # type: ignore[arg-type]


def na(check_id: str) -> CheckResult:
    return CheckResult.of(check_id, "protocol", 1.0, [])


GOOD = (passed("expect.calls", "expectation"), passed("protocol.wire"), passed("protocol.call_ids"))


def run(
    info: TargetInfo, scenario: str, *checks: CheckResult, repeat: int = 0, error: bool = False
) -> RunRecord:
    return RunRecord(
        target=info,
        scenario=scenario,
        category=scenario.split(".")[1],
        repeat=repeat,
        mode="replay",
        score=None,
        passed=False,
        error=RunError("TransportError", "turn 0: no response", cause="transport") if error else None,
        checks=checks,
        usage=Usage(),
        transcript=transcript([call("get_weather", city="Paris")], "It is 18C."),
        outcome="error" if error else "fail" if any(c.status == "fail" for c in checks) else "pass",
    )


def groups(records: Iterable[RunRecord]) -> list[list[str]]:
    migrations = Migrations()
    for record in records:
        migrations.add(record)
    return migrations.components()


def report(records: list[RunRecord]) -> Report:
    return build(records, "2025-01-01T00:00:00+00:00")


def test_the_same_model_endpoint_stream_and_mode_in_two_wires_is_a_group() -> None:
    other = [
        dataclasses.replace(RESPONSES, name="streamed", stream=True),  # another stream setting
        dataclasses.replace(RESPONSES, name="elsewhere", endpoint="https://gateway.example.com"),
        dataclasses.replace(RESPONSES, name="prompted", mode="prompted:json"),
        dataclasses.replace(RESPONSES, name="bigger", model="m-large"),
        dataclasses.replace(CHAT, name="chat-again"),  # the same wire: a group needs two
        dataclasses.replace(
            RESPONSES, name="old", endpoint=None
        ),  # results written before endpoints were kept
    ]
    found = groups(run(info, "w.single.x", *GOOD) for info in (CHAT, RESPONSES, *other))
    assert found == [["chat", "chat-again", "responses"]]
    assert groups(run(info, "w.single.x", *GOOD) for info in (CHAT, *other)) == []


def test_migrates_from_joins_another_endpoint_and_model_but_never_two_of_one_wire() -> None:
    deviant = dataclasses.replace(RESPONSES, name="deviant", endpoint="sim~args-object", migrates_from="chat")
    assert groups(run(i, "w.single.x", *GOOD) for i in (CHAT, deviant)) == [["chat", "deviant"]]
    # the target it names did not run: nothing to compare
    assert groups([run(deviant, "w.single.x", *GOOD)]) == []
    # it joins the rest of that target's group
    found = groups(run(i, "w.single.x", *GOOD) for i in (CHAT, RESPONSES, deviant))
    assert found == [["chat", "deviant", "responses"]]


def test_each_difference_names_its_check_status_cause_and_finding() -> None:
    wire = failed("protocol.wire", "arguments came as a JSON object", finding_id=LEAKY, warn=True)
    missed = failed("expect.calls", "expected a call to 'get_weather'; calls made: no call", "expectation")
    records = [
        run(CHAT, "w.single.paris", *GOOD),
        run(RESPONSES, "w.single.paris", missed, wire, passed("protocol.call_ids")),
        run(CHAT, "w.single.tokyo", *GOOD),
        run(RESPONSES, "w.single.tokyo", *GOOD),
    ]
    (group,) = report(records).migrations
    assert [r.target for r in group.targets] == ["chat", "responses"]
    assert (group.model, group.endpoint, group.stream, group.mode) == (
        "m",
        "https://api.example.com",
        False,
        "native",
    )
    assert group.compared == 2 and not group.declared
    (found,) = group.differences
    assert found.scenario == "w.single.paris" and found.category == "single"
    assert found.outcome == {"chat": Verdict("pass"), "responses": Verdict("fail", "model")}
    assert {c.check: c.targets["responses"] for c in found.checks} == {
        "expect.calls": Verdict("fail", "model", "expected a call to 'get_weather'; calls made: no call"),
        "protocol.wire": Verdict("warn", "endpoint", f"{LEAKY}: arguments came as a JSON object", [LEAKY]),
    }
    assert all(c.targets["chat"] == Verdict("pass") for c in found.checks)
    assert [(c.check, c.target, c.status, c.cause, c.scenarios) for c in group.changes] == [
        ("outcome", "responses", "fail", "model", 1),
        ("expect.calls", "responses", "fail", "model", 1),
        ("protocol.wire", "responses", "warn", "endpoint", 1),
    ]
    # two scenarios each: the figures cannot tell 100 from 50, and the report says so
    assert group.apart == []
    text = markdown.render(report(records))
    section = text[text.index("## Switching wires") :]
    assert "cannot tell these wires apart" in section
    assert (
        "protocol.wire warn on responses, caused by the endpoint (wire.arguments_object_not_string)"
        in section
    )
    missed = "(model: expected a call to 'get_weather'; calls made: no call)"
    assert f"  - `expect.calls`: pass on chat; fail on responses {missed}" in section
    built = report(records)
    assert 'id="migrations"' in html.render(built)
    assert 'href="#run-responses/w.single.paris/0"' in html.wire_table(built.migrations[0])


def test_a_check_that_passed_on_one_wire_and_did_not_apply_on_another_is_no_difference() -> None:
    records = [
        run(CHAT, "w.single.x", *GOOD),
        run(RESPONSES, "w.single.x", GOOD[0], GOOD[1], na("protocol.call_ids")),  # a wire without ids
    ]
    (group,) = report(records).migrations
    assert group.compared == 1 and group.differences == [] and group.changes == []
    assert "No scenario differs between them (1 compared)." in markdown.render(report(records))


def test_an_error_names_its_cause_and_disagreeing_repeats_their_shares() -> None:
    records = [
        run(CHAT, "w.single.x", *GOOD),
        run(RESPONSES, "w.single.x", error=True),
        run(CHAT, "w.parallel.y", *GOOD),
        run(CHAT, "w.parallel.y", *GOOD, repeat=1),
        run(RESPONSES, "w.parallel.y", *GOOD),
        run(RESPONSES, "w.parallel.y", failed("expect.calls", "no call", "expectation"), *GOOD[1:], repeat=1),
    ]
    (group,) = report(records).migrations
    first, second = group.differences
    assert first.scenario == "w.parallel.y"  # by category, then scenario
    assert first.outcome["responses"] == Verdict("fail 1/2, pass 1/2", "model")
    assert first.checks[0].targets["responses"] == Verdict("fail 1/2, pass 1/2", "model", "no call")
    assert second.outcome["responses"] == Verdict("error", "transport", "turn 0: no response")
    assert second.checks == []  # nothing was tested: no check to compare


def test_the_figures_tell_wires_apart_only_outside_the_noise() -> None:
    records = []
    for index in range(40):
        records.append(run(CHAT, f"w.single.s{index}", *GOOD))
        records.append(run(RESPONSES, f"w.single.s{index}", failed("expect.calls", "no call", "expectation")))
    (group,) = report(records).migrations
    (apart,) = group.apart
    assert (apart.first, apart.second, apart.change) == ("chat", "responses", -100.0)
    assert apart.interval[1] < 0
    assert "responses against chat: -100.0 points" in markdown.render(report(records))


def test_no_group_leaves_no_trace_in_any_report() -> None:
    records = [run(CHAT, "w.single.x", *GOOD)]
    built = report(records)
    assert built.migrations == [] and "migrations" not in built.to_data()
    assert "Switching wires" not in markdown.render(built)
    assert 'id="migrations"' not in html.render(built)


@pytest.mark.parametrize(
    ("check_id", "status", "finding", "cause"),
    [
        ("expect.calls", "fail", None, "model"),
        ("protocol.arguments_json", "fail", None, "model"),
        ("protocol.tool_choice", "fail", None, "model"),  # the endpoint honours it: the model ignored it
        ("protocol.tool_choice", "warn", None, "endpoint"),  # the endpoint does not honour it
        ("protocol.tools_delivered", "fail", None, "endpoint"),
        ("protocol.provider_error", "fail", None, "endpoint"),
        ("protocol.wire", "warn", None, "endpoint"),
        ("protocol.call_ids", "fail", None, "endpoint"),
        ("expect.final", "n/a", not_reached("the endpoint failed turn 0"), "endpoint"),
        ("protocol.agent_conduct", "fail", None, "agent"),
    ],
)
def test_who_caused_a_verdict(check_id: str, status: str, finding: Finding | None, cause: str) -> None:
    assert cause_of(check_id, status, finding) == cause


def test_the_summary_figures_are_the_scores_table_s() -> None:
    records = [
        run(CHAT, "w.single.x", *GOOD),
        run(RESPONSES, "w.single.x", failed("expect.calls", "x", "expectation")),
    ]
    scores = Scores()
    for record in records:
        scores.add(record)
    summary = scores.summary()
    (group,) = report(records).migrations
    for row in group.targets:
        target = summary.targets[row.target]
        assert (row.score, row.interval, row.compliance) == (target.score, target.interval, target.compliance)


def test_targets_differ_by_the_shares_of_their_statuses_not_by_their_counts() -> None:
    """The same counts are no difference, nor are the same shares over more repeats (1 fail of 2
    and 2 of 4); another share, or another set of finding ids, is."""
    from collections import Counter

    from harness.analysis.migration import _differ, _Seen

    def seen(**counts: int) -> _Seen:
        return _Seen(
            Counter(
                {(status, (f"{status}.id",) if status == "fail" else ()): n for status, n in counts.items()}
            )
        )

    assert not _differ([seen(passed=3), seen(passed=3), seen(passed=3)])
    assert not _differ([seen(passed=1, fail=1), seen(passed=2, fail=2), seen(passed=3, fail=3)])
    assert _differ([seen(passed=1, fail=1), seen(passed=2, fail=1)])
    assert _differ([seen(passed=2), seen(passed=2), seen(fail=2)])
    other = _Seen(Counter({("fail", ("other.id",)): 1, ("passed", ()): 1}))
    assert _differ([seen(passed=1, fail=1), other])
