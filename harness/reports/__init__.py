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


def gate(
    report: dict[str, Any],
    records: list[RunRecord],
    *,
    min_score: float | None = None,
    strict: bool = False,
) -> tuple[int, str]:
    """The exit code of a run and why: 3 when a cassette was missing or the requests drifted
    (replay never goes live), 1 when a target scores below ``min_score`` or, with
    ``strict``, when any run failed; 0 otherwise."""
    if any(r.error and r.error.kind.startswith("Cassette") for r in records):
        return 3, "cassette errors: see above; replay never goes live"
    if min_score is not None:
        low = {
            n: t["score"]
            for n, t in report["summary"]["targets"].items()
            if t["score"] is None or t["score"] < min_score
        }
        if low:
            return 1, f"below --min-score {min_score}: {low}"
    failed = [f"{r.target.name}/{r.scenario}" for r in records if not r.passed]
    if strict and failed:
        return 1, f"{len(failed)} run(s) failed (--strict): {', '.join(failed[:10])}"
    return 0, ""
