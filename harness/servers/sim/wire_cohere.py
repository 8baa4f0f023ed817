"""The simulator's side of Cohere v2 chat (``cohere-chat``, ``POST /v2/chat``).

Written from Cohere's v2 chat reference and the types of its Python SDK, independent of the
client adapter: a whole ``{id, finish_reason, message, usage}``, or the named SSE events of a
stream (no ``[DONE]``): ``message-start``; for a tool turn the ``tool_plan`` in
``tool-plan-delta`` fragments, then per call ``tool-call-start`` (id, name, empty arguments),
``tool-call-delta`` fragments and ``tool-call-end``; for an answer ``content-start``,
``content-delta`` fragments and ``content-end``; last ``message-end`` with the finish reason
(``TOOL_CALL`` or ``COMPLETE``) and the usage. Every tool turn carries a plan, as Cohere's
models write one before their calls; ids are ``<name>_<12 characters>`` as Cohere's are.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

from harness.servers.sim.script import Conversation, Reply, sim_id, turns_since_user
from harness.servers.sim.wire import Response, SimFormat, SimRequest, _dicts, _pieces, _tokens

TEXT_PIECE = 12
JSON_PIECE = 10


def _text(content: Any) -> str | None:
    """Text of a message's ``content``: a string, or its ``text`` blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text") or "") for b in _dicts(content) if b.get("type") == "text")
    return None


def read(request: SimRequest) -> Conversation:
    """The system and user messages before the first other one, then the rest of the conversation."""
    body = request.body
    messages = _dicts(body.get("messages"))
    opening: list[tuple[str, str]] = []
    for message in messages:
        role, text = message.get("role"), _text(message.get("content"))
        if role not in ("system", "user") or text is None:
            break
        opening.append((str(role), text))
    declared = [t.get("function") for t in _dicts(body.get("tools"))]
    functions = [f for f in declared if isinstance(f, dict)]
    tools = [str(f.get("name") or "") for f in functions]
    schemas = {str(f.get("name")): f.get("parameters") for f in functions}
    assistants = sum(1 for m in messages if m.get("role") == "assistant")
    users = [_text(m.get("content")) for m in messages if m.get("role") == "user"]
    since = turns_since_user([(str(m.get("role", "")), m.get("role") == "user") for m in messages])
    return Conversation(opening, assistants, tools, [u for u in users if u is not None], since, schemas)


def _message_id(*parts: Any) -> str:
    """A deterministic UUID, the shape of Cohere's response ids."""
    return str(uuid.UUID(bytes=hashlib.sha256(repr(parts).encode()).digest()[:16]))


def _calls(reply: Reply, seed: str) -> list[dict[str, Any]]:
    return [
        {
            "id": f"{name}_{sim_id(seed, i, length=12).lower()}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
        }
        for i, (name, args) in enumerate(reply.calls)
    ]


def _plan(calls: list[dict[str, Any]]) -> str:
    names = list(dict.fromkeys(c["function"]["name"] for c in calls))
    return f"I will use {' and '.join(names)} to answer the request."


def _event(name: str, data: dict[str, Any]) -> str:
    """One named SSE event; its data repeats the name as ``type``."""
    return f"event: {name}\ndata: {json.dumps({'type': name, **data}, ensure_ascii=False)}\n\n"


def _stream(response: dict[str, Any]) -> str:
    """The events of a response: the message opened empty, its plan and calls or its text in
    fragments, then the finish reason and usage."""
    message = response["message"]
    empty = {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}
    events = [_event("message-start", {"id": response["id"], "delta": {"message": empty}})]
    if message.get("tool_plan"):
        events += [
            _event("tool-plan-delta", {"delta": {"message": {"tool_plan": piece}}})
            for piece in _pieces(message["tool_plan"], TEXT_PIECE)
        ]
    for index, call in enumerate(message.get("tool_calls") or []):
        start = {**call, "function": {**call["function"], "arguments": ""}}
        events.append(
            _event("tool-call-start", {"index": index, "delta": {"message": {"tool_calls": start}}})
        )
        events += [
            _event(
                "tool-call-delta",
                {"index": index, "delta": {"message": {"tool_calls": {"function": {"arguments": piece}}}}},
            )
            for piece in _pieces(call["function"]["arguments"], JSON_PIECE)
        ]
        events.append(_event("tool-call-end", {"index": index}))
    for index, item in enumerate(message.get("content") or []):
        opened = {"message": {"content": {"type": "text", "text": ""}}}
        events.append(_event("content-start", {"index": index, "delta": opened}))
        events += [
            _event("content-delta", {"index": index, "delta": {"message": {"content": {"text": piece}}}})
            for piece in _pieces(item["text"], TEXT_PIECE)
        ]
        events.append(_event("content-end", {"index": index}))
    end = {"finish_reason": response["finish_reason"], "usage": response["usage"]}
    events.append(_event("message-end", {"delta": end}))
    return "".join(events)


def respond(request: SimRequest, reply: Reply, seed: str) -> Response:
    """A whole response, or its SSE events when the request has ``"stream": true``."""
    body = request.body
    calls = _calls(reply, seed)
    message: dict[str, Any] = {"role": "assistant"}
    if calls:
        message["tool_plan"] = _plan(calls)
        message["tool_calls"] = calls
    if reply.text:
        message["content"] = [{"type": "text", "text": reply.text}]
    counts = {"input_tokens": _tokens(body.get("messages")), "output_tokens": _tokens(message)}
    response = {
        "id": _message_id(seed, "response"),
        "finish_reason": "TOOL_CALL" if calls else "COMPLETE",
        "message": message,
        "usage": {"billed_units": counts, "tokens": counts},
    }
    if body.get("stream") is True:
        return Response(200, "text/event-stream", _stream(response))
    return Response(200, "application/json", json.dumps(response, ensure_ascii=False))


def error(status: int, message: str) -> Response:
    """Cohere's error body: the request's id and the message."""
    return Response(
        status, "application/json", json.dumps({"id": _message_id(status, message), "message": message})
    )


COHERE = SimFormat("cohere-chat", read, respond, error)
