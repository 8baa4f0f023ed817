"""The adapter contract, endpoint profiles, and the registry of wire formats.

An adapter is pure: it maps provider-neutral messages and tools to a request
dict (:meth:`Adapter.build_request`) and a response (whole or streamed) back to
a :class:`~harness.model.ParsedTurn` (:meth:`Adapter.parse`). Streaming and
non-streaming responses go through the same accumulator. Every deviation from
the wire format becomes a finding; an adapter may normalise so the loop can go
on, but never silently.

A :class:`Profile` is an *endpoint*: a vendor speaking an existing format with
its own quirks, as data (see :mod:`harness.providers.compat`).
"""

from __future__ import annotations

import hashlib
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
    ToolCall,
    ToolChoice,
    ToolSpec,
    WireRequest,
    WireResponse,
    deviation,
)
from harness.providers.framing import DecodedStream, decode_stream


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
class Quirk:
    """A documented endpoint deviation: what it is and whether the profile works around it."""

    id: str
    detail: str
    workaround: str | None = None


@dataclass(frozen=True)
class Profile:
    """An endpoint speaking a wire format, with its quirks as data.

    ``tool_choice`` lists the values the endpoint honours; others are still sent
    (so the conformance run sees what the endpoint really does) and noted.
    ``path`` overrides the format's request path where the vendor mounts it elsewhere.
    """

    name: str
    format: str
    base_url: str = ""
    api_key_env: str | None = None
    description: str = ""
    tool_choice: frozenset[str] = frozenset({"auto", "required", "none", "named"})
    assistant_content_null: bool = True
    send_parallel_tool_calls: bool = True
    stream_usage: bool = True
    quirks: tuple[Quirk, ...] = ()
    path: str | None = None

    def request_path(self, default: str) -> str:
        return self.path or default

    def quirk(self, quirk_id: str) -> Quirk | None:
        return next((q for q in self.quirks if q.id == quirk_id), None)


class Adapter(ABC):
    """One wire format. Subclasses implement building and the accumulator."""

    format: ClassVar[str]
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


def function_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Tools as ``{"type": "function", "function": {...}}``: OpenAI's shape, which Mistral and
    Ollama share."""
    empty = {"type": "object", "properties": {}}
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters or empty},
        }
        for t in tools
    ]


def ids_rewritten(ids: Sequence[str], rule: str) -> list[Finding]:
    """An info note when call ids from history had to be rewritten to a provider's id rule."""
    if not ids:
        return []
    return [
        Finding("wire.id_rewritten", "info", False, f"call ids {sorted(ids)} rewritten to {rule} for replay")
    ]


def malformed(what: str, status: int, exc: Exception) -> ParsedTurn:
    """A failed turn for a response that could not be read at all."""
    detail = f"the {what} response is malformed and could not be read: {type(exc).__name__}: {exc}"
    return ParsedTurn(
        error=ProviderError(status, detail, "malformed_body"),
        findings=[deviation("malformed_body", detail, severity="error")],
    )


# -- registry -------------------------------------------------------------

_ADAPTERS: dict[str, type[Adapter]] = {}


def register(cls: type[Adapter]) -> type[Adapter]:
    """Class decorator: make a wire format available by its name."""
    _ADAPTERS[cls.format] = cls
    return cls


def adapter_class(fmt: str) -> type[Adapter]:
    from harness.errors import UnknownNameError
    from harness.providers import load_all

    load_all()
    try:
        return _ADAPTERS[fmt]
    except KeyError:
        raise UnknownNameError("wire format", fmt, _ADAPTERS) from None


def formats() -> list[str]:
    from harness.providers import load_all

    load_all()
    return sorted(_ADAPTERS)


# -- helpers shared by adapters ---------------------------------------------


def synthesize_id(name: str, arguments: Any, index: int) -> str:
    """A deterministic id for a call the provider sent without one.

    Nine alphanumeric characters satisfy every provider's id rule (Mistral's is
    the strictest), and determinism keeps replayed requests identical.
    """
    digest = hashlib.sha256(json.dumps([name, arguments, index], sort_keys=True).encode()).hexdigest()
    return "h" + digest[:8]


def parse_arguments(raw: Any, *, wire_type: str) -> tuple[dict[str, Any] | None, str | None, list[Finding]]:
    """Parse a call's wire arguments into an object, noting each deviation.

    ``wire_type`` is what the format specifies (``string`` for OpenAI-style
    JSON text, ``object`` for Ollama, Anthropic and Gemini). An empty string or
    missing value becomes ``{}`` (with a finding); invalid JSON gives ``None``
    and a parse error.
    """
    findings: list[Finding] = []
    if raw is None:
        findings.append(deviation("arguments_missing", "the call carries no arguments; treated as {}"))
        return {}, None, findings
    if isinstance(raw, dict):
        if wire_type == "string":
            findings.append(
                deviation("arguments_object_not_string", "arguments came as a JSON object, not a JSON string")
            )
        return raw, None, findings
    if isinstance(raw, str):
        if wire_type == "object":
            findings.append(
                deviation("arguments_string_not_object", "arguments came as a JSON string, not an object")
            )
        if not raw.strip():
            findings.append(
                deviation("arguments_empty_string", "arguments are an empty string; treated as {}")
            )
            return {}, None, findings
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            error = f"arguments are not valid JSON: {exc.msg} at position {exc.pos}"
            findings.append(deviation("arguments_invalid_json", error, severity="error", raw=raw))
            return None, error, findings
        if not isinstance(value, dict):
            error = f"arguments are JSON but not an object: {type(value).__name__}"
            findings.append(deviation("arguments_not_object", error, severity="error", raw=raw))
            return None, error, findings
        return value, None, findings
    error = f"arguments have wire type {type(raw).__name__}"
    findings.append(deviation("arguments_not_object", error, severity="error", raw=raw))
    return None, error, findings


def make_call(
    name: str,
    raw_arguments: Any,
    call_id: str | None,
    index: int,
    *,
    wire_type: str,
    optional_id: str | None = None,
) -> tuple[ToolCall, list[Finding]]:
    """A :class:`ToolCall` from wire parts, with id and argument findings.

    ``optional_id`` says why a missing id is normal on this API (Ollama before
    v0.12.10, Gemini 2.x): the synthesized id is then an info note, not a warning.
    """
    arguments, error, findings = parse_arguments(raw_arguments, wire_type=wire_type)
    call = ToolCall(
        name,
        arguments,
        raw_arguments,
        call_id or synthesize_id(name, raw_arguments, index),
        call_id,
        index,
        error,
    )
    if call_id is None:
        detail = f"call {index} ({name}) has no id; synthesized {call.id}"
        findings.append(
            Finding("wire.missing_id", "info", False, f"{detail} ({optional_id})")
            if optional_id
            else deviation("missing_id", detail)
        )
    elif call_id == "":
        findings.append(
            deviation("empty_id", f"call {index} ({name}) has an empty id; synthesized {call.id}")
        )
    return call, findings


def id_findings(calls: Sequence[ToolCall]) -> list[Finding]:
    """Duplicate ids within one turn (a provider must keep them unique)."""
    seen: set[str] = set()
    duplicates = []
    for call in calls:
        if not call.wire_id:
            continue
        if call.wire_id in seen:
            duplicates.append(call.wire_id)
        seen.add(call.wire_id)
    if duplicates:
        return [
            deviation("duplicate_tool_call_ids", f"duplicate tool call ids: {duplicates}", severity="error")
        ]
    return []


def error_code(error: dict[str, Any]) -> str | None:
    """The error code, in order: string ``code``, Gemini ``status``, ``type``, integer ``code``."""
    code = error.get("code")
    if isinstance(code, str) and code:
        return code
    for key in ("status", "type"):
        if isinstance(error.get(key), str) and error[key]:
            return str(error[key])
    if isinstance(code, int):
        return str(code)
    return None


def provider_error(error: Any, status: int, *, embedded: bool = False) -> ProviderError:
    """A :class:`ProviderError` from any known error envelope.

    ``embedded`` is true for errors inside a 2xx body or a stream: their own
    status (``status_code``, or an integer ``code``) wins over the HTTP one.
    """
    if isinstance(error, str):
        return ProviderError(status, error)
    if not isinstance(error, dict):
        return ProviderError(status, json.dumps(error))
    if embedded:
        for key in ("status_code", "code"):
            if isinstance(error.get(key), int):
                status = error[key]
                break
    detail = {k: v for k, v in error.items() if k not in ("message", "code", "type", "status")}
    message = error.get("message")
    return ProviderError(
        status, str(message) if message is not None else json.dumps(error), error_code(error), detail
    )


def error_from_body(status: int, text: str) -> ProviderError:
    """The error of an HTTP >= 400 response, whatever its envelope."""
    try:
        body = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return ProviderError(status, text.strip() or f"HTTP {status} with an empty body")
    if isinstance(body, list) and body and isinstance(body[0], dict):  # Gemini sometimes wraps in a list
        body = body[0]
    if isinstance(body, dict):
        if "error" in body:
            return provider_error(body["error"], status)
        if "detail" in body:  # FastAPI-style envelope
            detail = body["detail"]
            return ProviderError(status, detail if isinstance(detail, str) else json.dumps(detail))
        if "message" in body:  # Mistral's flat {"object": "error", ...}
            return provider_error(body, status)
    return ProviderError(status, text.strip() or f"HTTP {status} with an empty body")


def embedded_error(body: dict[str, Any], status: int) -> ProviderError | None:
    """An error object inside a 2xx body or stream chunk, if there is one."""
    if body.get("error"):
        return provider_error(body["error"], status, embedded=True)
    if body.get("object") == "error":
        return provider_error(body, status, embedded=True)
    return None


@dataclass
class Notes:
    """A turn's findings, each id once: a stream repeats the same deviation in every chunk.

    The accumulators of every format build on it.
    """

    findings: list[Finding] = field(default_factory=list)
    noted: set[str] = field(default_factory=set, repr=False)

    def note(self, finding: Finding) -> None:
        if finding.check_id not in self.noted:
            self.noted.add(finding.check_id)
            self.findings.append(finding)

    def note_text_beside_calls(self, text: str | None, calls: Sequence[ToolCall]) -> None:
        """Text next to tool calls is allowed everywhere, but clients often drop one or the other."""
        if text and text.strip() and calls:
            self.note(
                Finding("wire.text_with_tool_calls", "info", False, "the turn has text beside tool calls")
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


def join_text(parts: list[str]) -> str | None:
    """Concatenated text, or ``None`` when there is none."""
    text = "".join(parts)
    return text or None
