"""Re-chunked replay of the user's agent (`harness run --rechunk N`): its own streaming client
receives every recorded stream re-sliced into chunks of 1..N bytes and at line ends, offline.

The streaming example agent (the official openai SDK, over httpx2, on Chat Completions and on the
Responses API) does the same at every slicing; an agent with a naive frame parser
(tests/helpers/naive_stream_agent.py, async httpx) works on the streams in one piece and is caught
re-sliced, with the cassette, the chunk size and the byte offset of the first cut that breaks it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.api import load_scenarios, run
from harness.records import RunRecord
from harness.runner import RunConfig
from harness.targets import Target
from harness.targets_file import load_config
from tests.helpers.cli import REPO

EXAMPLES = REPO / "examples"


def rechunk_findings(record: RunRecord) -> list[tuple[bool, str]]:
    conduct = next(c for c in record.checks if c.id == "protocol.agent_conduct")
    return [(f.passed, f.detail) for f in conduct.findings if f.check_id == "agent.stream_rechunk"]


def behaviour(record: RunRecord) -> tuple[object, ...]:
    """What a run came to: its outcome, score, the calls the model made and the tools run."""
    transcript = record.transcript
    calls = [(turn, call.name, call.arguments) for turn, call in transcript.calls]
    runs = [(e.call.name, e.call.arguments, e.result.content) for e in transcript.executions]
    return record.outcome, record.score, calls, runs, transcript.stop_reason


@pytest.mark.parametrize("name", ["openai-sdk-agent-stream", "openai-sdk-responses-agent-stream"])
def test_the_streaming_example_agent_does_the_same_at_every_slicing(name: str) -> None:
    """Chat Completions deltas and Responses item events alike: re-sliced, the agent's runs come
    to what they come to in plain replay."""
    suite = load_scenarios(REPO / "scenarios", select=["parallel", "todo.sequential.*"])
    target = load_config(EXAMPLES / "harness.toml").targets[name]
    plain = run(suite, [target], RunConfig(cassettes=EXAMPLES / "cassettes"))
    result = run(suite, [target], RunConfig(cassettes=EXAMPLES / "cassettes", rechunk=16))
    assert not result.errors and len(result.records) == len(suite) >= 6
    for record, whole in zip(result.records, plain.records, strict=True):
        ((passed, detail),) = rechunk_findings(record)
        assert passed and "1..16-byte chunks" in detail, (record.scenario, detail)
        assert record.score == 100, record.scenario
        assert record.scenario == whole.scenario and rechunk_findings(whole) == []
        assert behaviour(record) == behaviour(whole), record.scenario
        assert record.transcript.calls, record.scenario


def test_a_naive_stream_parser_is_caught_with_its_chunk_size_and_offset(tmp_path: Path) -> None:
    naive = Target.build(
        "naive-agent",
        format="openai-chat",
        model="sim-conformant",
        base_url="sim",
        stream=True,
        agent="naive_stream_agent.py:run",
        origin=str(REPO / "tests" / "helpers" / "harness.toml"),
    )
    (scenario,) = load_scenarios(REPO / "scenarios", select=["weather.single.paris"])
    (recorded,) = run([scenario], [naive], RunConfig(mode="record", cassettes=tmp_path)).records
    assert recorded.score == 100  # in one piece the naive parser works
    (whole,) = run([scenario], [naive], RunConfig(cassettes=tmp_path)).records
    assert whole.score == 100 and rechunk_findings(whole) == []  # and so it does in plain replay
    (swept,) = run([scenario], [naive], RunConfig(cassettes=tmp_path, rechunk=8)).records
    ((passed, detail),) = rechunk_findings(swept)
    assert not passed and not swept.passed and swept.score is not None and swept.score < 100
    assert "naive-agent/weather.single.paris.yaml: re-sliced into 1-byte chunks" in detail
    assert re.search(r"the cut at byte \d+ of streamed response 1 alone changes it", detail), detail
    assert "ran no further tool instead of get_weather" in detail, detail


def test_rechunk_says_when_no_agent_target_is_chosen(tmp_path: Path) -> None:
    from tests.helpers.cli import harness

    out = harness(
        "run", "-t", "sim-openai", "-s", "weather.single.paris", "--rechunk", "4", "--out", tmp_path
    )
    assert out.returncode == 0 and "--rechunk re-slices the streams of agent targets only" in out.stderr
    live = harness("run", "--live", "-t", "sim-openai", "--rechunk", "4", "--out", tmp_path / "live")
    assert live.returncode == 2 and "it needs --mode replay" in live.stderr
