"""Every wire format the simulator serves, by name (the URL prefix of its endpoint)."""

from __future__ import annotations

from harness.sim.wire import MISTRAL, OLLAMA, OPENAI, SimFormat

FORMATS: dict[str, SimFormat] = {f.name: f for f in (OPENAI, MISTRAL, OLLAMA)}
