"""What building a report keeps in memory, measured with tracemalloc on a synthetic record
stream: it grows with what the runs showed, never by a copy of each run or each check of it."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Iterator

from harness.analysis.migration import Migrations
from harness.model import Finding, Usage
from harness.records import CheckResult, RunRecord, TargetInfo
from harness.reports.json_report import build
from tests.helpers.transcripts import call, transcript

CHECKS = 30  # about what a run of the bundled suite is judged by
SCENARIOS = 10


def target(n: int, fmt: str = "openai-chat") -> TargetInfo:
    return TargetInfo(
        f"t{n}-{fmt}", fmt, "m", False, False, "native", "openai", endpoint="https://api.example.com"
    )


def record(info: TargetInfo, scenario: int, repeat: int = 0) -> RunRecord:
    """A run as a results file gives it: every value its own object, one check failed."""
    checks = [
        CheckResult.of(f"protocol.c{i}", "protocol", 1.0, [Finding(f"protocol.c{i}", "info", True, "ok")])
        for i in range(CHECKS - 1)
    ]
    checks.append(
        CheckResult.of(
            "expect.calls", "expectation", 1.0, [Finding("expect.calls", "error", False, "no call", 0)]
        )
    )
    return RunRecord(
        target=info,
        scenario=f"w.single.s{scenario}",
        category="single",
        repeat=repeat,
        mode="replay",
        score=0.0,
        passed=False,
        error=None,
        checks=tuple(checks),
        usage=Usage(),
        transcript=transcript([call("get_weather", city="Paris")], "It is 18C."),
        outcome="fail",
    )


def held(work: Callable[[], object]) -> tuple[int, int]:
    """The bytes ``work`` allocated and kept (what it returns), and the most it held at once."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = work()
        now, peak = tracemalloc.get_traced_memory()
        del kept
        return now - before, peak - before
    finally:
        tracemalloc.stop()


def test_migrations_keep_what_runs_showed_once_not_each_check_of_each_target() -> None:
    """Many targets showing the same on every scenario (the bundled suite on aliases of its
    targets, 14 KB a target and scenario when each check of each kept its own counter): what
    is kept grows by a few tens of bytes a target and scenario (its number in an array, and what
    each target holds, spread over its scenarios)."""

    def added(targets: int) -> Callable[[], Migrations]:
        def work() -> Migrations:
            migrations = Migrations()
            for n in range(targets):
                for fmt in ("openai-chat", "anthropic-messages"):
                    info = target(n, fmt)
                    for scenario in range(SCENARIOS):
                        migrations.add(record(info, scenario))
            return migrations

        return work

    small, _ = held(added(10))
    large, _ = held(added(40))
    pairs = 30 * 2 * SCENARIOS
    assert (large - small) / pairs < 100, f"{(large - small) / pairs:.0f} bytes a target and scenario"


def test_a_report_of_more_targets_holds_what_their_summaries_hold() -> None:
    """The report of four times the targets (each showing the same): what it holds at its peak
    grows by what a target adds to the summary and the capability grid (its check shares and
    cells, here spread over only 10 scenarios: about 4 KB a run), not by a copy of each run (run
    summaries go to the spool on disk) nor by a counter for each check of each run (18 KB a
    run when the migrations kept one)."""

    def stream(targets: int) -> Iterator[RunRecord]:
        for n in range(targets):
            for fmt in ("openai-chat", "anthropic-messages"):
                info = target(n, fmt)
                for scenario in range(SCENARIOS):
                    yield record(info, scenario)

    _, few = held(lambda: build(stream(3), "2025-01-01T00:00:00+00:00", spool=True))
    _, many = held(lambda: build(stream(12), "2025-01-01T00:00:00+00:00", spool=True))
    runs = (12 - 3) * 2 * SCENARIOS
    assert (many - few) / runs < 6000, f"{(many - few) / runs:.0f} bytes a run"
