"""Every wire format the simulator serves, by name (the URL prefix of its endpoint)."""

from __future__ import annotations

from harness.servers.sim.wire import MISTRAL, OLLAMA, OPENAI, SimFormat
from harness.servers.sim.wire_anthropic import ANTHROPIC
from harness.servers.sim.wire_gemini import GEMINI

FORMATS: dict[str, SimFormat] = {f.name: f for f in (OPENAI, MISTRAL, OLLAMA, ANTHROPIC, GEMINI)}
