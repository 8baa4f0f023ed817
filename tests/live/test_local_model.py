"""Live tier: the real local model (llama-cpp-python + Gemma 3 270M) on 127.0.0.1.

Whatever the model says, these must hold: every run has a transcript, the
endpoint's known deviations are findings with the request and response that
show them, and the reports are written. Needs the [local] extra.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness import scenarios
from harness.api import run_targets as run
from harness.reports import write_reports
from harness.results import read
from harness.runner import RunConfig
from harness.targets import pick
from harness.targets_file import load_targets
from tests.helpers.cli import REPO
from tests.helpers.drift import server_drift

pytestmark = pytest.mark.live

CASES = ["tool_choice.required.weather", "tool_choice.named.time", "weather.single.paris"]
TARGETS = ["local-gemma3-270m", "local-gemma3-270m-stream", "local-gemma3-270m-as-openai"]


@pytest.fixture(scope="module")
def live_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[dict[str, Any], dict[tuple[str, str], Any]]]:
    if importlib.util.find_spec("llama_cpp") is None:
        if os.environ.get("HARNESS_REQUIRE_LIVE"):
            pytest.fail("HARNESS_REQUIRE_LIVE is set but llama_cpp is not installed")
        pytest.skip("needs the [local] extra: pip install -e '.[local]'")
    out = tmp_path_factory.mktemp("live")
    suite = scenarios.select(scenarios.load([REPO / "scenarios"]), CASES)
    targets = pick(load_targets(), TARGETS)
    records = run(targets, suite, RunConfig(mode="live", results=out / "results.jsonl", concurrency=3))
    report = write_reports(records, out)[0].to_data()
    runs = {(r["target"], r["scenario"]): r for r in report["runs"]}
    yield report | {"out": str(out)}, runs


def findings(run: dict[str, Any], check_id: str) -> list[dict[str, Any]]:
    return [f for f in run["findings"] if f["check_id"] == check_id]


def exchange(run: dict[str, Any], turn: int) -> dict[str, Any]:
    return next(e for e in run["exchanges"] if e["turn"] == turn)


def test_every_run_has_a_transcript_and_reports_are_written(live_run: Any) -> None:
    report, runs = live_run
    out = Path(report["out"])
    assert len(runs) == len(CASES) * len(TARGETS)
    results = list(read(out / "results.jsonl"))
    assert len(results) == len(runs)
    for record in results:
        assert record.error is None, record.error
        assert record.transcript.exchanges, record.scenario
        assert record.target.simulated is False
    assert (out / "report.json").is_file() and (out / "report.md").is_file() and (out / "junit.xml").is_file()
    for name in TARGETS:
        assert report["summary"]["targets"][name]["score"] is not None


def test_required_tool_choice_is_an_http_500_with_an_empty_message(live_run: Any) -> None:
    _, runs = live_run
    run = runs["local-gemma3-270m", "tool_choice.required.weather"]
    (error,) = findings(run, "protocol.provider_error")
    assert error["detail"].startswith("HTTP 500") and "(empty error message)" in error["detail"]
    evidence = exchange(run, error["turn_index"])
    assert evidence["request"]["body"]["tool_choice"] == "required"
    assert evidence["response"]["status"] == 500


def test_streaming_with_auto_tool_choice_is_an_empty_stream(live_run: Any) -> None:
    _, runs = live_run
    run = runs["local-gemma3-270m-stream", "weather.single.paris"]
    (empty,) = findings(run, "wire.empty_stream")
    evidence = exchange(run, empty["turn_index"])
    assert (
        evidence["request"]["body"]["stream"] is True and evidence["request"]["body"]["tool_choice"] == "auto"
    )
    assert evidence["response"]["status"] == 200 and not evidence["response"]["body"]


def test_streaming_a_named_call_repeats_id_and_name_and_adds_function_call(live_run: Any) -> None:
    _, runs = live_run
    run = runs["local-gemma3-270m-stream", "tool_choice.named.time"]
    ids = {f["check_id"] for f in run["findings"] if f["turn_index"] == 0}
    assert {
        "wire.id_repeated_in_stream",
        "wire.name_repeated_in_stream",
        "wire.legacy_function_call_field",
    } <= ids
    evidence = exchange(run, 0)
    assert '"function_call"' in evidence["response"]["body"]


def test_null_assistant_content_is_rejected_and_the_profile_works_around_it(live_run: Any) -> None:
    _, runs = live_run
    plain = runs["local-gemma3-270m-as-openai", "tool_choice.named.time"]
    (error,) = findings(plain, "protocol.provider_error")
    # llama-cpp-python 0.3.36 answers 500 with a validation error; other builds were seen answering 400
    assert error["detail"].startswith(("HTTP 400", "HTTP 500")) and error["turn_index"] == 1
    assert "validation error" in error["detail"] or error["detail"].startswith("HTTP 400")
    rejected = exchange(plain, 1)
    assistant = [m for m in rejected["request"]["body"]["messages"] if m["role"] == "assistant"]
    assert assistant and assistant[0]["content"] is None and assistant[0]["tool_calls"]
    profiled = runs["local-gemma3-270m", "tool_choice.named.time"]
    assert findings(profiled, "wire.quirk:assistant_content_null_rejected")
    assert not findings(profiled, "protocol.provider_error")


def test_drift_from_the_committed_cassettes_is_reported_as_server_build_drift(
    live_run: Any, tmp_path: Path
) -> None:
    """The committed cassettes say which server build and model file recorded them; where a live
    run makes other calls, that is reported (a warning naming both builds), not failed."""
    report, _ = live_run
    live = list(read(Path(report["out"]) / "results.jsonl"))
    suite = scenarios.select(scenarios.load([REPO / "scenarios"]), CASES)
    recorded = run(pick(load_targets(), TARGETS), suite, RunConfig(results=tmp_path / "replay.jsonl"))
    for record in [*recorded, *live]:
        facts = record.transcript.endpoint
        assert facts["server"] == "llama-cpp-python" and facts["version"].startswith("llama-cpp-python ")
        assert len(facts["model_sha256"]) == 64, (record.key, facts)
    for line in server_drift(live, recorded):
        assert "server build recorded: llama-cpp-python " in line and "; live: llama-cpp-python " in line
