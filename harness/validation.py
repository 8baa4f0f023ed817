"""Tool arguments against the tool's JSON Schema: one validator per schema, shared by the
``protocol.arguments_schema`` check, ``validate_arguments`` tools and vendor verification; and
a schema against the JSON Schema meta-schema, shared by the scenario loader and the providers'
declaration checks. Light to import: loading scenarios imports it."""

from __future__ import annotations

import functools
import json
from typing import Any

from harness.model import canonical


def argument_errors(schema: dict[str, Any] | str, arguments: Any, *, formats: bool = True) -> list[Any]:
    """Every way ``arguments`` break a tool's ``schema`` (JSON Schema draft 2020-12; ``format``
    checked too unless ``formats`` is false), as ``jsonschema`` errors in path order (shared:
    read them, never change them). ``schema`` is the schema or its JSON text (a spec's
    ``schema_text``: nothing to encode per call). Validation is a pure function of the schema
    and the arguments' JSON, so each pair is validated once: every target a scenario runs on
    tends to send the same arguments."""
    text = schema if isinstance(schema, str) else canonical(schema)
    try:
        key = json.dumps(arguments)
    except (TypeError, ValueError):  # not JSON (a caller's own value): validated as it is
        return _sorted(_validator(text, formats).iter_errors(arguments))
    return list(_errors(text, formats, key))


@functools.lru_cache(maxsize=4096)
def _errors(schema: str, formats: bool, arguments: str) -> tuple[Any, ...]:
    return tuple(_sorted(_validator(schema, formats).iter_errors(json.loads(arguments))))


def _sorted(errors: Any) -> list[Any]:
    return sorted(errors, key=lambda e: list(e.absolute_path))


@functools.lru_cache(maxsize=1024)
def _validator(schema: str, formats: bool) -> Any:
    from jsonschema import Draft202012Validator

    checker = Draft202012Validator.FORMAT_CHECKER if formats else None
    return Draft202012Validator(json.loads(schema), format_checker=checker)


def draft_2020_12_error(schema: dict[str, Any]) -> Any:
    """The first way ``schema`` breaks the JSON Schema draft 2020-12 meta-schema (a
    ``jsonschema.SchemaError``: read it, never change it), or None. Checked once per schema (by
    its canonical JSON): a declared tool's schema is checked when its scenario loads, then again
    for every Anthropic target, at half a millisecond a check."""
    try:
        text = canonical(schema)
    except (TypeError, ValueError):  # a value JSON cannot hold (a YAML date): checked as it is
        return _check(schema)
    return _meta_error(text)


@functools.lru_cache(maxsize=4096)
def _meta_error(schema_text: str) -> Any:
    return _check(json.loads(schema_text))


def _check(schema: Any) -> Any:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        return error
    return None
