"""Stream framing: raw response text to a list of payloads. Pure, no I/O.

Three framings carry streamed tool calls: Server-Sent Events (OpenAI, Mistral,
Anthropic, Gemini ``alt=sse``), newline-delimited JSON (Ollama native) and a
JSON array of responses (Gemini without ``alt=sse``). :func:`decode_stream`
sniffs which one a body uses, because recordings do not always keep the
content type.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

Framing = Literal["sse", "ndjson", "json-array", "empty"]


@dataclass
class StreamEvent:
    """One payload: the SSE ``event:`` name (if any) and its data, parsed when it is JSON."""

    data: Any
    event: str | None = None
    raw: str = ""


@dataclass
class DecodedStream:
    framing: Framing
    events: list[StreamEvent] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    done_sentinel: bool = False
    unterminated: bool = False
    undecodable: list[str] = field(default_factory=list)


def sniff(text: str) -> Framing:
    """Tell the framing of a stream body from its first non-blank line."""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith(("data:", "event:", ":", "id:", "retry:")):
            return "sse"
        if stripped.startswith("["):
            return "json-array"
        return "ndjson"
    return "empty"


def _load(raw: str, stream: DecodedStream) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        stream.undecodable.append(raw)
        return None


def decode_sse(text: str) -> DecodedStream:
    """Split an SSE body into events; ``data: [DONE]`` is noted, comments are kept."""
    stream = DecodedStream("sse")
    event: str | None = None
    data_lines: list[str] = []

    def dispatch() -> None:
        nonlocal event, data_lines
        if data_lines:
            raw = "\n".join(data_lines)
            if raw.strip() == "[DONE]":
                stream.done_sentinel = True
            else:
                data = _load(raw, stream)
                if data is not None:
                    stream.events.append(StreamEvent(data, event, raw))
        event, data_lines = None, []

    for line in text.splitlines():
        if not line.strip():
            dispatch()
        elif line.startswith(":"):
            stream.comments.append(line[1:].strip())
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            value = line[5:]
            data_lines.append(value[1:] if value.startswith(" ") else value)
    if data_lines:
        stream.unterminated = not text.endswith("\n")
        dispatch()
    return stream


def decode_ndjson(text: str) -> DecodedStream:
    stream = DecodedStream("ndjson")
    for line in text.splitlines():
        if line.strip():
            data = _load(line, stream)
            if data is not None:
                stream.events.append(StreamEvent(data, None, line))
    return stream


def decode_json_array(text: str) -> DecodedStream:
    stream = DecodedStream("json-array")
    data = _load(text, stream)
    if isinstance(data, list):
        stream.events = [StreamEvent(item, None, json.dumps(item)) for item in data]
    return stream


def decode_stream(text: str) -> DecodedStream:
    """Decode a stream body whatever its framing."""
    framing = sniff(text)
    if framing == "sse":
        return decode_sse(text)
    if framing == "json-array":
        return decode_json_array(text)
    if framing == "ndjson":
        return decode_ndjson(text)
    return DecodedStream("empty")
