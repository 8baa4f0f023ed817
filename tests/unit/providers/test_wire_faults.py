"""Each fault of a response or request body is its own named finding, never an exception.

Hand-made bodies for each finding the parsers give instead of crashing: ``wire.body_too_deep``,
``wire.field_wrong_type`` (with the JSON path and the expected type), ``wire.usage_not_integer``,
``wire.invalid_unicode``, ``wire.json_nonstandard_number``, ``wire.body_not_object``,
``wire.stream_event_not_object``, ``wire.sse_stray_lines``, ``wire.arguments_too_deep``,
``wire.arguments_nonfinite_number``, ``wire.body_too_large`` and ``wire.request_too_deep``; lone
surrogates anywhere in a reply of every format; and the last-resort guard, which marks its
finding so that the property and mutation tests can tell it was never reached.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from harness.model import (
    Finding,
    Message,
    OversizedResponse,
    ParsedTurn,
    ToolChoice,
    ToolResult,
    WireResponse,
)
from harness.providers import RequestOptions, adapter_class, formats
from harness.providers._json import SURROGATE
from harness.providers.adapter import reached_guard
from harness.providers.framing import decode_stream
from harness.providers.prompted import prompted
from harness.transport.send import json_body
from tests.helpers.eventstream import EVENTSTREAM, b64
from tests.helpers.hostile_replies import MARK, Body, holds, marked_as, reply_body, swapped
from tests.helpers.realworld import cases
from tests.helpers.transcripts import WEATHER

FORMATS = tuple(formats())  # every registered format


def parse(fmt: str, body: Any, *, stream: bool = False, status: int = 200) -> ParsedTurn:
    if isinstance(body, bytes):  # an event stream, as the transport hands it over
        response = WireResponse(status, b64(body), {"content-type": EVENTSTREAM})
    else:
        response = WireResponse(status, body if isinstance(body, str) else json.dumps(body), {})
    turn = adapter_class(fmt)().parse(response, stream=stream)
    assert not reached_guard(turn.findings), turn.findings
    return turn


def finding(turn: ParsedTurn, check_id: str) -> Finding:
    found = [f for f in turn.findings if f.check_id == check_id]
    assert found, f"no {check_id} in {[f.check_id for f in turn.findings]}"
    return found[0]


def sse(*chunks: Any) -> str:
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def chat(message: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "finish_reason": "stop", "message": message}], **extra}


NEW_FAULTS = {
    "wire.body_too_deep",
    "wire.body_not_object",
    "wire.field_wrong_type",
    "wire.usage_not_integer",
    "wire.invalid_unicode",
    "wire.json_nonstandard_number",
    "wire.stream_event_not_object",
    "wire.sse_stray_lines",
    "wire.arguments_too_deep",
    "wire.tool_call_missing_name",
}
REAL = cases(*FORMATS)


@pytest.mark.parametrize("case", REAL, ids=[c["id"] for c in REAL])
def test_real_traffic_shows_none_of_these_faults(case: dict[str, Any]) -> None:
    """The checks fire on broken bodies only: every real recorded body is free of them."""
    response = case["response"]
    turn = parse(case["wire_format"], response["body"], stream=response["stream"], status=response["status"])
    assert not {f.check_id for f in turn.findings} & NEW_FAULTS, turn.findings


# -- depth ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("depth", [201, 2000, 100_000])
def test_a_body_nested_too_deep_is_body_too_deep(fmt: str, depth: int) -> None:
    turn = parse(fmt, "[" * depth + "]" * depth)
    assert finding(turn, "wire.body_too_deep").severity == "error"
    assert turn.error is not None and turn.error.code == "body_too_deep"


def test_depth_up_to_the_limit_is_read() -> None:
    arguments = json.dumps({"a": [[[1]]]})
    body = chat(
        {"tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": arguments}}]}
    )
    body["extra"] = json.loads("[" * 195 + "]" * 195)
    turn = parse("openai-chat", body)
    assert turn.tool_calls[0].arguments == {"a": [[[1]]]}
    assert "wire.body_too_deep" not in {f.check_id for f in turn.findings}


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_stream_payload_nested_too_deep_is_skipped_and_noted(fmt: str) -> None:
    deep = "[" * 3000 + "]" * 3000
    turn = parse(fmt, f"data: {deep}\n\ndata: {deep}\n\n", stream=True)
    assert "2 stream payload(s)" in finding(turn, "wire.body_too_deep").detail


def test_an_error_body_nested_too_deep_keeps_its_text() -> None:
    turn = parse("openai-chat", "{" * 1 + '"a":' + "[" * 3000 + "]" * 3000 + "}", status=500)
    assert turn.error is not None and turn.error.status == 500
    assert "wire.body_too_deep" in {f.check_id for f in turn.findings}


def test_arguments_nested_too_deep_are_a_parse_error() -> None:
    arguments = "[" * 5000 + "]" * 5000
    body = chat(
        {"tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": arguments}}]}
    )
    turn = parse("openai-chat", body)
    [call] = turn.tool_calls
    assert call.arguments is None and call.parse_error and "deeper" in call.parse_error
    assert finding(turn, "wire.arguments_too_deep").severity == "error"


# -- wrong JSON types -----------------------------------------------------------------------------------


def test_a_field_of_the_wrong_type_names_its_path_and_type() -> None:
    turn = parse("openai-chat", chat({"content": "hi", "tool_calls": "get_weather"}))
    wrong = finding(turn, "wire.field_wrong_type")
    assert "choices[0].message.tool_calls is string, expected array" in wrong.detail
    assert turn.text == "hi" and turn.tool_calls == []


def test_wrong_types_in_a_stream_name_the_event() -> None:
    chunks = [
        {"choices": [{"index": 0, "delta": {"content": "a"}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": 7, "function": ["x"]}]}}]},
        {"choices": ["oops"]},
    ]
    turn = parse("openai-chat", sse(*chunks), stream=True)
    wrong = finding(turn, "wire.field_wrong_type")
    assert wrong.evidence is not None
    fields = wrong.evidence["fields"]
    assert "events[1].choices[0].delta.tool_calls[0].id is integer, expected string (ignored)" in fields
    assert "events[1].choices[0].delta.tool_calls[0].function is array, expected object (ignored)" in fields
    assert "events[2].choices[0] is string, expected object (skipped)" in fields
    assert turn.text == "a"


@pytest.mark.parametrize(
    ("fmt", "body", "path"),
    [
        (
            "mistral-chat",
            chat({"tool_calls": [{"id": 123, "function": {"name": "f", "arguments": "{}"}}]}),
            ".id",
        ),
        ("openai-chat", {"choices": [{"index": "0", "message": {"content": "x"}}]}, "choices[0].index"),
        ("openai-chat", chat({"content": 5}), "choices[0].message.content"),
        ("openai-chat", chat({"content": "x"}, x_groq="g"), "x_groq"),
        ("ollama-chat", {"message": "hi", "done": True}, "message"),
        ("ollama-chat", {"message": {"tool_calls": [{"function": {"name": 5}}]}, "done": 1}, "function.name"),
        ("anthropic-messages", {"type": "message", "content": ["text"], "stop_reason": 1}, "content[0]"),
        ("anthropic-messages", {"content": [{"type": "text", "text": 3, "citations": 4}]}, "content[0].text"),
        ("gemini-generate", {"candidates": [{"content": {"parts": [{"text": 5}]}}]}, "parts[0].text"),
        ("gemini-generate", {"candidates": [{"finishReason": {"a": 1}}]}, "finishReason"),
        ("gemini-generate", {"candidates": ["x"], "usageMetadata": []}, "candidates[0]"),
    ],
)
def test_wrong_types_of_every_format_are_findings(fmt: str, body: dict[str, Any], path: str) -> None:
    turn = parse(fmt, body)
    assert path in finding(turn, "wire.field_wrong_type").detail
    for call in turn.tool_calls:
        assert isinstance(call.name, str) and isinstance(call.id, str)


def test_non_object_stream_payloads_are_noted() -> None:
    turn = parse("anthropic-messages", 'data: "ping"\n\ndata: [1, 2]\n\ndata: null\n\n', stream=True)
    detail = finding(turn, "wire.stream_event_not_object").detail
    assert detail.startswith("3 stream payload(s)") and "array" in detail and "null" in detail


def test_a_body_that_is_not_an_object_is_noted() -> None:
    turn = parse("gemini-generate", [1, 2])
    assert "array" in finding(turn, "wire.body_not_object").detail and turn.error is not None


def test_huge_partial_args_indexes_are_a_bad_path_not_a_huge_list() -> None:
    call = {
        "name": "f",
        "willContinue": True,
        "partialArgs": [{"jsonPath": "$.a[99999999999]", "stringValue": "x"}, {"jsonPath": "$" + ".a" * 500}],
    }
    chunks = [{"candidates": [{"content": {"parts": [{"functionCall": call}]}}]}]
    chunks.append({"candidates": [{"content": {"parts": [{"functionCall": {}}]}, "finishReason": "STOP"}]})
    turn = parse("gemini-generate", sse(*chunks), stream=True)
    assert finding(turn, "wire.partial_args_bad_path") and turn.tool_calls[0].arguments == {}


# -- token counts -------------------------------------------------------------------------------------


def test_token_counts_as_strings_are_read_other_values_dropped() -> None:
    turn = parse(
        "openai-chat", chat({"content": "x"}, usage={"prompt_tokens": "12", "completion_tokens": -3})
    )
    assert turn.usage is not None and (turn.usage.input_tokens, turn.usage.output_tokens) == (12, None)
    detail = finding(turn, "wire.usage_not_integer").detail
    assert "usage.prompt_tokens is the string '12'; read as 12" in detail
    assert "usage.completion_tokens is -3; dropped" in detail


@pytest.mark.parametrize("value", [1.5, True, "1e3", [], {"n": 1}, "-4", "9" * 40])
@pytest.mark.parametrize("fmt", ["ollama-chat", "anthropic-messages", "gemini-generate"])
def test_bad_token_counts_of_every_format_are_dropped(fmt: str, value: Any) -> None:
    bodies = {
        "ollama-chat": {
            "message": {"content": "x"},
            "done": True,
            "prompt_eval_count": value,
            "eval_count": 2,
        },
        "anthropic-messages": {"content": [], "usage": {"input_tokens": value, "output_tokens": 2}},
        "gemini-generate": {
            "candidates": [],
            "usageMetadata": {"promptTokenCount": value, "candidatesTokenCount": 2},
        },
    }
    turn = parse(fmt, bodies[fmt])
    assert turn.usage is not None and (turn.usage.input_tokens, turn.usage.output_tokens) == (None, 2)
    assert "dropped" in finding(turn, "wire.usage_not_integer").detail


# -- Unicode --------------------------------------------------------------------------------------------


def test_a_lone_surrogate_escape_becomes_the_replacement_character() -> None:
    arguments = '{"city": "Paris\\ud83d"}'
    text = json.dumps(
        chat(
            {
                "content": "hi \ud83d",
                "tool_calls": [{"id": "c\udc80", "function": {"name": "get\ud83d", "arguments": arguments}}],
            }
        )
    )
    assert "\\ud83d" in text  # the JSON text is ASCII: only decoding makes the surrogate
    turn = parse("openai-chat", text)
    [call] = turn.tool_calls
    assert turn.text == "hi \ufffd" and call.name == "get\ufffd" and call.wire_id == "c\ufffd"
    assert call.arguments == {"city": "Paris\ufffd"}
    assert "wire.invalid_unicode" in {f.check_id for f in turn.findings}
    json.dumps([call.name, call.arguments, turn.text], ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("stream", [False, True])
def test_invalid_utf8_bytes_become_the_replacement_character(fmt: str, stream: bool) -> None:
    raw = b'data: {"choices": [{"delta": {"content": "caf\xc3"}}], "x": "\xff"}\n\n'
    text = raw.decode("utf-8", errors="surrogateescape")
    turn = parse(fmt, text if stream else text.removeprefix("data: "), stream=stream)
    assert "2 character(s)" in finding(turn, "wire.invalid_unicode").detail
    json.dumps(str(turn), ensure_ascii=False).encode("utf-8")


def test_an_error_message_with_a_lone_surrogate_is_repaired() -> None:
    turn = parse("openai-chat", '{"error": {"message": "bad \\udc80 input"}}', status=400)
    assert turn.error is not None and turn.error.message == "bad \ufffd input"
    assert "wire.invalid_unicode" in {f.check_id for f in turn.findings}


def test_nan_and_infinity_are_noted() -> None:
    turn = parse(
        "openai-chat", '{"choices": [], "usage": {"prompt_tokens": NaN, "completion_tokens": Infinity}}'
    )
    assert "NaN" in finding(turn, "wire.json_nonstandard_number").detail
    assert turn.usage is not None and turn.usage.input_tokens is None


def test_an_integer_too_long_to_convert_is_not_json() -> None:
    turn = parse("openai-chat", '{"choices": [], "n": ' + "9" * 5000 + "}")
    assert "wire.body_not_json" in {f.check_id for f in turn.findings}


# -- framing ------------------------------------------------------------------------------------------


def test_sse_lines_split_only_at_cr_and_lf() -> None:
    """JSON strings may hold U+2028, U+0085 raw; ``str.splitlines`` would cut a payload there."""
    chunk = {"choices": [{"index": 0, "delta": {"content": "a\u2028b\x85c\x1cd"}}]}
    body = "data: " + json.dumps(chunk, ensure_ascii=False) + "\n\ndata: [DONE]\n\n"
    turn = parse("openai-chat", body, stream=True)
    assert turn.text == "a\u2028b\x85c\x1cd" and not turn.findings


def test_lines_that_are_no_sse_field_are_noted() -> None:
    stream = decode_stream('data: {"a": 1}\n\nta: {"b": 2}\n\n')
    assert stream.stray_lines == ['ta: {"b": 2}']
    turn = parse("openai-chat", 'data: {"choices": []}\nta: {"b": 2}\n\ndata: [DONE]\n\n', stream=True)
    assert finding(turn, "wire.sse_stray_lines").evidence == {"lines": ['ta: {"b": 2}']}


# -- check ids ----------------------------------------------------------------------------------------


def test_check_ids_never_carry_arbitrary_wire_text() -> None:
    body = {"content": [{"type": "x" * 500}, {"type": "tool use!"}], "stop_reason": "[[[["}
    body["content"].append({"type": "tool_use", "id": "t", "name": "f", "input": {}})
    turn = parse("anthropic-messages", body)
    ids = {f.check_id for f in turn.findings}
    assert "wire.unknown_content_block:other" in ids and "wire.stop_reason_other_with_tool_use" in ids
    assert all(len(i) < 80 for i in ids)


# -- the last resort --------------------------------------------------------------------------------------


def test_the_guard_marks_its_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.providers.openai import OpenAIChatAdapter

    def crash(self: Any, body: dict[str, Any]) -> ParsedTurn:
        raise RuntimeError("boom \udc80")

    monkeypatch.setattr(OpenAIChatAdapter, "parse_body", crash)
    turn = OpenAIChatAdapter().parse(WireResponse(200, "{}", {}), stream=False)
    assert reached_guard(turn.findings)
    [guard] = [f for f in turn.findings if f.check_id == "wire.malformed_body"]
    assert guard.evidence == {"guard": "Adapter.parse"} and "boom \ufffd" in guard.detail


def test_the_prompted_guard_marks_its_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    adapter = prompted(adapter_class("openai-chat")(), "xml")

    def crash(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("bad text")

    monkeypatch.setattr(adapter.protocol, "parse", crash)
    turn = adapter.parse(WireResponse(200, json.dumps(chat({"content": "x"})), {}), stream=False)
    assert reached_guard(turn.findings) and turn.findings[-1].evidence == {"guard": "PromptedAdapter.parse"}


# -- requests -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_request_nested_too_deep_is_request_too_deep(fmt: str) -> None:
    deep: Any = "x"
    for _ in range(3000):
        deep = [deep]
    view = adapter_class(fmt)().read_request({"messages": deep, "contents": deep}, "/m:generateContent")
    assert [f.check_id for f in view.findings] == ["wire.request_too_deep"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_request_strings_with_lone_surrogates_are_repaired_in_a_copy(fmt: str) -> None:
    body = {
        "model": "m\ud83d",
        "messages": [{"role": "user", "content": "hi\udc80"}],
        "contents": [{"role": "user", "parts": [{"text": "hi\udc80"}]}],
        "input": [{"role": "user", "content": "hi\udc80"}],
        "max_tokens": 5,
    }
    if fmt == "gemini-interactions":  # its input is steps, or one string
        body["input"] = "hi\udc80"
    before = copy.deepcopy(body)
    view = adapter_class(fmt)().read_request(body, "/v1beta/models/m:generateContent")
    assert body == before, "the caller's body must not change"
    assert [m.content for m in view.messages] == ["hi\ufffd"]
    assert "wire.invalid_unicode" in {f.check_id for f in view.findings}
    assert not reached_guard(view.findings)


def test_prompted_mode_reads_requests_with_its_inner_reader() -> None:
    adapter = prompted(adapter_class("openai-chat")(), "hermes")
    view = adapter.read_request({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    assert [m.content for m in view.messages] == ["hi"]
    assert "wire.prompted_request_read_natively" in {f.check_id for f in view.findings}


# -- text protocols ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["json", "xml", "xml-name-attr", "hermes"])
@pytest.mark.parametrize(
    "text",
    [
        "<a>" * 3000 + "x" + "</a>" * 3000,
        "<tool_call>" + '{"a":' * 3000 + "1" + "}" * 3000 + "</tool_call>",
        '{"tool_calls": [{"name": "f", "arguments": ' + "[" * 3000 + "]" * 3000 + "}]}",
        "<tool_call><tool_name>f</tool_name><arguments><n>" + "9" * 5000 + "</n></arguments></tool_call>",
        '<tool_call>{"name": "f\\ud83d", "arguments": {"a": "\\udc80"}}</tool_call>',
        '<tool_call><tool_name>f</tool_name><arguments>{"a": "\\ud83d"}</arguments></tool_call>',
    ],
    ids=[
        "deep-xml",
        "deep-json-tag",
        "deep-json-arguments",
        "long-integer",
        "surrogate-json",
        "surrogate-xml",
    ],
)
def test_text_protocols_cope_with_hostile_model_text(protocol: str, text: str) -> None:
    adapter = prompted(adapter_class("openai-chat")(), protocol)
    turn = adapter.parse(WireResponse(200, json.dumps(chat({"content": text})), {}), stream=False)
    assert not reached_guard(turn.findings), [f.detail for f in turn.findings]
    for call in turn.tool_calls:
        json.dumps([call.name, call.arguments, call.raw_arguments], ensure_ascii=False).encode("utf-8")
    if turn.text is not None:
        turn.text.encode("utf-8")


# -- a body past the transport's limit ------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("status", [200, 500])
def test_a_body_past_the_limit_is_body_too_large_never_a_partial_turn(
    fmt: str, stream: bool, status: int
) -> None:
    """The first bytes of a stream cut at the limit could parse as a turn with calls: they are not read."""
    head = sse(chat({"tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}}]}))
    response = OversizedResponse(status, head, {}, received=40 << 20, limit=32 << 20)
    turn = adapter_class(fmt)().parse(response, stream=stream)
    assert turn.error is not None and turn.error.code == "body_too_large" and not turn.tool_calls
    (only,) = turn.findings
    assert only.check_id == "wire.body_too_large" and only.severity == "error"
    assert "33,554,432 bytes" in only.detail and "41,943,040" in only.detail


# -- numbers JSON cannot carry in a call's arguments ---------------------------------------------------------


def hostile_reply(fmt: str, stream: bool, literal: str) -> Body:
    """A call of ``fmt`` whose argument ``n`` is written ``literal`` on the wire."""
    body = reply_body(fmt, stream, name="get_weather", arguments={"city": "Paris", "n": MARK}, text=None)
    return marked_as(body, literal)


OBJECT_FORMATS = (
    "anthropic-messages",
    "gemini-generate",
    "gemini-interactions",
    "ollama-chat",
    "bedrock-converse",
)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("literal", ["1e999", "-1e999", "NaN", "Infinity", "1" + "0" * 400 + ".0"])
def test_a_number_json_cannot_carry_is_a_finding_on_the_call_and_null(
    fmt: str, stream: bool, literal: str
) -> None:
    """In a format whose arguments are objects the value was echoed into the next request and
    the run ended in an ``error`` charged to the harness (ValueError: out of range float)."""
    turn = parse(fmt, hostile_reply(fmt, stream, literal), stream=stream)
    (call,) = turn.tool_calls
    assert call.arguments == {"city": "Paris", "n": None} and call.parse_error is None
    found = finding(turn, "wire.arguments_nonfinite_number")
    assert found.severity == "error" and found.detail.startswith("call 0 (get_weather): ")
    assert found.evidence == {"pointers": ["/n"]}
    adapter = adapter_class(fmt)()
    history = [
        Message("user", "weather?"),
        turn.as_message(),
        Message("tool", tool_result=ToolResult(call.id, call.name, "sunny")),
    ]
    wire = adapter.build_request(history, [WEATHER], ToolChoice("auto"), RequestOptions("m", stream=stream))
    sent = json_body(wire.body)  # what goes back is JSON: the value as parsed, or the text as sent
    assert b'"n":null' in sent if fmt in OBJECT_FORMATS else literal.encode() in sent


def test_finite_numbers_are_left_alone() -> None:
    turn = parse("anthropic-messages", hostile_reply("anthropic-messages", False, "1e308"))
    assert turn.tool_calls[0].arguments == {"city": "Paris", "n": 1e308}
    assert "wire.arguments_nonfinite_number" not in {f.check_id for f in turn.findings}


# -- a lone surrogate anywhere -------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("place", ["text", "name", "argument", "id"])
def test_a_lone_surrogate_anywhere_in_any_reply_leaves_no_surrogate_behind(
    fmt: str, stream: bool, place: str
) -> None:
    """``\\ud83d`` in the text, the tool name, an argument or the call id of every format, whole and
    streamed: every string of the turn is valid Unicode, and the next request encodes."""
    name = "get_weather" + (MARK if place == "name" else "")
    arguments = {"city": "Paris" + (MARK if place == "argument" else "")}
    body = reply_body(
        fmt, stream, name=name, arguments=arguments, text="hi" + (MARK if place == "text" else "")
    )
    if place == "id":
        (call,) = parse(fmt, body, stream=stream).tool_calls
        assert call.wire_id and holds(body, call.wire_id)
        body = swapped(body, call.wire_id, call.wire_id + MARK)
    assert holds(body, MARK)
    turn = parse(fmt, swapped(body, MARK, "\\ud83d"), stream=stream)
    assert "wire.invalid_unicode" in {f.check_id for f in turn.findings}
    (call,) = turn.tool_calls
    strings = [turn.text, call.name, call.id, call.wire_id, json.dumps(call.arguments, ensure_ascii=False)]
    assert all(s is None or not SURROGATE.search(s) for s in strings), strings
    assert "\ufffd" in "".join(s or "" for s in strings)
    history = [
        Message("user", "hi"),
        turn.as_message(),
        Message("tool", tool_result=ToolResult(call.id, call.name, "ok")),
    ]
    wire = adapter_class(fmt)().build_request(
        history, [WEATHER], ToolChoice("auto"), RequestOptions("m", stream=stream)
    )
    json_body(wire.body)
