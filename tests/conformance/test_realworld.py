"""Every real recorded case under tests/data/realworld parses to exactly its expected block."""

from __future__ import annotations

from typing import Any

import pytest

from harness.model import ParsedTurn, WireResponse
from harness.providers import adapter_class, formats
from tests.helpers.realworld import UNRECORDED, cases, wire_quirks

FORMATS = tuple(formats())  # every registered format
ALL = [c for c in cases() if c["wire_format"] in FORMATS]


def parse_case(case: dict[str, Any]) -> ParsedTurn:
    response = case["response"]
    headers = {"content-type": response["content_type"]} if response["content_type"] else {}
    adapter = adapter_class(case["wire_format"])()
    return adapter.parse(
        WireResponse(response["status"], response["body"], headers), stream=response["stream"]
    )


def observed(turn: ParsedTurn) -> dict[str, Any]:
    """The parsed turn in the shape of a case's ``expected`` block."""
    return {
        "tool_calls": [{"id": c.wire_id, "name": c.name, "arguments": c.arguments} for c in turn.tool_calls],
        "text": turn.text,
        "finish_reason": turn.finish_reason,
        "error": None
        if turn.error is None
        else {"status": turn.error.status, "code": turn.error.code, "message": turn.error.message},
    }


def test_there_are_cases_for_every_format() -> None:
    recorded = {c["wire_format"] for c in ALL}
    assert recorded == set(FORMATS) - set(UNRECORDED), "tests/data/realworld is missing or incomplete"
    assert not recorded & set(UNRECORDED), "a format listed as unrecorded has cases now: take it off the list"


@pytest.mark.parametrize("case", ALL, ids=[c["id"] for c in ALL])
def test_case_parses_to_expected(case: dict[str, Any]) -> None:
    assert observed(parse_case(case)) == case["expected"]


# Quirks the adapters report under another id, or that are not deviations of the wire.
EQUIVALENT = {
    "error_failed_generation": None,  # an error response: the error itself is the finding
    "tool_call_json_in_failed_generation": None,
    "tool_markup_in_failed_generation": None,
    "error_upstream_raw_in_metadata": None,
    "error_envelope_detail": None,
    "finish_reason_integer_enum": "wire.finish_reason_integer_enum",
    # a call written into the text: protocol.native_delivery reads it there (test_audit_recordings.py)
    "tool_markup_in_text": None,
}


@pytest.mark.parametrize("case", ALL, ids=[c["id"] for c in ALL])
def test_case_quirks_become_findings(case: dict[str, Any]) -> None:
    found = {f.check_id for f in parse_case(case).findings}
    for quirk in wire_quirks(case):
        expected = EQUIVALENT.get(quirk, f"wire.{quirk}")
        if expected is not None:
            assert expected in found, f"quirk {quirk} not reported; findings: {sorted(found)}"
