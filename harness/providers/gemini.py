"""Google Gemini native ``generateContent`` (``gemini-generate``).

Requests: ``contents`` with roles ``user``/``model``, ``systemInstruction``,
``tools[].functionDeclarations`` and ``toolConfig.functionCallingConfig``.
Model turns are replayed with every ``thoughtSignature`` unchanged (Gemini 3
rejects a function call replayed without its signature); a run of tool results
is ONE ``user`` content of ``functionResponse`` parts (Gemini counts responses
against the calls of the previous turn).

Responses: a whole ``GenerateContentResponse``, or a stream of them (SSE with
``alt=sse``, or a JSON array without it); both feed :class:`_Accumulator`.
Calls normally arrive whole; Vertex streams them as ``partialArgs`` that are
assembled here by ``jsonPath``. There is no tool-specific finish reason, so a
tool turn is recognised from its parts. A request another client sent is read
back by :mod:`harness.providers._gemini_request`.
"""

from __future__ import annotations

import re
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
from harness.providers._calls import Notes, id_findings, join_text, make_call
from harness.providers._gemini_request import read_generate_request
from harness.providers._history import images
from harness.providers.adapter import Adapter, RequestOptions, RequestView
from harness.providers.envelopes import embedded_error
from harness.providers.framing import DecodedStream
from harness.providers.rules import NameRules

# google.ai.generativelanguage.v1beta Candidate.FinishReason, for int-encoded enums.
FINISH_REASONS = (
    "FINISH_REASON_UNSPECIFIED",
    "STOP",
    "MAX_TOKENS",
    "SAFETY",
    "RECITATION",
    "OTHER",
    "LANGUAGE",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "MALFORMED_FUNCTION_CALL",
    "IMAGE_SAFETY",
    "UNEXPECTED_TOOL_CALL",
)
FAILED_CALL_REASONS = ("MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL")
MODES = {"auto": "AUTO", "required": "ANY", "none": "NONE", "named": "ANY"}
MAX_INDEX_DIGITS = 4  # partialArgs array indexes up to 9,999
MAX_PATH_STEPS = 64  # partialArgs paths at most this deep
PATH_STEP = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]|\['([^']*)'\]|\[\"([^\"]*)\"\]")


class GeminiGenerateAdapter(Adapter):
    """Gemini's native generateContent / streamGenerateContent API."""

    format = "gemini-generate"
    truncation_reasons = frozenset({"MAX_TOKENS", "FINISH_REASON_MAX_TOKENS"})  # [G4]
    simulator = "harness.servers.sim.wire_gemini:GEMINI"
    name_rules = NameRules(
        "gemini", "a-zA-Z0-9_.:-", 64, True, source="python-genai FunctionDeclaration docstring; 64 obs."
    )
    """Starts with a letter or ``_``, then ``a-z A-Z 0-9 _ . : -``; 128 in the python-genai
    docstring (2026-05) [G2][G8], 64 in 2025 server errors (obs.): we keep 64."""
    default_path = "/v1beta/models/{model}:generateContent"
    argument_wire_type = "object"
    stream_sentinel = None

    @classmethod
    def claims_url(cls, host: str, path: str) -> bool:
        return ":generateContent" in path or ":streamGenerateContent" in path

    @classmethod
    def claims_payload(cls, data: dict[str, Any]) -> bool:
        """A ``candidates`` list or a ``promptFeedback``."""
        return isinstance(data.get("candidates"), list) or isinstance(data.get("promptFeedback"), dict)

    @classmethod
    def request_streams(cls, url: str | None, body: Any) -> bool:
        """The streaming mode is in the path (``:streamGenerateContent``)."""
        return super().request_streams(url, body) or ":streamGenerateContent" in (url or "")

    @classmethod
    def tool_names(cls, body: Any) -> list[str]:
        """``tools[].functionDeclarations[].name`` (or the snake_case spelling)."""
        tools = body.get("tools") if isinstance(body, dict) else None
        names = []
        for tool in tools if isinstance(tools, list) else []:
            declared = (
                tool.get("functionDeclarations") or tool.get("function_declarations")
                if isinstance(tool, dict)
                else None
            )
            for declaration in declared if isinstance(declared, list) else []:
                if isinstance(declaration, dict) and isinstance(declaration.get("name"), str):
                    names.append(declaration["name"])
        return names

    def auth_headers(self, api_key: str) -> dict[str, str]:
        """The Gemini API takes the key in ``x-goog-api-key``."""
        return {"x-goog-api-key": api_key}

    # -- requests -----------------------------------------------------------

    def build_request(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        tool_choice: ToolChoice,
        options: RequestOptions,
    ) -> WireRequest:
        """The request; the model and the streaming mode are part of the path on this API."""
        findings: list[Finding] = []
        model = options.model.removeprefix("models/")
        path = (
            f"/v1beta/models/{model}:streamGenerateContent?alt=sse"
            if options.stream
            else f"/v1beta/models/{model}:generateContent"
        )
        body: dict[str, Any] = {"contents": self.map_contents(messages, findings)}
        system = [m.content for m in messages if m.role == "system" and m.content]
        if system:
            body["systemInstruction"] = {"parts": [{"text": "\n\n".join(system)}]}
        if tools:
            body["tools"] = [{"functionDeclarations": [self.map_tool(t) for t in tools]}]
            config: dict[str, Any] = {"mode": MODES[tool_choice.mode]}
            if tool_choice.mode == "named":
                config["allowedFunctionNames"] = [tool_choice.name]
            body["toolConfig"] = {"functionCallingConfig": config}
            findings.extend(self.choice_findings(tool_choice))
            if options.parallel_tool_calls is not None:
                findings.append(
                    Finding(
                        "wire.parallel_tool_calls_unsupported",
                        "info",
                        False,
                        "the native Gemini API has no parallel tool call control; not sent",
                    )
                )
        settings = (
            ("temperature", options.temperature),
            ("maxOutputTokens", options.max_tokens),
            ("seed", options.seed),
        )
        generation = {k: v for k, v in settings if v is not None}
        if generation:
            body["generationConfig"] = generation
        body.update(options.extra)
        return WireRequest(path, body, options.stream, findings=findings)

    @staticmethod
    def map_tool(tool: ToolSpec) -> dict[str, Any]:
        """One declaration. The schema goes in ``parametersJsonSchema``: ``parameters`` is Gemini's
        OpenAPI-subset ``Schema``, which would reinterpret or reject JSON Schema keywords (``$ref``,
        ``additionalProperties``, type arrays), so the conformance run would test a different schema."""
        wire: dict[str, Any] = {"name": tool.name, "description": tool.description}
        if tool.parameters:
            wire["parametersJsonSchema"] = tool.parameters
        return wire

    @classmethod
    def map_contents(cls, messages: Sequence[Message], findings: list[Finding]) -> list[dict[str, Any]]:
        """Contents in order; consecutive tool results share one ``user`` content."""
        synthesized = {c.id for m in messages for c in m.tool_calls if c.id_synthesized}
        wire: list[dict[str, Any]] = []
        responses: list[dict[str, Any]] | None = None
        for message in messages:
            if message.role == "tool":
                if responses is None:
                    responses = []
                    wire.append({"role": "user", "parts": responses})
                responses.append(cls.map_tool_result(message, synthesized))
                continue
            responses = None
            if message.role == "user":
                wire.append({"role": "user", "parts": [{"text": message.content or ""}]})
            elif message.role == "assistant":
                wire.append({"role": "model", "parts": cls.map_model_parts(message, findings)})
        return wire

    @staticmethod
    def map_tool_result(message: Message, synthesized: set[str | None]) -> dict[str, Any]:
        """A ``functionResponse``; the id only when the call had one on the wire (ids the harness
        made up are unknown to Gemini)."""
        result = message.tool_result
        assert result is not None
        response: dict[str, Any] = {"name": result.name}
        if result.call_id and result.call_id not in synthesized:
            response["id"] = result.call_id
        response["response"] = {"error" if result.is_error else "result": result.value()}
        if images(result):  # multimodal function responses carry their images as parts [G18]
            response["parts"] = [
                {"inlineData": {"mimeType": p.media_type, "data": p.data}} for p in images(result)
            ]
        return {"functionResponse": response}

    @staticmethod
    def map_model_parts(message: Message, findings: list[Finding]) -> list[dict[str, Any]]:
        """Text parts as parsed (with their signatures) when kept, then the calls with theirs."""
        kept = message.extra.get("gemini_text_parts")
        parts: list[dict[str, Any]] = (
            [dict(p) for p in kept]
            if isinstance(kept, list)
            else [{"text": p.text} for p in message.parts]
            if message.parts
            else [{"text": message.content}]
            if message.content
            else []
        )
        for call in message.tool_calls:
            if call.arguments is None:
                findings.append(
                    deviation(
                        "unparsed_arguments_replayed_empty",
                        f"call {call.id} had unparseable arguments; replayed as args {{}}",
                    )
                )
            function: dict[str, Any] = {"name": call.name, "args": call.arguments or {}}
            if call.wire_id:
                function["id"] = call.wire_id
            part: dict[str, Any] = {"functionCall": function}
            if "thoughtSignature" in call.extra:
                part["thoughtSignature"] = call.extra["thoughtSignature"]
            parts.append(part)
        return parts or [{"text": ""}]

    def read_body(self, body: dict[str, Any], path: str) -> RequestView:
        """A ``generateContent`` request read back (the inverse of :meth:`build_request`); the model
        and the streaming mode come from ``path``."""
        return read_generate_request(body, path)

    # -- responses ----------------------------------------------------------

    def parse_body(self, body: dict[str, Any]) -> ParsedTurn:
        """A whole response, fed as a one-chunk stream."""
        acc = _Accumulator()
        acc.feed(body)
        return acc.finish()

    def parse_stream(self, stream: DecodedStream) -> ParsedTurn:
        """Each event is a whole ``GenerateContentResponse``; the last one carries ``finishReason``."""
        acc = _Accumulator()
        if stream.framing == "json-array":
            acc.note(
                Finding(
                    "wire.stream_json_array",
                    "info",
                    False,
                    "the stream is a JSON array of responses (no alt=sse)",
                )
            )
        for number, event in enumerate(stream.events):
            if isinstance(event.data, dict):
                acc.feed(event.data, f"events[{number}].")
        if stream.events and acc.finish_reason is None and acc.error is None:
            acc.note(deviation("stream_without_finish_reason", "the stream ended without a finishReason"))
        return acc.finish()


@dataclass
class _PartialCall:
    """A function call as assembled: whole, or from ``partialArgs`` parts until ``willContinue`` stops."""

    name: str
    id: str | None
    args: Any
    signature: str | None = None


@dataclass
class _Accumulator(Notes):
    """Folds responses into one turn: text and thought parts merged (signatures kept for replay),
    calls appended in wire order, an open streamed call continued by name-less parts."""

    text_parts: list[dict[str, Any]] = field(default_factory=list)
    calls: list[_PartialCall] = field(default_factory=list)
    open: _PartialCall | None = None
    finish_reason: str | None = None
    finish_message: str | None = None
    usage: Usage | None = None
    error: ProviderError | None = None

    def feed(self, chunk: dict[str, Any], where: str = "") -> None:
        """Fold one ``GenerateContentResponse`` (candidate 0) into the turn; ``where`` is its
        place in the stream, for findings."""
        error = embedded_error(chunk, 200)
        if error is not None:
            self.error = error
            self.note(deviation("error_chunk_in_stream", "an error object arrived inside the 2xx stream"))
            return
        metadata = self.obj(f"{where}usageMetadata", chunk.get("usageMetadata")) or {}
        if "promptTokenCount" in metadata or "candidatesTokenCount" in metadata:
            self.usage = Usage(
                self.count(f"{where}usageMetadata.promptTokenCount", metadata.get("promptTokenCount")),
                self.count(
                    f"{where}usageMetadata.candidatesTokenCount", metadata.get("candidatesTokenCount")
                ),
            )
        feedback = self.obj(f"{where}promptFeedback", chunk.get("promptFeedback")) or {}
        blocked = feedback.get("blockReason")
        if blocked:
            self.note(deviation("prompt_blocked", f"the prompt was blocked: {blocked}", severity="error"))
        candidate: tuple[str, dict[str, Any]] | None = None
        for candidate_where, item in self.objects(f"{where}candidates", chunk.get("candidates")):
            index = self.integer(f"{candidate_where}.index", item.get("index"))
            if (index or 0) == 0 and candidate is None:
                candidate = (candidate_where, item)
        if candidate is None:
            return
        candidate_where, found = candidate
        content = self.obj(f"{candidate_where}.content", found.get("content")) or {}
        for part_where, part in self.objects(f"{candidate_where}.content.parts", content.get("parts")):
            self.feed_part(part, part_where)
        if found.get("finishReason") is not None:
            self.read_finish(
                f"{candidate_where}.finishReason",
                found["finishReason"],
                self.string(f"{candidate_where}.finishMessage", found.get("finishMessage")),
            )

    def read_finish(self, where: str, value: Any, message: str | None) -> None:
        """The finish reason by name (int enums mapped); a change between chunks is noted."""
        if isinstance(value, bool) or not isinstance(value, str | int):
            self.wrong_type(where, value, "string (or integer enum)")
            return
        reason = str(value)
        if isinstance(value, int):
            reason = FINISH_REASONS[value] if 0 <= value < len(FINISH_REASONS) else str(value)
            self.note(
                Finding(
                    "wire.finish_reason_integer_enum",
                    "info",
                    False,
                    f"finishReason is the integer enum {value} ({reason})",
                )
            )
        if self.finish_reason is not None and reason != self.finish_reason:
            self.note(
                deviation(
                    "finish_reason_changed", f"finishReason went from {self.finish_reason!r} to {reason!r}"
                )
            )
        self.finish_reason = reason
        self.finish_message = message if message is not None else self.finish_message

    def feed_part(self, part: dict[str, Any], where: str = "parts[0]") -> None:
        signature = self.string(f"{where}.thoughtSignature", part.get("thoughtSignature"))
        if "functionCall" in part:
            self.feed_call(part["functionCall"], signature, f"{where}.functionCall")
        elif "text" in part or signature is not None:
            self.feed_text(part, signature, where)
        else:
            kinds = sorted(part)
            self.note(Finding("wire.unknown_part", "info", False, f"part with keys {kinds} ignored"))

    def feed_text(self, part: dict[str, Any], signature: str | None, where: str) -> None:
        """Merge consecutive text (or thought) chunks; a second signature starts a new part."""
        last = self.text_parts[-1] if self.text_parts else None
        thought = part.get("thought")
        if thought is not None and not isinstance(thought, bool):
            self.wrong_type(f"{where}.thought", thought, "boolean", f"read as {bool(thought)}")
        thought = bool(thought)
        if (
            last is None
            or bool(last.get("thought")) != thought
            or (signature is not None and "thoughtSignature" in last)
        ):
            last = {"text": ""}
            if thought:
                last["thought"] = True
            self.text_parts.append(last)
        last["text"] += self.string(f"{where}.text", part.get("text")) or ""
        if signature is not None:
            last["thoughtSignature"] = signature

    def feed_call(self, function: Any, signature: str | None, where: str = "functionCall") -> None:
        """A whole call, or the start, continuation or end of a streamed one."""
        if signature is not None:
            self.note(
                Finding(
                    "wire.thought_signature_on_function_call",
                    "info",
                    False,
                    "a functionCall part carries a thoughtSignature (replayed unchanged)",
                )
            )
        if function is not None and not isinstance(function, dict):
            self.wrong_type(where, function, "object", "read as an empty functionCall")
        if not isinstance(function, dict) or not function:
            self.note(
                Finding(
                    "wire.empty_function_call_part",
                    "info" if self.open else "warning",
                    False,
                    "an empty functionCall part arrived"
                    + ("; it ends the streamed call" if self.open else " outside any call; ignored"),
                )
            )
            self.open = None
            return
        name = self.string(f"{where}.name", function.get("name"))
        will_continue = function.get("willContinue")
        if will_continue is not None and not isinstance(will_continue, bool):
            self.wrong_type(
                f"{where}.willContinue", will_continue, "boolean", f"read as {bool(will_continue)}"
            )
        if self.open is not None and "name" not in function:
            call = self.open
        else:
            if self.open is not None:
                self.note(
                    deviation(
                        "streamed_call_not_closed",
                        "a new functionCall started while a streamed one still had willContinue",
                    )
                )
            if not name:
                self.note(deviation("tool_call_missing_name", "a functionCall part has no name"))
            args = function.get("args")
            if args is None and will_continue:
                args = {}  # a streamed call: its arguments (if any) follow as partialArgs
            call = _PartialCall(name or "", self.string(f"{where}.id", function.get("id")), args)
            self.calls.append(call)
        if signature is not None and call.signature is None:
            call.signature = signature
        partial_args = function.get("partialArgs")
        if isinstance(partial_args, list):
            self.apply_partial_args(call, partial_args, f"{where}.partialArgs")
        else:
            self.array(f"{where}.partialArgs", partial_args)  # notes a value of another type
        if "args" in function and call is self.open:
            self.note(
                deviation("args_in_continuation", "a continuation part of a streamed call carries args")
            )
            call.args = function["args"]
        self.open = call if will_continue else None

    def apply_partial_args(
        self, call: _PartialCall, partial_args: list[Any], where: str = "partialArgs"
    ) -> None:
        """Vertex streamed arguments: each value set at its ``jsonPath``; strings concatenate."""
        self.note(
            Finding(
                "wire.streamed_partial_args",
                "info",
                False,
                "function call arguments streamed as partialArgs (Vertex) and assembled",
            )
        )
        if not isinstance(call.args, dict):
            call.args = {}
        for item_where, item in self.objects(where, partial_args):
            path = self.string(f"{item_where}.jsonPath", item.get("jsonPath")) or ""
            if "stringValue" in item and not isinstance(item["stringValue"], str):
                self.wrong_type(
                    f"{item_where}.stringValue", item["stringValue"], "string", "read as its text"
                )
            for key, expected in (("numberValue", "number"), ("boolValue", "boolean")):
                value = item.get(key)
                if key in item and not _scalar(value, expected):
                    self.wrong_type(f"{item_where}.{key}", value, expected, "value dropped")
                    item = {k: v for k, v in item.items() if k != key}
            steps = _path_steps(path)
            if steps is None or not _assign(call.args, steps, item):
                self.note(
                    deviation(
                        "partial_args_bad_path",
                        f"partialArgs jsonPath {item.get('jsonPath')!r} could not be applied; value dropped",
                        item=item,
                    )
                )

    def finish(self) -> ParsedTurn:
        """The turn: calls made (signatures in ``extra``), failed-call finish reasons noted."""
        calls: list[ToolCall] = []
        for position, partial in enumerate(self.calls):
            call, findings = make_call(
                partial.name,
                partial.args,
                partial.id,
                position,
                wire_type="object",
                optional_id="ids are optional on this API; Gemini 2.x sends none",
            )
            if partial.signature is not None:
                call.extra["thoughtSignature"] = partial.signature
            for finding in findings:
                self.note(finding)
            calls.append(call)
        for finding in id_findings(calls):
            self.note(finding)
        if self.open is not None:
            self.note(
                deviation("streamed_call_unfinished", "the stream ended while a call still had willContinue")
            )
        if self.finish_reason in FAILED_CALL_REASONS:
            self.note(
                deviation(
                    "failed_tool_call_finish",
                    f"finishReason {self.finish_reason}: the model's tool call failed",
                    severity="error",
                    finish_message=self.finish_message,
                )
            )
        text = join_text([p["text"] for p in self.text_parts if not p.get("thought")])
        self.note_text_beside_calls(text, calls)
        reasoning = join_text([p["text"] for p in self.text_parts if p.get("thought")])
        extra: dict[str, Any] = {}
        if any("thoughtSignature" in p or p.get("thought") for p in self.text_parts):
            extra["gemini_text_parts"] = self.text_parts
        return ParsedTurn(
            text, calls, self.finish_reason, self.usage, self.error, self.findings, reasoning, extra
        )


def _scalar(value: Any, expected: str) -> bool:
    """A ``numberValue`` is a number, a ``boolValue`` a boolean (``null`` reads as absent)."""
    if value is None:
        return True
    if expected == "boolean":
        return isinstance(value, bool)
    return isinstance(value, int | float) and not isinstance(value, bool)


def _path_steps(path: str) -> list[str | int] | None:
    """``$.a.b[0]`` as ``["a", "b", 0]``; ``None`` when the path is not of that simple form."""
    if not path.startswith("$"):
        return None
    steps: list[str | int] = []
    position = 1
    while position < len(path):
        match = PATH_STEP.match(path, position)
        if match is None:
            return None
        name, index, quoted, double = match.groups()
        key = next((s for s in (name, quoted, double) if s is not None), "")
        if index is not None and len(index) > MAX_INDEX_DIGITS:
            return None  # no argument array is that long; a list that size would exhaust memory
        steps.append(int(index) if index is not None else key)
        if len(steps) > MAX_PATH_STEPS:
            return None  # arguments nested that deep could not be stored
        position = match.end()
    return steps or None


def _assign(root: dict[str, Any], steps: list[str | int], item: dict[str, Any]) -> bool:
    """Set one ``partialArgs`` value at its path, creating containers on the way; a string value
    extends the string already there. ``False`` when the path does not fit the arguments so far."""
    target: Any = root
    for position, step in enumerate(steps):
        node: Any = target  # untyped on purpose: a list or a dict, indexed by an int or a str
        if isinstance(target, list) and isinstance(step, int):
            target.extend([None] * (step + 1 - len(target)))
            current = target[step]
        elif isinstance(target, dict) and isinstance(step, str):
            current = target.get(step)
        else:
            return False
        if position == len(steps) - 1:
            if "stringValue" in item:
                node[step] = (current if isinstance(current, str) else "") + str(item["stringValue"])
            else:
                node[step] = item.get("numberValue", item.get("boolValue"))  # else nullValue
            return True
        if not isinstance(current, dict | list):
            current = [] if isinstance(steps[position + 1], int) else {}
            node[step] = current
        target = current
    return False
