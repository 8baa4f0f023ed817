"""Tool arguments against the tool's JSON Schema: one validator per schema, shared by the
``protocol.arguments_schema`` check, ``validate_arguments`` tools and vendor verification."""

from __future__ import annotations

import functools
import json
from typing import Any


def argument_errors(schema: dict[str, Any], arguments: Any, *, formats: bool = True) -> list[Any]:
    """Every way ``arguments`` break a tool's ``schema`` (JSON Schema draft 2020-12; ``format``
    checked too unless ``formats`` is false), as ``jsonschema`` errors in path order. The
    validator of each schema is built once (a run offers the same tools every turn)."""
    validator = _validator(json.dumps(schema, sort_keys=True), formats)
    return sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))


@functools.lru_cache(maxsize=1024)
def _validator(schema: str, formats: bool) -> Any:
    from jsonschema import Draft202012Validator

    checker = Draft202012Validator.FORMAT_CHECKER if formats else None
    return Draft202012Validator(json.loads(schema), format_checker=checker)
