"""Live runs on threads: no more threads than the targets' own limits can keep busy."""

from __future__ import annotations

import threading

import httpx

from harness.api import load_scenarios
from harness.records import RunRecord
from harness.runner import RunConfig
from harness.runner.plan import target_limits
from harness.runner.workers import run_threads
from harness.targets import Target
from harness.transport.send import Endpoint
from tests.helpers.cli import REPO

PARIS = load_scenarios(REPO / "scenarios", select=["weather.single.paris"])


def test_a_high_concurrency_starts_only_the_threads_the_targets_can_use() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        message = {"role": "assistant", "content": "It is sunny."}
        return httpx.Response(
            200, json={"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
        )

    targets = [
        Target.build(name, format="openai-chat", model="m", base_url="http://model.invalid", concurrency=3)
        for name in ("a", "b")
    ]
    endpoints = {
        t.name: Endpoint("http://model.invalid", transport=httpx.MockTransport(answer)) for t in targets
    }
    jobs = [(t, PARIS[0], k) for k in range(20) for t in targets]
    running: set[str] = set()
    kept: list[RunRecord] = []

    def keep(record: RunRecord) -> None:
        running.update(t.name for t in threading.enumerate() if t.name.startswith("run"))
        kept.append(record)

    config = RunConfig(mode="live", results=None, concurrency=1000)
    run_threads(jobs, config, endpoints, target_limits(targets, endpoints), keep, threading.Event())
    assert len(kept) == 40
    assert 1 <= len(running) <= 6  # the two targets' 3 each, not 1,000
