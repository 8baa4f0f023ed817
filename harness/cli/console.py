"""What the ``harness`` command prints: a console sized for terminals and CI logs, the score
table (stacked when it does not fit), and the notes beside it."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.reports.report import Report
    from harness.targets import Target


def console(stderr: bool = False) -> Any:
    """A rich console as wide as the terminal; in CI logs and pipes as wide as ``COLUMNS`` says
    (200 when unset, so listings are not squeezed). The score table is printed stacked when it
    does not fit, never with names cut. Every string it prints, a table's cells too, has its
    control characters and lone surrogates written as escapes (``\\x1b``, ``\\ud83d``;
    :func:`harness.reports.safe.visible`): text a provider sent never reaches the terminal as an
    ANSI sequence, nor stops the print."""
    console_class = _safe_console()
    shown = console_class(stderr=stderr, highlight=False)
    if not shown.is_terminal:
        width = os.environ.get("COLUMNS", "")
        shown = console_class(stderr=stderr, highlight=False, width=int(width) if width.isdigit() else 200)
    return shown


@cache
def _safe_console() -> type:
    """rich's Console, every string it renders made visible first (rich passes ESC through as it
    is, and a lone surrogate would stop the print)."""
    from rich.console import Console

    from harness.reports.safe import visible

    class SafeConsole(Console):
        def render_str(self, text: str, **options: Any) -> Any:
            return super().render_str(visible(text), **options)

    return SafeConsole


def warn_unmatched_xfail(chosen: list[Target], scenario_ids: set[str]) -> None:
    """A scenario id in ``xfail`` that matches no scenario of the run is most likely misspelt."""
    from fnmatch import fnmatchcase

    for target in chosen:
        for pattern in target.xfail:
            if not any(fnmatchcase(s, pattern) for s in scenario_ids):
                console(stderr=True).print(
                    escape(
                        f"warning: xfail {pattern!r} of target {target.name} matches no scenario of this run"
                    ),
                    soft_wrap=True,
                )


def print_expectations(report: Report) -> None:
    """How many runs were expected failures (xfail) and how many passed anyway (xpass)."""
    from harness.analysis.gate import expectation_counts

    if not report.xfail:
        return
    counts = expectation_counts(report)
    strict = f" ({counts['xpass_strict']} strict: failing the gate)" if counts["xpass_strict"] else ""
    summary = f"{counts['xfail']} xfail, {counts['xpass']} xpass{strict}"
    console().print(f"expected failures (xfail in harness.toml): {summary}", markup=False)


def row(table: Any, *cells: str) -> None:
    """A table row of user text (names, descriptions), brackets shown as written."""
    table.add_row(*map(escape, cells))


def escape(text: str) -> str:
    """User text for a rich console: brackets kept as they are (``[targets.x]``, ``.[local]``)."""
    from rich.markup import escape

    return escape(text)


def github_step_summary(report: Report, out: Path) -> None:
    """Under GitHub Actions, append the compact summary to the job's step summary."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        from harness import secrets
        from harness.reports.markdown import step_summary

        with open(path, "a", encoding="utf-8") as handle:
            handle.write(secrets.redact(step_summary(report, str(out))) + "\n")


def print_table(report: Report) -> None:
    from rich.table import Table

    from harness.reports.markdown import endpoint_fault_lines, matrix, matrix_width, stacked

    header, rows = matrix(report)
    out = console()
    if matrix_width(header, rows) > out.width:  # narrow: one block per target, no name cut
        out.print("Tool-calling conformance (0-100)", markup=False)
        for line in stacked(header, rows):
            out.print(line, markup=False, soft_wrap=True)
    else:
        table = Table(title="Tool-calling conformance (0-100)", title_justify="left")
        for name in header:
            table.add_column(name, justify="left" if name in ("target", "mode", "model") else "right")
        for cells in rows:
            row(table, *cells)
        out.print(table)
    for line in endpoint_fault_lines(report):
        out.print(f"caused by the endpoint, not the model: {line}", markup=False)
    if report.summary.overall.simulated_targets:
        out.print(f"[dim]{report.simulated_note}[/dim]", markup=True)
    print_expectations(report)
