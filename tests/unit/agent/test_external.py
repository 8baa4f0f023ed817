"""The tools handed to the user's agent (harness.agent.external): they answer as the scenario
declares, and answer a call whose arguments are not a JSON object with a ToolFailure, as the docs
promise, never with the JSON parser's exception."""

from __future__ import annotations

import pytest

from harness.agent.external import AgentTool, agent_tools
from harness.api import load_scenarios
from harness.model import ToolExecution
from harness.runner import build_registry
from harness.tools.run_tools import ToolFailure
from tests.helpers.cli import REPO

(PARIS,) = load_scenarios(REPO / "scenarios", select=["weather.single.paris"])


def weather() -> tuple[AgentTool, list[ToolExecution]]:
    log: list[ToolExecution] = []
    (tool,) = [t for t in agent_tools(build_registry(PARIS), log) if t.name == "get_weather"]
    return tool, log


@pytest.mark.parametrize(
    ("arguments", "why"),
    [
        ('{"city": "Paris"', "arguments are not valid JSON"),
        ("city=Paris", "arguments are not valid JSON"),
        ('["Paris"]', "arguments are not a JSON object: list"),
        ('"Paris"', "arguments are not a JSON object: str"),
        ("[" * 100_000, "arguments are not valid JSON"),
    ],
)
def test_arguments_that_are_not_a_json_object_are_a_tool_failure(arguments: str, why: str) -> None:
    tool, log = weather()
    with pytest.raises(ToolFailure) as failure:
        tool(arguments)
    assert why in str(failure.value) and "the tool was not run" not in str(failure.value)
    (execution,) = log  # the call is kept, as the model made it: the wire check matches it
    assert execution.result.is_error and execution.call.arguments is None
    assert execution.call.raw_arguments == arguments and why in (execution.call.parse_error or "")


def test_json_text_an_object_or_nothing_runs_the_tool() -> None:
    tool, log = weather()
    assert tool('{"city": "Paris"}') == tool({"city": "Paris"})
    assert "Paris" in tool('{"city": "Paris"}')
    assert [e.call.arguments for e in log] == [{"city": "Paris"}] * 3
