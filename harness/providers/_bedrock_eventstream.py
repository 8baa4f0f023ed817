"""The AWS event stream framing (``application/vnd.amazon.eventstream``), read incrementally and
checked (private to :mod:`harness.providers.bedrock`). Pure, no I/O.

Bedrock's ConverseStream answers in this binary framing, not SSE [B3][B4]. Each message is::

    total length (uint32) | headers length (uint32) | prelude CRC32 (of the 8 bytes before it)
    headers: name length (uint8), name, value type (uint8), value   (repeated)
    payload (total - headers - 16 bytes)
    message CRC32 (of every byte of the message before it)

all big-endian. A header value is typed: 0 true, 1 false, 2 int8, 3 int16, 4 int32, 5 int64,
6 bytes and 7 string (uint16 length first), 8 timestamp (int64 ms), 9 uuid (16 bytes).

:class:`EventStreamReader` takes the bytes as they arrive, cut anywhere, and gives the same as
:func:`decode` gives for the whole body. Nothing here raises on a bad body: a CRC that does not
match, a length past the limits, a header that runs past its section, a message cut short are
:class:`Problem` values the adapter turns into findings. A message whose own CRC fails is
dropped (its bytes cannot be trusted) and reading goes on with the next one; a prelude whose CRC
fails, or lengths that cannot be, leave no way to find the next message, so reading stops there.
"""

from __future__ import annotations

import dataclasses
import struct
import zlib
from dataclasses import dataclass, field
from typing import Any

PRELUDE = 12
"""Bytes of a message's prelude: the two lengths and the prelude's CRC."""
OVERHEAD = PRELUDE + 4
"""Bytes of a message that are neither headers nor payload (the prelude and the message CRC)."""
MAX_HEADERS = 128 * 1024
MAX_PAYLOAD = 24 * 1024 * 1024
"""The largest headers section and payload a reader takes (botocore's limits) [B4]."""

_FIXED = {2: ">b", 3: ">h", 4: ">i", 5: ">q", 8: ">q"}


@dataclass(frozen=True)
class Message:
    """One message: its headers (``:event-type``, ``:message-type``...) and its payload bytes;
    ``offset`` is where it starts in the body."""

    headers: dict[str, Any]
    payload: bytes
    offset: int


@dataclass(frozen=True)
class Problem:
    """What is wrong with the framing of the message at ``offset``: ``kind`` is a short code
    (``prelude_crc_mismatch``, ``message_crc_mismatch``, ``truncated``, ``bad_lengths``,
    ``headers_too_long``, ``payload_too_long``, ``header_malformed``, ``duplicate_header``)."""

    kind: str
    offset: int
    detail: str

    def describe(self) -> str:
        return f"the message at byte {self.offset}: {self.detail}"


@dataclass
class Decoded:
    """The messages of a body, and every problem of its framing, in the order met."""

    messages: list[Message] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def add(self, item: Message | Problem) -> None:
        if isinstance(item, Message):
            self.messages.append(item)
        else:
            self.problems.append(item)


def crc32(data: bytes | bytearray | memoryview, start: int = 0) -> int:
    """CRC-32 (ISO-HDLC, zlib's) as the framing uses it."""
    return zlib.crc32(data, start) & 0xFFFFFFFF


class _Fatal(Exception):
    """A problem after which no later message can be found."""

    def __init__(self, problem: Problem):
        super().__init__(problem.detail)
        self.problem = problem


def _frame(data: bytes | bytearray, offset: int) -> tuple[int, Message | Problem] | None:
    """The message starting at ``offset`` of ``data`` and its length, once all of it is there:
    ``None`` while bytes are missing; a :class:`Problem` in place of a message whose own CRC or
    headers are wrong; :class:`_Fatal` when the prelude leaves no way to find the next message."""
    available = len(data) - offset
    if available < PRELUDE:
        return None
    total, headers_length, prelude_crc = struct.unpack_from(">III", data, offset)
    computed = crc32(data[offset : offset + 8])
    if computed != prelude_crc:
        raise _Fatal(
            Problem(
                "prelude_crc_mismatch",
                offset,
                f"its prelude has CRC 0x{prelude_crc:08x}, its bytes give 0x{computed:08x}; the lengths "
                "cannot be trusted, so nothing after it is read",
            )
        )
    payload_length = total - headers_length - OVERHEAD
    if total < OVERHEAD or payload_length < 0:
        detail = f"it says it is {total} bytes with {headers_length} bytes of headers"
        raise _Fatal(
            Problem("bad_lengths", offset, f"{detail}, less than its framing; nothing after it is read")
        )
    if headers_length > MAX_HEADERS:
        detail = f"{headers_length} bytes of headers, past the {MAX_HEADERS} a reader takes"
        raise _Fatal(Problem("headers_too_long", offset, f"{detail}; nothing after it is read"))
    if payload_length > MAX_PAYLOAD:
        detail = f"a {payload_length}-byte payload, past the {MAX_PAYLOAD} a reader takes"
        raise _Fatal(Problem("payload_too_long", offset, f"{detail}; nothing after it is read"))
    if available < total:
        return None
    end = offset + total
    (message_crc,) = struct.unpack_from(">I", data, end - 4)
    computed = crc32(data[offset + 8 : end - 4], prelude_crc)
    if computed != message_crc:
        detail = f"its CRC is 0x{message_crc:08x}, its {total} bytes give 0x{computed:08x}; dropped"
        return total, Problem("message_crc_mismatch", offset, detail)
    headers_end = offset + PRELUDE + headers_length
    headers = _headers(bytes(data[offset + PRELUDE : headers_end]), offset)
    if isinstance(headers, Problem):
        return total, headers
    return total, Message(headers, bytes(data[headers_end : end - 4]), offset)


def _take(data: bytes, at: int, size: int, name: str) -> bytes:
    """``size`` bytes of the headers section from ``at``; an :class:`IndexError` past its end."""
    if at + size > len(data):
        raise IndexError(f"header {name!r} runs past the headers section")
    return data[at : at + size]


def _headers(data: bytes, offset: int) -> dict[str, Any] | Problem:
    """The headers section of the message at ``offset``, or the problem that stops reading it."""
    headers: dict[str, Any] = {}
    at = 0
    try:
        while at < len(data):
            size = data[at]
            name = _take(data, at + 1, size, "?").decode("utf-8", errors="replace")
            kind = _take(data, at + 1 + size, 1, name)[0]
            at += 2 + size
            value: Any
            if kind in (0, 1):
                value = kind == 0
            elif kind in _FIXED:
                width = struct.calcsize(_FIXED[kind])
                (value,) = struct.unpack(_FIXED[kind], _take(data, at, width, name))
                at += width
            elif kind in (6, 7):
                (length,) = struct.unpack(">H", _take(data, at, 2, name))
                raw = _take(data, at + 2, length, name)
                value = raw.decode("utf-8", errors="replace") if kind == 7 else raw
                at += 2 + length
            elif kind == 9:
                value = _take(data, at, 16, name)
                at += 16
            else:
                raise ValueError(f"header {name!r} has the unknown value type {kind}")
            if name in headers:
                return Problem("duplicate_header", offset, f"it repeats header {name!r}; dropped")
            headers[name] = value
    except (IndexError, ValueError) as exc:
        return Problem("header_malformed", offset, f"its headers are malformed ({exc}); dropped")
    return headers


def _cut(data: bytes | bytearray, at: int, offset: int) -> Problem:
    """The problem of a body that ends inside the message at ``at`` (``offset`` in the body)."""
    left = len(data) - at
    said = f" of the {struct.unpack_from('>I', data, at)[0]} it says it has" if left >= 4 else ""
    return Problem("truncated", offset, f"the body ends {left} byte(s) into it{said}; the message is cut")


class EventStreamReader:
    """An event stream decoded as its bytes arrive, in chunks cut anywhere (inside a prelude, a
    header, a payload or a CRC). :meth:`close` gives exactly what :func:`decode` gives for the
    whole body.

    Example::

        reader = EventStreamReader()
        for chunk in response.iter_bytes():
            reader.feed(chunk)
        decoded = reader.close()
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._start = 0  # where the next message starts in the buffer
        self._offset = 0  # where the buffer starts in the body
        self._stopped = False
        self.decoded = Decoded()

    def feed(self, chunk: bytes) -> None:
        if self._stopped:
            return
        self._buffer += chunk
        try:
            while (found := _frame(self._buffer, self._start)) is not None:
                size, item = found
                self._keep(item)
                self._start += size
        except _Fatal as fatal:
            self._keep(fatal.problem)
            self._stopped, self._buffer = True, bytearray()
            return
        if self._start > len(self._buffer) // 2:  # drop what is read now and then, not per message
            del self._buffer[: self._start]
            self._offset += self._start
            self._start = 0

    def _keep(self, item: Message | Problem) -> None:
        """A message or problem, its offset counted from the start of the body."""
        self.decoded.add(dataclasses.replace(item, offset=item.offset + self._offset))

    def close(self) -> Decoded:
        """What the body held; bytes left after the last whole message are a cut message."""
        if not self._stopped and self._start < len(self._buffer):
            self.decoded.problems.append(_cut(self._buffer, self._start, self._offset + self._start))
        self._stopped = True
        return self.decoded


def decode(data: bytes) -> Decoded:
    """Every message of a whole body, walked from its first byte (:class:`EventStreamReader` gives
    the same for the body fed in any pieces)."""
    decoded = Decoded()
    at = 0
    try:
        while (found := _frame(data, at)) is not None:
            size, item = found
            decoded.add(item)
            at += size
    except _Fatal as fatal:
        decoded.problems.append(fatal.problem)
        return decoded
    if at < len(data):
        decoded.problems.append(_cut(data, at, at))
    return decoded


def starts_eventstream(data: bytes) -> bool:
    """Whether ``data`` begins with an event stream prelude whose CRC holds: positive evidence that
    a body is in this framing (no text body starts with one)."""
    if len(data) < PRELUDE:
        return False
    total, headers_length, prelude_crc = struct.unpack_from(">III", data, 0)
    return bool(crc32(data[:8]) == prelude_crc and total >= headers_length + OVERHEAD)
