"""Declared tools end to end: the billing tool set (nested object, array of objects via $ref, enum,
date; a stateful Python tool) recorded against the simulator in two wire formats and replayed,
with its schema findings in the report."""

from __future__ import annotations

from pathlib import Path

from harness.api import load_scenarios, run
from harness.runner import RunConfig
from harness.targets import Target
from harness.targets_file import load_targets
from tests.helpers.cli import REPO

BILLING = load_scenarios(REPO / "scenarios", select=["billing.*"])


def test_billing_records_and_replays_on_openai_and_anthropic(tmp_path: Path) -> None:
    targets = [load_targets()[name] for name in ("sim-openai", "sim-anthropic")]
    assert {s.id for s in BILLING} >= {"billing.single.create_invoice", "billing.sequential.pay_invoice"}
    for mode in ("record", "replay"):
        result = run(BILLING, targets, RunConfig(mode=mode, cassettes=tmp_path / "c"))  # type: ignore[arg-type]
        assert result.scores == {"sim-anthropic": 100, "sim-openai": 100}, mode
        assert not result.errors
    pay = next(r for r in result.records if r.scenario == "billing.sequential.pay_invoice")
    balances = [e.result.content for e in pay.transcript.executions]
    assert (
        '"balance_due": 750.0' in balances[0] and '"balance_due": 0.0' in balances[1]
    )  # state kept in the run
    invoice = next(r for r in result.records if r.scenario == "billing.single.create_invoice")
    ((_, call),) = invoice.transcript.calls
    assert call.arguments and call.arguments["lines"][0]["quantity"] == 10
    assert call.arguments["customer"]["address"]["country"] == "PT"


def test_the_same_tool_set_serves_several_scenarios() -> None:
    users = {s.id: {t.toolset for t in s.tools} for s in BILLING}
    assert len(users) >= 2 and all(sets == {"billing"} for sets in users.values())


def test_arguments_against_the_schema_are_findings_with_their_json_pointer(tmp_path: Path) -> None:
    """The simulator deviating on purpose sends arguments that break the declared schema: the
    finding names each error's JSON pointer, and the tool still answers as declared."""
    deviant = Target.build(
        "sim-schema-violation", format="openai-chat", model="sim-deviant", base_url="sim~schema-violation"
    )
    (scenario,) = [s for s in BILLING if s.id == "billing.single.create_invoice"]
    result = run([scenario], [deviant], RunConfig(mode="live"))
    (record,) = result.records
    check = next(c for c in record.checks if c.id == "protocol.arguments_schema")
    assert check.status == "fail"
    (finding,) = check.findings
    assert "/: 'customer' is a required property" in finding.detail
    assert "/: Additional properties are not allowed ('unexpected' was unexpected)" in finding.detail
    assert record.transcript.executions[0].result.content.startswith('{"currency": "EUR"')  # answered
    assert any(f.check_id == "protocol.arguments_schema" for f in result.report.runs[0].findings)


def test_what_a_provider_would_refuse_in_a_declaration_is_reported(tmp_path: Path) -> None:
    """Gemini takes plain JSON Schema in parametersJsonSchema, but not a string ``format`` nor
    ``exclusiveMinimum``: reported for the Gemini target, not for OpenAI's."""
    targets = [load_targets()[name] for name in ("sim-openai", "sim-gemini")]
    result = run(BILLING, targets, RunConfig(mode="record", cassettes=tmp_path / "c"))
    notes = {target: {n.id: n for n in items} for target, items in result.report.notes.items()}
    gemini = notes["sim-gemini"]["wire.tool_declaration"]
    assert gemini.runs == len(BILLING)
    assert "wire.tool_declaration" not in notes.get("sim-openai", {})
    details = [
        f.detail
        for r in result.records
        if r.target.name == "sim-gemini"
        for f in r.findings()
        if f.check_id == "wire.tool_declaration"
    ]
    assert any("/properties/due_date: format 'date' on a string is not supported" in d for d in details)
    assert any("keyword 'exclusiveMinimum'" in d for d in details)
    assert result.scores["sim-gemini"] == 100  # a portability note, not the model's fault
