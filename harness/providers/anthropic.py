"""Anthropic Messages (``anthropic-messages``).

Requests: top-level ``system``; ``tools`` as ``{name, description,
input_schema}``; ``tool_choice`` as ``{"type": auto|any|tool|none}`` with
``disable_parallel_tool_use`` inside it; assistant turns replayed as content
blocks (raw blocks kept from the parse when they hold thinking the neutral
types cannot carry); every run of tool results becomes ONE user message whose
``tool_result`` blocks come first. Replayed ids must match
``^[a-zA-Z0-9_-]+$`` and are rewritten deterministically otherwise.

Responses: a whole ``message`` or named SSE events (``message_start``,
``content_block_*``, ``message_delta``, ``message_stop``); the whole message
is fed to the same :class:`_Accumulator` as one ``message_start`` event.
A request another client sent is read back by :mod:`harness.providers._anthropic_request`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.model import (
    Finding,
    HostedCall,
    HostedServer,
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
from harness.providers._anthropic_request import read_messages_request
from harness.providers._calls import (
    Notes,
    id_findings,
    id_part,
    ids_rewritten,
    join_text,
    make_call,
    synthesize_id,
)
from harness.providers._history import anthropic_parts
from harness.providers._hosted import MCP_BETA, connector_declarations, hosted_call, text_of
from harness.providers.adapter import Adapter, RequestOptions, RequestView
from harness.providers.envelopes import provider_error
from harness.providers.framing import DecodedStream
from harness.providers.rules import NameRules

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 1024
ID_RULE = re.compile(r"^[a-zA-Z0-9_-]+$")
DELTA_BLOCK = {
    "text_delta": "text",
    "citations_delta": "text",
    "input_json_delta": "tool_use",
    "thinking_delta": "thinking",
    "signature_delta": "thinking",
}
NEUTRAL_BLOCKS = ("text", "tool_use")
HOSTED_BLOCKS = frozenset({"mcp_tool_use", "mcp_tool_result"})
"""The MCP connector's blocks: calls the provider ran on an MCP server, and their results [A19]."""
STREAM_EVENTS = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "ping",
    }
)


class AnthropicMessagesAdapter(Adapter):
    """Anthropic's Messages API."""

    format = "anthropic-messages"
    truncation_reasons = frozenset({"max_tokens"})  # [A5]
    simulator = "harness.servers.sim.wire_anthropic:ANTHROPIC"
    name_rules = NameRules("anthropic", "a-zA-Z0-9_-", 64, source="API error texts (obs.); 128 from 2025-06")
    """``^[a-zA-Z0-9_-]{1,64}$`` (obs. 2025-03 [A1][A2][A10]; 128 obs. since 2025-06): we keep 64."""
    default_path = "/v1/messages"
    argument_wire_type = "object"
    stream_sentinel = None
    hosted_mcp = True

    @classmethod
    def claims_url(cls, host: str, path: str) -> bool:
        return path.endswith("/v1/messages")

    @classmethod
    def claims_payload(cls, data: dict[str, Any]) -> bool:
        """One of its stream event types, a ``message`` with ``role`` and a ``content`` list, or
        its ``{"type": "error", "error": {...}}`` envelope (without the ``sequence_number`` of the
        Responses API's error event, which has the same shape)."""
        kind = data.get("type")
        return (
            kind in STREAM_EVENTS
            or (
                kind == "message"
                and data.get("role") == "assistant"
                and isinstance(data.get("content"), list)
            )
            or (kind == "error" and isinstance(data.get("error"), dict) and "sequence_number" not in data)
        )

    def auth_headers(self, api_key: str) -> dict[str, str]:
        """Anthropic takes the key in ``x-api-key``, not a Bearer token."""
        return {"x-api-key": api_key}

    # -- requests -----------------------------------------------------------

    def build_request(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        tool_choice: ToolChoice,
        options: RequestOptions,
    ) -> WireRequest:
        """The Messages request; ``max_tokens`` is mandatory on this API, so it defaults to 1024."""
        findings: list[Finding] = []
        body: dict[str, Any] = {
            "model": options.model,
            "max_tokens": options.max_tokens or DEFAULT_MAX_TOKENS,
        }
        system = [m.content for m in messages if m.role == "system" and m.content]
        if system:
            body["system"] = "\n\n".join(system)
        body["messages"] = self.map_messages(messages, findings)
        headers = {"anthropic-version": API_VERSION}
        if tools or options.hosted_mcp:
            body["tools"] = [self.map_tool(t) for t in tools]
            if options.hosted_mcp:
                body["mcp_servers"], toolsets = connector_declarations(options.hosted_mcp)
                body["tools"] += toolsets
                headers["anthropic-beta"] = MCP_BETA
                findings += no_approvals(options.hosted_mcp)
            body["tool_choice"] = self.map_tool_choice(tool_choice, options, findings)
            findings.extend(self.choice_findings(tool_choice))
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.seed is not None:
            findings.append(
                Finding(
                    "wire.seed_unsupported",
                    "info",
                    False,
                    "the Messages API has no seed field; the seed was not sent",
                )
            )
        if options.stream:
            body["stream"] = True
        body.update(options.extra)
        return WireRequest(self.default_path, body, options.stream, headers, findings)

    @staticmethod
    def map_tool(tool: ToolSpec) -> dict[str, Any]:
        """One tool; ``input_schema`` is required and must be an object schema."""
        wire: dict[str, Any] = {
            "name": tool.name,
            "input_schema": tool.parameters or {"type": "object", "properties": {}},
        }
        if tool.description:
            wire["description"] = tool.description
        return wire

    @staticmethod
    def map_tool_choice(
        choice: ToolChoice, options: RequestOptions, findings: list[Finding]
    ) -> dict[str, Any]:
        """``required`` is ``any`` here; parallel control lives inside ``tool_choice``."""
        kinds = {"auto": "auto", "required": "any", "none": "none", "named": "tool"}
        wire: dict[str, Any] = {"type": kinds[choice.mode]}
        if choice.mode == "named":
            wire["name"] = choice.name
        if options.parallel_tool_calls is False:
            if choice.mode == "none":
                findings.append(
                    Finding(
                        "wire.parallel_tool_calls_not_applicable",
                        "info",
                        False,
                        "disable_parallel_tool_use cannot go with tool_choice none; not sent",
                    )
                )
            else:
                wire["disable_parallel_tool_use"] = True
        return wire

    def map_messages(self, messages: Sequence[Message], findings: list[Finding]) -> list[dict[str, Any]]:
        """Conversation messages; tool results are grouped and ids rewritten to Anthropic's rule."""
        bad = {i for m in messages for i in _message_ids(m) if not ID_RULE.match(i)}
        findings.extend(ids_rewritten(list(bad), "Anthropic's ^[a-zA-Z0-9_-]+$"))
        wire: list[dict[str, Any]] = []
        results: list[dict[str, Any]] | None = None  # the open tool_result message, if any
        for message in messages:
            if message.role == "system":
                continue
            if message.role == "tool":
                if results is None:
                    results = []
                    wire.append({"role": "user", "content": results})
                results.append(self.map_tool_result(message))
                continue
            if message.role == "user" and results is not None:
                if message.content:  # the user's words go in the same message, after the results
                    results.append({"type": "text", "text": message.content})
            elif message.role == "user":
                wire.append({"role": "user", "content": message.content or ""})
            else:
                wire.append({"role": "assistant", "content": self.map_assistant(message, findings)})
            results = None
        return wire

    @staticmethod
    def map_tool_result(message: Message) -> dict[str, Any]:
        """One ``tool_result`` block; ``is_error`` only when true, as the SDK sends it."""
        result = message.tool_result
        assert result is not None
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": anthropic_id(result.call_id or ""),
            "content": anthropic_parts(result.parts) if result.form == "parts" else result.content,
        }
        if result.is_error:
            block["is_error"] = True
        return block

    @staticmethod
    def map_assistant(message: Message, findings: list[Finding]) -> list[dict[str, Any]] | str:
        """The raw blocks of the parse when kept (thinking must go back unchanged), else rebuilt blocks."""
        raw = message.extra.get("anthropic_content")
        if isinstance(raw, list):
            raw_ids = [b.get("id") for b in raw if isinstance(b, dict) and b.get("type") == "tool_use"]
            if raw_ids == [anthropic_id(c.id or "") for c in message.tool_calls]:
                return raw
            findings.append(
                deviation(
                    "replay_content_rebuilt",
                    "kept Anthropic content blocks no longer match the message's "
                    "tool calls; blocks rebuilt (thinking not replayed)",
                )
            )
        blocks: list[dict[str, Any]] = []
        if message.parts:
            blocks += anthropic_parts(message.parts)
        elif message.content:
            blocks.append({"type": "text", "text": message.content})
        for call in message.tool_calls:
            if call.arguments is None:
                findings.append(
                    deviation(
                        "unparsed_arguments_replayed_empty",
                        f"call {call.id} had unparseable arguments; replayed as input {{}}",
                    )
                )
            blocks.append(
                {
                    "type": "tool_use",
                    "id": anthropic_id(call.id or ""),
                    "name": call.name,
                    "input": call.arguments or {},
                }
            )
        return blocks or (message.content or "")

    def read_body(self, body: dict[str, Any], path: str) -> RequestView:
        """A Messages request read back (the inverse of :meth:`build_request`)."""
        return read_messages_request(body, ID_RULE)

    # -- responses ----------------------------------------------------------

    def parse_body(self, body: dict[str, Any]) -> ParsedTurn:
        """A whole message, fed as one ``message_start`` event carrying its content."""
        acc = _Accumulator()
        acc.feed_message(body, "")
        return acc.finish()

    def parse_stream(self, stream: DecodedStream) -> ParsedTurn:
        """Named SSE events; a stream must end with ``message_stop``."""
        acc = _Accumulator()
        for number, event in enumerate(stream.events):
            if isinstance(event.data, dict):
                where = f"events[{number}]."
                kind = acc.string(f"{where}type", event.data.get("type")) or event.event
                if event.event and kind != event.event:
                    acc.note(
                        deviation(
                            "event_name_mismatch", f"SSE event {event.event!r} carries data of type {kind!r}"
                        )
                    )
                acc.feed(str(kind), event.data, where)
        if stream.events and not acc.stopped and acc.error is None:
            acc.note(deviation("stream_without_message_stop", "the stream ended without event: message_stop"))
        return acc.finish()


def no_approvals(servers: Sequence[HostedServer]) -> list[Finding]:
    """A note for each server declared to need approval: the MCP connector has no approval step
    [A19], so its calls run without one."""
    asked = [s.name for s in servers if s.require_approval != "never"]
    if not asked:
        return []
    detail = (
        f"MCP server(s) {asked} ask for approval of each call; Anthropic's MCP connector has no "
        "approval step, so the provider calls them without one"
    )
    return [Finding("wire.hosted_approval_unsupported", "info", False, detail)]


def anthropic_id(call_id: str) -> str:
    """The id unchanged when it follows Anthropic's rule, else a deterministic one that does."""
    return call_id if ID_RULE.match(call_id) else synthesize_id("id", call_id, 0)


def _message_ids(message: Message) -> list[str]:
    ids = [c.id or "" for c in message.tool_calls]
    if message.tool_result is not None:
        ids.append(message.tool_result.call_id or "")
    return ids


@dataclass
class _Block:
    """One content block as it is assembled: its start object (fields of the wrong type dropped)
    plus the deltas that followed."""

    start: dict[str, Any]
    type: str
    text: list[str] = field(default_factory=list)
    json: list[str] = field(default_factory=list)
    signature: list[str] = field(default_factory=list)
    citations: list[Any] = field(default_factory=list)

    def block(self, call: ToolCall | None) -> dict[str, Any]:
        """The block as it would appear in a whole message (for replay)."""
        wire = dict(self.start)
        if self.type == "text":
            wire["text"] = str(wire.get("text") or "") + "".join(self.text)
            if self.citations:
                wire["citations"] = list(wire.get("citations") or []) + self.citations
        elif self.type == "thinking":
            wire["thinking"] = str(wire.get("thinking") or "") + "".join(self.text)
            wire["signature"] = str(wire.get("signature") or "") + "".join(self.signature)
        elif call is not None:
            wire["input"] = call.arguments if call.arguments is not None else {}
        return wire


BLOCK_STRINGS = ("text", "thinking", "signature", "name", "id")


class _Accumulator(Notes):
    """Folds Messages events (or one whole message) into a turn: blocks by ``index``,
    ``input_json_delta`` text concatenated per block, the last ``stop_reason`` kept."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: dict[int, _Block] = {}
        self.stop_reason: str | None = None
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None
        self.error: ProviderError | None = None
        self.stopped = False

    def feed(self, kind: str, data: dict[str, Any], where: str = "") -> None:
        """Fold one event (named by its ``type``) into the turn; ``where`` is its place in the stream."""
        if kind == "error" or "error" in data:
            self.note(deviation("error_event_in_stream", "an error event arrived in the 2xx stream"))
            self.error = provider_error(data.get("error") or data, 200, embedded=True)
        elif kind == "message_start":
            message = self.obj(f"{where}message", data.get("message"))
            if message is not None:
                self.feed_message(message, f"{where}message.")
        elif kind == "content_block_start":
            self.start_block(data.get("index"), data.get("content_block"), f"{where}content_block")
        elif kind == "content_block_delta":
            delta = self.obj(f"{where}delta", data.get("delta")) or {}
            self.feed_delta(data.get("index"), delta, f"{where}delta")
        elif kind == "message_delta":
            delta = self.obj(f"{where}delta", data.get("delta")) or {}
            self.stop_reason = (
                self.string(f"{where}delta.stop_reason", delta.get("stop_reason")) or self.stop_reason
            )
            self.read_usage(f"{where}usage", data.get("usage"))
        elif kind == "message_stop":
            self.stopped = True
        elif kind not in ("ping", "content_block_stop"):
            self.note(
                Finding("wire.unknown_stream_event", "info", False, f"unknown stream event {kind!r} ignored")
            )

    def feed_message(self, message: dict[str, Any], where: str) -> None:
        """A whole message (a non-streamed body, or the one ``message_start`` carries)."""
        self.read_usage(f"{where}usage", message.get("usage"))
        self.stop_reason = self.string(f"{where}stop_reason", message.get("stop_reason")) or self.stop_reason
        for position, block in enumerate(self.array(f"{where}content", message.get("content"))):
            self.start_block(position, block, f"{where}content[{position}]")

    def start_block(self, index: Any, block: Any, where: str) -> None:
        """Start a content block; its string fields of another type are noted and dropped."""
        if not isinstance(block, dict):
            self.wrong_type(where, block, "object", "block skipped")
            return
        if isinstance(index, bool) or not isinstance(index, int) or index in self.blocks:
            self.note(
                deviation(
                    "content_block_index_reused",
                    f"content_block_start with index {index!r} "
                    "reuses or lacks an index; the later block replaces the earlier one",
                )
            )
        start = dict(block)
        kind = self.string(f"{where}.type", start.get("type"))
        for key in BLOCK_STRINGS:
            if start.get(key) is not None and not isinstance(start[key], str):
                self.wrong_type(f"{where}.{key}", start.pop(key), "string", "dropped")
        if start.get("citations") is not None and not isinstance(start["citations"], list):
            self.wrong_type(f"{where}.citations", start.pop("citations"), "array", "dropped")
        position = index if isinstance(index, int) and not isinstance(index, bool) else len(self.blocks)
        self.blocks[position] = _Block(start, str(kind))

    def feed_delta(self, index: Any, delta: dict[str, Any], where: str = "delta") -> None:
        """Append a delta to its started block; a delta for no block is a deviation."""
        block = self.blocks.get(index) if isinstance(index, int) and not isinstance(index, bool) else None
        kind = str(self.string(f"{where}.type", delta.get("type")))
        if block is None:
            self.note(
                deviation(
                    "delta_without_block_start",
                    f"a {kind} delta for block {index!r}, which was never started; dropped",
                    delta=delta,
                )
            )
            return
        if block.type in DELTA_BLOCK.values() and DELTA_BLOCK.get(kind, block.type) != block.type:
            self.note(deviation("delta_type_mismatch", f"a {kind} delta for a {block.type} block"))
        if kind == "text_delta":
            block.text.append(self.string(f"{where}.text", delta.get("text")) or "")
        elif kind == "thinking_delta":
            block.text.append(self.string(f"{where}.thinking", delta.get("thinking")) or "")
        elif kind == "signature_delta":
            block.signature.append(self.string(f"{where}.signature", delta.get("signature")) or "")
        elif kind == "citations_delta":
            block.citations.append(delta.get("citation"))
        elif kind == "input_json_delta":
            partial = self.string(f"{where}.partial_json", delta.get("partial_json"))
            if partial == "":
                self.note(
                    Finding(
                        "wire.empty_partial_json_delta",
                        "info",
                        False,
                        'an input_json_delta with partial_json "" arrived',
                    )
                )
            block.json.append(partial or "")
        else:
            self.note(
                Finding("wire.unknown_delta_type", "info", False, f"unknown delta type {kind!r} ignored")
            )

    def read_usage(self, where: str, value: Any) -> None:
        """``message_start`` carries input tokens, ``message_delta`` the cumulative output tokens."""
        usage = self.obj(where, value)
        if usage is None:
            return
        if "input_tokens" in usage:
            self.input_tokens = self.count(f"{where}.input_tokens", usage["input_tokens"])
        if "output_tokens" in usage:
            self.output_tokens = self.count(f"{where}.output_tokens", usage["output_tokens"])

    def finish(self) -> ParsedTurn:
        """The turn: blocks in index order, calls made, stop reason and ids checked."""
        text: list[str] = []
        thinking: list[str] = []
        calls: list[ToolCall] = []
        content: list[dict[str, Any]] = []
        hosted: dict[str, HostedCall] = {}
        for index, block in sorted(self.blocks.items()):
            call = self.make_call(block, len(calls)) if block.type == "tool_use" else None
            if call is not None:
                calls.append(call)
            elif block.type in HOSTED_BLOCKS:
                content.append(self.hosted_block(index, block, hosted))
                continue
            elif block.type == "text":
                text.append(str(block.start.get("text") or "") + "".join(block.text))
            elif block.type == "thinking":
                thinking.append(str(block.start.get("thinking") or "") + "".join(block.text))
            elif block.type != "redacted_thinking":
                self.note(
                    Finding(
                        f"wire.unknown_content_block:{id_part(block.type)}",
                        "info",
                        False,
                        f"content block of type {block.type!r} kept for replay only",
                    )
                )
            content.append(block.block(call))
        for finding in id_findings(calls):
            self.note(finding)
        bad = [c.wire_id for c in calls if c.wire_id and not ID_RULE.match(c.wire_id)]
        if bad:
            self.note(deviation("id_format", f"tool_use ids {bad} break Anthropic's rule ^[a-zA-Z0-9_-]+$"))
        self.check_stop_reason(calls)
        joined = join_text(text)
        self.note_text_beside_calls(joined, calls)
        extra: dict[str, Any] = {}
        if any(b.type not in NEUTRAL_BLOCKS for b in self.blocks.values()):
            extra["anthropic_content"] = content
        usage = (
            None
            if self.input_tokens is None and self.output_tokens is None
            else Usage(self.input_tokens, self.output_tokens)
        )
        for found in hosted.values():
            if found.output is None and found.error is None:
                detail = f"hosted MCP call {found.name!r} ({found.id}) has no mcp_tool_result in the turn"
                self.note(deviation("hosted_call_without_output", detail))
        return ParsedTurn(
            joined,
            calls,
            self.stop_reason,
            usage,
            self.error,
            self.findings,
            join_text(thinking),
            extra,
            list(hosted.values()),
        )

    def hosted_block(self, index: int, block: _Block, hosted: dict[str, HostedCall]) -> dict[str, Any]:
        """An ``mcp_tool_use`` block (a call the connector made) or the ``mcp_tool_result`` that
        answers it by ``tool_use_id`` [A19]; the block as a whole message holds it, for replay."""
        where = f"content[{index}]."
        wire = dict(block.start)
        if block.type == "mcp_tool_use":
            buffer = "".join(block.json)
            raw, wire_type = (buffer, "string") if buffer else (wire.get("input"), "object")
            found = hosted_call(
                self,
                where,
                "call",
                wire.get("server_name"),
                wire.get("name"),
                raw,
                wire_type=wire_type,
                call_id=wire.get("id"),
            )
            hosted[found.id or f"#{index}"] = found
            wire["input"] = found.arguments if found.arguments is not None else {}
            return wire
        use_id = self.string(f"{where}tool_use_id", wire.get("tool_use_id"))
        answered = hosted.get(use_id or "")
        if answered is None:
            detail = f"mcp_tool_result {index} answers {use_id!r}, no mcp_tool_use before it in the turn"
            self.note(deviation("hosted_result_without_call", detail))
            return wire
        text = text_of(wire.get("content"))
        if wire.get("is_error") is True:
            answered.error = text or "error"
        else:
            answered.output = text or ""
        return wire

    def make_call(self, block: _Block, position: int) -> ToolCall:
        """A whole message carries ``input`` as an object; a stream carries it as JSON text deltas,
        and an empty buffer leaves the start block's ``{}`` (as the SDK does for argument-less tools)."""
        name = block.start.get("name")
        if not isinstance(name, str) or not name:
            self.note(deviation("tool_call_missing_name", f"tool_use block {position} has no name"))
        buffer = "".join(block.json)
        raw, wire_type = (buffer, "string") if buffer else (block.start.get("input"), "object")
        call, findings = make_call(str(name or ""), raw, block.start.get("id"), position, wire_type=wire_type)
        for finding in findings:
            self.note(finding)
        return call

    def check_stop_reason(self, calls: list[ToolCall]) -> None:
        """``stop_reason`` must be ``tool_use`` exactly when the turn has tool_use blocks."""
        if calls and self.stop_reason != "tool_use":
            reason = self.stop_reason or "missing"
            self.note(
                deviation(
                    f"stop_reason_{id_part(reason)}_with_tool_use",
                    f"stop_reason is {self.stop_reason!r} although the turn has tool_use blocks",
                )
            )
        if not calls and self.stop_reason == "tool_use":
            self.note(
                deviation(
                    "stop_reason_tool_use_without_tool_use",
                    "stop_reason is 'tool_use' but the turn has no tool_use block",
                )
            )
