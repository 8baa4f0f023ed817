"""Prompted mode: any native adapter driven with the tools in the system prompt.

For models without native tool calling (or to compare a model's native and
prompted tool use): no ``tools`` on the wire; the tool prompt of a text
protocol (:mod:`harness.providers.text_protocols`) in the system message;
calls parsed out of the reply text; assistant calls and tool results replayed
as text.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import Any, ClassVar

from harness.model import (
    Finding,
    Message,
    ParsedTurn,
    ToolChoice,
    ToolResult,
    ToolSpec,
    WireRequest,
    WireResponse,
    deviation,
)
from harness.providers.adapter import Adapter, RequestOptions, RequestView, malformed, unicode_safe
from harness.providers.framing import DecodedStream
from harness.providers.text_protocols import estimate_tokens, get_protocol, native_tools_size


class PromptedAdapter(Adapter):
    """Any native adapter driven in prompted mode: tools in the system prompt, calls in the text.

    Instances carry the inner adapter's profile; ``parse`` takes the offered
    tools, which XML arguments need to be typed by schema. The adapter keeps
    no state between requests.
    """

    format: ClassVar[str] = "prompted"

    def __init__(self, inner: Adapter, protocol: str):
        self.inner = inner
        self.protocol = get_protocol(protocol)
        self.profile = inner.profile
        self.mode = f"prompted-{self.protocol.name}"

    def auth_headers(self, api_key: str) -> dict[str, str]:
        return self.inner.auth_headers(api_key)

    def tool_findings(self, tools: Sequence[ToolSpec]) -> list[Finding]:
        """None: the tools travel as text in the system prompt, which any provider takes."""
        return []

    def prompt_size(self, prompt: str) -> dict[str, Any]:
        """Size of a tool prompt (tokens: see :func:`estimate_tokens`)."""
        return {
            "protocol": self.protocol.name,
            "characters": len(prompt),
            "estimated_tokens": estimate_tokens(len(prompt)),
        }

    def text_messages(self, messages: Sequence[Message], prompt: str) -> list[Message]:
        """The conversation as text: calls rendered after the prose, each run of tool
        results as one user message, the tool prompt in the first system message."""
        out: list[Message] = []
        for is_tool, group in itertools.groupby(messages, key=lambda m: m.role == "tool"):
            if is_tool:
                results = [m.tool_result or ToolResult(None, "", m.content or "") for m in group]
                out.append(Message("user", self.protocol.render_results(results)))
                continue
            for message in group:
                if message.role != "assistant" or not message.tool_calls:
                    out.append(message)
                    continue
                parts = [(message.content or "").strip(), self.protocol.render_calls(message.tool_calls)]
                text = "\n\n".join(p for p in parts if p)
                out.append(Message("assistant", text, extra=dict(message.extra)))
        if prompt and out and out[0].role == "system":
            merged = "\n\n".join(p for p in (out[0].content, prompt) if p)
            out[0] = dataclasses.replace(out[0], content=merged)
        elif prompt:
            out.insert(0, Message("system", prompt))
        return out

    def build_request(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        tool_choice: ToolChoice,
        options: RequestOptions,
    ) -> WireRequest:
        prompt = self.protocol.system_prompt(tools, tool_choice)
        converted = self.text_messages(messages, prompt)
        request = self.inner.build_request(converted, [], ToolChoice("auto"), options)
        size = self.prompt_size(prompt)
        request.findings.append(
            Finding(
                "wire.prompted_mode",
                "info",
                False,
                f"prompted mode, protocol {self.protocol.name!r}: no native tools sent; the tool prompt is "
                f"{size['characters']} characters (~{size['estimated_tokens']} tokens, estimated)",
                evidence={**size, "native": native_tools_size(tools), "tool_choice": tool_choice.label()},
            )
        )
        return request

    def extract(self, turn: ParsedTurn, tools: Sequence[ToolSpec] = ()) -> ParsedTurn:
        """The inner turn with the calls taken out of its text (a provider error is left as it is)."""
        if turn.error is not None:
            return turn
        parsed = self.protocol.parse(turn.text or "", tools)
        calls = list(turn.tool_calls)
        findings = [*turn.findings, *parsed.findings]
        if calls:
            findings.append(
                deviation(
                    "native_tool_calls_in_prompted_mode",
                    f"{len(calls)} native tool call(s) although no tools were offered on the wire; kept",
                )
            )
        for call in parsed.calls:
            call.index = len(calls)
            calls.append(call)
        return dataclasses.replace(turn, text=parsed.text, tool_calls=calls, findings=findings)

    def parse(self, response: WireResponse, *, stream: bool, tools: Sequence[ToolSpec] = ()) -> ParsedTurn:
        """The inner adapter's turn with the calls taken out of its text. Every fault of the text
        is a finding of the protocol; the guard here is the last resort, as in :meth:`Adapter.parse`."""
        turn = self.inner.parse(response, stream=stream)
        try:
            extracted: ParsedTurn = unicode_safe(self.extract(turn, tools))
        except Exception as exc:  # model text that breaks the parser is the model's fault
            return malformed(f"{self.protocol.name} text-call", response.status, exc, "PromptedAdapter.parse")
        return extracted

    def read_body(self, body: dict[str, Any], path: str) -> RequestView:
        """The request read by the inner adapter's reader: the tools of prompted mode travel in the
        system prompt and its calls and results in message text, so they stay text here (noted)."""
        view = self.inner.read_body(body, path)
        note = Finding(
            "wire.prompted_request_read_natively",
            "info",
            False,
            f"read as a {self.inner.format} request: tools, calls and results written as "
            f"{self.protocol.name} text stay in the messages' text",
        )
        return dataclasses.replace(view, findings=(*view.findings, note))

    def parse_body(self, body: dict[str, Any]) -> ParsedTurn:
        return self.extract(self.inner.parse_body(body))

    def parse_stream(self, stream: DecodedStream) -> ParsedTurn:
        return self.extract(self.inner.parse_stream(stream))


def prompted(inner: Adapter, protocol: str) -> PromptedAdapter:
    """``inner`` in prompted mode.

    An unknown protocol raises :class:`~harness.errors.UnknownNameError` listing the known ones.
    """
    return PromptedAdapter(inner, protocol)
