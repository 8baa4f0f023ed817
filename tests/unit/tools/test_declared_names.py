"""Declared tool names the provider forbids are offered under valid names, reversibly."""

import pytest

from harness.model import ToolSpec, Transcript
from harness.providers.rules import rules_for
from harness.runner import expose_declared
from harness.tools.registry import Tool, ToolRegistry

LONG = "warehouse_inventory_service_reserve_stock_for_customer_order_by_line_item_v"
NAMES = ["math.factorial", "plain_name", LONG + "1", LONG + "2", "x" * 64]


def registry() -> ToolRegistry:
    tools = ToolRegistry()
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
    tools, transcript = ToolRegistry(), Transcript("t", "s")
    tools.add(Tool(ToolSpec("lookup", "", {"type": "object"}), lambda a: a))
    expose_declared(tools, "openai", transcript)
    assert list(tools.names()) == ["lookup"] and transcript.tool_names == {} and transcript.findings == []
