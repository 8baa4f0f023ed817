"""Tools as a run offers them: names the provider forbids made valid reversibly; arguments validated."""

import pytest

from harness.model import ToolCall, ToolSpec, Transcript
from harness.providers.rules import rules_for
from harness.runner import expose_declared
from harness.tools.run_tools import RunTools, Tool

LONG = "warehouse_inventory_service_reserve_stock_for_customer_order_by_line_item_v"
NAMES = ["math.factorial", "plain_name", LONG + "1", LONG + "2", "x" * 64]


def registry() -> RunTools:
    tools = RunTools()
    for name in NAMES:
        tools.add(Tool(ToolSpec(name, "", {"type": "object"}), lambda a, n=name: n))
    return tools


@pytest.mark.parametrize("family", ["openai", "anthropic", "gemini"])
def test_every_offered_name_is_valid_unique_and_maps_back(family: str) -> None:
    tools, transcript = registry(), Transcript("t", "s")
    expose_declared(tools, family, transcript)
    offered = list(tools.names())
    assert len(set(offered)) == len(NAMES) and all(rules_for(family).is_valid(n) for n in offered)
    assert [transcript.logical(n) for n in offered] == NAMES
    assert [tools.get(n).execute({}) for n in offered] == NAMES  # each name still runs its own tool
    assert "plain_name" in offered and "x" * 64 in offered  # valid names are never touched
    notes = [f.detail for f in transcript.findings]
    assert all(f.check_id == "wire.tool_name_mapped" for f in transcript.findings)
    assert len(notes) == len(transcript.tool_names)


def test_dots_stay_where_the_provider_allows_them() -> None:
    for family, expected in (("gemini", "math.factorial"), ("openai", "math_factorial")):
        tools, transcript = registry(), Transcript("t", "s")
        expose_declared(tools, family, transcript)
        assert expected in tools.names()


def test_nothing_changes_when_every_name_is_valid() -> None:
    tools, transcript = RunTools(), Transcript("t", "s")
    tools.add(Tool(ToolSpec("lookup", "", {"type": "object"}), lambda a: a))
    expose_declared(tools, "openai", transcript)
    assert list(tools.names()) == ["lookup"] and transcript.tool_names == {} and transcript.findings == []


def test_arguments_that_break_the_schema_are_answered_with_the_errors_and_not_run() -> None:
    ran: list[dict[str, object]] = []
    schema = {
        "type": "object",
        "properties": {"sku": {"type": "string", "pattern": "^[0-9]{5}$"}, "quantity": {"type": "integer"}},
        "required": ["sku", "quantity"],
    }
    tools = RunTools(validate=True)
    tools.add(Tool(ToolSpec("add_line", "", schema), lambda a: ran.append(a) or "ok"))
    bad = tools.execute(ToolCall("add_line", {"sku": "110", "quantity": "3"}, "", "c1", "c1"), 0)
    assert bad.result.is_error and ran == []
    assert bad.result.content == (
        "error: invalid arguments, the tool was not run: quantity: '3' is not of type 'integer'; "
        "sku: '110' does not match '^[0-9]{5}$'"
    )
    good = tools.execute(ToolCall("add_line", {"sku": "00110", "quantity": 3}, "", "c2", "c2"), 1)
    assert not good.result.is_error and ran == [{"sku": "00110", "quantity": 3}]
