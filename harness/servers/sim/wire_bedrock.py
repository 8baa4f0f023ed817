"""The simulator's side of AWS Bedrock Converse (``bedrock-converse``).

Written from the Bedrock Runtime API reference and botocore's service model, independent of the
client adapter. The model id and the streaming mode are in the path:
``/model/{modelId}/converse`` answers one ``ConverseResponse``; ``/converse-stream`` answers the
binary AWS event stream, each message framed here with its prelude, its ``:event-type``,
``:content-type`` and ``:message-type`` headers, its JSON payload and both CRC32s:
``messageStart``, text as ``contentBlockDelta`` events without a ``contentBlockStart`` (as Bedrock
sends it), each call as a ``contentBlockStart`` carrying ``toolUse {toolUseId, name}`` then its
input as JSON text fragments (none for a call without arguments), a ``contentBlockStop`` per
block, ``messageStop`` with the stop reason, ``metadata`` with the usage. Errors are
``{"message": ...}`` with the type in the ``x-amzn-ErrorType`` header, as AWS's REST JSON
protocol sends them.
"""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

from harness.servers.sim.script import Conversation, Reply, signature, sim_id, turns_since_user
from harness.servers.sim.wire import Response, SimFormat, SimRequest, _dicts, _pieces, _tokens

TEXT_PIECE = 12
JSON_PIECE = 10
EVENTSTREAM = "application/vnd.amazon.eventstream"
ERROR_TYPES = {
    400: "ValidationException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}


def _texts(blocks: list[dict[str, Any]]) -> list[str]:
    return [str(b["text"]) for b in blocks if isinstance(b.get("text"), str)]


def read(request: SimRequest) -> Conversation:
    """The system blocks, then each text block of the user messages before the first assistant
    message (consecutive user messages share one Converse message, a block each)."""
    body = request.body
    opening = [("system", text) for text in _texts(_dicts(body.get("system")))]
    messages = _dicts(body.get("messages"))
    roles: list[tuple[str, bool]] = []
    users: list[str] = []
    opened = True
    for message in messages:
        blocks = _dicts(message.get("content"))
        results = any("toolResult" in b for b in blocks)
        role = str(message.get("role") or "")
        if role == "user" and not results:
            users += _texts(blocks)
            if opened:
                opening += [("user", text) for text in _texts(blocks)]
        else:
            opened = False
        roles.append((role, role == "user" and not results))
    specs = [t["toolSpec"] for t in _dicts((body.get("toolConfig") or {}).get("tools")) if "toolSpec" in t]
    names = [str(s.get("name") or "") for s in specs if isinstance(s, dict)]
    schemas = {
        str(s.get("name")): (s.get("inputSchema") or {}).get("json")
        for s in specs
        if isinstance(s, dict) and isinstance(s.get("inputSchema"), dict)
    }
    assistants = sum(1 for m in messages if m.get("role") == "assistant")
    return Conversation(opening, assistants, names, users, turns_since_user(roles), schemas)


def _content(reply: Reply, seed: str) -> list[dict[str, Any]]:
    """The text block first, then one ``toolUse`` block per call."""
    blocks: list[dict[str, Any]] = []
    if reply.reasoning:
        reasoning = {"text": reply.reasoning, "signature": signature(seed)}
        blocks.append({"reasoningContent": {"reasoningText": reasoning}})
    if reply.text:
        blocks.append({"text": reply.text})
    for i, (name, args) in enumerate(reply.calls):
        use_id = "tooluse_" + sim_id(seed, i, length=22)
        blocks.append({"toolUse": {"toolUseId": use_id, "name": name, "input": args}})
    return blocks


def frame(event: str, payload: dict[str, Any]) -> bytes:
    """One event stream message: prelude (total and headers lengths, their CRC32), string headers,
    the JSON payload, and the CRC32 of all that precedes it."""
    headers = b""
    for name, value in (
        (":event-type", event),
        (":content-type", "application/json"),
        (":message-type", "event"),
    ):
        raw = value.encode("utf-8")
        headers += bytes([len(name)]) + name.encode("ascii") + b"\x07" + struct.pack(">H", len(raw)) + raw
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    prelude = struct.pack(">II", 16 + len(headers) + len(data), len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + headers + data
    return message + struct.pack(">I", zlib.crc32(message))


def _stream(content: list[dict[str, Any]], stop: str, usage: dict[str, int]) -> bytes:
    """The events of a reply, each block's text or input cut into small fragments."""
    out = [frame("messageStart", {"role": "assistant"})]
    for index, block in enumerate(content):
        if "text" in block:
            for piece in _pieces(block["text"], TEXT_PIECE):
                out.append(frame("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": piece}}))
        elif "reasoningContent" in block:
            reasoning = block["reasoningContent"]["reasoningText"]
            for delta in [{"text": p} for p in _pieces(reasoning["text"], TEXT_PIECE)] + [
                {"signature": reasoning["signature"]}
            ]:
                payload = {"contentBlockIndex": index, "delta": {"reasoningContent": delta}}
                out.append(frame("contentBlockDelta", payload))
        else:
            use = block["toolUse"]
            start = {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}
            out.append(frame("contentBlockStart", {"contentBlockIndex": index, "start": start}))
            arguments = json.dumps(use["input"], ensure_ascii=False) if use["input"] else ""
            for piece in _pieces(arguments, JSON_PIECE):
                if piece:
                    delta = {"toolUse": {"input": piece}}
                    out.append(frame("contentBlockDelta", {"contentBlockIndex": index, "delta": delta}))
        out.append(frame("contentBlockStop", {"contentBlockIndex": index}))
    out.append(frame("messageStop", {"stopReason": stop}))
    out.append(frame("metadata", {"usage": usage, "metrics": {"latencyMs": 1}}))
    return b"".join(out)


def respond(request: SimRequest, reply: Reply, seed: str) -> Response:
    """A whole ``ConverseResponse``, or its event stream when the path ends in ``/converse-stream``."""
    body = request.body
    content = _content(reply, seed)
    stop = "tool_use" if reply.calls else "end_turn"
    usage = {
        "inputTokens": _tokens([body.get("system"), body.get("messages")]),
        "outputTokens": _tokens(content),
    }
    usage["totalTokens"] = usage["inputTokens"] + usage["outputTokens"]
    if request.path.split("?")[0].endswith("/converse-stream"):
        return Response(200, EVENTSTREAM, _stream(content, stop, usage))
    whole = {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": usage,
        "metrics": {"latencyMs": 1},
    }
    return Response(200, "application/json", json.dumps(whole, ensure_ascii=False))


def error(status: int, message: str) -> Response:
    """``{"message": ...}``, the error's type in the ``x-amzn-ErrorType`` header."""
    kind = ERROR_TYPES.get(status, "InternalServerException" if status >= 500 else "ValidationException")
    header = f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"
    return Response(
        status, "application/json", json.dumps({"message": message}), {"x-amzn-errortype": header}
    )


BEDROCK = SimFormat("bedrock-converse", read, respond, error)
