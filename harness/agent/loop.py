"""The agent loop: send, parse, execute the calls, send the results back, repeat.

It stops at a final answer (a turn without calls, nor hosted MCP calls awaiting approval: those
it approves, and goes on), at ``max_turns``, at a
repeated identical call (a loop), or at a provider or transport error. A
scenario's follow-ups are sent one by one after each final answer, with the
whole history (calls and results included); each follow-up starts a *phase*
with its own turn budget, and the run stops at the first phase that does not
end in a final answer.
Everything lands in the :class:`~harness.model.Transcript`; nothing here
judges the run (that is the checks' job).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from harness.errors import TransportError
from harness.model import (
    HOSTED_APPROVALS,
    Attempt,
    Exchange,
    Finding,
    Message,
    ParsedTurn,
    ProviderError,
    SentRequest,
    StopReason,
    ToolCall,
    ToolChoice,
    ToolExecution,
    Transcript,
    WireRequest,
)
from harness.providers import Adapter, RequestOptions
from harness.tools.run_tools import RunTools
from harness.transport.send import Sent

Send = Callable[[WireRequest], Sent]


@dataclass
class LoopConfig:
    """How the agent loop drives one conversation: the turn budget of each phase, the
    scenario's ``tool_choice``, the request options, the follow-ups and a hook for the tokens
    each response used."""

    max_turns: int  # per phase: the opening request, then each follow-up
    tool_choice: ToolChoice
    options: RequestOptions
    follow_ups: Sequence[str] = ()
    on_usage: Callable[[int], None] | None = None  # each response's reported tokens (rate limits)


def call_signature(calls: Sequence[ToolCall]) -> list[tuple[str, str]]:
    """What identifies a turn's calls for loop detection: names and canonical arguments."""
    return sorted((c.name, json.dumps(c.arguments, sort_keys=True)) for c in calls)


def turn_choice(first: ToolChoice, turn: int) -> ToolChoice:
    """The scenario's tool_choice applies to the first turn; forcing it again would never let
    the model answer, so ``required`` and named choices become ``auto`` afterwards."""
    if turn == 0 or first.mode in ("auto", "none"):
        return first
    return ToolChoice("auto")


def run_loop(
    transcript: Transcript,
    adapter: Adapter,
    send: Send,
    tools: RunTools,
    messages: Sequence[Message],
    settings: LoopConfig,
) -> Transcript:
    """Drive one conversation to its end, filling ``transcript`` as it goes."""
    conversation = list(messages)
    transcript.tools = tools.specs()
    transcript.findings.extend(f.at(0) for f in adapter.tool_findings(transcript.tools))
    started = time.perf_counter()
    turn = 0
    with ThreadPoolExecutor(max_workers=8, thread_name_prefix="tool") as pool:
        for phase in range(len(settings.follow_ups) + 1):
            if phase:
                if transcript.stop_reason != "final":
                    break
                conversation.append(Message("user", settings.follow_ups[phase - 1]))
            transcript.phases.append(turn)
            previous = None
            for _ in range(settings.max_turns):
                stop = _turn(transcript, adapter, send, tools, conversation, settings, turn, pool, previous)
                turn += 1
                if isinstance(stop, str):
                    transcript.stop_reason = stop
                    break
                previous = stop
            else:
                transcript.stop_reason = "max_turns"
    transcript.messages = conversation
    transcript.elapsed_ms = (time.perf_counter() - started) * 1000
    return transcript


Signature = tuple[list[tuple[str, str]], bool]
"""A turn's call signature and whether one of its calls failed (for loop detection)."""


def _turn(
    transcript: Transcript,
    adapter: Adapter,
    send: Send,
    tools: RunTools,
    conversation: list[Message],
    settings: LoopConfig,
    turn: int,
    pool: ThreadPoolExecutor,
    previous: Signature | None,
) -> StopReason | Signature:
    """One model turn and its tool calls: the stop reason when the phase ends here, else the
    turn's call signature."""
    wire = adapter.build_request(
        conversation, transcript.tools, turn_choice(settings.tool_choice, turn), settings.options
    )
    transcript.findings.extend(finding.at(turn) for finding in wire.findings)
    try:
        sent = send(wire)
    except TransportError as exc:
        parsed = ParsedTurn(error=ProviderError(0, str(exc), "transport_error"))
        request = exc.request
        if not isinstance(request, SentRequest):
            request = SentRequest(wire.method, wire.path, {}, wire.body)
        transcript.findings.extend(f.at(turn) for f in exc.findings if isinstance(f, Finding))
        attempts = [a for a in exc.attempts if isinstance(a, Attempt)]
        transcript.exchanges.append(Exchange(turn, request, None, parsed, attempts=attempts))
        return "transport_error"
    parsed = adapter.parse(sent.response, stream=wire.stream, tools=transcript.tools)
    if settings.on_usage is not None and parsed.usage is not None and parsed.usage.total:
        settings.on_usage(parsed.usage.total)
    parsed.findings = [finding.at(turn) for finding in parsed.findings]
    transcript.findings.extend(finding.at(turn) for finding in sent.findings)
    attempts = sent.attempts if len(sent.attempts) > 1 else []
    transcript.exchanges.append(
        Exchange(turn, sent.request, sent.response, parsed, sent.elapsed_ms, attempts)
    )
    if parsed.error is not None:
        return "provider_error"
    conversation.append(parsed.as_message())
    asked = [h.id for h in parsed.hosted if h.kind == "approval_request" and h.id]
    if not parsed.tool_calls:
        if not asked:
            return "final"
        conversation.append(approvals(asked))
        return [("approve", i) for i in sorted(asked)], False
    signature = call_signature(parsed.tool_calls)
    if previous is not None and signature == previous[0] and not previous[1]:
        transcript.findings.append(
            Finding(
                "loop.repeated_call",
                "error",
                False,
                f"turn {turn} repeats the previous turn's calls with the same arguments "
                f"after they succeeded: {[name for name, _ in signature]}",
                turn,
            )
        )
        return "loop"
    executions = execute(pool, tools, parsed.tool_calls, turn)
    transcript.executions.extend(executions)
    conversation.extend(Message("tool", tool_result=e.result) for e in executions)
    if asked:
        conversation.append(approvals(asked))
    return signature, any(e.result.is_error for e in executions)


def approvals(asked: list[str]) -> Message:
    """The harness's answer to the hosted MCP calls the provider asks it to approve: each one
    approved (the loop tests the wire, not a user's judgement), as the next request sends it."""
    return Message("user", extra={HOSTED_APPROVALS: [{"id": i, "approve": True} for i in asked]})


def execute(
    pool: ThreadPoolExecutor, tools: RunTools, calls: Sequence[ToolCall], turn: int
) -> list[ToolExecution]:
    """Run a turn's calls concurrently, except calls sharing state (one built-in's store, one
    MCP server), which run in call order; results keep the call order."""
    faults = tools.plan(calls)
    lanes: dict[str, list[int]] = {}
    for index, call in enumerate(calls):
        tool = tools.tools.get(call.name)
        key = tool.serial if tool is not None and tool.serial else f"call:{index}"
        lanes.setdefault(key, []).append(index)

    def run(lane: list[int]) -> list[tuple[int, ToolExecution]]:
        return [(i, tools.execute(calls[i], turn, faults[i])) for i in lane]

    if len(lanes) == 1:
        done = run(next(iter(lanes.values())))
    else:
        done = [item for lane in pool.map(run, lanes.values()) for item in lane]
    return [execution for _, execution in sorted(done, key=lambda item: item[0])]
