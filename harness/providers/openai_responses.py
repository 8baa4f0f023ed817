"""The OpenAI Responses API (``openai-responses``, ``POST /v1/responses``).

Requests: ``input`` items (``{"role", "content"}`` messages, ``function_call`` items with
JSON-string ``arguments``, ``function_call_output`` items linked by ``call_id``); tools flat,
``{"type": "function", "name", "description", "parameters", "strict"}``; ``tool_choice`` as
``auto`` / ``none`` / ``required`` or ``{"type": "function", "name"}``; ``max_output_tokens``.
The history sent back replays each earlier turn's output items exactly as they were received
(reasoning items included, with their ``encrypted_content``), so a reasoning model keeps its
chain; items are rebuilt from the neutral values (with a finding) only when the turn no longer
matches them.

Two per-target options ride in the target's ``request_options`` (read here, never sent as
they are; every other key is merged into the body):

- ``previous_response_id = "auto"``: the stateful mode. Each request names the response before
  it and sends only the items that came after it (the tool outputs, a follow-up), so the server
  holds the conversation. The default is stateless: the whole history every time.
- ``strict``: what each tool declaration says about strict mode: ``false`` (the default: the
  schema is used as declared, as on Chat Completions), ``true``, or ``"omit"`` (not sent, as
  code ported from Chat Completions writes it: OpenAI then normalises the schema to strict
  mode and optional fields become required [RS4]; the first request notes which, as a
  ``wire.tool_declaration`` finding).

Responses: a whole Response object, or the SSE item events of a stream; both go through
:class:`~harness.providers._openai_responses_items.ItemsAccumulator`. The calls are the
``function_call`` items in ``output_index`` order; a call's id is its ``call_id`` (the ``fc_``
item id is kept in ``ToolCall.extra["item_id"]``). The finish reason is the response ``status``
(``incomplete:max_output_tokens`` with the reason). A request another client sent is read back
by :mod:`harness.providers._openai_responses_request`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from harness.model import (
    HOSTED_APPROVALS,
    Finding,
    Message,
    ParsedTurn,
    ToolChoice,
    ToolSpec,
    WireRequest,
    WireResponse,
    deviation,
)
from harness.providers._history import data_url
from harness.providers._hosted import server_declarations
from harness.providers._json import JsonProblem, decode
from harness.providers._openai_responses_items import ItemsAccumulator
from harness.providers._openai_responses_request import read_responses_request
from harness.providers.adapter import Adapter, RequestOptions, RequestView
from harness.providers.framing import DecodedStream, decode_stream

CHAIN = "previous_response_id"
"""The request option that chains requests by ``previous_response_id`` when set to ``"auto"``."""
STRICT = "strict"
"""The request option that says what each tool declaration sends as ``strict``."""
STRICT_VALUES = (False, True, "omit")
_PATH = re.compile(r"(?:^|/)responses(?:/[^/]+)?$")
_STRICT_ECHO = re.compile(r'"strict"\s*:\s*true')
OPENAI_ERROR_KEYS = frozenset({"message", "type", "param"})


class OpenAIResponsesAdapter(Adapter):
    """OpenAI's Responses API, and every endpoint that serves it."""

    format = "openai-responses"
    truncation_reasons = frozenset({"incomplete:max_output_tokens"})
    simulator = "harness.servers.sim.wire_responses:RESPONSES"
    default_path = "/v1/responses"
    argument_wire_type = "string"
    stream_sentinel = None
    hosted_mcp = True

    @classmethod
    def claims_url(cls, host: str, path: str) -> bool:
        """``.../responses`` (``/v1/responses``, DeepSeek's ``/responses``) and one response by id
        (``/v1/responses/resp_...``, how background mode is polled)."""
        return _PATH.search(path) is not None

    @classmethod
    def claims_payload(cls, data: dict[str, Any]) -> bool:
        """A Response object (``object: "response"``), a ``response.*`` stream event, a flat
        ``error`` event with a ``sequence_number``, or OpenAI's error envelope
        ``{"error": {"message", "type", "param", ...}}`` (Chat Completions has the same one, and
        the two adapters read it alike; only the Responses API's own shapes are told apart)."""
        kind = data.get("type")
        error = data.get("error")
        return (
            data.get("object") == "response"
            or (isinstance(kind, str) and kind.startswith("response."))
            or (kind == "error" and "sequence_number" in data)
            or (kind is None and isinstance(error, dict) and set(error) >= OPENAI_ERROR_KEYS)
        )

    # -- requests -----------------------------------------------------------------------------

    def build_request(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        tool_choice: ToolChoice,
        options: RequestOptions,
    ) -> WireRequest:
        """The Responses request: the whole history as input items, or (stateful) the items since
        the previous response."""
        findings: list[Finding] = []
        extra = dict(options.extra)
        chained = extra.get(CHAIN) == "auto"
        if chained:
            del extra[CHAIN]
        strict = extra.pop(STRICT, False)
        if strict not in STRICT_VALUES:
            detail = f"request option strict = {strict!r} is not one of false, true, 'omit'; false sent"
            findings.append(Finding("wire.request_option_invalid", "info", False, detail))
            strict = False
        store = extra.get("store")
        start, previous = self.chain_point(messages) if chained else (0, None)
        body: dict[str, Any] = {"model": options.model}
        if previous is not None:
            body[CHAIN] = previous
        body["input"] = self.map_input(messages[start:], findings, store=store)
        if chained:
            findings += self.chain_findings(store)
        if tools or options.hosted_mcp:
            body["tools"] = [self.map_tool(t, strict) for t in tools]
            body["tools"] += server_declarations(options.hosted_mcp)
            body["tool_choice"] = self.map_tool_choice(tool_choice)
            findings += self.choice_findings(tool_choice)
            if not any(m.role == "assistant" for m in messages):  # the first request of the run
                findings += strict_declarations(tools, strict)
            if options.parallel_tool_calls is not None and self.profile.send_parallel_tool_calls:
                body["parallel_tool_calls"] = options.parallel_tool_calls
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.max_tokens is not None:
            body["max_output_tokens"] = options.max_tokens
        if options.seed is not None:
            detail = "the Responses API has no seed field; the seed was not sent"
            findings.append(Finding("wire.seed_unsupported", "info", False, detail))
        body["stream"] = options.stream
        body.update(extra)
        return WireRequest(
            self.profile.request_path(self.default_path), body, options.stream, findings=findings
        )

    @staticmethod
    def chain_point(messages: Sequence[Message]) -> tuple[int, str | None]:
        """Where the stateful mode starts sending: after the latest assistant message that names its
        response; ``(0, None)`` when none does yet (the first request sends everything)."""
        for position in range(len(messages) - 1, -1, -1):
            response_id = messages[position].extra.get("openai_response_id")
            if messages[position].role == "assistant" and isinstance(response_id, str):
                return position + 1, response_id
        return 0, None

    def chain_findings(self, store: Any) -> list[Finding]:
        findings = []
        if store is False:
            detail = (
                "previous_response_id needs the previous response stored, and the request sets store: false"
            )
            findings.append(deviation("request_chain_without_store", detail))
        quirk = self.profile.quirk("previous_response_id_unsupported")
        if quirk is not None:
            detail = (
                f"profile {self.profile.name!r} documents previous_response_id as unsupported; sent anyway"
            )
            findings.append(Finding("wire.previous_response_id_unsupported", "info", False, detail))
        return findings

    @staticmethod
    def map_tool(tool: ToolSpec, strict: Any) -> dict[str, Any]:
        """A flat function tool; ``strict`` as the target says (left out for ``"omit"``)."""
        wire: dict[str, Any] = {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters or {"type": "object", "properties": {}},
        }
        if strict != "omit":
            wire["strict"] = strict
        return wire

    @staticmethod
    def map_tool_choice(choice: ToolChoice) -> Any:
        """``auto`` / ``none`` / ``required``, or ``{"type": "function", "name"}`` (flat, unlike chat)."""
        if choice.mode == "named":
            return {"type": "function", "name": choice.name}
        return choice.mode

    def map_input(
        self, messages: Sequence[Message], findings: list[Finding], *, store: Any
    ) -> list[dict[str, Any]]:
        """Conversation messages as input items."""
        items: list[dict[str, Any]] = []
        for message in messages:
            if message.role == "tool":
                result = message.tool_result
                assert result is not None
                output: Any = result.content
                if result.form == "parts":  # output as input_text / input_image items [RS19]
                    output = [
                        {"type": "input_text", "text": p.text}
                        if p.kind == "text"
                        else {"type": "input_image", "image_url": data_url(p)}
                        for p in result.parts
                    ]
                items.append({"type": "function_call_output", "call_id": result.call_id, "output": output})
            elif message.role == "assistant":
                items += self.map_assistant(message, findings, store=store)
            elif HOSTED_APPROVALS in message.extra:  # the client's answers to approval requests [RS21]
                items += [
                    {"type": "mcp_approval_response", "approval_request_id": a["id"], "approve": a["approve"]}
                    for a in message.extra[HOSTED_APPROVALS]
                ]
            else:
                items.append({"role": message.role, "content": message.content or ""})
        return items

    @staticmethod
    def map_assistant(message: Message, findings: list[Finding], *, store: Any) -> list[dict[str, Any]]:
        """The turn's output items as received when they still match its calls; else rebuilt."""
        kept = message.extra.get("openai_output")
        if isinstance(kept, list):
            calls = [
                (i.get("call_id"), i.get("name"))
                for i in kept
                if isinstance(i, dict) and i.get("type") == "function_call"
            ]
            if calls == [(c.id, c.name) for c in message.tool_calls]:
                if store is False:
                    findings += bare_reasoning(kept)
                return [dict(i) if isinstance(i, dict) else i for i in kept]
            findings.append(
                deviation(
                    "replay_items_rebuilt",
                    "the kept output items no longer match the message's tool calls; items rebuilt "
                    "(reasoning items not replayed)",
                )
            )
        items: list[dict[str, Any]] = []
        if message.parts:
            parts = [{"type": "output_text", "text": p.text} for p in message.parts]
            items.append({"role": "assistant", "content": parts})
        elif message.content:
            items.append({"role": "assistant", "content": message.content})
        for call in message.tool_calls:
            raw = call.raw_arguments
            arguments = raw if isinstance(raw, str) else json.dumps(call.arguments or {})
            items.append(
                {"type": "function_call", "call_id": call.id, "name": call.name, "arguments": arguments}
            )
        return items

    def read_body(self, body: dict[str, Any], path: str) -> RequestView:
        """A Responses request read back (the inverse of :meth:`build_request`)."""
        return read_responses_request(body)

    # -- responses ------------------------------------------------------------------------------

    def parse(self, response: WireResponse, *, stream: bool, tools: Sequence[ToolSpec] = ()) -> ParsedTurn:
        """The turn, and (given the offered tools) whether the endpoint made optional fields of
        their schemas required: the response echoes each tool as the server ran it."""
        turn = super().parse(response, stream=stream, tools=tools)
        if tools and turn.error is None and _STRICT_ECHO.search(response.body[:1_000_000]):
            turn.findings += strict_normalised(echoed_tools(response.body, stream=stream), tools)
        return turn

    def _parse(self, response: WireResponse, *, stream: bool) -> ParsedTurn:
        """The base's parse, except that a 2xx Response object whose status is ``failed`` is read as a
        response (its status is the finish reason) rather than as a bare error envelope."""
        turn = super()._parse(response, stream=stream)
        if stream or not any(f.check_id == "wire.error_in_200_body" for f in turn.findings):
            return turn
        try:
            body = decode(response.body).value
        except JsonProblem:
            return turn
        if not isinstance(body, dict) or body.get("object") != "response":
            return turn
        whole = self.parse_body(body)
        whole.error = whole.error or turn.error
        kept = [f for f in turn.findings if f.check_id != "wire.error_in_200_body"]
        whole.findings[:0] = kept
        if body.get("status") != "failed":
            whole.findings.insert(
                0, deviation("error_in_200_body", "an error object came back with HTTP 2xx")
            )
        return whole

    def parse_body(self, body: dict[str, Any]) -> ParsedTurn:
        """A whole Response object, through the same accumulator as a stream."""
        acc = ItemsAccumulator(streaming=False)
        acc.whole(body)
        return acc.turn(stream_events=False)

    def parse_stream(self, stream: DecodedStream) -> ParsedTurn:
        """The item events of a stream; it ends with a terminal event, and has no ``[DONE]``."""
        acc = ItemsAccumulator(streaming=True)
        for number, event in enumerate(stream.events):
            if isinstance(event.data, dict):
                acc.feed(event.data, f"events[{number}].", event.event)
        if stream.done_sentinel:
            detail = "the stream ends with data: [DONE], which the Responses API does not send"
            acc.note(Finding("wire.done_sentinel_in_responses_stream", "info", False, detail))
        return acc.turn(stream_events=bool(stream.events))


def bare_reasoning(items: list[Any]) -> list[Finding]:
    """A warning for reasoning items replayed by id alone while ``store`` is false."""
    bare = [
        i.get("id")
        for i in items
        if isinstance(i, dict) and i.get("type") == "reasoning" and not i.get("encrypted_content")
    ]
    if not bare:
        return []
    detail = (
        f"reasoning items {bare} are replayed without encrypted_content while store is false: the server "
        "kept nothing to look them up by (ask for include: ['reasoning.encrypted_content'])"
    )
    return [deviation("reasoning_replay_without_encrypted_content", detail)]


# -- strict mode ------------------------------------------------------------------------------


def _fields(schema: Any, prefix: str = "") -> Iterator[tuple[str, bool]]:
    """Each object property of a schema, at every level: its dotted path and whether it is required."""
    if not isinstance(schema, dict):
        return
    properties, required = schema.get("properties"), schema.get("required")
    required = required if isinstance(required, list) else []
    if isinstance(properties, dict):
        for name, sub in properties.items():
            path = f"{prefix}{name}"
            yield path, name in required
            yield from _fields(sub, f"{path}.")
    items = schema.get("items")
    if isinstance(items, dict):
        yield from _fields(items, f"{prefix.rstrip('.')}[].")
    for key in ("anyOf", "oneOf", "allOf"):
        members = schema.get(key)
        for sub in members if isinstance(members, list) else []:
            yield from _fields(sub, prefix)


def optional_fields(schema: Any) -> list[str]:
    """The dotted paths of the object properties a schema leaves optional, at every level."""
    return list(dict.fromkeys(path for path, required in _fields(schema) if not required))


def required_fields(schema: Any) -> set[str]:
    """The dotted paths of the object properties a schema requires, at every level."""
    return {path for path, required in _fields(schema) if required}


def strict_declarations(tools: Sequence[ToolSpec], strict: Any) -> list[Finding]:
    """Declaration notes for tools whose optional fields strict mode makes required: when
    ``strict`` is omitted (OpenAI's Responses API normalises the schema [RS4]) or true (the
    schema must already list every field as required, or the request is refused)."""
    if strict is False:
        return []
    findings = []
    for tool in tools:
        fields = optional_fields(tool.parameters)
        if not fields:
            continue
        if strict == "omit":
            detail = (
                f"tool {tool.name!r}: strict is omitted, and OpenAI's Responses API then normalises the "
                f"schema to strict mode: optional field(s) {fields} become required (send strict: false to "
                "keep them optional)"
            )
        else:
            detail = (
                f"tool {tool.name!r}: strict: true needs every field required, and the schema leaves "
                f"{fields} optional: OpenAI refuses such a schema (send strict: false, or require them "
                "with a null type)"
            )
        findings.append(Finding("wire.tool_declaration", "info", False, detail, evidence={"fields": fields}))
    return findings


def echoed_tools(body: str, *, stream: bool) -> list[dict[str, Any]]:
    """The tools a response echoes (a whole Response's ``tools``, or the terminal event's)."""
    try:
        if not stream:
            found = json.loads(body)
            responses = [found] if isinstance(found, dict) else []
        else:
            events = [e.data for e in decode_stream(body).events if isinstance(e.data, dict)]
            responses = [e["response"] for e in reversed(events) if isinstance(e.get("response"), dict)]
    except (ValueError, RecursionError):
        return []
    for response in responses:
        tools = response.get("tools")
        if isinstance(tools, list) and tools:
            return [t for t in tools if isinstance(t, dict)]
    return []


def strict_normalised(echoed: list[dict[str, Any]], tools: Sequence[ToolSpec]) -> list[Finding]:
    """A warning for each offered tool the response echoes in strict mode with fields required that
    its declared schema leaves optional: the endpoint normalised the schema, and the model had to
    fill them."""
    declared = {t.name: t for t in tools}
    made: dict[str, list[str]] = {}
    for tool in echoed:
        spec = declared.get(str(tool.get("name")))
        if spec is None or tool.get("strict") is not True:
            continue
        required = required_fields(tool.get("parameters"))
        fields = [f for f in optional_fields(spec.parameters) if f in required]
        if fields:
            made[spec.name] = fields
    if not made:
        return []
    shown = "; ".join(f"{name}: {fields}" for name, fields in made.items())
    detail = (
        f"the endpoint normalised tool schemas to strict mode, making optional fields required ({shown}): "
        "OpenAI's Responses API does this when strict is omitted, and the model must then fill them"
    )
    return [deviation("strict_normalised", detail, fields=made)]
