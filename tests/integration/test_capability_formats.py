"""The capability grid of the default replay run (``harness run`` with no options) decides every
column for the simulator targets of every wire format, and each has sim-openai's row except
where its format cannot say it (documented per format below)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.helpers.cli import harness

CANNOT_SEND = "cannot be sent: the wire format has no tool_choice field"
LIMITS = {
    "sim-bedrock": {"tool_choice_none"},  # Converse's toolChoice has no "none" [B5]
    "sim-ollama": {"tool_choice_required", "tool_choice_none", "tool_choice_named"},  # /api/chat: no field
}
"""What a format cannot send, per simulator target (the stream target alike)."""


def test_every_format_s_simulator_has_sim_openai_s_capabilities(tmp_path: Path) -> None:
    result = harness("run", "--out", tmp_path, timeout=900)
    assert result.returncode == 0, result.stderr[-2000:]
    grid: dict[str, Any] = json.loads((tmp_path / "report.json").read_text())["capabilities"]["targets"]
    simulated = [n for n in grid if n.startswith("sim-") and "prompted" not in n]
    wires = {n.removesuffix("-stream") for n in simulated}
    assert {"sim-openai-responses", "sim-bedrock", "sim-cohere", "sim-gemini-interactions"} <= wires
    for name in simulated:
        stream = name.endswith("-stream")
        reference = grid["sim-openai-stream" if stream else "sim-openai"]
        limits = LIMITS.get(name.removesuffix("-stream"), set())
        for column, found in grid[name].items():
            if column in limits:
                assert found["value"] == "no" and found["detail"].startswith(CANNOT_SEND), (name, column)
                continue
            if column == "streamed_calls" and not stream:
                assert found["value"] == "untested", name
                continue
            assert found["value"] == reference[column]["value"] == "yes", (name, column, found)
