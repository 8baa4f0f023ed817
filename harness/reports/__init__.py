"""Reports, built only from result records (so ``harness report`` can rebuild any of them).

Writers are registered by name; :func:`write_reports` writes the chosen ones.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.errors import UnknownNameError

Writer = Callable[[dict[str, Any], list[dict[str, Any]], Path], Path]

WRITERS: dict[str, tuple[str, str]] = {
    "json": ("harness.reports.json_report", "write"),
    "markdown": ("harness.reports.markdown", "write"),
    "junit": ("harness.reports.junit", "write"),
}
DEFAULT_WRITERS = ("json", "markdown", "junit")


def writer(name: str) -> Writer:
    try:
        module, attribute = WRITERS[name]
    except KeyError:
        raise UnknownNameError("report format", name, WRITERS) from None
    fn: Writer = getattr(importlib.import_module(module), attribute)
    return fn


def write_reports(
    records: list[dict[str, Any]],
    out_dir: Path,
    names: tuple[str, ...] = DEFAULT_WRITERS,
    generated_at: str | None = None,
) -> tuple[dict[str, Any], list[Path]]:
    """Build the report once and write it in each format; returns it and the written paths."""
    from harness.reports.json_report import build

    out_dir.mkdir(parents=True, exist_ok=True)
    report = build(records, generated_at)
    return report, [writer(name)(report, records, out_dir) for name in names]
