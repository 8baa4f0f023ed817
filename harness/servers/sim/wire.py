"""The simulator's side of each wire format: read a request, write a conformant response.

This is server code written from the formats' documentation, independent of
the client adapters it is used to test. Streams are cut into small fragments
so that clients must really assemble them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.servers.sim.script import Conversation, Reply, sim_id, turns_since_user

CREATED = 1767225600  # 2026-01-01T00:00:00Z: responses are deterministic
CREATED_ISO = "2026-01-01T00:00:00Z"


@dataclass
class SimRequest:
    """A request as the simulator sees it: the path after the format prefix, and the JSON body."""

    path: str
    body: dict[str, Any]


@dataclass
class Response:
    """A response of the simulator: its body is text, or bytes for a binary format (AWS's event stream)."""

    status: int
    content_type: str
    body: str | bytes
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def data(self) -> bytes:
        """The body as it goes on the wire."""
        return self.body if isinstance(self.body, bytes) else self.body.encode("utf-8")

    @property
    def text(self) -> str:
        """The body as text (a text format's responses, which its deviations rewrite)."""
        return self.body if isinstance(self.body, str) else self.body.decode("utf-8", errors="replace")


def _dicts(value: Any) -> list[dict[str, Any]]:
    """The objects of a JSON list; anything else in a request reads as nothing (never a crash)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _tokens(value: Any) -> int:
    """A deterministic stand-in for a token count (about four characters a token)."""
    return max(1, len(json.dumps(value)) // 4)


def _sse(chunks: list[Any], *, done: bool = True) -> str:
    out = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks)
    return out + ("data: [DONE]\n\n" if done else "")


def _openai_like_conversation(request: SimRequest) -> Conversation:
    body = request.body
    messages = body.get("messages") or []
    opening: list[tuple[str, str]] = []
    for message in messages:
        if message.get("role") not in ("system", "user"):
            break
        content = message.get("content")
        opening.append((message["role"], content if isinstance(content, str) else json.dumps(content)))
    tools = [t.get("function", {}).get("name", "") for t in body.get("tools") or []]
    assistants = sum(1 for m in messages if m.get("role") == "assistant")
    users = [m.get("content") for m in messages if m.get("role") == "user"]
    since = turns_since_user(
        [(m.get("role", ""), m.get("role") == "user" and isinstance(m.get("content"), str)) for m in messages]
    )
    schemas = {
        str(t["function"].get("name")): t["function"].get("parameters")
        for t in body.get("tools") or []
        if isinstance(t, dict) and isinstance(t.get("function"), dict)
    }
    return Conversation(opening, assistants, tools, [u for u in users if isinstance(u, str)], since, schemas)


# -- OpenAI Chat Completions and Mistral ------------------------------------------


def _chat_calls(reply: Reply, seed: str, *, mistral: bool) -> list[dict[str, Any]]:
    calls = []
    for i, (name, args) in enumerate(reply.calls):
        call_id = sim_id(seed, i) if mistral else "call_" + sim_id(seed, i, length=20)
        calls.append(
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
            }
        )
    return calls


def _chat_respond(request: SimRequest, reply: Reply, seed: str, *, mistral: bool) -> Response:
    body = request.body
    model = body.get("model", "sim")
    calls = _chat_calls(reply, seed, mistral=mistral)
    finish = "tool_calls" if calls else "stop"
    usage = {
        "prompt_tokens": _tokens(body.get("messages")),
        "completion_tokens": _tokens([reply.text, calls]),
    }
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    base = {"id": "chatcmpl-" + sim_id(seed, "c"), "created": CREATED, "model": model}
    if not body.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.reasoning:
            message["reasoning_content"] = reply.reasoning
        if calls:
            message["tool_calls"] = calls
        choice = {"index": 0, "message": message, "finish_reason": finish}
        return Response(
            200,
            "application/json",
            json.dumps({**base, "object": "chat.completion", "choices": [choice], "usage": usage}),
        )
    chunk = {**base, "object": "chat.completion.chunk"}

    def delta(d: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {**chunk, "choices": [{"index": 0, "delta": d, "finish_reason": finish_reason}]}

    chunks = [delta({"role": "assistant", "content": ""})]
    chunks += [delta({"reasoning_content": piece}) for piece in _pieces(reply.reasoning or "", 12) if piece]
    chunks += [delta({"content": piece}) for piece in _pieces(reply.text or "", 12) if piece]
    for i, call in enumerate(calls):
        if mistral:  # Mistral sends each call whole in one chunk
            chunks.append(delta({"tool_calls": [{**call, "index": i}]}))
            continue
        head = {
            "index": i,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""},
        }
        chunks.append(delta({"tool_calls": [head]}))
        chunks += [
            delta({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
            for piece in _pieces(call["function"]["arguments"], 10)
        ]
    chunks.append(delta({}, finish))
    if mistral or (body.get("stream_options") or {}).get("include_usage"):
        if mistral:
            chunks[-1]["usage"] = usage
        else:
            chunks.append({**chunk, "choices": [], "usage": usage})
    return Response(200, "text/event-stream", _sse(chunks))


def _chat_error(status: int, message: str) -> Response:
    return Response(
        status,
        "application/json",
        json.dumps({"error": {"message": message, "type": "invalid_request_error", "code": None}}),
    )


# -- wire deviations of OpenAI Chat Completions ---------------------------------------


def _chunks(body: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: {")]


def _map_calls(response: Response, change: Callable[[list[dict[str, Any]]], None]) -> Response:
    """Apply ``change`` to every ``tool_calls`` list of a whole or streamed completion."""
    streamed = response.content_type == "text/event-stream"
    documents = _chunks(response.text) if streamed else [json.loads(response.text)]
    for document in documents:
        for choice in document.get("choices") or []:
            holder = choice.get("delta" if streamed else "message") or {}
            if holder.get("tool_calls"):
                change(holder["tool_calls"])
    body = _sse(documents) if streamed else json.dumps(documents[0])
    return Response(response.status, response.content_type, body)


def _arguments_object(calls: list[dict[str, Any]]) -> None:
    for call in calls:
        arguments = call.get("function", {}).get("arguments")
        if isinstance(arguments, str) and arguments:
            call["function"]["arguments"] = json.loads(arguments)


def _arguments_truncated(calls: list[dict[str, Any]]) -> None:
    for call in calls:
        arguments = call.get("function", {}).get("arguments")
        if isinstance(arguments, str) and arguments.endswith("}"):
            call["function"]["arguments"] = arguments[:-1]


def _missing_ids(calls: list[dict[str, Any]]) -> None:
    for call in calls:
        call.pop("id", None)


def _duplicate_ids(calls: list[dict[str, Any]]) -> None:
    for call in calls:
        if "id" in call:
            call["id"] = "call_duplicate"


def _no_done(response: Response) -> Response:
    return Response(response.status, response.content_type, response.text.replace("data: [DONE]\n\n", ""))


def _error_in_stream(response: Response) -> Response:
    error = {"error": {"message": "upstream overloaded", "type": "server_error", "code": 503}}
    if response.content_type == "text/event-stream":
        return Response(200, "text/event-stream", _sse([error]))
    return Response(200, "application/json", json.dumps(error))


def _server_error(response: Response) -> Response:
    return Response(
        500, "application/json", json.dumps({"error": {"message": "", "type": "internal_server_error"}})
    )


WIRE_DEVIATIONS: dict[str, Callable[[Response], Response]] = {
    "args-object": lambda r: _map_calls(r, _arguments_object),
    "args-invalid-json": lambda r: _map_calls(r, _arguments_truncated),
    "missing-ids": lambda r: _map_calls(r, _missing_ids),
    "duplicate-ids": lambda r: _map_calls(r, _duplicate_ids),
    "stream-without-done": _no_done,
    "error-in-200": _error_in_stream,
    "server-error": _server_error,
}
"""How the OpenAI-format response is written: arguments as an object or as broken JSON,
call ids missing or shared, a stream without ``[DONE]``, an error inside an HTTP 200, a 500."""

# -- Ollama native ----------------------------------------------------------------------


def _ollama_respond(request: SimRequest, reply: Reply, seed: str) -> Response:
    body = request.body
    calls = [
        {
            "id": "call_" + sim_id(seed, i, length=8).lower(),
            "function": {"index": i, "name": name, "arguments": args},
        }
        for i, (name, args) in enumerate(reply.calls)
    ]
    base = {"model": body.get("model", "sim"), "created_at": CREATED_ISO}
    done = {
        "done": True,
        "done_reason": "stop",
        "total_duration": 1000,
        "load_duration": 10,
        "prompt_eval_count": _tokens(body.get("messages")),
        "eval_count": _tokens([reply.text, calls]),
    }
    if body.get("stream") is False:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or ""}
        if calls:
            message["tool_calls"] = calls
        return Response(200, "application/json", json.dumps({**base, "message": message, **done}))
    lines = [
        {**base, "message": {"role": "assistant", "content": piece}, "done": False}
        for piece in _pieces(reply.text or "", 12)
        if piece
    ]
    lines += [
        {**base, "message": {"role": "assistant", "content": "", "tool_calls": [call]}, "done": False}
        for call in calls
    ]
    lines.append({**base, "message": {"role": "assistant", "content": ""}, **done})
    return Response(200, "application/x-ndjson", "".join(json.dumps(line) + "\n" for line in lines))


def _ollama_error(status: int, message: str) -> Response:
    return Response(status, "application/json", json.dumps({"error": message}))


@dataclass(frozen=True)
class SimFormat:
    """One wire format on the simulator: how to read its requests and write its responses and errors."""

    name: str
    read: Callable[[SimRequest], Conversation]
    respond: Callable[[SimRequest, Reply, str], Response]
    error: Callable[[int, str], Response]
    deviations: Mapping[str, Callable[[Response], Response]] = field(default_factory=dict)
    """Its wire deviations by name (:mod:`harness.servers.sim.deviations`): a conformant response
    rewritten wrongly."""


OPENAI = SimFormat(
    "openai-chat",
    _openai_like_conversation,
    lambda request, reply, seed: _chat_respond(request, reply, seed, mistral=False),
    _chat_error,
    WIRE_DEVIATIONS,
)
MISTRAL = SimFormat(
    "mistral-chat",
    _openai_like_conversation,
    lambda request, reply, seed: _chat_respond(request, reply, seed, mistral=True),
    _chat_error,
)
OLLAMA = SimFormat("ollama-chat", _openai_like_conversation, _ollama_respond, _ollama_error)
