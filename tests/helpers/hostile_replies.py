"""Hostile replies: a loopback server that answers with scripted bytes, and the bodies it serves
(a gzip bomb made lazily, replies of every wire format with lone surrogates or numbers JSON
cannot carry), for the tests of the transport, the cassettes and the parsers."""

from __future__ import annotations

import contextlib
import json
import struct
import sys
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from unittest import mock

from harness.servers.sim.formats import FORMATS
from harness.servers.sim.script import Reply
from harness.servers.sim.wire import SimRequest
from tests.helpers.eventstream import replaced

MIB = 1 << 20
_ZEROS = bytes(MIB)


def _piece() -> bytes:
    """One MiB of zeros, raw-deflated after a full flush: every such piece is the same bytes."""
    deflater = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    deflater.compress(_ZEROS)
    deflater.flush(zlib.Z_FULL_FLUSH)
    return deflater.compress(_ZEROS) + deflater.flush(zlib.Z_FULL_FLUSH)


PIECE = _piece()
"""About a kilobyte that inflates to a MiB."""


class Tripwire(AssertionError):
    """A hostile body was read further than the test allows: the bound under test failed."""


def gzip_bomb(inflated_mib: int = 2048, *, trip_after: int | None = None) -> Iterator[bytes]:
    """A valid gzip stream of ``inflated_mib`` MiB of zeros (2 GiB from about 2 MB), made as it
    is read, so neither side ever holds it. Reading past ``trip_after`` compressed bytes raises
    :class:`Tripwire` (a client that inflates everything fails there, not out of memory)."""
    yield b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    sent, crc = 10, 0
    for _ in range(inflated_mib):
        if trip_after is not None and sent > trip_after:
            raise Tripwire(f"{sent:,} compressed bytes of the bomb read")
        yield PIECE
        sent += len(PIECE)
        crc = zlib.crc32(_ZEROS, crc)
    yield b"\x03\x00" + struct.pack("<II", crc, (inflated_mib * MIB) & 0xFFFFFFFF)


def bomb_size(inflated_mib: int) -> int:
    """The compressed size of :func:`gzip_bomb` ``(inflated_mib)``."""
    return 10 + inflated_mib * len(PIECE) + 10


# -- replies of every wire format ------------------------------------------------------------------

MARK = "QQMARKQQ"


def sim_path(fmt: str, stream: bool) -> str:
    """The path a request of ``fmt`` goes to (Gemini and Bedrock name the model and the streaming
    mode in it)."""
    if fmt == "gemini-generate":
        return "/v1beta/models/m:" + ("streamGenerateContent?alt=sse" if stream else "generateContent")
    if fmt == "bedrock-converse":
        return "/model/m/converse-stream" if stream else "/model/m/converse"
    return "/v1/x"


Body = str | bytes
"""A reply body: text, or bytes for a binary format (AWS's event stream)."""


def reply_body(fmt: str, stream: bool, *, name: str, arguments: dict[str, Any], text: str | None) -> Body:
    """A conformant reply of wire format ``fmt`` (whole or streamed) making one call, written by the
    simulator's own writer for that format; a stream carries each text and each call's arguments
    in one piece, so that a :data:`MARK` written in them can be replaced by hostile text."""
    reply = Reply(calls=[(name, arguments)], text=text)
    request = SimRequest(sim_path(fmt, stream), {"model": "m", "stream": stream, "messages": []})
    sim = FORMATS[fmt]  # loads the format's wire module
    wire_modules = [m for n, m in sys.modules.items() if n.startswith("harness.servers.sim.wire")]
    with contextlib.ExitStack() as whole:
        for module in wire_modules:
            if hasattr(module, "_pieces"):
                whole.enter_context(mock.patch.object(module, "_pieces", lambda text, size: [text]))
        return sim.respond(request, reply, "seed").body


def holds(body: Body, text: str) -> bool:
    """Whether ``body`` holds ``text`` (in a payload of an event stream)."""
    return text.encode() in body if isinstance(body, bytes) else text in body


def swapped(body: Body, old: str, new: str) -> Body:
    """``body`` with ``old`` written as ``new``; in an event stream, inside the payloads, every
    message framed again with true CRCs (the fault is the payload's, not the framing's)."""
    if isinstance(body, bytes):
        return replaced(body, old.encode(), new.encode())
    return body.replace(old, new)


def marked_as(body: Body, literal: str) -> Body:
    """``body`` with the JSON string ``"QQMARKQQ"`` (:data:`MARK` as a value of its own, in the body
    or inside arguments that travel as JSON text) written as ``literal`` (``1e999``, ``NaN``)."""
    quoted = json.dumps(MARK)
    escaped = json.dumps(quoted)[1:-1]
    assert holds(body, quoted) or holds(body, escaped), "no marked value in the body"
    return swapped(swapped(body, escaped, literal), quoted, literal)


def final_body(fmt: str, stream: bool) -> Body:
    """A conformant final answer of ``fmt`` (no call)."""
    request = SimRequest(sim_path(fmt, stream), {"model": "m", "stream": stream, "messages": []})
    return FORMATS[fmt].respond(request, Reply(text="Done."), "final").body


# -- the server ---------------------------------------------------------------------------------------


@dataclass
class Answer:
    """What the server says to one request: status, headers, and the body (bytes, or chunks
    sent as they are made; without a ``content-length`` they go chunked)."""

    body: bytes | Iterable[bytes]
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "application/json"})


@dataclass
class Seen:
    """A request as the server received it: the request line's target (path and query), body and
    headers (lower-case names)."""

    target: str
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        with self.server.lock:
            headers = {name.lower(): value for name, value in self.headers.items()}
            self.server.seen.append(Seen(self.path, body, headers))
            answer = self.server.answer(len(self.server.seen) - 1, self.path, body)
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        whole = isinstance(answer.body, bytes)
        chunked = not whole and "content-length" not in {k.lower() for k in answer.headers}
        if whole:
            self.send_header("content-length", str(len(answer.body)))  # type: ignore[arg-type]
        elif chunked:
            self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            for chunk in [answer.body] if whole else answer.body:  # type: ignore[list-item]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
        except (OSError, Tripwire):  # the client stopped reading (the point), or read too far
            self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    lock: threading.Lock
    seen: list[Seen]
    answer: Callable[[int, str, bytes], Answer]


class ScriptedServer:
    """A server on a free 127.0.0.1 port for the duration of a ``with`` block, answering the n-th
    request with ``answers[n]`` (the last one again once they run out), or with
    ``answers(n, target, body)``; :attr:`seen` keeps every request."""

    def __init__(self, answers: list[Answer] | Callable[[int, str, bytes], Answer]):
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.lock = threading.Lock()
        self._server.seen = []
        script = answers
        self._server.answer = (
            script if callable(script) else lambda n, target, body: script[min(n, len(script) - 1)]
        )
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def seen(self) -> list[Seen]:
        return self._server.seen

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
