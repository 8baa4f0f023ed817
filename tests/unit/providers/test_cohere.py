"""The cohere-chat adapter: request shapes, whole and streamed parses through one path, the plan
kept out of the text, errors as findings, and Cohere's real traffic told apart from Anthropic's."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.agent.rechunk import cut, cuts_of
from harness.model import Message, ParsedTurn, ToolCall, ToolChoice, ToolResult, ToolSpec, WireResponse
from harness.providers import RequestOptions, adapter_class
from harness.providers.cohere import CohereChatAdapter
from harness.providers.detection import detect_format
from tests.conformance.test_realworld import observed
from tests.helpers.realworld import cases

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = ToolSpec("weather", "Weather for a city", SCHEMA)
TIME = ToolSpec("time", "Local time in a city", SCHEMA)
COHERE = cases("cohere-chat")


def build(messages: list[Message], choice: ToolChoice | None = None, **options: Any) -> Any:
    return CohereChatAdapter().build_request(
        messages, [WEATHER, TIME], choice or ToolChoice(), RequestOptions("command-a", **options)
    )


def parse(body: Any, *, stream: bool = False, status: int = 200) -> ParsedTurn:
    text = body if isinstance(body, str) else json.dumps(body)
    return CohereChatAdapter().parse(WireResponse(status, text), stream=stream)


def sse(*events: dict[str, Any]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def ids(turn: ParsedTurn) -> set[str]:
    return {f.check_id for f in turn.findings}


def warnings(turn: ParsedTurn) -> list[str]:
    return [f.check_id for f in turn.findings if f.severity != "info"]


PLAN = "I will look up the weather in Paris."
CALL = {
    "id": "weather_abc123def456",
    "type": "function",
    "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
}
USAGE = {
    "billed_units": {"input_tokens": 9, "output_tokens": 5},
    "tokens": {"input_tokens": 90, "output_tokens": 50},
}
WHOLE = {
    "id": "r1",
    "finish_reason": "TOOL_CALL",
    "message": {"role": "assistant", "tool_plan": PLAN, "tool_calls": [CALL]},
    "usage": USAGE,
}


def start(index: int, call: dict[str, Any]) -> dict[str, Any]:
    opened = {**call, "function": {**call["function"], "arguments": ""}}
    return {"type": "tool-call-start", "index": index, "delta": {"message": {"tool_calls": opened}}}


def arguments(index: int, text: str) -> dict[str, Any]:
    return {
        "type": "tool-call-delta",
        "index": index,
        "delta": {"message": {"tool_calls": {"function": {"arguments": text}}}},
    }


def plan(text: str) -> dict[str, Any]:
    return {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": text}}}


def end(reason: str = "TOOL_CALL", **extra: Any) -> dict[str, Any]:
    return {"type": "message-end", "delta": {"finish_reason": reason, "usage": USAGE, **extra}}


MESSAGE_START = {
    "id": "r1",
    "type": "message-start",
    "delta": {
        "message": {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}
    },
}
STREAM = sse(
    MESSAGE_START,
    plan("I will look up "),
    plan("the weather in Paris."),
    start(0, CALL),
    arguments(0, '{"city": '),
    arguments(0, '"Paris"}'),
    {"type": "tool-call-end", "index": 0},
    end(),
)


# -- requests -------------------------------------------------------------


def test_registered_with_its_path_and_bearer_key() -> None:
    adapter = adapter_class("cohere-chat")()
    assert isinstance(adapter, CohereChatAdapter)
    assert adapter.auth_headers("k") == {"Authorization": "Bearer k"}
    assert build([Message("user", "Hi")]).path == "/v2/chat"


def test_the_system_prompt_stays_a_message_and_tools_take_the_function_shape() -> None:
    request = build(
        [Message("system", "Be brief."), Message("user", "Hi")], temperature=0.2, max_tokens=50, seed=7
    )
    assert request.body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
    ]
    assert request.body["tools"][0] == {
        "type": "function",
        "function": {"name": "weather", "description": "Weather for a city", "parameters": SCHEMA},
    }
    assert (request.body["temperature"], request.body["max_tokens"], request.body["seed"]) == (0.2, 50, 7)
    assert (
        request.body["stream"] is False and build([Message("user", "Hi")], stream=True).body["stream"] is True
    )


@pytest.mark.parametrize(("choice", "wire"), [("auto", None), ("required", "REQUIRED"), ("none", "NONE")])
def test_tool_choice_is_upper_case_and_auto_is_left_out(choice: str, wire: str | None) -> None:
    request = build([Message("user", "Hi")], ToolChoice(choice))  # type: ignore[arg-type]
    assert request.body.get("tool_choice") == wire
    assert ("tool_choice" in request.body) is (wire is not None)
    assert [t["function"]["name"] for t in request.body["tools"]] == ["weather", "time"]
    assert request.findings == []


def test_a_named_choice_is_required_with_the_named_tool_alone_and_noted() -> None:
    request = build([Message("user", "Hi")], ToolChoice("named", "time"))
    assert request.body["tool_choice"] == "REQUIRED"
    assert [t["function"]["name"] for t in request.body["tools"]] == ["time"]
    [note] = request.findings
    assert (note.check_id, note.severity) == (
        "wire.tool_choice_named_emulated",
        "info",
    ) and "'time'" in note.detail
    unknown = build([Message("user", "Hi")], ToolChoice("named", "teleport"))
    assert len(unknown.body["tools"]) == 2 and "every tool" in unknown.findings[0].detail


def test_parallel_tool_calls_cannot_be_sent_and_say_so() -> None:
    request = build([Message("user", "Hi")], parallel_tool_calls=False)
    assert "parallel_tool_calls" not in request.body
    assert [f.check_id for f in request.findings] == ["wire.parallel_tool_calls_unsupported"]


def test_a_parsed_turn_goes_back_with_its_plan_and_its_results_as_text_blocks() -> None:
    turn = parse(WHOLE)
    [call] = turn.tool_calls
    history = [
        Message("user", "Weather in Paris?"),
        turn.as_message(),
        Message("tool", tool_result=ToolResult(call.id, "weather", "18C", is_error=True)),
    ]
    messages = build(history).body["messages"]
    assert messages[1] == {"role": "assistant", "tool_plan": PLAN, "tool_calls": [CALL]}
    assert messages[2] == {
        "role": "tool",
        "tool_call_id": CALL["id"],
        "content": [{"type": "text", "text": "18C"}],
    }


def test_calls_from_another_format_go_back_with_json_text_arguments_and_no_plan() -> None:
    call = ToolCall("weather", {"city": "Zürich"}, {"city": "Zürich"}, "toolu_1", "toolu_1")
    [_, assistant] = build([Message("user", "Hi"), Message("assistant", "Checking.", [call])]).body[
        "messages"
    ]
    assert assistant == {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "toolu_1",
                "type": "function",
                "function": {"name": "weather", "arguments": '{"city": "Zürich"}'},
            }
        ],
        "content": "Checking.",
    }


def test_thinking_kept_from_the_parse_goes_back_before_the_text() -> None:
    body = {
        "id": "r",
        "finish_reason": "COMPLETE",
        "message": {
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "Hmm."}, {"type": "text", "text": "Hi."}],
        },
    }
    turn = parse(body)
    assert (turn.text, turn.reasoning) == ("Hi.", "Hmm.") and "wire.reasoning_field:thinking" in ids(turn)
    [_, assistant] = build([Message("user", "Hi"), turn.as_message()]).body["messages"]
    assert assistant == {"role": "assistant", "content": body["message"]["content"]}


def test_a_request_another_client_wrote_reads_back_with_its_plan_and_document_results() -> None:
    body = {
        "model": "command-a",
        "messages": [
            {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "tool_plan": PLAN, "tool_calls": [CALL]},
            {
                "role": "tool",
                "tool_call_id": CALL["id"],
                "content": [{"type": "document", "document": {"data": {"temp": 18}}}],
            },
        ],
        "tools": build([Message("user", "Hi")]).body["tools"],
        "tool_choice": "required",
    }
    view = CohereChatAdapter().read_request(body, "/v2/chat")
    assert [(m.role, m.content) for m in view.messages[:2]] == [
        ("system", "Be brief."),
        ("user", "Weather in Paris?"),
    ]
    assistant, result = view.messages[2], view.messages[3].tool_result
    assert assistant.extra == {"cohere_tool_plan": PLAN} and assistant.tool_calls[0].arguments == {
        "city": "Paris"
    }
    assert result is not None and (result.call_id, result.name, result.content) == (
        CALL["id"],
        "weather",
        '{"temp": 18}',
    )
    assert view.tools == (WEATHER, TIME) and view.tool_choice == ToolChoice("required")
    found = {f.check_id: f.severity for f in view.findings}
    assert found == {"wire.request_tool_choice_case": "warning", "wire.request_tool_document_read": "info"}


# -- responses: one parse path --------------------------------------------------


def test_a_whole_tool_turn_keeps_the_plan_out_of_the_text() -> None:
    turn = parse(WHOLE)
    assert [(c.wire_id, c.name, c.arguments, c.raw_arguments) for c in turn.tool_calls] == [
        (CALL["id"], "weather", {"city": "Paris"}, '{"city": "Paris"}')
    ]
    assert (turn.text, turn.reasoning, turn.finish_reason) == (None, PLAN, "TOOL_CALL")
    assert turn.extra == {"cohere_tool_plan": PLAN}
    assert (turn.usage.input_tokens, turn.usage.output_tokens) == (90, 50)  # type: ignore[union-attr]
    assert ids(turn) == {"wire.tool_plan"} and warnings(turn) == []


def test_the_stream_assembles_to_the_same_turn_as_the_whole_body() -> None:
    whole, streamed = parse(WHOLE), parse(STREAM, stream=True)
    assert streamed.tool_calls == whole.tool_calls
    assert (streamed.text, streamed.reasoning, streamed.finish_reason, streamed.usage, streamed.extra) == (
        whole.text,
        whole.reasoning,
        whole.finish_reason,
        whole.usage,
        whole.extra,
    )
    assert [f.check_id for f in streamed.findings] == [f.check_id for f in whole.findings]


def test_a_streamed_answer_is_text_from_its_content_deltas() -> None:
    body = sse(
        MESSAGE_START,
        {
            "type": "content-start",
            "index": 0,
            "delta": {"message": {"content": {"type": "text", "text": ""}}},
        },
        {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": "Sunny, "}}}},
        {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": "18C."}}}},
        {"type": "citation-start", "index": 0, "delta": {"message": {"citations": {"start": 0, "end": 5}}}},
        {"type": "citation-end", "index": 0},
        {"type": "content-end", "index": 0},
        end("COMPLETE"),
    )
    turn = parse(body, stream=True)
    assert (turn.text, turn.tool_calls, turn.finish_reason, turn.reasoning) == (
        "Sunny, 18C.",
        [],
        "COMPLETE",
        None,
    )
    assert turn.findings == []


def test_usage_falls_back_to_the_billed_units() -> None:
    turn = parse({**WHOLE, "usage": {"billed_units": {"input_tokens": 3, "output_tokens": 4}}})
    assert (turn.usage.input_tokens, turn.usage.output_tokens) == (3, 4)  # type: ignore[union-attr]


# -- deviations are findings ------------------------------------------------------


@pytest.mark.parametrize(
    ("events", "finding"),
    [
        ([MESSAGE_START, arguments(0, "{}"), end("COMPLETE")], "wire.tool_call_delta_without_start"),
        (
            [MESSAGE_START, {**start(0, CALL), "delta": {"message": {"tool_calls": [CALL]}}}, end()],
            "wire.tool_call_start_with_list",
        ),
        (
            [MESSAGE_START, start(0, CALL), arguments(0, "{}"), {"type": "tool-call-end", "index": 0}],
            "wire.stream_without_message_end",
        ),
        ([MESSAGE_START, start(0, CALL), arguments(0, "{}"), end()], "wire.tool_call_without_end"),
        (
            [MESSAGE_START, start(0, CALL), start(0, {**CALL, "id": "other"}), end()],
            "wire.tool_call_index_reused",
        ),
        (
            [
                MESSAGE_START,
                {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": "x"}}}},
                end("COMPLETE"),
            ],
            "wire.content_delta_without_start",
        ),
        ([MESSAGE_START, {"type": "tool-call-begin"}, end("COMPLETE")], "wire.unknown_stream_event"),
    ],
    ids=[
        "delta-without-start",
        "start-with-list",
        "no-message-end",
        "no-call-end",
        "index-reused",
        "content-without-start",
        "unknown-event",
    ],
)
def test_each_stream_deviation_is_its_finding(events: list[dict[str, Any]], finding: str) -> None:
    turn = parse(sse(*events), stream=True)
    assert finding in ids(turn), ids(turn)


def test_a_list_in_tool_call_start_still_starts_the_call() -> None:
    listed = {**start(0, CALL), "delta": {"message": {"tool_calls": [CALL]}}}
    turn = parse(sse(MESSAGE_START, listed, {"type": "tool-call-end", "index": 0}, end()), stream=True)
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [("weather", {"city": "Paris"})]


@pytest.mark.parametrize(
    ("reason", "calls", "finding"),
    [
        ("COMPLETE", [CALL], "wire.finish_COMPLETE_with_tool_calls"),
        ("TOOL_CALL", [], "wire.finish_tool_call_without_calls"),
    ],
)
def test_the_finish_reason_must_say_tool_call_exactly_when_there_are_calls(
    reason: str, calls: list[Any], finding: str
) -> None:
    turn = parse({**WHOLE, "finish_reason": reason, "message": {"role": "assistant", "tool_calls": calls}})
    assert finding in warnings(turn)


def test_the_sse_event_name_must_match_the_data_type() -> None:
    body = STREAM.replace("event: tool-call-end", "event: tool-call-stop", 1)
    assert "wire.event_name_mismatch" in ids(parse(body, stream=True))


def test_a_call_without_arguments_streams_an_empty_string_read_as_an_empty_object() -> None:
    turn = parse(
        sse(MESSAGE_START, start(0, CALL), {"type": "tool-call-end", "index": 0}, end()), stream=True
    )
    assert turn.tool_calls[0].arguments == {} and "wire.arguments_empty_string" in ids(turn)


# -- errors -------------------------------------------------------------------


def test_an_http_error_is_the_turns_error_with_its_status_and_message() -> None:
    turn = parse({"id": "e", "message": "invalid request: tool_choice"}, status=400)
    assert turn.error is not None
    assert (turn.error.status, turn.error.code, turn.error.message) == (
        400,
        None,
        "invalid request: tool_choice",
    )


def test_an_error_envelope_with_http_200_is_an_error_and_a_finding() -> None:
    turn = parse({"id": "e", "message": "upstream overloaded"})
    assert turn.error is not None and turn.error.message == "upstream overloaded"
    assert "wire.error_in_200_body" in warnings(turn)


def test_an_error_at_message_end_fails_the_turn() -> None:
    turn = parse(sse(MESSAGE_START, end("ERROR", error="internal error")), stream=True)
    assert turn.error is not None and (turn.error.status, turn.error.code, turn.error.message) == (
        200,
        "ERROR",
        "internal error",
    )
    assert "wire.error_event_in_stream" in ids(turn)


def test_a_failed_generation_without_a_message_fails_the_turn() -> None:
    turn = parse({**WHOLE, "finish_reason": "TIMEOUT", "message": {"role": "assistant"}})
    assert turn.error is not None and turn.error.code == "TIMEOUT"
    assert "wire.generation_failed" in warnings(turn)


def test_a_body_without_a_message_is_a_finding_not_an_exception() -> None:
    turn = parse({"id": "r", "finish_reason": "COMPLETE"})
    assert "wire.message_missing" in warnings(turn) and turn.tool_calls == []


# -- real traffic ------------------------------------------------------------------


@pytest.mark.parametrize("case", COHERE, ids=[c["id"] for c in COHERE])
def test_real_cohere_traffic_is_told_as_cohere_never_as_anthropic(case: dict[str, Any]) -> None:
    body = case["response"]["body"]
    assert detect_format(None, body) == ("cohere-chat", "body")
    url = case["request"]["url"]
    if url:
        assert detect_format(url, body) == ("cohere-chat", "url")


STREAMED = [c for c in COHERE if c["response"]["stream"]]


@pytest.mark.parametrize("case", STREAMED, ids=[c["id"] for c in STREAMED])
def test_real_cohere_streams_parse_exactly_however_they_are_cut(case: dict[str, Any]) -> None:
    assert len(STREAMED) >= 2
    data = case["response"]["body"].encode()
    for size in range(1, 17):
        turn = CohereChatAdapter().parse_chunks(cut(data, cuts_of(data, str(size))))
        assert observed(turn) == case["expected"], size
