"""Serve the fixture MCP server over stdio (the default) or over Streamable HTTP on loopback.

``python -m harness.servers.mcp_fixture`` serves over stdio, as
``python -m harness.servers.mcp_fixture.server`` does. With ``--http`` it listens on
``127.0.0.1`` (``--port 0``: a free port), prints its endpoint URL on the first line of stdout
(``http://127.0.0.1:<port>/mcp``) and serves until it is stopped. With ``MCP_FIXTURE_TOKEN`` in
its environment, every HTTP request must carry ``Authorization: Bearer <token>``; any other is
answered 401, naming what it got (as real servers echo a rejected key: the harness must redact it).
With ``--handshake-only`` it answers as a server written before the 2026-07-28 revision does:
``server/discover`` is a JSON-RPC ``-32601`` (method not found), and any other request without
the session id ``initialize`` gave is refused with HTTP 400, so a client must use the handshake.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from typing import Any

from harness.servers.mcp_fixture.server import create_server

HOST = "127.0.0.1"
TOKEN_VARIABLE = "MCP_FIXTURE_TOKEN"
PATH = "/mcp"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m harness.servers.mcp_fixture", description=__doc__)
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP on 127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="the HTTP port (0: a free one)")
    parser.add_argument(
        "--handshake-only", action="store_true", help="refuse server/discover, as a 2025-era server does"
    )
    args = parser.parse_args(argv)
    server = create_server()
    if not args.http:
        server.run("stdio")
        return
    import anyio

    anyio.run(serve_http, server, args.port, os.environ.get(TOKEN_VARIABLE), args.handshake_only)


async def serve_http(server: Any, port: int, token: str | None, handshake_only: bool = False) -> None:
    """Serve ``server``'s Streamable HTTP app on ``127.0.0.1:port`` (bound before the URL is
    printed, so a reader of the URL can connect at once) until the process is stopped."""
    import uvicorn

    app = server.streamable_http_app(streamable_http_path=PATH, host=HOST)
    if handshake_only:
        app = _without_discover(app)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    print(f"http://{HOST}:{sock.getsockname()[1]}{PATH}", flush=True)
    config = uvicorn.Config(app if token is None else _bearer(app, token), log_level="warning")
    await uvicorn.Server(config).serve(sockets=[sock])


def _without_discover(app: Any) -> Any:
    """``app`` answering ``server/discover`` with JSON-RPC method-not-found and a request other
    than ``initialize`` without an ``Mcp-Session-Id`` with HTTP 400; every other request passed on
    as it came (an ASGI wrapper)."""
    import json

    async def legacy(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        method = request.get("method") if isinstance(request, dict) else None
        answer, status = None, 200
        if method == "server/discover":
            error = {"code": -32601, "message": "Method not found: server/discover"}
            answer = json.dumps({"jsonrpc": "2.0", "id": request.get("id"), "error": error}).encode()
        elif method != "initialize" and b"mcp-session-id" not in dict(scope["headers"]):
            answer, status = b"Bad Request: Missing session ID", 400
        if answer is not None:
            kind = b"application/json" if status == 200 else b"text/plain"
            headers = [(b"content-type", kind), (b"content-length", str(len(answer)).encode())]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": answer})
            return
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await app(scope, replay, send)

    return legacy


def _bearer(app: Any, token: str) -> Any:
    """``app`` behind a bearer-token check (an ASGI wrapper)."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if given != expected:
                body = b"authorization " + given + b" is not accepted"
                headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
                await send({"type": "http.response.start", "status": 401, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded


if __name__ == "__main__":
    main(sys.argv[1:])
