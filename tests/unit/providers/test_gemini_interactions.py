"""The gemini-interactions adapter: request shapes, whole and streamed parses, errors.

No recorded traffic of the Interactions API exists yet, so the responses below are CONSTRUCTED
FROM THE REFERENCE (the python-genai SDK's types and ai.google.dev's pages, cited as [GI1]..[GI7]
in harness/providers/sources.py), written by hand: they are not recordings and do not belong in
tests/data/realworld. The simulator's side, tested over HTTP in tests/integration, is the other
half of the oracle.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.model import Message, ParsedTurn, ToolCall, ToolChoice, ToolResult, ToolSpec, WireResponse
from harness.providers import RequestOptions, adapter_class, truncation_reasons
from harness.providers.gemini_interactions import API_REVISION, GeminiInteractionsAdapter

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
WEATHER = ToolSpec("weather", "Weather for a city", SCHEMA)
ASK = [Message("system", "Be brief."), Message("user", "Weather in Paris?")]
SIGNATURE = "c2lnbmF0dXJl"


def build(messages: list[Message], choice: ToolChoice | None = None, **options: Any) -> Any:
    return GeminiInteractionsAdapter().build_request(
        messages, [WEATHER], choice or ToolChoice(), RequestOptions("gemini-3-flash-preview", **options)
    )


def parse(body: Any, *, stream: bool = False, status: int = 200) -> ParsedTurn:
    text = body if isinstance(body, str) else json.dumps(body)
    return GeminiInteractionsAdapter().parse(WireResponse(status, text), stream=stream)


def events(*payloads: dict[str, Any]) -> str:
    """SSE events named by their ``event_type``, as the streaming page shows them [GI3]."""
    return "".join(f"event: {p['event_type']}\ndata: {json.dumps(p)}\n\n" for p in payloads)


def ids(turn: ParsedTurn) -> set[str]:
    return {f.check_id for f in turn.findings}


def warnings(turn: ParsedTurn) -> set[str]:
    return {f.check_id for f in turn.findings if f.severity != "info"}


# -- constructed from the reference: an interaction that calls a function, whole and streamed ------------

CALLS = {
    "id": "v1_abc",
    "object": "interaction",
    "model": "gemini-3-flash-preview",
    "status": "requires_action",
    "steps": [
        {"type": "thought", "signature": SIGNATURE},
        {"type": "function_call", "id": "fc_1", "name": "weather", "arguments": {"city": "Paris"}},
        {"type": "function_call", "id": "fc_2", "name": "weather", "arguments": {"city": "Tokyo"}},
    ],
    "usage": {"total_input_tokens": 40, "total_output_tokens": 12, "total_tokens": 52},
}
CALLS_STREAM = events(
    {"event_type": "interaction.created", "interaction": {"id": "v1_abc", "status": "in_progress"}},
    {"event_type": "interaction.status_update", "interaction_id": "v1_abc", "status": "in_progress"},
    {"event_type": "step.start", "index": 0, "step": {"type": "thought"}},
    {"event_type": "step.delta", "index": 0, "delta": {"type": "thought_signature", "signature": SIGNATURE}},
    {"event_type": "step.stop", "index": 0},
    {
        "event_type": "step.start",
        "index": 1,
        "step": {"type": "function_call", "id": "fc_1", "name": "weather", "arguments": {}},
    },
    {"event_type": "step.delta", "index": 1, "delta": {"type": "arguments_delta", "arguments": '{"city": '}},
    {"event_type": "step.delta", "index": 1, "delta": {"type": "arguments_delta", "arguments": '"Paris"}'}},
    {"event_type": "step.stop", "index": 1},
    {
        "event_type": "step.start",
        "index": 2,
        "step": {"type": "function_call", "id": "fc_2", "name": "weather", "arguments": {}},
    },
    {"event_type": "step.delta", "index": 2, "delta": {"type": "arguments_delta", "arguments": '{"city":'}},
    {"event_type": "step.delta", "index": 2, "delta": {"type": "arguments_delta", "arguments": '"Tokyo"}'}},
    {"event_type": "step.stop", "index": 2},
    {
        "event_type": "interaction.completed",
        "interaction": {"id": "v1_abc", "status": "requires_action", "usage": CALLS["usage"]},
    },
)
ANSWER = {
    "id": "v1_def",
    "status": "completed",
    "steps": [{"type": "model_output", "content": [{"type": "text", "text": "Rain in Paris."}]}],
    "usage": {"total_input_tokens": 60, "total_output_tokens": 5},
}


# -- requests -------------------------------------------------------------------------------------------


def test_registered_with_its_auth_header_path_and_revision() -> None:
    adapter = adapter_class("gemini-interactions")()
    assert isinstance(adapter, GeminiInteractionsAdapter)
    assert adapter.auth_headers("k") == {"x-goog-api-key": "k"}
    request = build(ASK)
    assert request.path == "/v1beta/interactions" and request.headers == {"Api-Revision": API_REVISION}
    assert API_REVISION == "2026-05-20"


def test_system_input_tools_config_and_stateless_store() -> None:
    body = build(ASK, temperature=0.0, max_tokens=64, seed=7, stream=True).body
    assert body == {
        "model": "gemini-3-flash-preview",
        "system_instruction": "Be brief.",
        "input": [{"type": "user_input", "content": [{"type": "text", "text": "Weather in Paris?"}]}],
        "tools": [
            {"type": "function", "name": "weather", "description": "Weather for a city", "parameters": SCHEMA}
        ],
        "generation_config": {"tool_choice": "auto", "temperature": 0.0, "max_output_tokens": 64, "seed": 7},
        "store": False,
        "stream": True,
    }


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        (ToolChoice("auto"), "auto"),
        (ToolChoice("required"), "any"),
        (ToolChoice("none"), "none"),
        (ToolChoice("named", "weather"), {"allowed_tools": {"mode": "any", "tools": ["weather"]}}),
    ],
)
def test_every_tool_choice_is_sent_in_generation_config(choice: ToolChoice, wire: Any) -> None:
    request = build(ASK, choice)
    assert request.body["generation_config"]["tool_choice"] == wire
    assert request.findings == []  # the reference defines all four: nothing is unsupported


def test_parallel_tool_calls_has_no_control_and_is_noted() -> None:
    request = build(ASK, parallel_tool_calls=False)
    assert "parallel_tool_calls" not in json.dumps(request.body)
    assert [f.check_id for f in request.findings] == ["wire.parallel_tool_calls_unsupported"]


def test_history_is_written_back_as_steps_with_call_ids() -> None:
    first = parse(CALLS)
    history = [
        *ASK,
        first.as_message(),
        Message("tool", tool_result=ToolResult("fc_1", "weather", '{"rain": true}')),
        Message("tool", tool_result=ToolResult("fc_2", "weather", "no such city", is_error=True)),
    ]
    steps = build(history).body["input"]
    assert steps[1:] == [
        {"type": "thought", "signature": SIGNATURE},
        {"type": "function_call", "id": "fc_1", "name": "weather", "arguments": {"city": "Paris"}},
        {"type": "function_call", "id": "fc_2", "name": "weather", "arguments": {"city": "Tokyo"}},
        {"type": "function_result", "call_id": "fc_1", "name": "weather", "result": '{"rain": true}'},
        {
            "type": "function_result",
            "call_id": "fc_2",
            "name": "weather",
            "result": "no such city",
            "is_error": True,
        },
    ]


def test_a_turn_without_thought_is_rebuilt_text_first() -> None:
    message = Message(
        "assistant", "Looking.", [ToolCall("weather", {"city": "Paris"}, id="c1", wire_id="c1")]
    )
    assert build([*ASK, message]).body["input"][1:] == [
        {"type": "model_output", "content": [{"type": "text", "text": "Looking."}]},
        {"type": "function_call", "id": "c1", "name": "weather", "arguments": {"city": "Paris"}},
    ]


def test_kept_steps_that_no_longer_match_the_calls_are_rebuilt_and_noted() -> None:
    message = parse(CALLS).as_message()
    message.tool_calls = message.tool_calls[:1]
    request = build([*ASK, message])
    assert [s["type"] for s in request.body["input"][1:]] == ["function_call"]
    assert [f.check_id for f in request.findings] == ["wire.replay_steps_rebuilt"]


def test_unparsed_arguments_are_replayed_empty_and_noted() -> None:
    call = ToolCall("weather", None, '{"city": ', id="c1", wire_id="c1", parse_error="bad")
    request = build([*ASK, Message("assistant", None, [call])])
    assert request.body["input"][-1]["arguments"] == {}
    assert [f.check_id for f in request.findings] == ["wire.unparsed_arguments_replayed_empty"]
    broken = {**CALLS, "steps": [*CALLS["steps"][:1], {**CALLS["steps"][1], "arguments": '{"city": '}]}
    kept = build([*ASK, parse(broken).as_message()])  # the thought is kept: the steps go back as parsed
    assert kept.body["input"][1]["type"] == "thought" and kept.body["input"][2]["arguments"] == {}
    assert [f.check_id for f in kept.findings] == ["wire.unparsed_arguments_replayed_empty"]


def test_store_true_chains_turns_by_previous_interaction_id() -> None:
    """``request_options = {store = true}``: the first request sends the whole conversation; a later
    one only what came after the last model turn, and that turn's interaction id [GI4]."""
    opening = build(ASK, extra={"store": True}).body
    assert opening["store"] is True and "previous_interaction_id" not in opening
    assert [s["type"] for s in opening["input"]] == ["user_input"]
    results = [
        Message("tool", tool_result=ToolResult("fc_1", "weather", "rain")),
        Message("tool", tool_result=ToolResult("fc_2", "weather", "sun")),
    ]
    body = build([*ASK, parse(CALLS).as_message(), *results], extra={"store": True}).body
    assert body["previous_interaction_id"] == "v1_abc" and body["store"] is True
    assert [(s["type"], s["call_id"]) for s in body["input"]] == [
        ("function_result", "fc_1"),
        ("function_result", "fc_2"),
    ]
    assert body["system_instruction"] == "Be brief." and body["tools"]  # not inherited: sent again


def test_stateless_never_chains() -> None:
    body = build([*ASK, parse(CALLS).as_message()]).body
    assert "previous_interaction_id" not in body and body["store"] is False


def test_requests_read_back_to_the_same_conversation() -> None:
    history = [
        *ASK,
        parse(CALLS).as_message(),
        Message("tool", tool_result=ToolResult("fc_1", "weather", "rain")),
        Message("tool", tool_result=ToolResult("fc_2", "weather", "sun", is_error=True)),
        Message("assistant", "Rain, and no Tokyo."),
        Message("user", "Thanks."),
    ]
    request = build(history, ToolChoice("named", "weather"), stream=True)
    view = GeminiInteractionsAdapter().read_request(request.body, request.path)
    assert view.findings == ()
    assert [(m.role, m.content) for m in view.messages] == [(m.role, m.content) for m in history]
    assert [[(c.id, c.name, c.arguments) for c in m.tool_calls] for m in view.messages] == [
        [(c.id, c.name, c.arguments) for c in m.tool_calls] for m in history
    ]
    assert view.messages[2].extra["interactions_steps"][0] == {"type": "thought", "signature": SIGNATURE}
    assert [m.tool_result for m in view.messages] == [m.tool_result for m in history]
    assert view.tools == (WEATHER,) and view.tool_choice == ToolChoice("named", "weather")
    assert (view.stream, view.model) == (True, "gemini-3-flash-preview")


def test_reading_other_clients_input_shapes() -> None:
    adapter = GeminiInteractionsAdapter()
    plain = adapter.read_request({"model": "m", "input": "Hi"}, "/v1beta/interactions")
    assert [(m.role, m.content) for m in plain.messages] == [("user", "Hi")] and plain.findings == ()
    contents = adapter.read_request({"model": "m", "input": [{"type": "text", "text": "Hi"}]})
    assert [(m.role, m.content) for m in contents.messages] == [("user", "Hi")]
    continued = adapter.read_request(
        {"model": "m", "previous_interaction_id": "v1_abc", "input": [{"type": "user_input", "content": []}]}
    )
    assert "wire.request_previous_interaction" in {f.check_id for f in continued.findings}
    subset = adapter.read_request(
        {"model": "m", "input": "x", "generation_config": {"tool_choice": {"allowed_tools": {"mode": "any"}}}}
    )
    assert subset.tool_choice == ToolChoice("required")


# -- responses: whole and streamed through one parse path -------------------------------------------


def test_whole_interaction_with_calls() -> None:
    turn = parse(CALLS)
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("fc_1", "weather", {"city": "Paris"}),
        ("fc_2", "weather", {"city": "Tokyo"}),
    ]
    assert (turn.text, turn.finish_reason, turn.error) == (None, "requires_action", None)
    assert (turn.usage.input_tokens, turn.usage.output_tokens) == (40, 12)  # type: ignore[union-attr]
    assert turn.extra["interaction_id"] == "v1_abc"
    assert turn.findings == []


def test_the_stream_gives_the_same_turn() -> None:
    whole, streamed = parse(CALLS), parse(CALLS_STREAM, stream=True)
    assert streamed.findings == []
    for field in ("text", "finish_reason", "usage", "error", "reasoning", "extra"):
        assert getattr(streamed, field) == getattr(whole, field), field
    assert [(c.id, c.name, c.arguments) for c in streamed.tool_calls] == [
        (c.id, c.name, c.arguments) for c in whole.tool_calls
    ]
    assert streamed.tool_calls[0].raw_arguments == '{"city": "Paris"}'  # the deltas, as on the wire


@pytest.mark.parametrize("size", range(1, 17))
def test_the_stream_assembles_the_same_however_it_is_cut(size: int) -> None:
    data = CALLS_STREAM.encode()
    turn = GeminiInteractionsAdapter().parse_chunks(data[i : i + size] for i in range(0, len(data), size))
    expected = parse(CALLS_STREAM, stream=True)
    assert (turn.tool_calls, turn.finish_reason, turn.usage, turn.findings) == (
        expected.tool_calls,
        expected.finish_reason,
        expected.usage,
        expected.findings,
    )


def test_text_answer_and_thought_summary() -> None:
    turn = parse(
        {
            **ANSWER,
            "steps": [
                {"type": "thought", "summary": [{"type": "text", "text": "The tool said rain."}]},
                *ANSWER["steps"],
            ],
        }
    )
    assert (turn.text, turn.reasoning, turn.finish_reason) == (
        "Rain in Paris.",
        "The tool said rain.",
        "completed",
    )
    assert turn.tool_calls == [] and turn.findings == []
    streamed = parse(
        events(
            {"event_type": "interaction.created", "interaction": {"id": "v1_def", "status": "in_progress"}},
            {"event_type": "step.start", "index": 0, "step": {"type": "model_output"}},
            {"event_type": "step.delta", "index": 0, "delta": {"type": "text", "text": "Rain in "}},
            {"event_type": "step.delta", "index": 0, "delta": {"type": "text", "text": "Paris."}},
            {"event_type": "step.stop", "index": 0},
            {"event_type": "interaction.completed", "interaction": {"id": "v1_def", "status": "completed"}},
        ),
        stream=True,
    )
    assert (streamed.text, streamed.finish_reason, streamed.findings) == ("Rain in Paris.", "completed", [])


def test_incomplete_is_a_truncation_reason() -> None:
    assert "incomplete" in GeminiInteractionsAdapter.truncation_reasons
    assert "incomplete" in truncation_reasons()
    assert parse({**ANSWER, "status": "incomplete"}).finish_reason == "incomplete"


def test_input_steps_echoed_in_a_response_are_not_read_as_output() -> None:
    echoed = {
        **ANSWER,
        "steps": [
            {"type": "user_input", "content": [{"type": "text", "text": "Hi"}]},
            {"type": "function_call", "id": "old", "name": "weather", "arguments": {}},
            {"type": "function_result", "call_id": "old", "result": "rain"},
            *ANSWER["steps"],
        ],
    }
    turn = parse(echoed)
    assert (turn.text, turn.tool_calls) == ("Rain in Paris.", [])
    assert ids(turn) == {"wire.input_steps_echoed"} and warnings(turn) == set()


# -- deviations are findings ---------------------------------------------------------------------------------


def test_calls_under_another_status_and_the_status_without_calls() -> None:
    assert "wire.status_completed_with_function_calls" in warnings(parse({**CALLS, "status": "completed"}))
    assert "wire.status_requires_action_without_function_call" in warnings(
        parse({**ANSWER, "status": "requires_action"})
    )
    missing = {k: v for k, v in ANSWER.items() if k != "status"}
    assert "wire.interaction_status_missing" in warnings(parse(missing))
    assert "wire.interaction_unfinished" in warnings(
        parse({"id": "v1", "status": "in_progress", "steps": []})
    )
    assert "wire.interaction_unfinished" not in ids(parse(CALLS_STREAM, stream=True))  # it starts in_progress


def test_missing_and_duplicate_call_ids() -> None:
    step = {"type": "function_call", "name": "weather", "arguments": {"city": "Paris"}}
    missing = parse({**CALLS, "steps": [step]})
    assert missing.tool_calls[0].id_synthesized and "wire.missing_id" in warnings(missing)
    twice = {**step, "id": "same"}
    assert "wire.duplicate_tool_call_ids" in warnings(parse({**CALLS, "steps": [twice, twice]}))


def test_arguments_as_a_string_in_a_whole_step() -> None:
    step = {"type": "function_call", "id": "c", "name": "weather", "arguments": '{"city": "Paris"}'}
    turn = parse({**CALLS, "steps": [step]})
    assert turn.tool_calls[0].arguments == {"city": "Paris"}
    assert "wire.arguments_string_not_object" in warnings(turn)


def test_stream_faults() -> None:
    orphan = parse(
        events(
            {"event_type": "step.delta", "index": 3, "delta": {"type": "text", "text": "x"}},
            {"event_type": "interaction.completed", "interaction": {"id": "v1", "status": "completed"}},
        ),
        stream=True,
    )
    assert "wire.delta_without_step_start" in warnings(orphan)
    cut = parse(CALLS_STREAM.split("event: interaction.completed")[0], stream=True)
    assert "wire.stream_without_interaction_completed" in warnings(cut)
    renamed = parse(
        "event: step.stop\n"
        + 'data: {"event_type": "step.start", "index": 0, "step": {"type": "model_output"}}\n\n',
        stream=True,
    )
    assert "wire.event_name_mismatch" in warnings(renamed)


def test_unknown_steps_are_kept_for_replay_only() -> None:
    search = {"type": "google_search_call", "id": "s1", "arguments": {"queries": ["rain"]}}
    turn = parse({**ANSWER, "steps": [search, *ANSWER["steps"]]})
    assert "wire.unknown_step:google_search_call" in ids(turn) and warnings(turn) == set()
    replayed = build([*ASK, turn.as_message()]).body["input"]
    assert replayed[1] == search


# -- errors ----------------------------------------------------------------------------------------------


def test_an_error_response_is_the_turns_error() -> None:
    turn = parse({"error": {"code": "invalid_request", "message": "bad tools"}}, status=400)
    assert turn.error is not None
    assert (turn.error.status, turn.error.code, turn.error.message) == (400, "invalid_request", "bad tools")


def test_an_error_event_in_the_stream() -> None:
    turn = parse(
        events(
            {"event_type": "interaction.created", "interaction": {"id": "v1", "status": "in_progress"}},
            {"event_type": "error", "error": {"code": "not_found", "message": "Result not found."}},
        ),
        stream=True,
    )
    assert turn.error is not None and (turn.error.code, turn.error.message) == (
        "not_found",
        "Result not found.",
    )
    assert "wire.error_event_in_stream" in ids(turn)
    assert "wire.stream_without_interaction_completed" not in ids(turn)


def test_a_failed_interaction_is_an_error() -> None:
    failed = parse(
        {"id": "v1", "status": "failed", "steps": [], "errors": [{"code": "x", "message": "boom"}]}
    )
    assert failed.error is not None and (failed.error.code, failed.error.message) == ("x", "boom")
    bare = parse({"id": "v1", "status": "failed", "steps": []})
    assert bare.error is not None and bare.error.code == "failed"


# -- recognising recorded traffic -------------------------------------------------------------------


def test_claims_its_url_and_its_payloads() -> None:
    claims = GeminiInteractionsAdapter.claims_url
    assert claims("generativelanguage.googleapis.com", "/v1beta/interactions")
    assert claims("aiplatform.googleapis.com", "/v1beta1/projects/p/locations/l/interactions")
    assert not claims("example.com", "/interactions") and not claims("x", "/v1beta/models/m:generateContent")
    payload = GeminiInteractionsAdapter.claims_payload
    assert (
        payload(CALLS)
        and payload({"event_type": "step.delta"})
        and payload({"event_type": "error", "error": {}})
    )
    assert not payload({"event_type": ["step.delta"], "status": {}}) and not payload({"type": "message"})
