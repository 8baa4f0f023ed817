"""Loopback servers that echo the credentials they were sent: hostile endpoints for the secrets
tests. :class:`EchoServer` answers 401 with the key in its body and a header, as real providers
do; ``EchoServer(forms=True)`` answers a Chat Completions stream that echoes the key in every
shape a server may give it back (:func:`echoes`)."""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit


class _Echo(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        seen = {k: v for k, v in self.headers.items()}
        body = json.dumps(
            {
                "error": {
                    "message": f"Incorrect API key provided: {seen.get('Authorization')}; "
                    f"you sent {self.path} with headers {seen}",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            }
        ).encode()
        self.send_response(401)
        self.send_header("content-type", "application/json")
        self.send_header("x-echo-authorization", str(seen.get("Authorization")))
        self.send_header("x-echo-team", str(seen.get("x-team-token")))
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def json_escaped(text: str, every: int = 1) -> str:
    """``text`` as the inside of a JSON string with every ``every``-th character written as a
    ``\\uXXXX`` escape (and ``/`` as ``\\/`` elsewhere): the shapes some JSON writers use."""
    return "".join(
        f"\\u{ord(c):04x}" if i % every == 0 else "\\/" if c == "/" else json.dumps(c)[1:-1]
        for i, c in enumerate(text)
    )


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def echoes(key: str, query_key: str) -> list[list[str]]:
    """What the forms server says of a key sent as ``Authorization: Bearer <key>`` and of the
    ``key=`` query value it was sent: pieces of JSON string text, each list one form cut between
    the stream events that carry it (so no event holds the whole form)."""

    def halves(text: str) -> list[str]:
        return [text[: len(text) // 2], text[len(text) // 2 :]]

    def escaped_halves(text: str) -> list[str]:
        return [json_escaped(part) for part in halves(text)]

    return [
        ["key: " + key[:7], key[7:]],  # the key cut between two events
        halves(b64(key)),
        halves(quote(key, safe="")),
        [json_escaped(key)],  # every character a \\u escape
        [json_escaped(key, every=2)],  # every other one
        escaped_halves(key),
        halves(b64(f"Bearer {key}")),  # what a server shows of the Authorization header
        [b64(f"Bearer {key}")],
        halves(query_key),
        [json_escaped(query_key, every=3)],
    ]


class _Forms(BaseHTTPRequestHandler):
    """A Chat Completions stream echoing the key in every form of :func:`echoes`: a text answer
    and a ``get_weather`` call on the first turn, a text answer once a tool result came back."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        sent = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
        authorization = self.headers.get("Authorization") or ""
        url = urlsplit(self.path)
        if url.path != "/v1/chat/completions":
            self.send_error(404)
            return
        query_key = dict(parse_qsl(url.query)).get("key", "")
        first = not any(m.get("role") == "tool" for m in sent.get("messages", []))

        def event(delta: str, finish: str | None = None) -> bytes:
            choice = f'{{"index":0,"delta":{delta},"finish_reason":{json.dumps(finish)}}}'
            return f'data: {{"id":"c1","object":"chat.completion.chunk","choices":[{choice}]}}\n\n'.encode()

        events = [event('{"role":"assistant","content":""}')]
        for form in echoes(authorization.removeprefix("Bearer "), query_key):
            events += [event(f'{{"content":"{piece}"}}') for piece in form]
            events.append(event('{"content":"; "}'))
        if first:
            call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "get_weather"}}
            events.append(event(json.dumps({"tool_calls": [call]})))
            arguments = {"index": 0, "function": {"arguments": '{"city": "Paris"}'}}
            events.append(event(json.dumps({"tool_calls": [arguments]})))
        events += [event("{}", "tool_calls" if first else "stop"), b"data: [DONE]\n\n"]
        body = b"".join(events)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("x-echo-authorization-b64", b64(authorization))
        self.send_header("x-echo-key", query_key)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class EchoServer:
    """An echo server on a free 127.0.0.1 port, for the duration of a ``with`` block: the 401
    echo, or with ``forms`` the stream echoing every form."""

    def __init__(self, *, forms: bool = False) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Forms if forms else _Echo)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def __enter__(self) -> EchoServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
