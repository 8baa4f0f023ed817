"""Google Gemini Interactions (``gemini-interactions``, ``POST /v1beta/interactions``).

Built from the published reference, with no recorded traffic yet: the
``Api-Revision: 2026-05-20`` steps schema as the python-genai SDK types it and
ai.google.dev documents it [GI1][GI2][GI3][GI4]. The simulator's side
(:mod:`harness.servers.sim.wire_gemini_interactions`) is its conformance oracle until
real traffic is recorded.

Requests: ``input`` is a list of typed steps (``user_input``, ``model_output``,
``thought``, ``function_call`` with its ``id``, ``function_result`` with the
``call_id`` it answers), ``system_instruction`` a string, ``tools`` as
``{"type": "function", name, description, parameters}``, ``tool_choice`` inside
``generation_config`` (``auto``, ``any``, ``none``, or ``allowed_tools`` for a named
tool). Stateless by default: the whole history goes in every request with
``store: false``. A target's ``request_options = {store = true}`` makes it stateful: the
server keeps each interaction, and a request after a model turn sends that turn's
``previous_interaction_id`` and only the steps that came after it. Thought steps (their
signatures) are replayed unchanged.

Responses: a whole ``Interaction`` (``status``, output ``steps``, ``usage``), or SSE
events named by ``event_type`` (``interaction.created``, ``interaction.status_update``,
``step.start`` / ``step.delta`` / ``step.stop`` per step, ``interaction.completed``,
``error``); the whole interaction is fed to the same :class:`_Accumulator` as its
steps. A turn that calls functions has status ``requires_action``; ``incomplete`` is a
turn cut at the token limit. A request another client sent is read back by
:mod:`harness.providers._gemini_interactions_request`.
"""

from __future__ import annotations

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
    ToolResult,
    ToolSpec,
    Usage,
    WireRequest,
    deviation,
)
from harness.providers._calls import Notes, id_findings, id_part, join_text, make_call
from harness.providers._gemini_interactions_request import read_interactions_request
from harness.providers.adapter import Adapter, RequestOptions, RequestView
from harness.providers.envelopes import provider_error
from harness.providers.framing import DecodedStream
from harness.providers.gemini import GeminiGenerateAdapter

API_REVISION = "2026-05-20"
"""The revision of the steps schema this adapter speaks, pinned with the ``Api-Revision`` header [GI2]."""
PATH = "/v1beta/interactions"
CHOICES = {"auto": "auto", "required": "any", "none": "none"}
CALLS_STATUS = "requires_action"
STORE_OPTION = "store"
STREAM_EVENTS = frozenset(
    {
        "interaction.created",
        "interaction.status_update",
        "interaction.completed",
        "step.start",
        "step.delta",
        "step.stop",
    }
)
STATUSES = frozenset(
    {
        "in_progress",
        "requires_action",
        "completed",
        "failed",
        "cancelled",
        "incomplete",
        "budget_exceeded",
        "queued",
        "idle",
        "requires_continuation",
    }
)
UNFINISHED = frozenset({"in_progress", "queued"})
"""Statuses of an interaction still running (a background one): its answer is not there yet."""
INPUT_STEPS = frozenset({"user_input", "function_result"})
"""Steps a client sends: in a response they are its input echoed (``GET`` returns them)."""
NEUTRAL_STEPS = frozenset({"model_output", "function_call"})
STEP_STRINGS = ("type", "id", "name", "signature")


class GeminiInteractionsAdapter(Adapter):
    """Google's Gemini Interactions API (steps schema, ``Api-Revision: 2026-05-20``)."""

    format = "gemini-interactions"
    truncation_reasons = frozenset({"incomplete"})  # [GI5]: "completed, but ... hitting maxTokens"
    simulator = "harness.servers.sim.wire_gemini_interactions:INTERACTIONS"
    name_rules = GeminiGenerateAdapter.name_rules
    """The model family's function name rules (the reference gives Interactions no rule of its own)."""
    default_path = PATH
    argument_wire_type = "object"
    stream_sentinel = None

    @classmethod
    def claims_url(cls, host: str, path: str) -> bool:
        """``/v1beta/interactions`` (any ``v1...`` version, a Vertex resource prefix allowed)."""
        head, _, last = path.rpartition("/")
        return last == "interactions" and "/v1" in head

    @classmethod
    def claims_payload(cls, data: dict[str, Any]) -> bool:
        """One of its stream events (``event_type``), or an ``interaction`` object."""
        kind, status = data.get("event_type"), data.get("status")
        if (isinstance(kind, str) and kind in STREAM_EVENTS) or (
            kind == "error" and isinstance(data.get("error"), dict)
        ):
            return True
        return data.get("object") == "interaction" or (
            isinstance(data.get("steps"), list) and isinstance(status, str) and status in STATUSES
        )

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
        """The interaction to create: the whole history as steps (stateless, ``store: false``),
        or with ``request_options = {store = true}`` the steps after the last model turn and that
        turn's ``previous_interaction_id``."""
        findings: list[Finding] = []
        extra = dict(options.extra)
        stateful = extra.get(STORE_OPTION) is True
        body: dict[str, Any] = {"model": options.model}
        system = [m.content for m in messages if m.role == "system" and m.content]
        if system:
            body["system_instruction"] = "\n\n".join(system)
        history = list(messages)
        if stateful:
            previous = _last_interaction(history)
            if previous is not None:
                position, interaction_id = previous
                body["previous_interaction_id"] = interaction_id
                history = history[position + 1 :]
        body["input"] = self.map_steps(history, findings)
        config: dict[str, Any] = {}
        if tools:
            body["tools"] = [self.map_tool(t) for t in tools]
            config["tool_choice"] = self.map_tool_choice(tool_choice)
            findings.extend(self.choice_findings(tool_choice))
            if options.parallel_tool_calls is not None:
                findings.append(
                    Finding(
                        "wire.parallel_tool_calls_unsupported",
                        "info",
                        False,
                        "the Interactions API has no parallel tool call control; not sent",
                    )
                )
        settings = (
            ("temperature", options.temperature),
            ("max_output_tokens", options.max_tokens),
            ("seed", options.seed),
        )
        config.update({k: v for k, v in settings if v is not None})
        if config:
            body["generation_config"] = config
        body["store"] = stateful
        if options.stream:
            body["stream"] = True
        body.update(extra)
        return WireRequest(PATH, body, options.stream, {"Api-Revision": API_REVISION}, findings)

    @staticmethod
    def map_tool(tool: ToolSpec) -> dict[str, Any]:
        """One function declaration; ``parameters`` is JSON Schema (a subset) [GI1]."""
        wire: dict[str, Any] = {"type": "function", "name": tool.name, "description": tool.description}
        wire["parameters"] = tool.parameters or {"type": "object", "properties": {}}
        return wire

    @staticmethod
    def map_tool_choice(choice: ToolChoice) -> Any:
        """``auto`` / ``any`` / ``none``, or the named tool as the only one ``allowed_tools`` lets the
        model call with mode ``any`` [GI1]."""
        if choice.mode == "named":
            return {"allowed_tools": {"mode": "any", "tools": [choice.name]}}
        return CHOICES[choice.mode]

    @classmethod
    def map_steps(cls, messages: Sequence[Message], findings: list[Finding]) -> list[dict[str, Any]]:
        """The conversation as steps, in order; system messages are ``system_instruction``."""
        steps: list[dict[str, Any]] = []
        for message in messages:
            if message.role == "user":
                steps.append(
                    {"type": "user_input", "content": [{"type": "text", "text": message.content or ""}]}
                )
            elif message.role == "assistant":
                steps += cls.map_model_steps(message, findings)
            elif message.role == "tool":
                steps.append(cls.map_result(message))
        return steps

    @staticmethod
    def map_result(message: Message) -> dict[str, Any]:
        """A ``function_result`` naming the ``call_id`` it answers; ``is_error`` only when true."""
        result = message.tool_result
        assert result is not None
        step: dict[str, Any] = {
            "type": "function_result",
            "call_id": result.call_id or "",
            "name": result.name,
            "result": result_value(result),
        }
        if result.is_error:
            step["is_error"] = True
        return step

    @staticmethod
    def map_model_steps(message: Message, findings: list[Finding]) -> list[dict[str, Any]]:
        """The model's steps as parsed when kept (thought signatures go back unchanged), else
        rebuilt: the text as a ``model_output`` step, then one ``function_call`` step per call."""
        for call in message.tool_calls:
            if call.arguments is None:
                findings.append(
                    deviation(
                        "unparsed_arguments_replayed_empty",
                        f"call {call.id} had unparseable arguments; replayed as arguments {{}}",
                    )
                )
        kept = message.extra.get("interactions_steps")
        if isinstance(kept, list):
            ids = [s.get("id") for s in kept if isinstance(s, dict) and s.get("type") == "function_call"]
            if ids == [c.id for c in message.tool_calls]:
                return [dict(s) for s in kept if isinstance(s, dict)]
            findings.append(
                deviation(
                    "replay_steps_rebuilt",
                    "kept Interactions steps no longer match the message's tool calls; steps rebuilt "
                    "(thought signatures not replayed)",
                )
            )
        steps: list[dict[str, Any]] = []
        if message.parts:
            content = [{"type": "text", "text": p.text} for p in message.parts]
            steps.append({"type": "model_output", "content": content})
        elif message.content or not message.tool_calls:
            steps.append(
                {"type": "model_output", "content": [{"type": "text", "text": message.content or ""}]}
            )
        for call in message.tool_calls:
            steps.append(
                {
                    "type": "function_call",
                    "id": call.id or "",
                    "name": call.name,
                    "arguments": call.arguments or {},
                }
            )
        return steps

    def read_body(self, body: dict[str, Any], path: str) -> RequestView:
        """An interaction request read back (the inverse of :meth:`build_request`)."""
        return read_interactions_request(body, path)

    # -- responses ----------------------------------------------------------

    def parse_body(self, body: dict[str, Any]) -> ParsedTurn:
        """A whole ``Interaction``: its status, usage and output steps through the accumulator."""
        acc = _Accumulator()
        acc.feed_interaction(body, "")
        return acc.finish()

    def parse_stream(self, stream: DecodedStream) -> ParsedTurn:
        """SSE events named by their ``event_type``; a stream ends with ``interaction.completed``."""
        acc = _Accumulator()
        acc.stream = True
        for number, event in enumerate(stream.events):
            if isinstance(event.data, dict):
                where = f"events[{number}]."
                kind = acc.string(f"{where}event_type", event.data.get("event_type")) or event.event
                if event.event and kind != event.event:
                    acc.note(
                        deviation(
                            "event_name_mismatch",
                            f"SSE event {event.event!r} carries data of event_type {kind!r}",
                        )
                    )
                acc.feed(str(kind), event.data, where)
        if stream.events and not acc.completed and acc.error is None:
            acc.note(
                deviation(
                    "stream_without_interaction_completed", "the stream ended without interaction.completed"
                )
            )
        return acc.finish()


def _last_interaction(messages: list[Message]) -> tuple[int, str] | None:
    """The position and ``interaction_id`` of the last model turn that has one."""
    for position in range(len(messages) - 1, -1, -1):
        message = messages[position]
        if message.role == "assistant":
            found = message.extra.get("interaction_id")
            return (position, found) if isinstance(found, str) and found else None
    return None


@dataclass
class _Step:
    """One output step as assembled: its start object (string fields of the wrong type dropped) and
    the deltas that followed."""

    start: dict[str, Any]
    type: str
    text: list[str] = field(default_factory=list)
    arguments: list[str] = field(default_factory=list)
    signature: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)

    def output_text(self) -> str:
        """The text of a ``model_output`` step: its text content, then its text deltas."""
        content = self.start.get("content")
        items = content if isinstance(content, list) else []
        whole = [str(i.get("text") or "") for i in items if isinstance(i, dict) and i.get("type") == "text"]
        return "".join(whole + self.text)

    def thought(self) -> tuple[str, dict[str, Any]]:
        """A thought step's summary text and the step as it goes back (signature unchanged)."""
        summary = self.start.get("summary")
        items = summary if isinstance(summary, list) else []
        text = "".join(
            [str(i.get("text") or "") for i in items if isinstance(i, dict) and i.get("type") == "text"]
            + self.summary
        )
        step: dict[str, Any] = {"type": "thought"}
        signature = str(self.start.get("signature") or "") + "".join(self.signature)
        if signature:
            step["signature"] = signature
        if text:
            step["summary"] = [{"type": "text", "text": text}]
        return text, step


class _Accumulator(Notes):
    """Folds an interaction (whole, or its stream events) into a turn: steps by ``index``, text and
    argument deltas concatenated per step, the last status and usage kept."""

    def __init__(self) -> None:
        super().__init__()
        self.steps: dict[int, _Step] = {}
        self.status: str | None = None
        self.interaction_id: str | None = None
        self.usage: Usage | None = None
        self.error: ProviderError | None = None
        self.failure: ProviderError | None = None
        self.completed = False
        self.streamed_steps = False
        self.stream = False

    def feed(self, kind: str, data: dict[str, Any], where: str = "") -> None:
        """Fold one stream event (named by its ``event_type``) into the turn."""
        if kind == "error" or data.get("error") is not None:
            self.note(deviation("error_event_in_stream", "an error event arrived in the 2xx stream"))
            self.error = provider_error(data.get("error") or data, 200)
        elif kind in ("interaction.created", "interaction.completed"):
            interaction = self.obj(f"{where}interaction", data.get("interaction"))
            if interaction is not None:
                self.feed_interaction(interaction, f"{where}interaction.", steps=not self.streamed_steps)
            self.completed = self.completed or kind == "interaction.completed"
        elif kind == "interaction.status_update":
            self.read_status(f"{where}status", data.get("status"))
            self.read_usage(f"{where}usage", data.get("usage"))
        elif kind == "step.start":
            self.streamed_steps = True
            self.start_step(data.get("index"), data.get("step"), f"{where}step")
        elif kind == "step.delta":
            delta = self.obj(f"{where}delta", data.get("delta")) or {}
            self.feed_delta(data.get("index"), delta, f"{where}delta")
            metadata = self.obj(f"{where}metadata", data.get("metadata")) or {}
            self.read_usage(f"{where}metadata.total_usage", metadata.get("total_usage"))
        elif kind == "step.stop":
            self.read_usage(f"{where}usage", data.get("usage"))
        else:
            self.note(
                Finding(
                    f"wire.unknown_stream_event:{id_part(kind)}",
                    "info",
                    False,
                    f"unknown stream event {kind!r} ignored",
                )
            )

    def feed_interaction(self, interaction: dict[str, Any], where: str, *, steps: bool = True) -> None:
        """An ``Interaction`` (a whole body, or the one a lifecycle event carries): id, status,
        usage, and its steps unless the stream delivered them as events."""
        found = self.string(f"{where}id", interaction.get("id"))
        self.interaction_id = found or self.interaction_id
        self.read_status(f"{where}status", interaction.get("status"))
        self.read_usage(f"{where}usage", interaction.get("usage"))
        for _, error in self.objects(f"{where}errors", interaction.get("errors")):
            self.failure = self.failure or provider_error(error, 200)
        if steps and interaction.get("steps") is not None:
            self.steps.clear()  # a later snapshot of the interaction replaces an earlier one
            for position, step in enumerate(self.array(f"{where}steps", interaction.get("steps"))):
                self.start_step(len(self.steps), step, f"{where}steps[{position}]")

    def read_status(self, where: str, value: Any) -> None:
        status = self.string(where, value)
        if status is None:
            return
        if status not in STATUSES:
            self.note(
                Finding(
                    f"wire.unknown_status:{id_part(status)}",
                    "info",
                    False,
                    f"interaction status {status!r} is not one the reference lists",
                )
            )
        self.status = status

    def read_usage(self, where: str, value: Any) -> None:
        """``total_input_tokens`` and ``total_output_tokens``; later reports replace earlier ones."""
        usage = self.obj(where, value)
        if not usage or not ({"total_input_tokens", "total_output_tokens"} & set(usage)):
            return
        self.usage = Usage(
            self.count(f"{where}.total_input_tokens", usage.get("total_input_tokens")),
            self.count(f"{where}.total_output_tokens", usage.get("total_output_tokens")),
        )

    def start_step(self, index: Any, step: Any, where: str) -> None:
        """Start an output step; an input step (``user_input``, ``function_result``) means what came
        before it was the request echoed, which is dropped."""
        if not isinstance(step, dict):
            self.wrong_type(where, step, "object", "step skipped")
            return
        start = dict(step)
        for key in STEP_STRINGS:
            if start.get(key) is not None and not isinstance(start[key], str):
                self.wrong_type(f"{where}.{key}", start.pop(key), "string", "dropped")
        kind = str(start.get("type") or "")
        if kind in INPUT_STEPS:
            self.note(
                Finding(
                    "wire.input_steps_echoed",
                    "info",
                    False,
                    "the response repeats input steps; the turn is read from the steps after the last one",
                )
            )
            self.steps.clear()
            return
        if isinstance(index, bool) or not isinstance(index, int) or index in self.steps:
            self.note(
                deviation(
                    "step_index_reused",
                    f"step.start with index {index!r} reuses or lacks an index; the later step replaces "
                    "the earlier one",
                )
            )
        if not kind:
            self.note(deviation("step_without_type", f"{where} has no type; kept for replay only"))
        position = index if isinstance(index, int) and not isinstance(index, bool) else len(self.steps)
        self.steps[position] = _Step(start, kind)

    def feed_delta(self, index: Any, delta: dict[str, Any], where: str) -> None:
        """Append a delta to its started step; a delta for no step is a deviation."""
        step = self.steps.get(index) if isinstance(index, int) and not isinstance(index, bool) else None
        kind = str(self.string(f"{where}.type", delta.get("type")))
        if step is None:
            self.note(
                deviation(
                    "delta_without_step_start",
                    f"a {kind} delta for step {index!r}, which was never started; dropped",
                    delta=delta,
                )
            )
            return
        expected = {"text": "model_output", "arguments_delta": "function_call"}.get(kind)
        expected = expected or ("thought" if kind in ("thought_signature", "thought_summary") else None)
        if expected is not None and step.type != expected:
            self.note(deviation("delta_type_mismatch", f"a {kind} delta for a {step.type} step"))
            return
        if kind == "text":
            step.text.append(self.string(f"{where}.text", delta.get("text")) or "")
        elif kind == "arguments_delta":
            step.arguments.append(self.string(f"{where}.arguments", delta.get("arguments")) or "")
        elif kind == "thought_signature":
            step.signature.append(self.string(f"{where}.signature", delta.get("signature")) or "")
        elif kind == "thought_summary":
            content = self.obj(f"{where}.content", delta.get("content")) or {}
            step.summary.append(self.string(f"{where}.content.text", content.get("text")) or "")
        else:
            self.note(
                Finding(
                    f"wire.unknown_delta_type:{id_part(kind)}",
                    "info",
                    False,
                    f"unknown delta type {kind!r} ignored",
                )
            )

    def finish(self) -> ParsedTurn:
        """The turn: steps in index order, calls made, status and ids checked, steps kept for replay."""
        text: list[str] = []
        reasoning: list[str] = []
        calls: list[ToolCall] = []
        kept: list[dict[str, Any]] = []
        for _, step in sorted(self.steps.items()):
            if step.type == "model_output":
                text.append(step.output_text())
                self.model_error(step)
                kept.append(
                    {"type": "model_output", "content": [{"type": "text", "text": step.output_text()}]}
                )
            elif step.type == "function_call":
                call = self.make_call(step, len(calls))
                calls.append(call)
                kept.append(
                    {
                        "type": "function_call",
                        "id": call.id,
                        "name": call.name,
                        "arguments": call.arguments or {},
                    }
                )
            elif step.type == "thought":
                summary, replayed = step.thought()
                reasoning.append(summary)
                kept.append(replayed)
            else:
                self.note(
                    Finding(
                        f"wire.unknown_step:{id_part(step.type)}",
                        "info",
                        False,
                        f"step of type {step.type!r} kept for replay only",
                    )
                )
                kept.append(dict(step.start))
        for finding in id_findings(calls):
            self.note(finding)
        self.check_status(calls)
        joined = join_text(text)
        self.note_text_beside_calls(joined, calls)
        extra: dict[str, Any] = {}
        if self.interaction_id:
            extra["interaction_id"] = self.interaction_id
        if any(s.type not in NEUTRAL_STEPS for s in self.steps.values()):
            extra["interactions_steps"] = kept
        error = self.error
        if error is None and self.status == "failed":
            error = self.failure or ProviderError(200, "the interaction failed and says no more", "failed")
        return ParsedTurn(
            joined, calls, self.status, self.usage, error, self.findings, join_text(reasoning), extra
        )

    def model_error(self, step: _Step) -> None:
        """A ``model_output`` step may carry a ``google.rpc.Status`` error: the turn's error."""
        error = self.obj("model_output.error", step.start.get("error"))
        if error:
            self.failure = self.failure or provider_error(error, 200)

    def make_call(self, step: _Step, position: int) -> ToolCall:
        """A whole step carries ``arguments`` as an object; a stream may carry them as JSON text
        deltas (``arguments_delta``), and with none the start step's object stands."""
        name = step.start.get("name")
        if not isinstance(name, str) or not name:
            self.note(deviation("tool_call_missing_name", f"function_call step {position} has no name"))
        buffer = "".join(step.arguments)
        raw, wire_type = (buffer, "string") if buffer else (step.start.get("arguments"), "object")
        if buffer and step.start.get("arguments") not in (None, {}):
            self.note(
                deviation(
                    "arguments_in_start_and_deltas",
                    f"function_call step {position} has arguments in step.start and as deltas; "
                    "the deltas are read",
                )
            )
        call, findings = make_call(str(name or ""), raw, step.start.get("id"), position, wire_type=wire_type)
        for finding in findings:
            self.note(finding)
        return call

    def check_status(self, calls: list[ToolCall]) -> None:
        """A turn with function calls awaits their results: status ``requires_action`` exactly then."""
        if self.status is None and self.error is None:
            self.note(deviation("interaction_status_missing", "the interaction has no status"))
        if self.status in UNFINISHED and (self.completed or not self.stream):
            self.note(
                deviation(
                    "interaction_unfinished",
                    f"status {self.status!r}: the interaction has not finished, so the turn holds no "
                    "answer (a background interaction must be polled)",
                )
            )
        if calls and self.status not in (CALLS_STATUS, None):
            self.note(
                deviation(
                    f"status_{id_part(self.status)}_with_function_calls",
                    f"status is {self.status!r} although the turn has function_call steps (expected "
                    f"{CALLS_STATUS!r})",
                )
            )
        if not calls and self.status == CALLS_STATUS:
            self.note(
                deviation(
                    "status_requires_action_without_function_call",
                    "status is 'requires_action' but the turn has no function_call step",
                )
            )


def result_value(result: ToolResult) -> Any:
    """A ``function_result``'s ``result``: the text, the JSON value, or a list of content items
    (``text`` and ``image`` with base64 data) [GI8]."""
    if result.form == "parts":
        return [
            {"type": "text", "text": p.text}
            if p.kind == "text"
            else {"type": "image", "data": p.data, "mime_type": p.media_type}
            for p in result.parts
        ]
    return result.value()
