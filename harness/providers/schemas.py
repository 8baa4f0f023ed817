"""Tool ``parameters``: normalising a schema, and what a provider would reject or drop in it.

Providers accept less than JSON Schema, and some reject a whole request when one
tool's schema displeases them, so the harness reports problems per tool before
sending (``wire.tool_declaration`` findings, from each adapter's family). The
rules follow what each adapter sends; how sure each rule is:

* every family: the root must be ``{"type": "object"}``: documented for Anthropic
  (``input_schema`` [A1]) and the MCP spec itself; OpenAI documents ``parameters``
  as a JSON Schema object [O1].
* ``anthropic``: the schema must be valid draft 2020-12 (obs. error text [A2]); checked
  with ``jsonschema``'s meta-schema.
* ``gemini``: the adapter sends ``parametersJsonSchema`` (plain JSON Schema [G2]), not
  the OpenAPI-subset ``parameters``. What Gemini still refuses or misreads there is
  taken from what pydantic-ai removes before sending [PAI1]: ``$schema``, ``const``
  (use a one-value ``enum``), ``discriminator``, ``examples``, ``title`` (read as a
  function name [GG1]), a string ``format``, ``exclusiveMinimum`` and ``exclusiveMaximum``.
* ``openai`` family: nothing beyond the root rule unless ``strict`` is used, which the
  harness does not set.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import msgspec

from harness.providers.rules import rules_for
from harness.validation import draft_2020_12_error

GEMINI_DROPPED: dict[str, str] = {
    "$schema": "not taken; clients remove it [PAI1]",
    "const": "not supported; a one-value enum is [PAI1]",
    "discriminator": "not supported; clients remove it [PAI1]",
    "examples": "not supported; clients remove it [PAI1]",
    "title": "can be taken for a function name (MALFORMED_FUNCTION_CALL); clients remove it [PAI1][GG1]",
    "exclusiveMinimum": "not supported yet; clients remove it [PAI1]",
    "exclusiveMaximum": "not supported yet; clients remove it [PAI1]",
}
"""Keywords Gemini's function declarations refuse or misread, with why (see the module docstring)."""

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
    error = draft_2020_12_error(schema)
    if error is None:
        return []
    pointer = "".join(f"/{part}" for part in error.absolute_path)
    return [f"{pointer}: not valid JSON Schema draft 2020-12 (obs. rejection): {error.message}"]


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
    issues = [f"{pointer}: keyword {key!r}: {why}" for key, why in GEMINI_DROPPED.items() if key in node]
    if node.get("type") == "string" and "format" in node:
        issues.append(
            f"{pointer}: format {node['format']!r} on a string is not supported; clients move it into the "
            "description [PAI1]"
        )
    return issues


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


# -- what a schema uses (the capability grid's schema columns) --------------------------------

FEATURES = ("nested_objects", "object_arrays", "enum", "ref", "format", "optional", "nullable")
"""The JSON Schema features :func:`schema_features` tells, recorded per run for the capability
grid (:mod:`harness.analysis.capabilities` names each)."""


def schema_features(schema: dict[str, Any]) -> frozenset[str]:
    """The :data:`FEATURES` one argument schema uses (local ``$ref`` targets resolved), found
    once per schema (by its JSON): every run of a scenario offers the same tools, read back from
    its first request."""
    try:  # a schema read from a JSON body: no tuple to encode like a list and be told apart
        key = _ENCODER.encode(schema)
    except (TypeError, ValueError, OverflowError, RecursionError):  # not JSON: walked each time
        return _features(schema)
    found = _FEATURES_SEEN.get(key)
    if found is None:
        if len(_FEATURES_SEEN) >= 4096:  # bounded: a suite of any size keeps a few MB at most
            _FEATURES_SEEN.clear()
        found = _FEATURES_SEEN[key] = _features(schema)
    return found


_ENCODER = msgspec.json.Encoder()
_FEATURES_SEEN: dict[bytes, frozenset[str]] = {}


def _features(schema: dict[str, Any]) -> frozenset[str]:
    features: set[str] = set()
    for node, depth in _schema_nodes(schema, 0):
        if "$ref" in node:
            features.add("ref")
        if isinstance(node.get("enum"), list):
            features.add("enum")
        if isinstance(node.get("format"), str):
            features.add("format")
        if _is_nullable(node):
            features.add("nullable")
        properties = node.get("properties")
        if isinstance(properties, dict):
            if depth > 0:
                features.add("nested_objects")
            listed = node.get("required")
            required = set(listed) if isinstance(listed, list) else set()
            if any(key not in required for key in properties):
                features.add("optional")
        if node.get("type") == "array" and _is_object(_resolve(schema, node.get("items"))):
            features.add("object_arrays")
    return frozenset(features)


def _schema_nodes(node: Any, depth: int) -> Iterator[tuple[dict[str, Any], int]]:
    """Every subschema with how many objects or arrays deep it sits (the root is 0)."""
    if not isinstance(node, dict):
        return
    yield node, depth
    for key in ("properties", "$defs", "definitions"):
        children = node.get(key)
        if isinstance(children, dict):
            for child in children.values():  # a definition is never the root
                yield from _schema_nodes(child, depth + 1)
    if isinstance(node.get("items"), dict):
        yield from _schema_nodes(node["items"], depth + 1)
    for key in ("anyOf", "oneOf", "allOf"):
        for child in node.get(key) or []:
            yield from _schema_nodes(child, depth)


def _resolve(root: dict[str, Any], node: Any) -> Any:
    """A local ``#/...`` reference followed once (other nodes as they are)."""
    if not isinstance(node, dict) or not str(node.get("$ref", "")).startswith("#/"):
        return node
    target: Any = root
    for part in str(node["$ref"])[2:].split("/"):
        target = target.get(part) if isinstance(target, dict) else None
    return target


def _is_object(node: Any) -> bool:
    return isinstance(node, dict) and (
        node.get("type") == "object" or isinstance(node.get("properties"), dict)
    )


def _is_nullable(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    if node.get("nullable") is True or (isinstance(kind, list) and "null" in kind):
        return True
    options = (node.get("anyOf") or []) + (node.get("oneOf") or [])
    return any(isinstance(o, dict) and o.get("type") == "null" for o in options)
