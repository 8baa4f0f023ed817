"""Built-in deterministic tools, looked up by name; each run gets fresh state.

- ``memory``: add / search / get facts;
- ``todo``: create / list / complete items;
- ``get_weather``, ``get_time``: lookups over fixed data for a few cities
  (an unknown city is a tool error, which error scenarios use);
- ``convert_temperature``: Celsius to Fahrenheit, for sequential chains.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.errors import UnknownNameError
from harness.tools.builtin.lookup import convert_temperature_tool, time_tool, weather_tool
from harness.tools.builtin.memory import memory_tool
from harness.tools.builtin.todo import todo_tool
from harness.tools.registry import Tool

BUILTINS: dict[str, Callable[[], Tool]] = {
    "memory": memory_tool,
    "todo": todo_tool,
    "get_weather": weather_tool,
    "get_time": time_tool,
    "convert_temperature": convert_temperature_tool,
}


def builtin_tool(name: str) -> Tool:
    """A fresh instance of the built-in tool ``name``."""
    try:
        factory = BUILTINS[name]
    except KeyError:
        raise UnknownNameError("built-in tool", name, BUILTINS) from None
    return factory()
