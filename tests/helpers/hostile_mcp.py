"""A hostile stdio MCP server, speaking bare JSON-RPC so it can break the protocol on purpose.

Run as ``python tests/helpers/hostile_mcp.py BEHAVIOUR`` (standard library only: the SDK gives
stdio servers a minimal environment). Its tools are ``echo`` unless the behaviour says
otherwise; each answers with its arguments' ``text``. Behaviours:

* ``secret``: writes the value of ``HOSTILE_SECRET`` on stdout, as a line that is not JSON-RPC,
  before it answers each call (a server leaking a ``secret_env`` value);
* ``garbage``: writes lines that are not JSON-RPC on stdout before each answer;
* ``empty-name``: also lists a tool named ``""``;
* ``twins``: lists ``echo.x`` and ``echo_x`` (one name when sanitised for OpenAI's rules);
* ``stubborn``: ignores SIGTERM and, once called, never answers nor reads its stdin again (it
  says ``stubborn: hang requested`` on stderr): only SIGKILL ends it;
* ``old``: speaks only the 2025-03-26 revision (answers ``initialize`` with it, whatever is
  offered), and, like every behaviour, knows no ``server/discover``;
* ``plain``: behaves.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import Any

GARBAGE = ["this is not JSON-RPC", '{"jsonrpc": "2.0", "method": 42}', "\x1b[31mred\x1b[0m {"]


def tools(behaviour: str) -> list[dict[str, Any]]:
    names = {"twins": ["echo.x", "echo_x"], "empty-name": ["", "echo"]}.get(behaviour, ["echo"])
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    return [{"name": n, "description": f"Echo the text ({n!r}).", "inputSchema": schema} for n in names]


def answer(request: dict[str, Any], behaviour: str) -> dict[str, Any] | None:
    method, params = request.get("method"), request.get("params") or {}
    if "id" not in request:
        return None  # a notification
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
    if method == "initialize":
        reply["result"] = {
            "protocolVersion": "2025-03-26"
            if behaviour == "old"
            else params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": f"hostile-{behaviour}", "version": "1.0.0"},
        }
    elif method == "tools/list":
        reply["result"] = {"tools": tools(behaviour)}
    elif method == "tools/call":
        if behaviour == "stubborn":
            print("stubborn: hang requested", file=sys.stderr, flush=True)
            while True:
                time.sleep(3600)
        if behaviour == "secret":
            say(f"leaking {os.environ.get('HOSTILE_SECRET', '')}")
        elif behaviour == "garbage":
            for line in GARBAGE:
                say(line)
        text = str((params.get("arguments") or {}).get("text", ""))
        reply["result"] = {"content": [{"type": "text", "text": f"{params.get('name')}: {text}"}]}
    elif method == "ping":
        reply["result"] = {}
    else:
        reply["error"] = {"code": -32601, "message": f"method not found: {method}"}
    return reply


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main() -> None:
    behaviour = sys.argv[1] if len(sys.argv) > 1 else "plain"
    if behaviour == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = answer(json.loads(line), behaviour)
        if reply is not None:
            say(json.dumps(reply))


if __name__ == "__main__":
    main()
