"""A replay shared by forked worker processes gives the same records as one process, and writes
each once to the results file."""

from pathlib import Path

import pytest

from harness import api, runner
from harness.records import read
from harness.runner import RunConfig
from harness.targets import load_targets, pick
from tests.helpers.cli import REPO


def test_forked_workers_give_the_records_one_process_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = api.load_scenarios(REPO / "scenarios", select_=["multi_turn", "naming", "batch", "weather.*"])
    targets = pick(load_targets(), ["sim-openai", "sim-anthropic-stream", "local-gemma3-270m"])
    monkeypatch.setattr(runner, "MIN_JOBS_PER_WORKER", 1)
    config = RunConfig(cassettes=REPO / "cassettes", results=tmp_path / "forked.jsonl", processes=2)
    assert runner._workers(config, 40) == 2
    forked = api.run_targets(targets, suite, config)
    one = api.run_targets(
        targets, suite, RunConfig(cassettes=REPO / "cassettes", results=tmp_path / "one.jsonl", processes=1)
    )
    assert len(forked) == len(suite) * len(targets)
    assert [(r.key, r.score, r.outcome, r.checks) for r in forked] == [
        (r.key, r.score, r.outcome, r.checks) for r in one
    ]
    written = sorted(read(tmp_path / "forked.jsonl"), key=lambda r: r.key)
    assert [r.key for r in written] == [r.key for r in forked]
