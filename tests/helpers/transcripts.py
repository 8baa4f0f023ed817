"""Build transcripts and scenarios by hand, for tests of checks and reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from harness.model import (
    Exchange,
    ParsedTurn,
    SentRequest,
    ToolCall,
    ToolExecution,
    ToolResult,
    ToolSpec,
    Transcript,
    WireResponse,
)
from harness.scenarios import Scenario, load_file

WEATHER = ToolSpec(
    "get_weather",
    "Weather.",
    {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
)

BILLING: dict[str, Any] = {
    "type": "object",
    "properties": {
        "customer": {
            "type": "object",
            "properties": {"email": {"type": "string", "format": "email"}},
            "required": ["email"],
        },
        "lines": {"type": "array", "items": {"$ref": "#/$defs/line"}},
        "currency": {"type": "string", "enum": ["EUR", "USD"]},
    },
    "required": ["customer", "lines", "currency"],
    "$defs": {"line": {"type": "object", "properties": {"quantity": {"type": "integer"}}}},
}
"""A tool schema with nested objects, an array of objects, a ``$ref``, a ``format``, an enum and
optional fields."""


def scenario(tmp_path: Path, **fields: Any) -> Scenario:
    data = {
        "id": "t.case",
        "category": "single",
        "tools": ["get_weather"],
        "messages": [{"role": "user", "content": "hi"}],
        "expect": {},
    }
    data.update(fields)
    path = tmp_path / f"{data['id']}.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_file(path)[0]


def call(name: str, index: int = 0, call_id: str | None = None, raw: Any = None, **args: Any) -> ToolCall:
    call_id = call_id or f"c{index}{name}"
    return ToolCall(name, dict(args), raw if raw is not None else args, call_id, call_id, index)


def transcript(
    *turns: ParsedTurn | list[ToolCall] | str,
    stop: str = "final",
    tools: list[ToolSpec] | None = None,
    errors: set[int] = frozenset(),
) -> Transcript:  # type: ignore[assignment]
    t = Transcript("target", "t.case", tools=tools or [WEATHER], stop_reason=stop)  # type: ignore[arg-type]
    for index, turn in enumerate(turns):
        parsed = (
            turn
            if isinstance(turn, ParsedTurn)
            else (ParsedTurn(text=turn) if isinstance(turn, str) else ParsedTurn(tool_calls=list(turn)))
        )
        request = SentRequest("POST", "http://test.invalid/v1/chat/completions", {}, {})
        t.exchanges.append(Exchange(index, request, WireResponse(200, ""), parsed))
        for c in parsed.tool_calls:
            t.executions.append(ToolExecution(index, c, ToolResult(c.id, c.name, "r", index in errors)))
    return t
