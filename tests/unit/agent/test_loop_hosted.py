"""The loop and hosted MCP: it approves what the provider's connector asks about and goes on; a
turn whose only calls the provider ran is a final answer."""

from __future__ import annotations

import json
from typing import Any

import httpx

from harness.agent.loop import LoopConfig, run_loop
from harness.model import HostedServer, Message, ToolChoice, ToolSpec, Transcript
from harness.providers import RequestOptions, adapter_class
from harness.tools.run_tools import RunTools, Tool
from harness.transport.send import RetryPolicy, Transport

SPEC = ToolSpec("lookup", "Look a key up.", {"type": "object", "properties": {"key": {"type": "string"}}})
GATED = HostedServer("codeindex", "https://mcp.example.com/mcp", ("find_symbol",), "always")
ASKED = {
    "id": "mcpr_1",
    "type": "mcp_approval_request",
    "server_label": "codeindex",
    "name": "find_symbol",
    "arguments": '{"name": "Point"}',
}
RAN = {
    "id": "mcp_1",
    "type": "mcp_call",
    "server_label": "codeindex",
    "name": "find_symbol",
    "arguments": '{"name": "Point"}',
    "output": "src/geometry.py",
    "error": None,
    "approval_request_id": "mcpr_1",
}
LOOKUP = {
    "id": "fc_1",
    "type": "function_call",
    "call_id": "call_1",
    "name": "lookup",
    "arguments": '{"key": "a"}',
}
TEXT = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "content": [{"type": "output_text", "text": "geometry.py"}],
}


def response(*output: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"resp_{len(output)}", "object": "response", "status": "completed", "output": list(output)}


def drive(*answers: dict[str, Any]) -> tuple[Transcript, list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(200, json=answers[len(seen) - 1])

    transport = Transport(
        "http://test", client_transport=httpx.MockTransport(handler), retry=RetryPolicy(attempts=1)
    )
    tools = RunTools()
    tools.add(Tool(SPEC, lambda a: {"value": a.get("key")}))
    transcript = Transcript("t", "s")
    options = RequestOptions("m", hosted_mcp=(GATED,))
    run_loop(
        transcript,
        adapter_class("openai-responses")(),
        transport.send,
        tools,
        [Message("user", "Where is Point?")],
        LoopConfig(4, ToolChoice("auto"), options),
    )
    return transcript, seen


def test_an_approval_request_is_approved_and_the_run_goes_on_to_its_answer() -> None:
    transcript, seen = drive(response(ASKED), response(RAN, TEXT))
    assert transcript.stop_reason == "final" and transcript.final_text == "geometry.py"
    assert len(seen) == 2 and transcript.executions == []  # the provider ran the call, not the harness
    assert seen[1]["input"][-1] == {
        "type": "mcp_approval_response",
        "approval_request_id": "mcpr_1",
        "approve": True,
    }
    assert [(t, h.name, h.approval) for t, h in transcript.hosted_calls] == [(1, "find_symbol", "mcpr_1")]
    assert [t["type"] for t in seen[0]["tools"]] == ["function", "mcp"]  # the lookup, the hosted server


def test_a_client_call_beside_an_approval_request_gets_both_answers() -> None:
    transcript, seen = drive(response(LOOKUP, ASKED), response(RAN, TEXT))
    assert [e.call.name for e in transcript.executions] == ["lookup"]
    kinds = [item.get("type") for item in seen[1]["input"][-2:]]
    assert kinds == ["function_call_output", "mcp_approval_response"]
    assert transcript.stop_reason == "final"
