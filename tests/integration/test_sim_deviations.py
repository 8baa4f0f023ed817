"""The simulator as the harness's oracle: each deviation must be caught by the check made for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import scenarios
from harness.api import run_targets as run
from harness.checks.scoring import BROKEN_CALL, PRECONDITIONS, compliance_turns
from harness.records import CheckResult, RunRecord
from harness.runner import RunConfig
from harness.servers.sim.deviations import DEVIATIONS
from harness.servers.sim.formats import FORMATS
from harness.targets import Target
from tests.helpers.cli import REPO

SUITE = {s.id: s for s in scenarios.load([REPO / "scenarios"])}

# deviation -> (stream, scenario, check that must not pass, finding id it must report)
CAUGHT = {
    "args-object": (False, "weather.single.paris", "protocol.wire", "wire.arguments_object_not_string"),
    "args-invalid-json": (True, "weather.single.paris", "protocol.arguments_json", "protocol.arguments_json"),
    "missing-ids": (False, "weather.single.paris", "protocol.wire", "wire.missing_id"),
    "duplicate-ids": (False, "weather.parallel.two_cities", "protocol.wire", "wire.duplicate_tool_call_ids"),
    "stream-without-done": (True, "weather.single.paris", "protocol.wire", "wire.stream_without_done"),
    "error-in-200": (True, "weather.single.paris", "protocol.provider_error", "protocol.provider_error"),
    "server-error": (False, "weather.single.paris", "protocol.provider_error", "protocol.provider_error"),
    "unknown-tool": (False, "weather.single.paris", "protocol.known_tool", "protocol.known_tool"),
    "schema-violation": (
        False,
        "weather.single.paris",
        "protocol.arguments_schema",
        "protocol.arguments_schema",
    ),
    "no-calls": (False, "tool_choice.required.weather", "protocol.tool_choice", "protocol.tool_choice"),
    "text-leak": (True, "weather.single.paris", "protocol.native_delivery", "protocol.native_delivery"),
}


# The wire deviations of the Responses API, on an openai-responses target: the chat ones that apply, and
# what Responses servers have been seen to do (harness/servers/sim/wire_responses.py).
RESPONSES_CAUGHT = {
    "args-object": (False, "weather.single.paris", "protocol.wire", "wire.arguments_object_not_string"),
    "args-invalid-json": (True, "weather.single.paris", "protocol.arguments_json", "protocol.arguments_json"),
    "missing-ids": (False, "weather.single.paris", "protocol.wire", "wire.function_call_without_call_id"),
    "duplicate-ids": (False, "weather.parallel.two_cities", "protocol.wire", "wire.duplicate_tool_call_ids"),
    "error-in-200": (True, "weather.single.paris", "protocol.provider_error", "protocol.provider_error"),
    "server-error": (False, "weather.single.paris", "protocol.provider_error", "protocol.provider_error"),
    "call-as-text": (True, "weather.single.paris", "protocol.wire", "wire.call_streamed_as_text"),
    "call-id-changed": (
        True,
        "weather.single.paris",
        "protocol.wire",
        "wire.completed_output_call_ids_differ",
    ),
    "parallel-wrapper": (False, "weather.parallel.two_cities", "protocol.wire", "wire.parallel_wrapper_call"),
    "orphan-deltas": (
        True,
        "weather.single.paris",
        "protocol.wire",
        "wire.event_item_id_unknown_matched_by_output_index",
    ),
    "items-out-of-order": (
        True,
        "weather.parallel.two_cities",
        "protocol.wire",
        "wire.output_items_out_of_order",
    ),
    "strict-normalised": (
        False,
        "calendar.single.personal_events",
        "protocol.wire",
        "wire.strict_normalised",
    ),
}
# Hosted MCP deviations, on a Responses target whose provider runs the scenario's MCP server
# (hosted_mcp): the connector oversteps what the request allowed.
HOSTED_CAUGHT = {
    "hosted-unapproved": (
        {"require_approval": "always"},
        "protocol.hosted_mcp",
        "ran without the client's approval",
    ),
    "hosted-disallowed-tool": ({}, "protocol.hosted_mcp", "is not in allowed_tools"),
}
ORACLES = {
    **{("openai-chat", deviation): caught for deviation, caught in CAUGHT.items()},
    **{("openai-responses", deviation): caught for deviation, caught in RESPONSES_CAUGHT.items()},
}


def check(record: RunRecord, check_id: str) -> CheckResult:
    return next(c for c in record.checks if c.id == check_id)


def test_every_deviation_has_an_oracle() -> None:
    # rate-limit is retried (below); noisy is the sampling noise vendor verification must not fail
    # on (tests/integration/test_verify.py)
    # fail-share, the simulator of known quality, is held to the headline (test_headline.py)
    # reasoning-required is held to the loop passing and an agent failing (test_reasoning_sim.py)
    others = {"rate-limit", "noisy", "fail-share", "reasoning-required"}
    assert set(CAUGHT) | set(RESPONSES_CAUGHT) | set(HOSTED_CAUGHT) | others == set(DEVIATIONS)
    # each format's own wire deviations, each on that format
    hosted = {("openai-responses", d) for d in HOSTED_CAUGHT}
    assert {(name, d) for name, fmt in FORMATS.items() for d in fmt.deviations} <= set(ORACLES) | hosted


@pytest.mark.parametrize(
    ("fmt", "deviation"),
    [
        *(("openai-responses", d) for d in sorted(HOSTED_CAUGHT)),
        ("anthropic-messages", "hosted-disallowed-tool"),
    ],
)
def test_each_hosted_mcp_deviation_is_caught(fmt: str, deviation: str, tmp_path: Path) -> None:
    """On the Responses connector (both), and on Anthropic's (which asks no approval)."""
    settings, check_id, detail = HOSTED_CAUGHT[deviation]
    target = Target.build(
        f"sim-{deviation}",
        format=fmt,
        model="sim-deviant",
        base_url=f"sim~{deviation}",
        hosted_mcp=settings,
        retries=0,
    )
    scenario = SUITE["mcp.single.find_symbol"]
    (record,) = run([target], [scenario], RunConfig(mode="live", results=tmp_path / "r.jsonl"))
    assert record.error is None, record.error
    result = check(record, check_id)
    assert result.status == "fail", result
    assert any(detail in f.detail for f in result.findings if not f.passed), result.findings


@pytest.mark.parametrize(("fmt", "deviation"), sorted(ORACLES), ids=lambda v: v)
def test_each_deviation_is_caught_by_its_check(fmt: str, deviation: str, tmp_path: Path) -> None:
    stream, scenario_id, check_id, finding_id = ORACLES[(fmt, deviation)]
    target = Target.build(
        f"sim-{deviation}",
        format=fmt,
        model="sim-deviant",
        base_url=f"sim~{deviation}",
        stream=stream,
        retries=0,
    )
    assert target.simulated
    (record,) = run([target], [SUITE[scenario_id]], RunConfig(mode="live", results=tmp_path / "r.jsonl"))
    assert record.error is None, record.error
    result = check(record, check_id)
    assert result.status in ("fail", "warn"), result
    assert any(f.check_id == finding_id and not f.passed for f in result.findings), result.findings
    if check_id in BROKEN_CALL | PRECONDITIONS:  # the call or the turn is broken: no success
        assert record.score == 0
    else:  # a wire deviation: the task may be done, but the turn that made the calls is not compliant
        turns, clean = compliance_turns(record)
        assert clean < turns, (turns, clean)


def test_rate_limits_are_retried_and_noted(tmp_path: Path) -> None:
    target = Target.build(
        "sim-rate-limit", format="openai-chat", model="sim-deviant", base_url="sim~rate-limit"
    )
    (record,) = run(
        [target], [SUITE["weather.single.paris"]], RunConfig(mode="live", results=tmp_path / "r.jsonl")
    )
    assert record.score == 100, [c for c in record.checks if c.status != "pass"]
    notes = [f for f in check(record, "protocol.wire").findings if f.check_id == "transport.retried"]
    assert notes and "HTTP 429" in notes[0].detail


@pytest.mark.parametrize("fmt", ["openai-chat", "openai-responses"])
def test_the_conformant_profile_passes_every_check(fmt: str, tmp_path: Path) -> None:
    target = Target.build("sim", format=fmt, model="sim-conformant", base_url="sim", stream=True)
    # MCP runs live elsewhere; a negative scenario is answered as the format's provider answers it
    suite = [s for s in SUITE.values() if not s.mcp_servers and s.expect.refused is None]
    records = run([target], suite, RunConfig(mode="live", results=tmp_path / "r.jsonl"))
    assert {r.score for r in records} == {100}
    failed = {(r.scenario, c.id) for r in records for c in r.checks if c.status in ("fail", "warn")}
    assert failed == set()
