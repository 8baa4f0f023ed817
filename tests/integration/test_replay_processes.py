"""A replay shared by forked worker processes gives the same records as one process, and writes
each once to the results file; so does a live run asked to fork (--processes), each worker with
its share of every limit."""

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness import api
from harness.records import RunRecord, decode_record, to_builtins
from harness.results import read
from harness.runner import RunConfig, RunEnd, plan, sink, workers
from harness.targets import pick
from harness.targets_file import load_targets
from tests.helpers.cli import REPO


def test_forked_workers_give_the_records_one_process_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = api.load_scenarios(REPO / "scenarios", select=["multi_turn", "naming", "batch", "weather.*"])
    targets = pick(load_targets(), ["sim-openai", "sim-anthropic-stream", "local-gemma3-270m"])
    monkeypatch.setattr(plan, "MIN_JOBS_PER_WORKER", 1)
    config = RunConfig(cassettes=REPO / "cassettes", results=tmp_path / "forked.jsonl", processes=2)
    assert plan.worker_count(config, [(targets[0], suite[0], 0)] * 100) == 2
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
    # each shared value crossed from a worker once, and every line still reads back whole
    assert [timeless(r.transcript) for r in forked] == [timeless(r.transcript) for r in one]


def test_the_runs_of_a_worker_that_dies_run_once_in_the_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker killed halfway: the runs it reported are kept, the parent runs the others, and
    every run is in the results once."""
    suite = api.load_scenarios(REPO / "scenarios", select=["multi_turn", "naming", "batch", "weather.*"])
    targets = pick(load_targets(), ["sim-openai", "sim-anthropic-stream"])
    monkeypatch.setattr(plan, "MIN_JOBS_PER_WORKER", 1)
    monkeypatch.setattr(workers, "REPLAY_BATCH", 0)  # each run sent as it ends
    parent, run_threads = os.getpid(), workers.run_threads

    def dying(jobs: list[Any], *args: Any) -> None:  # in the worker holding the first scenario
        if os.getpid() != parent and jobs[0][1].id == suite[0].id:
            run_threads(jobs[: len(jobs) // 2], *args)
            os._exit(3)
        run_threads(jobs, *args)

    monkeypatch.setattr(workers, "run_threads", dying)
    config = RunConfig(cassettes=REPO / "cassettes", results=tmp_path / "forked.jsonl", processes=2)
    forked = api.run_targets(targets, suite, config)
    one = api.run_targets(
        targets, suite, RunConfig(cassettes=REPO / "cassettes", results=tmp_path / "one.jsonl", processes=1)
    )
    written = [r.key for r in read(tmp_path / "forked.jsonl")]
    assert len(written) == len(set(written)) == len(suite) * len(targets)
    assert [(r.key, r.score, r.outcome, r.checks) for r in forked] == [
        (r.key, r.score, r.outcome, r.checks) for r in one
    ]


def timeless(data: Any) -> Any:
    """``data`` as plain data without the wall times it holds (``elapsed_ms``)."""
    if isinstance(data, dict):
        return {k: timeless(v) for k, v in data.items() if k != "elapsed_ms"}
    if isinstance(data, list):
        return [timeless(v) for v in data]
    return timeless(to_builtins(data)) if hasattr(data, "__dataclass_fields__") else data


def test_a_live_run_on_forked_workers_gives_the_records_one_process_gives(tmp_path: Path) -> None:
    suite = api.load_scenarios(REPO / "scenarios", select=["single", "parallel", "sequential"])
    targets = pick(load_targets(), ["sim-openai", "sim-gemini-stream"])
    forked = api.run(
        suite, targets, RunConfig(mode="live", results=tmp_path / "forked.jsonl", processes=2)
    ).records
    one = api.run(suite, targets, RunConfig(mode="live", results=None, processes=1)).records
    assert len(forked) == len(suite) * len(targets) and all(r.score == 100 for r in forked)
    assert [(r.key, r.score, r.outcome) for r in forked] == [(r.key, r.score, r.outcome) for r in one]
    assert sorted(r.key for r in read(tmp_path / "forked.jsonl")) == [r.key for r in forked]


def test_a_live_run_forks_no_more_workers_than_its_smallest_target_concurrency() -> None:
    suite = api.load_scenarios(REPO / "scenarios", select=["weather.*"])
    known = load_targets()
    jobs = [(known[name], scenario, 0) for name in ("sim-openai", "local-gemma3-270m") for scenario in suite]
    live = RunConfig(mode="live", processes=4)
    assert plan.worker_count(live, jobs) == 1  # the local model server answers one request at a time
    assert plan.worker_count(live, [j for j in jobs if j[0].name == "sim-openai"]) == 4
    assert plan.worker_count(RunConfig(mode="live"), jobs[:5]) == 1  # live forks only when asked


def test_on_end_reports_each_forked_run_without_decoding_its_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A progress display (``on_end``) gets each run's key, outcome and score as the worker sent
    them: the parent decodes a worker's record only for ``on_result``, which still gets it whole."""
    suite = api.load_scenarios(REPO / "scenarios", select=["weather.*", "naming"])
    targets = pick(load_targets(), ["sim-openai", "local-gemma3-270m"])
    monkeypatch.setattr(plan, "MIN_JOBS_PER_WORKER", 1)
    decoded: list[bytes] = []
    monkeypatch.setattr(sink, "decode_record", lambda line: decoded.append(line) or decode_record(line))
    ends: list[RunEnd] = []
    config = RunConfig(cassettes=REPO / "cassettes", results=tmp_path / "ends.jsonl", processes=2)
    records = api.run(suite, targets, config, on_end=ends.append, history=False).records
    assert not decoded
    assert sorted(ends) == sorted(RunEnd.of(r) for r in records)
    assert {r.outcome for r in records} >= {"pass", "fail"}  # outcomes differ, and each came through
    whole: list[RunRecord] = []
    config = RunConfig(cassettes=REPO / "cassettes", results=tmp_path / "whole.jsonl", processes=2)
    api.run(suite, targets, config, on_result=whole.append, history=False)
    assert len(decoded) == len(whole) == len(records)
    assert sorted((r.key, r.checks) for r in whole) == [(r.key, r.checks) for r in records]


def test_the_parent_of_a_forked_replay_that_passes_never_imports_deepdiff(tmp_path: Path) -> None:
    """deepdiff (a quarter of a second, and 19 MB with numpy) is imported by a run that shows a
    diff, in the worker that runs it: a replay whose runs all pass never imports it before it forks."""
    code = f"""
import sys
from pathlib import Path
from harness import api
from harness.runner import RunConfig, plan
from harness.targets import pick
from harness.targets_file import load_targets
plan.MIN_JOBS_PER_WORKER = 1
suite = api.load_scenarios({str(REPO / "scenarios")!r}, select=["weather.*"])
cassettes, results = Path({str(REPO / "cassettes")!r}), Path({str(tmp_path / "r.jsonl")!r})
config = RunConfig(cassettes=cassettes, results=results, processes=2)
assert plan.worker_count(config, [(None, suite[0], 0)] * len(suite)) == 2
records = api.run_targets(pick(load_targets(), ["sim-openai"]), suite, config)
assert len(records) == len(suite) > 2 and all(r.outcome == "pass" for r in records)
print("deepdiff" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
