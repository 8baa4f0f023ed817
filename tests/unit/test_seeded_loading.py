"""A seeded history that is not well formed is refused with its file, line, pointer and what was
expected; a scenario that expects a refusal may hold a malformed history on purpose."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ScenarioError
from harness.scenarios import load_file

HEAD = """\
id: seeded.bad
category: history
tools: [get_weather]
messages:
  - {role: user, content: "Weather?"}
"""
CALL = """\
  - role: assistant
    content: null
    calls: [{id: c1, name: get_weather, args: {city: Paris}}]
"""
TAIL = "expect: {no_call: true}\n"


def errors(tmp_path: Path, text: str) -> list[ScenarioError]:
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as info:
        load_file(path)
    return info.value.problems


@pytest.mark.parametrize(
    ("history", "line", "pointer", "says"),
    [
        ('  - {role: tool, call_id: c9, content: "x"}\n', 6, "/messages/1/call_id", "no earlier call has"),
        (CALL, 8, "/messages/1/calls", "get no tool result before the conversation ends"),
        (
            CALL + '  - {role: user, content: "And?"}\n  - {role: tool, call_id: c1, content: "x"}\n',
            8,
            "/messages/1/calls",
            "before the next message",
        ),
        (
            CALL
            + '  - {role: tool, call_id: c1, content: "x"}\n  - {role: tool, call_id: c1, content: "y"}\n',
            10,
            "/messages/3/call_id",
            "not awaiting one",
        ),
        (
            "  - role: assistant\n    calls: [{id: c1, name: get_weather}, {id: c1, name: get_weather}]\n"
            '  - {role: tool, call_id: c1, content: "x"}\n',
            7,
            "/messages/1/calls/1/id",
            "used twice",
        ),
        ('  - {role: assistant, content: "Hi."}\n', 6, "/messages/1", "ends with an assistant turn"),
        (
            "  - role: assistant\n    calls: [{id: c1, name: get_time}]\n"
            '  - {role: tool, call_id: c1, content: "x"}\n',
            7,
            "/messages/1/calls/0/name",
            "does not offer",
        ),
        (
            '  - role: assistant\n    reasoning: {text: "t"}\n    calls: [{id: c1, name: get_weather}]\n'
            '  - {role: tool, call_id: c1, content: "x"}\n',
            7,
            "/messages/1/reasoning",
            "history_from",
        ),
        (
            CALL + '  - {role: tool, call_id: c1, content: "x", json: {a: 1}}\n',
            9,
            "/messages/2",
            "either content",
        ),
        (
            '  - {role: user, content: "x", calls: [{id: c1, name: get_weather}]}\n',
            6,
            "/messages/1/calls",
            "takes no 'calls'",
        ),
        (
            '  - {role: assistant, content: ""}\n  - {role: user, content: "x"}\n',
            6,
            "/messages/1/content",
            "needs text content",
        ),
    ],
)
def test_a_malformed_history_is_refused_with_where_and_why(
    tmp_path: Path, history: str, line: int, pointer: str, says: str
) -> None:
    found = errors(tmp_path, HEAD + history + TAIL)
    assert any(e.line == line and e.pointer == pointer and says in e.message for e in found), [
        (e.line, e.pointer, e.message) for e in found
    ]


def test_a_schema_error_in_a_history_names_the_field(tmp_path: Path) -> None:
    found = errors(tmp_path, HEAD + '  - {role: tool, call_id: c1, content: [{txt: "x"}]}\n' + TAIL)
    assert found and all(e.line == 6 for e in found)
    assert any((e.pointer or "").startswith("/messages/1/content") for e in found)


def test_a_refusal_scenario_may_hold_a_malformed_history(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    text = HEAD + '  - {role: tool, call_id: c9, content: "x"}\ntool_choice: {name: absent}\n'
    path.write_text(text + "expect: {refused: {status: 4xx}}\n", encoding="utf-8")
    (scenario,) = load_file(path)
    assert scenario.expect.refused == {"status": "4xx"}
    assert scenario.max_turns == 1
    assert scenario.messages[-1].tool_result is not None
    assert scenario.messages[-1].tool_result.call_id == "c9"
