"""Seeded histories written by every adapter in its own wire shape, and read back.

One history holds every variant servers disagree on (assistant content null, "" and a list of
parts; a result as text, text parts, JSON, an image part and an error; a zero-argument call;
unicode names and values); each adapter must write each variant where its wire has a place for
it, say so where it has none, and read its own request back to the same calls and results.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.model import Message, ToolChoice, WireRequest
from harness.providers import RequestOptions, adapter_class
from harness.registry import ADAPTERS
from harness.scenarios import Scenario, load_file

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

HISTORY = f"""\
id: seeded.variants
category: history
tools:
  - name: get_weather
    description: Weather.
    parameters: {{type: object, properties: {{city: {{type: string}}}}, required: [city]}}
    result: "ok"
  - name: now
    description: The time.
    parameters: {{type: object, properties: {{}}}}
    result: "ok"
messages:
  - {{role: system, content: "Be brief."}}
  - {{role: user, content: "Weather in Zürich and the time?"}}
  - role: assistant
    content: null
    calls: [{{id: c_null, name: get_weather, args: {{city: Zürich}}}}]
  - {{role: tool, call_id: c_null, content: "Zürich: 9 °C ☀️"}}
  - role: assistant
    content: ""
    calls: [{{id: c_empty, name: now, args: {{}}}}]
  - role: tool
    call_id: c_empty
    content: [{{text: "08:15"}}, {{text: "UTC"}}]
  - role: assistant
    content: [{{text: "One more."}}]
    calls: [{{id: c_parts, name: get_weather, args: {{city: 東京}}}}]
  - {{role: tool, call_id: c_parts, json: {{temp: 14, sky: 晴れ}}}}
  - role: assistant
    content: "And a screenshot."
    calls: [{{id: c_image, name: get_weather, args: {{city: Oslo}}}}]
  - role: tool
    call_id: c_image
    content: [{{text: "see image"}}, {{image: {{media_type: image/png, data: "{PNG}"}}}}]
  - role: assistant
    content: null
    calls: [{{id: c_error, name: get_weather, args: {{city: Lima}}}}]
  - {{role: tool, call_id: c_error, content: "service down", is_error: true}}
expect: {{no_call: true}}
"""

FORMATS = sorted(name for name, _ in ADAPTERS.items())
ERROR_FLAG = {"anthropic-messages", "gemini-generate", "bedrock-converse", "gemini-interactions"}
"""Formats whose tool results carry an error status (the others send the error's text alone)."""


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    path: Path = tmp_path_factory.mktemp("seeded") / "s.yaml"
    path.write_text(HISTORY, encoding="utf-8")
    (loaded,) = load_file(path)
    return loaded


def build(fmt: str, messages: tuple[Message, ...] | list[Message], scenario: Scenario) -> WireRequest:
    adapter = adapter_class(fmt)()
    return adapter.build_request(
        list(messages), [t.spec for t in scenario.tools], ToolChoice(), RequestOptions("m")
    )


def test_the_loader_reads_every_variant(scenario: Scenario) -> None:
    messages = scenario.messages
    assert [m.role for m in messages] == ["system", "user"] + ["assistant", "tool"] * 5
    null, empty, parts, text = (messages[i] for i in (2, 4, 6, 8))
    assert null.content is None and empty.content == "" and not empty.parts
    assert parts.content == "One more." and [p.text for p in parts.parts] == ["One more."]
    assert text.content == "And a screenshot." and not text.parts
    assert empty.tool_calls[0].arguments == {}
    results = [m.tool_result for m in messages if m.tool_result is not None]
    assert [r.form for r in results] == ["text", "parts", "json", "parts", "text"]
    assert results[1].content == "08:15\nUTC"
    assert results[2].value() == {"temp": 14, "sky": "晴れ"}
    assert [p.kind for p in results[3].parts] == ["text", "image"] and results[3].parts[1].data == PNG
    assert results[4].is_error and not results[0].is_error
    assert [r.name for r in results] == ["get_weather", "now", "get_weather", "get_weather", "get_weather"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_read_request_gives_back_the_calls_and_results(fmt: str, scenario: Scenario) -> None:
    wire = build(fmt, scenario.messages, scenario)
    view = adapter_class(fmt)().read_request(wire.body, wire.path)
    assert not [f for f in view.findings if f.severity == "error"], view.findings
    calls = [(c.name, c.arguments) for m in view.messages for c in m.tool_calls]
    assert calls == [(c.name, c.arguments) for m in scenario.messages for c in m.tool_calls]
    results = [m.tool_result for m in view.messages if m.tool_result is not None]
    seeded = [m.tool_result for m in scenario.messages if m.tool_result is not None]
    assert len(results) == len(seeded) == 5
    assert results[0].content == "Zürich: 9 °C ☀️"
    assert json.loads(results[2].content) == {"temp": 14, "sky": "晴れ"}
    assert "see image" in results[3].content
    assert results[4].is_error is (fmt in ERROR_FLAG)
    assert results[4].content == "service down" or json.loads(results[4].content) == "service down"


def _openai_like(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] in ("assistant", "tool")]


@pytest.mark.parametrize("fmt", ["openai-chat", "mistral-chat"])
def test_chat_writes_each_variant(fmt: str, scenario: Scenario) -> None:
    wire = build(fmt, scenario.messages, scenario)
    turns = _openai_like(wire.body)
    assert turns[0]["content"] is None
    assert turns[2]["content"] == "" and turns[2]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert turns[3]["content"] == [{"type": "text", "text": "08:15"}, {"type": "text", "text": "UTC"}]
    assert turns[4]["content"] == [{"type": "text", "text": "One more."}]
    assert json.loads(turns[5]["content"]) == {"temp": 14, "sky": "晴れ"}
    assert turns[7]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{PNG}"},
    }
    assert turns[9]["content"] == "service down"
    assert [f.check_id for f in wire.findings].count("wire.history_variant_unsupported") == 1


def test_anthropic_writes_each_variant(scenario: Scenario) -> None:
    body = build("anthropic-messages", scenario.messages, scenario).body
    assistants = [m["content"] for m in body["messages"] if m["role"] == "assistant"]
    results = [
        b for m in body["messages"] if m["role"] == "user" for b in m["content"] if isinstance(b, dict)
    ]
    results = [b for b in results if b.get("type") == "tool_result"]
    assert [b["type"] for b in assistants[0]] == ["tool_use"]  # null content: no text block
    assert [b["type"] for b in assistants[1]] == ["tool_use"]  # "" content: no empty text block
    assert assistants[2][0] == {"type": "text", "text": "One more."}
    assert results[1]["content"] == [{"type": "text", "text": "08:15"}, {"type": "text", "text": "UTC"}]
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    assert results[3]["content"][1] == image
    assert results[4]["is_error"] is True and "is_error" not in results[0]


def test_gemini_writes_json_images_and_errors(scenario: Scenario) -> None:
    body = build("gemini-generate", scenario.messages, scenario).body
    responses = [
        p["functionResponse"] for c in body["contents"] for p in c["parts"] if "functionResponse" in p
    ]
    assert responses[2]["response"] == {"result": {"temp": 14, "sky": "晴れ"}}
    assert responses[3]["parts"] == [{"inlineData": {"mimeType": "image/png", "data": PNG}}]
    assert responses[4]["response"] == {"error": "service down"}


def test_bedrock_writes_json_images_and_errors(scenario: Scenario) -> None:
    body = build("bedrock-converse", scenario.messages, scenario).body
    results = [b["toolResult"] for m in body["messages"] for b in m["content"] if "toolResult" in b]
    assert results[2]["content"] == [{"json": {"temp": 14, "sky": "晴れ"}}]
    assert results[3]["content"][1] == {"image": {"format": "png", "source": {"bytes": PNG}}}
    assert results[4]["status"] == "error"


def test_responses_cohere_interactions_and_ollama_write_parts(scenario: Scenario) -> None:
    responses = build("openai-responses", scenario.messages, scenario).body["input"]
    outputs = [i["output"] for i in responses if i.get("type") == "function_call_output"]
    assert outputs[3][1] == {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"}
    cohere = build("cohere-chat", scenario.messages, scenario).body["messages"]
    tools = [m["content"] for m in cohere if m["role"] == "tool"]
    assert tools[2] == [{"type": "document", "document": {"data": '{"sky": "晴れ", "temp": 14}'}}]
    interactions = build("gemini-interactions", scenario.messages, scenario).body["input"]
    results = [s for s in interactions if s["type"] == "function_result"]
    assert results[2]["result"] == {"temp": 14, "sky": "晴れ"} and results[4]["is_error"] is True
    ollama = build("ollama-chat", scenario.messages, scenario)
    tool_messages = [m for m in ollama.body["messages"] if m["role"] == "tool"]
    assert tool_messages[3]["images"] == [PNG] and tool_messages[1]["content"] == "08:15\nUTC"
    assert "wire.history_variant_unsupported" in [f.check_id for f in ollama.findings]
