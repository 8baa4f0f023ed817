"""The simulator's side of the OpenAI Responses API (``openai-responses``, ``POST /v1/responses``).

Written from the Responses API reference and the openai-python types, independent of the client
adapter. A request's ``input`` is a string or a list of items; ``previous_response_id`` continues
a stored response (the simulator keeps the conversations it answered unless ``store`` is false).
A response is a Response object whose ``output`` holds a ``reasoning`` item (with
``encrypted_content`` when the request ``include``s it), a ``message`` item for text and one
``function_call`` item per call; a stream is its SSE item events (``response.created``, each
item's ``output_item.added``, text or argument deltas in small pieces, ``.done`` events,
``output_item.done``, then ``response.completed`` with the whole response). No ``[DONE]``.

Like the real API, it checks the history a client sends back: each ``function_call_output``
must answer a ``function_call`` of the input, each call must get its output, a call it made
after a reasoning item must come back after that item, and with ``store: false`` a reasoning
item must carry its ``encrypted_content`` (the server kept nothing to look it up by). A client
that breaks its replay gets the API's own error.

Its wire deviations (:data:`DEVIATIONS`) write a conformant response wrongly, the way servers
have been seen to: a call streamed as text, a ``call_id`` that changes in ``response.completed``,
a ``parallel`` wrapper call, argument deltas keyed by the wrong id, items out of order, a schema
normalised to strict mode; and the chat ones that apply here.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from harness.servers.sim.hosted import Approved, Declared, Step, output
from harness.servers.sim.script import Conversation, Reply, sim_id, turns_since_user
from harness.servers.sim.wire import CREATED, Response, SimFormat, SimRequest, _dicts, _pieces, _tokens

TEXT_PIECE = 12
JSON_PIECE = 10
SSE = "text/event-stream"
OUTPUTS = ("function_call_output", "custom_tool_call_output")
ENCRYPTED = "reasoning.encrypted_content"
NOT_PERSISTED = (
    "Item with id '{}' not found. Items are not persisted when `store` is set to false. Try again with "
    "`store` set to true, or remove this item from your input."
)


class _Store:
    """What the simulator remembers between requests: the conversation up to each stored response
    (for ``previous_response_id``) and the reasoning item each of its calls came after. Bounded:
    the oldest entries go first."""

    LIMIT = 20_000

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.histories: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
        self.reasoning: OrderedDict[str, dict[str, Any]] = OrderedDict()

    def history(self, response_id: str) -> list[dict[str, Any]] | None:
        with self.lock:
            return self.histories.get(response_id)

    def remember(
        self, response_id: str, items: list[dict[str, Any]], output: list[dict[str, Any]], *, stored: bool
    ) -> None:
        reasoning = next((i for i in output if i.get("type") == "reasoning"), None)
        with self.lock:
            if stored:
                self.histories[response_id] = [*items, *output]
            for item in output:
                if reasoning is not None and item.get("type") == "function_call" and item.get("call_id"):
                    self.reasoning[str(item["call_id"])] = reasoning
            for table in (self.histories, self.reasoning):
                while len(table) > self.LIMIT:
                    table.popitem(last=False)

    def reasoning_of(self, call_id: Any) -> dict[str, Any] | None:
        with self.lock:
            return self.reasoning.get(str(call_id))


STORE = _Store()


# -- reading a request --------------------------------------------------------------------------


def _text(content: Any) -> str:
    """A message's text: a string, or its text parts joined."""
    if isinstance(content, str):
        return content
    return "".join(str(p.get("text") or "") for p in _dicts(content) if "text" in p)


def _items(body: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The whole conversation the request continues: the stored one before ``previous_response_id``
    (``None`` when no such response is stored), then its own ``input``."""
    value = body.get("input")
    items = [{"role": "user", "content": value}] if isinstance(value, str) else _dicts(value)
    previous = body.get("previous_response_id")
    if isinstance(previous, str):
        stored = STORE.history(previous)
        return None if stored is None else [*stored, *items]
    return items


def _is_message(item: dict[str, Any], *roles: str) -> bool:
    return item.get("type", "message") == "message" and item.get("role") in roles


def read(request: SimRequest) -> Conversation:
    """``instructions``, then the system and user messages before the first output item."""
    body = request.body
    items = _items(body) or []
    opening: list[tuple[str, str]] = []
    if isinstance(body.get("instructions"), str) and body["instructions"]:
        opening.append(("system", body["instructions"]))
    for item in items:
        if not _is_message(item, "system", "developer", "user"):
            break
        opening.append(("user" if item["role"] == "user" else "system", _text(item.get("content"))))
    roles: list[tuple[str, bool]] = []
    for item in items:
        if _is_message(item, "user"):
            roles.append(("user", True))
        elif item.get("type") in OUTPUTS:
            roles.append(("tool", False))
        elif item.get("type") in HOSTED_STEPS and not item.get("approval_request_id"):
            if not roles or roles[-1][0] != "assistant":  # a hosted call ends a scripted step
                roles.append(("assistant", False))
            roles.append(("tool", False))
        elif item.get("type") in ("mcp_list_tools", "mcp_call", "mcp_approval_response"):
            pass
        elif not _is_message(item, "system", "developer") and (not roles or roles[-1][0] != "assistant"):
            roles.append(("assistant", False))  # a run of output items is one assistant turn
    tools = [t for t in _dicts(body.get("tools")) if t.get("type", "function") == "function"]
    return Conversation(
        opening,
        sum(1 for role, _ in roles if role == "assistant"),
        [str(t.get("name") or "") for t in tools],
        [_text(i.get("content")) for i in items if _is_message(i, "user")],
        turns_since_user(roles),
        {str(t.get("name")): t.get("parameters") for t in tools},
        *_hosted(body, items),
    )


HOSTED_STEPS = ("mcp_call", "mcp_approval_request")


def _hosted(
    body: dict[str, Any], items: list[dict[str, Any]]
) -> tuple[dict[str, Declared], list[str], list[Approved]]:
    """The ``mcp`` tools the request declares, the servers the history already listed, and the
    calls it approved (``mcp_approval_response`` with ``approve: true``) that were not run yet."""
    declared = {}
    for tool in _dicts(body.get("tools")):
        if tool.get("type") == "mcp" and isinstance(tool.get("server_label"), str):
            allowed = tool.get("allowed_tools")
            names = tuple(str(n) for n in allowed) if isinstance(allowed, list) else None
            declared[tool["server_label"]] = Declared(names, tool.get("require_approval") != "never")
    listed = [str(i.get("server_label")) for i in items if i.get("type") == "mcp_list_tools"]
    asked = {str(i.get("id")): i for i in items if i.get("type") == "mcp_approval_request"}
    ran = {i.get("approval_request_id") for i in items if i.get("type") == "mcp_call"}
    approved = []
    for item in items:
        request = asked.get(str(item.get("approval_request_id")))
        if item.get("type") != "mcp_approval_response" or item.get("approve") is not True or request is None:
            continue
        if request.get("id") in ran:
            continue
        try:
            arguments = json.loads(str(request.get("arguments") or "{}"))
        except ValueError:
            arguments = {}
        approved.append(
            Approved(
                str(request["id"]), str(request.get("server_label")), str(request.get("name")), arguments
            )
        )
    return declared, listed, approved


def _replay_problem(body: dict[str, Any], items: list[dict[str, Any]]) -> Response | None:
    """The API's answer to a history it cannot take, or ``None``."""
    calls = [i for i in items if i.get("type") == "function_call"]
    answered = {i.get("call_id") for i in items if i.get("type") in OUTPUTS}
    made = {c.get("call_id") for c in calls}
    for item in items:
        if item.get("type") in OUTPUTS and item.get("call_id") not in made:
            return error(
                400, f"No tool call found for function call output with call_id {item.get('call_id')}."
            )
    seen: dict[str, dict[str, Any]] = {}
    for item in items:
        if item.get("type") == "reasoning":
            seen[str(item.get("id"))] = item
        elif item.get("type") == "function_call":
            if item.get("call_id") not in answered:
                return error(400, f"No tool output found for function call {item.get('call_id')}.")
            reasoning = STORE.reasoning_of(item.get("call_id"))
            if reasoning is None:
                continue
            replayed = seen.get(str(reasoning.get("id")))
            if replayed is None:
                return error(
                    400,
                    f"Item '{item.get('id')}' of type 'function_call' was provided without its required "
                    f"'reasoning' item: '{reasoning.get('id')}'.",
                )
            if body.get("store") is False and not replayed.get("encrypted_content"):
                return error(404, NOT_PERSISTED.format(reasoning.get("id")))
    return None


# -- writing a response -------------------------------------------------------------------------


def _output(body: dict[str, Any], reply: Reply, response_id: str) -> list[dict[str, Any]]:
    """A reasoning item, the message (when there is text), one function_call item per call."""
    reasoning: dict[str, Any] = {
        "id": "rs_" + sim_id(response_id, "rs", length=24),
        "type": "reasoning",
        "summary": [],
    }
    if ENCRYPTED in (body.get("include") or []):
        reasoning["encrypted_content"] = "enc_" + sim_id(response_id, "enc", length=40)
    output = [reasoning, *(_hosted_item(step) for step in reply.hosted)]
    if reply.text:
        text = {"type": "output_text", "text": reply.text, "annotations": [], "logprobs": []}
        output.append(
            {
                "id": "msg_" + sim_id(response_id, "msg", length=24),
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [text],
            }
        )
    for i, (name, args) in enumerate(reply.calls):
        output.append(
            {
                "id": "fc_" + sim_id(response_id, "fc", i, length=24),
                "type": "function_call",
                "status": "completed",
                "arguments": json.dumps(args, ensure_ascii=False),
                "call_id": "call_" + sim_id(response_id, "call", i, length=24),
                "name": name,
            }
        )
    return output


def _hosted_item(step: Step) -> dict[str, Any]:
    """What the MCP connector did, as its output item [RS21]."""
    if step.kind == "list_tools":
        tools = [{"name": n, "input_schema": {"type": "object"}, "annotations": None} for n in step.tools]
        return {"id": step.id, "type": "mcp_list_tools", "server_label": step.server, "tools": tools}
    item: dict[str, Any] = {
        "id": step.id,
        "type": "mcp_call" if step.kind == "call" else "mcp_approval_request",
        "server_label": step.server,
        "name": step.name,
        "arguments": json.dumps(step.arguments, ensure_ascii=False),
    }
    if step.kind == "call":
        item.update(output=step.output, error=None, status="completed", approval_request_id=step.approval)
    return item


def respond(request: SimRequest, reply: Reply, seed: str) -> Response:
    """A whole Response object, or its SSE item events when the request has ``"stream": true``."""
    body = request.body
    items = _items(body)
    if items is None:
        return error(404, f"Previous response with id '{body.get('previous_response_id')}' not found.")
    problem = _replay_problem(body, items)
    if problem is not None:
        return problem
    stored = body.get("store") is not False
    response_id = "resp_" + sim_id(seed, json.dumps(items, sort_keys=True), stored, length=40)
    output = _output(body, reply, response_id)
    STORE.remember(response_id, items, output, stored=stored)
    usage = {"input_tokens": _tokens(items), "output_tokens": _tokens(output)}
    response = {
        "id": response_id,
        "object": "response",
        "created_at": CREATED,
        "status": "completed",
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": body.get("model", "sim"),
        "output": output,
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "store": body.get("store", True),
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "usage": {
            "input_tokens": usage["input_tokens"],
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": usage["output_tokens"],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage["input_tokens"] + usage["output_tokens"],
        },
    }
    return _written(response, streamed=body.get("stream") is True)


def _written(response: dict[str, Any], *, streamed: bool) -> Response:
    if streamed:
        return Response(200, SSE, _render(_events(response)))
    return Response(200, "application/json", json.dumps(response, ensure_ascii=False))


Event = tuple[str, dict[str, Any]]


def _events(response: dict[str, Any]) -> list[Event]:
    """The events of a response: opened, each item in turn, completed."""
    head = {**response, "status": "in_progress", "output": [], "usage": None}
    events: list[Event] = [
        ("response.created", {"response": head}),
        ("response.in_progress", {"response": head}),
    ]
    for index, item in enumerate(response["output"]):
        events += _item_events(index, item)
    events.append(("response.completed", {"response": response}))
    return events


def _item_events(index: int, item: dict[str, Any]) -> list[Event]:
    """One item: added, its content or arguments in pieces, done."""
    at = {"item_id": item.get("id"), "output_index": index}
    kind = item.get("type")
    if kind == "message":
        added = {**item, "status": "in_progress", "content": []}
    elif kind == "function_call":
        added = {**item, "status": "in_progress", "arguments": ""}
    elif kind == "mcp_call":
        added = {**item, "status": "in_progress", "output": None}
    else:
        added = dict(item)
    events: list[Event] = [("response.output_item.added", {"output_index": index, "item": added})]
    if kind == "message":
        for ci, part in enumerate(item.get("content") or []):
            text = str(part.get("text") or "")
            empty = {**part, "text": ""}
            events.append(("response.content_part.added", {**at, "content_index": ci, "part": empty}))
            events += [
                ("response.output_text.delta", {**at, "content_index": ci, "delta": piece, "logprobs": []})
                for piece in _pieces(text, TEXT_PIECE)
                if piece
            ]
            events.append(
                ("response.output_text.done", {**at, "content_index": ci, "text": text, "logprobs": []})
            )
            events.append(("response.content_part.done", {**at, "content_index": ci, "part": part}))
    elif kind == "function_call":
        arguments = item.get("arguments")
        if isinstance(arguments, str):
            events += [
                ("response.function_call_arguments.delta", {**at, "delta": piece})
                for piece in _pieces(arguments, JSON_PIECE)
                if piece
            ]
        events.append(("response.function_call_arguments.done", {**at, "arguments": arguments}))
    elif kind in ("mcp_call", "mcp_list_tools"):
        events.append((f"response.{kind}.completed", at))
    events.append(("response.output_item.done", {"output_index": index, "item": item}))
    return events


def _render(events: list[Event]) -> str:
    """Named SSE events; each data repeats its name as ``type`` and counts its ``sequence_number``."""
    out = []
    for number, (name, data) in enumerate(events):
        payload = json.dumps({"type": name, "sequence_number": number, **data}, ensure_ascii=False)
        out.append(f"event: {name}\ndata: {payload}\n\n")
    return "".join(out)


def error(status: int, message: str) -> Response:
    """OpenAI's error envelope."""
    kind = "server_error" if status >= 500 else "invalid_request_error"
    body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return Response(status, "application/json", json.dumps(body))


# -- wire deviations ----------------------------------------------------------------------------


def _parsed(response: Response) -> tuple[dict[str, Any], bool]:
    """The Response object a conformant response carries (a stream's ``response.completed`` one)."""
    if response.content_type != SSE:
        return json.loads(response.body), False
    datas = [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")]
    return next(d["response"] for d in reversed(datas) if d.get("type") == "response.completed"), True


def _deviation(
    change: Callable[[dict[str, Any]], None] | None = None,
    events: Callable[[list[Event]], list[Event]] | None = None,
    *,
    stream_only: bool = False,
) -> Callable[[Response], Response]:
    """A deviation that changes the Response object (``change``), then, in a stream, its events."""

    def deviate(response: Response) -> Response:
        if response.status != 200:
            return response
        obj, streamed = _parsed(response)
        if stream_only and not streamed:
            return response
        if change is not None:
            change(obj)
        if not streamed:
            return Response(200, "application/json", json.dumps(obj, ensure_ascii=False))
        stream = _events(obj)
        return Response(200, SSE, _render(events(stream) if events is not None else stream))

    return deviate


def _calls(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for i in obj["output"] if i.get("type") == "function_call"]


def _arguments_object(obj: dict[str, Any]) -> None:
    for call in _calls(obj):
        call["arguments"] = json.loads(call["arguments"])


def _arguments_truncated(obj: dict[str, Any]) -> None:
    for call in _calls(obj):
        call["arguments"] = call["arguments"].removesuffix("}")


def _missing_ids(obj: dict[str, Any]) -> None:
    for call in _calls(obj):
        call.pop("call_id", None)


def _duplicate_ids(obj: dict[str, Any]) -> None:
    for call in _calls(obj):
        call["call_id"] = "call_duplicate"


def _failed(response: Response) -> Response:
    """HTTP 200, then the response fails: an ``error`` event and ``response.failed`` (a failed
    Response object when not streamed)."""
    if response.status != 200:
        return response
    obj, streamed = _parsed(response)
    failure = {"code": "server_error", "message": "upstream overloaded"}
    failed = {**obj, "status": "failed", "error": failure, "output": [], "usage": None}
    if not streamed:
        return Response(200, "application/json", json.dumps(failed))
    head = {**obj, "status": "in_progress", "output": [], "usage": None}
    events: list[Event] = [
        ("response.created", {"response": head}),
        ("error", {**failure, "param": None}),
        ("response.failed", {"response": failed}),
    ]
    return Response(200, SSE, _render(events))


def _server_error(response: Response) -> Response:
    body = {"error": {"message": "", "type": "server_error", "param": None, "code": None}}
    return Response(500, "application/json", json.dumps(body))


def _calls_as_text(obj: dict[str, Any]) -> None:
    """Each call written as a Hermes ``<tool_call>`` in a message item's text (vLLM #29725, #36435)."""
    for position, item in enumerate(obj["output"]):
        if item.get("type") == "function_call":
            call = {"name": item["name"], "arguments": json.loads(item["arguments"])}
            text = f"<tool_call>\n{json.dumps(call, ensure_ascii=False)}\n</tool_call>"
            part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
            obj["output"][position] = {
                "id": "msg_" + str(item["id"]).removeprefix("fc_"),
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [part],
            }


def _call_ids_changed(events: list[Event]) -> list[Event]:
    """``response.completed`` names each call by another ``call_id`` than its item events did
    (vLLM PR #47916)."""
    name, data = events[-1]
    response = json.loads(json.dumps(data["response"]))
    for call in _calls(response):
        call["call_id"] = "call_" + sim_id(call["call_id"], "completed", length=24)
    return [*events[:-1], (name, {"response": response})]


def _wrapped(obj: dict[str, Any]) -> None:
    """The calls of a turn wrapped in one ``multi_tool_use.parallel`` call (vercel/ai issue 19067)."""
    calls = _calls(obj)
    if not calls:
        return
    uses = [
        {"recipient_name": f"functions.{c['name']}", "parameters": json.loads(c["arguments"])} for c in calls
    ]
    wrapper = {**calls[0], "name": "multi_tool_use.parallel", "arguments": json.dumps({"tool_uses": uses})}
    obj["output"] = [i for i in obj["output"] if i.get("type") != "function_call"] + [wrapper]


def _orphan_deltas(events: list[Event]) -> list[Event]:
    """Argument deltas keyed by the call's ``call_id`` instead of its item id."""
    call_ids = {
        data["item"].get("id"): data["item"].get("call_id")
        for name, data in events
        if name == "response.output_item.added" and data["item"].get("type") == "function_call"
    }
    return [
        (name, {**data, "item_id": call_ids[data["item_id"]]})
        if name == "response.function_call_arguments.delta"
        else (name, data)
        for name, data in events
    ]


def _out_of_order(events: list[Event]) -> list[Event]:
    """Each item's events together, the items last to first."""
    groups: dict[int, list[Event]] = {}
    for event in events[2:-1]:
        groups.setdefault(event[1]["output_index"], []).append(event)
    return [*events[:2], *(e for index in sorted(groups, reverse=True) for e in groups[index]), events[-1]]


FILLERS: dict[str, Any] = {
    "string": "",
    "integer": 0,
    "number": 0,
    "boolean": False,
    "array": [],
    "object": {},
}


def _strict(schema: Any) -> Any:
    """``schema`` as OpenAI's strict normalisation makes it: every property required, objects closed."""
    if not isinstance(schema, dict):
        return schema
    out = {k: (_strict(v) if k in ("items",) else v) for k, v in schema.items()}
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {k: _strict(v) for k, v in schema["properties"].items()}
        out["required"] = list(schema["properties"])
        out["additionalProperties"] = False
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list):
            out[key] = [_strict(s) for s in schema[key]]
    return out


def _filled(arguments: dict[str, Any], schema: Any) -> dict[str, Any]:
    """The arguments with a value for every top-level property the schema declares (a strict model
    must fill the fields the normalisation made required; o3 sent ``year: 0``, vercel/ai issue 7082)."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    filled = dict(arguments)
    for name, sub in (properties or {}).items():
        if name not in filled and isinstance(sub, dict):
            enum = sub.get("enum")
            filled[name] = enum[0] if isinstance(enum, list) and enum else FILLERS.get(str(sub.get("type")))
    return filled


def _strict_normalised(obj: dict[str, Any]) -> None:
    """Every function tool echoed in strict mode with its schema normalised, and each call filling
    the fields that became required."""
    schemas = {}
    for tool in obj.get("tools") or []:
        if isinstance(tool, dict) and tool.get("type") == "function":
            tool["parameters"] = _strict(tool.get("parameters"))
            tool["strict"] = True
            schemas[tool.get("name")] = tool["parameters"]
    for call in _calls(obj):
        arguments = json.loads(call["arguments"])
        call["arguments"] = json.dumps(_filled(arguments, schemas.get(call["name"])), ensure_ascii=False)


def _hosted_unapproved(obj: dict[str, Any]) -> None:
    """The MCP connector runs each call it should have asked the client to approve."""
    for item in obj["output"]:
        if item.get("type") == "mcp_approval_request":
            arguments = json.loads(item.get("arguments") or "{}")
            text = output(str(item.get("server_label")), str(item.get("name")), arguments)
            item.update(
                type="mcp_call", output=text, error=None, status="completed", approval_request_id=None
            )


DEVIATIONS: dict[str, Callable[[Response], Response]] = {
    "args-object": _deviation(_arguments_object),
    "args-invalid-json": _deviation(_arguments_truncated),
    "missing-ids": _deviation(_missing_ids),
    "duplicate-ids": _deviation(_duplicate_ids),
    "error-in-200": _failed,
    "server-error": _server_error,
    "call-as-text": _deviation(_calls_as_text, stream_only=True),
    "call-id-changed": _deviation(events=_call_ids_changed, stream_only=True),
    "parallel-wrapper": _deviation(_wrapped),
    "orphan-deltas": _deviation(events=_orphan_deltas, stream_only=True),
    "items-out-of-order": _deviation(events=_out_of_order, stream_only=True),
    "strict-normalised": _deviation(_strict_normalised),
    "hosted-unapproved": _deviation(_hosted_unapproved),
}
"""How the Responses answer is written wrongly: the chat deviations that apply (arguments as an
object or as broken JSON, call ids missing or shared, a failure inside an HTTP 200, a 500), and
what Responses servers have been seen to do: a call streamed as ``output_text`` deltas (vLLM
#29725, #36435), ``call_id`` changed in ``response.completed`` (vLLM PR #47916), a
``multi_tool_use.parallel`` wrapper (vercel/ai issue 19067), argument deltas keyed by
``call_id`` rather than the item id, items streamed last to first, and every schema normalised
to strict mode whatever ``strict`` said (what OpenAI does when it is omitted); and a hosted MCP
connector overstepping the request: a call run without the approval it required (a call to a
tool outside ``allowed_tools`` is a reply deviation: :mod:`harness.servers.sim.deviations`)."""

RESPONSES = SimFormat("openai-responses", read, respond, error, DEVIATIONS)
