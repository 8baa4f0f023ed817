"""Tool arguments against the tool's JSON Schema: one validator per schema, shared by the
``protocol.arguments_schema`` check, ``validate_arguments`` tools and vendor verification."""

from __future__ import annotations

import functools
import json
from typing import Any


def argument_errors(schema: dict[str, Any] | str, arguments: Any, *, formats: bool = True) -> list[Any]:
    """Every way ``arguments`` break a tool's ``schema`` (JSON Schema draft 2020-12; ``format``
    checked too unless ``formats`` is false), as ``jsonschema`` errors in path order (shared:
    read them, never change them). ``schema`` is the schema or its JSON text (a spec's
    ``schema_text``: nothing to encode per call). Validation is a pure function of the schema
    and the arguments' JSON, so each pair is validated once: every target a scenario runs on
    tends to send the same arguments."""
    text = schema if isinstance(schema, str) else json.dumps(schema, sort_keys=True)
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
