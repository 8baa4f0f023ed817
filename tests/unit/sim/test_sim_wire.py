"""The simulator's Anthropic Messages and Gemini wire shapes, built and read without a server."""

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

SCENARIOS = load([Path(__file__).resolve().parents[3] / "scenarios"])
BY_ID = {s.id: s for s in SCENARIOS}
NEW_FORMATS = ["anthropic-messages", "gemini-generate"]
WEATHER = ("get_weather", {"city": "Paris", "unit": "celsius"})


def test_formats_are_registered() -> None:
    assert FORMATS["anthropic-messages"] is ANTHROPIC and FORMATS["gemini-generate"] is GEMINI


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
