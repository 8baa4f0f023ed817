"""The adapter contract: one class per wire format, pure functions over dicts.

An adapter maps provider-neutral messages and tools to a request
(:meth:`Adapter.build_request`) and a response (whole or streamed) back to a
:class:`~harness.model.ParsedTurn` (:meth:`Adapter.parse`). It also reads a
request someone else's client sent back into neutral values
(:meth:`Adapter.read_request`, the inverse of ``build_request``), so a user's
own agent can be graded from recorded traffic. Streaming and
non-streaming responses go through the same accumulator. Every deviation from
the wire format becomes a finding; an adapter may normalise so the loop can go
on, but never silently. An adapter does no I/O.

Where a request goes (the endpoint) is a :class:`~harness.providers.profiles.Profile`;
many profiles share one adapter.
"""

from __future__ import annotations

import functools
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from harness.model import (
    Finding,
    Message,
    ParsedTurn,
    ProviderError,
    ToolChoice,
    ToolSpec,
    WireRequest,
    WireResponse,
    deviation,
)
from harness.providers.envelopes import embedded_error, error_from_body
from harness.providers.framing import DecodedStream, decode_stream
from harness.providers.profiles import Profile


@dataclass(frozen=True)
class RequestOptions:
    """Per-target request settings that are not part of the conversation."""

    model: str
    stream: bool = False
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    parallel_tool_calls: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RequestView:
    """A request body read back into provider-neutral values (:meth:`Adapter.read_request`).

    ``messages`` are in conversation order, system messages first where the format keeps
    the system prompt apart (Anthropic, Gemini: one message per system text block or part);
    tool results are ``Message("tool", tool_result=...)`` linked to the call they answer.
    ``tool_choice`` is ``None`` when the request did not say (the provider's default
    applies). ``findings`` are the deviations from the wire format and every value the
    reader had to normalise; a body too malformed to read gives what could be read plus a
    ``wire.request_malformed`` finding, never an exception.

    Example::

        view = adapter.read_request(json.loads(cassette_request_body), "/v1/chat/completions")
        print([m.role for m in view.messages], [t.name for t in view.tools], view.tool_choice)
    """

    messages: tuple[Message, ...] = ()
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice | None = None
    stream: bool = False
    model: str | None = None
    findings: tuple[Finding, ...] = ()


class Adapter(ABC):
    """One wire format. Subclasses implement building and the accumulator."""

    format: ClassVar[str]
    family: ClassVar[str] = "openai"
    """Whose rules the provider's tool declarations follow (names, schema keywords):
    ``openai``, ``anthropic`` or ``gemini`` (:mod:`harness.providers.rules`)."""
    default_path: ClassVar[str] = "/v1/chat/completions"
    argument_wire_type: ClassVar[str] = "string"

    def __init__(self, profile: Profile | None = None):
        self.profile = profile or Profile(self.format, self.format)

    # -- requests ---------------------------------------------------------

    def auth_headers(self, api_key: str) -> dict[str, str]:
        """Headers that carry the key (scrubbed before anything is written)."""
        return {"Authorization": f"Bearer {api_key}"}

    @abstractmethod
    def build_request(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        tool_choice: ToolChoice,
        options: RequestOptions,
    ) -> WireRequest:
        """The provider's request for this conversation."""

    def read_request(self, body: dict[str, Any], path: str = "") -> RequestView:
        """Read a request body another client sent (a user's agent, recorded in a cassette)
        back into neutral messages, tools, ``tool_choice``, streaming mode and model: the
        inverse of :meth:`build_request`, so the harness can grade an agent from the wire.

        ``path`` is the request path (or URL); Gemini puts the model and the streaming mode
        there (``/v1beta/models/{model}:streamGenerateContent?alt=sse``). The reader accepts
        what real SDKs write as well as what the builder writes, and notes every deviation
        and every normalisation as a finding. A body shaped so badly that it cannot be read
        is a ``wire.request_malformed`` finding, never an exception: a user's request is
        evidence, not input the harness may crash on.
        """
        if not isinstance(body, dict):
            detail = f"the request body is {type(body).__name__}, not a JSON object"
            return RequestView(findings=(deviation("request_malformed", detail, severity="error"),))
        try:
            return self.read_body(body, path)
        except NotImplementedError:
            raise
        except Exception as exc:  # whatever a body does to the reader, it is the client's fault
            detail = f"the {self.format} request could not be read: {type(exc).__name__}: {exc}"
            return RequestView(findings=(deviation("request_malformed", detail, severity="error"),))

    def read_body(self, body: dict[str, Any], path: str) -> RequestView:
        """The format's request reader behind :meth:`read_request` (each wire format overrides it)."""
        raise NotImplementedError(f"the {self.format} adapter does not read requests")

    def tool_findings(self, tools: Sequence[ToolSpec]) -> list[Finding]:
        """What this provider would reject or drop in the offered tools' declarations: a name its
        rules forbid, a JSON Schema keyword or format its tool schemas do not take (info
        findings: the declaration is the user's to port, not the model's fault)."""
        return [
            Finding("wire.tool_declaration", "info", False, f"tool {tool.name!r}: {problem}")
            for tool in tools
            for problem in declaration_issues(
                self.family, tool.name, json.dumps(tool.parameters, sort_keys=True)
            )
        ]

    def choice_findings(self, tool_choice: ToolChoice) -> list[Finding]:
        """Note a ``tool_choice`` the endpoint profile documents as unsupported."""
        if tool_choice.mode == "auto" or tool_choice.mode in self.profile.tool_choice:
            return []
        return [
            Finding(
                "wire.tool_choice_unsupported",
                "info",
                False,
                f"profile {self.profile.name!r} documents tool_choice {tool_choice.label()!r} as "
                "unsupported; sent anyway so the run shows what the endpoint does",
            )
        ]

    # -- responses --------------------------------------------------------

    def parse(self, response: WireResponse, *, stream: bool, tools: Sequence[ToolSpec] = ()) -> ParsedTurn:
        """Parse a whole response: an error status, a JSON body, or a stream body.

        ``tools`` are the tools the request offered (native formats do not need
        them; prompted mode types text-call arguments by their schemas).

        A body shaped so badly that the accumulator cannot read it (a ``null``
        where an object belongs, a string where a list belongs) is a provider
        fault: a failed turn with a finding, never an exception.
        """
        try:
            return self._parse(response, stream=stream)
        except Exception as exc:  # whatever a body does to the accumulator, it is the provider's fault
            return malformed(self.format, response.status, exc)

    def _parse(self, response: WireResponse, *, stream: bool) -> ParsedTurn:
        if response.status >= 400:
            return ParsedTurn(error=error_from_body(response.status, response.body))
        if stream:
            decoded = decode_stream(response.body)
            if decoded.framing == "empty":
                return ParsedTurn(
                    error=ProviderError(
                        response.status, "HTTP 2xx with an empty stream body", "empty_stream"
                    ),
                    findings=framing_findings(decoded, self.stream_sentinel),
                )
            turn = self.parse_stream(decoded)
            turn.findings[:0] = framing_findings(decoded, self.stream_sentinel)
            return turn
        try:
            body = json.loads(response.body) if response.body.strip() else None
        except json.JSONDecodeError as exc:
            return ParsedTurn(
                error=ProviderError(response.status, f"response body is not JSON: {exc}"),
                findings=[deviation("body_not_json", f"HTTP {response.status} body is not JSON: {exc}")],
            )
        if not isinstance(body, dict):
            return ParsedTurn(
                error=ProviderError(response.status, "empty or non-object response body"),
                findings=[deviation("empty_body", "the response body is empty or not a JSON object")],
            )
        embedded = embedded_error(body, response.status)
        if embedded is not None:
            return ParsedTurn(
                error=embedded,
                findings=[deviation("error_in_200_body", "an error object came back with HTTP 2xx")],
            )
        return self.parse_body(body)

    stream_sentinel: ClassVar[str | None] = "[DONE]"

    @abstractmethod
    def parse_body(self, body: dict[str, Any]) -> ParsedTurn:
        """Parse a non-streamed JSON body (through the same accumulator as streams)."""

    @abstractmethod
    def parse_stream(self, stream: DecodedStream) -> ParsedTurn:
        """Parse a decoded stream."""


@functools.lru_cache(maxsize=4096)
def declaration_issues(family: str, name: str, parameters: str) -> tuple[str, ...]:
    """The problems of one tool declaration for a provider family (cached: every run of a
    scenario offers the same tools)."""
    from harness.providers.rules import rules_for
    from harness.providers.schemas import schema_issues

    rules = rules_for(family)
    issues = []
    if not rules.is_valid(name):
        issues.append(f"name breaks {family}'s tool name rule {rules.pattern.pattern}")
    issues += [f"parameters{problem}" for problem in schema_issues(json.loads(parameters), family)]
    return tuple(issues)


def malformed(what: str, status: int, exc: Exception) -> ParsedTurn:
    """A failed turn for a response that could not be read at all."""
    detail = f"the {what} response is malformed and could not be read: {type(exc).__name__}: {exc}"
    return ParsedTurn(
        error=ProviderError(status, detail, "malformed_body"),
        findings=[deviation("malformed_body", detail, severity="error")],
    )


def framing_findings(stream: DecodedStream, sentinel: str | None) -> list[Finding]:
    """Deviations of the stream framing itself."""
    findings: list[Finding] = []
    if stream.framing == "empty":
        findings.append(deviation("empty_stream", "HTTP 2xx with an empty stream body", severity="error"))
        return findings
    if stream.comments:
        findings.append(
            Finding(
                "wire.sse_comment_lines", "info", False, f"{len(stream.comments)} SSE comment line(s) skipped"
            )
        )
    if stream.undecodable:
        findings.append(
            deviation(
                "stream_payload_not_json",
                f"{len(stream.undecodable)} stream payload(s) are not JSON",
                severity="error",
                payloads=stream.undecodable[:5],
            )
        )
    if stream.unterminated:
        findings.append(
            deviation("sse_final_event_unterminated", "the last SSE event has no blank line after it")
        )
    if sentinel == "[DONE]" and stream.framing == "sse" and not stream.done_sentinel:
        findings.append(deviation("stream_without_done", "the SSE stream ended without data: [DONE]"))
    return findings
