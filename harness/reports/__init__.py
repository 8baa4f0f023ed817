"""Reports, built only from run records (so ``harness report`` can rebuild any of them).

Writers are registered by name in :data:`harness.registry.WRITERS`;
:func:`write_reports` builds the report once and writes it in each format.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.records import RunRecord

Writer = Callable[[dict[str, Any], list[RunRecord], Path], Path]
DEFAULT_WRITERS = ("json", "markdown", "junit")


def writer(name: str) -> Writer:
    """The report writer registered as ``name``."""
    from harness.registry import WRITERS

    fn: Writer = WRITERS.get(name)
    return fn


def write_reports(
    records: list[RunRecord],
    out_dir: Path,
    names: tuple[str, ...] = DEFAULT_WRITERS,
    generated_at: str | None = None,
) -> tuple[dict[str, Any], list[Path]]:
    """Build the report once and write it in each format; returns it and the written paths."""
    from harness.reports.json_report import build

    report = build(records, generated_at)
    return report, write_built(report, records, out_dir, names)


def write_built(
    report: dict[str, Any], records: list[RunRecord], out_dir: Path, names: tuple[str, ...] = DEFAULT_WRITERS
) -> list[Path]:
    """Write an already built report in each format; returns the written paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    return [writer(name)(report, records, out_dir) for name in names]


EXIT_CODES = {
    0: "every run was tested and the gate passed",
    1: "the gate failed: a target scored below --min-score, or a run failed with --strict",
    2: "bad input: a scenario, tool set, harness.toml or option is invalid",
    3: "a cassette is missing, unreadable or incomplete, or the requests drifted from it "
    "(replay never goes live)",
    4: "the harness could not test some runs: no response, an endpoint unavailable after retries, "
    "a refused key",
    130: "interrupted (Ctrl-C): the reports describe the runs that finished",
}
"""The documented exit codes of ``harness run`` / ``record`` (and ``audit``, with ``--fail-on``)."""


def gate(
    report: dict[str, Any],
    records: list[RunRecord],
    *,
    min_score: float | None = None,
    strict: bool = False,
) -> tuple[int, str]:
    """The exit code of a run and why (see :data:`EXIT_CODES`): cassette errors first, then any
    other run that could not be tested, then the score gate."""
    errors = [r for r in records if r.outcome == "error" and r.error is not None]
    cassette = [r for r in errors if r.error and r.error.cause == "cassette"]
    if cassette:
        return 3, f"{len(cassette)} run(s) with cassette errors: see above; replay never goes live"
    if errors:
        names = ", ".join(f"{r.target.name}/{r.scenario}" for r in errors[:10])
        return 4, f"{len(errors)} run(s) could not be tested (error, never scored): {names}"
    if min_score is not None:
        low = {
            n: t["score"]
            for n, t in report["summary"]["targets"].items()
            if t["score"] is None or t["score"] < min_score
        }
        if low:
            return 1, f"below --min-score {min_score}: {low}"
    failed = [f"{r.target.name}/{r.scenario}" for r in records if r.outcome == "fail"]
    if strict and failed:
        return 1, f"{len(failed)} run(s) failed (--strict): {', '.join(failed[:10])}"
    return 0, ""
