"""Reports, built only from run records (so ``harness report`` can rebuild any of them).

Writers are registered by name in :data:`harness.registry.WRITERS`;
:func:`write_reports` builds the typed report (:class:`harness.reports.report.Report`) once and
writes it in each format. The gate that reads the report is :mod:`harness.analysis.gate`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import secrets
from harness.records import RunRecord
from harness.reports.safe import visible

if TYPE_CHECKING:
    from harness.reports.html import Section
    from harness.reports.report import Report

Writer = Callable[["Report", Iterable[RunRecord], Path], Path]
DEFAULT_WRITERS = ("json", "markdown", "html", "junit")


def writer(name: str) -> Writer:
    """The report writer registered as ``name``."""
    from harness.registry import WRITERS

    fn: Writer = WRITERS.get(name)
    return fn


def write_reports(
    records: Iterable[RunRecord],
    out_dir: Path,
    names: tuple[str, ...] = DEFAULT_WRITERS,
    generated_at: str | None = None,
) -> tuple[Report, list[Path]]:
    """Build the report once and write it in each format; returns it and the written paths."""
    from harness.reports.json_report import build

    report = build(records, generated_at, spool=True)
    return report, write_built(report, records, out_dir, names)


def write_built(
    report: Report,
    records: Iterable[RunRecord],
    out_dir: Path,
    names: tuple[str, ...] = DEFAULT_WRITERS,
    sections: Sequence[Section] = (),
) -> list[Path]:
    """Write an already built report in each format; returns the written paths. ``sections``:
    extra summary sections of report.html (the run history's trends), not drawn from the records."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name in names:
        fn: Any = writer(name)  # the html writer also takes the summary's extra sections
        extra = (sections,) if sections and name == "html" else ()
        written.append(fn(report, records, out_dir, *extra))
    return written


def write_redacted(path: Path, pieces: Iterable[str]) -> Path:
    """Write a report's text a piece at a time, every known secret redacted from each piece (a
    secret is always inside one piece: a value the template or tree puts out whole) and every
    character no report can hold as it is (a control character, a lone surrogate) written as its
    escape (:func:`harness.reports.safe.visible`)."""
    with path.open("w", encoding="utf-8") as out:
        for piece in pieces:
            out.write(visible(secrets.redact(piece)))
    return path
