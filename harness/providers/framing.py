"""Stream framing: raw response text to a list of payloads. Pure, no I/O.

Three framings carry streamed tool calls: Server-Sent Events (OpenAI, Mistral,
Anthropic, Gemini ``alt=sse``), newline-delimited JSON (Ollama native) and a
JSON array of responses (Gemini without ``alt=sse``). :func:`decode_stream`
sniffs which one a body uses, because recordings do not always keep the
content type.
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.providers._json import JsonProblem, decode

Framing = Literal["sse", "ndjson", "json-array", "empty"]
STREAM_TYPES = (
    "text/event-stream",
    "application/x-ndjson",
    "application/jsonl",
    "application/vnd.amazon.eventstream",
)
"""The content types of a streamed response (the last is binary: AWS's event stream)."""


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


class _Sse:
    """The SSE line state machine: fed one line at a time (the line end already cut off)."""

    def __init__(self) -> None:
        self.stream = DecodedStream("sse")
        self.event: str | None = None
        self.data_lines: list[str] = []

    def dispatch(self) -> None:
        if self.data_lines:
            raw = "\n".join(self.data_lines)
            if raw.strip() == "[DONE]":
                self.stream.done_sentinel = True
            else:
                ok, data = _load(raw, self.stream)
                if ok:
                    self.stream.events.append(StreamEvent(data, self.event, raw))
        self.event, self.data_lines = None, []

    def line(self, line: str) -> None:
        if not line.strip():
            self.dispatch()
        elif line.startswith(":"):
            self.stream.comments.append(line[1:].strip())
        elif line.startswith("event:"):
            self.event = line[6:].strip()
        elif line.startswith("data:"):
            value = line[5:]
            self.data_lines.append(value[1:] if value.startswith(" ") else value)
        elif not line.startswith(("id:", "retry:")) and line not in ("id", "retry", "data", "event"):
            self.stream.stray_lines.append(line[:EVIDENCE])

    def finish(self, ends_with_newline: bool) -> DecodedStream:
        if self.data_lines:
            self.stream.unterminated = not ends_with_newline
            self.dispatch()
        return self.stream


def decode_sse(text: str) -> DecodedStream:
    """Split an SSE body into events; ``data: [DONE]`` is noted, comments are kept."""
    sse = _Sse()
    for line in lines(text):
        sse.line(line)
    return sse.finish(text.endswith("\n"))


def decode_ndjson(text: str) -> DecodedStream:
    stream = DecodedStream("ndjson")
    for line in lines(text):
        _ndjson_line(stream, line)
    return stream


def _ndjson_line(stream: DecodedStream, line: str) -> None:
    """One NDJSON line: a payload unless blank."""
    if line.strip():
        ok, data = _load(line, stream)
        if ok:
            stream.events.append(StreamEvent(data, None, line))


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


class StreamReader:
    """A stream decoded as its bytes arrive, in chunks cut anywhere: inside a UTF-8 character,
    between the CR and LF of a line end, inside a line or a frame. SSE and NDJSON lines are
    decoded as soon as they are complete; :meth:`close` gives exactly what :func:`decode_stream`
    gives for the whole body (a JSON array is only read whole).

    Example::

        reader = StreamReader()
        for chunk in response.iter_bytes():
            reader.feed(chunk)
        decoded = reader.close()
    """

    def __init__(self) -> None:
        self._text = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending: list[str] = []  # the text after the last complete line, in pieces
        self._lines: list[str] = []  # complete lines not yet given to a decoder (framing unknown)
        self._framing: Framing | None = None
        self._sse = _Sse()
        self._ndjson = DecodedStream("ndjson")
        self._whole: list[str] = []  # everything, for a JSON array
        self._last = ""

    def feed(self, chunk: bytes) -> None:
        text = self._text.decode(chunk)
        if text:
            self._take(text)

    def _take(self, text: str) -> None:
        self._whole.append(text)
        self._last = text[-1]
        held_cr = bool(self._pending) and self._pending[-1].endswith("\r")
        self._pending.append(text)
        if "\n" not in text and "\r" not in text and not held_cr:
            return  # no line ends here: keep the pieces, join them once the line is complete
        pending = "".join(self._pending)
        cut = len(pending) - 1 if pending.endswith("\r") else len(pending)  # maybe half a CRLF
        parts = _NEWLINE.split(pending[:cut])
        self._pending = [parts.pop() + pending[cut:]]
        for line in parts:
            self._line(line)

    def _line(self, line: str) -> None:
        if self._framing is None:
            self._lines.append(line)
            if line.strip():
                self._framing = sniff(line)
                waiting, self._lines = self._lines, []
                for earlier in waiting:
                    self._line(earlier)
            return
        if self._framing == "sse":
            self._sse.line(line)
        elif self._framing == "ndjson":
            _ndjson_line(self._ndjson, line)

    def close(self) -> DecodedStream:
        tail = self._text.decode(b"", final=True)
        if tail:
            self._take(tail)
        last = "".join(self._pending)  # the last lines, split as decode_stream splits them
        for line in _NEWLINE.split(last):
            self._line(line)
        if self._framing is None:
            return DecodedStream("empty")
        if self._framing == "json-array":
            return decode_json_array("".join(self._whole))
        if self._framing == "sse":
            return self._sse.finish(self._last == "\n")
        return self._ndjson
