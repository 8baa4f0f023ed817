"""What to run: the run configuration (one object the API, the CLI and the pytest plugin are
built from), shards, the jobs, how many workers and the concurrency each target gets."""

from __future__ import annotations

import hashlib
import os
import re
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import ConfigError
from harness.records import RunRecord
from harness.scenarios import Scenario
from harness.targets import Target
from harness.transport.cassette import Mode, RecordMode
from harness.transport.send import Endpoint


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (``--shard K/N``, 1-based): the (target, scenario) pairs whose
    SHA-256 falls to it, with all their repeats. The assignment is stable: a pair stays in its
    shard whatever other targets or scenarios are added, on any machine, so N CI jobs split a
    suite without talking to each other and ``harness merge`` puts the results back together."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"K/N"`` with 1 <= K <= N."""
        match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
        if not match or not 1 <= int(match[1]) <= int(match[2]):
            raise ConfigError(f"--shard {text!r}: expected K/N with 1 <= K <= N, such as 2/3")
        return cls(int(match[1]), int(match[2]))

    def holds(self, target: str, scenario: str) -> bool:
        digest = hashlib.sha256(f"{target}\0{scenario}".encode()).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass
class RunConfig:
    """How to run: the mode (``replay``, ``record``, ``live``), where cassettes are and where
    results go, repeats per scenario (pass^k), concurrency, the vcrpy record mode, whether MCP
    servers start even in replay; runs to skip (a resumed run), an event that interrupts, and
    the largest chunk size an agent's streams are re-sliced to in replay
    (:func:`harness.agent.rechunk.sweep_agent`).

    Example::

        config = harness.RunConfig(mode="live", results=None, concurrency=4)
        records = harness.run_targets(targets, suite, config)
    """

    mode: Mode = "replay"
    cassettes: Path = Path("cassettes")
    results: Path | None = Path("reports/results.jsonl")  # None: keep the records in memory only
    repeats: int = 1
    concurrency: int = 8
    record_mode: RecordMode = "all"
    live_mcp: bool = False  # start MCP servers even in replay (their results must match the recording)
    skip: frozenset[tuple[str, str, int]] = frozenset()  # runs already done (a resumed run)
    stop: threading.Event | None = None  # set to interrupt (Ctrl-C)
    processes: int = 0  # worker processes: replay 0 = one per core; live and record only when > 1
    rechunk: int = 0  # replay: sweep each agent target's run at stream chunk sizes 1..N (0: no)
    shard: Shard | None = None  # run only this shard's (target, scenario) pairs


OnResult = Callable[[RunRecord], None]


Job = tuple[Target, Scenario, int]

MIN_JOBS_PER_WORKER = 50
"""A replay forks workers only when each gets at least this many runs (a fork costs ~10 ms)."""


def worker_count(config: RunConfig, jobs: Sequence[Job]) -> int:
    """How many processes share the runs, on Linux only (where forking a process is safe and
    cheap). A replay: one per core, each with at least :data:`MIN_JOBS_PER_WORKER` runs. A live
    or recording run only when ``config.processes`` asks, and at most the smallest target
    concurrency, since each worker gets its share of every target's concurrency and rate limits
    (a local model server, one request at a time, keeps the run in one process)."""
    if config.processes == 1 or sys.platform != "linux" or not jobs:
        return 1
    if config.mode != "replay":
        smallest = min(target.concurrency for target, _, _ in jobs)
        return max(1, min(config.processes, smallest, len(jobs)))
    if config.live_mcp:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(config.processes or cores, len(jobs) // MIN_JOBS_PER_WORKER))


def target_limits(
    targets: Sequence[Target], endpoints: Mapping[str, Endpoint], parts: int = 1
) -> dict[str, threading.Semaphore]:
    """One concurrency limit per endpoint ``limit`` key; targets sharing one (a local model
    server answers one request at a time) share the smallest of their limits; a forked worker,
    one of ``parts``, gets its share."""
    shared: dict[str, threading.Semaphore] = {}
    return {
        target.name: shared.setdefault(
            endpoints[target.name].limit or target.name,
            threading.Semaphore(max(1, target.concurrency // parts)),
        )
        for target in sorted(targets, key=lambda t: t.concurrency)
    }
