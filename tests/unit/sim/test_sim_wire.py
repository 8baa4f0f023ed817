"""The simulator's Anthropic Messages, Gemini and Gemini Interactions wire shapes, built and read
without a server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.scenarios import load
from harness.servers.sim.formats import FORMATS
from harness.servers.sim.script import Conversation, Reply
from harness.servers.sim.wire import SimRequest
from harness.servers.sim.wire_anthropic import ANTHROPIC
from harness.servers.sim.wire_gemini import GEMINI
from harness.servers.sim.wire_gemini_interactions import INTERACTIONS

SCENARIOS = load([Path(__file__).resolve().parents[3] / "scenarios"])
BY_ID = {s.id: s for s in SCENARIOS}
NEW_FORMATS = ["anthropic-messages", "gemini-generate", "gemini-interactions"]
WEATHER = ("get_weather", {"city": "Paris", "unit": "celsius"})


def test_formats_are_registered() -> None:
    assert FORMATS["anthropic-messages"] is ANTHROPIC and FORMATS["gemini-generate"] is GEMINI
    assert FORMATS["gemini-interactions"] is INTERACTIONS


# -- Anthropic wire shapes ---------------------------------------------------------------------


def events(body: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for block in body.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def test_anthropic_reads_system_user_blocks_turns_and_tools() -> None:
    body = {
        "system": [{"type": "text", "text": "Be brief."}],
        "tools": [{"name": "a"}, {"name": "b"}],
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "user", "content": [{"type": "text", "text": "there"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "a"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]},
            {"role": "assistant", "content": "Done."},
            {"role": "user", "content": "And again?"},
        ],
    }
    assert ANTHROPIC.read(SimRequest("/v1/messages", body)) == Conversation(
        [("system", "Be brief."), ("user", "Hi"), ("user", "there")],
        2,
        ["a", "b"],
        ["Hi", "there", "And again?"],
        0,  # the last user text ("And again?") opens a phase: no assistant turn after it yet
        {"a": None, "b": None},
    )


def test_anthropic_whole_message() -> None:
    reply = Reply([WEATHER, ("get_time", {})])
    message = json.loads(ANTHROPIC.respond(SimRequest("/v1/messages", {"model": "m"}), reply, "s").body)
    assert message["type"] == "message" and message["stop_reason"] == "tool_use"
    assert [b["type"] for b in message["content"]] == ["tool_use", "tool_use"]
    assert all(b["id"].startswith("toolu_") for b in message["content"])
    assert set(message["usage"]) == {"input_tokens", "output_tokens"}
    text = json.loads(ANTHROPIC.respond(SimRequest("/v1/messages", {}), Reply(text="Hi"), "s").body)
    assert (text["content"], text["stop_reason"]) == ([{"type": "text", "text": "Hi"}], "end_turn")


def test_anthropic_stream_events_fragments_and_empty_input() -> None:
    reply = Reply([WEATHER, ("get_time", {})])
    response = ANTHROPIC.respond(SimRequest("/v1/messages", {"stream": True}), reply, "s")
    stream = events(response.body)
    assert response.content_type == "text/event-stream"
    assert all(name == data["type"] for name, data in stream)
    names = [name for name, _ in stream]
    assert names[:2] == ["message_start", "ping"] and names[-2:] == ["message_delta", "message_stop"]
    deltas = [(d["index"], d["delta"]["partial_json"]) for n, d in stream if n == "content_block_delta"]
    first = [piece for index, piece in deltas if index == 0]
    assert len(first) > 1 and json.loads("".join(first)) == WEATHER[1]
    assert not [piece for index, piece in deltas if index == 1]  # no delta for {} input
    assert stream[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_anthropic_streams_text_in_fragments() -> None:
    text = "The weather in Paris is 18 degrees and light rain."
    response = ANTHROPIC.respond(SimRequest("/v1/messages", {"stream": True}), Reply(text=text), "s")
    stream = events(response.body)
    pieces = [d["delta"]["text"] for n, d in stream if n == "content_block_delta"]
    assert len(pieces) > 1 and "".join(pieces) == text


def test_anthropic_error_envelope() -> None:
    body = json.loads(ANTHROPIC.error(400, "bad").body)
    assert body["type"] == "error" and body["error"] == {"type": "invalid_request_error", "message": "bad"}


# -- Gemini wire shapes ------------------------------------------------------------------------


STREAM_PATH = "/v1beta/models/sim:streamGenerateContent"


def test_gemini_reads_system_contents_turns_and_tools_in_either_casing() -> None:
    body = {
        "system_instruction": {"parts": [{"text": "Be brief."}]},
        "tools": [{"functionDeclarations": [{"name": "a"}]}, {"function_declarations": [{"name": "b"}]}],
        "contents": [
            {"role": "user", "parts": [{"text": "Hi"}, {"text": "there"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "a", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "a", "response": {}}}]},
            {"role": "model", "parts": [{"text": "Done."}]},
            {"role": "user", "parts": [{"text": "And again?"}]},
        ],
    }
    assert GEMINI.read(SimRequest("/v1beta/models/sim:generateContent", body)) == Conversation(
        [("system", "Be brief."), ("user", "Hi\nthere")],
        2,
        ["a", "b"],
        ["Hi\nthere", "And again?"],
        0,
        {"a": None, "b": None},
    )


def test_gemini_whole_response_has_call_ids_and_usage() -> None:
    response = GEMINI.respond(SimRequest("/v1beta/models/m1:generateContent", {}), Reply([WEATHER]), "s")
    body = json.loads(response.body)
    candidate = body["candidates"][0]
    assert candidate["finishReason"] == "STOP" and body["modelVersion"] == "m1"
    call = candidate["content"]["parts"][0]["functionCall"]
    assert (call["name"], call["args"]) == WEATHER and call["id"]
    assert body["usageMetadata"]["totalTokenCount"] == (
        body["usageMetadata"]["promptTokenCount"] + body["usageMetadata"]["candidatesTokenCount"]
    )


def test_gemini_sse_stream_ends_with_finish_and_usage_and_no_done() -> None:
    text = "The weather in Paris is 18 degrees."
    body = GEMINI.respond(SimRequest(STREAM_PATH + "?alt=sse", {}), Reply(text=text), "s").body
    assert "[DONE]" not in body
    chunks = [json.loads(line[len("data: ") :]) for line in body.splitlines() if line.startswith("data: ")]
    pieces = [c["candidates"][0]["content"]["parts"][0]["text"] for c in chunks]
    assert len(pieces) > 1 and "".join(pieces) == text
    assert [("finishReason" in c["candidates"][0], "usageMetadata" in c) for c in chunks] == (
        [(False, False)] * (len(chunks) - 1) + [(True, True)]
    )


def test_gemini_stream_without_alt_sse_is_a_json_array_of_whole_calls() -> None:
    response = GEMINI.respond(SimRequest(STREAM_PATH, {}), Reply([WEATHER, ("get_time", {})]), "s")
    chunks = json.loads(response.body)
    assert isinstance(chunks, list) and len(chunks) == 2
    calls = [c["candidates"][0]["content"]["parts"][0]["functionCall"] for c in chunks]
    assert [(c["name"], c["args"]) for c in calls] == [WEATHER, ("get_time", {})]


def test_gemini_error_envelope() -> None:
    assert json.loads(GEMINI.error(400, "bad").body) == {
        "error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}
    }


@pytest.mark.parametrize("fmt", NEW_FORMATS)
def test_responses_are_deterministic(fmt: str) -> None:
    request = SimRequest("/v1beta/models/sim:streamGenerateContent?alt=sse", {"stream": True})
    first = FORMATS[fmt].respond(request, Reply([WEATHER]), "seed").body
    assert first == FORMATS[fmt].respond(request, Reply([WEATHER]), "seed").body
    assert first != FORMATS[fmt].respond(request, Reply([WEATHER]), "other").body


# -- Gemini Interactions wire shapes -------------------------------------------------------------------

INTERACTIONS_PATH = "/v1beta/interactions"


def user(text: str) -> dict[str, Any]:
    return {"type": "user_input", "content": [{"type": "text", "text": text}]}


def test_interactions_reads_system_steps_turns_and_tools() -> None:
    body = {
        "system_instruction": "Be brief.",
        "tools": [
            {"type": "function", "name": "a", "parameters": {"type": "object"}},
            {"type": "google_search"},
        ],
        "input": [
            user("Hi"),
            user("there"),
            {"type": "thought", "signature": "s"},
            {"type": "function_call", "id": "c", "name": "a", "arguments": {}},
            {"type": "function_result", "call_id": "c", "result": "ok"},
            {"type": "model_output", "content": [{"type": "text", "text": "Done."}]},
            user("And again?"),
        ],
    }
    assert INTERACTIONS.read(SimRequest(INTERACTIONS_PATH, body)) == Conversation(
        [("system", "Be brief."), ("user", "Hi"), ("user", "there")],
        2,  # the thought and the call are one model turn; the answer after the result another
        ["a"],
        ["Hi", "there", "And again?"],
        0,
        {"a": {"type": "object"}},
    )
    plain = INTERACTIONS.read(SimRequest(INTERACTIONS_PATH, {"input": "Hi"}))
    assert (plain.opening, plain.assistant_turns) == ([("user", "Hi")], 0)
    odd = INTERACTIONS.read(SimRequest(INTERACTIONS_PATH, {"input": [{"type": ["x"]}, 3], "tools": "x"}))
    assert (odd.opening, odd.tool_names) == ([], [])


def test_interactions_whole_response() -> None:
    request = SimRequest(INTERACTIONS_PATH, {"model": "m", "store": False, "input": "Hi"})
    calls = json.loads(INTERACTIONS.respond(request, Reply([WEATHER, ("get_time", {})]), "s").body)
    assert (calls["object"], calls["status"], calls["model"]) == ("interaction", "requires_action", "m")
    assert [s["type"] for s in calls["steps"]] == ["thought", "function_call", "function_call"]
    assert calls["steps"][0]["signature"] and all(s["id"] for s in calls["steps"][1:])
    assert set(calls["usage"]) == {"total_input_tokens", "total_output_tokens", "total_tokens"}
    text = json.loads(INTERACTIONS.respond(request, Reply(text="Hi"), "s").body)
    assert (text["status"], text["steps"]) == (
        "completed",
        [{"type": "model_output", "content": [{"type": "text", "text": "Hi"}]}],
    )


def test_interactions_stream_events_fragments_and_empty_arguments() -> None:
    request = SimRequest(INTERACTIONS_PATH, {"model": "m", "store": False, "stream": True, "input": "Hi"})
    response = INTERACTIONS.respond(request, Reply([WEATHER, ("get_time", {})]), "s")
    stream = events(response.body)
    assert response.content_type == "text/event-stream" and "[DONE]" not in response.body
    assert all(name == data["event_type"] for name, data in stream)
    names = [name for name, _ in stream]
    assert names[:3] == ["interaction.created", "interaction.status_update", "step.start"]
    assert (
        names[-1] == "interaction.completed" and stream[-1][1]["interaction"]["status"] == "requires_action"
    )
    deltas = [(d["index"], d["delta"]) for n, d in stream if n == "step.delta"]
    weather = "".join(delta["arguments"] for index, delta in deltas if index == 1)
    assert json.loads(weather) == WEATHER[1] and len([i for i, _ in deltas if i == 1]) > 1
    assert [i for i, _ in deltas if i == 2] == []  # no arguments: no arguments_delta at all
    starts = [d["step"] for n, d in stream if n == "step.start"]
    assert starts[2] == {"type": "function_call", "id": starts[2]["id"], "name": "get_time", "arguments": {}}


def test_interactions_store_and_previous_interaction_id() -> None:
    stored = SimRequest(INTERACTIONS_PATH, {"model": "m", "input": [user("First question")]})
    first = json.loads(INTERACTIONS.respond(stored, Reply([WEATHER]), "stored-seed").body)
    follow = {"previous_interaction_id": first["id"], "input": [{"type": "function_result", "call_id": "x"}]}
    conversation = INTERACTIONS.read(SimRequest(INTERACTIONS_PATH, follow))
    assert conversation.opening == [("user", "First question")] and conversation.assistant_turns == 1
    unstored = SimRequest(INTERACTIONS_PATH, {"model": "m", "store": False, "input": [user("Other")]})
    other = json.loads(INTERACTIONS.respond(unstored, Reply([WEATHER]), "unstored-seed").body)
    lost = INTERACTIONS.read(
        SimRequest(INTERACTIONS_PATH, {**follow, "previous_interaction_id": other["id"]})
    )
    assert lost.opening == [] and lost.assistant_turns == 0


def test_interactions_error_envelope() -> None:
    assert json.loads(INTERACTIONS.error(400, "bad").body) == {
        "error": {"code": "invalid_request", "message": "bad"}
    }
    assert json.loads(INTERACTIONS.error(503, "busy").body)["error"]["code"] == "api_error"
    assert json.loads(INTERACTIONS.error(429, "slow").body)["error"]["code"] == "rate_limit_exceeded"
