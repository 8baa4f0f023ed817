"""The gemini-generate adapter: request shapes, whole and streamed parses, errors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.model import Message, ParsedTurn, ToolCall, ToolChoice, ToolResult, ToolSpec, WireResponse
from harness.providers import RequestOptions, adapter_class
from harness.providers.gemini import GeminiGenerateAdapter

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
WEATHER = ToolSpec("weather", "Weather for a city", SCHEMA)


def build(messages: list[Message], choice: ToolChoice | None = None, **options: Any) -> Any:
    return GeminiGenerateAdapter().build_request(
        messages, [WEATHER], choice or ToolChoice(), RequestOptions("gemini-2.5-flash", **options)
    )


def parse(body: Any, *, stream: bool = False, status: int = 200) -> ParsedTurn:
    text = body if isinstance(body, str) else json.dumps(body)
    return GeminiGenerateAdapter().parse(WireResponse(status, text), stream=stream)


def response(
    *parts: dict[str, Any],
    finish: Any = None,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], **({"usageMetadata": usage} if usage else {})}


def sse(*chunks: dict[str, Any]) -> str:
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks)


def ids(turn: ParsedTurn) -> set[str]:
    return {f.check_id for f in turn.findings}


# -- requests -------------------------------------------------------------


def test_registered_with_its_auth_header() -> None:
    adapter = adapter_class("gemini-generate")()
    assert isinstance(adapter, GeminiGenerateAdapter)
    assert adapter.auth_headers("k") == {"x-goog-api-key": "k"}


def test_path_depends_on_model_and_streaming() -> None:
    assert build([Message("user", "Hi")]).path == "/v1beta/models/gemini-2.5-flash:generateContent"
    streamed = build([Message("user", "Hi")], stream=True)
    assert streamed.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert streamed.stream is True


def test_system_tools_and_generation_config() -> None:
    body = build(
        [Message("system", "Be brief."), Message("user", "Hi")], temperature=0.0, max_tokens=64, seed=7
    ).body
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Hi"}]}]
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {"name": "weather", "description": "Weather for a city", "parametersJsonSchema": SCHEMA}
            ]
        }
    ]
    assert body["generationConfig"] == {"temperature": 0.0, "maxOutputTokens": 64, "seed": 7}


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        (ToolChoice("auto"), {"mode": "AUTO"}),
        (ToolChoice("required"), {"mode": "ANY"}),
        (ToolChoice("none"), {"mode": "NONE"}),
        (ToolChoice("named", "weather"), {"mode": "ANY", "allowedFunctionNames": ["weather"]}),
    ],
)
def test_tool_choice_modes(choice: ToolChoice, config: dict[str, Any]) -> None:
    assert build([Message("user", "Hi")], choice).body["toolConfig"] == {"functionCallingConfig": config}


def test_parallel_tool_calls_cannot_be_sent_and_is_noted() -> None:
    request = build([Message("user", "Hi")], parallel_tool_calls=False)
    assert "wire.parallel_tool_calls_unsupported" in {f.check_id for f in request.findings}
    assert "parallel_tool_calls" not in json.dumps(request.body)


def test_tool_results_share_one_user_content_with_ids_only_from_the_wire() -> None:
    with_id = ToolCall("weather", {"city": "Paris"}, {"city": "Paris"}, "fc_1", "fc_1")
    synthesized = ToolCall("weather", {"city": "Rome"}, {"city": "Rome"}, "h1234abcd", None, 1)
    messages = [
        Message("user", "Paris and Rome?"),
        Message("assistant", None, [with_id, synthesized]),
        Message("tool", tool_result=ToolResult("fc_1", "weather", "21C")),
        Message("tool", tool_result=ToolResult("h1234abcd", "weather", "no such city", is_error=True)),
        Message("user", "Thanks"),
    ]
    contents = build(messages).body["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user", "user"]
    assert contents[1]["parts"] == [
        {"functionCall": {"name": "weather", "args": {"city": "Paris"}, "id": "fc_1"}},
        {"functionCall": {"name": "weather", "args": {"city": "Rome"}}},
    ]
    assert contents[2]["parts"] == [
        {"functionResponse": {"name": "weather", "id": "fc_1", "response": {"result": "21C"}}},
        {"functionResponse": {"name": "weather", "response": {"error": "no such city"}}},
    ]


def test_thought_signatures_round_trip_unchanged() -> None:
    turn = parse(
        response(
            {"text": "Let me check", "thoughtSignature": "VEVYVA=="},
            {"functionCall": {"name": "weather", "args": {"city": "Paris"}}, "thoughtSignature": "Q0FMTA=="},
            finish="STOP",
        )
    )
    assert turn.tool_calls[0].extra == {"thoughtSignature": "Q0FMTA=="}
    assert {"wire.thought_signature_on_function_call", "wire.text_with_tool_calls"} <= ids(turn)
    model = build([Message("user", "Weather?"), turn.as_message()]).body["contents"][1]
    assert model == {
        "role": "model",
        "parts": [
            {"text": "Let me check", "thoughtSignature": "VEVYVA=="},
            {"functionCall": {"name": "weather", "args": {"city": "Paris"}}, "thoughtSignature": "Q0FMTA=="},
        ],
    }


# -- responses ------------------------------------------------------------


def test_whole_response_with_integer_finish_reason_and_no_id() -> None:
    turn = parse(
        response(
            {"functionCall": {"name": "weather", "args": {"city": "Oslo"}}},
            finish=1,
            usage={"promptTokenCount": 12, "candidatesTokenCount": 4},
        )
    )
    assert turn.finish_reason == "STOP"
    assert [(c.wire_id, c.name, c.arguments) for c in turn.tool_calls] == [
        (None, "weather", {"city": "Oslo"})
    ]
    assert turn.tool_calls[0].id_synthesized
    assert turn.usage is not None and (turn.usage.input_tokens, turn.usage.output_tokens) == (12, 4)
    assert {"wire.finish_reason_integer_enum", "wire.missing_id"} <= ids(turn)


def test_malformed_function_call_is_an_error_finding() -> None:
    turn = parse(response(finish="MALFORMED_FUNCTION_CALL"))
    failed = [f for f in turn.findings if f.check_id == "wire.failed_tool_call_finish"]
    assert [f.severity for f in failed] == ["error"]
    assert turn.tool_calls == []


def test_sse_stream_merges_text_and_skips_thoughts() -> None:
    body = sse(
        response({"text": "thinking...", "thought": True}),
        response({"text": "It is "}),
        response({"text": "sunny."}, finish="STOP", usage={"promptTokenCount": 3, "candidatesTokenCount": 5}),
    )
    turn = parse(body, stream=True)
    assert (turn.text, turn.reasoning, turn.finish_reason) == ("It is sunny.", "thinking...", "STOP")
    assert turn.extra["gemini_text_parts"] == [
        {"text": "thinking...", "thought": True},
        {"text": "It is sunny."},
    ]


def test_vertex_partial_args_are_assembled_by_json_path() -> None:
    body = sse(
        response({"functionCall": {"name": "book", "id": "fc_9", "willContinue": True}}),
        response(
            {
                "functionCall": {
                    "willContinue": True,
                    "partialArgs": [
                        {"jsonPath": "$.city", "stringValue": "San ", "willContinue": True},
                        {"jsonPath": "$.guests", "numberValue": 2},
                    ],
                }
            }
        ),
        response(
            {
                "functionCall": {
                    "willContinue": True,
                    "partialArgs": [
                        {"jsonPath": "$.city", "stringValue": "Francisco"},
                        {"jsonPath": "$.rooms[0].view", "boolValue": True},
                    ],
                }
            }
        ),
        response({"functionCall": {}}, finish="STOP"),
    )
    turn = parse(body, stream=True)
    assert [(c.wire_id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("fc_9", "book", {"city": "San Francisco", "guests": 2, "rooms": [{"view": True}]})
    ]
    assert {"wire.streamed_partial_args", "wire.empty_function_call_part"} <= ids(turn)


def test_stream_without_finish_reason_is_noted() -> None:
    turn = parse(sse(response({"text": "cut"})), stream=True)
    assert turn.text == "cut"
    assert "wire.stream_without_finish_reason" in ids(turn)


def test_json_array_stream_is_noted() -> None:
    body = json.dumps([response({"text": "a"}), response({"text": "b"}, finish="STOP")])
    turn = parse(body, stream=True)
    assert (turn.text, turn.finish_reason) == ("ab", "STOP")
    assert "wire.stream_json_array" in ids(turn)


def test_http_error_uses_the_status_string_as_code() -> None:
    error = {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED"}
    turn = parse({"error": error}, status=429)
    assert turn.error is not None
    assert (turn.error.status, turn.error.code, turn.error.message) == (
        429,
        "RESOURCE_EXHAUSTED",
        "Quota exceeded",
    )


def test_error_chunk_inside_a_stream() -> None:
    body = sse(
        response({"text": "Hel"}),
        {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}},
    )
    turn = parse(body, stream=True)
    assert turn.error is not None
    assert (turn.error.status, turn.error.code) == (503, "UNAVAILABLE")
    assert "wire.error_chunk_in_stream" in ids(turn)
    assert "wire.stream_without_finish_reason" not in ids(turn)
