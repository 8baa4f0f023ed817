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

A body is evidence, not trusted input: each fault it can hold (nesting too deep,
a field of the wrong JSON type, invalid Unicode, a payload that is not an object)
is its own finding, and every string handed out is valid Unicode. The guards of
:meth:`Adapter.parse` and :meth:`Adapter.read_request` are the last resort for a
fault no parser foresaw; their findings carry ``evidence["guard"]`` (see
:func:`reached_guard`), so tests can assert that nothing reaches them.

Where a request goes (the endpoint) is a :class:`~harness.providers.profiles.Profile`;
many profiles share one adapter.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar, cast

from harness.model import (
    Finding,
    HostedServer,
    Message,
    OversizedResponse,
    ParsedTurn,
    ProviderError,
    ToolChoice,
    ToolSpec,
    WireRequest,
    WireResponse,
    deviation,
)
from harness.providers._json import (
    MAX_DEPTH,
    SURROGATE,
    JsonProblem,
    checked,
    clean_text,
    constant_findings,
    decode,
    json_type,
    unicode_findings,
)
from harness.providers.envelopes import embedded_error, error_from_body
from harness.providers.framing import EVIDENCE, DecodedStream, StreamReader, decode_stream
from harness.providers.profiles import Profile
from harness.providers.rules import OPENAI, NameRules, rules_for

T = TypeVar("T")


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
    hosted_mcp: tuple[HostedServer, ...] = ()  # MCP servers the provider's connector runs (hosted MCP)


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
    name_rules: ClassVar[NameRules] = OPENAI
    """The tool names the provider accepts (its family's rules, :mod:`harness.providers.rules`)."""
    family: ClassVar[str] = OPENAI.family
    """Whose rules the provider's tool declarations follow (names, schema keywords): the family
    of :attr:`name_rules` (``openai``, ``anthropic``, ``gemini``), set from it."""
    default_path: ClassVar[str] = "/v1/chat/completions"
    argument_wire_type: ClassVar[str] = "string"
    truncation_reasons: ClassVar[frozenset[str]] = frozenset()
    """The finish reasons (as on the wire) that mean the turn was cut at the token limit."""
    simulator: ClassVar[str | None] = None
    """Where ``harness sim`` finds this format's server side: a ``"module:attribute"`` path to a
    ``SimFormat`` in ``harness/servers/sim/wire*.py`` (a string: adapters import no server);
    ``None``: the simulator does not serve the format."""
    hosted_mcp: ClassVar[bool] = False
    """Whether the provider runs MCP servers itself (hosted MCP): the adapter declares
    :attr:`RequestOptions.hosted_mcp` and reads what the connector did into ``ParsedTurn.hosted``."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.family = cls.name_rules.family

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
            body, repaired = checked(body)
        except JsonProblem as exc:
            detail = f"the request body is {exc.message}; not read"
            return RequestView(findings=(deviation("request_too_deep", detail, severity="error"),))
        path, broken = clean_text(path) if isinstance(path, str) else ("", 0)
        try:
            view = self.read_body(body, path)
        except NotImplementedError:
            raise
        except Exception as exc:  # the last resort: every known fault of a body is a specific finding
            detail = f"the {self.format} request could not be read: {type(exc).__name__}: {exc}"
            finding = deviation("request_malformed", detail, severity="error", guard="Adapter.read_request")
            return RequestView(findings=(unicode_safe(finding),))
        notes = unicode_findings(repaired + broken, "the request body and path")
        if notes:
            view = dataclasses.replace(view, findings=(*notes, *view.findings))
        return unicode_safe(view)

    def read_body(self, body: dict[str, Any], path: str) -> RequestView:
        """The format's request reader behind :meth:`read_request` (each wire format overrides it)."""
        raise NotImplementedError(f"the {self.format} adapter does not read requests")

    def read_offer(self, body: Any, path: str = "") -> RequestView | None:
        """What a request offered the model (its tools and ``tool_choice``), read back quickly for
        the record of a run: :meth:`read_body` without the guards and repairs of
        :meth:`read_request` (the run has judged the request already). ``None`` when the adapter
        does not read requests or the body defeats its reader."""
        if not isinstance(body, dict):
            return RequestView()
        try:
            return self.read_body(body, path)
        except Exception:  # NotImplementedError, or a body no reader foresaw: nothing is known
            return None

    def tool_findings(self, tools: Sequence[ToolSpec]) -> list[Finding]:
        """What this provider would reject or drop in the offered tools' declarations: a name its
        rules forbid, a JSON Schema keyword or format its tool schemas do not take (info
        findings: the declaration is the user's to port, not the model's fault)."""
        return [
            Finding("wire.tool_declaration", "info", False, f"tool {tool.name!r}: {problem}")
            for tool in tools
            for problem in declaration_issues(self.family, tool.name, tool.schema_text)
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

    # -- recognising recorded traffic (harness.providers.detection) ------------

    @classmethod
    def claims_url(cls, host: str, path: str) -> bool:
        """Whether a request to ``host`` and ``path`` (no trailing ``/``) speaks this format; asked
        before the body. A subclass that claims less (a vendor's host) is asked before its base."""
        return False

    @classmethod
    def claims_payload(cls, data: dict[str, Any]) -> bool:
        """Whether one response payload (a whole body, an item of a JSON array, a stream event)
        shows this format by positive evidence: a shape of its own, never mere absence."""
        return False

    @classmethod
    def claims_bytes(cls, data: bytes) -> str | None:
        """The content type of a binary body (bytes, not text: AWS's event stream) when ``data`` is in
        this format's framing, by positive evidence; ``None`` by default (a text format)."""
        return None

    @classmethod
    def request_streams(cls, url: str | None, body: Any) -> bool:
        """Whether a recorded request asked for a stream (``"stream": true`` by default)."""
        return isinstance(body, dict) and body.get("stream") is True

    @classmethod
    def tool_names(cls, body: Any) -> list[str]:
        """The names of the tools a request body declares, read leniently (no finding: audit
        hints leak detection with them). By default ``tools[].function.name``, or ``tools[].name``
        for a tool without ``function``."""
        tools = body.get("tools") if isinstance(body, dict) else None
        named = (
            [_mapping(t.get("function")) or t for t in tools if isinstance(t, dict)]
            if isinstance(tools, list)
            else []
        )
        return [n["name"] for n in named if isinstance(n.get("name"), str)]

    # -- responses --------------------------------------------------------

    def parse(self, response: WireResponse, *, stream: bool, tools: Sequence[ToolSpec] = ()) -> ParsedTurn:
        """Parse a whole response: an error status, a JSON body, or a stream body.

        ``tools`` are the tools the request offered (native formats do not need
        them; prompted mode types text-call arguments by their schemas).

        A body shaped so badly that the accumulator cannot read it (a ``null``
        where an object belongs, a string where a list belongs) is a provider
        fault: a failed turn with a specific finding (``wire.field_wrong_type``,
        ``wire.body_too_deep``, ``wire.invalid_unicode``...), never an exception.
        Every string of the turn is valid Unicode: the body's text and every value
        decoded from it are repaired at the decode boundary, so the turn is built
        from valid strings only. A fault no parser foresaw still ends in a
        ``wire.malformed_body`` finding whose evidence names the guard.
        """
        if isinstance(response, OversizedResponse):
            return too_large(response)
        try:
            return self._checked(response, stream=stream)
        except Exception as exc:  # the last resort: every known fault of a body is a specific finding
            return malformed(self.format, response.status, exc)

    def _checked(self, response: WireResponse, *, stream: bool) -> ParsedTurn:
        """:meth:`_parse` on the body with invalid Unicode replaced (and noted)."""
        text, broken = clean_text(response.body)
        if not broken:
            return self._parse(response, stream=stream)
        turn = self._parse(dataclasses.replace(response, body=text), stream=stream)
        turn.findings.insert(
            0,
            deviation(
                "invalid_unicode",
                f"the body holds {broken} character(s) that are not valid Unicode (invalid UTF-8 "
                "bytes or lone surrogates); replaced with U+FFFD",
            ),
        )
        return turn

    def _parse(self, response: WireResponse, *, stream: bool) -> ParsedTurn:
        if response.status >= 400:
            findings: list[Finding] = []
            return ParsedTurn(
                error=error_from_body(response.status, response.body, findings), findings=findings
            )
        if stream:
            return self._from_stream(decode_stream(response.body), response.status)
        if not response.body.strip():
            return ParsedTurn(
                error=ProviderError(response.status, "empty or non-object response body"),
                findings=[deviation("empty_body", "the response body is empty")],
            )
        try:
            decoded_body = decode(response.body)
        except JsonProblem as exc:
            if exc.kind == "too_deep":
                detail = f"the HTTP {response.status} body is {exc.message}; not read"
                return ParsedTurn(
                    error=ProviderError(response.status, detail, "body_too_deep"),
                    findings=[deviation("body_too_deep", detail, severity="error")],
                )
            return ParsedTurn(
                error=ProviderError(response.status, f"response body is not JSON: {exc.message}"),
                findings=[
                    deviation("body_not_json", f"HTTP {response.status} body is not JSON: {exc.message}")
                ],
            )
        notes = unicode_findings(decoded_body.repaired, "the body")
        notes += constant_findings(decoded_body.constants, "the body")
        body = decoded_body.value
        if not isinstance(body, dict):
            detail = f"the response body is a JSON {json_type(body)}, not an object"
            return ParsedTurn(
                error=ProviderError(response.status, "empty or non-object response body"),
                findings=[*notes, deviation("body_not_object", detail, severity="error")],
            )
        embedded = embedded_error(body, response.status)
        if embedded is not None:
            return ParsedTurn(
                error=embedded,
                findings=[*notes, deviation("error_in_200_body", "an error object came back with HTTP 2xx")],
            )
        turn = self.parse_body(body)
        turn.findings[:0] = notes
        return turn

    def _from_stream(self, decoded: DecodedStream, status: int) -> ParsedTurn:
        if decoded.framing == "empty":
            return ParsedTurn(
                error=ProviderError(status, "HTTP 2xx with an empty stream body", "empty_stream"),
                findings=framing_findings(decoded, self.stream_sentinel),
            )
        turn = self.parse_stream(decoded)
        turn.findings[:0] = framing_findings(decoded, self.stream_sentinel)
        return turn

    def parse_chunks(self, chunks: Iterable[bytes], status: int = 200) -> ParsedTurn:
        """A streamed 2xx response from its bytes as they arrived, decoded incrementally
        (:class:`~harness.providers.framing.StreamReader`): the turn :meth:`parse` gives for the
        whole body, wherever the chunks were cut."""
        reader = StreamReader()
        for chunk in chunks:
            reader.feed(chunk)
        try:
            return self._from_stream(reader.close(), status)
        except Exception as exc:  # as in parse: never an exception
            return malformed(self.format, status, exc, "Adapter.parse_chunks")

    stream_sentinel: ClassVar[str | None] = "[DONE]"

    @abstractmethod
    def parse_body(self, body: dict[str, Any]) -> ParsedTurn:
        """Parse a non-streamed JSON body (through the same accumulator as streams)."""

    @abstractmethod
    def parse_stream(self, stream: DecodedStream) -> ParsedTurn:
        """Parse a decoded stream."""


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@functools.lru_cache(maxsize=4096)
def declaration_issues(family: str, name: str, parameters: str) -> tuple[str, ...]:
    """The problems of one tool declaration for a provider family (cached: every run of a
    scenario offers the same tools)."""
    from harness.providers.schemas import schema_issues

    rules = rules_for(family)
    issues = []
    if not rules.is_valid(name):
        issues.append(f"name breaks {family}'s tool name rule {rules.pattern.pattern}")
    issues += [f"parameters{problem}" for problem in schema_issues(json.loads(parameters), family)]
    return tuple(issues)


def too_large(response: OversizedResponse) -> ParsedTurn:
    """A failed turn for a body the transport stopped reading at its size limit: the endpoint's
    fault (a runaway stream, a decompression bomb), never read as a partial answer."""
    detail = (
        f"the HTTP {response.status} body is larger than {response.limit:,} bytes once decompressed "
        f"(the limit, harness.transport.send.MAX_RESPONSE_BYTES); reading stopped at {response.received:,} "
        "bytes and the turn is not read"
    )
    return ParsedTurn(
        error=ProviderError(response.status, detail, "body_too_large"),
        findings=[
            deviation(
                "body_too_large", detail, severity="error", received=response.received, limit=response.limit
            )
        ],
    )


def malformed(what: str, status: int, exc: Exception, guard: str = "Adapter.parse") -> ParsedTurn:
    """A failed turn for a response that could not be read at all: the last resort of ``guard``
    (named in the finding's evidence, so tests can tell that no specific finding caught the fault)."""
    detail = f"the {what} response is malformed and could not be read: {type(exc).__name__}: {exc}"
    turn = ParsedTurn(
        error=ProviderError(status, detail, "malformed_body"),
        findings=[deviation("malformed_body", detail, severity="error", guard=guard)],
    )
    return unicode_safe(turn)


def reached_guard(findings: Sequence[Finding]) -> bool:
    """True when one of ``findings`` comes from a last-resort guard (an unforeseen fault)."""
    return any(f.evidence is not None and "guard" in f.evidence for f in findings)


def unicode_safe(value: T) -> T:
    """``value`` (a turn, a request view, a finding) with every string valid Unicode: lone
    surrogates become U+FFFD and a ``wire.invalid_unicode`` finding says so.

    The decoders repair what they decode, so a native turn needs no net; this one is for
    what is made further on (an exception message, values a text protocol decodes from
    model text, a request body's values). It returns ``value`` itself, untouched, when
    there is nothing to repair.
    """
    fixed: Any
    fixed, count = _repaired(value, 0)
    if not count:
        return value
    note = deviation(
        "invalid_unicode",
        f"{count} string(s) of the result held lone surrogates; replaced with U+FFFD",
    )
    if isinstance(fixed, ParsedTurn):
        fixed.findings.append(note)
    elif isinstance(fixed, RequestView):
        fixed = dataclasses.replace(fixed, findings=(*fixed.findings, note))
    return cast(T, fixed)


def _repaired(value: Any, depth: int) -> tuple[Any, int]:
    """``value`` rebuilt where a string in it holds lone surrogates, and how many did."""
    if isinstance(value, str):
        if value.isascii() or SURROGATE.search(value) is None:
            return value, 0
        return SURROGATE.sub("\ufffd", value), 1
    if depth > MAX_DEPTH + 8:  # decoded values are bounded by MAX_DEPTH; the types add a few levels
        return value, 0
    if isinstance(value, dict):
        pairs = [(_repaired(k, depth + 1), _repaired(v, depth + 1)) for k, v in value.items()]
        count = sum(k[1] + v[1] for k, v in pairs)
        return ({k[0]: v[0] for k, v in pairs} if count else value), count
    if isinstance(value, list | tuple):
        items = [_repaired(item, depth + 1) for item in value]
        count = sum(n for _, n in items)
        if not count:
            return value, 0
        return (
            type(value)(item for item, _ in items) if isinstance(value, tuple) else [i for i, _ in items]
        ), count
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes: dict[str, Any] = {}
        count = 0
        for spec in dataclasses.fields(value):
            new, n = _repaired(getattr(value, spec.name), depth + 1)
            if n:
                changes[spec.name], count = new, count + n
        return (dataclasses.replace(value, **changes) if changes else value), count
    return value, 0


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
    if stream.stray_lines:
        findings.append(
            deviation(
                "sse_stray_lines",
                f"{len(stream.stray_lines)} line(s) are no SSE field (data:, event:, id:, retry: or a "
                ":comment); ignored",
                lines=stream.stray_lines[:5],
            )
        )
    if stream.undecodable:
        findings.append(
            deviation(
                "stream_payload_not_json",
                f"{len(stream.undecodable)} stream payload(s) are not JSON",
                severity="error",
                payloads=[p[:EVIDENCE] for p in stream.undecodable[:5]],
            )
        )
    if stream.too_deep:
        findings.append(
            deviation(
                "body_too_deep",
                f"{len(stream.too_deep)} stream payload(s) nest deeper than {MAX_DEPTH} levels; skipped",
                severity="error",
                payloads=stream.too_deep[:5],
            )
        )
    others = [event for event in stream.events if not isinstance(event.data, dict)]
    if others:
        kinds = sorted({json_type(event.data) for event in others})
        findings.append(
            deviation(
                "stream_event_not_object",
                f"{len(others)} stream payload(s) are JSON but not objects ({', '.join(kinds)}); skipped",
                payloads=[event.raw[:EVIDENCE] for event in others[:5]],
            )
        )
    findings += unicode_findings(stream.repaired, "the stream payloads")
    findings += constant_findings(stream.constants, "the stream payloads")
    if stream.unterminated:
        findings.append(
            deviation("sse_final_event_unterminated", "the last SSE event has no blank line after it")
        )
    if sentinel == "[DONE]" and stream.framing == "sse" and not stream.done_sentinel:
        findings.append(deviation("stream_without_done", "the SSE stream ended without data: [DONE]"))
    return findings
