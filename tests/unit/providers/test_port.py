"""port_request / port_history: a history recorded in one wire format, written in another.

Over every pair of registered formats, each real request recorded by a public project
(tests/data/realworld) goes A -> neutral -> B and is read back by B: its calls (under B's
names), the pairing of each result with its call, and its text survive. Hostile histories
hold each rewrite (tool names, repeated ids, replay artefacts), and each is a finding.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import pytest

from harness.model import Message, ToolCall, ToolChoice, ToolResult, ToolSpec
from harness.providers import RequestOptions, adapter_class, formats
from harness.providers.port import Ported, port_history, port_request
from tests.helpers.realworld import cases

FORMATS = formats()
OPTIONS = RequestOptions("test-model")


def histories() -> list[tuple[str, str, str, dict[str, Any]]]:
    """``(case id, format, path, body)`` of every recorded request of the corpus."""
    found = []
    for case in cases():
        request = case.get("request") or {}
        if isinstance(request.get("body"), dict):
            parts = urlsplit(request.get("url") or "")
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            found.append((case["id"], case["wire_format"], path, request["body"]))
    return found


HISTORIES = histories()


def shape(messages: Any, names: dict[str, str] | None = None) -> tuple[list[Any], list[Any], list[Any]]:
    """What a port must keep: the calls (name, arguments), each result's call (by position in
    the history: the latest call with its id) and content, and every text with its role."""
    positions: dict[str | None, int] = {}
    calls: list[Any] = []
    results, texts = [], []
    for message in messages:
        for call in message.tool_calls:
            positions[call.id] = len(calls)
            name = (names or {}).get(call.name, call.name)
            calls.append((name, call.raw_arguments if call.arguments is None else call.arguments))
        if message.tool_result is not None:
            results.append((positions.get(message.tool_result.call_id), message.tool_result.content))
        if message.content:
            texts.append((message.role, message.content))
    return calls, results, texts


def read_back(ported: Ported, fmt: str) -> Any:
    request = ported.request
    return adapter_class(fmt)().read_request(json.loads(json.dumps(request.body)), request.path)


def test_the_corpus_holds_histories_of_every_recorded_format() -> None:
    with_results = {fmt for _, fmt, path, body in HISTORIES if shape(_view(fmt, path, body).messages)[1]}
    assert len(HISTORIES) > 150
    assert {"openai-chat", "openai-responses", "bedrock-converse", "anthropic-messages"} <= with_results


def _view(fmt: str, path: str, body: dict[str, Any]) -> Any:
    return adapter_class(fmt)().read_request(body, path)


@pytest.mark.parametrize("target", FORMATS)
def test_every_recorded_history_survives_a_port_to_every_format(target: str) -> None:
    for case_id, source, path, body in HISTORIES:
        ported = port_request(body, path, source, target, OPTIONS)
        before = shape(_view(source, path, body).messages, ported.names)
        after = shape(read_back(ported, target).messages)
        assert after == before, (case_id, source, target)
        renamed = {f.detail for f in ported.findings if f.check_id == "port.tool_renamed"}
        assert len(renamed) == len(ported.names), (case_id, target)


def call(call_id: str | None, name: str, arguments: dict[str, Any]) -> ToolCall:
    return ToolCall(name, arguments, json.dumps(arguments), call_id)


def result(call_id: str | None, name: str, content: str) -> Message:
    return Message("tool", tool_result=ToolResult(call_id, name, content))


SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}}
LONG = "lookup." + "x" * 70


@pytest.mark.parametrize("target", ["bedrock-converse", "openai-chat", "anthropic-messages"])
def test_names_a_format_forbids_are_rewritten_everywhere_and_reported(target: str) -> None:
    """Gemini takes ``math.factorial``; Bedrock's and OpenAI's rules do not, and a sanitised name
    can land on a tool that exists already (``math_factorial``) or run past 64 characters."""
    tools = [ToolSpec(n, "d", SCHEMA) for n in ("math.factorial", "math_factorial", LONG)]
    messages = [
        Message("user", "5! and the rest?"),
        Message("assistant", None, [call("a1", "math.factorial", {"n": 5}), call("a2", LONG, {"n": 1})]),
        result("a1", "math.factorial", "120"),
        result("a2", LONG, "one"),
    ]
    ported = port_history(messages, tools, ToolChoice("named", "math.factorial"), target, OPTIONS)
    assert set(ported.names) == {"math.factorial", LONG}
    new = ported.names["math.factorial"]
    assert new != "math_factorial" and new.startswith("math_factorial_")
    assert len(ported.names[LONG]) == 64
    rules = adapter_class(target).name_rules
    assert all(rules.is_valid(t.name) for t in ported.tools)
    assert ported.tool_choice == ToolChoice("named", new)
    notes = [f.detail for f in ported.findings if f.check_id == "port.tool_renamed"]
    assert len(notes) == 2 and any("'math.factorial'" in n and repr(new) in n for n in notes)
    back = read_back(ported, target)
    assert shape(back.messages) == shape(messages, ported.names)
    assert [t.name for t in back.tools] == [
        new if t.name == "math.factorial" else ported.names.get(t.name, t.name) for t in tools
    ]


@pytest.mark.parametrize("target", FORMATS)
def test_an_id_two_calls_share_is_made_unique_and_results_follow(target: str) -> None:
    """Servers that number calls per turn (``call_0`` again in the next turn) write a history
    whose ids repeat; a format that links results by id would pair the second result with the
    first call."""
    messages = [
        Message("user", "Two lookups, one after the other."),
        Message("assistant", None, [call("call_0", "lookup", {"n": 1})]),
        result("call_0", "lookup", "first"),
        Message("assistant", None, [call("call_0", "lookup", {"n": 2})]),
        result("call_0", "lookup", "second"),
    ]
    ported = port_history(messages, [ToolSpec("lookup", "d", SCHEMA)], ToolChoice(), target, OPTIONS)
    assert [c.id for m in ported.messages for c in m.tool_calls] == ["call_0", "call_0_2"]
    assert any(f.check_id == "port.id_rewritten" and "call_0_2" in f.detail for f in ported.findings)
    assert shape(read_back(ported, target).messages)[1] == [(0, "first"), (1, "second")]
    assert shape(read_back(ported, target).messages) == shape(messages)


def test_replay_artefacts_of_one_format_are_dropped_in_another_and_reported() -> None:
    """A Gemini thought signature rides on the call; OpenAI chat has no place for it."""
    signed = call("c1", "lookup", {"n": 1})
    signed.extra["thoughtSignature"] = "c2lnbmF0dXJl"
    messages = [Message("user", "go"), Message("assistant", None, [signed]), result("c1", "lookup", "ok")]
    tools = [ToolSpec("lookup", "d", SCHEMA)]
    across = port_history(messages, tools, None, "openai-chat", OPTIONS, source="gemini-generate")
    assert all(not c.extra for m in across.messages for c in m.tool_calls)
    dropped = [f.detail for f in across.findings if f.check_id == "port.extra_dropped"]
    assert len(dropped) == 1 and "thoughtSignature" in dropped[0]
    same = port_history(messages, tools, None, "gemini-generate", OPTIONS, source="gemini-generate")
    assert "c2lnbmF0dXJl" in json.dumps(same.request.body)
    assert not [f for f in same.findings if f.check_id.startswith("port.")]
