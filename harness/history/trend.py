"""Trend panels for the HTML report: a target's headline and compliance over its runs in the
history, as an inline SVG drawn here (no script, no network, no chart library).

Every text that reaches the markup (target names, run ids, times) is escaped; numbers are
formatted by this module. Example::

    with History.open("reports/history.sqlite") as db:
        html = trend_section(db, ["local-gemma3-270m", "sim-openai"])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from harness.history.facts import RunFacts
from harness.history.store import History

WIDTH, HEIGHT, PAD = 360, 96, 8
SERIES = (("score", "headline", "#1f6feb"), ("compliance", "compliance", "#8250df"))
"""The figures drawn: the field of a run, its name in the legend, its colour."""


def _x(index: int, count: int) -> float:
    inner = WIDTH - 2 * PAD
    return PAD + (inner / 2 if count == 1 else inner * index / (count - 1))


def _y(value: float) -> float:
    return PAD + (HEIGHT - 2 * PAD) * (1 - max(0.0, min(100.0, value)) / 100)


def trend_svg(rows: Sequence[Mapping[str, Any]], title: str = "") -> str:
    """An inline SVG of ``rows`` (a target's runs, oldest first, each with ``run_id``,
    ``started``, ``score`` and ``compliance`` in 0-100 or ``None``): a line per figure over a 0-100
    scale, a dot per run with its figures as a tooltip. A run without a figure leaves a gap."""
    count = len(rows)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="trend" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title or "trend")}">',
        f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="none" stroke="#d0d7de"/>',
    ]
    for level in (0, 50, 100):
        y = _y(level)
        parts.append(
            f'<line x1="{PAD}" y1="{y:.1f}" x2="{WIDTH - PAD}" y2="{y:.1f}" stroke="#eaeef2" '
            'stroke-dasharray="2,3"/>'
        )
    for field, name, colour in SERIES:
        segments: list[list[str]] = [[]]
        for index, row in enumerate(rows):
            value = row.get(field)
            if value is None:
                segments.append([])
                continue
            segments[-1].append(f"{_x(index, count):.1f},{_y(float(value)):.1f}")
        for points in segments:
            if len(points) > 1:
                parts.append(
                    f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{" ".join(points)}"/>'
                )
        for index, row in enumerate(rows):
            value = row.get(field)
            if value is None:
                continue
            tip = f"{name} {float(value):g} in run {row.get('run_id', '')} ({row.get('started', '')})"
            parts.append(
                f'<circle cx="{_x(index, count):.1f}" cy="{_y(float(value)):.1f}" r="3" fill="{colour}">'
                f"<title>{escape(tip)}</title></circle>"
            )
    parts.append("</svg>")
    return "".join(parts)


def _with_current(rows: list[dict[str, Any]], target: str, current: RunFacts | None) -> list[dict[str, Any]]:
    """``rows`` with the target's row of the ``current`` run last, unless the history holds it."""
    if current is None or any(row["run_id"] == current.run["run_id"] for row in rows):
        return rows
    mine = [row for row in current.targets if row["target"] == target]
    return rows + [
        {**row, "run_id": current.run["run_id"], "started": current.run["started"]} for row in mine
    ]


def trend_section(db: History | None, targets: Sequence[str], current: RunFacts | None = None) -> str:
    """A block of safe HTML (report.html's *Trends* section) with one trend panel per target of
    ``targets`` that has at least two runs (its headline and compliance over its runs, the latest
    figures beside); ``""`` when none has. ``current``: the run being reported, drawn last when
    the history does not hold it yet (the report is written before the history is)."""
    panels = []
    for target in targets:
        rows = _with_current(db.target_runs(target) if db is not None else [], target, current)
        if len(rows) < 2:  # one run is no trend
            continue
        last = rows[-1]
        latest = " · ".join(
            f"{name} {last[field]:g}" for field, name, _ in SERIES if last.get(field) is not None
        )
        panels.append(
            f'<figure class="trend-panel"><figcaption><strong>{escape(target)}</strong>: '
            f"{len(rows)} run(s); latest {escape(latest or 'no figure')}</figcaption>"
            f"{trend_svg(rows, f'{target} over {len(rows)} run(s)')}</figure>"
        )
    if not panels:
        return ""
    legend = " ".join(
        f'<span style="color:{colour}">&#9632;</span> {escape(name)}' for _, name, colour in SERIES
    )
    return (
        '<div class="history-trends">'
        f'<p class="legend">{legend} (0-100, one dot per run in the history)</p>{"".join(panels)}</div>'
    )


def trend_html(history: str | Path | None, targets: Sequence[str], current: RunFacts | None = None) -> str:
    """:func:`trend_section` of the history at ``history`` (a path or URL) and the ``current``
    run; ``""`` without a history (``None``, none written yet, or one that cannot be read: a
    report never fails for its trends)."""
    if history is None:
        return ""
    try:
        with History.open(history, create=False) as db:
            return trend_section(db, targets, current)
    except Exception:  # no history yet, or one this harness cannot read: the report goes without it
        return ""
