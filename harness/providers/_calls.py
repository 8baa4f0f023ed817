"""Helpers the adapters share: tool declarations, call ids, argument parsing, per-turn notes.

Private to :mod:`harness.providers`: adapters and the text protocols use them,
nothing above the wire layer does.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.model import Finding, ToolCall, ToolSpec, deviation


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
    digest = hashlib.sha256(json.dumps([name, arguments, index], sort_keys=True).encode()).hexdigest()
    return "h" + digest[:8]


def parse_arguments(raw: Any, *, wire_type: str) -> tuple[dict[str, Any] | None, str | None, list[Finding]]:
    """Parse a call's wire arguments into an object, noting each deviation.

    ``wire_type`` is what the format specifies (``string`` for OpenAI-style
    JSON text, ``object`` for Ollama, Anthropic and Gemini). An empty string or
    missing value becomes ``{}`` (with a finding); invalid JSON gives ``None``
    and a parse error.
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
        return raw, None, findings
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
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            error = f"arguments are not valid JSON: {exc.msg} at position {exc.pos}"
            findings.append(deviation("arguments_invalid_json", error, severity="error", raw=raw))
            return None, error, findings
        if not isinstance(value, dict):
            error = f"arguments are JSON but not an object: {type(value).__name__}"
            findings.append(deviation("arguments_not_object", error, severity="error", raw=raw))
            return None, error, findings
        return value, None, findings
    error = f"arguments have wire type {type(raw).__name__}"
    findings.append(deviation("arguments_not_object", error, severity="error", raw=raw))
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
    arguments, error, findings = parse_arguments(raw_arguments, wire_type=wire_type)
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

    The accumulators of every format build on it.
    """

    findings: list[Finding] = field(default_factory=list)
    noted: set[str] = field(default_factory=set, repr=False)

    def note(self, finding: Finding) -> None:
        if finding.check_id not in self.noted:
            self.noted.add(finding.check_id)
            self.findings.append(finding)

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
