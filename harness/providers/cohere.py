"""Cohere v2 chat (``cohere-chat``, ``POST /v2/chat``).

Requests: ``messages`` with ``system``, ``user``, ``assistant`` and ``tool`` roles (the system
prompt is a message); ``tools`` in OpenAI's shape, ``{"type": "function", "function": {name,
description, parameters}}`` [CO2]; ``tool_choice`` upper-case, ``REQUIRED`` or ``NONE``, with auto
the field left out [CO1]. There is no named choice: it is sent as ``REQUIRED`` with only the named
tool offered (as pydantic-ai does [CO5]), and noted. Assistant turns go back with their
``tool_plan`` and ``tool_calls`` (arguments as JSON text); tool results are ``role: tool``
messages with ``tool_call_id`` and a list of text blocks as ``content`` [CO2].

Responses: a whole ``{id, finish_reason, message, usage}``, or named SSE events
(``message-start``, ``content-start`` / ``-delta`` / ``-end``, ``tool-plan-delta``,
``tool-call-start`` / ``-delta`` / ``-end``, ``citation-start`` / ``-end``, ``message-end``) with no
``[DONE]`` [CO2]. A whole body is fed to the same :class:`_Accumulator` as a ``message-start``
carrying the whole message and a ``message-end`` carrying its finish reason and usage. The
``tool_plan`` is the model's plan before its calls, not its answer: it is kept as reasoning (and
replayed with the calls), never as text. A tool-calling turn ends with ``finish_reason:
"TOOL_CALL"``. A request another client sent is read back by
:mod:`harness.providers._cohere_request`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.model import (
    Finding,
    Message,
    ParsedTurn,
    ProviderError,
    ToolCall,
    ToolChoice,
    ToolSpec,
    Usage,
    WireRequest,
    deviation,
)
from harness.providers._calls import Notes, function_tools, id_findings, id_part, join_text, make_call
from harness.providers._cohere_request import PLAN, THINKING, read_cohere_request
from harness.providers._history import images, openai_parts, unsupported
from harness.providers.adapter import Adapter, RequestOptions, RequestView
from harness.providers.framing import DecodedStream
from harness.providers.rules import NameRules

CHOICES = {"required": "REQUIRED", "none": "NONE", "named": "REQUIRED"}
"""``tool_choice`` on the wire per neutral mode; auto is the field left out [CO1]."""
STREAM_EVENTS = frozenset(
    {
        "message-start",
        "content-start",
        "content-delta",
        "content-end",
        "tool-plan-delta",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-end",
        "citation-start",
        "citation-end",
        "message-end",
    }
)
"""The v2 stream's event types [CO2]; ``debug`` is one too, but too common a word to tell the format by."""
FINISH_REASONS = frozenset({"COMPLETE", "STOP_SEQUENCE", "MAX_TOKENS", "TOOL_CALL", "ERROR", "TIMEOUT"})
FAILED = frozenset({"ERROR", "TIMEOUT"})


class CohereChatAdapter(Adapter):
    """Cohere's v2 Chat API."""

    format = "cohere-chat"
    truncation_reasons = frozenset({"MAX_TOKENS"})  # [CO2]
    simulator = "harness.servers.sim.wire_cohere:COHERE"
    name_rules = NameRules(
        "cohere", "a-zA-Z0-9_", 64, True, source="Cohere Tool.name docstring [CO4]; length not documented"
    )
    """``a-z A-Z 0-9 _``, not starting with a digit [CO4]; no length is documented: we keep 64."""
    default_path = "/v2/chat"
    stream_sentinel = None

    @classmethod
    def claims_url(cls, host: str, path: str) -> bool:
        return path.endswith("/v2/chat")

    @classmethod
    def claims_payload(cls, data: dict[str, Any]) -> bool:
        """One of its hyphenated stream event types, or a ``message`` object beside one of its
        upper-case finish reasons."""
        return data.get("type") in STREAM_EVENTS or (
            isinstance(data.get("message"), dict) and data.get("finish_reason") in FINISH_REASONS
        )

    # -- requests -----------------------------------------------------------

    def build_request(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        tool_choice: ToolChoice,
        options: RequestOptions,
    ) -> WireRequest:
        """The v2 chat request; the SDK always says whether it streams, so the body does too."""
        findings: list[Finding] = []
        body: dict[str, Any] = {"model": options.model, "messages": self.map_messages(messages)}
        if any(m.tool_result is not None and images(m.tool_result) for m in messages):
            findings.append(
                unsupported(self.format, "an image in a tool message", "sent as an image_url content item")
            )
        if tools:
            body["tools"] = function_tools(self.offered(tools, tool_choice, findings))
            if tool_choice.mode in CHOICES:
                body["tool_choice"] = CHOICES[tool_choice.mode]
            if tool_choice.mode != "named":
                findings.extend(self.choice_findings(tool_choice))
            if options.parallel_tool_calls is not None:
                findings.append(
                    Finding(
                        "wire.parallel_tool_calls_unsupported",
                        "info",
                        False,
                        "Cohere's v2 chat has no parallel tool call control; not sent",
                    )
                )
        settings = (
            ("temperature", options.temperature),
            ("max_tokens", options.max_tokens),
            ("seed", options.seed),
        )
        body.update({key: value for key, value in settings if value is not None})
        body["stream"] = options.stream
        body.update(options.extra)
        return WireRequest(
            self.profile.request_path(self.default_path), body, options.stream, findings=findings
        )

    @staticmethod
    def offered(tools: Sequence[ToolSpec], choice: ToolChoice, findings: list[Finding]) -> Sequence[ToolSpec]:
        """The tools to send: all of them, or for a named choice only the named one (sent with
        ``REQUIRED``, the only way the API can force one tool), which is noted."""
        if choice.mode != "named":
            return tools
        named = [tool for tool in tools if tool.name == choice.name]
        offered = named or tools
        findings.append(
            Finding(
                "wire.tool_choice_named_emulated",
                "info",
                False,
                f"Cohere's v2 chat has no named tool_choice: {choice.label()!r} sent as REQUIRED with "
                + (
                    f"only {choice.name!r} offered"
                    if named
                    else "every tool offered (the name is none of them)"
                ),
            )
        )
        return offered

    def map_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """Every message in order: the system prompt stays a message on this API."""
        wire: list[dict[str, Any]] = []
        for message in messages:
            if message.role == "tool":
                wire.append(self.map_tool_result(message))
            elif message.role == "assistant":
                wire.append(self.map_assistant(message))
            else:
                wire.append({"role": message.role, "content": message.content or ""})
        return wire

    @staticmethod
    def map_tool_result(message: Message) -> dict[str, Any]:
        """A ``tool`` message; the API has no error flag, so an error result is its text alone."""
        result = message.tool_result
        assert result is not None
        content: list[dict[str, Any]]
        if result.form == "json":  # structured results go as a document's data [CO7]
            content = [{"type": "document", "document": {"data": result.content}}]
        elif result.form == "parts":
            content = openai_parts(result.parts)
        else:
            content = [{"type": "text", "text": result.content}]
        return {"role": "tool", "tool_call_id": result.call_id, "content": content}

    @staticmethod
    def map_assistant(message: Message) -> dict[str, Any]:
        """The turn with its plan (kept from the parse) before its calls; thinking kept from the
        parse goes back as a ``thinking`` content item before the text."""
        wire: dict[str, Any] = {"role": "assistant"}
        plan = message.extra.get(PLAN)
        if message.tool_calls and isinstance(plan, str) and plan:
            wire["tool_plan"] = plan
        if message.tool_calls:
            wire["tool_calls"] = [_wire_call(call) for call in message.tool_calls]
        thinking = message.extra.get(THINKING)
        if isinstance(thinking, str) and thinking:
            content: list[dict[str, Any]] = [{"type": "thinking", "thinking": thinking}]
            if message.content:
                content.append({"type": "text", "text": message.content})
            wire["content"] = content
        elif message.parts:
            wire["content"] = openai_parts(message.parts)
        elif message.content is not None or not message.tool_calls:  # "" is sent when given
            wire["content"] = message.content or ""
        return wire

    def read_body(self, body: dict[str, Any], path: str) -> RequestView:
        """A v2 chat request read back (the inverse of :meth:`build_request`)."""
        return read_cohere_request(body)

    # -- responses ----------------------------------------------------------

    def parse_body(self, body: dict[str, Any]) -> ParsedTurn:
        """A whole response: its message fed as a ``message-start``, its finish reason and usage
        as a ``message-end``."""
        acc = _Accumulator(streaming=False)
        message = body.get("message")
        if isinstance(message, str) and "finish_reason" not in body:  # the error envelope {id, message}
            acc.note(deviation("error_in_200_body", "an error object came back with HTTP 2xx"))
            acc.error = ProviderError(200, message)
            return acc.finish()
        if message is None:
            acc.note(deviation("message_missing", "the response has no message object", severity="error"))
        elif (found := acc.obj("message", message)) is not None:
            acc.feed_message(found, "message.")
        acc.feed_end(body, "")
        return acc.finish()

    def parse_stream(self, stream: DecodedStream) -> ParsedTurn:
        """Named SSE events (their ``type`` repeats the name); a stream must end with ``message-end``."""
        acc = _Accumulator(streaming=True)
        for number, event in enumerate(stream.events):
            if not isinstance(event.data, dict):
                continue  # noted with the framing (wire.stream_event_not_object)
            where = f"events[{number}]."
            kind = acc.string(f"{where}type", event.data.get("type")) or event.event
            if event.event and kind != event.event:
                acc.note(
                    deviation(
                        "event_name_mismatch", f"SSE event {event.event!r} carries data of type {kind!r}"
                    )
                )
            acc.feed(kind, event.data, where)
        if stream.events and not acc.ended and acc.error is None:
            acc.note(deviation("stream_without_message_end", "the stream ended without event: message-end"))
        return acc.finish()


def _wire_call(call: ToolCall) -> dict[str, Any]:
    """A call as the API sends it: the arguments as the JSON text that came on the wire, or the
    parsed arguments written as JSON text (a call from another format)."""
    raw = call.raw_arguments
    arguments = raw if isinstance(raw, str) else json.dumps(call.arguments or {}, ensure_ascii=False)
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments}}


@dataclass
class _Call:
    """One call as it is assembled: its start object's id and name, then its argument fragments."""

    id: str | None
    name: str
    fragments: list[Any] = field(default_factory=list)
    ended: bool = False

    def raw_arguments(self) -> Any:
        """String fragments joined; a value of another type (a deviation) as the last one sent."""
        if not self.fragments:
            return None
        if all(isinstance(f, str) for f in self.fragments):
            return "".join(self.fragments)
        return self.fragments[-1]


@dataclass
class _Content:
    """One content item: ``text`` or ``thinking``, and its text so far."""

    type: str
    parts: list[str] = field(default_factory=list)


class _Accumulator(Notes):
    """Folds v2 chat events (or one whole response) into a turn: content items and calls by
    ``index``, argument fragments concatenated per call, plan deltas joined."""

    def __init__(self, *, streaming: bool) -> None:
        super().__init__()
        self.streaming = streaming
        self.content: dict[int, _Content] = {}
        self.plan: list[str] = []
        self.calls: list[_Call] = []
        self.at: dict[int, _Call] = {}  # index -> the call started there last
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.error: ProviderError | None = None
        self.ended = False

    def feed(self, kind: str | None, data: dict[str, Any], where: str) -> None:
        """Fold one stream event (named by its ``type``); ``where`` is its place in the stream."""
        delta = self.obj(f"{where}delta", data.get("delta")) or {}
        message = self.obj(f"{where}delta.message", delta.get("message")) or {}
        inside = f"{where}delta.message."
        if kind == "message-start":
            self.feed_message(message, inside)
        elif kind in ("content-start", "content-delta"):
            item = self.obj(f"{inside}content", message.get("content"))
            if item is not None:
                self.feed_content(kind, self.index(where, data.get("index")), item, f"{inside}content")
        elif kind == "tool-plan-delta":
            self.plan.append(self.string(f"{inside}tool_plan", message.get("tool_plan")) or "")
        elif kind == "tool-call-start":
            self.start_calls(
                self.index(where, data.get("index")), message.get("tool_calls"), f"{inside}tool_calls"
            )
        elif kind == "tool-call-delta":
            self.feed_arguments(
                self.index(where, data.get("index")), message.get("tool_calls"), f"{inside}tool_calls"
            )
        elif kind == "tool-call-end":
            ended = self.index(where, data.get("index"))
            if ended in self.at:
                self.at[ended].ended = True
        elif kind == "message-end":
            self.ended = True
            self.feed_end(delta, f"{where}delta.")
        elif kind is None and isinstance(data.get("message"), str):  # the error envelope {id, message}
            self.note(deviation("error_event_in_stream", "an error event arrived in the 2xx stream"))
            self.error = ProviderError(200, data["message"])
        elif kind not in ("content-end", "citation-start", "citation-end", "debug"):
            self.note(
                Finding("wire.unknown_stream_event", "info", False, f"unknown stream event {kind!r} ignored")
            )

    def feed_message(self, message: dict[str, Any], where: str) -> None:
        """A whole assistant message (a non-streamed body, or what ``message-start`` carries)."""
        plan = self.string(f"{where}tool_plan", message.get("tool_plan"))
        if plan:
            self.plan.append(plan)
        content = message.get("content")
        if isinstance(content, str):  # the request side's shape; a response carries a list
            self.wrong_type(f"{where}content", content, "array", "read as its text")
            self.content[len(self.content)] = _Content("text", [content])
        else:
            for item_where, item in self.objects(f"{where}content", content):
                self.feed_content("content-start", len(self.content), item, item_where)
        for call_where, item in self.objects(f"{where}tool_calls", message.get("tool_calls")):
            self.start_call(None, item, call_where)

    def index(self, where: str, value: Any) -> int | None:
        """An event's ``index`` (``None`` when absent, or of another type, which is noted)."""
        return self.integer(f"{where}index", value)

    def feed_content(self, kind: str, position: int | None, item: dict[str, Any], where: str) -> None:
        """Start a content item (``content-start``, or an item of a whole message) or add to one
        (``content-delta``); a delta for an item never started is read as text, and noted."""
        block = self.content.get(position) if position is not None else None
        if kind == "content-start" or block is None:
            if kind != "content-start":
                self.note(
                    deviation(
                        "content_delta_without_start",
                        f"a content-delta for index {position!r}, which no content-start opened; "
                        "read as text",
                    )
                )
            default = "thinking" if "thinking" in item else "text"
            block = _Content(self.string(f"{where}.type", item.get("type")) or default)
            self.content[position if position is not None else len(self.content)] = block
        for key in ("text", "thinking"):
            value = self.string(f"{where}.{key}", item.get(key))
            if value:
                block.parts.append(value)

    def start_calls(self, index: int | None, value: Any, where: str) -> None:
        """``tool-call-start``: one call object; a list (a deviation) starts each of its calls."""
        if isinstance(value, list):
            self.note(
                deviation(
                    "tool_call_start_with_list",
                    "tool-call-start carries a list of calls, not one call object; each is started",
                )
            )
            base = len(self.calls) if index is None else index
            for position, (item_where, item) in enumerate(self.objects(where, value)):
                self.start_call(base + position, item, item_where)
            return
        call = self.obj(where, value)
        if call is None:
            self.note(
                deviation("tool_call_start_empty", "a tool-call-start without its call; nothing started")
            )
            return
        self.start_call(index, call, where)

    def start_call(self, index: int | None, item: dict[str, Any], where: str) -> None:
        """A call opened at ``index`` (a whole message's calls have none): its id, its name and the
        arguments it already carries."""
        function = self.obj(f"{where}.function", item.get("function")) or {}
        name = self.string(f"{where}.function.name", function.get("name"))
        call = _Call(self.string(f"{where}.id", item.get("id")), name or "")
        if function.get("arguments") is not None:
            call.fragments.append(function["arguments"])
        if index is not None:
            if index in self.at:
                self.note(
                    deviation(
                        "tool_call_index_reused", f"tool-call-start reuses index {index}; read as a new call"
                    )
                )
            self.at[index] = call
        self.calls.append(call)

    def feed_arguments(self, index: int | None, value: Any, where: str) -> None:
        """``tool-call-delta``: an arguments fragment for the call started at ``index``."""
        item = self.obj(where, value) or {}
        function = self.obj(f"{where}.function", item.get("function")) or {}
        call = self.at.get(index) if index is not None else None
        if call is None:
            self.note(
                deviation(
                    "tool_call_delta_without_start",
                    f"a tool-call-delta for index {index!r}, which no tool-call-start opened; dropped",
                    delta=value,
                )
            )
            return
        if function.get("arguments") is not None:
            call.fragments.append(function["arguments"])

    def feed_end(self, end: dict[str, Any], where: str) -> None:
        """What ends the message: the finish reason, the usage, and an error text if any."""
        self.finish_reason = (
            self.string(f"{where}finish_reason", end.get("finish_reason")) or self.finish_reason
        )
        usage = self.obj(f"{where}usage", end.get("usage"))
        if usage is not None:
            self.usage = self.read_usage(usage, f"{where}usage")
        text = self.string(f"{where}error", end.get("error"))
        if text:
            self.note(deviation("error_event_in_stream", "message-end carries an error"))
            self.error = ProviderError(200, text, self.finish_reason)

    def read_usage(self, usage: dict[str, Any], where: str) -> Usage | None:
        """The model's own token counts (``tokens``), else the billed ones (``billed_units``)."""
        for key in ("tokens", "billed_units"):
            counts = self.obj(f"{where}.{key}", usage.get(key))
            if counts:
                return Usage(
                    self.count(f"{where}.{key}.input_tokens", counts.get("input_tokens")),
                    self.count(f"{where}.{key}.output_tokens", counts.get("output_tokens")),
                )
        return None

    def finish(self) -> ParsedTurn:
        """The turn: calls made, the plan and thinking as reasoning, the finish reason checked."""
        calls: list[ToolCall] = []
        for position, partial in enumerate(self.calls):
            if not partial.name:
                self.note(deviation("tool_call_missing_name", f"tool call {position} has no function name"))
            call, findings = make_call(
                partial.name, partial.raw_arguments(), partial.id, position, wire_type="string"
            )
            for finding in findings:
                self.note(finding)
            calls.append(call)
            if self.streaming and not partial.ended and self.ended:
                self.note(
                    deviation(
                        "tool_call_without_end", f"call {position} ({partial.name}) got no tool-call-end"
                    )
                )
        for finding in id_findings(calls):
            self.note(finding)
        self.check_finish(calls)
        text = join_text([t for c in self._ordered() if c.type == "text" for t in c.parts])
        thinking = join_text([t for c in self._ordered() if c.type == "thinking" for t in c.parts])
        unknown = sorted({c.type for c in self.content.values()} - {"text", "thinking"})
        for kind in unknown:
            self.note(
                Finding(
                    f"wire.unknown_content_type:{id_part(kind)}",
                    "info",
                    False,
                    f"content of type {kind!r} ignored",
                )
            )
        plan = join_text(self.plan)
        extra: dict[str, Any] = {}
        if plan:
            extra[PLAN] = plan
            self.note(
                Finding(
                    "wire.tool_plan",
                    "info",
                    False,
                    "the turn carries a tool_plan: the plan, kept as reasoning and replayed, not text",
                )
            )
        if thinking:
            extra[THINKING] = thinking
            self.note(
                Finding("wire.reasoning_field:thinking", "info", False, "thinking content, kept as reasoning")
            )
        self.note_text_beside_calls(text, calls)
        reasoning = "\n\n".join(part for part in (thinking, plan) if part) or None
        return ParsedTurn(
            text, calls, self.finish_reason, self.usage, self.error, self.findings, reasoning, extra
        )

    def _ordered(self) -> list[_Content]:
        return [self.content[index] for index in sorted(self.content)]

    def check_finish(self, calls: list[ToolCall]) -> None:
        """``TOOL_CALL`` exactly when the turn has calls; ``ERROR`` and ``TIMEOUT`` fail the turn."""
        reason = self.finish_reason
        if calls and reason != "TOOL_CALL":
            self.note(
                deviation(
                    f"finish_{id_part(reason or 'missing')}_with_tool_calls",
                    f"finish_reason is {reason!r} although the turn has tool calls",
                )
            )
        if not calls and reason == "TOOL_CALL":
            self.note(
                deviation(
                    "finish_tool_call_without_calls", "finish_reason is 'TOOL_CALL' but the turn has no call"
                )
            )
        if reason in FAILED and self.error is None:
            detail = f"the generation ended with finish_reason {reason}"
            self.note(deviation("generation_failed", detail, severity="error"))
            self.error = ProviderError(200, detail, reason)
