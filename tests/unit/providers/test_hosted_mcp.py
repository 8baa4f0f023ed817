"""Hosted MCP in the adapters: the Responses ``mcp`` tool and its items, Anthropic's MCP connector
and its blocks, declared in requests and read whole and streamed, hostile shapes included."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from harness.model import HOSTED_APPROVALS, HostedServer, Message, ParsedTurn, ToolChoice, WireResponse
from harness.providers import RequestOptions
from harness.providers.anthropic import AnthropicMessagesAdapter
from harness.providers.openai_responses import OpenAIResponsesAdapter

ASK = [Message("user", "Where is Point defined?")]
SERVERS = (
    HostedServer(
        "codeindex",
        "https://mcp.example.com/mcp",
        ("find_symbol",),
        "always",
        {"Authorization": "Bearer tok123456"},
    ),
    HostedServer("git", "stdio://git"),
)


def ids(turn: ParsedTurn) -> set[str]:
    return {f.check_id for f in turn.findings}


def sse(*events: dict[str, Any]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def responses(body: Any, *, stream: bool = False) -> ParsedTurn:
    text = body if isinstance(body, str) else json.dumps(body)
    return OpenAIResponsesAdapter().parse(WireResponse(200, text), stream=stream)


def anthropic(body: Any, *, stream: bool = False) -> ParsedTurn:
    text = body if isinstance(body, str) else json.dumps(body)
    return AnthropicMessagesAdapter().parse(WireResponse(200, text), stream=stream)


LISTING = {
    "id": "mcpl_1",
    "type": "mcp_list_tools",
    "server_label": "codeindex",
    "tools": [{"name": "find_symbol", "input_schema": {"type": "object"}}],
}
CALL = {
    "id": "mcp_1",
    "type": "mcp_call",
    "server_label": "codeindex",
    "name": "find_symbol",
    "arguments": '{"name": "Point"}',
    "output": "src/geometry.py:8",
    "error": None,
    "approval_request_id": "mcpr_1",
}
MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "content": [{"type": "output_text", "text": "In geometry.py.", "annotations": []}],
}


def whole(*output: dict[str, Any]) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "status": "completed", "output": list(output)}


def test_responses_declares_each_server_as_an_mcp_tool_beside_the_functions() -> None:
    wire = OpenAIResponsesAdapter().build_request(
        ASK, (), ToolChoice(), RequestOptions("m", hosted_mcp=SERVERS)
    )
    assert wire.body["tools"] == [
        {
            "type": "mcp",
            "server_label": "codeindex",
            "server_url": "https://mcp.example.com/mcp",
            "allowed_tools": ["find_symbol"],
            "require_approval": "always",
            "headers": {"Authorization": "Bearer tok123456"},
        },
        {"type": "mcp", "server_label": "git", "server_url": "stdio://git", "require_approval": "never"},
    ]
    assert wire.body["tool_choice"] == "auto"
    plain = OpenAIResponsesAdapter().build_request(ASK, (), ToolChoice(), RequestOptions("m"))
    assert "tools" not in plain.body  # no hosted server: the request is as it always was


def test_responses_sends_the_harness_approvals_as_approval_responses() -> None:
    answer = Message("user", extra={HOSTED_APPROVALS: [{"id": "mcpr_1", "approve": True}]})
    wire = OpenAIResponsesAdapter().build_request([*ASK, answer], (), ToolChoice(), RequestOptions("m"))
    assert wire.body["input"][-1] == {
        "type": "mcp_approval_response",
        "approval_request_id": "mcpr_1",
        "approve": True,
    }


def test_responses_reads_listing_call_and_text_whole_and_streamed_alike() -> None:
    body = whole(LISTING, CALL, MESSAGE)
    turn = responses(body)
    assert turn.tool_calls == [] and turn.text == "In geometry.py."
    listing, call = turn.hosted
    assert (listing.kind, listing.server, listing.tools) == ("list_tools", "codeindex", ["find_symbol"])
    assert (call.kind, call.server, call.name, call.arguments) == (
        "call",
        "codeindex",
        "find_symbol",
        {"name": "Point"},
    )
    assert (call.output, call.error, call.approval, call.id) == ("src/geometry.py:8", None, "mcpr_1", "mcp_1")
    events: list[dict[str, Any]] = [{"type": "response.created", "response": {**body, "output": []}}]
    for index, item in enumerate(body["output"]):
        added = {**item, "output": None} if item["type"] == "mcp_call" else item
        events.append({"type": "response.output_item.added", "output_index": index, "item": added})
        if item["type"] == "mcp_call":
            at = {"item_id": item["id"], "output_index": index}
            events.append({"type": "response.mcp_call_arguments.delta", **at, "delta": '{"name"'})
            events.append({"type": "response.mcp_call.completed", **at})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": body})
    streamed = responses(sse(*events), stream=True)
    assert streamed.hosted == turn.hosted and streamed.text == turn.text
    assert not [f for f in streamed.findings if f.severity != "info"]


def test_responses_approval_request_and_a_failed_listing() -> None:
    asked = {
        "id": "mcpr_1",
        "type": "mcp_approval_request",
        "server_label": "codeindex",
        "name": "find_symbol",
        "arguments": "{}",
    }
    failed = {**LISTING, "tools": [], "error": "connection refused"}
    turn = responses(whole(failed, asked))
    assert [(h.kind, h.error) for h in turn.hosted] == [
        ("list_tools", "connection refused"),
        ("approval_request", None),
    ]
    assert turn.hosted[1].id == "mcpr_1" and turn.tool_calls == []


def test_responses_hostile_hosted_items_are_findings_not_crashes() -> None:
    hostile = [
        {"type": "mcp_call", "name": 7, "arguments": "{not json", "output": None},
        {
            "type": "mcp_call",
            "server_label": ["x"],
            "name": "t",
            "arguments": {"a": 1},
            "output": 3,
            "error": {"code": 1},
        },
        {"type": "mcp_list_tools", "server_label": "s", "tools": "nope"},
        {"type": "mcp_list_tools", "server_label": "s", "tools": [1, {"name": None}, {"name": "ok"}]},
    ]
    turn = responses(whole(*hostile))
    found = ids(turn)
    assert {
        "wire.hosted_call_without_server",
        "wire.hosted_call_without_name",
        "wire.field_wrong_type",
    } <= found
    assert "wire.hosted_call_without_output" in found  # the first call has neither output nor error
    first, second, bad_list, mixed = turn.hosted
    assert first.arguments is None and first.raw_arguments == "{not json"
    assert second.server == "" and second.error == "{'code': 1}" and second.output is None
    assert bad_list.tools == [] and mixed.tools == ["ok"]


def test_anthropic_declares_servers_and_toolsets_with_the_beta_header() -> None:
    wire = AnthropicMessagesAdapter().build_request(
        ASK, (), ToolChoice(), RequestOptions("m", hosted_mcp=SERVERS)
    )
    assert wire.headers["anthropic-beta"] == "mcp-client-2025-11-20"
    assert wire.body["mcp_servers"] == [
        {
            "type": "url",
            "url": "https://mcp.example.com/mcp",
            "name": "codeindex",
            "authorization_token": "tok123456",
        },
        {"type": "url", "url": "stdio://git", "name": "git"},
    ]
    assert wire.body["tools"] == [
        {
            "type": "mcp_toolset",
            "mcp_server_name": "codeindex",
            "default_config": {"enabled": False},
            "configs": {"find_symbol": {"enabled": True}},
        },
        {"type": "mcp_toolset", "mcp_server_name": "git"},
    ]
    # the connector has no approval step: asked for one, the request says so
    assert "wire.hosted_approval_unsupported" in {f.check_id for f in wire.findings}
    plain = AnthropicMessagesAdapter().build_request(ASK, (), ToolChoice(), RequestOptions("m"))
    assert "anthropic-beta" not in plain.headers and "mcp_servers" not in plain.body


USE = {
    "type": "mcp_tool_use",
    "id": "mcptoolu_1",
    "name": "find_symbol",
    "server_name": "codeindex",
    "input": {"name": "Point"},
}
RESULT = {
    "type": "mcp_tool_result",
    "tool_use_id": "mcptoolu_1",
    "is_error": False,
    "content": [{"type": "text", "text": "src/geometry.py:8"}],
}


def test_anthropic_reads_use_and_result_blocks_whole_and_streamed_alike() -> None:
    message = {
        "type": "message",
        "role": "assistant",
        "content": [USE, RESULT, {"type": "text", "text": "In geometry.py."}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 5, "output_tokens": 5},
    }
    turn = anthropic(message)
    assert turn.tool_calls == [] and turn.text == "In geometry.py."
    (call,) = turn.hosted
    assert (call.server, call.name, call.arguments, call.output, call.error) == (
        "codeindex",
        "find_symbol",
        {"name": "Point"},
        "src/geometry.py:8",
        None,
    )
    assert turn.extra["anthropic_content"][:2] == [USE, RESULT]  # replayed as received
    head = {**message, "content": [], "stop_reason": None}
    events = [
        {"type": "message_start", "message": head},
        {"type": "content_block_start", "index": 0, "content_block": {**USE, "input": {}}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"name": '},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '"Point"}'},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": RESULT},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "text_delta", "text": "In geometry.py."},
        },
        {"type": "content_block_stop", "index": 2},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    ]
    streamed = anthropic(sse(*events), stream=True)
    # the same call; its raw arguments are as each wire carried them (an object, the joined deltas)
    assert [dataclasses.replace(h, raw_arguments=None) for h in streamed.hosted] == [
        dataclasses.replace(h, raw_arguments=None) for h in turn.hosted
    ]
    assert streamed.hosted[0].raw_arguments == '{"name": "Point"}' and streamed.text == turn.text
    assert streamed.extra["anthropic_content"][:2] == [USE, RESULT]  # the streamed input filled in


def test_anthropic_hostile_blocks_are_findings() -> None:
    orphan = {**RESULT, "tool_use_id": "mcptoolu_9"}
    unanswered = {**USE, "id": "mcptoolu_2", "server_name": None, "input": "{bad"}
    failing = {**RESULT, "is_error": True, "content": "boom"}
    message = {
        "type": "message",
        "role": "assistant",
        "content": [orphan, USE, failing, unanswered],
        "stop_reason": "end_turn",
    }
    turn = anthropic(message)
    found = ids(turn)
    assert {
        "wire.hosted_result_without_call",
        "wire.hosted_call_without_output",
        "wire.hosted_call_without_server",
    } <= found
    first, second = turn.hosted
    assert (first.error, first.output) == ("boom", None)
    assert second.arguments is None and second.server == ""
