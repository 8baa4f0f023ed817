"""The bedrock-converse adapter: request shapes (the model in the path, toolSpec tools, toolChoice
without ``none``, histories in Converse's own shape and name rules), whole and streamed parses
through one accumulator, the binary event stream's faults, errors with their AWS type."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from harness.agent.rechunk import assembled, cut
from harness.model import Message, ParsedTurn, ToolCall, ToolChoice, ToolResult, WireResponse
from harness.providers import RequestOptions, adapter_class
from harness.providers.bedrock import BedrockConverseAdapter
from harness.providers.detection import detect_format
from tests.helpers.eventstream import EVENTSTREAM, b64, event, exception, message, string_header
from tests.helpers.realworld import REALWORLD, cases
from tests.helpers.transcripts import WEATHER

MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
CASES = {c["id"].split("/", 1)[1]: c for c in cases("bedrock-converse")}


def build(messages: list[Message], choice: ToolChoice | None = None, **options: Any) -> Any:
    return BedrockConverseAdapter().build_request(
        messages, [WEATHER], choice or ToolChoice(), RequestOptions(MODEL, **options)
    )


def parse(
    body: Any, *, stream: bool = False, status: int = 200, headers: dict[str, str] | None = None
) -> ParsedTurn:
    if isinstance(body, bytes):
        response = WireResponse(status, b64(body), {"content-type": EVENTSTREAM, **(headers or {})})
    else:
        response = WireResponse(status, body if isinstance(body, str) else json.dumps(body), headers or {})
    return BedrockConverseAdapter().parse(response, stream=stream)


def ids(turn: ParsedTurn) -> set[str]:
    return {f.check_id for f in turn.findings}


def call(call_id: str, name: str = "get_weather") -> ToolCall:
    return ToolCall(name, {"city": "Paris"}, {"city": "Paris"}, call_id, call_id)


def result(call_id: str, content: str, *, is_error: bool = False) -> Message:
    return Message("tool", tool_result=ToolResult(call_id, "get_weather", content, is_error))


def case_turn(name: str) -> ParsedTurn:
    response = CASES[name]["response"]
    headers = {"content-type": response["content_type"]} if response["content_type"] else {}
    return BedrockConverseAdapter().parse(
        WireResponse(response["status"], response["body"], headers), stream=response["stream"]
    )


# -- requests -------------------------------------------------------------------------------------


def test_the_model_goes_in_the_path_and_the_rest_in_converse_shapes() -> None:
    request = build(
        [Message("system", "Be brief."), Message("user", "Weather?")], max_tokens=64, temperature=0
    )
    assert request.path == "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"
    assert request.body == {
        "messages": [{"role": "user", "content": [{"text": "Weather?"}]}],
        "system": [{"text": "Be brief."}],
        "toolConfig": {
            "tools": [
                {
                    "toolSpec": {
                        "name": "get_weather",
                        "inputSchema": {"json": WEATHER.parameters},
                        "description": "Weather.",
                    }
                }
            ],
            "toolChoice": {"auto": {}},
        },
        "inferenceConfig": {"maxTokens": 64, "temperature": 0},
    }
    assert request.headers == {} and request.findings == []
    streamed = build([Message("user", "Weather?")], stream=True)
    assert streamed.path.endswith("/converse-stream") and streamed.headers == {"accept": EVENTSTREAM}


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        (ToolChoice("auto"), {"auto": {}}),
        (ToolChoice("required"), {"any": {}}),
        (ToolChoice("named", "get_weather"), {"tool": {"name": "get_weather"}}),
    ],
)
def test_tool_choice(choice: ToolChoice, wire: dict[str, Any]) -> None:
    assert build([Message("user", "Hi")], choice).body["toolConfig"]["toolChoice"] == wire


def test_tool_choice_none_is_reported_unsupported_and_not_sent() -> None:
    """Converse has no ``none``: the tools stay declared (a history with toolUse blocks needs
    toolConfig), the choice is not sent, and the request says so instead of dropping it silently."""
    request = build([Message("user", "Hi")], ToolChoice("none"))
    assert request.body["toolConfig"] == {"tools": request.body["toolConfig"]["tools"]}
    [note] = request.findings
    assert (note.check_id, note.severity) == (
        "wire.tool_choice_unsupported",
        "info",
    ) and "'none'" in note.detail


def test_a_history_is_written_in_converse_shape() -> None:
    history = [
        Message("user", "Weather in Paris and Lyon?"),
        Message("assistant", "Looking.", [call("tooluse_a"), call("tooluse_b")]),
        result("tooluse_a", "sunny"),
        result("tooluse_b", "down", is_error=True),
        Message("user", "And tomorrow?"),
    ]
    messages = build(history).body["messages"]
    assert messages == [
        {"role": "user", "content": [{"text": "Weather in Paris and Lyon?"}]},
        {
            "role": "assistant",
            "content": [
                {"text": "Looking."},
                {"toolUse": {"toolUseId": "tooluse_a", "name": "get_weather", "input": {"city": "Paris"}}},
                {"toolUse": {"toolUseId": "tooluse_b", "name": "get_weather", "input": {"city": "Paris"}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "tooluse_a", "content": [{"text": "sunny"}]}},
                {"toolResult": {"toolUseId": "tooluse_b", "content": [{"text": "down"}], "status": "error"}},
                {"text": "And tomorrow?"},
            ],
        },
    ]


def test_consecutive_user_messages_share_one_converse_message() -> None:
    """Converse refuses two user messages in a row: the second is a block of the first."""
    messages = build([Message("user", "First."), Message("user", "Second.")]).body["messages"]
    assert messages == [{"role": "user", "content": [{"text": "First."}, {"text": "Second."}]}]


def test_ids_breaking_the_tooluseid_rule_are_rewritten_alike_in_calls_and_results() -> None:
    request = build(
        [Message("user", "Hi"), Message("assistant", None, [call("call/1")]), result("call/1", "ok")]
    )
    use = request.body["messages"][1]["content"][0]["toolUse"]["toolUseId"]
    answered = request.body["messages"][2]["content"][0]["toolResult"]["toolUseId"]
    assert use == answered != "call/1" and "wire.id_rewritten" in {f.check_id for f in request.findings}
    kept = build([Message("user", "Hi"), Message("assistant", None, [call("functions.get_weather:0")])])
    assert kept.body["messages"][1]["content"][0]["toolUse"]["toolUseId"] == "functions.get_weather:0"


def test_a_dotted_name_in_a_history_moved_here_is_noted() -> None:
    """A history from a format that allows ``.`` (Gemini, an MCP client) breaks Bedrock's name rule:
    sent as it is (the run shows the refusal), with a note naming the rule."""
    request = build([Message("user", "Hi"), Message("assistant", None, [call("c1", "server.search")])])
    [note] = [f for f in request.findings if f.check_id == "wire.tool_name_rule"]
    assert "server.search" in note.detail and "[a-zA-Z0-9_-]" in note.detail and note.severity == "info"


def test_reasoning_goes_back_as_it_came_whole_and_streamed() -> None:
    """Claude on Bedrock needs its reasoning block (and signature) replayed with the calls."""
    whole = case_turn("pydantic-ai__test_bedrock__test_bedrock_anthropic_tool_with_thinking__0")
    body = json.loads(
        CASES["pydantic-ai__test_bedrock__test_bedrock_anthropic_tool_with_thinking__0"]["response"]["body"]
    )
    sent = build([Message("user", "Hi"), whole.as_message()]).body["messages"][1]["content"]
    assert sent == body["output"]["message"]["content"]
    assert whole.reasoning and whole.reasoning.startswith("The user is asking")
    streamed = parse(
        event("messageStart", {"role": "assistant"})
        + event(
            "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Think"}}}
        )
        + event(
            "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "sig"}}}
        )
        + event("contentBlockStop", {"contentBlockIndex": 0})
        + event(
            "contentBlockStart",
            {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "t1", "name": "get_weather"}}},
        )
        + event(
            "contentBlockDelta",
            {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"city": "Paris"}'}}},
        )
        + event("contentBlockStop", {"contentBlockIndex": 1})
        + event("messageStop", {"stopReason": "tool_use"}),
        stream=True,
    )
    replayed = build([Message("user", "Hi"), streamed.as_message()]).body["messages"][1]["content"]
    assert replayed == [
        {"reasoningContent": {"reasoningText": {"text": "Think", "signature": "sig"}}},
        {"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {"city": "Paris"}}},
    ]


def test_requests_read_back_with_the_model_and_mode_from_the_path() -> None:
    request = build(
        [Message("user", "Hi"), Message("assistant", None, [call("t1")]), result("t1", "ok")], stream=True
    )
    view = BedrockConverseAdapter().read_request(json.loads(json.dumps(request.body)), request.path)
    assert (view.model, view.stream) == (MODEL, True)
    assert [m.role for m in view.messages] == ["user", "assistant", "tool"]
    assert [f for f in view.findings if f.severity != "info"] == []


def test_a_request_history_with_a_dotted_name_or_duplicate_ids_is_a_finding() -> None:
    uses = [
        {"toolUse": {"toolUseId": "tooluseAc", "name": "server.search", "input": {}}},
        {"toolUse": {"toolUseId": "tooluseAc", "name": "get_weather", "input": {}}},
    ]
    body = {
        "messages": [
            {"role": "user", "content": [{"text": "Hi"}]},
            {"role": "assistant", "content": uses},
            {
                "role": "user",
                "content": [{"toolResult": {"toolUseId": "tooluseAc", "content": [{"text": "x"}]}}],
            },
        ],
        "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {}}}}]},
    }
    view = BedrockConverseAdapter().read_request(body, "/model/m/converse")
    assert {"wire.tool_name_rule", "wire.duplicate_tool_call_ids"} <= {f.check_id for f in view.findings}


# -- responses ---------------------------------------------------------------------------------------


def test_duplicate_tooluseids_in_a_reply_are_an_error_finding() -> None:
    """Mistral on Bedrock emitted them, and Bedrock then refused the history that replayed them
    (the recorded refusal below)."""
    content = [
        {"toolUse": {"toolUseId": "tooluseAc", "name": "get_weather", "input": {"city": "Paris"}}},
        {"toolUse": {"toolUseId": "tooluseAc", "name": "get_weather", "input": {"city": "Lyon"}}},
    ]
    turn = parse({"output": {"message": {"role": "assistant", "content": content}}, "stopReason": "tool_use"})
    [duplicate] = [f for f in turn.findings if f.check_id == "wire.duplicate_tool_call_ids"]
    assert duplicate.severity == "error" and "tooluseAc" in duplicate.detail
    refused = case_turn("ai__amazon-bedrock-mistral-duplicate-tool-call-ids-error__0")
    assert refused.error is not None and "duplicate Ids" in refused.error.message
    assert "wire.error_in_200_body" in ids(refused)


def test_an_error_names_its_aws_type_from_the_header() -> None:
    header = {"x-amzn-ErrorType": "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"}
    turn = parse({"message": "The provided model identifier is invalid."}, status=400, headers=header)
    assert turn.error is not None and turn.error.code is None
    assert turn.error.detail == {"error_type": "ValidationException"}
    assert "wire.error_type_only_in_header" in ids(turn)
    typed = parse({"__type": "com.amazon.coral.validate#ValidationException", "message": "no"}, status=400)
    assert typed.error is not None and typed.error.code == "ValidationException"
    assert "wire.error_type_only_in_header" not in ids(typed)


@pytest.mark.parametrize("kind", ["exception", "error"])
def test_an_exception_inside_the_stream_is_the_turns_error(kind: str) -> None:
    if kind == "exception":
        broken = exception("throttlingException", "Too many tokens")
    else:
        broken = message(
            string_header(":message-type", "error")
            + string_header(":error-code", "InternalFailure")
            + string_header(":error-message", "Try again"),
            b"",
        )
    turn = parse(event("messageStart", {"role": "assistant"}) + broken, stream=True)
    assert turn.error is not None and "wire.error_event_in_stream" in ids(turn)
    expected = (
        ("throttlingException", "Too many tokens")
        if kind == "exception"
        else ("InternalFailure", "Try again")
    )
    assert (turn.error.code, turn.error.message) == expected


HELLO = event("messageStart", {"role": "assistant"})
TEXT = event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hi"}})
STOP = event("messageStop", {"stopReason": "end_turn"})


@pytest.mark.parametrize(
    ("body", "finding"),
    [
        (
            HELLO + message(string_header(":event-type", "x"), b"{}", crc=1) + STOP,
            "wire.eventstream_message_crc_mismatch",
        ),
        (
            HELLO + message(string_header(":event-type", "x"), b"{}", prelude_crc=1) + STOP,
            "wire.eventstream_prelude_crc_mismatch",
        ),
        (HELLO + TEXT + STOP[:-3], "wire.eventstream_truncated"),
    ],
    ids=["message-crc", "prelude-crc", "cut"],
)
def test_a_broken_frame_is_a_finding_and_the_turns_error(body: bytes, finding: str) -> None:
    """A client cannot trust what it read of a broken stream (botocore raises): the turn fails,
    charged to the endpoint, with the finding that says where."""
    turn = parse(body, stream=True)
    assert finding in ids(turn)
    assert (
        turn.error is not None and turn.error.code == "eventstream_broken" and "at byte" in turn.error.message
    )


def test_an_empty_event_stream_is_an_error() -> None:
    turn = parse(b"", stream=True)
    assert turn.error is not None and turn.error.code == "empty_stream"


def test_a_binary_body_that_is_not_base64_is_a_finding() -> None:
    turn = BedrockConverseAdapter().parse(
        WireResponse(200, "not base64!", {"content-type": EVENTSTREAM}), stream=True
    )
    assert "wire.body_not_base64" in ids(turn) and turn.error is not None


def test_the_sdks_printed_events_read_as_the_framed_stream() -> None:
    """vercel/ai keeps a Bedrock stream as the events the AWS SDK printed (one ``{"<event>": ...}`` a
    line); the corpus case frames the same events: both read the same, whole or cut anywhere."""
    printed = (
        REALWORLD / "raw" / "bedrock-converse" / "ai__issue-11409-kimi-k2-thinking-glob-search.chunks.txt"
    ).read_bytes()
    framed = base64.b64decode(CASES["ai__issue-11409-kimi-k2-thinking-glob-search__0"]["response"]["body"])
    adapter = adapter_class("bedrock-converse")()
    expected = assembled(parse(framed, stream=True))
    assert expected[0] and assembled(parse(printed.decode(), stream=True)) == expected
    for body in (printed, framed):
        assert assembled(adapter.parse_chunks(cut(body, list(range(7, len(body), 7))))) == expected


def test_a_tool_called_without_arguments_streams_no_input() -> None:
    start = {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t1", "name": "get_time"}}}
    turn = parse(
        HELLO + event("contentBlockStart", start) + event("messageStop", {"stopReason": "tool_use"}),
        stream=True,
    )
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [("get_time", {})]
    assert "wire.tool_input_empty_in_stream" in ids(turn)


def test_a_tool_input_delta_without_its_start_is_dropped_and_noted() -> None:
    delta = {"contentBlockIndex": 3, "delta": {"toolUse": {"input": "{}"}}}
    turn = parse(HELLO + event("contentBlockDelta", delta) + STOP, stream=True)
    assert turn.tool_calls == [] and "wire.tool_input_delta_without_start" in ids(turn)


def test_a_stream_without_message_stop_is_noted() -> None:
    assert "wire.stream_without_message_stop" in ids(parse(HELLO + TEXT, stream=True))


# -- recognising its traffic -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", [n for n, c in CASES.items() if c["expected"]["error"] and not c["request"]["url"]]
)
def test_its_error_bodies_alone_tell_the_format(name: str) -> None:
    assert detect_format(None, CASES[name]["response"]["body"]) == ("bedrock-converse", "body")


def test_another_vendors_message_body_is_not_claimed() -> None:
    assert detect_format(None, json.dumps({"message": "too many requests"})) == (None, None)
    assert (
        detect_format("https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse-stream", "")[0]
        == "bedrock-converse"
    )
