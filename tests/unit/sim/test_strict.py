"""The simulator as strict as the provider: each broken history and tool_choice is refused in the
provider's words and error shape, with the rule named; what it answers depends on what was sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.model import Message, ToolCall, ToolChoice, ToolResult
from harness.providers import RequestOptions, adapter_class
from harness.providers.sources import SOURCES
from harness.runner import build_registry
from harness.scenarios import load
from harness.servers.sim import wire_strict as strict
from harness.servers.sim.formats import FORMATS
from harness.servers.sim.script import ScriptedModel
from harness.servers.sim.server import Simulator
from harness.servers.sim.wire import SimRequest

SCENARIOS = load([Path(__file__).resolve().parents[3] / "scenarios"])
BY_ID = {s.id: s for s in SCENARIOS}
SIM = Simulator(ScriptedModel(SCENARIOS))
PARIS = BY_ID["weather.single.paris"]
TWO_CITIES = BY_ID["weather.parallel.two_cities"]
STRICT = sorted(f for f in FORMATS if "history.call_without_result" in strict.REFUSALS[f])

# what each provider answers (its wording, as recorded), checked against the error body
WORDS = {
    "openai-chat": (
        "must be followed by tool messages responding to each",
        "must be a response to a preceeding",
    ),
    "mistral-chat": ("Not the same number of function calls", "Not the same number of function calls"),
    "anthropic-messages": ("ids were found without `tool_result` blocks", "unexpected `tool_use_id`"),
    "gemini-generate": ("number of function response parts", "function response turn comes immediately"),
    "bedrock-converse": ("Expected toolResult blocks at", "exceeds the number of toolUse blocks"),
    "openai-responses": ("No tool output found for function call", "No tool call found for function call"),
}


def history(*, answered: int, stray: bool = False, calls: int = 1) -> list[Message]:
    """The Paris scenario after ``calls`` parallel calls, ``answered`` of them answered; ``stray``
    adds a result for a call nobody made."""
    made = [
        ToolCall("get_weather", {"city": city}, id=f"call{i}", wire_id=f"call{i}")
        for i, city in enumerate(["Paris", "Tokyo"][:calls])
    ]
    messages = [*PARIS.messages, Message("assistant", None, made)]
    messages += [
        Message("tool", tool_result=ToolResult(c.id, c.name, '{"temp": 18}')) for c in made[:answered]
    ]
    if stray:
        messages.append(Message("tool", tool_result=ToolResult("callX", "get_weather", '{"temp": 18}')))
    return messages


def send(fmt: str, messages: list[Message], choice: ToolChoice | None = None, **change: Any) -> Any:
    """The adapter's request for ``messages`` answered by the simulator (``change`` rewrites body keys)."""
    adapter = adapter_class(fmt)()
    wire = adapter.build_request(
        messages, build_registry(PARIS).specs(), choice or PARIS.tool_choice, RequestOptions(model="sim")
    )
    body = {**wire.body, **change}
    path = wire.path if fmt != "bedrock-converse" else "/model/sim/converse"
    return SIM.answer(fmt, SimRequest(path, body))


@pytest.mark.parametrize("fmt", STRICT)
def test_a_call_without_its_result_is_refused_in_the_providers_words(fmt: str) -> None:
    response = send(fmt, history(answered=0))
    assert response.status == 400, response.text
    assert response.headers[strict.RULE_HEADER].startswith("history.call_without_result [")
    if fmt in WORDS:
        assert WORDS[fmt][0] in response.text
    assert response.content_type == "application/json" and not json.loads(response.text).get("choices")


@pytest.mark.parametrize("fmt", STRICT)
def test_a_parallel_call_left_without_its_result_is_refused(fmt: str) -> None:
    response = send(fmt, history(answered=1, calls=2))
    assert response.status == 400, response.text
    assert response.headers[strict.RULE_HEADER].startswith("history.call_without_result")


@pytest.mark.parametrize("fmt", [f for f in STRICT if f not in ("gemini-generate",)])
def test_a_result_for_a_call_nobody_made_is_refused(fmt: str) -> None:
    response = send(fmt, history(answered=1, stray=True))
    assert response.status == 400, response.text
    assert response.headers[strict.RULE_HEADER].startswith("history.result_without_call")
    if fmt in WORDS:
        assert WORDS[fmt][1] in response.text


def test_the_anthropic_refusal_names_the_place_and_the_ids_as_the_api_does() -> None:
    response = send("anthropic-messages", history(answered=0))
    message = json.loads(response.text)["error"]["message"]
    assert message.startswith(
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately"
    )
    assert ": call0. Each `tool_use` block" in message
    assert json.loads(response.text)["error"]["type"] == "invalid_request_error"


def test_a_complete_history_is_answered() -> None:
    for fmt in FORMATS:
        response = send(fmt, history(answered=1))
        assert response.status == 200, (fmt, response.text[:300])


@pytest.mark.parametrize(
    ("choice", "rule", "words"),
    [
        ({"name": "get_weather"}, "tool_choice.form", "Missing required parameter: 'tool_choice.type'"),
        ("any", "tool_choice.form", "unknown tool_choice 'any'"),
        ({"type": "function", "function": {"name": "teleport"}}, "tool_choice.offered", "'teleport'"),
    ],
)
def test_openai_refuses_a_tool_choice_of_another_shape(choice: Any, rule: str, words: str) -> None:
    response = send("openai-chat", list(PARIS.messages), tool_choice=choice)
    assert response.status == 400 and words in response.text, response.text
    assert response.headers[strict.RULE_HEADER].startswith(rule)


def test_a_forcing_tool_choice_without_tools_is_refused() -> None:
    response = send("openai-chat", list(PARIS.messages), ToolChoice("required"), tools=[])
    assert response.status == 400 and "only allowed when tools are specified" in response.text


def first_calls(fmt: str, scenario_id: str, choice: ToolChoice) -> tuple[list[str], str | None]:
    scenario = BY_ID[scenario_id]
    adapter = adapter_class(fmt)()
    wire = adapter.build_request(
        list(scenario.messages), build_registry(scenario).specs(), choice, RequestOptions(model="sim")
    )
    response = SIM.answer(fmt, SimRequest(wire.path, wire.body))
    from harness.model import WireResponse

    turn = adapter.parse(WireResponse(response.status, response.text, {}), stream=False)
    return [c.name for c in turn.tool_calls], turn.text


@pytest.mark.parametrize("fmt", ["openai-chat", "anthropic-messages", "gemini-generate", "openai-responses"])
def test_a_forced_tool_choice_is_obeyed_and_an_unforced_one_forces_nothing(fmt: str) -> None:
    scenario = "tool_choice.named.time"
    assert first_calls(fmt, scenario, ToolChoice("named", "get_time"))[0] == ["get_time"]
    assert first_calls(fmt, scenario, ToolChoice("auto")) == ([], strict.UNFORCED)
    assert first_calls(fmt, scenario, ToolChoice("none"))[0] == []
    # a choice naming another offered tool is obeyed too
    assert first_calls(fmt, scenario, ToolChoice("named", "get_weather"))[0] == ["get_weather"]


def test_ollama_has_no_tool_choice_so_nothing_is_unforced() -> None:
    assert first_calls("ollama-chat", "tool_choice.named.time", ToolChoice("auto"))[0] == ["get_time"]


@pytest.mark.parametrize("content", ["", "   "])
def test_the_final_answer_depends_on_the_results_sent(content: str) -> None:
    made = ToolCall("get_weather", {"city": "Paris"}, id="call0", wire_id="call0")
    sent = [*PARIS.messages, Message("assistant", None, [made])]
    good = send(
        "openai-chat", [*sent, Message("tool", tool_result=ToolResult("call0", "get_weather", "18 C"))]
    )
    empty = send(
        "openai-chat", [*sent, Message("tool", tool_result=ToolResult("call0", "get_weather", content))]
    )
    final = json.loads(good.text)["choices"][0]["message"]["content"]
    degraded = json.loads(empty.text)["choices"][0]["message"]["content"]
    assert strict.UNUSABLE not in final and degraded == f"{strict.UNUSABLE} (get_weather)"


def test_ollama_takes_a_dropped_result_but_its_answer_says_so() -> None:
    response = send("ollama-chat", [*history(answered=0), Message("user", "And now?")][:-1])
    assert response.status == 200 and strict.UNUSABLE in response.text


def test_every_rule_a_format_enforces_is_known_and_cited() -> None:
    assert set(strict.REFUSALS) == set(FORMATS)
    for fmt, answers in strict.REFUSALS.items():
        for rule, answer in answers.items():
            assert rule in strict.RULES, (fmt, rule)
            assert answer.sources and set(answer.sources) <= set(SOURCES), (fmt, rule, answer.sources)
            assert 400 <= answer.status < 500 and not answer.message.startswith("sim: ")
