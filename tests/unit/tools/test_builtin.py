import pytest

from harness.errors import UnknownNameError
from harness.model import ToolCall
from harness.tools.run_tools import Fault, RunTools
from harness.tools.toolsets import bundled_tool as builtin_tool
from harness.tools.toolsets import bundled_tools


def call(name: str, **args: object) -> ToolCall:
    return ToolCall(name, dict(args), id=f"id-{name}")


def test_memory_add_search_get_with_fresh_state() -> None:
    memory = builtin_tool("memory")
    assert memory.execute({"operation": "add", "content": "The sky is blue"}) == {
        "id": 1,
        "stored": "The sky is blue",
    }
    assert memory.execute({"operation": "search", "query": "SKY"}) == {
        "results": [{"id": 1, "content": "The sky is blue"}]
    }
    assert memory.execute({"operation": "get", "id": 1})["content"] == "The sky is blue"
    assert builtin_tool("memory").execute({"operation": "search", "query": "sky"}) == {"results": []}


def test_todo_create_complete() -> None:
    todo = builtin_tool("todo")
    assert todo.execute({"operation": "create", "title": "file taxes"})["id"] == 1
    assert todo.execute({"operation": "complete", "id": 1})["done"] is True
    assert todo.execute({"operation": "list"})["items"][0]["done"] is True


def test_lookups() -> None:
    assert builtin_tool("get_weather").execute({"city": "paris"})["temperature_c"] == 18
    assert builtin_tool("get_time").execute({"city": "Tokyo, Japan"})["local_time"] == "22:05"
    assert builtin_tool("convert_temperature").execute({"celsius": 24}) == {"celsius": 24, "fahrenheit": 75.2}


def test_unknown_builtin_lists_known_names() -> None:
    with pytest.raises(UnknownNameError) as info:
        builtin_tool("nope")
    assert all(name in str(info.value) for name in bundled_tools())


def test_registry_turns_failures_into_error_results() -> None:
    registry = RunTools(faults=[Fault("memory", 1, "storage unavailable")])
    for name in ("memory", "get_weather"):
        registry.add(builtin_tool(name))
    calls = [call("memory", operation="add", content="x"), call("memory", operation="add", content="x")]
    faults = registry.plan(calls)  # counted in call order, before anything runs
    assert [f and f.error for f in faults] == ["storage unavailable", None]
    first, second = (registry.execute(c, 0, fault) for c, fault in zip(calls, faults, strict=True))
    assert (first.result.is_error, first.result.content) == (True, "error: storage unavailable")
    assert not second.result.is_error and second.result.content == '{"id": 1, "stored": "x"}'
    unknown_city = registry.execute(call("get_weather", city="Atlantis"), 0).result
    assert unknown_city.is_error and "unknown city 'Atlantis'" in unknown_city.content
    assert registry.execute(call("teleport"), 0).result.content.startswith("error: unknown tool 'teleport'")
    unparsed = registry.execute(ToolCall("memory", None, "{bad", "i", "i", parse_error="bad json"), 0).result
    assert unparsed.is_error and "bad json" in unparsed.content
