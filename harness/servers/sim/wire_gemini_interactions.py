"""The simulator's side of Gemini Interactions (``gemini-interactions``, ``POST /v1beta/interactions``).

Written from the published reference (the ``Api-Revision: 2026-05-20`` steps schema, the
python-genai SDK's types and the ai.google.dev pages), independent of the client adapter;
no recorded traffic exists yet, so this module is the format's conformance oracle.

A request holds its conversation as typed steps in ``input`` (or a string, or content
items for one user turn). The answer is an ``Interaction``: ``status``
``requires_action`` when it calls functions (a ``thought`` step with a signature first,
then one ``function_call`` step per call, each with its ``id``), ``completed`` when it
answers in a ``model_output`` step; ``usage`` in ``total_*_tokens``. With ``"stream":
true`` the answer is SSE events named by their ``event_type``: ``interaction.created``,
``interaction.status_update``, then ``step.start``, ``step.delta`` fragments and
``step.stop`` for each step (text and argument JSON in small pieces; a call without
arguments gets no ``arguments_delta``), then ``interaction.completed`` with the status and
the usage. Errors are ``{"error": {"code", "message"}}`` with the reference's codes.

Interactions are stored unless the request says ``"store": false`` (the API's default is
to store): a later request naming one as ``previous_interaction_id`` continues its
conversation. An id the simulator never stored continues nothing: the request's own steps
do not open a bundled scenario, and it is answered as any unknown conversation is (400).
"""

from __future__ import annotations

import base64
import json
import threading
from collections import OrderedDict
from typing import Any

from harness.servers.sim.script import Conversation, Reply, sim_id, turns_since_user
from harness.servers.sim.wire import CREATED_ISO, Response, SimFormat, SimRequest, _dicts, _pieces, _tokens

TEXT_PIECE = 12
JSON_PIECE = 10
CONTENT_TYPES = frozenset({"text", "image", "audio", "document", "video"})
MODEL_STEPS = frozenset({"model_output", "thought", "function_call"})
ERROR_CODES = {
    400: "invalid_request",
    401: "authentication",
    402: "payment_required",
    403: "permission_denied",
    404: "not_found",
    416: "out_of_range",
    429: "rate_limit_exceeded",
    499: "cancelled",
    500: "api_error",
}
STORED_LIMIT = 4096
"""Interactions kept for ``previous_interaction_id``; the oldest go first. An id is made from the
conversation it ends, so it names the same steps whichever simulator of the process stored it."""

_stored: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
_lock = threading.Lock()


def _kind(item: dict[str, Any]) -> str | None:
    """An item's ``type`` when it is a string (a request may hold anything)."""
    kind = item.get("type")
    return kind if isinstance(kind, str) else None


def _steps(value: Any) -> list[dict[str, Any]]:
    """``input`` as steps: a string or content items are one ``user_input`` step."""
    if isinstance(value, str):
        return [{"type": "user_input", "content": [{"type": "text", "text": value}]}]
    items = [value] if isinstance(value, dict) else _dicts(value)
    if items and all(_kind(item) in CONTENT_TYPES for item in items):
        return [{"type": "user_input", "content": items}]
    return items


def _history(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The whole conversation: the stored one the request continues (none for an id never
    stored), then its input."""
    previous = body.get("previous_interaction_id")
    with _lock:
        stored = _stored.get(str(previous), []) if previous is not None else []
    return stored + _steps(body.get("input"))


def _store(interaction_id: str, steps: list[dict[str, Any]]) -> None:
    with _lock:
        _stored[interaction_id] = steps
        _stored.move_to_end(interaction_id)
        while len(_stored) > STORED_LIMIT:
            _stored.popitem(last=False)


def _text(step: dict[str, Any]) -> str:
    """The text items of a step's ``content`` joined."""
    return "\n".join(str(c.get("text") or "") for c in _dicts(step.get("content")) if c.get("type") == "text")


def read(request: SimRequest) -> Conversation:
    """``system_instruction``, then the ``user_input`` steps before the first other step; each run
    of model steps (``model_output``, ``thought``, ``function_call``) is one model turn."""
    body = request.body
    steps = _history(body)
    opening: list[tuple[str, str]] = []
    system = body.get("system_instruction")
    if isinstance(system, str) and system:
        opening.append(("system", system))
    for step in steps:
        if step.get("type") != "user_input":
            break
        opening.append(("user", _text(step)))
    roles: list[tuple[str, bool]] = []
    for step in steps:
        kind = _kind(step)
        if kind in MODEL_STEPS:
            if not roles or roles[-1][0] != "model":
                roles.append(("model", False))
        else:
            roles.append(("user" if kind == "user_input" else "tool", kind == "user_input"))
    declared = [t for t in _dicts(body.get("tools")) if t.get("type") == "function"]
    return Conversation(
        opening,
        sum(1 for role, _ in roles if role == "model"),
        [str(t.get("name") or "") for t in declared],
        [_text(s) for s in steps if s.get("type") == "user_input"],
        turns_since_user(roles),
        {str(t.get("name")): t.get("parameters") for t in declared},
    )


def _output(reply: Reply, seed: str) -> list[dict[str, Any]]:
    """The output steps: a thought with its signature before calls, the text, one step per call."""
    steps: list[dict[str, Any]] = []
    if reply.calls:
        signature = ("sim-signature:" + sim_id(seed, "sig", length=24)).encode()
        steps.append({"type": "thought", "signature": base64.b64encode(signature).decode()})
    if reply.text or not reply.calls:
        steps.append({"type": "model_output", "content": [{"type": "text", "text": reply.text or ""}]})
    for i, (name, args) in enumerate(reply.calls):
        steps.append(
            {"type": "function_call", "id": sim_id(seed, i, length=8), "name": name, "arguments": args}
        )
    return steps


def _event(name: str, data: dict[str, Any]) -> str:
    """One SSE event; its data repeats the name as ``event_type``."""
    return f"event: {name}\ndata: {json.dumps({**data, 'event_type': name}, ensure_ascii=False)}\n\n"


def _step_events(index: int, step: dict[str, Any]) -> list[str]:
    """``step.start`` with the step's head, its ``step.delta`` fragments, ``step.stop``."""
    kind = step["type"]
    if kind == "thought":
        start: dict[str, Any] = {"type": "thought"}
        deltas = [{"type": "thought_signature", "signature": step["signature"]}]
    elif kind == "model_output":
        start = {"type": "model_output"}
        text = _text(step)
        deltas = [{"type": "text", "text": piece} for piece in _pieces(text, TEXT_PIECE) if piece]
    else:
        start = {**step, "arguments": {}}
        arguments = json.dumps(step["arguments"], ensure_ascii=False) if step["arguments"] else ""
        deltas = [
            {"type": "arguments_delta", "arguments": piece}
            for piece in _pieces(arguments, JSON_PIECE)
            if piece
        ]
    return [
        _event("step.start", {"index": index, "step": start}),
        *(_event("step.delta", {"index": index, "delta": d}) for d in deltas),
        _event("step.stop", {"index": index}),
    ]


def respond(request: SimRequest, reply: Reply, seed: str) -> Response:
    """The interaction, whole or as its SSE events; stored unless ``"store": false``."""
    body = request.body
    history = _history(body)
    steps = _output(reply, seed)
    stored = history + steps
    interaction_id = "v1_" + sim_id(seed, json.dumps(stored, sort_keys=True), length=24)
    if body.get("store") is not False:
        _store(interaction_id, stored)
    status = "requires_action" if reply.calls else "completed"
    usage = {
        "total_input_tokens": _tokens([body.get("system_instruction"), history]),
        "total_output_tokens": _tokens(steps),
    }
    usage["total_tokens"] = usage["total_input_tokens"] + usage["total_output_tokens"]
    head = {
        "id": interaction_id,
        "object": "interaction",
        "model": body.get("model", "sim"),
        "created": CREATED_ISO,
    }
    if body.get("stream") is not True:
        whole = {**head, "status": status, "updated": CREATED_ISO, "steps": steps, "usage": usage}
        return Response(200, "application/json", json.dumps(whole, ensure_ascii=False))
    events = [
        _event("interaction.created", {"interaction": {**head, "status": "in_progress"}}),
        _event("interaction.status_update", {"interaction_id": interaction_id, "status": "in_progress"}),
    ]
    for index, step in enumerate(steps):
        events += _step_events(index, step)
    done = {**head, "status": status, "updated": CREATED_ISO, "usage": usage}
    events.append(_event("interaction.completed", {"interaction": done}))
    return Response(200, "text/event-stream", "".join(events))


def error(status: int, message: str) -> Response:
    """The Interactions error envelope: a ``code`` word of the reference's list and the message."""
    code = ERROR_CODES.get(status, "api_error" if status >= 500 else "invalid_request")
    return Response(status, "application/json", json.dumps({"error": {"code": code, "message": message}}))


INTERACTIONS = SimFormat("gemini-interactions", read, respond, error)
