"""The simulator's Anthropic Messages, Gemini (generateContent and Interactions), Cohere, Responses and
Bedrock Converse formats over HTTP, through the real client adapters (Bedrock's stream as the binary
AWS event stream).

A conformant server must round-trip through the adapters without tripping any
of their deviation detectors, and a whole harness run against it (recorded,
then replayed) must score 100 on every scenario.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from harness.api import run_targets as run
from harness.model import Message, ParsedTurn, ToolChoice, WireResponse
from harness.providers import Adapter, RequestOptions, adapter_class
from harness.records import RunRecord
from harness.runner import RunConfig, build_registry
from harness.scenarios import Scenario, load
from harness.servers.sim.script import Conversation, Reply, ScriptedModel
from harness.servers.sim.server import SimServer
from harness.targets import Target

SCENARIOS = load([Path(__file__).resolve().parents[2] / "scenarios"])
BY_ID = {s.id: s for s in SCENARIOS}
# The scenarios the simulator answers: a negative one (expect.refused) is answered as the format's
# provider answers it, refused or accepted (tests/integration/test_history_categories.py).
ANSWERED = [s for s in SCENARIOS if s.expect.refused is None]
NEW_FORMATS = [
    "anthropic-messages",
    "gemini-generate",
    "gemini-interactions",
    "cohere-chat",
    "openai-responses",
    "bedrock-converse",
]
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
    body = WireResponse.text_of(reply.content, reply.headers.get("content-type", ""))  # as the transport does
    parsed = adapter.parse(WireResponse(reply.status_code, body, dict(reply.headers)), stream=stream)
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
@pytest.mark.parametrize("scenario", ANSWERED, ids=lambda s: s.id)
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
    return ScriptedModel(SCENARIOS).reply(scenario, Conversation([], 99, [], since_user=99)).text


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
    turn = adapter.parse(WireResponse(reply.status_code, reply.text, dict(reply.headers)), stream=False)
    assert reply.status_code == 400 and turn.error is not None
    codes = {
        "anthropic-messages": "invalid_request_error",
        "gemini-generate": "INVALID_ARGUMENT",
        "gemini-interactions": "invalid_request",
        "cohere-chat": None,
        "openai-responses": "invalid_request_error",
        "bedrock-converse": None,  # AWS's REST JSON errors carry their type in a header, not in the body
    }
    assert turn.error.code == codes[fmt]
    if fmt == "bedrock-converse":
        assert turn.error.detail["error_type"] == "ValidationException"
    assert "no bundled scenario" in turn.error.message


# -- end to end through the harness ----------------------------------------------------------


def failures(records: list[RunRecord]) -> list[str]:
    """Each run below 100, with its error or the findings of the checks that did not pass."""
    out = []
    for record in records:
        if record.score == 100 and record.error is None:
            continue
        checks = [
            f"{c.id}={c.status}: {[f.detail for f in c.findings]}"
            for c in record.checks
            if c.status not in ("pass", "skip", "n/a")
        ]
        out.append(
            f"{record.target.name} {record.scenario} score={record.score} "
            f"error={record.error} checks={checks}"
        )
    return out


@pytest.mark.parametrize("fmt", NEW_FORMATS)
def test_record_then_replay_scores_100(tmp_path: Path, fmt: str) -> None:
    short = fmt.split("-")[0]
    targets = [
        Target.build(f"sim-{short}", format=fmt, model="sim-conformant", base_url="sim"),
        Target.build(f"sim-{short}-stream", format=fmt, model="sim-conformant", base_url="sim", stream=True),
    ]
    for mode in ("record", "replay"):
        config = RunConfig(mode=mode, cassettes=tmp_path / "c", results=tmp_path / f"{mode}.jsonl")
        records = run(targets, ANSWERED, config)
        assert len(records) == 2 * len(ANSWERED)
        assert failures(records) == [], f"{mode}:\n" + "\n".join(failures(records))


def test_interactions_stored_turns_chain_by_previous_interaction_id(tmp_path: Path) -> None:
    """``request_options = {store = true}``: the simulator keeps each interaction; every request after
    a model turn sends only what came after it, with that turn's id, and the suite still scores 100."""
    targets = [
        Target.build(
            f"sim-interactions-stored{suffix}",
            format="gemini-interactions",
            model="sim-conformant",
            base_url="sim",
            stream=stream,
            request_options={"store": True},
        )
        for suffix, stream in (("", False), ("-stream", True))
    ]
    suite = [s for s in ANSWERED if not s.mcp_servers]
    records = run(targets, suite, RunConfig(mode="live", results=tmp_path / "r.jsonl"))
    assert failures(records) == []
    chained = 0
    for record in records:
        bodies = [
            e.request.body if isinstance(e.request.body, dict) else json.loads(e.request.body)
            for e in record.transcript.exchanges
        ]
        assert "previous_interaction_id" not in bodies[0] and bodies[0]["store"] is True
        for body in bodies[1:]:
            chained += 1
            assert body["previous_interaction_id"].startswith("v1_")
            assert body["input"] and body["input"][0]["type"] in ("function_result", "user_input"), body[
                "input"
            ]
    assert chained > len(suite)  # most scenarios take more than one turn
