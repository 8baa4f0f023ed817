"""Provider-neutral types.

Everything past an adapter speaks these types; raw provider dicts live only
inside adapters and on the recorded exchange. This module imports nothing
from the package.

They are plain dataclasses: :mod:`harness.records` serialises them once, into
the results file, and reads them back typed.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import json
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]
Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
ChoiceMode = Literal["auto", "required", "none", "named"]


def canonical(value: Any) -> str:
    """``value`` as canonical JSON text (sorted keys, Unicode kept): equal values give equal text,
    so it keys caches of schemas."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to the model: its name, description and JSON Schema of arguments.

    Example::

        city = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
        spec = harness.ToolSpec("get_weather", "Weather for a city.", city)
    """

    name: str
    description: str
    parameters: dict[str, Any]

    @functools.cached_property
    def schema_text(self) -> str:
        """``parameters`` as canonical JSON (sorted keys, Unicode kept): equal schemas give equal
        text. Kept once made: a spec is a value, every run of a scenario offers the same specs,
        and its parameters are never changed once it is made."""
        return canonical(self.parameters)


@dataclass(frozen=True)
class ToolChoice:
    """What the request asks of the model: ``auto``, ``required``, ``none`` or one named tool.

    Example::

        harness.ToolChoice.parse({"name": "get_weather"}).label()  # "named:get_weather"
    """

    mode: ChoiceMode = "auto"
    name: str | None = None

    @classmethod
    def parse(cls, value: str | dict[str, Any] | None) -> ToolChoice:
        """Read the scenario form: ``auto | required | none | {name: X}``."""
        if value is None:
            return cls("auto")
        if isinstance(value, dict):
            return cls("named", str(value["name"]))
        if value in ("auto", "required", "none"):
            return cls(value)  # type: ignore[arg-type]
        raise ValueError(f"unknown tool_choice {value!r}")

    def label(self) -> str:
        return f"named:{self.name}" if self.mode == "named" else self.mode


@dataclass
class ToolCall:
    """One tool call as the model made it.

    ``arguments`` is the parsed object (``None`` when the wire value could not
    be parsed into an object: see ``parse_error``); ``raw_arguments`` is exactly
    what the wire carried (a JSON string for OpenAI-style formats, an object
    for Ollama, Anthropic and Gemini). ``id`` is the id the harness uses;
    ``wire_id`` is the id exactly as the provider sent it (``None`` if absent,
    ``""`` if empty), so a synthesized id is one that differs from it.

    Example::

        call = record.transcript.calls[0][1]
        print(call.name, call.arguments, call.raw_arguments, call.id_synthesized)
    """

    name: str
    arguments: dict[str, Any] | None
    raw_arguments: Any = None
    id: str | None = None
    wire_id: str | None = None
    index: int = 0
    parse_error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def id_synthesized(self) -> bool:
        """True when the provider sent no usable id and the harness made one up."""
        return self.id != self.wire_id


HOSTED_APPROVALS = "hosted_approvals"
"""The :attr:`Message.extra` key of the message that answers hosted MCP approval requests:
``[{"id": <approval request id>, "approve": true}]``."""
HostedKind = Literal["call", "list_tools", "approval_request"]
Approval = Literal["never", "always"]


@dataclass(frozen=True)
class HostedServer:
    """An MCP server the request hands to the provider's own connector (hosted MCP: OpenAI
    Responses' ``mcp`` tool, Anthropic's ``mcp_servers`` + ``mcp_toolset``): the provider lists
    its tools and calls them itself; the harness runs nothing.

    ``allowed_tools`` is ``None`` for all of the server's tools; ``require_approval`` says whether
    each call waits for the client's approval (``always``) or not (``never``). ``headers`` are
    sent to the MCP server by the provider: secrets, masked like keys.

    Example::

        harness.HostedServer("codeindex", "https://mcp.example.com/mcp", ("find_symbol",))
    """

    name: str
    url: str
    allowed_tools: tuple[str, ...] | None = None
    require_approval: Approval = "never"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class HostedCall:
    """What a provider's MCP connector did in one turn, as it reported it: a tool listing
    (``list_tools``: the names in ``tools``), a call it ran (``call``: ``name``, ``arguments``,
    its ``output`` or ``error``) or a call waiting for the client's approval (``approval_request``).
    Hosted calls are never run by the harness: they sit apart from :attr:`ParsedTurn.tool_calls`.
    ``approval`` is, for a call, the id of the approval request it answers (``None``: none named).

    Example::

        for turn in record.transcript.turns:
            print([(h.kind, h.server, h.name, h.error) for h in turn.hosted])
    """

    kind: HostedKind
    server: str
    name: str = ""
    arguments: dict[str, Any] | None = None
    raw_arguments: Any = None
    id: str | None = None
    output: str | None = None
    error: str | None = None
    tools: list[str] = field(default_factory=list)
    approval: str | None = None


ResultForm = Literal["text", "parts", "json"]


@dataclass(frozen=True)
class Part:
    """One part of a content list, as a seeded history writes it: text, or an image (its media
    type and base64 data). Each adapter writes parts in its own wire shape.

    Example::

        harness.Part("image", media_type="image/png", data="iVBORw0KGgo...")
    """

    kind: Literal["text", "image"]
    text: str = ""
    media_type: str | None = None
    data: str | None = None


@dataclass
class ToolResult:
    """What a tool returned (or the error it raised), to be sent back to the model.

    ``content`` is always the result as text. ``form`` says how a seeded history gives it:
    ``text`` (a string), ``parts`` (the list in ``parts``: text and images; ``content`` holds
    the texts joined) or ``json`` (``content`` is the JSON text of a value, sent as structured
    data where the wire has a place for it).

    Example::

        for execution in record.transcript.executions:
            print(execution.call.name, execution.result.is_error, execution.result.content)
    """

    call_id: str | None
    name: str
    content: str
    is_error: bool = False
    form: ResultForm = "text"
    parts: list[Part] = field(default_factory=list)

    def value(self) -> Any:
        """The JSON value of a ``json`` result (its text parsed), else the text."""
        return json.loads(self.content) if self.form == "json" else self.content


@dataclass
class Message:
    """One conversation message in provider-neutral form.

    ``extra`` carries provider data that must be replayed unchanged on the next
    request of the same wire format (Anthropic thinking blocks, reasoning text).
    ``parts``, when not empty, asks for the content as a list of parts (a seeded history's
    ``content: [{text: ...}]``); ``content`` then holds their texts joined.

    Example::

        harness.Message("user", "What is the weather in Paris?")
    """

    role: Role
    content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_result: ToolResult | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    parts: list[Part] = field(default_factory=list)


@dataclass
class Usage:
    """Token counts as the provider reported them (``None`` where it reported nothing).

    Example::

        print(record.usage.input_tokens, record.usage.output_tokens, record.usage.total)
    """

    input_tokens: int | None = None
    output_tokens: int | None = None

    @property
    def total(self) -> int | None:
        if self.input_tokens is None and self.output_tokens is None:
            return None
        return (self.input_tokens or 0) + (self.output_tokens or 0)


@dataclass
class ProviderError:
    """An error the provider returned: HTTP status (or the status embedded in a
    stream error), its error code and message, and anything else useful
    (Groq's ``failed_generation``, OpenRouter's upstream ``raw``).

    Example::

        errors = [e.parsed.error for e in record.transcript.exchanges if e.parsed.error]
        print([(e.status, e.code, e.message) for e in errors])
    """

    status: int
    message: str
    code: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def refused_request(self) -> bool:
        """The provider refused the request as sent (a 4xx other than a key refused, a timeout or a
        rate limit): the fault of whoever wrote the request, not of the endpoint."""
        return 400 <= self.status < 500 and self.status not in (401, 403, 407, 408, 429)


@dataclass(frozen=True)
class Finding:
    """One observation of a check: ``passed`` or not, how much it matters, why.

    ``evidence`` holds what a user needs to see it for themselves: a deepdiff,
    the jsonschema errors, or the wire request and response. A finding is a
    value: :meth:`at` and :meth:`as_check` give changed copies.

    Example::

        failed = [f for f in record.findings() if not f.passed]
        print([(f.check_id, f.severity, f.detail, f.turn_index) for f in failed])
    """

    check_id: str
    severity: Severity
    passed: bool
    detail: str
    turn_index: int | None = None
    evidence: dict[str, Any] | None = None

    def at(self, turn_index: int | None) -> Finding:
        """This finding, pointing at model turn ``turn_index``."""
        if turn_index == self.turn_index:
            return self
        return _changed(self, "turn_index", turn_index)

    def as_check(self, check_id: str) -> Finding:
        """This finding under ``check_id`` (every check's findings pass through here)."""
        if check_id == self.check_id:
            return self
        return _changed(self, "check_id", check_id)


def _changed(finding: Finding, name: str, value: Any) -> Finding:
    """A copy of ``finding`` with one field changed: its fields copied as they are, without running
    the frozen dataclass's ``__init__`` again (half the cost; ``dataclasses.replace`` costs four
    times as much)."""
    made = object.__new__(Finding)
    fields = made.__dict__
    fields.update(finding.__dict__)
    fields[name] = value
    return made


def deviation(code: str, detail: str, *, severity: Severity = "warning", **evidence: Any) -> Finding:
    """A wire deviation noticed by an adapter (always a failed finding, id ``wire.<code>``)."""
    return Finding(f"wire.{code}", severity, False, detail, evidence=evidence or None)


@dataclass
class ParsedTurn:
    """One model response, parsed: text, tool calls, finish reason, usage,
    the provider error if any, and the deviations the adapter noticed.

    Example::

        for exchange in record.transcript.exchanges:
            turn = exchange.parsed
            print(turn.text, [c.name for c in turn.tool_calls], turn.finish_reason, turn.findings)
    """

    text: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage | None = None
    error: ProviderError | None = None
    findings: list[Finding] = field(default_factory=list)
    reasoning: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    hosted: list[HostedCall] = field(default_factory=list)  # what the provider's MCP connector did

    def as_message(self) -> Message:
        """The assistant message to append to the conversation."""
        return Message("assistant", self.text, list(self.tool_calls), extra=dict(self.extra))


@dataclass
class WireRequest:
    """A request an adapter built: path relative to the endpoint's base URL,
    JSON body, extra non-secret headers, and findings about the build itself
    (an unsupported ``tool_choice``, a quirk the endpoint profile applied)."""

    path: str
    body: dict[str, Any]
    stream: bool = False
    headers: dict[str, str] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    method: str = "POST"


BINARY_TYPES = frozenset({"application/vnd.amazon.eventstream"})
"""Content types whose body is bytes, not text (AWS's binary event stream): a :class:`WireResponse`
carries such a body as the base64 of its bytes, so transcripts, results files and reports keep text."""


def is_binary(content_type: str) -> bool:
    """Whether a body of ``content_type`` is bytes (:data:`BINARY_TYPES`), carried as base64 text."""
    return content_type.partition(";")[0].strip().lower() in BINARY_TYPES


@dataclass
class WireResponse:
    """An HTTP response as received (or replayed): status, headers, body text. A binary body (a
    content type of :data:`BINARY_TYPES`) is the base64 of its bytes (:meth:`text_of`)."""

    status: int
    body: str
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def content_type(self) -> str:
        for key, value in self.headers.items():
            if key.lower() == "content-type":
                return value
        return ""

    @property
    def binary(self) -> bool:
        """Whether :attr:`body` is the base64 of a binary body."""
        return is_binary(self.content_type)

    @staticmethod
    def text_of(content: bytes, content_type: str) -> str:
        """A body's bytes as :attr:`body` holds them: the base64 of a binary body, else its UTF-8
        text (invalid bytes replaced with U+FFFD)."""
        if is_binary(content_type):
            return base64.b64encode(content).decode("ascii")
        return content.decode("utf-8", errors="replace")


class OversizedResponse(WireResponse):
    """A response whose body passed the size the transport reads: ``body`` holds its first bytes
    only, ``received`` the bytes read (decompressed) before reading stopped, past ``limit``. The
    adapters report it (``wire.body_too_large``); a results file keeps it as a plain
    :class:`WireResponse` with the first bytes."""

    def __init__(self, status: int, body: str, headers: dict[str, str], received: int, limit: int):
        super().__init__(status, body, headers)
        self.received, self.limit = received, limit


@dataclass(frozen=True)
class SentRequest:
    """A request as it went on the wire, as transcripts keep it: full URL and headers with
    secrets masked, JSON body."""

    method: str
    url: str
    headers: dict[str, str]
    body: Any


@dataclass(frozen=True)
class Attempt:
    """One try of a request: the HTTP status (``None`` when no response came), the error when
    there was no usable response, how long it took, and how long the harness then waited
    before trying again."""

    status: int | None
    error: str | None = None
    elapsed_ms: float | None = None
    waited_s: float = 0.0


@dataclass
class Exchange:
    """One request/response round trip with its parsed turn (``response`` is ``None`` when
    no HTTP response came back at all); ``attempts`` lists every try when there was more than
    one."""

    turn: int
    request: SentRequest
    response: WireResponse | None
    parsed: ParsedTurn
    elapsed_ms: float | None = None
    attempts: list[Attempt] = field(default_factory=list)


@dataclass
class MCPAnswer:
    """What an MCP server answered one ``tools/call``, beside the text the model was sent: the
    ``isError`` flag, the ``structuredContent`` (``structured`` says whether the result carried
    one: ``content`` may be ``None`` for a JSON null), or the JSON-RPC error code of a call
    answered with a protocol error (``error_code``; ``None`` for a result or a call that got no
    answer at all), and how many progress notifications the server sent before answering, with
    their values in order (``progress_values``: empty when the recording kept only the count).
    ``serialized`` is false when a structured result came without its JSON in a text block, which
    a client that reads only ``content`` needs."""

    server: str
    tool: str
    is_error: bool = False
    structured: bool = False
    content: Any = None
    error_code: int | None = None
    progress: int = 0
    progress_values: tuple[float, ...] = ()
    serialized: bool = True


@dataclass
class MCPToolInfo:
    """What an MCP server listed about one tool beyond its input schema: the ``outputSchema`` its
    structured results must conform to, and its ``annotations`` (``readOnlyHint``,
    ``destructiveHint``, ``idempotentHint``, ``openWorldHint``, ``title``), both as listed."""

    server: str
    tool: str
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None


@dataclass
class ToolExecution:
    """One tool call executed by the harness, with its result (and, for an MCP tool, what its
    server answered: :class:`MCPAnswer`)."""

    turn: int
    call: ToolCall
    result: ToolResult
    elapsed_ms: float = 0.0
    source: str = "builtin"
    mcp: MCPAnswer | None = None


StopReason = Literal["final", "max_turns", "loop", "provider_error", "transport_error", "harness_error"]


@dataclass
class Transcript:
    """Everything that happened in one run of one scenario against one target.

    Example::

        transcript = record.transcript
        print(transcript.stop_reason, transcript.final_text, [c.name for _, c in transcript.calls])
        for exchange in transcript.exchanges:
            print(exchange.request.url, exchange.response and exchange.response.status)
    """

    target: str
    scenario_id: str
    repeat: int = 0
    tools: list[ToolSpec] = field(default_factory=list)
    exchanges: list[Exchange] = field(default_factory=list)
    executions: list[ToolExecution] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    stop_reason: StopReason = "final"
    findings: list[Finding] = field(default_factory=list)
    elapsed_ms: float | None = None
    tool_names: dict[str, str] = field(default_factory=dict)
    agent: str | None = None  # the user's agent under test, when not the harness's own loop
    endpoint: dict[str, Any] = field(default_factory=dict)  # what the server said about itself
    phases: list[int] = field(default_factory=list)  # the turn each phase starts at (follow-ups)
    mcp_tools: dict[str, MCPToolInfo] = field(default_factory=dict)  # scenario name -> as listed

    def phase(self, index: int) -> Transcript | None:
        """What phase ``index`` of the conversation holds (the opening request is phase 0, each
        follow-up starts the next): its exchanges, tool runs and findings; None when the run
        ended before it. Turn numbers stay those of the whole run."""
        if len(self.phases) <= 1 and index == 0:
            return self
        if index >= len(self.phases):
            return None
        start = self.phases[index]
        end = self.phases[index + 1] if index + 1 < len(self.phases) else None

        def inside(turn: int | None) -> bool:
            if turn is None:  # run-wide (the tools offered): the opening's
                return index == 0
            return turn >= start and (end is None or turn < end)

        return dataclasses.replace(
            self,
            exchanges=[e for e in self.exchanges if inside(e.turn)],
            executions=[e for e in self.executions if inside(e.turn)],
            findings=[f for f in self.findings if inside(f.turn_index)],
            stop_reason=self.stop_reason if end is None else "final",
            phases=[],
        )

    def logical(self, name: str) -> str:
        """The name a scenario uses for a tool the model saw under ``name`` (MCP tools are
        offered under provider-safe names: ``search.files`` may be ``..._search_files``)."""
        return self.tool_names.get(name, name)

    @property
    def turns(self) -> list[ParsedTurn]:
        return [exchange.parsed for exchange in self.exchanges]

    @property
    def calls(self) -> list[tuple[int, ToolCall]]:
        """Every tool call of the run with the index of the model turn that made it."""
        return [(e.turn, call) for e in self.exchanges for call in e.parsed.tool_calls]

    @property
    def hosted_calls(self) -> list[tuple[int, HostedCall]]:
        """Every call the provider's MCP connector ran (hosted MCP), with its model turn."""
        return [(e.turn, h) for e in self.exchanges for h in e.parsed.hosted if h.kind == "call"]

    @property
    def final_text(self) -> str | None:
        """The text of the last model turn, if it made no call."""
        if self.exchanges and not self.exchanges[-1].parsed.tool_calls:
            return self.exchanges[-1].parsed.text
        return None

    def usage(self) -> Usage:
        total = Usage()
        for turn in self.turns:
            if turn.usage is None:
                continue
            if turn.usage.input_tokens is not None:
                total.input_tokens = (total.input_tokens or 0) + turn.usage.input_tokens
            if turn.usage.output_tokens is not None:
                total.output_tokens = (total.output_tokens or 0) + turn.usage.output_tokens
        return total
