"""Tool arguments against a tool's JSON Schema: each (schema, arguments) pair is validated once,
and a second asking gives the same answer as the first, from the schema or its text alike."""

from __future__ import annotations

from harness import validation
from harness.model import ToolSpec

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "day": {"type": "string", "format": "date"}},
    "required": ["city"],
    "additionalProperties": False,
}


def messages(errors: list[object]) -> list[tuple[list[object], str]]:
    return [(list(e.absolute_path), e.message) for e in errors]  # type: ignore[attr-defined]


def test_each_pair_is_validated_once_with_the_same_answer() -> None:
    bad = {"day": "tomorrow", "extra": 1}
    first = validation.argument_errors(SCHEMA, bad)
    before = validation._errors.cache_info()
    again = validation.argument_errors(ToolSpec("t", "", SCHEMA).schema_text, dict(bad))
    after = validation._errors.cache_info()
    assert messages(first) == messages(again) and after.hits == before.hits + 1
    assert [m for _, m in messages(first)] == [
        "Additional properties are not allowed ('extra' was unexpected)",
        "'city' is a required property",
        "'tomorrow' is not a 'date'",
    ]
    assert validation.argument_errors(SCHEMA, bad, formats=False) != first  # formats are their own key
    assert validation.argument_errors(SCHEMA, {"city": "Paris", "day": "2026-11-25"}) == []


def test_values_json_cannot_hold_are_validated_as_they_are() -> None:
    errors = validation.argument_errors(SCHEMA, {"city": object()})
    ((path, message),) = messages(errors)
    assert path == ["city"] and message.endswith("is not of type 'string'")
