"""``report.html``: one self-contained page people read, built from the report and the records.

Everything is in the one file (CSS, a little JavaScript, SVG charts), so it opens from disk, on
a CI artifact page or offline, and makes no network request. Everything a provider sent is
untrusted: the page is rendered by Jinja2 with autoescaping on, so a response body holding
``<script>`` shows as text; a control character or a lone surrogate shows as its escape
(``\\x1b``, ``\\ud83d``), and data nested past a depth limit is elided, saying so
(:mod:`harness.reports.safe`). The scores come from the report (the same numbers as
report.json); the full transcripts come from the records, since the report keeps only the
exchanges its findings point at.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, Template
from markupsafe import Markup

from harness.analysis.migration import MigrationGroup, Verdict
from harness.checks.scoring import CheckShare, TargetSummary
from harness.model import Exchange, ProviderError
from harness.records import RunRecord
from harness.reports import write_redacted
from harness.reports.markdown import (
    MIGRATION_NOTE,
    SCORE_NOTE,
    cell,
    change_text,
    figure,
    group_title,
    noise_text,
    percent,
    runs_cell,
    verdict_why,
)
from harness.reports.report import CapabilityGrid, Report, ReportFinding, RunSummary
from harness.reports.safe import bounded, visible
from harness.results import Key, select

BODY_LIMIT = 6000
"""Characters of a wire body shown before it is cut (the page stays small enough to open)."""

BAR_WIDTH = 420
BAR_HEIGHT = 22
LABEL_WIDTH = 300


def write(report: Report, records: Iterable[RunRecord], out_dir: Path) -> Path:
    """Write ``report.html`` in ``out_dir`` (secrets redacted like every other report), a piece
    at a time: the page of a large run is never held whole in memory."""
    return write_redacted(out_dir / "report.html", _template().generate(page=view(report, records)))


def render(report: Report, records: Iterable[RunRecord]) -> str:
    """The page as text (every control character and lone surrogate written as its escape, as
    :func:`write` writes them)."""
    return visible(_template().render(page=view(report, records)))


@cache
def _template() -> Template:
    """The page template, autoescaped: provider text must never become markup (compiled once:
    compiling costs more than rendering a small report)."""
    env = Environment(
        loader=PackageLoader("harness.reports", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["element_text"] = element_text
    env.filters["score"] = cell
    env.filters["figure"] = figure
    env.filters["share"] = percent
    return env.get_template("report.html.j2")


def element_text(value: Any) -> Markup:
    """Text for element content (``<pre>``): ``&``, ``<`` and ``>`` escaped, quotes kept as they
    are. Quotes only matter inside attribute values, and JSON bodies are full of them: escaping
    each as ``&#34;`` would make the page a fifth larger. Never use it for an attribute."""
    text = str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return Markup(text)


def view(report: Report, records: Iterable[RunRecord]) -> dict[str, Any]:
    """Everything the template shows, computed here so the template only lays it out."""
    targets = report.summary.targets
    runs = report.runs
    return {
        "report": report,
        "simulated": sorted(n for n, t in targets.items() if t.info.simulated),
        "matrix": matrix(report),
        "chart": score_chart(report),
        "heatmap": check_heatmap(targets),
        "capabilities": report.capabilities,
        "capability_groups": capability_groups(report.capabilities),
        "performance": performance(targets),
        "faults": [(n, t.endpoint_faults) for n, t in targets.items() if t.endpoint_faults],
        "migrations": [migration_view(group) for group in report.migrations],
        "migration_note": MIGRATION_NOTE,
        "runs": run_views(runs, records),
        "filters": {
            "targets": sorted(targets),
            "categories": sorted({r.category for r in runs}),
            "outcomes": sorted({r.outcome for r in runs}),
        },
    }


def anchor(target: str, scenario: str, repeat: int) -> str:
    """The element id of a run, as the capability grid links to it."""
    return f"run-{target}/{scenario}/{repeat}"


def matrix(report: Report) -> dict[str, Any]:
    """The target x category table: each cell a score and the grade that colours it."""
    targets = report.summary.targets
    categories = sorted({c for t in targets.values() for c in t.categories})
    rows = []
    for name, t in targets.items():
        cells = []
        for category in categories:
            found = t.categories.get(category)
            cells.append({"score": figure(found), "grade": found.grade if found else None})
        rows.append(
            {
                "name": name,
                "info": t.info,
                "cells": cells,
                "score": figure(t),
                "grade": t.grade,
                "compliance": figure(t.compliance),
                "pass_at_1": "-" if t.pass_at_1 is None else f"{100 * t.pass_at_1:.0f}%",
                "runs": runs_cell(t),
            }
        )
    return {"categories": categories, "rows": rows, "note": SCORE_NOTE}


def score_chart(report: Report) -> dict[str, Any]:
    """Geometry of the horizontal bar chart of target scores (inline SVG)."""
    bars = []
    for index, (name, t) in enumerate(report.summary.targets.items()):
        score = t.score
        bars.append(
            {
                "name": name,
                "simulated": t.info.simulated,
                "score": figure(t),
                "y": index * (BAR_HEIGHT + 6),
                "width": 0 if score is None else round(BAR_WIDTH * score / 100, 1),
                "grade": t.grade,
            }
        )
    return {
        "bars": bars,
        "label_width": LABEL_WIDTH,
        "bar_width": BAR_WIDTH,
        "bar_height": BAR_HEIGHT,
        "width": LABEL_WIDTH + BAR_WIDTH + 60,
        "height": max(1, len(bars)) * (BAR_HEIGHT + 6),
    }


def migration_view(group: MigrationGroup) -> dict[str, Any]:
    """One migration group as the page lays it out: its title and noise sentence, and each
    difference as a row with one cell per target of the group (``None`` where it did not run the
    scenario), each linked to that target's run."""
    names = [row.target for row in group.targets]
    rows = []
    for found in group.differences:
        lines = [("outcome", found.outcome), *((c.check, c.targets) for c in found.checks)]
        for index, (check, verdicts) in enumerate(lines):
            cells = [
                _verdict_cell(verdicts[n], anchor(n, found.scenario, 0)) if n in verdicts else None
                for n in names
            ]
            rows.append(
                {
                    "scenario": found.scenario,
                    "first": index == 0,
                    "span": len(lines),
                    "check": check,
                    "cells": cells,
                }
            )
    return {
        "group": group,
        "title": group_title(group),
        "noise": noise_text(group),
        "served": group.model is None or group.endpoint is None,
        "changes": [(change_text(c), c.example) for c in group.changes],
        "rows": rows,
    }


def _verdict_cell(verdict: Verdict, link: str) -> dict[str, Any]:
    first = verdict.status.split(" ", 1)[0].rstrip(",")
    return {
        "status": verdict.status,
        "kind": first.replace("/", ""),
        "why": verdict_why(verdict),
        "link": link,
    }


def check_heatmap(targets: dict[str, TargetSummary]) -> dict[str, Any]:
    """Per target and check id: the share of tested runs that passed it, as the report's summary
    counted it (:meth:`harness.checks.scoring.Scores.summary`)."""
    checks = sorted({c for t in targets.values() for c in t.checks})
    rows = [
        {"name": name, "cells": [_heat_cell(t.checks.get(check)) for check in checks]}
        for name, t in targets.items()
    ]
    return {"checks": checks, "rows": rows}


def _heat_cell(share: CheckShare | None) -> dict[str, Any]:
    if share is None:
        return {"text": "·", "bucket": None, "title": "not applicable in any run"}
    warned = f", {share.warn} warn" if share.warn else ""
    title = f"{share.pass_} of {share.runs} runs pass{warned}"
    return {"text": f"{share.passed:.0f}", "bucket": math.floor(share.passed / 10), "title": title}


def capability_groups(grid: CapabilityGrid) -> list[dict[str, Any]]:
    """The grid's column groups in order, each with how many columns it spans."""
    groups: list[dict[str, Any]] = []
    for column in grid.columns:
        if groups and groups[-1]["name"] == column.group:
            groups[-1]["span"] += 1
        else:
            groups.append({"name": column.group, "span": 1})
    return groups


def performance(targets: dict[str, TargetSummary]) -> list[dict[str, Any]]:
    """Per target: latency per request (p50, p95) and tokens per run, as the report's summary
    aggregated them (:class:`harness.checks.scoring.Scores`), where the runs have them."""
    rows = []
    for name, target in targets.items():
        latency, tokens = target.latency_ms, target.tokens_per_run
        rows.append(
            {
                "name": name,
                "requests": latency.exchanges if latency else 0,
                "p50": _ms(latency.p50 if latency else None),
                "p95": _ms(latency.p95 if latency else None),
                "input_tokens": tokens.input if tokens else None,
                "output_tokens": tokens.output if tokens else None,
                "runs": tokens.runs if tokens else 0,
            }
        )
    return rows


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} ms"


def clean(run: RunSummary) -> bool:
    """A run that passed with no failed warning or error: nothing in its transcript needs reading."""
    return run.outcome == "pass" and all(f.severity == "info" for f in run.findings)


def run_views(runs: Iterable[RunSummary], records: Iterable[RunRecord]) -> Iterator[dict[str, Any]]:
    """Each run of the report, one at a time, with the full transcript from the matching record
    for every run that is not :func:`clean` (a clean run's exchanges are in results.jsonl and its
    cassette: the page of a large suite would otherwise be mostly passing transcripts); only
    those records are read, as the page reaches them."""
    shown = {(run.target, run.scenario, run.repeat) for run in runs if not clean(run)}
    find = _finder(select(records, shown.__contains__))
    for run in runs:
        passed_clean = clean(run)
        record = None if passed_clean else find((run.target, run.scenario, run.repeat))
        yield (
            {
                "run": run,
                "id": anchor(run.target, run.scenario, run.repeat),
                "score": cell(run.score),
                "findings": [_finding_view(f) for f in run.findings],
                "exchanges": transcript_view(record.transcript.exchanges) if record else [],
                "drift": run.error is not None and run.error.kind == "CassetteDriftError",
                "clean": passed_clean,
            }
        )


def _finder(records: Iterable[RunRecord]) -> Callable[[Key], RunRecord | None]:
    """Look records up by key, reading them in order as they are asked for (the report's runs and
    its records come in the same order; one asked for out of order is found all the same)."""
    remaining = iter(records)
    passed: dict[Key, RunRecord] = {}

    def find(key: Key) -> RunRecord | None:
        if key in passed:
            return passed.pop(key)
        for record in remaining:
            if record.key == key:
                return record
            passed[record.key] = record
        return None

    return find


def _finding_view(finding: ReportFinding) -> dict[str, Any]:
    evidence = finding.evidence
    return {
        "check_id": finding.check_id,
        "severity": finding.severity,
        "turn_index": finding.turn_index,
        "detail": finding.detail,
        "evidence_text": pretty(evidence) if evidence else None,
    }


def transcript_view(exchanges: list[Exchange]) -> list[dict[str, Any]]:
    """Every turn of a run; a later request shows only what it added to the one before (the
    tool declarations and the conversation so far are resent each turn, and would make the
    page many times larger without showing anything new)."""
    views = []
    previous: Any = None
    for exchange in exchanges:
        body = bounded(exchange.request.body)
        views.append(_exchange_view(exchange, elide_repeats(body, previous)))
        previous = body
    return views


def elide_repeats(body: Any, previous: Any) -> Any:
    """``body`` with each top-level value equal to the previous request's replaced by a marker,
    and a list that extends the previous one (the messages) starting with a marker for the part
    already shown."""
    if not isinstance(body, dict) or not isinstance(previous, dict):
        return body
    shown: dict[str, Any] = {}
    for key, value in body.items():
        before = previous.get(key)
        if key in previous and value == before and isinstance(value, dict | list):
            shown[key] = "<same as the previous request>"
        elif (
            isinstance(value, list) and isinstance(before, list) and before and value[: len(before)] == before
        ):
            shown[key] = [f"<{len(before)} earlier items, as in the previous request>", *value[len(before) :]]
        else:
            shown[key] = value
    return shown


def _exchange_view(exchange: Exchange, body: Any) -> dict[str, Any]:
    """One turn: the wire request (``body``, repeats elided) and response, pretty-printed and
    cut at :data:`BODY_LIMIT`."""
    response = exchange.response
    parsed = exchange.parsed
    return {
        "turn": exchange.turn,
        "method": exchange.request.method,
        "url": exchange.request.url,
        "request": pretty(body),
        "status": response.status if response is not None else None,
        "response": pretty_text(response.body) if response is not None else None,
        "calls": [f"{c.name}({_dumps(c.arguments)})" for c in parsed.tool_calls],
        "error": _error_text(parsed.error) if parsed.error else None,
        "elapsed": _ms(exchange.elapsed_ms),
    }


def _error_text(error: ProviderError) -> str:
    code = f" {error.code}" if error.code else ""
    return f"HTTP {error.status}{code}: {error.message or '(empty error message)'}"


def pretty(value: Any) -> str:
    """JSON data indented for reading, cut at :data:`BODY_LIMIT`; what is nested deeper than
    :data:`~harness.reports.safe.DEPTH_LIMIT` is elided, saying so."""
    return _cut(_dumps(value, indent=1))


def _dumps(value: Any, indent: int | None = None) -> str:
    return json.dumps(bounded(value), indent=indent, ensure_ascii=False, default=str)


def pretty_text(body: str) -> str:
    """A response body: indented when it is one JSON document, else as it came (SSE, NDJSON, or
    JSON nested deeper than Python's decoder goes, saying so)."""
    try:
        return pretty(json.loads(body))
    except ValueError:
        return _cut(body) if body else "(empty body)"
    except RecursionError:
        return "(JSON nested too deep to indent: shown as it came)\n" + _cut(body)


def _cut(text: str) -> str:
    return text if len(text) <= BODY_LIMIT else text[:BODY_LIMIT] + f"\n... [{len(text)} chars]"
