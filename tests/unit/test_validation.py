"""Tool arguments against a tool's JSON Schema: each (schema, arguments) pair is validated once,
and a second asking gives the same answer as the first, from the schema or its text alike."""

from __future__ import annotations

from pathlib import Path

import pytest

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


def test_a_ref_to_a_file_is_never_fetched(tmp_path: Path) -> None:
    """jsonschema's default registry would read the file (with only a DeprecationWarning);
    the harness's validators resolve references inside the schema alone."""
    (tmp_path / "s.json").write_text('{"type": "string"}')
    schema = {"type": "object", "properties": {"a": {"$ref": (tmp_path / "s.json").as_uri()}}}
    with pytest.raises(Exception, match="Unresolvable"):
        validation.argument_errors(schema, {"a": 1})


@pytest.mark.parametrize(
    ("schema", "found"),
    [
        (
            {"properties": {"a": {"$ref": "#/$defs/nope"}}},
            [(("properties", "a", "$ref"), "points to nothing")],
        ),
        ({"$ref": "#"}, [(("$ref",), "references loop without end: # -> #")]),
        (
            {"anyOf": [{"$ref": "#"}]},
            [(("anyOf", 0, "$ref"), "references loop without end: # -> #/anyOf/0 -> #")],
        ),
        ({"properties": {"a": {"$ref": "other.json#/x"}}}, [(("properties", "a", "$ref"), "never fetches")]),
        ({"properties": {"a": {"$ref": "#name"}}, "$defs": {"x": {"$anchor": "name"}}}, []),
        ({"properties": {"a": {"$ref": "#/$defs/a~1b"}}, "$defs": {"a/b": {"type": "string"}}}, []),
        ({"properties": {"child": {"$ref": "#"}}}, []),  # recursion that steps into the value
        ({"properties": {"a": {"enum": [{"$ref": "nowhere"}]}}}, []),  # data, not a reference
    ],
)
def test_ref_problems(schema: dict[str, object], found: list[tuple[tuple[object, ...], str]]) -> None:
    problems = validation.ref_problems(schema)
    assert [path for path, _ in problems] == [path for path, _ in found]
    assert all(part in message for (_, message), (_, part) in zip(problems, found, strict=True))


def test_a_reference_loop_nested_thousands_deep_costs_no_stack() -> None:
    schema: dict[str, object] = {"$ref": "#/$defs/d0"}
    defs = {f"d{i}": {"allOf": [{"$ref": f"#/$defs/d{i + 1}"}]} for i in range(5000)}
    defs["d5000"] = {"$ref": "#/$defs/d0"}
    schema["$defs"] = defs
    ((_, message),) = validation.ref_problems(schema)
    assert message.startswith("references loop without end: ")


def test_a_verdict_of_no_error_is_kept_and_a_verdict_with_errors_never_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``judged`` keeps that an item under a schema had nothing wrong (the next command does not
    judge it again), never what was wrong (an error is found, and shown, every time), and tells
    apart what differs only in type (a date is not its text) or in schema."""
    import datetime

    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    calls: list[object] = []

    def judge(found: list[str]) -> object:
        def run() -> list[str]:
            calls.append(found)
            return found

        return run

    assert validation.judged("k", b"schema", {"day": "2026-12-31"}, judge([])) == []
    assert validation.judged("k", b"schema", {"day": "2026-12-31"}, judge(["never asked"])) == []
    assert calls == [[]]
    assert validation.judged("k", b"schema", {"day": datetime.date(2026, 12, 31)}, judge(["a date"])) == [
        "a date"
    ]
    assert validation.judged("k", b"schema", {"day": datetime.date(2026, 12, 31)}, judge(["a date"])) == [
        "a date"
    ]
    assert validation.judged("k", b"other schema", {"day": "2026-12-31"}, judge(["stricter"])) == ["stricter"]
    assert validation.judged("k", b"schema", {"day": lambda: 0}, judge([])) == []  # not picklable: judged
    assert validation.judged("k", b"schema", {"day": lambda: 0}, judge([])) == []
    assert len(calls) == 6
    (tmp_path / "a file").write_text("")  # a cache it cannot write: judged every time, nothing fails
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "a file" / "cache"))
    assert validation.judged("k", b"schema", {"x": 1}, judge([])) == []
    assert validation.judged("k", b"schema", {"x": 1}, judge([])) == []
    assert len(calls) == 8
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(validation, "_jsonschema_stamp", lambda: None)  # jsonschema from a zip
    assert validation.judged("k", b"schema", {"day": "2026-12-31"}, judge([])) == []  # kept above
    assert len(calls) == 9


def test_a_kept_verdict_is_tied_to_the_packages_that_judge_formats(monkeypatch: pytest.MonkeyPatch) -> None:
    """Installing a package that adds a ``format`` jsonschema checks (the meta-schema check uses
    them) makes the verdicts kept before it new keys: each is judged again."""
    validation._jsonschema_stamp.cache_clear()
    before = validation._jsonschema_stamp()
    monkeypatch.setattr(validation, "FORMAT_PACKAGES", (*validation.FORMAT_PACKAGES, "harness"))
    validation._jsonschema_stamp.cache_clear()
    try:
        assert before is not None and validation._jsonschema_stamp() not in (None, before)
    finally:
        validation._jsonschema_stamp.cache_clear()
