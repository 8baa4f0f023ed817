"""Helpers the adapters share: tool declarations, call ids, argument parsing, per-turn notes.

Private to :mod:`harness.providers`: adapters and the text protocols use them,
nothing above the wire layer does.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.model import Finding, Severity, ToolCall, ToolSpec, deviation
from harness.providers._json import (
    JsonProblem,
    checked,
    constant_findings,
    decode,
    finite,
    json_type,
    unicode_findings,
)

LISTED = 5
"""Entries a listing finding names in its detail (its evidence keeps up to :data:`KEPT`)."""
KEPT = 50
TOKEN_COUNT = re.compile(r"[0-9]{1,18}")
_ID_PART = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def id_part(value: Any) -> str:
    """A wire value (a block type, a stop reason) as the variable part of a check id: as it is
    when it is a short word, else ``other`` (an id must not carry arbitrary wire text; the
    finding's detail shows the value)."""
    text = str(value) if value is None or isinstance(value, str | int | float) else ""
    return text if _ID_PART.fullmatch(text) else "other"


def function_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Tools as ``{"type": "function", "function": {...}}``: OpenAI's shape, which Mistral and
    Ollama share."""
    empty = {"type": "object", "properties": {}}
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters or empty},
        }
        for t in tools
    ]


def ids_rewritten(ids: Sequence[str], rule: str) -> list[Finding]:
    """An info note when call ids from history had to be rewritten to a provider's id rule."""
    if not ids:
        return []
    return [
        Finding("wire.id_rewritten", "info", False, f"call ids {sorted(ids)} rewritten to {rule} for replay")
    ]


def synthesize_id(name: str, arguments: Any, index: int) -> str:
    """A deterministic id for a call the provider sent without one.

    Nine alphanumeric characters satisfy every provider's id rule (Mistral's is
    the strictest), and determinism keeps replayed requests identical.
    """
    try:
        text = json.dumps([name, arguments, index], sort_keys=True)
    except (TypeError, ValueError):  # keys of mixed types: not from JSON, but never a crash
        text = repr([name, arguments, index])
    digest = hashlib.sha256(text.encode("utf-8", errors="backslashreplace")).hexdigest()
    return "h" + digest[:8]


def parse_arguments(
    raw: Any, *, wire_type: str, label: str = "the arguments"
) -> tuple[dict[str, Any] | None, str | None, list[Finding]]:
    """Parse a call's wire arguments into an object, noting each deviation.

    ``wire_type`` is what the format specifies (``string`` for OpenAI-style
    JSON text, ``object`` for Ollama, Anthropic and Gemini). An empty string or
    missing value becomes ``{}`` (with a finding); invalid JSON gives ``None``
    and a parse error, and so do arguments nested deeper than the wire limit
    (``wire.arguments_too_deep``). Lone surrogates in the parsed arguments are
    replaced by U+FFFD (``wire.invalid_unicode``), and numbers JSON cannot carry (NaN,
    Infinity, ``1e999``) by ``null`` (``wire.arguments_nonfinite_number``, an error: a value
    of the call is lost): neither could be sent back or stored. ``label`` names the call.
    """
    findings: list[Finding] = []
    if raw is None:
        findings.append(deviation("arguments_missing", "the call carries no arguments; treated as {}"))
        return {}, None, findings
    if isinstance(raw, dict):
        if wire_type == "string":
            findings.append(
                deviation("arguments_object_not_string", "arguments came as a JSON object, not a JSON string")
            )
        try:
            value, repaired = checked(raw)
        except JsonProblem as exc:
            return _too_deep(exc, findings)
        findings += unicode_findings(repaired, "the arguments")
        return _finite(value, label, findings), None, findings
    if isinstance(raw, str):
        if wire_type == "object":
            findings.append(
                deviation("arguments_string_not_object", "arguments came as a JSON string, not an object")
            )
        if not raw.strip():
            findings.append(
                deviation("arguments_empty_string", "arguments are an empty string; treated as {}")
            )
            return {}, None, findings
        try:
            decoded = decode(raw)
        except JsonProblem as exc:
            if exc.kind == "too_deep":
                return _too_deep(exc, findings)
            error = f"arguments are not valid JSON: {exc.message}"
            findings.append(deviation("arguments_invalid_json", error, severity="error", raw=raw))
            return None, error, findings
        findings += unicode_findings(decoded.repaired, "the arguments")
        if not isinstance(decoded.value, dict):
            findings += constant_findings(decoded.constants, "the arguments")
            error = f"arguments are JSON but not an object: {type(decoded.value).__name__}"
            findings.append(deviation("arguments_not_object", error, severity="error", raw=raw))
            return None, error, findings
        return _finite(decoded.value, label, findings), None, findings
    error = f"arguments have wire type {type(raw).__name__}"
    findings.append(deviation("arguments_not_object", error, severity="error", raw=raw))
    return None, error, findings


def _finite(arguments: dict[str, Any], label: str, findings: list[Finding]) -> dict[str, Any]:
    """``arguments`` with the numbers JSON cannot carry replaced by ``null``, each noted."""
    fixed: dict[str, Any]
    fixed, replaced = finite(arguments)
    if replaced:
        shown = ", ".join(replaced[:LISTED]) + (
            f" and {len(replaced) - LISTED} more" if len(replaced) > LISTED else ""
        )
        detail = (
            f"{label} hold {len(replaced)} number(s) JSON cannot carry (NaN, Infinity, or past the range "
            f"of a double, as 1e999) at {shown}; replaced with null"
        )
        findings.append(
            deviation("arguments_nonfinite_number", detail, severity="error", pointers=replaced[:KEPT])
        )
    return fixed


def _too_deep(
    exc: JsonProblem, findings: list[Finding]
) -> tuple[dict[str, Any] | None, str | None, list[Finding]]:
    error = f"arguments are {exc.message}"
    findings.append(deviation("arguments_too_deep", error, severity="error"))
    return None, error, findings


def make_call(
    name: str,
    raw_arguments: Any,
    call_id: str | None,
    index: int,
    *,
    wire_type: str,
    optional_id: str | None = None,
) -> tuple[ToolCall, list[Finding]]:
    """A :class:`ToolCall` from wire parts, with id and argument findings.

    ``optional_id`` says why a missing id is normal on this API (Ollama before
    v0.12.10, Gemini 2.x): the synthesized id is then an info note, not a warning.
    """
    arguments, error, findings = parse_arguments(
        raw_arguments, wire_type=wire_type, label=f"call {index} ({name}): the arguments"
    )
    call = ToolCall(
        name,
        arguments,
        raw_arguments,
        call_id or synthesize_id(name, raw_arguments, index),
        call_id,
        index,
        error,
    )
    if call_id is None:
        detail = f"call {index} ({name}) has no id; synthesized {call.id}"
        findings.append(
            Finding("wire.missing_id", "info", False, f"{detail} ({optional_id})")
            if optional_id
            else deviation("missing_id", detail)
        )
    elif call_id == "":
        findings.append(
            deviation("empty_id", f"call {index} ({name}) has an empty id; synthesized {call.id}")
        )
    return call, findings


def id_findings(calls: Sequence[ToolCall]) -> list[Finding]:
    """Duplicate ids within one turn (a provider must keep them unique)."""
    seen: set[str] = set()
    duplicates = []
    for call in calls:
        if not call.wire_id:
            continue
        if call.wire_id in seen:
            duplicates.append(call.wire_id)
        seen.add(call.wire_id)
    if duplicates:
        return [
            deviation("duplicate_tool_call_ids", f"duplicate tool call ids: {duplicates}", severity="error")
        ]
    return []


@dataclass
class Notes:
    """A turn's findings, each id once: a stream repeats the same deviation in every chunk.

    The accumulators of every format build on it. Its typed reads (:meth:`obj`,
    :meth:`array`, :meth:`string`, :meth:`integer`, :meth:`count`) take a field's value
    with its JSON path (``choices[0].message.tool_calls``): a value of the wrong JSON type
    is a ``wire.field_wrong_type`` finding naming the path and the expected type, never an
    exception further on. ``null`` reads as absent.
    """

    findings: list[Finding] = field(default_factory=list)
    noted: set[str] = field(default_factory=set, repr=False)
    listed: dict[str, list[str]] = field(default_factory=dict, repr=False)

    def note(self, finding: Finding) -> None:
        if finding.check_id not in self.noted:
            self.noted.add(finding.check_id)
            self.findings.append(finding)

    def note_each(self, code: str, entry: str, summary: str, *, severity: Severity = "warning") -> None:
        """One ``wire.<code>`` finding for the turn that lists every ``entry`` (the first few in
        its detail, up to :data:`KEPT` in its evidence): each is a different place in the body."""
        entries = self.listed.setdefault(code, [])
        if entry in entries:
            return
        entries.append(entry)
        shown = "; ".join(entries[:LISTED]) + (
            f"; and {len(entries) - LISTED} more" if len(entries) > LISTED else ""
        )
        finding = deviation(code, f"{summary}: {shown}", severity=severity, fields=entries[:KEPT])
        check_id = f"wire.{code}"
        for position, earlier in enumerate(self.findings):
            if earlier.check_id == check_id:
                self.findings[position] = finding
                return
        self.noted.add(check_id)
        self.findings.append(finding)

    def wrong_type(self, where: str, value: Any, expected: str, outcome: str = "ignored") -> None:
        """Note that the field at ``where`` holds ``value``, not the ``expected`` JSON type."""
        self.note_each(
            "field_wrong_type",
            f"{where} is {json_type(value)}, expected {expected} ({outcome})",
            "field(s) of the wrong JSON type",
        )

    def obj(self, where: str, value: Any) -> dict[str, Any] | None:
        """An object field (``None`` when absent or of another type, which is noted)."""
        if value is None or isinstance(value, dict):
            return value
        self.wrong_type(where, value, "object")
        return None

    def array(self, where: str, value: Any) -> list[Any]:
        """An array field (``[]`` when absent or of another type, which is noted)."""
        if value is None:
            return []
        if isinstance(value, list):
            return value
        self.wrong_type(where, value, "array")
        return []

    def objects(self, where: str, value: Any) -> list[tuple[str, dict[str, Any]]]:
        """The objects of an array field with their paths; items of another type are noted and skipped."""
        found = []
        for position, item in enumerate(self.array(where, value)):
            if isinstance(item, dict):
                found.append((f"{where}[{position}]", item))
            else:
                self.wrong_type(f"{where}[{position}]", item, "object", "skipped")
        return found

    def string(self, where: str, value: Any) -> str | None:
        """A string field (``None`` when absent or of another type, which is noted)."""
        if value is None or isinstance(value, str):
            return value
        self.wrong_type(where, value, "string")
        return None

    def integer(self, where: str, value: Any) -> int | None:
        """An integer field (``None`` when absent or of another type, which is noted)."""
        if value is None or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        self.wrong_type(where, value, "integer")
        return None

    def count(self, where: str, value: Any) -> int | None:
        """A token count: a non-negative integer. An integer written as a string is read, anything
        else (negative, fractional, boolean, another type) dropped: ``wire.usage_not_integer`` either way."""
        if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
            return value
        if isinstance(value, str) and TOKEN_COUNT.fullmatch(value.strip()):
            self.note_each(
                "usage_not_integer", f"{where} is the string {value!r}; read as {int(value)}", "token counts"
            )
            return int(value)
        shown = repr(value) if isinstance(value, int | float | bool) else json_type(value)
        self.note_each("usage_not_integer", f"{where} is {shown}; dropped", "token counts")
        return None

    def note_text_beside_calls(self, text: str | None, calls: Sequence[ToolCall]) -> None:
        """Text next to tool calls is allowed everywhere, but clients often drop one or the other."""
        if text and text.strip() and calls:
            self.note(
                Finding("wire.text_with_tool_calls", "info", False, "the turn has text beside tool calls")
            )


def join_text(parts: list[str]) -> str | None:
    """Concatenated text, or ``None`` when there is none."""
    text = "".join(parts)
    return text or None
