"""AWS event stream messages built by hand, for tests that need a body no server sent: a header of
any type, a CRC that lies, a message cut short. Written from the framing's documentation
(``harness/providers/_bedrock_eventstream.py`` cites it), independent of the reader under test."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any

from benchmarks.mutations import framed, messages_of

EVENTSTREAM = "application/vnd.amazon.eventstream"


def header(name: str, kind: int, value: bytes = b"") -> bytes:
    """One header: its name, its value type and the value's bytes as the framing writes them (a lone
    surrogate written as its invalid UTF-8 bytes)."""
    raw = name.encode("utf-8", errors="surrogatepass")
    return bytes([len(raw)]) + raw + bytes([kind]) + value


def string_header(name: str, value: str) -> bytes:
    raw = value.encode("utf-8", errors="surrogatepass")
    return header(name, 7, struct.pack(">H", len(raw)) + raw)


def message(
    headers: bytes, payload: bytes, *, prelude_crc: int | None = None, crc: int | None = None
) -> bytes:
    """A whole message; ``prelude_crc`` or ``crc`` given make that CRC lie."""
    total = 16 + len(headers) + len(payload)
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude) if prelude_crc is None else prelude_crc)
    body = prelude + headers + payload
    return body + struct.pack(">I", zlib.crc32(body) if crc is None else crc)


def event(name: str, payload: Any) -> bytes:
    """A Bedrock stream event: ``:event-type``, JSON content, ``:message-type`` event."""
    headers = (
        string_header(":event-type", name)
        + string_header(":content-type", "application/json")
        + string_header(":message-type", "event")
    )
    return message(headers, json.dumps(payload).encode())


def exception(kind: str, text: str) -> bytes:
    """An exception message, as Bedrock sends one inside a 2xx stream."""
    headers = (
        string_header(":exception-type", kind)
        + string_header(":content-type", "application/json")
        + string_header(":message-type", "exception")
    )
    return message(headers, json.dumps({"message": text}).encode("utf-8", errors="surrogatepass"))


def b64(data: bytes) -> str:
    """The body as a WireResponse carries a binary body."""
    return base64.b64encode(data).decode("ascii")


def replaced(data: bytes, old: bytes, new: bytes) -> bytes:
    """An event stream with ``old`` replaced by ``new`` in every payload, each message framed again
    with true CRCs (a hostile value inside a payload, not a broken frame)."""
    return framed([(headers, payload.replace(old, new)) for headers, payload in messages_of(data)])
