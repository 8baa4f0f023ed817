from pathlib import Path

from harness.checks import RunContext, all_checks, run_checks
from harness.model import Finding, ParsedTurn, ProviderError, ToolCall
from tests.helpers.transcripts import call, scenario, transcript


def results(context: RunContext) -> dict[str, tuple[str, list[Finding]]]:
    return {r.id: (r.status, list(r.findings)) for r in run_checks(context)}


def failed(findings: list[Finding]) -> list[str]:
    return [f.detail for f in findings if not f.passed]


def test_every_check_is_documented() -> None:
    checks = all_checks()
    assert len(checks) >= 15
    assert all(c.doc for c in checks)


def test_a_clean_run_passes_every_applicable_check(tmp_path: Path) -> None:
    s = scenario(
        tmp_path,
        expect={"calls": [{"name": "get_weather", "args": {"city": "Paris"}}], "final": {"contains": "18"}},
    )
    r = results(RunContext(transcript([call("get_weather", city="Paris")], "It is 18C."), s))
    assert {k: v[0] for k, v in r.items() if v[0] != "n/a"} == {
        "protocol.truncation": "pass",
        "protocol.template_leak": "pass",
        "protocol.wire": "pass",
        "protocol.arguments_json": "pass",
        "protocol.arguments_schema": "pass",
        "protocol.known_tool": "pass",
        "protocol.call_ids": "pass",
        "protocol.native_delivery": "pass",
        "protocol.provider_error": "pass",
        "expect.calls": "pass",
        "expect.extra_calls": "pass",
        "expect.final": "pass",
        "expect.turn_budget": "pass",
        "expect.no_loop": "pass",
    }


def test_argument_mismatch_shows_matcher_reasons_and_a_deepdiff(tmp_path: Path) -> None:
    s = scenario(
        tmp_path, expect={"calls": [{"name": "get_weather", "args": {"city": {"regex": "^Paris$"}}}]}
    )
    status, findings = results(RunContext(transcript([call("get_weather", city="Lyon")], "x"), s))[
        "expect.calls"
    ]
    assert status == "fail"
    (finding,) = findings
    assert "closest call get_weather(city='Lyon')" in finding.detail
    assert "expected to match /^Paris$/, got 'Lyon'" in finding.detail
    assert finding.evidence and "root['city']" in finding.evidence["deepdiff"]


def test_schema_errors_are_all_listed(tmp_path: Path) -> None:
    bad = ToolCall("get_weather", {"town": 3}, '{"town": 3}', "c1", "c1")
    status, findings = results(RunContext(transcript([bad], "x"), scenario(tmp_path)))[
        "protocol.arguments_schema"
    ]
    assert status == "fail"
    errors = findings[0].evidence["errors"]  # type: ignore[index]
    assert any("'city' is a required property" in e for e in errors)
    assert any("'town' was unexpected" in e for e in errors)


def test_invalid_json_unknown_tool_and_duplicate_ids(tmp_path: Path) -> None:
    broken = ToolCall("get_weather", None, '{"city": "Par', "dup", "dup", parse_error="not JSON")
    ghost = ToolCall("teleport", {}, "{}", "dup", "dup", 1)
    r = results(RunContext(transcript([broken, ghost], "x"), scenario(tmp_path)))
    assert failed(r["protocol.arguments_json"][1]) == ["call 'get_weather': not JSON"]
    assert "unknown tool 'teleport'" in failed(r["protocol.known_tool"][1])[0]
    assert failed(r["protocol.call_ids"][1]) == ["call ids reused within the conversation: ['dup']"]


def test_tool_choice_honoured_on_the_first_turn(tmp_path: Path) -> None:
    required = scenario(tmp_path, tool_choice="required")
    assert results(RunContext(transcript("no call"), required))["protocol.tool_choice"][0] == "fail"
    named = scenario(tmp_path, tool_choice={"name": "get_weather"})
    other = transcript([call("get_time", city="x")], "x")
    assert results(RunContext(other, named))["protocol.tool_choice"][0] == "fail"
    # an endpoint without tool_choice support gets a warning, not an error
    assert results(RunContext(other, named, native_tool_choice=False))["protocol.tool_choice"][0] == "warn"


def test_parallel_order_extra_and_no_call(tmp_path: Path) -> None:
    expect = {
        "calls": [
            {"name": "get_weather", "args": {"city": "A"}},
            {"name": "get_weather", "args": {"city": "B"}},
        ],
        "parallel": True,
    }
    s = scenario(tmp_path, expect=expect)
    sequential = transcript([call("get_weather", city="B")], [call("get_weather", city="A")], "x")
    r = results(RunContext(sequential, s))
    assert r["expect.calls"][0] == "pass"
    assert r["expect.parallel"][0] == "fail" and r["expect.order"][0] == "fail"
    together = transcript(
        [
            call("get_weather", 0, city="A"),
            call("get_weather", 1, city="B"),
            call("get_weather", 2, city="C"),
        ],
        "x",
    )
    r = results(RunContext(together, s))
    assert (r["expect.parallel"][0], r["expect.order"][0], r["expect.extra_calls"][0]) == (
        "pass",
        "pass",
        "warn",
    )
    irrelevant = scenario(tmp_path, expect={"calls": []})
    assert results(RunContext(together, irrelevant))["expect.no_call"][0] == "fail"
    assert results(RunContext(transcript("51"), irrelevant))["expect.no_call"][0] == "pass"


def test_final_budget_loop_and_recovery(tmp_path: Path) -> None:
    s = scenario(tmp_path, expect={"final": {"contains": "sunny"}})
    stuck = transcript([call("get_weather", city="A")], stop="max_turns")
    r = results(RunContext(stuck, s))
    assert "no final answer: the run stopped (max_turns) after a tool call" in failed(r["expect.final"][1])
    assert r["expect.turn_budget"][0] == "fail"
    recovered = transcript([call("get_weather", city="A")], "sunny", errors={0})
    assert results(RunContext(recovered, s))["expect.recovery"][0] == "pass"
    rejected = transcript(
        [call("get_weather", city="A")],
        ParsedTurn(error=ProviderError(400, "bad tool result")),
        stop="provider_error",
        errors={0},
    )
    r = results(RunContext(rejected, s))
    assert r["expect.recovery"][0] == "fail" and r["protocol.provider_error"][0] == "fail"
    assert r["protocol.provider_error"][1][0].turn_index == 1


def test_leaked_call_in_native_mode_fails_delivery(tmp_path: Path) -> None:
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    r = results(RunContext(transcript(text), scenario(tmp_path)))
    assert r["protocol.native_delivery"][0] == "fail"
    assert (
        results(RunContext(transcript(text), scenario(tmp_path), protocol="hermes"))[
            "protocol.native_delivery"
        ][0]
        == "n/a"
    )


def test_wire_findings_fold_into_one_check_with_evidence(tmp_path: Path) -> None:
    turn = ParsedTurn(
        tool_calls=[call("get_weather", city="A")],
        findings=[
            Finding("wire.arguments_object_not_string", "warning", False, "object", 0),
            Finding("wire.text_with_tool_calls", "info", False, "text too", 0),
        ],
    )
    status, findings = results(RunContext(transcript(turn, "x"), scenario(tmp_path)))["protocol.wire"]
    assert status == "warn"
    assert [(f.check_id, f.turn_index) for f in findings] == [
        ("wire.arguments_object_not_string", 0),
        ("wire.text_with_tool_calls", 0),
    ]
