"""Run records whose every provider-controlled string is the test's choice: the model's text, tool
names, arguments (keys and values), call ids, the finish reason, the provider's error, a tool's
result, the wire bodies, finding details and evidence, and the run's error message. Tests of
the report writers feed them arbitrary Unicode (unit) or injected markup (the browser test).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from harness.model import (
    Finding,
    ParsedTurn,
    ProviderError,
    SentRequest,
    ToolExecution,
    ToolResult,
    Usage,
    WireResponse,
)
from harness.records import CheckResult, RunError, RunRecord, TargetInfo
from tests.helpers.transcripts import call, transcript

PLACES = (
    "text",
    "tool name",
    "argument key",
    "argument value",
    "call id",
    "finish reason",
    "provider error",
    "tool result",
    "response body",
    "finding detail",
    "evidence",
    "note",
    "run error",
)
"""Where a provider's (or a tool's, or an MCP server's) string reaches a record."""

TARGET = TargetInfo("sim-openai", "openai-chat", "m", True, False, "native", "openai")


def records(pick: Callable[[str], str], target: TargetInfo = TARGET) -> list[RunRecord]:
    """A failed run holding ``pick(place)`` at each of :data:`PLACES` but the run error, and a run
    that could not be tested whose error message is ``pick("run error")``: between them, every
    section of every report shows each string."""
    name, key, value = pick("tool name"), pick("argument key"), pick("argument value")
    made = call(name, call_id=pick("call id"), raw=json.dumps({key: value}), **{key: value})
    first = ParsedTurn(text=pick("text"), tool_calls=[made], finish_reason=pick("finish reason"))
    second = ParsedTurn(error=ProviderError(500, pick("provider error"), code=pick("provider error")))
    t = transcript(first, second, stop="provider_error")
    result = pick("tool result")
    t.executions = [ToolExecution(0, made, ToolResult(made.id, name, result, True))]
    wire_call = {
        "id": made.id,
        "type": "function",
        "function": {"name": name, "arguments": made.raw_arguments},
    }
    message = {"role": "assistant", "content": first.text, "tool_calls": [wire_call]}
    choice = {"index": 0, "message": message, "finish_reason": first.finish_reason}
    t.exchanges[0].response = WireResponse(200, json.dumps({"choices": [choice]}))  # as the wire had it
    t.exchanges[1].response = WireResponse(500, pick("response body"))
    t.exchanges[1].request = SentRequest(
        "POST",
        "http://test.invalid/v1/chat/completions",
        {},
        {"messages": [{"role": "tool", "tool_call_id": made.id, "name": name, "content": result}]},
    )
    findings = [
        Finding("wire.odd", "error", False, pick("finding detail"), 0, {"raw": pick("evidence")}),
        Finding("wire.quirk", "warning", False, pick("finding detail"), 1, {pick("evidence"): [value]}),
        Finding("wire.note", "info", False, pick("note"), 0),
    ]
    failed = RunRecord(
        target=target,
        scenario="t.case",
        category="single",
        repeat=0,
        mode="replay",
        score=12.5,
        passed=False,
        error=None,
        checks=(CheckResult.of("protocol.wire", "protocol", 1.0, findings),),
        usage=Usage(12, 3),
        transcript=t,
        outcome="fail",
    )
    error = RunError("ProviderError", pick("run error"), cause="endpoint")
    untested = RunRecord(
        target=target,
        scenario="t.other",
        category="single",
        repeat=0,
        mode="replay",
        score=None,
        passed=False,
        error=error,
        checks=(),
        usage=Usage(),
        transcript=transcript(ParsedTurn(error=ProviderError(503, pick("run error")))),
        outcome="error",
    )
    return [failed, untested]
