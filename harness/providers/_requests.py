"""What the request readers of every wire format share (private to :mod:`harness.providers`).

A reader walks a request body another client sent and rebuilds the neutral
conversation with a :class:`RequestReader`: it collects messages, links each
tool result to the call it answers, and keeps every deviation as a finding whose
detail starts with where in the body it was seen (``messages[2].tool_calls[0]:
...``). Nothing here raises on a badly shaped body: a wrong type is a
``wire.request_malformed`` finding and the part is skipped.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from harness.model import Finding, Message, Severity, ToolCall, ToolChoice, ToolResult, ToolSpec, deviation
from harness.providers._calls import id_findings, id_part, make_call
from harness.providers.adapter import RequestView


class RequestReader:
    """The conversation of one request as it is read, with the findings about it.

    ``pending`` holds the calls of the latest assistant message that no tool result
    has answered yet: results without an id (Gemini, old Ollama clients) are linked
    to them by name, then by order, and calls still unanswered when the next
    non-tool message arrives are a deviation (every native API rejects them).
    """

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.findings: list[Finding] = []
        self.calls: list[ToolCall] = []
        self.pending: list[ToolCall] = []
        self.pending_where = ""
        self._seen: set[tuple[str, str]] = set()

    # -- findings -----------------------------------------------------------

    def note(self, where: str, finding: Finding) -> None:
        """Keep ``finding`` with its place in the body in front of its detail (each one once)."""
        detail = f"{where}: {finding.detail}" if where else finding.detail
        if (finding.check_id, detail) in self._seen:
            return
        self._seen.add((finding.check_id, detail))
        self.findings.append(dataclasses.replace(finding, detail=detail))

    def deviation(
        self, where: str, code: str, detail: str, *, severity: Severity = "warning", **evidence: Any
    ) -> None:
        """A deviation from the wire format (``wire.<code>``)."""
        self.note(where, deviation(code, detail, severity=severity, **evidence))

    def info(self, where: str, code: str, detail: str) -> None:
        """An info note: legal on the wire, but read with a normalisation or a loss."""
        self.note(where, Finding(f"wire.{code}", "info", False, detail))

    def malformed(self, where: str, detail: str) -> None:
        """A part shaped so that the provider would reject it; it is skipped or read as noted."""
        self.deviation(where, "request_malformed", detail, severity="error")

    # -- shapes -------------------------------------------------------------

    def items(self, where: str, value: Any, *, required: bool = False) -> list[tuple[str, dict[str, Any]]]:
        """The objects of a list field with their places; anything else is noted and skipped."""
        if value is None:
            if required:
                self.malformed(where, "the field is missing")
            return []
        if not isinstance(value, list):
            self.malformed(where, f"is {type(value).__name__}, not a list; not read")
            return []
        found = []
        for position, item in enumerate(value):
            if isinstance(item, dict):
                found.append((f"{where}[{position}]", item))
            else:
                self.malformed(f"{where}[{position}]", f"is {type(item).__name__}, not an object; skipped")
        return found

    def string(self, where: str, value: Any, what: str) -> str | None:
        """A string field (``None`` when absent); another type is noted and read as its text."""
        if value is None or isinstance(value, str):
            return value
        self.malformed(where, f"{what} is {type(value).__name__}, not a string; read as {str(value)!r}")
        return str(value)

    def text(self, where: str, value: Any) -> str | None:
        """Message content: a string, or a list of ``{"type": "text", "text": ...}`` parts (OpenAI,
        Anthropic) concatenated as they are; parts that are not text are noted as not read."""
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, dict):
            self.malformed(where, "content is one part object, not a list of parts; read as a list")
            value = [value]
        if not isinstance(value, list):
            self.malformed(where, f"content is {type(value).__name__}; not read")
            return None
        texts = []
        for part_where, part in self.items(where, value):
            kind = part.get("type", "text" if "text" in part else None)
            if kind == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            else:
                self.info(
                    part_where,
                    f"request_part_not_read:{id_part(kind)}",
                    f"a {kind!r} part is not text; the neutral types carry text only",
                )
        return "".join(texts) if texts else None

    def flag(self, where: str, value: Any, what: str) -> bool:
        """A boolean field (``False`` when absent); another type is noted and read by truth."""
        if value is None or isinstance(value, bool):
            return bool(value)
        self.malformed(where, f"{what} is {type(value).__name__}, not a boolean; read as {bool(value)}")
        return bool(value)

    def model(self, body: dict[str, Any], *, required: bool = True) -> str | None:
        """The ``model`` field (every format but Gemini's requires it: Gemini names it in the path)."""
        if required and not body.get("model"):
            self.deviation("model", "request_model_missing", "the request names no model")
        return self.string("model", body.get("model"), "model")

    def stream(self, body: dict[str, Any], *, default: bool = False) -> bool:
        """The ``stream`` field, ``default`` when absent (the provider's own default)."""
        if "stream" not in body or body["stream"] is None:
            return default
        return self.flag("stream", body["stream"], "stream")

    def tool(self, where: str, name: Any, description: Any, parameters: Any) -> ToolSpec | None:
        """One declared tool; a tool without a name cannot be offered and is skipped."""
        if not isinstance(name, str) or not name:
            self.malformed(where, "a tool without a name; skipped")
            return None
        text = self.string(f"{where}.description", description, "description") or ""
        if parameters is None:
            parameters = {}
        elif not isinstance(parameters, dict):
            self.malformed(where, f"parameters are {type(parameters).__name__}, not an object; read as {{}}")
            parameters = {}
        return ToolSpec(name, text, parameters)

    def call(
        self,
        where: str,
        name: Any,
        raw_arguments: Any,
        call_id: Any,
        index: int,
        *,
        wire_type: str,
        optional_id: str | None = None,
    ) -> ToolCall:
        """A tool call of an assistant message in history, made as the response side makes it
        (arguments that are not valid JSON are a ``parse_error`` and a finding, never an exception)."""
        if not isinstance(name, str) or not name:
            self.deviation(where, "tool_call_missing_name", "a tool call in history has no name")
            name = "" if name is None else str(name)
        wire_id = self.string(f"{where}.id", call_id, "the call id")
        call, findings = make_call(
            name, raw_arguments, wire_id, index, wire_type=wire_type, optional_id=optional_id
        )
        for finding in findings:
            self.note(where, finding)
        return call

    # -- the conversation ---------------------------------------------------

    def add(self, where: str, message: Message) -> None:
        """Append a message; the calls of the previous assistant message must all be answered first."""
        if message.role != "tool":
            self.close_turn()
        self.messages.append(message)
        if message.role == "assistant" and message.tool_calls:
            for finding in id_findings(message.tool_calls):
                self.note(where, finding)
            self.calls.extend(message.tool_calls)
            self.pending, self.pending_where = list(message.tool_calls), where

    def close_turn(self) -> None:
        """Note the calls of the last assistant message that got no tool result."""
        if self.pending:
            ids = [c.id for c in self.pending]
            self.deviation(
                self.pending_where,
                "request_tool_calls_unanswered",
                f"{len(self.pending)} tool call(s) get no tool result before the next message: {ids}",
            )
        self.pending = []

    def result(
        self, where: str, call_id: str | None, name: str | None, content: str, is_error: bool = False
    ) -> None:
        """A tool result, linked to the call it answers: by id, else by name, else by order."""
        match: ToolCall | None = None
        if call_id:
            match = next((c for c in self.pending if c.id == call_id), None)
            if match is None:
                known = any(c.id == call_id for c in self.calls)
                self.deviation(
                    where,
                    "request_tool_result_unknown_call",
                    f"a tool result for {call_id!r}, "
                    + (
                        "a call that is not awaiting a result (answered already, or of an earlier turn)"
                        if known
                        else "which no earlier tool call has"
                    ),
                )
        else:
            match = next((c for c in self.pending if not name or c.name == name), None)
            if match is None:
                self.deviation(
                    where,
                    "request_tool_result_unmatched",
                    "a tool result without an id matches no unanswered call"
                    + (f" named {name!r}" if name else ""),
                )
            elif not name:
                self.info(
                    where,
                    "request_tool_result_linked_by_order",
                    f"a tool result with neither id nor name; linked to the next unanswered call {match.id}",
                )
        if match is not None:
            self.pending.remove(match)
            if name and name != match.name:
                self.deviation(
                    where,
                    "request_tool_result_name_mismatch",
                    f"the result names {name!r} but answers call {match.id} of {match.name!r}",
                )
        result = ToolResult(
            call_id or (match.id if match else None), name or (match.name if match else ""), content, is_error
        )
        self.add(where, Message("tool", tool_result=result))

    def view(
        self, tools: Sequence[ToolSpec], tool_choice: ToolChoice | None, stream: bool, model: str | None
    ) -> RequestView:
        """The request read: unanswered calls at the end, a named choice of no offered tool and
        duplicate tool names are noted here, the same for every format."""
        self.close_turn()
        names = [t.name for t in tools]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            self.deviation("tools", "request_duplicate_tool_names", f"tools declared twice: {duplicates}")
        if tool_choice is not None and tool_choice.mode == "named" and tool_choice.name not in names:
            self.deviation(
                "tool_choice",
                "request_tool_choice_unknown_tool",
                f"tool_choice names {tool_choice.name!r}, which is not among the tools offered {names}",
            )
        return RequestView(
            tuple(self.messages), tuple(tools), tool_choice, stream, model, tuple(self.findings)
        )
