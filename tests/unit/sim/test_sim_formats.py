"""The simulator's Anthropic Messages and Gemini formats, checked against the real client adapters.

A conformant server must round-trip through the adapters without tripping any
of their deviation detectors, and a whole harness run against it (recorded,
then replayed) must score 100 on every scenario.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness.model import Message, ParsedTurn, ToolChoice, WireResponse
from harness.providers import Adapter, RequestOptions, adapter_class
from harness.runner import RunConfig, build_registry, run
from harness.scenarios import Scenario, load
from harness.sim.formats import FORMATS
from harness.sim.script import Conversation, Reply, ScriptedModel
from harness.sim.server import SimServer
from harness.sim.wire import SimRequest
from harness.sim.wire_anthropic import ANTHROPIC
from harness.sim.wire_gemini import GEMINI
from harness.targets import Target

SCENARIOS = load([Path(__file__).resolve().parents[3] / "scenarios"])
BY_ID = {s.id: s for s in SCENARIOS}
NEW_FORMATS = ["anthropic-messages", "gemini-generate"]
WEATHER = ("get_weather", {"city": "Paris", "unit": "celsius"})


@pytest.fixture(scope="module")
def server() -> Iterator[SimServer]:
    with SimServer(SCENARIOS) as sim:
        yield sim


def exchange(
    server: SimServer, fmt: str, scenario: Scenario, *, stream: bool, history: list[Message] | None = None
) -> tuple[Adapter, ParsedTurn]:
    """One turn, as the harness plays it: the adapter's request POSTed to the sim, its answer parsed."""
    adapter = adapter_class(fmt)()
    wire = adapter.build_request(
        history or list(scenario.messages),
        build_registry(scenario).specs(),
        scenario.tool_choice,
        RequestOptions(model="sim", stream=stream),
    )
    reply = httpx.post(server.base_url(fmt) + wire.path, json=wire.body, headers=wire.headers, timeout=10)
    parsed = adapter.parse(WireResponse(reply.status_code, reply.text, dict(reply.headers)), stream=stream)
    return adapter, parsed


def not_info(turn: ParsedTurn) -> list[str]:
    return [f"{f.check_id} ({f.severity}): {f.detail}" for f in turn.findings if f.severity != "info"]


def scripted(scenario: Scenario) -> Reply:
    """What the script says for the scenario's first turn."""
    return ScriptedModel(SCENARIOS).reply(scenario, Conversation([], 0, []))


# -- round trips through the real client adapters -----------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("fmt", NEW_FORMATS)
def test_parallel_calls_arrive_in_one_turn(server: SimServer, fmt: str, stream: bool) -> None:
    _, turn = exchange(server, fmt, BY_ID["weather.parallel.two_cities"], stream=stream)
    assert turn.error is None
    assert [(c.name, str((c.arguments or {})["city"]).lower()) for c in turn.tool_calls] == [
        ("get_weather", "paris"),
        ("get_weather", "tokyo"),
    ]
    assert turn.text is None
    assert len({c.wire_id for c in turn.tool_calls}) == 2 and all(c.wire_id for c in turn.tool_calls)
    assert not_info(turn) == []


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("fmt", NEW_FORMATS)
def test_irrelevant_question_gets_text(server: SimServer, fmt: str, stream: bool) -> None:
    _, turn = exchange(server, fmt, BY_ID["irrelevance.arithmetic"], stream=stream)
    assert (turn.text, turn.tool_calls, turn.error) == ("51", [], None)
    assert not_info(turn) == []


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("fmt", NEW_FORMATS)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_first_turn_is_the_script(server: SimServer, fmt: str, stream: bool, scenario: Scenario) -> None:
    _, turn = exchange(server, fmt, scenario, stream=stream)
    expected = scripted(scenario)
    assert turn.error is None
    assert [(c.name, c.arguments) for c in turn.tool_calls] == expected.calls
    assert turn.text == expected.text
    assert turn.usage is not None and turn.usage.input_tokens and turn.usage.output_tokens
    assert not_info(turn) == []


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("fmt", NEW_FORMATS)
def test_second_turn_after_replayed_calls_is_the_answer(server: SimServer, fmt: str, stream: bool) -> None:
    """The replayed assistant/model turn is counted, and its results read as past the opening."""
    scenario = BY_ID["weather.single.paris"]
    _, first = exchange(server, fmt, scenario, stream=stream)
    registry = build_registry(scenario)
    history = [
        *scenario.messages,
        first.as_message(),
        *(Message("tool", tool_result=registry.execute(c, 0).result) for c in first.tool_calls),
    ]
    _, second = exchange(server, fmt, scenario, stream=stream, history=history)
    assert second.tool_calls == [] and second.text == scripted_final(scenario)
    assert not_info(second) == []


def scripted_final(scenario: Scenario) -> str | None:
    return ScriptedModel(SCENARIOS).reply(scenario, Conversation([], 99, [])).text


def test_gemini_stream_as_json_array_round_trips(server: SimServer) -> None:
    """Without ``alt=sse`` the stream is one JSON array; the adapter notes that (info) and reads it."""
    scenario = BY_ID["weather.parallel.two_cities"]
    adapter = adapter_class("gemini-generate")()
    wire = adapter.build_request(
        list(scenario.messages),
        build_registry(scenario).specs(),
        scenario.tool_choice,
        RequestOptions(model="sim", stream=True),
    )
    path = wire.path.removesuffix("?alt=sse")
    reply = httpx.post(server.base_url("gemini-generate") + path, json=wire.body, timeout=10)
    turn = adapter.parse(WireResponse(reply.status_code, reply.text), stream=True)
    assert [(c.name, c.arguments) for c in turn.tool_calls] == scripted(scenario).calls
    assert "wire.stream_json_array" in {f.check_id for f in turn.findings} and not_info(turn) == []


@pytest.mark.parametrize("fmt", NEW_FORMATS)
def test_unknown_conversation_is_an_error_in_the_formats_envelope(server: SimServer, fmt: str) -> None:
    adapter = adapter_class(fmt)()
    wire = adapter.build_request(
        [Message("user", "no scenario opens like this")], [], ToolChoice(), RequestOptions(model="sim")
    )
    reply = httpx.post(server.base_url(fmt) + wire.path, json=wire.body, timeout=10)
    turn = adapter.parse(WireResponse(reply.status_code, reply.text), stream=False)
    assert reply.status_code == 400 and turn.error is not None
    assert (
        turn.error.code
        == {"anthropic-messages": "invalid_request_error", "gemini-generate": "INVALID_ARGUMENT"}[fmt]
    )
    assert "no bundled scenario" in turn.error.message


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
        ],
    }
    assert ANTHROPIC.read(SimRequest("/v1/messages", body)) == Conversation(
        [("system", "Be brief."), ("user", "Hi"), ("user", "there")], 1, ["a", "b"]
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
        ],
    }
    assert GEMINI.read(SimRequest("/v1beta/models/sim:generateContent", body)) == Conversation(
        [("system", "Be brief."), ("user", "Hi\nthere")], 1, ["a", "b"]
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


# -- end to end through the harness ----------------------------------------------------------


def failures(records: list[dict[str, Any]]) -> list[str]:
    """Each run below 100, with its error or the findings of the checks that did not pass."""
    out = []
    for record in records:
        if record["score"] == 100 and record["error"] is None:
            continue
        checks = [
            f"{c['id']}={c['status']}: {[f['detail'] for f in c['findings']]}"
            for c in record["checks"]
            if c["status"] not in ("pass", "skip", "n/a")
        ]
        out.append(
            f"{record['target']} {record['scenario']} score={record['score']} "
            f"error={record['error']} checks={checks}"
        )
    return out


@pytest.mark.parametrize("fmt", NEW_FORMATS)
def test_record_then_replay_scores_100(tmp_path: Path, fmt: str) -> None:
    short = fmt.split("-")[0]
    targets = [
        Target(name=f"sim-{short}", format=fmt, model="sim-conformant", base_url="sim"),
        Target(name=f"sim-{short}-stream", format=fmt, model="sim-conformant", base_url="sim", stream=True),
    ]
    for mode in ("record", "replay"):
        config = RunConfig(mode=mode, cassettes=tmp_path / "c", results=tmp_path / f"{mode}.jsonl")
        records = run(targets, SCENARIOS, config)
        assert len(records) == 2 * len(SCENARIOS)
        assert failures(records) == [], f"{mode}:\n" + "\n".join(failures(records))
