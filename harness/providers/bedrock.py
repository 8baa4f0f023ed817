"""AWS Bedrock Converse (``bedrock-converse``).

Requests go to ``POST /model/{modelId}/converse`` (``/converse-stream`` to stream), the model id
percent-encoded in the path [B1]: top-level ``system`` text blocks, ``messages`` of content
blocks, ``toolConfig.tools[].toolSpec {name, description, inputSchema: {json}}`` and
``toolChoice`` ``{auto: {}}`` / ``{any: {}}`` / ``{tool: {name}}``, ``inferenceConfig``. There is
no ``none`` choice [B5]: it is reported and not sent, never dropped silently. Assistant turns go
back as ``text`` and ``toolUse {toolUseId, name, input}`` blocks (the raw blocks of the parse when
they hold reasoning, which Claude needs replayed); every run of tool results is ONE user message
of ``toolResult {toolUseId, content: [{text}], status}`` blocks, the user's words after them;
roles alternate, so consecutive user messages share one message [B1]. Tool names must match
``[a-zA-Z0-9_-]{1,64}`` [B1][B6] (a dotted MCP name in a history moved here is refused), ids
``[a-zA-Z0-9_.:-]{1,64}`` (rewritten deterministically otherwise).

Responses: a whole ``ConverseResponse`` (``output.message``, ``stopReason``, ``usage``), or the
binary AWS event stream (:mod:`harness.providers._bedrock_eventstream`, CRC-checked) whose
messages are ``messageStart``, ``contentBlockStart`` (``start.toolUse``), ``contentBlockDelta``
(``delta.text``, ``delta.toolUse.input`` as JSON text fragments, ``delta.reasoningContent``),
``contentBlockStop``, ``messageStop`` (``stopReason``), ``metadata`` (usage) and exceptions [B1][B3].
A stream written as the AWS SDKs print it (one ``{"<event>": {...}}`` object a line) is read
too. All of them fold into one :class:`_Accumulator`. A request another client sent is read back
by :mod:`harness.providers._bedrock_request`.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote, urlsplit

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
    WireResponse,
    deviation,
)
from harness.providers._bedrock_eventstream import (
    Decoded,
    EventStreamReader,
    decode,
    starts_eventstream,
)
from harness.providers._bedrock_request import (
    ID_RULE,
    SERVER_TOOL,
    converse_messages,
    converse_tool,
    converse_tool_choice,
    info,
    read_converse_request,
)
from harness.providers._calls import (
    Notes,
    id_findings,
    id_part,
    join_text,
    make_call,
)
from harness.providers._json import JsonProblem, clean_text, unicode_findings
from harness.providers._json import decode as decode_json
from harness.providers.adapter import Adapter, RequestOptions, RequestView, malformed
from harness.providers.framing import EVIDENCE, DecodedStream
from harness.providers.rules import NameRules

EVENTSTREAM = "application/vnd.amazon.eventstream"
PATH = re.compile(r"/model/([^/]+)/(converse|converse-stream)$")
STREAM_EVENTS = frozenset(
    {"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"}
)
EXCEPTIONS = frozenset(
    {
        "internalServerException",
        "modelStreamErrorException",
        "validationException",
        "throttlingException",
        "serviceUnavailableException",
    }
)
"""The exceptions a ConverseStream may carry [B1]."""
NEUTRAL = ("text", "toolUse")
TOOL_USE_KEYS = frozenset({"toolUseId", "name", "input", "type"})
BLOCK_STRINGS = ("toolUseId", "name", "type", "status")
FUNCTIONS_FORM = re.compile(r"^functions\.[^:]+:\d+$")
"""Kimi K2's call ids (``functions.get_weather:0``)."""
ERROR_WORDS = re.compile(
    r"^(The model returned the following errors: |\d+ validation errors? detected: Value at '"
    r"(messages|toolConfig|system|inferenceConfig)|The provided model identifier is invalid)"
    r"|\b(toolUse|toolResult|ContentBlock)\b|\breasoning content\b"
)
"""Bedrock's own wording in the ``{"message": ...}`` error bodies of the real recorded cases: the
runtime's wrapper of a model's errors, its request validation naming Converse fields, its content
block rules. A body of that shape from another vendor (Cohere's) says none of it."""


class BedrockConverseAdapter(Adapter):
    """AWS Bedrock's Converse and ConverseStream API."""

    format = "bedrock-converse"
    truncation_reasons = frozenset({"max_tokens", "model_context_window_exceeded"})  # [B1]
    simulator = "harness.servers.sim.wire_bedrock:BEDROCK"
    name_rules = NameRules("bedrock", "a-zA-Z0-9_-", 64, source="Bedrock Runtime ToolName pattern [B1]")
    """``[a-zA-Z0-9_-]{1,64}`` for declared tools and for the names in a history alike [B1][B6]."""
    default_path = "/model/{model}/converse"
    argument_wire_type = "object"
    stream_sentinel = None

    @classmethod
    def claims_url(cls, host: str, path: str) -> bool:
        return PATH.search(path) is not None

    @classmethod
    def claims_payload(cls, data: dict[str, Any]) -> bool:
        """A ``ConverseResponse`` (``output`` and ``stopReason``), a stream event as the AWS SDKs print
        it (``{"contentBlockDelta": {...}}``), or an error body in Bedrock's own words."""
        if isinstance(data.get("output"), dict) and "stopReason" in data:
            return True
        if len(data) == 1:
            [(name, value)] = data.items()
            if name in STREAM_EVENTS - {"metadata"} or name in EXCEPTIONS:
                return isinstance(value, dict)
            if name == "metadata":
                return isinstance(value, dict) and ("usage" in value or "metrics" in value)
        message = data.get("message")
        return (
            isinstance(message, str)
            and set(data) <= {"message", "__type", "code"}
            and ERROR_WORDS.search(message) is not None
        )

    @classmethod
    def claims_bytes(cls, data: bytes) -> str | None:
        """AWS's event stream, by a first prelude whose CRC holds."""
        return EVENTSTREAM if starts_eventstream(data) else None

    @classmethod
    def request_streams(cls, url: str | None, body: Any) -> bool:
        """The streaming mode is in the path (``/converse-stream``)."""
        return urlsplit(url or "").path.rstrip("/").endswith("/converse-stream")

    @classmethod
    def tool_names(cls, body: Any) -> list[str]:
        """``toolConfig.tools[].toolSpec.name``."""
        config = body.get("toolConfig") if isinstance(body, dict) else None
        tools = config.get("tools") if isinstance(config, dict) else None
        specs = [t.get("toolSpec") for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
        return [s["name"] for s in specs if isinstance(s, dict) and isinstance(s.get("name"), str)]

    # -- requests -----------------------------------------------------------

    def build_request(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        tool_choice: ToolChoice,
        options: RequestOptions,
    ) -> WireRequest:
        """The Converse request; the model and the streaming mode are in the path."""
        findings: list[Finding] = []
        model = quote(options.model, safe="")
        path = f"/model/{model}/converse-stream" if options.stream else f"/model/{model}/converse"
        body: dict[str, Any] = {"messages": converse_messages(messages, self.name_rules, findings)}
        system = [{"text": m.content} for m in messages if m.role == "system" and m.content]
        if system:
            body["system"] = system
        if tools:
            config: dict[str, Any] = {"tools": [converse_tool(t) for t in tools]}
            choice = converse_tool_choice(tool_choice, findings)
            if choice is not None:
                config["toolChoice"] = choice
                findings.extend(self.choice_findings(tool_choice))
            body["toolConfig"] = config
            if options.parallel_tool_calls is not None:
                findings.append(
                    info(
                        "parallel_tool_calls_unsupported",
                        "Converse has no parallel tool call control; not sent",
                    )
                )
        inference = {
            key: value
            for key, value in (("maxTokens", options.max_tokens), ("temperature", options.temperature))
            if value is not None
        }
        if inference:
            body["inferenceConfig"] = inference
        if options.seed is not None:
            findings.append(
                info(
                    "seed_unsupported",
                    "Converse has no seed field (a model's goes in additionalModelRequestFields); not sent",
                )
            )
        body.update(options.extra)
        headers = {"accept": EVENTSTREAM} if options.stream else {}
        return WireRequest(path, body, options.stream, headers, findings)

    def read_body(self, body: dict[str, Any], path: str) -> RequestView:
        """A Converse request read back (the inverse of :meth:`build_request`)."""
        match = PATH.search(urlsplit(path).path.rstrip("/"))
        model = unquote(match.group(1)) if match else None
        stream = match is not None and match.group(2) == "converse-stream"
        return read_converse_request(body, model, stream, self.name_rules)

    # -- responses ----------------------------------------------------------

    def _parse(self, response: WireResponse, *, stream: bool) -> ParsedTurn:
        """An error (with the type AWS sends in a header), the binary event stream, or the rest as
        every format: a whole JSON body, or a text stream."""
        if response.status >= 400:
            turn = super()._parse(response, stream=stream)
            if turn.error is not None:
                _error_type(turn, response)
            return turn
        if response.binary:
            try:
                data = base64.b64decode(response.body, validate=True)
            except (binascii.Error, ValueError) as exc:
                detail = f"the {EVENTSTREAM} body is not the base64 of its bytes: {exc}"
                return ParsedTurn(
                    error=ProviderError(response.status, detail, "malformed_body"),
                    findings=[deviation("body_not_base64", detail, severity="error")],
                )
            return self._from_eventstream(decode(data), response.status)
        return super()._parse(response, stream=stream)

    def parse_chunks(self, chunks: Iterable[bytes], status: int = 200) -> ParsedTurn:
        """A stream from its bytes as they arrived: AWS's event stream (read by
        :class:`~harness.providers._bedrock_eventstream.EventStreamReader`) when its first byte is
        below any text's, else a text stream (the SDKs' printed events) as every format reads one."""
        pieces: Iterator[bytes] = iter(chunks)
        first = next((piece for piece in pieces if piece), b"")
        if not first or first[0] >= 0x20 or first[0] in b"\t\n\r":
            return super().parse_chunks(itertools.chain([first], pieces), status)
        reader = EventStreamReader()
        for piece in itertools.chain([first], pieces):
            reader.feed(piece)
        try:
            return self._from_eventstream(reader.close(), status)
        except Exception as exc:  # as in parse: never an exception
            return malformed(self.format, status, exc, "BedrockConverseAdapter.parse_chunks")

    def _from_eventstream(self, decoded: Decoded, status: int) -> ParsedTurn:
        """The turn of an event stream: its messages folded, every framing problem a finding."""
        acc = _Accumulator()
        for problem in decoded.problems:
            acc.note_each(
                f"eventstream_{problem.kind}",
                problem.describe(),
                "the event stream's framing is broken",
                severity="error",
            )
        for number, item in enumerate(decoded.messages):
            acc.feed_frame(item.headers, item.payload, f"messages[{number}]")
        if not decoded.messages and not decoded.problems:
            acc.note(deviation("empty_stream", "HTTP 2xx with an empty event stream", severity="error"))
            acc.error = ProviderError(status, "HTTP 2xx with an empty stream body", "empty_stream")
        elif decoded.problems and acc.error is None:  # what a client reads of it cannot be trusted
            first = decoded.problems[0]
            detail = f"the event stream is broken ({len(decoded.problems)} problem(s)): {first.describe()}"
            acc.error = ProviderError(status, detail, "eventstream_broken")
        return acc.finish(streamed=True)

    def parse_body(self, body: dict[str, Any]) -> ParsedTurn:
        """A whole ``ConverseResponse``, or the ``{"message": ...}`` error a 2xx may carry."""
        acc = _Accumulator()
        if "output" not in body and isinstance(body.get("message"), str):
            acc.note(deviation("error_in_200_body", "an error object came back with HTTP 2xx"))
            acc.error = ProviderError(200, body["message"], _body_error_type(body))
            return acc.finish()
        acc.feed_response(body)
        return acc.finish()

    def parse_stream(self, stream: DecodedStream) -> ParsedTurn:
        """A text stream of events as the AWS SDKs print them (``{"messageStart": {...}}``)."""
        acc = _Accumulator()
        for number, event in enumerate(stream.events):
            if isinstance(event.data, dict):
                acc.feed_printed(event.data, f"events[{number}]")
        return acc.finish(streamed=bool(stream.events))


def _body_error_type(body: dict[str, Any]) -> str | None:
    """The error type a body names (``__type``, maybe ``namespace#Type``, or ``code``), if any."""
    for key in ("__type", "code"):
        value = body.get(key)
        if isinstance(value, str) and value:
            return value.rpartition("#")[2]
    return None


def _error_type(turn: ParsedTurn, response: WireResponse) -> None:
    """AWS puts an error's type in the ``x-amzn-ErrorType`` header, not in the body [B2]: kept in the
    error's detail, and noted when the body names none."""
    assert turn.error is not None
    header = next((v for k, v in response.headers.items() if k.lower() == "x-amzn-errortype"), "")
    kind = header.partition(":")[0].strip()
    if kind:
        turn.error.detail["error_type"] = kind
    try:
        body = decode_json(response.body).value
    except JsonProblem:
        return
    if isinstance(body, dict) and turn.error.code is None:
        turn.error.code = _body_error_type(body)
        if isinstance(body.get("Message"), str) and "message" not in body:
            turn.error.message = body["Message"]
    if turn.error.code is None:
        where = f"header says {kind}" if kind else "header is absent here"
        turn.findings.append(
            info(
                "error_type_only_in_header",
                f"the HTTP {response.status} body names no error type; AWS sends it in the x-amzn-ErrorType "
                f"header (the {where})",
            )
        )


@dataclass
class _Block:
    """One content block as it is assembled: its kind (``text``, ``toolUse``, ``reasoningContent``,
    ``toolResult``, ...), the start or whole block, and the deltas that followed."""

    kind: str
    start: dict[str, Any] = field(default_factory=dict)
    text: list[str] = field(default_factory=list)
    input: list[str] = field(default_factory=list)
    signature: list[str] = field(default_factory=list)
    redacted: list[str] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)
    whole: bool = False  # from a whole response (``start`` is the whole block)

    def block(self, call: ToolCall | None) -> dict[str, Any]:
        """The block as a whole response holds it (for replay)."""
        if self.whole:
            return {self.kind: self.start}
        if self.kind == "text":
            return {"text": "".join(self.text)}
        if self.kind == "toolUse":
            arguments = call.arguments if call is not None else None
            return {"toolUse": {**self.start, "input": arguments if arguments is not None else {}}}
        if self.kind == "reasoningContent":
            if self.redacted:
                return {"reasoningContent": {"redactedContent": "".join(self.redacted)}}
            reasoning = {"text": "".join(self.text)}
            if self.signature:
                reasoning["signature"] = "".join(self.signature)
            return {"reasoningContent": {"reasoningText": reasoning}}
        if self.kind == "toolResult":
            return {"toolResult": {**self.start, "content": self.results}}
        return {self.kind: self.start}


class _Accumulator(Notes):
    """Folds a whole response, or the events of a stream (framed or printed), into a turn: blocks
    by ``contentBlockIndex``, ``toolUse`` input fragments joined per block, the stop reason kept."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: dict[int, _Block] = {}
        self.stop_reason: str | None = None
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None
        self.error: ProviderError | None = None
        self.stopped = False

    # -- a whole response ---------------------------------------------------

    def feed_response(self, body: dict[str, Any]) -> None:
        output = self.obj("output", body.get("output")) or {}
        message = self.obj("output.message", output.get("message")) or {}
        self.role("output.message.role", message.get("role"))
        for where, block in self.objects("output.message.content", message.get("content")):
            self.whole_block(len(self.blocks), block, where)
        self.stop_reason = self.string("stopReason", body.get("stopReason"))
        self.read_usage("usage", body.get("usage"))

    def whole_block(self, index: int, block: dict[str, Any], where: str) -> None:
        """One content block of a whole message: a union with one member."""
        kind = next(iter(block), "")
        value = block.get(kind)
        if kind == "text":
            self.blocks[index] = _Block("text", text=[self.string(f"{where}.text", value) or ""])
            return
        if not isinstance(value, dict):
            self.wrong_type(f"{where}.{kind}", value, "object", "block skipped")
            return
        self.blocks[index] = _Block(kind, self.fields(f"{where}.{kind}", value), whole=True)
        if kind == "reasoningContent":
            text = value.get("reasoningText")
            self.blocks[index].text.append(str(text.get("text") or "") if isinstance(text, dict) else "")
            self.note_reasoning()
        elif kind not in ("toolUse", "toolResult"):
            self.note_block("content_block", kind, "content block")

    # -- a stream -----------------------------------------------------------

    def feed_frame(self, headers: dict[str, Any], payload: bytes, where: str) -> None:
        """One event stream message: an event, an exception or an error, by ``:message-type``."""
        kind = headers.get(":message-type")
        if kind == "error":
            code, text = headers.get(":error-code"), headers.get(":error-message")
            self.stream_error(str(code) if code else None, str(text or code or "an error message"))
            return
        data = self.payload(payload, where)
        if kind == "exception":
            name = headers.get(":exception-type")
            text = data.get("message") if isinstance(data, dict) else None
            self.stream_error(str(name) if name else None, str(text or name or "an exception message"))
        elif kind == "event":
            name = headers.get(":event-type")
            if not isinstance(name, str) or not isinstance(data, dict):
                self.note_each(
                    "stream_event_malformed", f"{where} ({name!r})", "events without a name or object"
                )
                return
            self.feed(name, data, where)
        else:
            self.note_each(
                "eventstream_message_type", f"{where}: {kind!r}", "messages of no known :message-type"
            )

    def payload(self, payload: bytes, where: str) -> Any:
        """A message's payload as JSON (``None`` when it is not, which is noted)."""
        text, broken = clean_text(payload.decode("utf-8", errors="surrogateescape"))
        for finding in unicode_findings(broken, f"the payload of {where}"):
            self.note(finding)
        if not text:
            return {}
        try:
            decoded = decode_json(text)
        except JsonProblem as exc:
            if exc.kind == "too_deep":
                detail = f"the payload of {where} is {exc.message}; skipped"
                self.note_each("body_too_deep", detail, "payloads nested too deep", severity="error")
                return None
            self.note_each(
                "stream_payload_not_json", f"{where}: {exc.message}: {text[:EVIDENCE]!r}", "payloads"
            )
            return None
        for finding in unicode_findings(decoded.repaired, f"the payload of {where}"):
            self.note(finding)
        return decoded.value

    def feed_printed(self, data: dict[str, Any], where: str) -> None:
        """One event as the AWS SDKs print it: ``{"<event name>": {...}}``."""
        if len(data) != 1:
            self.note_each("stream_event_malformed", where, "events that are not {name: payload}")
            return
        [(name, payload)] = data.items()
        if name in EXCEPTIONS:
            text = payload.get("message") if isinstance(payload, dict) else None
            self.stream_error(name, str(text or name))
        elif isinstance(payload, dict):
            self.feed(name, payload, f"{where}.{name}")
        else:
            self.wrong_type(f"{where}.{name}", payload, "object", "event skipped")

    def stream_error(self, code: str | None, message: str) -> None:
        self.note(deviation("error_event_in_stream", "an exception arrived in the 2xx stream"))
        self.error = ProviderError(200, message, code)

    def feed(self, name: str, data: dict[str, Any], where: str) -> None:
        """Fold one stream event (its payload: ``{"contentBlockIndex": 0, "delta": {...}}``)."""
        if "p" in data:
            self.note(
                info(
                    "eventstream_padding_field_p",
                    "stream events carry a 'p' field of padding (AWS pads payloads against length side "
                    "channels); ignored",
                )
            )
        if name == "messageStart":
            self.role(f"{where}.role", data.get("role"))
        elif name == "contentBlockStart":
            self.start_block(data, where)
        elif name == "contentBlockDelta":
            self.feed_delta(data, where)
        elif name == "messageStop":
            self.stopped = True
            self.stop_reason = self.string(f"{where}.stopReason", data.get("stopReason")) or self.stop_reason
        elif name == "metadata":
            self.read_usage(f"{where}.usage", data.get("usage"))
        elif name != "contentBlockStop":
            self.note(info("unknown_stream_event", f"unknown stream event {name!r} ignored"))

    def index(self, data: dict[str, Any], where: str) -> int | None:
        index = self.integer(f"{where}.contentBlockIndex", data.get("contentBlockIndex"))
        if index is None or index < 0:
            self.note_each("content_block_index_missing", where, "events without a contentBlockIndex")
            return None
        return index

    def start_block(self, data: dict[str, Any], where: str) -> None:
        index = self.index(data, where)
        start = self.obj(f"{where}.start", data.get("start")) or {}
        if index is None:
            return
        if index in self.blocks:
            self.note_each("content_block_index_reused", f"{where}: {index}", "blocks started twice")
        kind = next(iter(start), "")
        value = self.obj(f"{where}.start.{kind}", start.get(kind)) or {}
        self.blocks[index] = _Block(kind, self.fields(f"{where}.start.{kind}", value))
        if kind != "toolUse":
            self.note_block("content_block_start", kind, "contentBlockStart")

    def feed_delta(self, data: dict[str, Any], where: str) -> None:
        index = self.index(data, where)
        delta = self.obj(f"{where}.delta", data.get("delta")) or {}
        if index is None:
            return
        kind = next(iter(delta), "")
        value = delta.get(kind)
        block = self.blocks.get(index)
        if block is None:  # text and reasoning come without a contentBlockStart
            if kind == "toolUse":
                self.note(
                    deviation(
                        "tool_input_delta_without_start",
                        f"a toolUse input delta for block {index}, which was never started; dropped",
                    )
                )
                return
            block = self.blocks[index] = _Block(kind)
        if kind == "text":
            text = self.string(f"{where}.delta.text", value) or ""
            if not text:
                self.note(info("empty_text_delta", 'a text delta with text "" arrived'))
            block.text.append(text)
        elif kind == "toolUse":
            part = self.obj(f"{where}.delta.toolUse", value) or {}
            block.input.append(self.string(f"{where}.delta.toolUse.input", part.get("input")) or "")
        elif kind == "reasoningContent":
            part = self.obj(f"{where}.delta.reasoningContent", value) or {}
            block.text.append(self.string(f"{where}.delta.reasoningContent.text", part.get("text")) or "")
            block.signature.append(
                self.string(f"{where}.delta.reasoningContent.signature", part.get("signature")) or ""
            )
            redacted = part.get("redactedContent")
            if isinstance(redacted, str):
                block.redacted.append(redacted)
            self.note_reasoning()
        elif kind == "toolResult":
            block.results.extend(self.array(f"{where}.delta.toolResult", value))
            self.note_block("content_block_delta", kind, "contentBlockDelta")
        else:
            self.note_block("content_block_delta", kind, "contentBlockDelta")
        if kind in (*NEUTRAL, "reasoningContent") and block.kind != kind:
            self.note(deviation("delta_type_mismatch", f"a {kind} delta for a {block.kind} block"))

    # -- both -----------------------------------------------------------------

    def fields(self, where: str, block: dict[str, Any]) -> dict[str, Any]:
        """A block's members, its string fields of another type noted and dropped."""
        kept = dict(block)
        for key in BLOCK_STRINGS:
            if kept.get(key) is not None and not isinstance(kept[key], str):
                self.wrong_type(f"{where}.{key}", kept.pop(key), "string", "dropped")
        return kept

    def role(self, where: str, value: Any) -> None:
        if value != "assistant":
            self.note(deviation("role_not_assistant", f"{where} is {value!r}, not 'assistant'"))

    def note_reasoning(self) -> None:
        self.note(
            info(
                "reasoning_field:reasoningContent",
                "reasoning text in reasoningContent blocks (kept for replay, not the answer's text)",
            )
        )

    def note_block(self, code: str, kind: str, what: str) -> None:
        """A block the neutral types do not carry (an image, a provider-run tool's result), kept."""
        self.note_each(code, repr(kind), f"{what} of a kind kept for replay only", severity="info")

    def read_usage(self, where: str, value: Any) -> None:
        usage = self.obj(where, value)
        if usage is None:
            return
        if "inputTokens" in usage:
            self.input_tokens = self.count(f"{where}.inputTokens", usage["inputTokens"])
        if "outputTokens" in usage:
            self.output_tokens = self.count(f"{where}.outputTokens", usage["outputTokens"])

    def finish(self, *, streamed: bool = False) -> ParsedTurn:
        """The turn: blocks in index order; calls made of the ``toolUse`` blocks the provider did not
        run itself; stop reason, ids and names checked."""
        answered = {
            b.start.get("toolUseId") for b in self.blocks.values() if b.kind == "toolResult"
        }  # a toolUse answered in the same reply was run by the provider (Nova's code interpreter)
        text: list[str] = []
        reasoning: list[str] = []
        calls: list[ToolCall] = []
        content: list[dict[str, Any]] = []
        kept = False
        for _, block in sorted(self.blocks.items()):
            call = None
            if block.kind == "toolUse":
                if block.start.get("type") == SERVER_TOOL or block.start.get("toolUseId") in answered:
                    name = block.start.get("name")
                    self.note_each(
                        "server_side_tool_use",
                        repr(name),
                        "toolUse blocks the provider ran itself (not calls)",
                        severity="info",
                    )
                    kept = True
                else:
                    call = self.make_call(block, len(calls))
                    calls.append(call)
            elif block.kind == "text":
                text.append("".join(block.text))
            else:
                kept = True
                if block.kind == "reasoningContent":
                    reasoning.append("".join(block.text))
            content.append(block.block(call))
        self.check_calls(calls)
        self.check_stop_reason(calls)
        joined = join_text(text)
        self.note_text_beside_calls(joined, calls)
        if joined and ("<thinking>" in joined or "</thinking>" in joined):
            self.note(
                info(
                    "thinking_tags_in_text",
                    "the text carries <thinking> tags: the model's reasoning is part of the answer",
                )
            )
        if streamed and not self.stopped and self.error is None:
            self.note(
                deviation("stream_without_message_stop", "the stream ended without a messageStop event")
            )
        usage = (
            None
            if self.input_tokens is None and self.output_tokens is None
            else Usage(self.input_tokens, self.output_tokens)
        )
        extra: dict[str, Any] = {"bedrock_content": content} if kept else {}
        return ParsedTurn(
            joined, calls, self.stop_reason, usage, self.error, self.findings, join_text(reasoning), extra
        )

    def make_call(self, block: _Block, position: int) -> ToolCall:
        """A whole message carries ``input`` as an object; a stream as JSON text fragments, none (or
        empty ones) for a tool without arguments, read as ``{}``."""
        start = block.start
        name = start.get("name")
        if not isinstance(name, str) or not name:
            self.note(deviation("tool_call_missing_name", f"toolUse block {position} has no name"))
            name = "" if name is None else str(name)
        extra = sorted(set(start) - TOOL_USE_KEYS) + (["type"] if "type" in start else [])
        for key in extra:
            value = start.get(key)
            self.note_each(
                "tool_use_extra_field",
                f"{key}={value!r}",
                "toolUse fields the API does not define",
                severity="info",
            )
        wire_id = start.get("toolUseId")
        wire_id = wire_id if isinstance(wire_id, str) else None
        if block.whole:
            raw, wire_type = start.get("input"), "object"
        else:
            raw, wire_type = "".join(block.input), "string"
            if not raw.strip():
                self.note_each(
                    "tool_input_empty_in_stream",
                    name,
                    "toolUse blocks that streamed no input; read as {}",
                    severity="info",
                )
                raw, wire_type = {}, "object"
        call, findings = make_call(name, raw, wire_id, position, wire_type=wire_type)
        for finding in findings:
            self.note(finding)
        return call

    def check_calls(self, calls: list[ToolCall]) -> None:
        """Ids unique and of the ToolUseId rule, names of Bedrock's rule."""
        for finding in id_findings(calls):
            self.note(finding)
        bad = [c.wire_id for c in calls if c.wire_id and not ID_RULE.match(c.wire_id)]
        if bad:
            self.note(deviation("id_format", f"toolUseIds {bad} break Bedrock's rule {ID_RULE.pattern}"))
        if any(c.wire_id and FUNCTIONS_FORM.match(c.wire_id) for c in calls):
            self.note(
                info(
                    "tool_call_id_functions_index_form",
                    "call ids of the form functions.<name>:<n> (Kimi K2): they break Anthropic's id rule "
                    "^[a-zA-Z0-9_-]+$ when the history moves there",
                )
            )
        for call in calls:
            if "<|" in call.name:
                self.note_each(
                    "tool_name_with_template_token",
                    repr(call.name),
                    "call names holding chat-template tokens",
                )
            elif call.name and not BedrockConverseAdapter.name_rules.is_valid(call.name):
                self.note_each(  # info: the name was offered so (the declaration's note says why)
                    "tool_name_rule",
                    repr(call.name),
                    "call names Bedrock refuses in a history (its own name rule)",
                    severity="info",
                )

    def check_stop_reason(self, calls: list[ToolCall]) -> None:
        """``stopReason`` must be ``tool_use`` exactly when the turn has calls."""
        if calls and self.stop_reason != "tool_use":
            reason = self.stop_reason or "missing"
            self.note(
                deviation(
                    f"stop_reason_{id_part(reason)}_with_tool_use",
                    f"stopReason is {self.stop_reason!r} although the turn has toolUse blocks",
                )
            )
        if not calls and self.stop_reason == "tool_use" and self.error is None:
            self.note(
                deviation(
                    "stop_reason_tool_use_without_calls",
                    "stopReason is 'tool_use' but the turn has no toolUse call",
                )
            )
