"""The simulator's side of Anthropic Messages (``anthropic-messages``, ``POST /v1/messages``).

Written from the Messages API documentation, independent of the client adapter:
a whole ``message`` with ``text`` and ``tool_use`` content blocks, or the named
SSE events of a stream (``message_start``, a ``ping``, ``content_block_start`` /
``_delta`` / ``_stop`` per block, ``message_delta`` with the stop reason and
the output tokens, ``message_stop``). Text and tool input are cut into small
fragments so that a client must really assemble them; a tool called with no
arguments gets no ``input_json_delta`` at all, as the API does, so a client
must fall back to the start block's ``{}``.
"""

from __future__ import annotations

import json
from typing import Any

from harness.servers.sim.hosted import Declared
from harness.servers.sim.script import Conversation, Reply, signature, sim_id, turns_since_user
from harness.servers.sim.wire import Response, SimFormat, SimRequest, _dicts, _pieces, _tokens

TEXT_PIECE = 12
JSON_PIECE = 10
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def _text(content: Any) -> str | None:
    """Text of a ``content`` field: a string, or its ``text`` blocks joined; ``None`` when the
    content holds a ``tool_result`` (the conversation is past its opening then)."""
    if isinstance(content, str):
        return content
    blocks = _dicts(content)
    if any(b.get("type") == "tool_result" for b in blocks):
        return None
    return "\n".join(str(b.get("text") or "") for b in blocks if b.get("type") == "text")


def read(request: SimRequest) -> Conversation:
    """System prompt (top-level ``system``), then the user messages before the first assistant one."""
    body = request.body
    opening: list[tuple[str, str]] = []
    system = _text(body.get("system"))
    if system:
        opening.append(("system", system))
    messages = _dicts(body.get("messages"))
    for message in messages:
        text = _text(message.get("content")) if message.get("role") == "user" else None
        if text is None:
            break
        opening.append(("user", text))
    functions = [t for t in _dicts(body.get("tools")) if t.get("type") != "mcp_toolset"]
    tools = [str(t.get("name") or "") for t in functions]
    assistants = sum(1 for m in messages if m.get("role") == "assistant")
    users = [_text(m.get("content")) for m in messages if m.get("role") == "user"]
    roles: list[tuple[str, bool]] = []
    for m in messages:
        role = str(m.get("role", ""))
        # each hosted call the connector ran is a scripted step of its own, before the message's own
        hosted = sum(1 for b in _dicts(m.get("content")) if b.get("type") == "mcp_tool_use")
        roles += [("assistant", False)] * (hosted if role == "assistant" else 0)
        roles.append((role, role == "user" and _text(m.get("content")) is not None))
    since = turns_since_user(roles)
    schemas = {str(t.get("name")): t.get("input_schema") for t in functions}
    return Conversation(
        opening, assistants, tools, [u for u in users if u is not None], since, schemas, _declared(body)
    )


def _declared(body: dict[str, Any]) -> dict[str, Declared]:
    """The request's MCP servers and their toolsets: an allowlist is a ``default_config`` that
    turns tools off with ``configs`` that turn some on [A19]."""
    servers = {str(s.get("name")) for s in _dicts(body.get("mcp_servers")) if isinstance(s.get("name"), str)}
    declared = {}
    for tool in _dicts(body.get("tools")):
        name = tool.get("mcp_server_name")
        if tool.get("type") != "mcp_toolset" or name not in servers:
            continue
        default, configs = tool.get("default_config"), tool.get("configs")
        configs = configs if isinstance(configs, dict) else {}
        allowed = None
        if isinstance(default, dict) and default.get("enabled") is False:
            allowed = tuple(n for n, c in configs.items() if isinstance(c, dict) and c.get("enabled") is True)
        declared[str(name)] = Declared(allowed)
    return declared


def _blocks(reply: Reply, seed: str) -> list[dict[str, Any]]:
    """The whole content: the text block first, then one ``tool_use`` block per call."""
    blocks: list[dict[str, Any]] = []
    if reply.reasoning:
        blocks.append({"type": "thinking", "thinking": reply.reasoning, "signature": signature(seed)})
    for step in reply.hosted:  # the connector lists tools unseen: only its calls are blocks [A19]
        if step.kind == "call":
            blocks.append(
                {
                    "type": "mcp_tool_use",
                    "id": step.id,
                    "name": step.name,
                    "server_name": step.server,
                    "input": step.arguments,
                }
            )
            text = [{"type": "text", "text": step.output or ""}]
            blocks.append(
                {"type": "mcp_tool_result", "tool_use_id": step.id, "is_error": False, "content": text}
            )
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    for i, (name, args) in enumerate(reply.calls):
        blocks.append(
            {"type": "tool_use", "id": "toolu_" + sim_id(seed, i, length=24), "name": name, "input": args}
        )
    return blocks


def _event(name: str, data: dict[str, Any]) -> str:
    """One named SSE event; the API always repeats the name as the data's ``type``."""
    return f"event: {name}\ndata: {json.dumps({'type': name, **data}, ensure_ascii=False)}\n\n"


def _stream(message: dict[str, Any]) -> str:
    """The events of a message: each block opened, filled with fragments, closed; then the stop."""
    head = {
        **message,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": message["usage"]["input_tokens"], "output_tokens": 1},
    }
    events = [_event("message_start", {"message": head}), _event("ping", {})]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            start: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in _pieces(block["text"], TEXT_PIECE)]
        elif block["type"] == "thinking":
            start = {"type": "thinking", "thinking": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": piece}
                for piece in _pieces(block["thinking"], TEXT_PIECE)
            ]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        elif block["type"] == "mcp_tool_result":
            start, deltas = block, []
        else:
            start = {**block, "input": {}}
            arguments = json.dumps(block["input"], ensure_ascii=False) if block["input"] else ""
            deltas = [
                {"type": "input_json_delta", "partial_json": piece}
                for piece in _pieces(arguments, JSON_PIECE)
                if piece
            ]
        events.append(_event("content_block_start", {"index": index, "content_block": start}))
        events += [_event("content_block_delta", {"index": index, "delta": d}) for d in deltas]
        events.append(_event("content_block_stop", {"index": index}))
    events.append(
        _event(
            "message_delta",
            {
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": message["usage"]["output_tokens"]},
            },
        )
    )
    events.append(_event("message_stop", {}))
    return "".join(events)


def respond(request: SimRequest, reply: Reply, seed: str) -> Response:
    """A whole message, or its SSE events when the request has ``"stream": true``."""
    body = request.body
    content = _blocks(reply, seed)
    message = {
        "id": "msg_" + sim_id(seed, "msg", length=24),
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "sim"),
        "content": content,
        "stop_reason": "tool_use" if reply.calls else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": _tokens([body.get("system"), body.get("messages")]),
            "output_tokens": _tokens(content),
        },
    }
    if body.get("stream") is True:
        return Response(200, "text/event-stream", _stream(message))
    return Response(200, "application/json", json.dumps(message, ensure_ascii=False))


def error(status: int, message: str) -> Response:
    """Anthropic's error envelope; the error ``type`` follows the status as the API's does."""
    kind = ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return Response(
        status,
        "application/json",
        json.dumps(
            {
                "type": "error",
                "error": {"type": kind, "message": message},
                "request_id": "req_" + sim_id(status, message, length=24),
            }
        ),
    )


ANTHROPIC = SimFormat("anthropic-messages", read, respond, error)
