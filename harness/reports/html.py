"""``report.html``: the page people read, built from the report and the records.

The page is the summary (scores, capabilities, checks, wires, latency, notes, run counts); each
run's detail (error, findings, the full transcript) is in ``report-files/`` beside it and loaded
when the run is opened, so the page's size and load time do not grow with the runs. The folder
opens from disk, on a CI artifact page or offline, and makes no network request: the page loads
its files with ``<script>`` elements (which a ``file://`` page may load, unlike ``fetch``); a
run's detail is gzip-compressed JSON, decoded in the browser by ``DecompressionStream``
(https://developer.mozilla.org/en-US/docs/Web/API/DecompressionStream).

- ``report-files/runs-<n>.js``: the runs of the n-th target (in name order, as the page's
  target filter lists them), one row each, and the runs behind its capability cells;
- ``report-files/detail-<n>.js``: the detail of a few hundred runs, HTML rendered by Jinja2
  (:func:`read_details` reads them back);
- ``report-files/wires-<n>.js``: the n-th migration group's differences, scenario by scenario;
- ``report-files/verify-<n>.js``: the runs behind each endpoint's figures in the n-th verification.

Everything a provider sent is untrusted: page and detail are rendered by Jinja2 with autoescaping
on, so a response body holding ``<script>`` shows as text; a control character or a lone
surrogate shows as its escape (``\\x1b``, ``\\ud83d``), and data nested past a depth limit is
elided, saying so (:mod:`harness.reports.safe`). The scores come from the report (the same
numbers as report.json); the full transcripts come from the records, since the report keeps only
the exchanges its findings point at.
"""

from __future__ import annotations

import base64
import gzip
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import Any

import msgspec
from jinja2 import Environment, PackageLoader, StrictUndefined, Template
from markupsafe import Markup

from harness import secrets
from harness.analysis.migration import MigrationGroup, Verdict
from harness.checks.scoring import CheckShare, TargetSummary
from harness.history.facts import Rows
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
from harness.reports.safe import bounded, strings_mapped, visible
from harness.reports.spool import KeyedSpool
from harness.results import Key, select

BODY_LIMIT = 6000
"""Characters of a wire body shown before it is cut (a run's detail stays quick to open)."""

FILES = "report-files"
"""The folder beside report.html holding what the page loads on demand."""

CHUNK_CHARS = 500_000
"""Characters of run detail (before compression) per ``detail-<n>.js``: opening a run loads
one such file, a fraction of a second whatever the suite."""

CHUNK_RUNS = 250
"""Runs per ``detail-<n>.js`` at most."""

_OURS = re.compile(r"(runs|detail|wires|verify)-\d+\.js")

BAR_WIDTH = 420
BAR_HEIGHT = 22
LABEL_WIDTH = 300


@dataclass(frozen=True)
class Section:
    """An extra summary section of the page (a trend panel, say), shown after the scores and
    linked from the page's navigation: its element id, its heading, and its body as markup (made
    by an autoescaping template or :func:`markupsafe.escape`: never provider text as it came)."""

    id: str
    title: str
    body: Markup


def write(
    report: Report, records: Iterable[RunRecord], out_dir: Path, sections: Sequence[Section] = ()
) -> Path:
    """Write ``report.html`` in ``out_dir`` and its runs in ``out_dir/report-files/`` (secrets
    redacted like every other report), a run at a time: neither the page nor the detail of a
    large run is ever held whole in memory. Files of an earlier page in that folder are removed."""
    files = out_dir / FILES
    files.mkdir(parents=True, exist_ok=True)
    for stale in files.iterdir():
        if _OURS.fullmatch(stale.name):
            stale.unlink()
    index = RunIndex(report)
    chunks = _Chunks(files)
    grouped = isinstance(report.summary.targets, KeyedSpool)  # built over a results file: a target at a time
    last: str | None = None
    for item in run_views(report.runs, records):
        run = item["run"]
        if grouped and last is not None and run.target != last:  # the last target's runs are all added
            _runs_file(files, index, last)
        last = run.target
        index.add(run, chunks.add(item["id"], _fragment("run.html.j2").render(item=item)))
    chunks.close()
    for name in list(index.rows):
        _runs_file(files, index, name)
    page = view(report, index, sections)
    for number, item in enumerate(page["migrations"]):
        _script(files / f"wires-{number}.js", f"wires-{number}", _fragment("wires.html.j2").render(item=item))
    for number, group in enumerate(report.verification):
        _script(files / f"verify-{number}.js", f"verify-{number}", [e.runs for e in group.endpoints])
    return write_redacted(out_dir / "report.html", _template().generate(page=page))


def _runs_file(files: Path, index: RunIndex, name: str) -> None:
    number = index.number[name]
    _script(files / f"runs-{number}.js", f"runs-{number}", index.file(name))


def render(report: Report, sections: Sequence[Section] = ()) -> str:
    """The page as text, without its runs' files (every control character and lone surrogate
    written as its escape, as :func:`write` writes them)."""
    index = RunIndex(report)
    for run in report.runs:
        index.add(run, -1)
    return visible(_template().render(page=view(report, index, sections)))


def render_run(run: RunSummary, record: RunRecord | None) -> str:
    """A run's detail as the page shows it when the run is opened (``record`` gives its
    transcript)."""
    (item,) = run_views([run], [record] if record else [])
    return _text(_fragment("run.html.j2").render(item=item))


def wire_table(group: MigrationGroup) -> str:
    """A migration group's differences, scenario by scenario, as the page shows them when opened."""
    return _text(_fragment("wires.html.j2").render(item=migration_view(group)))


def read_details(folder: Path) -> dict[str, str]:
    """The detail of every run in ``folder`` (a ``report-files/``), by the run's element id, as
    the page decodes it: to search the runs' detail, or to read it without a browser."""
    found: dict[str, str] = {}
    for path in sorted(folder.glob("detail-*.js")):
        payload = json.loads(path.read_text(encoding="ascii").split(", ", 1)[1].rstrip(");\n"))
        found.update(json.loads(gzip.decompress(base64.b64decode(payload))))
    return found


class RunIndex:
    """What the page shows of the runs without opening one (counts per target, the filters'
    choices), and what each target's ``runs-<n>.js`` holds: a row per run (its summary line and
    the detail file holding the rest) and the runs behind each of its capability cells."""

    def __init__(self, report: Report) -> None:
        self.names = sorted(report.summary.targets)
        self.number = {name: n for n, name in enumerate(self.names)}
        self.rows: dict[str, list[list[Any]]] = {name: [] for name in self.names}  # of targets not written
        self.counts: dict[str, Counter[str]] = {name: Counter() for name in self.names}
        self.categories: set[str] = set()
        self.cells = report.capabilities.targets

    def add(self, run: RunSummary, chunk: int) -> None:
        if run.target not in self.number:  # not in the summary (a hand-made report): listed all the same
            self.number[run.target] = len(self.names)
            self.names.append(run.target)
            self.rows[run.target], self.counts[run.target] = [], Counter()
        if run.target not in self.rows:
            raise ValueError(
                f"a run of {run.target} after its runs file was written: runs go a target at a time"
            )
        passed_clean = clean(run)
        row = [
            run.scenario,
            run.repeat,
            run.category,
            run.outcome,
            cell(run.score),
            run.turns,
            chunk,
            passed_clean,
        ]
        self.rows[run.target].append(row)
        self.counts[run.target].update([run.outcome, "clean" if passed_clean else "runs"])
        self.categories.add(run.category)

    @property
    def outcomes(self) -> list[str]:
        return sorted({o for c in self.counts.values() for o in c} - {"clean", "runs"})

    @property
    def total(self) -> int:
        return sum(c["clean"] + c["runs"] for c in self.counts.values())

    def table(self) -> list[dict[str, Any]]:
        """Per target: its number, runs, runs of each outcome, clean passes."""
        return [
            {
                "name": name,
                "number": self.number[name],
                "runs": self.counts[name]["clean"] + self.counts[name]["runs"],
                "outcomes": [self.counts[name][o] for o in self.outcomes],
                "clean": self.counts[name]["clean"],
            }
            for name in self.names
        ]

    def file(self, name: str) -> dict[str, Any]:
        """Target ``name``'s ``runs-<n>.js`` data, its runs all added (its rows are then forgotten):
        a capability cell's runs as the numbers of their rows (a run of another target, were there
        one, by its name)."""
        rows = self.rows.pop(name)
        number = {f"{name}/{scenario}/{repeat}": n for n, (scenario, repeat, *_) in enumerate(rows)}
        cells = {
            column: [number.get(run, run) for run in c.runs]
            for column, c in self.cells.get(name, {}).items()
            if c.runs
        }
        return {"target": name, "runs": rows, "cells": cells}


class _Chunks:
    """The runs' detail, written a ``detail-<n>.js`` at a time."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.number = 0
        self.pending: dict[str, str] = {}
        self.size = 0

    def add(self, run_id: str, detail: str) -> int:
        """Keep a run's detail; returns the number of the file it goes in."""
        if self.pending and (self.size + len(detail) > CHUNK_CHARS or len(self.pending) >= CHUNK_RUNS):
            self.close()
        self.pending[_text(run_id)] = _text(detail)
        self.size += len(detail)
        return self.number

    def close(self) -> None:
        if not self.pending:
            return
        data = json.dumps(self.pending, ensure_ascii=False, separators=(",", ":")).encode()
        packed = base64.b64encode(gzip.compress(data, compresslevel=6, mtime=0)).decode("ascii")
        _loaded(self.folder / f"detail-{self.number}.js", f"detail-{self.number}", packed)  # cleaned in add
        self.number += 1
        self.pending, self.size = {}, 0


def _text(text: str) -> str:
    """``text`` as a report may hold it: secrets redacted, invisible characters written as their
    escapes."""
    return visible(secrets.redact(text))


def _shown(value: Any) -> Any:
    """``value`` with every string :func:`_text`."""
    return strings_mapped(value, _text)


def _script(path: Path, name: str, data: Any) -> None:
    """A file the page loads: a call handing it ``data`` (every string :func:`_text`)."""
    _loaded(path, name, _shown(data))


def _loaded(path: Path, name: str, data: Any) -> None:
    """A file the page loads: a call handing it ``data`` as it is (ASCII JSON, a JavaScript
    literal)."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    path.write_text(f"harnessReport.loaded({json.dumps(name)}, {text});\n", encoding="ascii")


def _environment() -> Environment:
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
    return env


@cache
def _template() -> Template:
    """The page template, autoescaped: provider text must never become markup (compiled once:
    compiling costs more than rendering a small report)."""
    return _environment().get_template("report.html.j2")


@cache
def _fragment(name: str) -> Template:
    """The template of a part of the page loaded on demand, autoescaped like the page."""
    return _environment().get_template(name)


def element_text(value: Any) -> Markup:
    """Text for element content (``<pre>``): ``&``, ``<`` and ``>`` escaped, quotes kept as they
    are. Quotes only matter inside attribute values, and JSON bodies are full of them: escaping
    each as ``&#34;`` would make the page a fifth larger. Never use it for an attribute."""
    text = str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return Markup(text)


def view(report: Report, index: RunIndex, sections: Sequence[Section] = ()) -> dict[str, Any]:
    """Everything the template shows, computed here so the template only lays it out."""
    targets = report.summary.targets
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
        "sections": list(sections),
        "numbers": index.number,
        "runs": {"total": index.total, "outcomes": index.outcomes, "targets": index.table(), "files": FILES},
        "filters": {
            "targets": index.names,
            "categories": sorted(index.categories),
            "outcomes": index.outcomes,
        },
    }


def anchor(target: str, scenario: str, repeat: int) -> str:
    """The element id of a run, as the capability grid links to it."""
    return f"run-{target}/{scenario}/{repeat}"


def matrix(report: Report) -> dict[str, Any]:
    """The target x category table: each cell a score and the grade that colours it."""
    targets = report.summary.targets
    categories = sorted({c for t in targets.values() for c in t.categories})
    rows = Rows(partial(_matrix_rows, targets, categories))
    return {"categories": categories, "rows": rows, "note": SCORE_NOTE}


def _matrix_rows(targets: Mapping[str, TargetSummary], categories: list[str]) -> Iterator[dict[str, Any]]:
    for name, t in targets.items():
        cells = []
        for category in categories:
            found = t.categories.get(category)
            cells.append({"score": figure(found), "grade": found.grade if found else None})
        yield {
            "name": name,
            "info": t.info,
            "cells": cells,
            "score": figure(t),
            "grade": t.grade,
            "compliance": figure(t.compliance),
            "pass_at_1": "-" if t.pass_at_1 is None else f"{100 * t.pass_at_1:.0f}%",
            "runs": runs_cell(t),
        }


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
    return {
        "group": group,
        "title": group_title(group),
        "noise": noise_text(group),
        "served": group.model is None or group.endpoint is None,
        "changes": [(change_text(c), c.example) for c in group.changes],
        "rows": Rows(partial(_difference_rows, group)),
    }


def _difference_rows(group: MigrationGroup) -> Iterator[dict[str, Any]]:
    names = [row.target for row in group.targets]
    for found in group.differences:
        lines = [("outcome", found.outcome), *((c.check, c.targets) for c in found.checks)]
        for index, (check, verdicts) in enumerate(lines):
            cells = [
                _verdict_cell(verdicts[n], anchor(n, found.scenario, 0)) if n in verdicts else None
                for n in names
            ]
            yield {
                "scenario": found.scenario,
                "first": index == 0,
                "span": len(lines),
                "check": check,
                "cells": cells,
            }


def _verdict_cell(verdict: Verdict, link: str) -> dict[str, Any]:
    first = verdict.status.split(" ", 1)[0].rstrip(",")
    return {
        "status": verdict.status,
        "kind": first.replace("/", ""),
        "why": verdict_why(verdict),
        "link": link,
    }


def check_heatmap(targets: Mapping[str, TargetSummary]) -> dict[str, Any]:
    """Per target and check id: the share of tested runs that passed it, as the report's summary
    counted it (:meth:`harness.checks.scoring.Scores.summary`)."""
    checks = sorted({c for t in targets.values() for c in t.checks})
    return {"checks": checks, "rows": Rows(partial(_heatmap_rows, targets, checks))}


def _heatmap_rows(targets: Mapping[str, TargetSummary], checks: list[str]) -> Iterator[dict[str, Any]]:
    for name, t in targets.items():
        yield {"name": name, "cells": [_heat_cell(t.checks.get(check)) for check in checks]}


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


def performance(targets: Mapping[str, TargetSummary]) -> list[dict[str, Any]]:
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
        "request": _cut(_dumps_bounded(body, indent=1)),  # bounded by transcript_view already
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
    """``value`` as JSON text. Indented, it is encoded by the standard library's C encoder and
    indented by msgspec (the standard encoder's own indenting is pure Python, the most of a
    report's writing time), the same text; what msgspec cannot read back (``NaN``, a lone
    surrogate) is indented by the standard encoder."""
    return _dumps_bounded(bounded(value), indent)


def _dumps_bounded(data: Any, indent: int | None = None) -> str:
    """:func:`_dumps` of what :func:`~harness.reports.safe.bounded` gave already (a request body
    is bounded once, to be compared with the one before it, not walked again)."""
    if indent:
        try:
            return msgspec.json.format(json.dumps(data, ensure_ascii=False, default=str), indent=indent)
        except (msgspec.DecodeError, UnicodeEncodeError):
            pass
    return json.dumps(data, indent=indent, ensure_ascii=False, default=str)


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
