"""What each provider family would reject or drop in a tool's parameters schema."""

from __future__ import annotations

from typing import Any

import pytest

from harness.providers.schemas import normalize_schema, schema_features, schema_issues
from tests.helpers.transcripts import BILLING


def test_normalize_schema() -> None:
    assert normalize_schema(None) == {"type": "object", "properties": {}}
    assert normalize_schema({"properties": {"a": {"type": "string"}}, "required": ["a", "zz", 3]}) == {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
    }
    original = {"type": "object", "required": ["gone"]}
    assert normalize_schema(original) == {"type": "object", "properties": {}}
    assert original == {"type": "object", "required": ["gone"]}  # a copy


MESSY = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "url": {"type": "string", "format": "uri"},
        "count": {"type": "integer", "format": "int32", "enum": [1, 2]},
        "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}},
        "mode": {"const": "fast"},
        "maybe": {"type": ["string", "null"]},
        "bad-name": {"type": "string"},
    },
    "$defs": {"Tag": {"type": "string"}},
}


def test_schema_issues_gemini() -> None:
    """parametersJsonSchema takes plain JSON Schema ($ref, $defs, additionalProperties, type lists);
    what is reported is what Gemini refuses or misreads there."""
    issues = schema_issues({**MESSY, "title": "Args"}, "gemini")
    expected = [
        ": keyword '$schema': not taken",
        ": keyword 'title': can be taken for a function name",
        "/properties/url: format 'uri' on a string is not supported",
        "/properties/mode: keyword 'const': not supported; a one-value enum is",
    ]
    assert [next((i for i in issues if i.startswith(text)), text + " (missing)") for text in expected] == [
        next(i for i in issues if i.startswith(text))
        for text in expected
        if any(i.startswith(text) for i in issues)
    ]
    assert len(issues) == len(expected), issues


def test_schema_issues_other_families() -> None:
    assert schema_issues(MESSY, "openai") == []
    assert schema_issues(MESSY, "anthropic") == []
    assert schema_issues({"type": "array"}, "mistral") == [': root "type" is \'array\', not "object"']
    invalid = schema_issues({"type": "object", "properties": {"a": {"type": 5}}}, "anthropic")
    assert len(invalid) == 1 and "draft 2020-12" in invalid[0]


@pytest.mark.parametrize(
    ("schema", "features"),
    [
        (BILLING, {"nested_objects", "object_arrays", "ref", "format", "enum", "optional"}),
        ({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}, set()),
        (
            {"type": "object", "properties": {"at": {"anyOf": [{"type": "string"}, {"type": "null"}]}}},
            {"optional", "nullable"},
        ),
        (
            {"type": "object", "properties": {"at": {"type": ["string", "null"]}}, "required": ["at"]},
            {"nullable"},
        ),
        (
            {"type": "object", "properties": {"n": {"type": "integer", "nullable": True}}, "required": ["n"]},
            {"nullable"},
        ),
    ],
)
def test_schema_features(schema: dict[str, Any], features: set[str]) -> None:
    assert schema_features(schema) == features
