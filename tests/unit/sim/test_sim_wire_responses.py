"""The simulator's Responses API side, built and read without a server: what it reads of a request,
the items it writes (whole and streamed), the history checks the real API makes, and its deviations."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.model import WireResponse
from harness.providers import adapter_class
from harness.servers.sim.formats import FORMATS
from harness.servers.sim.hosted import Step
from harness.servers.sim.script import Conversation, Reply
from harness.servers.sim.wire import Response, SimRequest
from harness.servers.sim.wire_responses import DEVIATIONS, RESPONSES, STORE

WEATHER = ("get_weather", {"city": "Paris"})
TOOLS = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}, "strict": False}]
OPENING = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Paris?"}]


def request(**body: Any) -> SimRequest:
    return SimRequest("/v1/responses", {"model": "sim", "tools": TOOLS, **body})


def whole(response: Response) -> dict[str, Any]:
    assert response.status == 200 and response.content_type == "application/json"
    body: dict[str, Any] = json.loads(response.body)
    return body


def events(body: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for block in body.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def parsed(response: Response, stream: bool) -> Any:
    return adapter_class("openai-responses")().parse(
        WireResponse(response.status, response.body), stream=stream
    )


def test_registered() -> None:
    assert FORMATS["openai-responses"] is RESPONSES


def test_reads_instructions_a_string_input_and_counts_turns_of_items() -> None:
    assert RESPONSES.read(
        SimRequest("/v1/responses", {"instructions": "Be brief.", "input": "Hi"})
    ) == Conversation([("system", "Be brief."), ("user", "Hi")], 0, [], ["Hi"], 0, {})
    items = [
        *OPENING,
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "18C"},
        {"role": "assistant", "content": "Rain."},
        {"role": "user", "content": [{"type": "input_text", "text": "And Rome?"}]},
        {"type": "function_call", "call_id": "c2", "name": "get_weather", "arguments": "{}"},
    ]
    conversation = RESPONSES.read(request(input=items))
    assert conversation.opening == [("system", "Be brief."), ("user", "Weather in Paris?")]
    assert (conversation.assistant_turns, conversation.since_user) == (3, 1)  # reasoning + call is one turn
    assert conversation.user_texts == ["Weather in Paris?", "And Rome?"]
    assert conversation.tool_names == ["get_weather"] and conversation.tool_schemas == {
        "get_weather": {"type": "object"}
    }


def test_a_whole_response_holds_reasoning_message_and_calls() -> None:
    body = whole(RESPONSES.respond(request(input=OPENING), Reply([WEATHER], "Checking."), "seed"))
    assert [i["type"] for i in body["output"]] == ["reasoning", "message", "function_call"]
    call = body["output"][2]
    assert (
        call["call_id"].startswith("call_") and call["id"].startswith("fc_") and call["call_id"] != call["id"]
    )
    assert json.loads(call["arguments"]) == {"city": "Paris"}
    assert "encrypted_content" not in body["output"][0]
    assert (body["status"], body["object"], body["tools"]) == ("completed", "response", TOOLS)
    assert body["usage"]["total_tokens"] == body["usage"]["input_tokens"] + body["usage"]["output_tokens"]
    included = whole(
        RESPONSES.respond(
            request(input=OPENING, include=["reasoning.encrypted_content"]), Reply([WEATHER]), "seed"
        )
    )
    assert included["output"][0]["encrypted_content"].startswith("enc_")


def test_a_stream_is_its_item_events_in_order_without_done() -> None:
    response = RESPONSES.respond(
        request(input=OPENING, stream=True), Reply([WEATHER], "Checking the weather."), "seed"
    )
    assert response.content_type == "text/event-stream" and "[DONE]" not in response.body
    found = events(response.body)
    assert [d["sequence_number"] for _, d in found] == list(range(len(found)))
    assert all(name == data["type"] for name, data in found)
    assert found[0][0] == "response.created" and found[-1][0] == "response.completed"
    deltas = [d["delta"] for name, d in found if name == "response.function_call_arguments.delta"]
    assert len(deltas) > 1 and json.loads("".join(deltas)) == {"city": "Paris"}
    assert len([1 for name, _ in found if name == "response.output_text.delta"]) > 1
    stream, plain = (
        parsed(response, True),
        parsed(
            RESPONSES.respond(request(input=OPENING), Reply([WEATHER], "Checking the weather."), "seed"),
            False,
        ),
    )
    assert (stream.text, stream.tool_calls, stream.finish_reason) == (
        plain.text,
        plain.tool_calls,
        plain.finish_reason,
    )
    assert [f for f in stream.findings if f.severity != "info"] == []


def test_responses_are_deterministic() -> None:
    first = RESPONSES.respond(request(input=OPENING, stream=True), Reply([WEATHER]), "seed").body
    assert first == RESPONSES.respond(request(input=OPENING, stream=True), Reply([WEATHER]), "seed").body
    assert first != RESPONSES.respond(request(input=OPENING, stream=True), Reply([WEATHER]), "other").body


def history(output: list[dict[str, Any]], *, answered: bool = True) -> list[dict[str, Any]]:
    calls = [i for i in output if i["type"] == "function_call"]
    outputs = [{"type": "function_call_output", "call_id": c["call_id"], "output": "18C"} for c in calls]
    return [*OPENING, *output, *(outputs if answered else [])]


def test_the_history_sent_back_is_checked_as_the_api_does() -> None:
    first = whole(RESPONSES.respond(request(input=OPENING), Reply([WEATHER]), "check"))
    output = first["output"]
    ok = RESPONSES.respond(request(input=history(output)), Reply(text="Rain."), "check/1")
    assert ok.status == 200
    without_reasoning = RESPONSES.respond(request(input=history(output[1:])), Reply(text="Rain."), "check/1")
    assert (
        without_reasoning.status == 400 and "without its required 'reasoning' item" in without_reasoning.body
    )
    unanswered = RESPONSES.respond(request(input=history(output, answered=False)), Reply(text="x"), "check/1")
    assert unanswered.status == 400 and "No tool output found for function call" in unanswered.body
    stray = [*OPENING, {"type": "function_call_output", "call_id": "call_nowhere", "output": "x"}]
    orphan = RESPONSES.respond(request(input=stray), Reply(text="x"), "check/1")
    assert (
        orphan.status == 400
        and "No tool call found for function call output with call_id call_nowhere" in orphan.body
    )


def test_with_store_false_a_reasoning_item_must_carry_its_encrypted_content() -> None:
    bare = whole(RESPONSES.respond(request(input=OPENING, store=False), Reply([WEATHER]), "store"))["output"]
    refused = RESPONSES.respond(request(input=history(bare), store=False), Reply(text="Rain."), "store/1")
    assert refused.status == 404 and "Items are not persisted when `store` is set to false" in refused.body
    include = ["reasoning.encrypted_content"]
    carried = whole(
        RESPONSES.respond(request(input=OPENING, store=False, include=include), Reply([WEATHER]), "store")
    )
    again = RESPONSES.respond(
        request(input=history(carried["output"]), store=False, include=include), Reply(text="x"), "s/1"
    )
    assert again.status == 200


def test_previous_response_id_continues_a_stored_response() -> None:
    first = whole(RESPONSES.respond(request(input=OPENING), Reply([WEATHER]), "chain"))
    [call] = [i for i in first["output"] if i["type"] == "function_call"]
    follow = [{"type": "function_call_output", "call_id": call["call_id"], "output": "18C"}]
    chained = request(input=follow, previous_response_id=first["id"])
    conversation = RESPONSES.read(chained)
    assert conversation.opening[-1] == ("user", "Weather in Paris?") and conversation.assistant_turns == 1
    assert RESPONSES.respond(chained, Reply(text="Rain."), "chain/1").status == 200
    unknown = RESPONSES.respond(
        request(input=follow, previous_response_id="resp_nowhere"), Reply(text="x"), "c"
    )
    assert unknown.status == 404 and "Previous response with id 'resp_nowhere' not found." in unknown.body
    unstored = whole(RESPONSES.respond(request(input=OPENING, store=False), Reply([WEATHER]), "chain"))
    assert STORE.history(unstored["id"]) is None


def test_the_error_envelope() -> None:
    assert json.loads(RESPONSES.error(400, "bad").body) == {
        "error": {"message": "bad", "type": "invalid_request_error", "param": None, "code": None}
    }
    assert json.loads(RESPONSES.error(503, "down").body)["error"]["type"] == "server_error"


STREAM_ONLY = ("call-as-text", "call-id-changed", "orphan-deltas", "items-out-of-order")


@pytest.mark.parametrize("name", sorted(DEVIATIONS))
def test_each_deviation_rewrites_a_conformant_answer_and_passes_errors_through(name: str) -> None:
    reply = Reply([WEATHER, ("get_weather", {"city": "Tokyo"})])
    if name.startswith("hosted-"):  # what a hosted MCP connector did: an approval asked, a call run
        asked = Step("approval_request", "codeindex", "mcpr_1", "find_symbol", {"name": "Point"})
        ran = Step("call", "codeindex", "mcp_1", "find_symbol", {"name": "Point"}, output="found")
        reply = Reply(text="In geometry.py.", hosted=[asked, ran])
    for stream in (False, True):
        conformant = RESPONSES.respond(request(input=OPENING, stream=stream), reply, f"dev/{name}")
        deviant = DEVIATIONS[name](conformant)
        if name in STREAM_ONLY and not stream:
            assert deviant == conformant  # as the servers that do it: not streamed, the answer is right
        else:
            assert deviant != conformant
    refused = RESPONSES.error(429, "slow down")
    if name != "server-error":
        assert DEVIATIONS[name](refused) == refused
