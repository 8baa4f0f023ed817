"""Lookups over fixed data: weather and local time by city, and a unit conversion.

The functions behind the bundled ``cities`` tool set (``harness/toolsets/cities.yaml``).
"""

from __future__ import annotations

from typing import Any

from harness.tools.run_tools import ToolFailure

CITIES: dict[str, dict[str, Any]] = {
    "paris": {
        "city": "Paris",
        "temperature_c": 18,
        "conditions": "light rain",
        "time": "14:05",
        "utc": "+01:00",
    },
    "tokyo": {"city": "Tokyo", "temperature_c": 24, "conditions": "sunny", "time": "22:05", "utc": "+09:00"},
    "london": {
        "city": "London",
        "temperature_c": 15,
        "conditions": "overcast",
        "time": "13:05",
        "utc": "+00:00",
    },
    "new york": {
        "city": "New York",
        "temperature_c": 21,
        "conditions": "clear",
        "time": "08:05",
        "utc": "-05:00",
    },
    "berlin": {
        "city": "Berlin",
        "temperature_c": 16,
        "conditions": "windy",
        "time": "14:05",
        "utc": "+01:00",
    },
    "sydney": {
        "city": "Sydney",
        "temperature_c": 27,
        "conditions": "humid",
        "time": "00:05",
        "utc": "+11:00",
    },
    "madrid": {
        "city": "Madrid",
        "temperature_c": 25,
        "conditions": "sunny",
        "time": "14:05",
        "utc": "+01:00",
    },
}


def _city(args: dict[str, Any]) -> dict[str, Any]:
    name = str(args.get("city", "")).strip()
    found = CITIES.get(name.lower().split(",")[0].strip())
    if found is None:
        known = ", ".join(c["city"] for c in CITIES.values())
        raise ToolFailure(f"unknown city {name!r}; known cities: {known}")
    return found


def get_weather(args: dict[str, Any], state: dict[str, Any]) -> Any:
    """Current weather for a city (``harness/toolsets/cities.yaml``)."""
    city = _city(args)
    return {"city": city["city"], "temperature_c": city["temperature_c"], "conditions": city["conditions"]}


def get_time(args: dict[str, Any], state: dict[str, Any]) -> Any:
    """Current local time in a city."""
    city = _city(args)
    return {"city": city["city"], "local_time": city["time"], "utc_offset": city["utc"]}


def convert_temperature(args: dict[str, Any], state: dict[str, Any]) -> Any:
    """Celsius to Fahrenheit."""
    celsius = args.get("celsius")
    if isinstance(celsius, bool) or not isinstance(celsius, int | float):
        raise ToolFailure(f"`celsius` must be a number, got {celsius!r}")
    return {"celsius": celsius, "fahrenheit": round(celsius * 9 / 5 + 32, 1)}
