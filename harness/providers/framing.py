"""Stream framing: raw response text to a list of payloads. Pure, no I/O.

Three framings carry streamed tool calls: Server-Sent Events (OpenAI, Mistral,
Anthropic, Gemini ``alt=sse``), newline-delimited JSON (Ollama native) and a
JSON array of responses (Gemini without ``alt=sse``). :func:`decode_stream`
sniffs which one a body uses, because recordings do not always keep the
content type.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.providers._json import JsonProblem, decode

Framing = Literal["sse", "ndjson", "json-array", "empty"]


@dataclass
class StreamEvent:
    """One payload: the SSE ``event:`` name (if any) and its data, parsed when it is JSON."""

    data: Any
    event: str | None = None
    raw: str = ""


@dataclass
class DecodedStream:
    """A stream body cut into payloads, with everything odd about its framing kept for findings:
    payloads that are not JSON (``undecodable``), nested too deep (``too_deep``), lines that are
    no SSE field (``stray_lines``), strings repaired for lone surrogates, ``NaN``/``Infinity``."""

    framing: Framing
    events: list[StreamEvent] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    done_sentinel: bool = False
    unterminated: bool = False
    undecodable: list[str] = field(default_factory=list)
    too_deep: list[str] = field(default_factory=list)
    stray_lines: list[str] = field(default_factory=list)
    repaired: int = 0
    constants: list[str] = field(default_factory=list)


_NEWLINE = re.compile(r"\r\n|\r|\n")


def lines(text: str) -> list[str]:
    """The lines of a stream body, cut at CR, LF or CRLF only (SSE's and NDJSON's line ends):
    ``str.splitlines`` also cuts at U+2028 and other characters that JSON strings may hold raw."""
    return _NEWLINE.split(text) if "\r" in text else text.split("\n")


def sniff(text: str) -> Framing:
    """Tell the framing of a stream body from its first non-blank line."""
    for line in lines(text):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith(("data:", "event:", ":", "id:", "retry:")):
            return "sse"
        if stripped.startswith("["):
            return "json-array"
        return "ndjson"
    return "empty"


EVIDENCE = 200  # characters of a bad payload kept as evidence


def _load(raw: str, stream: DecodedStream) -> tuple[bool, Any]:
    """``(True, value)`` for a payload that decodes; ``(False, None)`` with the payload noted otherwise."""
    try:
        decoded = decode(raw)
    except JsonProblem as exc:
        if exc.kind == "too_deep":
            stream.too_deep.append(raw[:EVIDENCE])
        else:
            stream.undecodable.append(raw)
        return False, None
    stream.repaired += decoded.repaired
    stream.constants += decoded.constants
    return True, decoded.value


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
                ok, data = _load(raw, stream)
                if ok:
                    stream.events.append(StreamEvent(data, event, raw))
        event, data_lines = None, []

    for line in lines(text):
        if not line.strip():
            dispatch()
        elif line.startswith(":"):
            stream.comments.append(line[1:].strip())
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            value = line[5:]
            data_lines.append(value[1:] if value.startswith(" ") else value)
        elif not line.startswith(("id:", "retry:")) and line not in ("id", "retry", "data", "event"):
            stream.stray_lines.append(line[:EVIDENCE])
    if data_lines:
        stream.unterminated = not text.endswith("\n")
        dispatch()
    return stream


def decode_ndjson(text: str) -> DecodedStream:
    stream = DecodedStream("ndjson")
    for line in lines(text):
        if line.strip():
            ok, data = _load(line, stream)
            if ok:
                stream.events.append(StreamEvent(data, None, line))
    return stream


def decode_json_array(text: str) -> DecodedStream:
    stream = DecodedStream("json-array")
    _, data = _load(text, stream)
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
