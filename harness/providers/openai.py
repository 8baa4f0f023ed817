"""OpenAI Chat Completions (``openai-chat``), and the base of every format shaped like it.

Requests: ``messages`` with assistant ``tool_calls`` (arguments as JSON
strings) and ``role: tool`` results linked by ``tool_call_id``; ``tools`` as
``{"type": "function", "function": {...}}``. Responses: whole
(``choices[0].message``) or SSE deltas assembled by ``index``; both feed the
same :class:`ChatAccumulator`. A request another client sent is read back by
:mod:`harness.providers._chat_request`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from harness.model import (
    ChoiceMode,
    Finding,
    Message,
    ParsedTurn,
    ToolCall,
    ToolChoice,
    ToolResult,
    ToolSpec,
    Usage,
    WireRequest,
    deviation,
)
from harness.providers._calls import Notes, function_tools, id_findings, join_text, make_call
from harness.providers._chat_request import OPENAI_CHOICES, REASONING_FIELDS, read_chat
from harness.providers._history import images, openai_parts, unsupported
from harness.providers.adapter import Adapter, RequestOptions, RequestView
from harness.providers.envelopes import embedded_error
from harness.providers.framing import DecodedStream


@dataclass
class _PartialCall:
    index: int | None
    id: str | None = None
    name: str = ""
    arguments: list[Any] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def raw_arguments(self) -> Any:
        """String fragments joined; an object (a deviation here) as the last one sent."""
        if not self.arguments:
            return None
        if all(isinstance(a, str) for a in self.arguments):
            return "".join(self.arguments)
        return self.arguments[-1]


class ChatAccumulator(Notes):
    """Folds OpenAI-shaped messages or stream deltas into one parsed turn.

    A whole response is fed as one delta, so streaming and non-streaming share
    every rule: calls keyed by ``index`` (a new id under a used index starts a
    new call), the first name kept, argument fragments concatenated.
    """

    def __init__(self, *, streaming: bool):
        super().__init__()
        self.streaming = streaming
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.reasoning_content: list[str] = []
        self.calls: list[_PartialCall] = []
        self.finish_reasons: list[str] = []
        self.usage: Usage | None = None
        self.error: Any = None
        self.extra: dict[str, Any] = {}

    def feed_chunk(self, chunk: dict[str, Any], status: int = 200, where: str = "") -> None:
        """Fold one chunk (or a whole response); ``where`` is its place in the stream, for findings."""
        error = embedded_error(chunk, status)
        if error is not None:
            self.error = error
            self.note(deviation("error_chunk_in_stream", "an error object arrived inside the 2xx stream"))
            return
        usage = self.obj(f"{where}usage", chunk.get("usage"))
        groq = self.obj(f"{where}x_groq", chunk.get("x_groq"))
        groq_usage = self.obj(f"{where}x_groq.usage", groq.get("usage")) if groq else None
        if usage is not None:
            self.usage = self.read_usage(f"{where}usage", usage)
        elif groq_usage is not None:  # Groq streams usage there [Q4]
            self.usage = self.read_usage(f"{where}x_groq.usage", groq_usage)
        for choice_where, choice in self.objects(f"{where}choices", chunk.get("choices")):
            index = choice.get("index", 0)
            if index is None or isinstance(index, bool) or not isinstance(index, int):
                self.wrong_type(f"{choice_where}.index", index, "integer", "read as 0")
                index = 0
            if index != 0:
                continue
            key = "delta" if self.streaming else "message"
            delta = self.obj(f"{choice_where}.{key}", choice.get(key))
            if delta is not None:
                self.feed_delta(delta, f"{choice_where}.{key}")
            reason = self.string(f"{choice_where}.finish_reason", choice.get("finish_reason"))
            if reason:
                if self.finish_reasons and reason != self.finish_reasons[-1]:
                    self.note(
                        deviation(
                            "finish_reason_changed",
                            f"finish_reason went from {self.finish_reasons[-1]!r} to {reason!r}",
                        )
                    )
                elif self.finish_reasons:
                    self.note(
                        Finding(
                            "wire.finish_reason_repeated",
                            "info",
                            False,
                            "finish_reason was sent in more than one chunk",
                        )
                    )
                self.finish_reasons.append(reason)

    def read_usage(self, where: str, usage: dict[str, Any]) -> Usage:
        """``prompt_tokens`` and ``completion_tokens`` (each a non-negative integer, else noted)."""
        return Usage(
            self.count(f"{where}.prompt_tokens", usage.get("prompt_tokens")),
            self.count(f"{where}.completion_tokens", usage.get("completion_tokens")),
        )

    def feed_delta(self, delta: dict[str, Any], where: str = "message") -> None:
        content = delta.get("content")
        if isinstance(content, str):
            self.text.append(content)
        elif isinstance(content, list):
            for part_where, part in self.objects(f"{where}.content", content):
                text = self.string(f"{part_where}.text", part.get("text"))
                if text is not None:
                    self.text.append(text)
        elif content is not None:
            self.wrong_type(f"{where}.content", content, "string or array of parts")
        for name in REASONING_FIELDS:
            value = self.string(f"{where}.{name}", delta.get(name))
            if value:
                self.reasoning.append(value)
                if name == "reasoning_content":
                    self.reasoning_content.append(value)
                self.note(
                    Finding(
                        f"wire.reasoning_field:{name}",
                        "info",
                        False,
                        f"reasoning text in the non-standard field {name!r}",
                    )
                )
        if delta.get("function_call"):
            self.note(
                deviation(
                    "legacy_function_call_field",
                    "the deprecated function_call field came beside tool_calls",
                    function_call=delta["function_call"],
                )
            )
        if "extra_content" in delta:
            self.extra["extra_content"] = delta["extra_content"]
            self.note(
                Finding(
                    "wire.extra_content_field",
                    "info",
                    False,
                    "message carries extra_content (replayed unchanged)",
                )
            )
        for position, (call_where, item) in enumerate(
            self.objects(f"{where}.tool_calls", delta.get("tool_calls"))
        ):
            self.feed_tool_call(item, position, call_where)

    def feed_tool_call(self, item: dict[str, Any], position: int, where: str = "tool_calls[0]") -> None:
        index = self.integer(f"{where}.index", item.get("index"))
        call_id = self.string(f"{where}.id", item.get("id"))
        function = self.obj(f"{where}.function", item.get("function")) or {}
        if "type" not in item and (call_id is not None or not self.streaming):
            self.note(
                Finding("wire.tool_call_missing_type", "info", False, "tool call without type: function")
            )
        current = self._find(index, call_id, position)
        if current is None:
            current = _PartialCall(index, call_id)
            self.calls.append(current)
        elif call_id is not None:
            if current.id == call_id and self.streaming:
                self.note(
                    deviation("id_repeated_in_stream", "the call id is repeated in continuation chunks")
                )
            current.id = current.id or call_id
        name = self.string(f"{where}.function.name", function.get("name"))
        if name is not None:
            if not current.name:
                current.name = name
            elif name == "":
                self.note(
                    Finding(
                        "wire.empty_name_in_continuation_chunk",
                        "info",
                        False,
                        "continuation chunks carry an empty name",
                    )
                )
            elif name == current.name:
                self.note(
                    deviation("name_repeated_in_stream", "the call name is repeated in continuation chunks")
                )
            else:
                self.note(deviation("name_fragmented_in_stream", "the call name arrived in fragments"))
                current.name += name
        if "arguments" in function and function["arguments"] is not None:
            current.arguments.append(function["arguments"])
        if "extra_content" in item:
            current.extra["extra_content"] = item["extra_content"]

    def _find(self, index: int | None, call_id: str | None, position: int) -> _PartialCall | None:
        if not self.streaming:
            return None  # a whole message: every entry is its own call
        if index is None:
            self.note(deviation("tool_call_delta_without_index", "a streamed tool call delta has no index"))
            if call_id is None and self.calls:
                return self.calls[-1]
            return None
        for call in reversed(self.calls):
            if call.index == index:
                if call_id is not None and call.id is not None and call_id != call.id:
                    self.note(
                        deviation(
                            "tool_call_index_reused_for_new_id",
                            f"index {index} reused for a new call id {call_id}",
                        )
                    )
                    return None
                return call
        return None

    def finish(self, *, wire_type: str = "string") -> ParsedTurn:
        calls: list[ToolCall] = []
        for position, partial in enumerate(self.calls):
            if not partial.name:
                self.note(deviation("tool_call_missing_name", f"tool call {position} has no function name"))
            call, findings = make_call(
                partial.name, partial.raw_arguments(), partial.id, position, wire_type=wire_type
            )
            call.extra.update(partial.extra)
            for finding in findings:
                self.note(finding)
            calls.append(call)
        for finding in id_findings(calls):
            self.note(finding)
        finish = self.finish_reasons[-1] if self.finish_reasons else None
        if calls and finish not in (None, "tool_calls", "function_call"):
            self.note(
                Finding(
                    "wire.finish_stop_with_tool_calls",
                    "info",
                    False,
                    f"finish_reason is {finish!r} although the turn has tool calls",
                )
            )
        if not calls and finish == "tool_calls":
            self.note(
                deviation(
                    "finish_tool_calls_without_calls",
                    "finish_reason is 'tool_calls' but the turn has no tool call",
                )
            )
        text = join_text(self.text)
        self.note_text_beside_calls(text, calls)
        reasoning = join_text(self.reasoning)
        extra = dict(self.extra)
        if self.reasoning_content:  # a thinking-mode tool-call turn's reasoning goes back with it [X1]
            extra["reasoning_content"] = "".join(self.reasoning_content)
        return ParsedTurn(text, calls, finish, self.usage, self.error, self.findings, reasoning, extra)


class OpenAIChatAdapter(Adapter):
    """OpenAI Chat Completions."""

    format = "openai-chat"
    truncation_reasons = frozenset({"length", "model_length"})  # [O4]; vLLM model_length
    simulator = "harness.servers.sim.wire:OPENAI"
    default_path = "/v1/chat/completions"
    named_choice_wire: ClassVar[str] = "object"
    request_choices: ClassVar[Mapping[str, ChoiceMode]] = OPENAI_CHOICES
    """The string ``tool_choice`` values a request may carry, and what each means."""
    request_id_rule: ClassVar[re.Pattern[str] | None] = None
    """The dialect's call id rule, checked on the calls of a request's history."""
    request_id_rule_name: ClassVar[str] = ""
    replays_reasoning_fields: ClassVar[bool] = True
    """Whether reasoning text kept in a message's ``reasoning_content`` (a seeded history from
    DeepSeek or Kimi, whose endpoints speak this format) goes back on the assistant message [X1]."""

    @classmethod
    def claims_url(cls, host: str, path: str) -> bool:
        return path.endswith("/chat/completions")

    @classmethod
    def claims_payload(cls, data: dict[str, Any]) -> bool:
        """A ``choices`` list and no ``object`` other than ``chat.completion[.chunk]``."""
        kind = data.get("object")
        return isinstance(data.get("choices"), list) and (
            kind is None or str(kind).startswith("chat.completion")
        )

    # -- request mapping (pure functions over the neutral types) -----------

    def map_tools(self, tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
        return function_tools(tools)

    def map_tool_choice(self, choice: ToolChoice) -> Any:
        if choice.mode == "named":
            return {"type": "function", "function": {"name": choice.name}}
        return choice.mode

    def map_call(self, call: ToolCall) -> dict[str, Any]:
        raw = call.raw_arguments
        arguments = raw if isinstance(raw, str) else json.dumps(call.arguments or {})
        wire: dict[str, Any] = {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": arguments},
        }
        if "extra_content" in call.extra:
            wire["extra_content"] = call.extra["extra_content"]
        return wire

    def map_tool_result(self, message: Message) -> dict[str, Any]:
        assert message.tool_result is not None
        return {
            "role": "tool",
            "tool_call_id": message.tool_result.call_id,
            "content": result_content(message.tool_result),
        }

    def map_messages(self, messages: Sequence[Message], findings: list[Finding]) -> list[dict[str, Any]]:
        wire: list[dict[str, Any]] = []
        replaced = 0
        for message in messages:
            if message.role == "tool":
                assert message.tool_result is not None
                if images(message.tool_result):
                    findings.append(
                        unsupported(
                            self.format,
                            "an image in a tool message (it takes text parts)",
                            "sent as an image_url part",
                        )
                    )
                wire.append(self.map_tool_result(message))
            elif message.role == "assistant":
                content = openai_parts(message.parts) if message.parts else message.content
                item: dict[str, Any] = {"role": "assistant", "content": content}
                if message.tool_calls:
                    item["tool_calls"] = [self.map_call(c) for c in message.tool_calls]
                if item["content"] is None and not self.profile.assistant_content_null:
                    item["content"] = ""
                    replaced += 1
                if "extra_content" in message.extra:
                    item["extra_content"] = message.extra["extra_content"]
                for name in REASONING_FIELDS if self.replays_reasoning_fields else ():
                    if name in message.extra:
                        item[name] = message.extra[name]
                wire.append(item)
            else:
                wire.append({"role": message.role, "content": message.content or ""})
        if replaced:
            quirk = self.profile.quirk("assistant_content_null_rejected")
            detail = quirk.detail if quirk else "the endpoint rejects content: null on assistant messages"
            findings.append(
                Finding(
                    "wire.quirk:assistant_content_null_rejected",
                    "warning",
                    False,
                    f'{detail} ({replaced} message(s) sent with content "")',
                )
            )
        return wire

    def build_request(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        tool_choice: ToolChoice,
        options: RequestOptions,
    ) -> WireRequest:
        findings: list[Finding] = []
        body: dict[str, Any] = {"model": options.model, "messages": self.map_messages(messages, findings)}
        if tools:
            body["tools"] = self.map_tools(tools)
            body["tool_choice"] = self.map_tool_choice(tool_choice)
            findings.extend(self.choice_findings(tool_choice))
            if options.parallel_tool_calls is not None and self.profile.send_parallel_tool_calls:
                body["parallel_tool_calls"] = options.parallel_tool_calls
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.max_tokens is not None:
            body["max_tokens"] = options.max_tokens
        if options.seed is not None:
            body["seed"] = options.seed
        body["stream"] = options.stream
        if options.stream and self.profile.stream_usage:
            body["stream_options"] = {"include_usage": True}
        body.update(options.extra)
        return WireRequest(
            self.profile.request_path(self.default_path), body, options.stream, findings=findings
        )

    def read_body(self, body: dict[str, Any], path: str) -> RequestView:
        """A Chat Completions request read back (the inverse of :meth:`build_request`)."""
        return read_chat(
            body,
            wire_type=self.argument_wire_type,
            choices=self.request_choices,
            id_rule=self.request_id_rule,
            id_rule_name=self.request_id_rule_name,
        )

    # -- response parsing ---------------------------------------------------

    def accumulator(self, *, streaming: bool) -> ChatAccumulator:
        return ChatAccumulator(streaming=streaming)

    def parse_body(self, body: dict[str, Any]) -> ParsedTurn:
        acc = self.accumulator(streaming=False)
        acc.feed_chunk(body)
        return acc.finish(wire_type=self.argument_wire_type)

    def parse_stream(self, stream: DecodedStream) -> ParsedTurn:
        acc = self.accumulator(streaming=True)
        for number, event in enumerate(stream.events):
            if not isinstance(event.data, dict):
                continue  # noted with the framing (wire.stream_event_not_object)
            data = event.data
            if event.event == "error":
                acc.note(deviation("error_event_in_stream", "an SSE 'event: error' arrived in the stream"))
                if "error" not in data:
                    data = {"error": data}
            acc.feed_chunk(data, where=f"events[{number}].")
        return acc.finish(wire_type=self.argument_wire_type)


def result_content(result: ToolResult) -> Any:
    """A tool message's content: the text, or its parts as a list (a JSON result goes as its text)."""
    return openai_parts(result.parts) if result.form == "parts" else result.content
