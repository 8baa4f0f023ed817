"""Ollama native ``/api/chat`` (``ollama-chat``).

Arguments are JSON objects; ids exist only since v0.12.10 (older servers send
none, so ids are synthesized and marked); tool results link by ``tool_name``
(and ``tool_call_id`` when the call had a wire id); there is no
``tool_choice`` field at all, so a non-``auto`` choice is a finding, never
dropped silently. Streams are NDJSON with each call whole in one chunk; the
last line has ``done: true``; a tool turn ends with ``done_reason: stop``.
A request another client sent is read back by :mod:`harness.providers._chat_request`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.model import (
    Finding,
    Message,
    ParsedTurn,
    ToolCall,
    ToolChoice,
    ToolSpec,
    Usage,
    WireRequest,
    deviation,
)
from harness.providers._calls import Notes, function_tools, id_findings, join_text, make_call
from harness.providers._chat_request import read_ollama
from harness.providers._history import images, unsupported
from harness.providers.adapter import Adapter, RequestOptions, RequestView
from harness.providers.envelopes import embedded_error
from harness.providers.framing import DecodedStream


class OllamaChatAdapter(Adapter):
    """Ollama's native chat API."""

    format = "ollama-chat"
    truncation_reasons = frozenset({"length"})  # [OL4]
    simulator = "harness.servers.sim.wire:OLLAMA"
    default_path = "/api/chat"
    argument_wire_type = "object"
    stream_sentinel = None

    @classmethod
    def claims_url(cls, host: str, path: str) -> bool:
        return path.endswith("/api/chat")

    @classmethod
    def claims_payload(cls, data: dict[str, Any]) -> bool:
        """A boolean ``done`` beside a ``message`` object."""
        return isinstance(data.get("done"), bool) and isinstance(data.get("message"), dict)

    def build_request(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        tool_choice: ToolChoice,
        options: RequestOptions,
    ) -> WireRequest:
        findings: list[Finding] = []
        synthesized = {c.id for m in messages for c in m.tool_calls if c.id_synthesized}
        if any(m.parts for m in messages):
            findings.append(unsupported(self.format, "content as a list of parts", "sent as one string"))
        body: dict[str, Any] = {
            "model": options.model,
            "messages": [self.map_message(m, synthesized) for m in messages],
            "stream": options.stream,
        }
        if tools:
            body["tools"] = function_tools(tools)
            if tool_choice.mode != "auto":
                findings.append(
                    Finding(
                        "wire.tool_choice_unsupported",
                        "info",
                        False,
                        f"Ollama's /api/chat has no tool_choice field: {tool_choice.label()!r} could not be "
                        "sent and the model chose freely",
                    )
                )
            if options.parallel_tool_calls is not None:
                findings.append(
                    Finding(
                        "wire.parallel_tool_calls_unsupported",
                        "info",
                        False,
                        "Ollama's /api/chat has no parallel_tool_calls field",
                    )
                )
        model_options = {
            k: v
            for k, v in (
                ("temperature", options.temperature),
                ("seed", options.seed),
                ("num_predict", options.max_tokens),
            )
            if v is not None
        }
        if model_options:
            body["options"] = model_options
        body.update(options.extra)
        return WireRequest(self.default_path, body, options.stream, findings=findings)

    @staticmethod
    def map_message(message: Message, synthesized: set[str | None]) -> dict[str, Any]:
        """One message; ids the harness synthesized are never sent back as if Ollama had made them."""
        if message.role == "tool":
            result = message.tool_result
            assert result is not None
            item: dict[str, Any] = {"role": "tool", "content": result.content, "tool_name": result.name}
            if result.call_id and result.call_id not in synthesized:
                item["tool_call_id"] = result.call_id
            if images(result):  # a message's images go beside its text, as base64 [OL4]
                item["images"] = [p.data for p in images(result)]
            return item
        wire: dict[str, Any] = {"role": message.role, "content": message.content or ""}
        if message.tool_calls:
            wire["tool_calls"] = []
            for call in message.tool_calls:
                item_call: dict[str, Any] = {
                    "function": {"index": call.index, "name": call.name, "arguments": call.arguments or {}}
                }
                if call.wire_id:
                    item_call["id"] = call.wire_id
                wire["tool_calls"].append(item_call)
        if message.extra.get("thinking"):
            wire["thinking"] = message.extra["thinking"]
        return wire

    def read_body(self, body: dict[str, Any], path: str) -> RequestView:
        """An ``/api/chat`` request read back (the inverse of :meth:`build_request`)."""
        return read_ollama(body)

    def parse_body(self, body: dict[str, Any]) -> ParsedTurn:
        acc = _Accumulator()
        acc.feed(body)
        return acc.finish()

    def parse_stream(self, stream: DecodedStream) -> ParsedTurn:
        acc = _Accumulator()
        for number, event in enumerate(stream.events):
            if isinstance(event.data, dict):
                acc.feed(event.data, f"events[{number}].")
        if stream.events and not acc.done:
            acc.findings.append(
                deviation("stream_without_done", "the NDJSON stream ended without done: true")
            )
        return acc.finish()


class _Accumulator(Notes):
    """Folds Ollama response objects (one, or one per NDJSON line) into a turn."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.thinking: list[str] = []
        self.raw_calls: list[tuple[str, dict[str, Any]]] = []
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.error: Any = None
        self.done = False

    def feed(self, chunk: dict[str, Any], where: str = "") -> None:
        """Fold one response object; ``where`` is its place in the stream, for findings."""
        error = embedded_error(chunk, 200)
        if error is not None:
            self.error = error
            self.note(deviation("error_chunk_in_stream", "an error line arrived in the 2xx stream"))
            return
        message = self.obj(f"{where}message", chunk.get("message")) or {}
        content = self.string(f"{where}message.content", message.get("content"))
        if content is not None:
            self.text.append(content)
        thinking = self.string(f"{where}message.thinking", message.get("thinking"))
        if thinking:
            self.thinking.append(thinking)
        self.raw_calls += self.objects(f"{where}message.tool_calls", message.get("tool_calls"))
        done = chunk.get("done")
        if done is not None and not isinstance(done, bool):
            self.wrong_type(f"{where}done", done, "boolean", f"read as {bool(done)}")
        if done:
            self.done = True
            reason = self.string(f"{where}done_reason", chunk.get("done_reason"))
            self.finish_reason = reason or self.finish_reason
            if "prompt_eval_count" in chunk or "eval_count" in chunk:
                self.usage = Usage(
                    self.count(f"{where}prompt_eval_count", chunk.get("prompt_eval_count")),
                    self.count(f"{where}eval_count", chunk.get("eval_count")),
                )

    def finish(self) -> ParsedTurn:
        calls: list[ToolCall] = []
        functions = [
            (where, self.obj(f"{where}.function", raw.get("function")) or {}) for where, raw in self.raw_calls
        ]
        has_index = ["index" in function for _, function in functions]
        if any(has_index) and not all(has_index):
            self.note(
                Finding(
                    "wire.tool_call_index_omitted_on_some_calls",
                    "info",
                    False,
                    "function.index is present on some calls and missing on others",
                )
            )
        for position, ((where, raw), (_, function)) in enumerate(zip(self.raw_calls, functions, strict=True)):
            name = self.string(f"{where}.function.name", function.get("name")) or ""
            if not name:
                self.note(deviation("tool_call_missing_name", f"{where} has no function name"))
            call, findings = make_call(
                name,
                function.get("arguments"),
                self.string(f"{where}.id", raw.get("id")),
                position,
                wire_type="object",
                optional_id="Ollama sends ids only since v0.12.10",
            )
            calls.append(call)
            for finding in findings:
                self.note(finding)
        for finding in id_findings(calls):
            self.note(finding)
        thinking = join_text(self.thinking)
        turn = ParsedTurn(
            join_text(self.text),
            calls,
            self.finish_reason,
            self.usage,
            self.error,
            self.findings,
            thinking,
            {"thinking": thinking} if thinking else {},
        )
        return turn
