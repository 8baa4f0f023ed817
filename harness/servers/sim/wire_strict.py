"""The simulator as strict as the provider: every request is read as the provider reads it, and
what the provider refuses is refused, in its words and its error shape.

A request is read back with the format's own request reader
(:meth:`harness.providers.adapter.Adapter.read_request`), whose findings name every departure
from the format; the departures a provider refuses are its *rules* (:data:`RULES`), and each
format says, in :data:`REFUSALS`, which rules its provider enforces, with the status and the
message it answers and where that behaviour is documented or was recorded (a citation key of
:mod:`harness.providers.sources`). The refusal carries the rule in an ``x-sim-rule`` header, so
whoever reads the exchange can name the rule that was broken.

Beyond refusing, the scripted model answers what it was sent (:func:`honoured`): a forced
``tool_choice`` is obeyed and an unforced one does not force the call the scenario forces, and
its final answer depends on the tool results it got (an empty or missing result changes it).
"""

from __future__ import annotations

import ast
import contextlib
import re
from dataclasses import dataclass
from typing import Any

from harness.model import Message, ToolChoice
from harness.providers import adapter_class
from harness.providers.adapter import RequestView
from harness.scenarios import Scenario
from harness.servers.sim.script import Conversation, Reply

RULE_HEADER = "x-sim-rule"
"""The response header naming the rule a refused request broke (``<rule> [<sources>]``)."""


@dataclass(frozen=True)
class Rule:
    """A rule of the request a provider enforces: the request reader's findings that break it."""

    id: str
    says: str
    codes: frozenset[str]


RULES = {
    rule.id: rule
    for rule in (
        Rule(
            "history.result_without_call",
            "every tool result answers, by its id, a call of the assistant turn just before it",
            frozenset({"wire.request_tool_result_unknown_call", "wire.request_tool_result_unmatched"}),
        ),
        Rule(
            "history.call_without_result",
            "every call of an assistant turn gets its result before the next user or assistant "
            "message (the results of parallel calls complete)",
            frozenset({"wire.request_tool_calls_unanswered"}),
        ),
        Rule(
            "history.duplicate_call_ids",
            "the calls of a turn have distinct ids",
            frozenset({"wire.duplicate_tool_call_ids"}),
        ),
        Rule(
            "tool_choice.form",
            "tool_choice is written in one of the format's forms",
            frozenset({"wire.request_tool_choice_shape", "wire.request_tool_choice_unknown"}),
        ),
        Rule(
            "tool_choice.offered",
            "a named tool_choice names an offered tool, and a forcing tool_choice comes with tools",
            frozenset({"wire.request_tool_choice_unknown_tool"}),
        ),
        Rule(
            "request.schema",
            "every field has the type the format gives it",
            frozenset({"wire.request_malformed", "wire.request_too_deep"}),
        ),
    )
}


@dataclass(frozen=True)
class Answer:
    """How a provider answers a request breaking one rule: the status, the message (``{where}``
    is the place in the body, ``{ids}`` the call ids, ``{detail}`` the reader's words) and the
    citation keys that hold it."""

    status: int
    message: str
    sources: tuple[str, ...]


_SCHEMA = Answer(400, "Invalid request: {detail}", ("O1",))
_OPENAI = {
    "history.result_without_call": Answer(
        400,
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with "
        "'tool_calls'.",
        ("O20",),
    ),
    "history.call_without_result": Answer(
        400,
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}",
        ("O16",),
    ),
    "tool_choice.form": Answer(
        400, "Missing required parameter: 'tool_choice.type'. ({detail})", ("O2", "O23")
    ),
    "tool_choice.offered": Answer(400, "Invalid value for 'tool_choice': {detail}", ("O2",)),
    "request.schema": _SCHEMA,
}
_MISTRAL = {
    **_OPENAI,
    "history.result_without_call": Answer(
        400, "Not the same number of function calls and responses", ("M14",)
    ),
    "history.call_without_result": Answer(
        400, "Not the same number of function calls and responses", ("M14",)
    ),
    "tool_choice.form": Answer(400, "Invalid tool_choice: {detail}", ("M2",)),
    "request.schema": Answer(422, "Invalid request: {detail}", ("M1",)),
}
_ANTHROPIC = {
    "history.result_without_call": Answer(
        400,
        "{where}: unexpected `tool_use_id` found in `tool_result` blocks: {ids}. Each `tool_result` block "
        "must have a corresponding `tool_use` block in the previous message.",
        ("A11",),
    ),
    "history.call_without_result": Answer(
        400,
        "{where}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. Each "
        "`tool_use` block must have a corresponding `tool_result` block in the next message.",
        ("A12",),
    ),
    "history.duplicate_call_ids": Answer(400, "{where}: `tool_use` ids must be unique", ("A17",)),
    "tool_choice.form": Answer(400, "tool_choice: {detail}", ("A2",)),
    "tool_choice.offered": Answer(400, "tool_choice: {detail}", ("A2",)),
    "request.schema": Answer(400, "{where}: {detail}", ("A3",)),
}
_GEMINI = {
    "history.result_without_call": Answer(
        400,
        "Please ensure that function response turn comes immediately after a function call turn.",
        ("G20",),
    ),
    "history.call_without_result": Answer(
        400,
        "Please ensure that the number of function response parts is equal to the number of function call "
        "parts of the function call turn.",
        ("G13",),
    ),
    "tool_choice.form": Answer(
        400, "Invalid value at 'tool_config.function_calling_config' ({detail})", ("G1",)
    ),
    "tool_choice.offered": Answer(
        400, "Invalid value at 'tool_config.function_calling_config' ({detail})", ("G1",)
    ),
    "request.schema": Answer(400, "Invalid JSON payload received. {detail}", ("G3",)),
}
_BEDROCK = {
    "history.result_without_call": Answer(
        400,
        "The number of toolResult blocks at {where} exceeds the number of toolUse blocks of previous turn.",
        ("B1",),
    ),
    "history.call_without_result": Answer(
        400, "Expected toolResult blocks at {where}.content for the following Ids: {ids}", ("B16",)
    ),
    "history.duplicate_call_ids": Answer(400, "{where}: duplicate toolUse ids {ids}", ("B7",)),
    "tool_choice.form": Answer(400, "toolChoice: {detail}", ("B5",)),
    "tool_choice.offered": Answer(400, "toolChoice: {detail}", ("B5",)),
    "request.schema": Answer(400, "{where}: {detail}", ("B1",)),
}
_COHERE = {
    "history.result_without_call": Answer(400, "invalid request: {where}: {detail}", ("CO2",)),
    "history.call_without_result": Answer(400, "invalid request: {where}: {detail}", ("CO2",)),
    "tool_choice.form": Answer(400, "invalid request: tool_choice: {detail}", ("CO1",)),
    "request.schema": Answer(400, "invalid request: {where}: {detail}", ("CO2",)),
}
_RESPONSES = {
    "history.result_without_call": Answer(
        400, "No tool call found for function call output with call_id {ids}.", ("RS1", "RS17")
    ),
    "history.call_without_result": Answer(
        400, "No tool output found for function call {ids}.", ("RS1", "RS17")
    ),
    "tool_choice.form": Answer(400, "Invalid value for 'tool_choice': {detail}", ("RS1",)),
    "tool_choice.offered": Answer(400, "Invalid value for 'tool_choice': {detail}", ("RS1",)),
    "request.schema": Answer(400, "Invalid request: {detail}", ("RS1",)),
}
_INTERACTIONS = {
    "history.result_without_call": Answer(400, "{where}: {detail}", ("GI1",)),
    "history.call_without_result": Answer(400, "{where}: {detail}", ("GI1",)),
    "tool_choice.form": Answer(400, "generation_config.tool_choice: {detail}", ("GI1",)),
    "tool_choice.offered": Answer(400, "generation_config.tool_choice: {detail}", ("GI1",)),
    "request.schema": Answer(400, "{where}: {detail}", ("GI1",)),
}

REFUSALS: dict[str, dict[str, Answer]] = {
    "openai-chat": _OPENAI,
    "mistral-chat": _MISTRAL,
    "ollama-chat": {"request.schema": Answer(400, "json: {detail}", ("OL1",))},
    "anthropic-messages": _ANTHROPIC,
    "gemini-generate": _GEMINI,
    "gemini-interactions": _INTERACTIONS,
    "cohere-chat": _COHERE,
    "openai-responses": _RESPONSES,
    "bedrock-converse": _BEDROCK,
}
"""Format -> the rules its provider enforces and how it answers each. Ollama's ``/api/chat`` takes
any history (it renders the messages into the model's template [OL11]) and has no
``tool_choice`` [OL1]: only a body its Go types cannot hold is refused."""

NO_TOOL_CHOICE = frozenset({"ollama-chat"})
"""Formats without a ``tool_choice``: a scenario's forced choice cannot be sent there [OL1]."""


@dataclass(frozen=True)
class Refusal:
    """A request refused: the rule it broke, the provider's status and message, the sources."""

    rule: str
    status: int
    message: str
    sources: tuple[str, ...]

    @property
    def header(self) -> str:
        """The ``x-sim-rule`` value: the rule and its citation keys."""
        return f"{self.rule} [{', '.join(self.sources)}]"


def read(fmt_name: str, body: dict[str, Any], path: str) -> RequestView:
    """The request as the format's reader reads it."""
    return adapter_class(fmt_name)().read_request(body, path)


def continues_stored(body: dict[str, Any]) -> bool:
    """Whether the request continues a conversation the server stored (it sends only what came
    after the stored turn)."""
    return any(isinstance(body.get(key), str) for key in ("previous_response_id", "previous_interaction_id"))


def refusal(fmt_name: str, view: RequestView, *, stored: bool = False) -> Refusal | None:
    """What the provider of ``fmt_name`` refuses in the request read as ``view`` (the first rule
    broken, in the order of the body), or ``None``. A request that continues a conversation the
    server stored (``stored``: ``previous_response_id``, ``previous_interaction_id``) holds only
    the turns since, so its history is checked by the format's own module against what it stored."""
    answers = REFUSALS.get(fmt_name, {})
    for finding in view.findings:
        rule = next((r for r in RULES.values() if finding.check_id in r.codes), None)
        if stored and rule is not None and rule.id.startswith("history."):
            continue
        if rule is not None and rule.id in answers:
            return _refused(rule.id, answers[rule.id], finding.detail)
    choice = view.tool_choice
    if choice is not None and choice.mode in ("required", "named") and not view.tools:
        answer = answers.get("tool_choice.offered")
        if answer is not None:
            detail = f"tool_choice: {choice.label()!r} is only allowed when tools are specified"
            return _refused("tool_choice.offered", answer, detail)
    return None


def _refused(rule: str, answer: Answer, detail: str) -> Refusal:
    """The answer's message filled from a reader finding's detail (``<where>: <what>``)."""
    where, _, what = detail.partition(": ") if re.match(r"^[\w.\[\]]+: ", detail) else ("", "", detail)
    ids = re.search(r"(\[[^\]]*\])\s*$", what) or re.search(r"for '([^']+)'", what)
    found = ids.group(1) if ids else ""
    if found.startswith("["):
        with contextlib.suppress(ValueError, SyntaxError):
            found = ", ".join(str(i) for i in ast.literal_eval(found))
    dotted = re.sub(r"\[(\d+)\]", r".\1", where)
    message = answer.message.format(where=dotted or "request", ids=found, detail=what or detail)
    return Refusal(rule, answer.status, message, answer.sources)


def honoured(
    reply: Reply, fmt_name: str, scenario: Scenario, view: RequestView, conversation: Conversation
) -> Reply:
    """The scripted reply as a model answers what it was actually sent: ``tool_choice`` none
    makes no call; a named choice calls that tool; a first request that does not force the call
    its scenario forces gets no call (the scenario forces it because a model would not make it
    unforced); and a final answer after an empty or missing tool result says it could not use
    it (so an agent that drops or blanks results fails the scenario's ``final``)."""
    choice = view.tool_choice or ToolChoice("auto")
    if reply.calls:
        if choice.mode == "none":
            return Reply(text="I will answer without the tools: " + (reply.text or "no call was allowed."))
        if choice.mode == "named" and choice.name not in [name for name, _ in reply.calls]:
            return Reply([(str(choice.name), dict(reply.calls[0][1]) if reply.calls else {})])
        forced = scenario.tool_choice.mode in ("required", "named")
        native = bool(view.tools) and fmt_name not in NO_TOOL_CHOICE
        if (
            forced
            and native
            and conversation.assistant_turns == 0
            and choice.mode not in ("required", "named")
        ):
            return Reply(text=UNFORCED)
        return reply
    missing = _unanswered(view.messages)
    if missing and reply.text is not None:
        return Reply(text=f"{UNUSABLE} ({', '.join(missing)})")
    return reply


UNFORCED = "I can answer that without calling a tool."
"""The scripted model's first answer when a scenario forces a call the request does not force."""
UNUSABLE = "I could not use the tool results: they came back empty or not at all"
"""The start of the final answer after an empty or missing tool result."""


def _unanswered(messages: tuple[Message, ...]) -> list[str]:
    """The calls since the last user text message whose result is missing or empty."""
    start = max((i for i, m in enumerate(messages) if m.role == "user" and m.content), default=-1)
    phase = messages[start + 1 :]
    results = {
        (m.tool_result.call_id or m.tool_result.name): m.tool_result.content
        for m in phase
        if m.tool_result is not None
    }
    missing = []
    for message in phase:
        for call in message.tool_calls if message.role == "assistant" else ():
            content = results.get(call.wire_id or call.id or call.name, results.get(call.name))
            if content is None or not content.strip():
                missing.append(call.name)
    return missing
