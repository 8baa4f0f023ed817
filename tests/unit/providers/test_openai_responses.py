"""The openai-responses adapter: request shapes (stateless and chained), replay of output items,
whole and streamed parses through one accumulator, and the findings of what breaks in the field."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.model import Message, ParsedTurn, ToolCall, ToolChoice, ToolResult, ToolSpec, WireResponse
from harness.providers import RequestOptions, adapter_class, truncation_reasons
from harness.providers.detection import detect_format
from harness.providers.openai_responses import OpenAIResponsesAdapter
from tests.helpers.realworld import cases

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
OPTIONAL = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "unit": {"type": "string", "enum": ["c", "f"]},
        "range": {"type": "object", "properties": {"from": {"type": "integer"}, "to": {"type": "integer"}}},
    },
    "required": ["city"],
}
WEATHER = ToolSpec("weather", "Weather for a city", CITY)
FORECAST = ToolSpec("forecast", "Forecast", OPTIONAL)
ASK = [Message("system", "Be brief."), Message("user", "Weather in Paris?")]


def build(
    messages: list[Message] | None = None,
    choice: ToolChoice | None = None,
    tools: tuple[ToolSpec, ...] = (WEATHER,),
    **options: Any,
) -> Any:
    return OpenAIResponsesAdapter().build_request(
        messages or ASK, tools, choice or ToolChoice(), RequestOptions("gpt-test", **options)
    )


def parse(
    body: Any, *, stream: bool = False, status: int = 200, tools: tuple[ToolSpec, ...] = ()
) -> ParsedTurn:
    text = body if isinstance(body, str) else json.dumps(body)
    return OpenAIResponsesAdapter().parse(WireResponse(status, text), stream=stream, tools=tools)


def sse(*events: dict[str, Any], named: bool = True) -> str:
    return "".join((f"event: {e['type']}\n" if named else "") + f"data: {json.dumps(e)}\n\n" for e in events)


def ids(turn: ParsedTurn) -> set[str]:
    return {f.check_id for f in turn.findings}


def call_item(
    call_id: str = "call_Ab3", name: str = "weather", city: str = "Paris", item_id: str = "fc_1"
) -> dict[str, Any]:
    arguments = json.dumps({"city": city})
    return {
        "id": item_id,
        "type": "function_call",
        "status": "completed",
        "arguments": arguments,
        "call_id": call_id,
        "name": name,
    }


def message_item(text: str, item_id: str = "msg_1") -> dict[str, Any]:
    part = {"type": "output_text", "text": text, "annotations": []}
    return {"id": item_id, "type": "message", "status": "completed", "role": "assistant", "content": [part]}


def response(*output: dict[str, Any], status: str = "completed", **fields: Any) -> dict[str, Any]:
    usage = {"input_tokens": 12, "output_tokens": 7, "total_tokens": 19}
    return {
        "id": "resp_1",
        "object": "response",
        "status": status,
        "output": list(output),
        "usage": usage,
        **fields,
    }


def events_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A conformant stream of a Response: items added, arguments and text in pieces, done, completed."""
    head = {**body, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": head}]
    for index, item in enumerate(body["output"]):
        at = {"item_id": item["id"], "output_index": index}
        if item["type"] == "function_call":
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "arguments": ""},
                }
            )
            args = item["arguments"]
            events += [
                {"type": "response.function_call_arguments.delta", **at, "delta": args[i : i + 5]}
                for i in range(0, len(args), 5)
            ]
            events.append({"type": "response.function_call_arguments.done", **at, "arguments": args})
        else:
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": {**item, "content": []}}
            )
            text = item["content"][0]["text"]
            events += [
                {"type": "response.output_text.delta", **at, "content_index": 0, "delta": text[i : i + 4]}
                for i in range(0, len(text), 4)
            ]
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": body})
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return events


# -- requests -----------------------------------------------------------------------------------


def test_registered_with_its_path_and_claims() -> None:
    adapter = adapter_class("openai-responses")()
    assert isinstance(adapter, OpenAIResponsesAdapter)
    assert adapter.default_path == "/v1/responses" and adapter.auth_headers("k") == {
        "Authorization": "Bearer k"
    }
    assert detect_format("https://api.openai.com/v1/responses", "") == ("openai-responses", "url")
    assert detect_format("https://api.deepseek.com/responses", "") == ("openai-responses", "url")
    assert (
        detect_format("https://api.openai.com/v1/responses/resp_1?stream=false", "")[0] == "openai-responses"
    )
    assert detect_format("https://api.openai.com/v1/responses/resp_1/input_items", "")[0] is None
    assert "incomplete:max_output_tokens" in truncation_reasons()


def test_a_stateless_request_carries_the_whole_conversation_and_flat_tools() -> None:
    request = build(temperature=0.2, max_tokens=50, parallel_tool_calls=False)
    assert request.path == "/v1/responses"
    assert request.body == {
        "model": "gpt-test",
        "input": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?"},
        ],
        "tools": [
            {
                "type": "function",
                "name": "weather",
                "description": "Weather for a city",
                "parameters": CITY,
                "strict": False,
            }
        ],
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "temperature": 0.2,
        "max_output_tokens": 50,
        "stream": False,
    }
    assert request.findings == []


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        (ToolChoice("auto"), "auto"),
        (ToolChoice("none"), "none"),
        (ToolChoice("required"), "required"),
        (ToolChoice("named", "weather"), {"type": "function", "name": "weather"}),
    ],
)
def test_tool_choice_in_each_form(choice: ToolChoice, wire: Any) -> None:
    assert build(choice=choice).body["tool_choice"] == wire


def test_the_seed_is_not_sent_and_that_is_noted() -> None:
    request = build(seed=7)
    assert "seed" not in request.body
    assert [f.check_id for f in request.findings] == ["wire.seed_unsupported"]


def test_strict_omitted_is_a_declaration_finding_naming_the_fields_made_required() -> None:
    request = build(tools=(WEATHER, FORECAST), extra={"strict": "omit"})
    assert all("strict" not in tool for tool in request.body["tools"])
    assert "strict" not in {k for k in request.body if k != "tools"}  # the option itself is not sent
    [finding] = request.findings
    assert (finding.check_id, finding.severity) == ("wire.tool_declaration", "info")
    assert "forecast" in finding.detail and "normalises" in finding.detail
    assert finding.evidence == {"fields": ["unit", "range", "range.from", "range.to"]}
    later = build([*ASK, Message("assistant", "Sunny.")], tools=(FORECAST,), extra={"strict": "omit"})
    assert later.findings == []  # noted once, on the first request of the run


def test_strict_true_is_sent_and_the_schema_s_optional_fields_noted() -> None:
    request = build(tools=(WEATHER, FORECAST), extra={"strict": True})
    assert [t["strict"] for t in request.body["tools"]] == [True, True]
    [finding] = request.findings
    assert "refuses" in finding.detail and finding.evidence == {
        "fields": ["unit", "range", "range.from", "range.to"]
    }


def test_an_unknown_strict_option_is_noted_and_false_sent() -> None:
    request = build(extra={"strict": "maybe"})
    assert request.body["tools"][0]["strict"] is False
    assert [f.check_id for f in request.findings] == ["wire.request_option_invalid"]


def test_other_request_options_are_merged_into_the_body() -> None:
    request = build(extra={"store": False, "include": ["reasoning.encrypted_content"]})
    assert request.body["store"] is False and request.body["include"] == ["reasoning.encrypted_content"]


# -- replay: the output items as received ---------------------------------------------------------


def real(case_id: str) -> dict[str, Any]:
    return next(c for c in cases("openai-responses") if c["id"] == case_id)


def parse_case(case: dict[str, Any]) -> ParsedTurn:
    return parse(case["response"]["body"], stream=case["response"]["stream"])


def test_reasoning_items_with_encrypted_content_are_replayed_exactly_as_received() -> None:
    case = real("azure/ai__azure-reasoning-encrypted-content.1__0")
    turn = parse_case(case)
    kept = turn.extra["openai_output"]
    assert [i["type"] for i in kept] == ["reasoning", "function_call"]
    assert kept[0]["encrypted_content"]
    [call] = turn.tool_calls
    history = [*ASK, turn.as_message(), Message("tool", tool_result=ToolResult(call.id, call.name, "42"))]
    request = build(history, extra={"store": False, "include": ["reasoning.encrypted_content"]})
    assert request.body["input"][2:] == [
        *kept,
        {"type": "function_call_output", "call_id": call.id, "output": "42"},
    ]
    assert request.findings == []


def test_a_reasoning_item_without_encrypted_content_under_store_false_is_a_warning() -> None:
    turn = parse(response({"id": "rs_1", "type": "reasoning", "summary": []}, call_item()))
    history = [*ASK, turn.as_message(), Message("tool", tool_result=ToolResult("call_Ab3", "weather", "18C"))]
    assert [f.check_id for f in build(history, extra={"store": False}).findings] == [
        "wire.reasoning_replay_without_encrypted_content"
    ]
    assert build(history).findings == []  # stored: the server looks it up by id


def test_items_are_rebuilt_with_a_finding_when_the_calls_changed() -> None:
    turn = parse(
        response({"id": "rs_1", "type": "reasoning", "summary": []}, message_item("Checking."), call_item())
    )
    message = turn.as_message()
    message.tool_calls = [ToolCall("weather", {"city": "Rome"}, '{"city": "Rome"}', "call_9", "call_9")]
    request = build([*ASK, message, Message("tool", tool_result=ToolResult("call_9", "weather", "20C"))])
    assert request.body["input"][2:] == [
        {"role": "assistant", "content": "Checking."},
        {"type": "function_call", "call_id": "call_9", "name": "weather", "arguments": '{"city": "Rome"}'},
        {"type": "function_call_output", "call_id": "call_9", "output": "20C"},
    ]
    assert [f.check_id for f in request.findings] == ["wire.replay_items_rebuilt"]


# -- stateful: previous_response_id = "auto" ------------------------------------------------------


def test_chained_requests_name_the_previous_response_and_send_only_what_came_after() -> None:
    chained = {"previous_response_id": "auto"}
    first = build(extra=chained)
    assert "previous_response_id" not in first.body and len(first.body["input"]) == 2
    turn = parse(response(call_item(), id="resp_42"))
    history = [*ASK, turn.as_message(), Message("tool", tool_result=ToolResult("call_Ab3", "weather", "18C"))]
    second = build(history, extra=chained)
    assert second.body["previous_response_id"] == "resp_42"
    assert second.body["input"] == [{"type": "function_call_output", "call_id": "call_Ab3", "output": "18C"}]
    assert second.findings == []
    unstored = build(history, extra={**chained, "store": False})
    assert [f.check_id for f in unstored.findings] == ["wire.request_chain_without_store"]


def test_a_fixed_previous_response_id_is_sent_as_given() -> None:
    request = build(extra={"previous_response_id": "resp_fixed"})
    assert request.body["previous_response_id"] == "resp_fixed" and len(request.body["input"]) == 2


# -- responses: one accumulator, whole and streamed ------------------------------------------------


def test_a_whole_response_gives_calls_by_call_id_text_finish_usage() -> None:
    body = response(
        {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "Hm."}]},
        message_item("Let me see."),
        call_item(),
    )
    turn = parse(body)
    [call] = turn.tool_calls
    assert (call.id, call.wire_id, call.name, call.arguments, call.raw_arguments) == (
        "call_Ab3",
        "call_Ab3",
        "weather",
        {"city": "Paris"},
        '{"city": "Paris"}',
    )
    assert call.extra == {"item_id": "fc_1"}
    assert (turn.text, turn.reasoning, turn.finish_reason) == ("Let me see.", "Hm.", "completed")
    assert (turn.usage.input_tokens, turn.usage.output_tokens) == (12, 7) if turn.usage else False
    assert turn.extra == {"openai_output": body["output"], "openai_response_id": "resp_1"}
    assert ids(turn) == {"wire.reasoning_item", "wire.text_with_tool_calls"}


@pytest.mark.parametrize("named", [True, False], ids=["named", "unnamed"])
def test_the_stream_of_a_response_parses_to_the_same_turn(named: bool) -> None:
    tokyo = call_item("call_Tk9", city="Tokyo", item_id="fc_2")
    body = response(message_item("Checking the weather."), call_item(), tokyo)
    whole = parse(body)
    streamed = parse(sse(*events_of(body), named=named), stream=True)
    assert streamed.findings == whole.findings
    assert (streamed.text, streamed.tool_calls, streamed.finish_reason, streamed.usage, streamed.extra) == (
        whole.text,
        whole.tool_calls,
        whole.finish_reason,
        whole.usage,
        whole.extra,
    )


def test_a_stream_cut_anywhere_assembles_the_same() -> None:
    body = response(message_item("Rain in the afternoon, 18C."), call_item())
    text = sse(*events_of(body))
    adapter = OpenAIResponsesAdapter()
    whole = adapter.parse(WireResponse(200, text), stream=True)
    for size in (1, 3, 7, 16):
        chunks = [text[i : i + size].encode() for i in range(0, len(text), size)]
        cut = adapter.parse_chunks(chunks)
        assert (cut.text, cut.tool_calls, cut.finish_reason) == (
            whole.text,
            whole.tool_calls,
            whole.finish_reason,
        )


def test_incomplete_is_the_status_and_its_reason() -> None:
    turn = parse(
        response(call_item(), status="incomplete", incomplete_details={"reason": "max_output_tokens"})
    )
    assert turn.finish_reason == "incomplete:max_output_tokens"
    assert "wire.status_incomplete_with_tool_calls" in ids(turn)


def test_an_error_event_is_the_turn_s_error_and_wins_over_response_failed() -> None:
    failed = response(status="failed", error={"code": "server_error", "message": "from failed"})
    for event in (
        {
            "type": "error",
            "code": "rate_limit_exceeded",
            "message": "slow down",
            "param": None,
            "sequence_number": 1,
        },
        {
            "type": "error",
            "error": {"type": "rate_limit_exceeded", "code": None, "message": "slow down"},
            "sequence_number": 1,
        },
    ):
        turn = parse(
            sse(
                {"type": "response.created", "response": response()},
                event,
                {"type": "response.failed", "response": failed},
            ),
            stream=True,
        )
        assert turn.error is not None and (turn.error.status, turn.error.code, turn.error.message) == (
            200,
            "rate_limit_exceeded",
            "slow down",
        )
        assert turn.finish_reason == "failed"
        assert {"wire.error_event_in_stream", "wire.response_failed_event"} <= ids(turn)
    alone = parse(sse({"type": "response.failed", "response": failed}), stream=True)
    assert alone.error is not None and alone.error.message == "from failed"


def test_a_failed_response_object_in_a_whole_body_keeps_its_status() -> None:
    turn = parse(response(status="failed", error={"code": "server_error", "message": "boom"}))
    assert turn.finish_reason == "failed"
    assert turn.error is not None and (turn.error.code, turn.error.message) == ("server_error", "boom")
    plain = parse(
        {
            "error": {
                "message": "quota",
                "type": "insufficient_quota",
                "param": None,
                "code": "insufficient_quota",
            }
        }
    )
    assert plain.finish_reason is None and "wire.error_in_200_body" in ids(plain)


def test_an_http_error_is_the_provider_error() -> None:
    body = {
        "error": {
            "message": "bad temperature",
            "type": "invalid_request_error",
            "param": "temperature",
            "code": "decimal_below_min_value",
        }
    }
    turn = parse(body, status=400)
    assert turn.error is not None and (turn.error.status, turn.error.code) == (400, "decimal_below_min_value")


# -- what breaks in the field ------------------------------------------------------------------------


def test_a_call_streamed_as_output_text_is_a_finding_with_its_evidence() -> None:
    text = '<tool_call>\n{"name": "weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    turn = parse(sse(*events_of(response(message_item(text)))), stream=True)
    assert turn.tool_calls == [] and turn.text == text
    [finding] = [f for f in turn.findings if f.check_id == "wire.call_streamed_as_text"]
    assert finding.evidence == {"item_id": "msg_1", "snippet": text}
    assert "wire.call_streamed_as_text" not in ids(
        parse(response(message_item(text)))
    )  # whole: the generic leak check


def test_a_call_id_changed_in_the_completed_response_keeps_the_streamed_one() -> None:
    events = events_of(response(call_item()))
    events[-1] = {**events[-1], "response": response(call_item("call_other"))}
    turn = parse(sse(*events), stream=True)
    assert [c.id for c in turn.tool_calls] == ["call_Ab3"]
    assert "wire.completed_output_call_ids_differ" in ids(turn)
    events[-1] = {**events[-1], "response": response(call_item(city="Rome"))}
    assert "wire.completed_output_calls_differ" in ids(parse(sse(*events), stream=True))


def test_a_call_id_changed_between_added_and_done() -> None:
    events = events_of(response(call_item()))
    events[1]["item"] = {**events[1]["item"], "call_id": "call_early"}
    turn = parse(sse(*events), stream=True)
    assert [c.id for c in turn.tool_calls] == ["call_Ab3"] and "wire.call_id_changed_in_stream" in ids(turn)


def test_a_parallel_wrapper_call_is_reported_as_sent_and_named() -> None:
    uses = [
        {"recipient_name": "functions.weather", "parameters": {"city": "Paris"}},
        {"recipient_name": "functions.time", "parameters": {}},
    ]
    wrapper = {**call_item(name="multi_tool_use.parallel"), "arguments": json.dumps({"tool_uses": uses})}
    turn = parse(response(wrapper))
    assert [c.name for c in turn.tool_calls] == ["multi_tool_use.parallel"]
    [finding] = [f for f in turn.findings if f.check_id == "wire.parallel_wrapper_call"]
    assert finding.evidence == {"wrapped": ["functions.weather", "functions.time"]}


def test_argument_deltas_keyed_by_an_unknown_item_id_match_by_output_index() -> None:
    events = events_of(response(call_item()))
    for event in events:
        if event["type"] == "response.function_call_arguments.delta":
            event["item_id"] = "call_Ab3"
    events = [e for e in events if e["type"] != "response.output_item.done"]  # the deltas must carry the call
    turn = parse(sse(*events), stream=True)
    assert [c.arguments for c in turn.tool_calls] == [{"city": "Paris"}]
    assert "wire.event_item_id_unknown_matched_by_output_index" in ids(turn)
    orphan = [
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "nowhere",
            "output_index": 9,
            "delta": "{",
        }
    ]
    assert "wire.event_for_unknown_item" in ids(parse(sse(*events_of(response()), *orphan), stream=True))


def test_items_streamed_out_of_order_are_read_in_output_index_order() -> None:
    events = events_of(response(call_item(), call_item("call_Tk9", city="Tokyo", item_id="fc_2")))
    first, second = (
        [e for e in events if e.get("output_index") == 0],
        [e for e in events if e.get("output_index") == 1],
    )
    turn = parse(sse(events[0], *second, *first, events[-1]), stream=True)
    assert [c.id for c in turn.tool_calls] == ["call_Ab3", "call_Tk9"]
    assert "wire.output_items_out_of_order" in ids(turn)


def test_stream_shape_findings() -> None:
    events = events_of(response(call_item()))
    assert "wire.stream_without_terminal_event" in ids(parse(sse(*events[:-1]), stream=True))
    assert "wire.done_sentinel_in_responses_stream" in ids(
        parse(sse(*events) + "data: [DONE]\n\n", stream=True)
    )
    only = parse(sse(events[0], events[-1]), stream=True)
    assert [c.id for c in only.tool_calls] == ["call_Ab3"]
    assert "wire.output_only_in_terminal_event" in ids(only)
    empty = [*events[:-1], {**events[-1], "response": response()}]
    assert "wire.completed_output_empty" in ids(parse(sse(*empty), stream=True))
    reused = [events[0], events[1], {**events[1], "item": {**events[1]["item"], "id": "fc_9"}}, *events[2:]]
    assert "wire.output_index_reused" in ids(parse(sse(*reused), stream=True))


def test_call_id_shapes() -> None:
    missing = parse(response({k: v for k, v in call_item().items() if k != "call_id"}))
    assert {"wire.function_call_without_call_id", "wire.missing_id"} <= ids(missing)
    assert missing.tool_calls[0].id_synthesized
    assert "wire.tool_call_id_counter_form" in ids(parse(response(call_item("call_0"))))
    assert "wire.call_id_equals_item_id" in ids(parse(response(call_item("fc_1"))))


def test_hosted_and_other_items_are_not_calls() -> None:
    body = response(
        {"id": "ws_1", "type": "web_search_call", "status": "completed"},
        {"id": "sh_1", "type": "shell_call"},
        {"id": "p_1", "type": "program"},
    )
    turn = parse(body)
    assert turn.tool_calls == []
    assert {"wire.server_side_tool_item", "wire.non_function_tool_call", "wire.output_item"} <= ids(turn)


def test_an_echo_that_made_optional_fields_required_is_a_warning() -> None:
    echoed = {
        "type": "function",
        "name": "forecast",
        "strict": True,
        "parameters": {**OPTIONAL, "required": ["city", "unit", "range"]},
    }
    turn = parse(response(call_item(name="forecast"), tools=[echoed]), tools=(FORECAST,))
    [finding] = [f for f in turn.findings if f.check_id == "wire.strict_normalised"]
    assert finding.severity == "warning" and finding.evidence == {"fields": {"forecast": ["unit", "range"]}}
    as_sent = {**echoed, "strict": False, "parameters": OPTIONAL}
    assert "wire.strict_normalised" not in ids(
        parse(response(call_item(), tools=[as_sent]), tools=(FORECAST,))
    )
    streamed = parse(
        sse(*events_of(response(call_item(name="forecast"), tools=[echoed]))), stream=True, tools=(FORECAST,)
    )
    assert "wire.strict_normalised" in ids(streamed)


# -- reading requests back ------------------------------------------------------------------------------


def read(body: dict[str, Any]) -> Any:
    return OpenAIResponsesAdapter().read_request(body, "/v1/responses")


def test_what_real_clients_write_reads_back() -> None:
    view = read(
        {
            "model": "gpt-5",
            "instructions": "Be brief.",
            "input": [
                {"role": "developer", "content": [{"type": "input_text", "text": "Use tools."}]},
                {"role": "user", "content": "Paris?"},
                {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAA", "summary": []},
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_Ab3",
                    "name": "weather",
                    "arguments": '{"city":"Paris"}',
                },
                {
                    "type": "function_call_output",
                    "call_id": "call_Ab3",
                    "output": [
                        {"type": "input_text", "text": "18C"},
                        {"type": "input_image", "image_url": "data:x"},
                    ],
                },
            ],
            "tools": [
                {"type": "function", "name": "weather", "parameters": CITY, "strict": True},
                {"type": "web_search"},
            ],
            "tool_choice": {
                "type": "allowed_tools",
                "mode": "required",
                "tools": [{"type": "function", "name": "weather"}],
            },
            "stream": True,
        }
    )
    assert [(m.role, m.content) for m in view.messages] == [
        ("system", "Be brief."),
        ("system", "Use tools."),
        ("user", "Paris?"),
        ("assistant", None),
        ("tool", None),
    ]
    assistant = view.messages[3]
    assert [(c.id, c.name, c.arguments, c.extra) for c in assistant.tool_calls] == [
        ("call_Ab3", "weather", {"city": "Paris"}, {"item_id": "fc_1"})
    ]
    assert [i["type"] for i in assistant.extra["openai_output"]] == ["reasoning", "function_call"]
    result = view.messages[4].tool_result
    assert result is not None and (result.call_id, result.name, result.content) == (
        "call_Ab3",
        "weather",
        "18C",
    )
    assert (
        [t.name for t in view.tools] == ["weather"]
        and view.tool_choice == ToolChoice("required")
        and view.stream
    )
    found = {f.check_id for f in view.findings}
    assert {
        "wire.request_role_mapped:developer",
        "wire.request_part_not_read:input_image",
        "wire.request_tool_not_read:web_search",
        "wire.request_tool_choice_allowed_tools",
    } <= found
    assert [f for f in view.findings if f.severity != "info"] == []


def test_a_string_input_and_chat_shaped_declarations() -> None:
    view = read(
        {
            "model": "m",
            "input": "Hi",
            "tools": [{"type": "function", "function": {"name": "weather", "parameters": CITY}}],
            "tool_choice": {"type": "function", "function": {"name": "weather"}},
        }
    )
    assert [(m.role, m.content) for m in view.messages] == [("user", "Hi")]
    assert [t.name for t in view.tools] == ["weather"] and view.tool_choice == ToolChoice("named", "weather")
    assert {"wire.request_tool_shape", "wire.request_tool_choice_shape"} <= {
        f.check_id for f in view.findings
    }


def test_a_chained_request_answers_calls_the_server_holds() -> None:
    view = read(
        {
            "model": "m",
            "previous_response_id": "resp_1",
            "input": [{"type": "function_call_output", "call_id": "call_Ab3", "output": "18C"}],
        }
    )
    [message] = view.messages
    assert message.tool_result is not None and message.tool_result.call_id == "call_Ab3"
    assert [f.check_id for f in view.findings] == ["wire.request_previous_response_id"]
