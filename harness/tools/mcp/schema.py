"""MCP ``inputSchema`` -> tool ``parameters``: normalising, and what a provider would reject.

An MCP server's input schema is JSON Schema (2020-12 on 2026-07-28 connections; earlier
revisions define only ``type``/``properties``/``required``). Providers accept less, and
reject a request outright when one tool's schema displeases them, so the harness reports
problems per tool before sending. Sources, and how sure each rule is:

* every family: the root must be ``{"type": "object"}`` -- documented for Anthropic
  (``input_schema`` [A1]) and the MCP spec itself; OpenAI documents
  ``parameters`` as a JSON Schema object [O1].
* ``anthropic``: the schema must be valid draft 2020-12 (obs. error text [A2]); checked
  with ``jsonschema``'s meta-schema.
* ``gemini`` (native ``parameters``, an OpenAPI 3.0 subset; ``parametersJsonSchema``
  takes plain JSON Schema instead [G2]):

  - documented: the fields of python-genai's ``Schema`` type are the only keywords
    (``$ref``/``$defs``/``$schema``, ``const``, ``oneOf``, ``allOf``, ``not``,
    ``propertyNames``... are unknown; Gemini spells references ``ref``/``defs``);
    property names match ``[A-Za-z_][A-Za-z0-9_]*`` and are at most 64 long;
    ``format`` is "float"/"double" for NUMBER and "int32"/"int64" for INTEGER.
  - observed (third-party error reports, 2025-01 to 2026-05): ``additionalProperties``
    rejected with "Unknown name" although newer SDKs list it; STRING ``format`` other
    than "enum"/"date-time" rejected; ``enum`` on a non-STRING type rejected; a list
    ``type`` (``["string", "null"]``) rejected ("Proto field is not repeating").
* ``openai`` family: nothing beyond the root rule unless ``strict`` is used, which the
  harness does not set for MCP tools.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any

from harness.tools.naming import rules_for

GEMINI_SCHEMA_FIELDS = frozenset(
    {
        "type", "format", "title", "description", "nullable", "enum", "default", "example",
        "items", "minItems", "maxItems", "properties", "required", "minProperties", "maxProperties",
        "propertyOrdering", "minimum", "maximum", "minLength", "maxLength", "pattern", "anyOf",
        "additionalProperties", "ref", "defs",
    }
)  # fmt: skip
"""camelCase fields of ``google.genai.types.Schema`` (documented)."""

GEMINI_FORMATS = {
    "string": {"enum", "date-time"},
    "number": {"float", "double"},
    "integer": {"int32", "int64"},
}
GEMINI_PROPERTY_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")

_SCHEMA_MAPS = ("properties", "$defs", "defs", "definitions", "patternProperties")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_VALUES = ("items", "additionalProperties", "not", "contains")


def normalize_schema(schema: Any) -> dict[str, Any]:
    """A copy of ``schema`` usable as a tool's ``parameters``: an object with ``properties``.

    Adds ``"type": "object"`` when missing, ``"properties": {}`` when missing or not an
    object, and keeps ``required`` only as the listed names that are properties.
    Anything else is left alone: dropping keywords a provider dislikes is a choice
    :func:`schema_issues` reports rather than one made silently here.
    """
    result: dict[str, Any] = copy.deepcopy(schema) if isinstance(schema, dict) else {}
    result.setdefault("type", "object")
    if not isinstance(result.get("properties"), dict):
        result["properties"] = {}
    if "required" in result:
        required = result["required"] if isinstance(result["required"], list) else []
        kept = [name for name in required if isinstance(name, str) and name in result["properties"]]
        if kept:
            result["required"] = kept
        else:
            del result["required"]
    return result


def schema_issues(schema: Any, provider_family: str) -> list[str]:
    """What ``provider_family`` would reject in ``schema`` as ``parameters``, one line each.

    Each line starts with a JSON pointer; ``(obs.)`` marks rules known only from error
    reports. An empty list means nothing known is wrong, not a guarantee.
    """
    family = rules_for(provider_family).family
    if not isinstance(schema, dict):
        return [f": schema is {type(schema).__name__}, not an object"]
    issues: list[str] = []
    if schema.get("type") != "object":
        issues.append(f': root "type" is {schema.get("type")!r}, not "object"')
    if family == "anthropic":
        issues += _draft_2020_12_issues(schema)
    elif family == "gemini":
        for pointer, node in _subschemas(schema, ""):
            issues += _gemini_node_issues(pointer, node)
    return issues


def _draft_2020_12_issues(schema: dict[str, Any]) -> list[str]:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        pointer = "".join(f"/{part}" for part in error.absolute_path)
        return [f"{pointer}: not valid JSON Schema draft 2020-12 (obs. rejection): {error.message}"]
    return []


def _subschemas(node: Any, pointer: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema object in ``node`` with its JSON pointer (not descending into data)."""
    if not isinstance(node, dict):
        return
    yield pointer, node
    for key in _SCHEMA_MAPS:
        if isinstance(node.get(key), dict):
            for name, child in node[key].items():
                yield from _subschemas(child, f"{pointer}/{key}/{_escape(name)}")
    for key in _SCHEMA_LISTS:
        if isinstance(node.get(key), list):
            for index, child in enumerate(node[key]):
                yield from _subschemas(child, f"{pointer}/{key}/{index}")
    for key in _SCHEMA_VALUES:
        if isinstance(node.get(key), list):  # draft-4 tuple "items"
            for index, child in enumerate(node[key]):
                yield from _subschemas(child, f"{pointer}/{key}/{index}")
        else:
            yield from _subschemas(node.get(key), f"{pointer}/{key}")


def _gemini_node_issues(pointer: str, node: dict[str, Any]) -> list[str]:
    issues = [
        f"{pointer}: keyword {key!r} is not a field of Gemini's Schema (rejected as 'Unknown name')"
        for key in node
        if key not in GEMINI_SCHEMA_FIELDS
    ]
    if "additionalProperties" in node:
        issues.append(f"{pointer}: 'additionalProperties' rejected in function parameters (obs.)")
    kind = node.get("type")
    if isinstance(kind, list):
        issues.append(f"{pointer}: 'type' is a list {kind!r}; Gemini takes one type (obs.)")
    elif isinstance(kind, str) and "format" in node:
        allowed = GEMINI_FORMATS.get(kind.lower())
        if allowed is not None and node["format"] not in allowed:
            note = " (obs.)" if kind.lower() == "string" else ""
            issues.append(f"{pointer}: format {node['format']!r} not supported for {kind}{note}")
    if "enum" in node and (kind not in (None, "string", "STRING") or _has_non_strings(node["enum"])):
        issues.append(f"{pointer}: 'enum' is only allowed for STRING values (obs.)")
    if isinstance(node.get("properties"), dict):
        for name in node["properties"]:
            if not GEMINI_PROPERTY_NAME.match(name):
                where = f"{pointer}/properties/{_escape(name)}"
                issues.append(f"{where}: property name must match {GEMINI_PROPERTY_NAME.pattern}")
    return issues


def _has_non_strings(values: Any) -> bool:
    return not isinstance(values, list) or any(not isinstance(value, str) for value in values)


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")
