"""What to run: the run configuration (one object the API, the CLI and the pytest plugin are
built from), shards, the jobs, how many workers and the concurrency each target gets."""

from __future__ import annotations

import hashlib
import os
import re
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, NamedTuple

from harness.errors import ConfigError
from harness.records import Outcome, RunRecord
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


@dataclass(frozen=True)
class RunConfig:
    """How to run: the mode (``replay``, ``record``, ``live``), where cassettes are and where
    results go (``None``: the records stay in memory), repeats per scenario (pass^k),
    concurrency, the vcrpy record mode, whether MCP servers start even in replay; runs to skip
    (a resumed run), an event that interrupts, worker processes, the largest chunk size an
    agent's streams are re-sliced to in replay (:func:`harness.agent.rechunk.sweep_agent`), and
    the shard to run.

    The one definition of a run's options: :func:`harness.run` takes it, and the command line
    and the pytest plugin build it from their options, named as its fields, with
    :func:`run_config`. A field either shell does not take as an option is listed in
    :data:`NOT_OPTIONS`, with the reason (a test holds every other field to an option of both).

    Example::

        config = harness.RunConfig(mode="live", concurrency=4, results=Path("out/results.jsonl"))
        result = harness.run(suite, ["sim-openai"], config)
    """

    mode: Mode = "replay"
    cassettes: Path = Path("cassettes")
    results: Path | None = None  # a results file each record is appended to; None: memory only
    repeats: int = 1
    concurrency: int = 8
    record_mode: RecordMode = "all"
    live_mcp: bool = False  # start MCP servers even in replay (their results must match the recording)
    skip: frozenset[tuple[str, str, int]] = frozenset()  # runs already done (a resumed run)
    stop: threading.Event | None = None  # set to interrupt (Ctrl-C)
    processes: int = 0  # worker processes: replay 0 = one per core; live and record only when > 1
    rechunk: int = 0  # replay: sweep each agent target's run at stream chunk sizes 1..N (0: no)
    shard: Shard | None = None  # run only this shard's (target, scenario) pairs


NOT_OPTIONS: dict[str, dict[str, str]] = {
    "cli": {
        "results": "results.jsonl is written in the run's folder under --out",
        "skip": "--resume skips the runs its run folder holds",
        "stop": "set by the first Ctrl-C or stop signal",
    },
    "pytest": {
        "results": "each item's record goes to its test report, not to a results file",
        "skip": "pytest selects the items to run (-k, -m, --lf)",
        "stop": "pytest handles Ctrl-C",
        "repeats": "an item is one run: repeat items with pytest (pytest-repeat's --count)",
        "concurrency": "items run one at a time in each pytest process",
        "processes": "pytest-xdist (-n) runs items in several processes",
        "shard": "pytest-xdist or -k splits the items",
        "rechunk": "a sweep over a whole run of an agent target: harness run --rechunk",
    },
}
"""The :class:`RunConfig` fields the command line (``harness run``) and the pytest plugin do not
take as an option, and why; every other field is an option of both, named as the field
(``--repeat`` aside: ``repeats``), the plugin's prefixed ``--harness-``."""


def run_config(options: Mapping[str, object], base: RunConfig | None = None) -> RunConfig:
    """The :class:`RunConfig` a shell's options give: each option named as a field sets it
    (``None`` leaves it as it is), given as a shell has it (a path as text, a shard as ``K/N``,
    the runs to skip as any iterable); other names (``--out``, the targets) are not the run's and
    are left out. What the command line, the pytest plugin and :func:`harness.run`'s old
    keywords all go through.

    Example::

        config = run_config({"mode": "record", "cassettes": "cassettes", "shard": "2/3", "out": "reports"})
        assert config.shard == Shard(2, 3) and config.cassettes == Path("cassettes")
    """
    values: dict[str, Any] = {name: value for name in _FIELDS if (value := options.get(name)) is not None}
    for name in ("cassettes", "results"):
        if name in values:
            values[name] = Path(values[name])
    if isinstance(values.get("shard"), str):
        values["shard"] = Shard.parse(values["shard"])
    if "skip" in values:
        values["skip"] = frozenset(values["skip"])
    return replace(base or RunConfig(), **values)


_FIELDS = tuple(f.name for f in fields(RunConfig))


OnResult = Callable[[RunRecord], None]


class RunEnd(NamedTuple):
    """What a progress display needs of a finished run: its key, outcome and score. ``on_end``
    gets it where ``on_result`` would get the whole record, which the parent process would have to
    decode again for every run a forked worker sent it."""

    target: str
    scenario: str
    repeat: int
    outcome: Outcome
    score: float | None

    @classmethod
    def of(cls, record: RunRecord) -> RunEnd:
        """The end of ``record``'s run."""
        return cls(record.target.name, record.scenario, record.repeat, record.outcome, record.score)


OnEnd = Callable[[RunEnd], None]


Job = tuple[Target, Scenario, int]


def applies(target: Target, scenario: Scenario) -> bool:
    """Whether ``scenario`` can test ``target``: a scenario that expects the endpoint to refuse a
    malformed tool history (``expect.refused``) does not apply in a prompted mode, which sends the
    tools and the history as text, so there is no tool structure to refuse (docs/scenarios.md)."""
    return scenario.expect.refused is None or target.protocol is None


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
