"""A loopback server that echoes what it was sent back into its 401 answer: a hostile endpoint
for the secrets test (a key echoed in a body and a header, as real providers do)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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


class EchoServer:
    """The echo server on a free 127.0.0.1 port, for the duration of a ``with`` block."""

    def __init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
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
