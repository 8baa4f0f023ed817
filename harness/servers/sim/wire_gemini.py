"""The simulator's side of Gemini's native API (``gemini-generate``).

Written from the ``generateContent`` documentation, independent of the client
adapter. The model and the streaming mode live in the path, not the body:
``/v1beta/models/{model}:generateContent`` answers one ``GenerateContentResponse``;
``:streamGenerateContent`` answers a stream of them, as SSE with ``alt=sse``
(no ``[DONE]``) or as one JSON array without it. Text streams in small
fragments; function calls always arrive whole (partial arguments are Vertex
only), each with an ``id`` and the first with a ``thoughtSignature`` as Gemini
3 sends them. Only the last chunk carries ``finishReason`` and the usage.
"""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

from harness.servers.sim.script import Conversation, Reply, sim_id, turns_since_user
from harness.servers.sim.wire import Response, SimFormat, SimRequest, _dicts, _pieces, _sse, _tokens

TEXT_PIECE = 12
STATUSES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def _text(content: Any) -> str | None:
    """Text of a ``Content``: its text parts joined; ``None`` when it holds a ``functionResponse``
    (the conversation is past its opening then). A bare string is accepted for ``systemInstruction``."""
    if isinstance(content, str):
        return content
    parts = _dicts(content.get("parts")) if isinstance(content, dict) else []
    if any("functionResponse" in p or "function_response" in p for p in parts):
        return None
    return "\n".join(str(p["text"]) for p in parts if "text" in p and not p.get("thought"))


def read(request: SimRequest) -> Conversation:
    """``systemInstruction``, then the user contents before the first ``model`` one.
    Field names may be snake_case: protobuf JSON accepts both spellings."""
    body = request.body
    opening: list[tuple[str, str]] = []
    system = _text(body.get("systemInstruction", body.get("system_instruction")))
    if system:
        opening.append(("system", system))
    contents = _dicts(body.get("contents"))
    for content in contents:
        text = _text(content) if content.get("role", "user") == "user" else None
        if text is None:
            break
        opening.append(("user", text))
    declared = [
        d
        for tool in _dicts(body.get("tools"))
        for d in _dicts(tool.get("functionDeclarations", tool.get("function_declarations")))
    ]
    tools = [str(d.get("name") or "") for d in declared]
    schemas = {
        str(d.get("name")): d.get(
            "parametersJsonSchema", d.get("parameters_json_schema", d.get("parameters"))
        )
        for d in declared
    }
    models = sum(1 for c in contents if c.get("role") == "model")
    users = [_text(c) for c in contents if c.get("role", "user") == "user"]
    since = turns_since_user(
        [(c.get("role", "user"), c.get("role", "user") == "user" and _text(c) is not None) for c in contents]
    )
    return Conversation(opening, models, tools, [u for u in users if u is not None], since, schemas)


def _model(path: str) -> str:
    """The model named in ``/v1beta/models/{model}:method``."""
    resource = urlsplit(path).path.rpartition(":")[0]
    return resource.rpartition("models/")[2] or "sim"


def _call_parts(reply: Reply, seed: str) -> list[dict[str, Any]]:
    """One ``functionCall`` part per call, with its id; the step's signature on the first one."""
    parts: list[dict[str, Any]] = []
    for i, (name, args) in enumerate(reply.calls):
        part: dict[str, Any] = {"functionCall": {"name": name, "args": args, "id": sim_id(seed, i, length=8)}}
        if i == 0:
            signature = ("sim-signature:" + sim_id(seed, "sig", length=24)).encode()
            part["thoughtSignature"] = base64.b64encode(signature).decode()
        parts.append(part)
    return parts


def _chunk(
    parts: list[dict[str, Any]],
    base: dict[str, Any],
    last: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One ``GenerateContentResponse``; ``last`` adds the finish reason and usage to the final one."""
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if last is None:
        return {"candidates": [candidate], **base}
    candidate["finishReason"] = "STOP"
    return {"candidates": [candidate], "usageMetadata": last, **base}


def respond(request: SimRequest, reply: Reply, seed: str) -> Response:
    """A whole response, or the stream of them the path asks for."""
    body = request.body
    calls = _call_parts(reply, seed)
    parts = ([{"text": reply.text}] if reply.text else []) + calls
    usage = {
        "promptTokenCount": _tokens([body.get("systemInstruction"), body.get("contents")]),
        "candidatesTokenCount": _tokens(parts),
    }
    usage["totalTokenCount"] = usage["promptTokenCount"] + usage["candidatesTokenCount"]
    base = {"modelVersion": _model(request.path), "responseId": sim_id(seed, "response", length=22)}
    url = urlsplit(request.path)
    if ":streamGenerateContent" not in url.path:
        return Response(200, "application/json", json.dumps(_chunk(parts or [{"text": ""}], base, usage)))
    pieces = [[{"text": piece}] for piece in _pieces(reply.text or "", TEXT_PIECE) if piece]
    pieces += [[part] for part in calls]
    chunks = [_chunk(p, base) for p in pieces[:-1]]
    chunks.append(_chunk(pieces[-1] if pieces else [{"text": ""}], base, usage))
    if "sse" in parse_qs(url.query).get("alt", []):
        return Response(200, "text/event-stream", _sse(chunks, done=False))
    return Response(200, "application/json", json.dumps(chunks, indent=2))


def error(status: int, message: str) -> Response:
    """Google's error envelope: the HTTP code, the message and the canonical status name."""
    name = STATUSES.get(status, "INTERNAL" if status >= 500 else "INVALID_ARGUMENT")
    return Response(
        status,
        "application/json",
        json.dumps({"error": {"code": status, "message": message, "status": name}}),
    )


GEMINI = SimFormat("gemini-generate", read, respond, error)
