"""The anthropic-messages adapter: request shapes, whole and streamed parses, errors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.model import Message, ParsedTurn, ToolCall, ToolChoice, ToolResult, ToolSpec, WireResponse
from harness.providers import RequestOptions, adapter_class
from harness.providers.anthropic import AnthropicMessagesAdapter, anthropic_id

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = ToolSpec("weather", "Weather for a city", SCHEMA)


def build(messages: list[Message], choice: ToolChoice | None = None, **options: Any) -> Any:
    return AnthropicMessagesAdapter().build_request(
        messages, [WEATHER], choice or ToolChoice(), RequestOptions("claude-test", **options)
    )


def parse(body: Any, *, stream: bool = False, status: int = 200) -> ParsedTurn:
    text = body if isinstance(body, str) else json.dumps(body)
    return AnthropicMessagesAdapter().parse(WireResponse(status, text), stream=stream)


def sse(*events: dict[str, Any]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def delta(index: int, kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": {"type": kind, **fields}}


def ids(turn: ParsedTurn) -> set[str]:
    return {f.check_id for f in turn.findings}


def call(call_id: str, name: str = "weather", city: str = "Paris") -> ToolCall:
    return ToolCall(name, {"city": city}, {"city": city}, call_id, call_id)


def result(call_id: str, content: str, *, is_error: bool = False) -> Message:
    return Message("tool", tool_result=ToolResult(call_id, "weather", content, is_error))


# -- requests -------------------------------------------------------------


def test_registered_with_its_path_and_auth_header() -> None:
    adapter = adapter_class("anthropic-messages")()
    assert isinstance(adapter, AnthropicMessagesAdapter)
    assert adapter.default_path == "/v1/messages"
    assert adapter.auth_headers("k") == {"x-api-key": "k"}


def test_system_goes_top_level_and_defaults_are_set() -> None:
    request = build([Message("system", "Be brief."), Message("user", "Hi")], stream=True, temperature=0.2)
    assert request.path == "/v1/messages"
    assert request.headers == {"anthropic-version": "2023-06-01"}
    assert request.body["system"] == "Be brief."
    assert request.body["messages"] == [{"role": "user", "content": "Hi"}]
    assert request.body["max_tokens"] == 1024
    assert request.body["temperature"] == 0.2
    assert request.body["stream"] is True
    assert request.body["tools"] == [
        {"name": "weather", "description": "Weather for a city", "input_schema": WEATHER.parameters}
    ]
    assert build([Message("user", "Hi")], max_tokens=50).body["max_tokens"] == 50


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        (ToolChoice("auto"), {"type": "auto", "disable_parallel_tool_use": True}),
        (ToolChoice("required"), {"type": "any", "disable_parallel_tool_use": True}),
        (
            ToolChoice("named", "weather"),
            {"type": "tool", "name": "weather", "disable_parallel_tool_use": True},
        ),
        (ToolChoice("none"), {"type": "none"}),
    ],
)
def test_tool_choice_carries_disable_parallel_tool_use(choice: ToolChoice, wire: dict[str, Any]) -> None:
    request = build([Message("user", "Hi")], choice, parallel_tool_calls=False)
    assert request.body["tool_choice"] == wire
    noted = {f.check_id for f in request.findings}
    assert ("wire.parallel_tool_calls_not_applicable" in noted) == (choice.mode == "none")


def test_tool_choice_without_parallel_setting_is_plain() -> None:
    assert build([Message("user", "Hi")], ToolChoice("required")).body["tool_choice"] == {"type": "any"}


def test_tool_results_become_one_user_message_with_results_first() -> None:
    messages = [
        Message("user", "Weather in Paris and Rome?"),
        Message("assistant", "Checking.", [call("toolu_1"), call("toolu_2", city="Rome")]),
        result("toolu_1", "21C"),
        result("toolu_2", "city not found", is_error=True),
        Message("user", "And tomorrow?"),
    ]
    wire = build(messages).body["messages"]
    assert [m["role"] for m in wire] == ["user", "assistant", "user"]
    assert wire[1]["content"] == [
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "toolu_2", "name": "weather", "input": {"city": "Rome"}},
    ]
    assert wire[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "21C"},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "city not found", "is_error": True},
        {"type": "text", "text": "And tomorrow?"},
    ]


def test_ids_breaking_the_rule_are_rewritten_the_same_way_in_use_and_result() -> None:
    request = build(
        [
            Message("user", "Hi"),
            Message("assistant", None, [call("functions.weather:0")]),
            result("functions.weather:0", "21C"),
        ]
    )
    use_id = request.body["messages"][1]["content"][0]["id"]
    assert use_id == anthropic_id("functions.weather:0") != "functions.weather:0"
    assert request.body["messages"][2]["content"][0]["tool_use_id"] == use_id
    assert "wire.id_rewritten" in {f.check_id for f in request.findings}
    assert anthropic_id("toolu_01A-b_c") == "toolu_01A-b_c"


def test_thinking_blocks_are_replayed_unchanged() -> None:
    content = [
        {"type": "thinking", "thinking": "The user wants weather.", "signature": "c2lnbmF0dXJl"},
        {"type": "tool_use", "id": "toolu_9", "name": "weather", "input": {"city": "Paris"}},
    ]
    turn = parse(
        {
            "type": "message",
            "role": "assistant",
            "content": content,
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 5, "output_tokens": 7},
        }
    )
    assert turn.reasoning == "The user wants weather."
    request = build([Message("user", "Weather?"), turn.as_message(), result("toolu_9", "21C")])
    assert request.body["messages"][1]["content"] == content


# -- responses ------------------------------------------------------------


def test_whole_message_with_tool_use_and_wrong_stop_reason() -> None:
    turn = parse(
        {
            "type": "message",
            "role": "assistant",
            "stop_reason": "end_turn",
            "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Oslo"}},
            ],
            "usage": {"input_tokens": 11, "output_tokens": 3},
        }
    )
    assert [(c.wire_id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("toolu_1", "weather", {"city": "Oslo"})
    ]
    assert turn.text == "Let me look."
    assert turn.finish_reason == "end_turn"
    assert turn.usage is not None and (turn.usage.input_tokens, turn.usage.output_tokens) == (11, 3)
    assert {"wire.stop_reason_end_turn_with_tool_use", "wire.text_with_tool_calls"} <= ids(turn)
    assert "anthropic_content" not in turn.extra


def test_tool_use_stop_reason_without_tool_use_is_noted() -> None:
    turn = parse({"content": [{"type": "text", "text": "Done."}], "stop_reason": "tool_use"})
    assert turn.tool_calls == []
    assert "wire.stop_reason_tool_use_without_tool_use" in ids(turn)


def test_stream_assembles_text_and_input_json_and_notes_missing_message_stop() -> None:
    body = sse(
        {
            "type": "message_start",
            "message": {"content": [], "usage": {"input_tokens": 20, "output_tokens": 1}},
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "ping"},
        delta(0, "text_delta", text="On "),
        delta(0, "text_delta", text="it."),
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_5", "name": "weather", "input": {}},
        },
        delta(1, "input_json_delta", partial_json=""),
        delta(1, "input_json_delta", partial_json='{"ci'),
        delta(1, "input_json_delta", partial_json='ty": "Rome"}'),
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}},
    )
    turn = parse(body, stream=True)
    assert turn.text == "On it."
    assert [(c.id, c.arguments) for c in turn.tool_calls] == [("toolu_5", {"city": "Rome"})]
    assert turn.finish_reason == "tool_use"
    assert turn.usage is not None and (turn.usage.input_tokens, turn.usage.output_tokens) == (20, 30)
    assert {"wire.stream_without_message_stop", "wire.empty_partial_json_delta"} <= ids(turn)
    assert turn.error is None


def test_streamed_tool_without_arguments_gets_empty_object() -> None:
    body = sse(
        {"type": "message_start", "message": {"content": []}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_7", "name": "now", "input": {}},
        },
        delta(0, "input_json_delta", partial_json=""),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        {"type": "message_stop"},
    )
    turn = parse(body, stream=True)
    assert [(c.name, c.arguments, c.parse_error) for c in turn.tool_calls] == [("now", {}, None)]
    assert "wire.empty_partial_json_delta" in ids(turn)
    assert "wire.stream_without_message_stop" not in ids(turn)


def test_streamed_thinking_is_reasoning_and_kept_for_replay() -> None:
    body = sse(
        {"type": "message_start", "message": {"content": []}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
        delta(0, "thinking_delta", thinking="Hmm."),
        delta(0, "signature_delta", signature="U0lH"),
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        delta(1, "text_delta", text="Hello"),
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
        {"type": "message_stop"},
    )
    turn = parse(body, stream=True)
    assert (turn.text, turn.reasoning) == ("Hello", "Hmm.")
    assert turn.extra["anthropic_content"] == [
        {"type": "thinking", "thinking": "Hmm.", "signature": "U0lH"},
        {"type": "text", "text": "Hello"},
    ]


def test_error_event_in_stream_is_a_provider_error() -> None:
    body = sse(
        {"type": "message_start", "message": {"content": []}},
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    )
    turn = parse(body, stream=True)
    assert turn.error is not None
    assert (turn.error.status, turn.error.code, turn.error.message) == (200, "overloaded_error", "Overloaded")
    assert "wire.error_event_in_stream" in ids(turn)


def test_http_error_body() -> None:
    error = {"type": "invalid_request_error", "message": "max_tokens: required"}
    turn = parse({"type": "error", "error": error, "request_id": "req_1"}, status=400)
    assert turn.error is not None
    assert (turn.error.status, turn.error.code, turn.error.message) == (
        400,
        "invalid_request_error",
        "max_tokens: required",
    )
    assert turn.tool_calls == []
