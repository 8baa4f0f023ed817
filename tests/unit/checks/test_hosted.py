"""The hosted MCP check: a call past the allow list, a call that skipped its approval, a listing
that failed; and the expectation checks counting the calls the provider's connector ran."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.checks import RunContext, run_checks
from harness.model import HOSTED_APPROVALS, HostedCall, HostedServer, Message, ParsedTurn
from harness.scenarios import Scenario
from tests.helpers.transcripts import scenario, transcript

CODE = HostedServer("codeindex", "stdio://codeindex", ("find_symbol",))
GATED = HostedServer("codeindex", "stdio://codeindex", ("find_symbol",), "always")


def run(
    case: Scenario,
    *turns: ParsedTurn,
    hosted: tuple[HostedServer, ...] = (CODE,),
    approved: tuple[str, ...] = (),
):  # type: ignore[no-untyped-def]
    t = transcript(*turns)
    if approved:
        t.messages = [
            Message("user", extra={HOSTED_APPROVALS: [{"id": i, "approve": True} for i in approved]})
        ]
    return {c.id: c for c in run_checks(RunContext(t, case, hosted=hosted))}


def hosted_call(
    name: str = "find_symbol", server: str = "codeindex", approval: str | None = None
) -> HostedCall:
    return HostedCall(
        "call", server, name, {"name": "Point"}, '{"name": "Point"}', "mcp_1", "found", approval=approval
    )


@pytest.fixture
def case(tmp_path: Path) -> Scenario:
    return scenario(
        tmp_path,
        category="mcp",
        tools=[{"mcp": "codeindex", "tools": ["find_symbol"]}],
        mcp_servers={
            "codeindex": {"command": "{python}", "args": ["-m", "harness.servers.mcp_fixture.server"]}
        },
        expect={
            "calls": [{"name": "mcp__codeindex__find_symbol", "args": {"name": "Point"}}],
            "final": {"contains": "geometry"},
        },
    )


def test_a_conformant_hosted_run_passes_and_meets_the_scenario(case: Scenario) -> None:
    listing = HostedCall("list_tools", "codeindex", tools=["find_symbol"])
    checks = run(case, ParsedTurn("in geometry.py", hosted=[listing, hosted_call()]))
    assert checks["protocol.hosted_mcp"].status == "pass"
    assert checks["expect.calls"].status == "pass"  # the connector's call counts as the scenario's
    assert checks["expect.final"].status == "pass"
    assert checks["protocol.mcp_servers"].status == "n/a"  # the harness ran no server


def test_no_hosted_servers_is_not_applicable(case: Scenario) -> None:
    assert run(case, ParsedTurn("hi"), hosted=())["protocol.hosted_mcp"].status == "n/a"


def test_a_call_past_the_allow_list_or_to_an_undeclared_server_fails(case: Scenario) -> None:
    turn = ParsedTurn("done", hosted=[hosted_call("delete_everything"), hosted_call(server="elsewhere")])
    check = run(case, turn)["protocol.hosted_mcp"]
    assert check.status == "fail"
    details = [f.detail for f in check.findings if not f.passed]
    assert any("'delete_everything' is not in allowed_tools ['find_symbol']" in d for d in details)
    assert any("declared no MCP server 'elsewhere'" in d for d in details)


@pytest.mark.parametrize(
    ("approval", "approved"),
    [
        (None, ()),  # ran at once: no approval request named
        ("mcpr_1", ()),  # names a request the client never answered
        ("mcpr_forged", ("mcpr_1",)),  # names another request than the one approved
    ],
)
def test_a_call_that_skipped_its_approval_fails(
    case: Scenario, approval: str | None, approved: tuple[str, ...]
) -> None:
    asked = HostedCall("approval_request", "codeindex", "find_symbol", {}, "{}", "mcpr_1")
    turns = (
        ParsedTurn(None, hosted=[asked]),
        ParsedTurn("geometry", hosted=[hosted_call(approval=approval)]),
    )
    check = run(case, *turns, hosted=(GATED,), approved=approved)["protocol.hosted_mcp"]
    assert check.status == "fail"
    assert "ran without the client's approval" in check.findings[0].detail


def test_an_approved_call_passes(case: Scenario) -> None:
    asked = HostedCall("approval_request", "codeindex", "find_symbol", {}, "{}", "mcpr_1")
    turns = (
        ParsedTurn(None, hosted=[asked]),
        ParsedTurn("geometry", hosted=[hosted_call(approval="mcpr_1")]),
    )
    assert run(case, *turns, hosted=(GATED,), approved=("mcpr_1",))["protocol.hosted_mcp"].status == "pass"


def test_a_failed_or_overbroad_listing_is_found(case: Scenario) -> None:
    failed = HostedCall("list_tools", "codeindex", error="424: could not reach the server")
    broad = HostedCall("list_tools", "codeindex", tools=["find_symbol", "drop_database"])
    check = run(case, ParsedTurn("no", hosted=[failed, broad]))["protocol.hosted_mcp"]
    assert check.status == "fail"
    severities = {f.severity: f.detail for f in check.findings}
    assert "could not reach the server" in severities["error"]
    assert "['drop_database']" in severities["warning"]


def test_an_expected_call_that_only_the_harness_could_have_made_is_missing(case: Scenario) -> None:
    assert run(case, ParsedTurn("geometry"))["expect.calls"].status == "fail"
