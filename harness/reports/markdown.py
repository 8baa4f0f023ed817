"""``report.md``: the target x category matrix, then what failed and why.

Text a provider sent (an error message, a finding's detail, a finish reason) and names a user
wrote appear as written and do nothing else: each is put on one line with the characters that
would make Markdown of it escaped (:func:`inline`), and every control character and lone
surrogate is written as its escape (:func:`harness.reports.safe.visible`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import chain
from pathlib import Path
from typing import Protocol

from harness.analysis.migration import Change, MigrationGroup, Verdict
from harness.analysis.verify import VerifiedEndpoint
from harness.checks.scoring import TargetSummary
from harness.records import RunRecord, TargetInfo
from harness.reports import write_redacted
from harness.reports.report import Note, Report, RunSummary
from harness.reports.safe import visible

_MARKUP = re.compile(r"[\\`\[\]<>|&]")
"""What makes Markdown of text on one line: an escape, a code span, a link or image, inline
HTML or an autolink, a table cell's end, a character reference."""


def inline(text: str, limit: int | None = None) -> str:
    """``text`` as one line of Markdown that shows it as written and nothing else: runs of white
    space (line ends too) as one space, control characters and lone surrogates as their escapes,
    cut at ``limit`` characters, and ``\\ ` [ ] < > | &`` escaped with a backslash (no link,
    image, HTML, code span or character reference, and no table cell ends in it)."""
    text = " ".join(visible(text).split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return _MARKUP.sub(r"\\\g<0>", text)


def cell(score: float | None) -> str:
    return "-" if score is None else f"{score:.0f}" if score == int(score) else f"{score:.1f}"


def target_label(name: str, info: TargetInfo) -> str:
    return f"{name} (simulated)" if info.simulated else name


SCORE_COLUMNS = ["success", "grade", "compliance", "pass@1", "runs"]
"""The columns after the categories: the headline first (a stacked table shows them first)."""

SCORE_NOTE = (
    "success: how often the model did what the scenario asks (every expectation held, no broken "
    "call), the mean over categories of the mean over scenarios, with its 95 % interval; grade 0-5 "
    "from it (none when most runs were in error); compliance: of the model turns that made calls, "
    "the share free of protocol and wire violations; pass@1: the share of tested runs that "
    "succeeded; runs: tested, and in error (never scored)."
)


class Scored(Protocol):
    """A figure with its interval: a target's, a category's, compliance, a mode row."""

    @property
    def score(self) -> float | None: ...

    @property
    def interval(self) -> list[float] | None: ...


def figure(found: Scored | None) -> str:
    """A share with its 95 % interval: ``57.1 (41-72)``; ``-`` when there is none."""
    if found is None or found.score is None:
        return "-"
    interval = found.interval
    if not interval:
        return cell(found.score)
    return f"{cell(found.score)} ({interval[0]:.0f}-{interval[1]:.0f})"


def runs_cell(target: TargetSummary) -> str:
    """``90``, or ``85 +5 error`` when some runs could not be tested."""
    errors = target.errors
    return f"{target.tested}" + (f" +{errors} error" if errors else "")


def matrix(report: Report) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the target x category table (shared by the CLI and markdown)."""
    targets = report.summary.targets
    categories = sorted({c for t in targets.values() for c in t.categories})
    header = ["target", "mode", "model", *categories, *SCORE_COLUMNS]
    rows = []
    for name, t in targets.items():
        info = t.info
        rows.append(
            [
                target_label(name, info),
                info.mode + (" stream" if info.stream else ""),
                info.model,
                *[figure(t.categories.get(c)) for c in categories],
                figure(t),
                "-" if t.grade is None else str(t.grade),
                figure(t.compliance),
                "-" if t.pass_at_1 is None else f"{100 * t.pass_at_1:.0f}%",
                runs_cell(t),
            ]
        )
    return header, rows


def matrix_width(header: list[str], rows: list[list[str]]) -> int:
    """Characters a boxed table of ``header`` and ``rows`` needs on one line, no cell cut (each
    cell as the console shows it, control characters escaped)."""
    return sum(max(len(visible(x)) for x in column) + 3 for column in zip(header, *rows, strict=True)) + 1


def stacked(header: list[str], rows: list[list[str]]) -> list[str]:
    """The matrix for a narrow terminal or log: one block per target, its name whole on its own
    line, then ``column value`` pairs wrapped under it (never a name cut into ambiguity)."""
    lines = []
    for row in rows:
        lines.append(row[0])
        named = list(zip(header, row, strict=True))
        tail = len(SCORE_COLUMNS)
        pairs = [f"{name} {value}" for name, value in named[-tail:] + named[1:-tail]]  # the headline first
        line = " "
        for pair in pairs:
            if len(line) + len(pair) + 3 > 78:
                lines.append(line.rstrip(" ·"))
                line = " "
            line += f" {pair} ·"
        lines.append(line.rstrip(" ·"))
    return lines


def endpoint_fault_lines(report: Report) -> list[str]:
    """One line per target whose endpoint failed runs (shared by the CLI and markdown): what the
    endpoint did, counted in runs, so a low score is not read as the model's."""
    lines = []
    for name, t in report.summary.targets.items():
        if t.endpoint_faults:
            counted = ", ".join(
                f"{what} in {n} run{'s' if n != 1 else ''}" for what, n in t.endpoint_faults.items()
            )
            lines.append(f"{target_label(name, t.info)}: {counted}")
    return lines


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table of plain-text cells (:func:`inline`)."""
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + [
        "| " + " | ".join(map(inline, row)) + " |" for row in rows
    ]


def _check_table(report: Report) -> list[str]:
    """Target x check: the share of applicable runs each check passed, so a check a target always
    fails is visible even where its category scores look fine."""
    targets = report.summary.targets
    ids = sorted({c for t in targets.values() for c in t.checks})
    rows = [
        [target_label(name, t.info), *[cell(s.passed if (s := t.checks.get(c)) else None) for c in ids]]
        for name, t in targets.items()
    ]
    return _table(["target", *[f"`{c}`" for c in ids]], rows) if ids else []


def _capability_table(report: Report) -> list[str]:
    grid = report.capabilities
    if not grid.columns:
        return []
    rows = [
        [name, *[found.value if (found := cells.get(c.id)) else "-" for c in grid.columns]]
        for name, cells in grid.targets.items()
    ]
    return _table(["target", *[c.label for c in grid.columns]], rows)


def _figures_table(report: Report) -> list[str]:
    rows = []
    for name, t in report.summary.targets.items():
        latency, tokens = t.latency_ms, t.tokens_per_run
        if latency or tokens:
            rows.append(
                [
                    target_label(name, t.info),
                    f"{latency.p50:.0f}" if latency else "-",
                    f"{latency.p95:.0f}" if latency else "-",
                    f"{tokens.input:.0f} / {tokens.output:.0f}" if tokens else "-",
                ]
            )
    header = ["target", "latency p50 (ms)", "latency p95 (ms)", "tokens per run (in / out)"]
    return _table(header, rows) if rows else []


def _first_failure(run: RunSummary) -> str:
    if run.error:
        return inline(f"error ({run.error.cause}): {run.error.message}", 160)
    failed = [f for f in run.findings if f.severity != "info"]
    if not failed:
        return "failed"
    first = failed[0]
    more = f" (+{len(failed) - 1} more)" if len(failed) > 1 else ""
    return f"`{first.check_id}`: {inline(first.detail, 150)}{more}"


FAILED_PER_TARGET = 5
"""Failed runs listed per target in report.md, lowest score first (the rest are counted; every
run is in report.html and report.json), so the summary stays small for any suite."""


def _failed_runs(runs: Iterable[RunSummary]) -> list[str]:
    """Per target, how many runs failed and the :data:`FAILED_PER_TARGET` lowest scores' lines:
    read a run at a time, keeping at most twice that many runs a target (not every failed run)."""
    counts: dict[str, int] = {}
    lowest: dict[str, list[tuple[float, str, int, RunSummary]]] = {}  # (score, scenario, order, run)
    for order, run in enumerate(runs):
        if run.passed:
            continue
        counts[run.target] = counts.get(run.target, 0) + 1
        shown = lowest.setdefault(run.target, [])
        shown.append((-1 if run.score is None else run.score, run.scenario, order, run))
        if len(shown) >= 2 * FAILED_PER_TARGET:
            shown.sort(key=lambda entry: entry[:3])
            del shown[FAILED_PER_TARGET:]
    lines = [f"## Failed runs ({sum(counts.values())})", ""]
    for target, failed in counts.items():
        lines += [f"### {inline(target)} ({failed} failed)", ""]
        lines += [
            f"- {inline(run.scenario)}{_repeat(run)}, score {cell(run.score)}: {_first_failure(run)}"
            for *_, run in sorted(lowest[target], key=lambda entry: entry[:3])[:FAILED_PER_TARGET]
        ]
        if failed > FAILED_PER_TARGET:
            lines.append(f"- and {failed - FAILED_PER_TARGET} more (lowest scores listed first)")
        lines.append("")
    if not counts:
        lines += ["None.", ""]
    lines += ["Every run's findings, evidence and wire exchanges: report.html and report.json.", ""]
    return lines


def _repeat(run: RunSummary) -> str:
    return f" (repeat {run.repeat})" if run.repeat else ""


def _render(report: Report) -> Iterator[str]:
    """The summary a person reads: scores, what the endpoints caused, per-check shares, the
    capability grid, latency and tokens, and one line per failed run. The full evidence of every
    run is in report.html and report.json."""
    overall = report.summary.overall
    yield from [
        "# Tool-calling conformance report",
        "",
        f"Mode: {report.mode} · {len(report.runs)} runs · {overall.targets} targets · "
        f"harness {report.harness_version} · generated {report.generated_at}",
        "",
    ]
    if overall.simulated_targets:
        yield from [f"> {report.simulated_note}", ""]
    header, rows = matrix(report)
    yield from ["## Scores (0-100)", "", *_table(header, rows), "", SCORE_NOTE, ""]
    faults = endpoint_fault_lines(report)
    if faults:
        yield from ["### Caused by the endpoint, not the model", ""] + [f"- {line}" for line in faults] + [""]
    baseline = report.baseline
    if baseline:
        yield from [f"## Against the baseline {baseline.base}", ""]
        yield from [f"- {inline(line, 200)}" for line in baseline.lines] or ["No change."]
        yield ""
    for title, table in (
        ("## Checks: share of applicable runs passed (%)", _check_table(report)),
        ("## Capabilities, measured from the runs", _capability_table(report)),
        ("## Latency and tokens", _figures_table(report)),
    ):
        if table:
            yield from [title, "", *table, ""]
    for group in report.verification:
        yield from ["## Verification: the same model on other endpoints", ""]
        yield from verification_lines(group.reference, group.endpoints)
        yield from ["", "The runs behind each figure: report.html (Verification) and report.json.", ""]
    yield from _failed_runs(report.runs)
    if report.modes:
        yield from [
            "## Native vs prompted tool calling",
            "",
            "Tool prompt: what the tool definitions cost in the request, as JSON declarations "
            "(native) or as the text protocol's system prompt (prompted); tokens estimated at "
            "4 characters each.",
            "",
        ]
        for mode_group in report.modes:
            sim = " (simulated)" if mode_group.simulated else ""
            yield from [
                f"**{mode_group.model}** over {mode_group.format}{sim}",
                "",
                "| target | mode | success | tool prompt (chars) | tool prompt (~tokens) |",
                "|---|---|---|---|---|",
            ]
            yield from [
                f"| {inline(r.target)} | {r.mode} | {figure(r)} | "
                f"{r.tool_prompt_characters} | {r.tool_prompt_estimated_tokens} |"
                for r in mode_group.targets
            ]
            yield ""
    yield from _migration_lines(report.migrations)
    if report.notes:
        yield from ["## Notes: unsupported features, endpoint quirks, informational findings", ""]
        yield from _note_lines(report.notes)
        yield ""


def render(report: Report) -> str:
    """The summary a person reads (see :func:`_render`), as one text."""
    return "\n".join(_render(report))


SHARED_NOTE = 3
"""A note (its id and example) that this many targets share is listed once for all of them."""
NAMED_TARGETS = 4
"""The targets sharing a note are named up to this many (counted beyond)."""


def _note_lines(notes: dict[str, list[Note]]) -> list[str]:
    """Each target's notes; a note several targets share word for word (an MCP server's tool
    annotations, a scenario's tool name mapped) once, with the targets counted."""
    shared = Counter((item.id, item.example) for items in notes.values() for item in items)
    common = {key for key, count in shared.items() if count >= SHARED_NOTE}
    lines = []
    if common:
        lines.append("- **several targets**")
        for key in sorted(common):
            runs = {t: i.runs for t, items in notes.items() for i in items if (i.id, i.example) == key}
            named = f" ({inline(', '.join(runs))})" if len(runs) <= NAMED_TARGETS else ""
            lines.append(
                f"  - `{key[0]}` on {len(runs)} targets{named}, {sum(runs.values())} run(s), "
                f"e.g. {inline(key[1], 120)}"
            )
    for target, items in notes.items():
        own = [item for item in items if (item.id, item.example) not in common]
        if own:
            lines.append(f"- **{inline(target)}**")
            lines += [
                f"  - `{item.id}` in {item.runs} run(s), e.g. {inline(item.example, 120)}" for item in own
            ]
    return lines


MIGRATION_NOTE = (
    "Targets that run the same model on the same endpoint (same stream setting and mode) in "
    "other wire formats, or that name the one they replace with migrates_from: what changes for "
    "an agent that switches between them. Each difference names its check, the status on each "
    "target and who caused it (the model, or the endpoint: how it serves the wire); a check that "
    "passed on one wire and did not apply on another is not a difference by itself. A target whose "
    "provider runs the MCP servers (hosted MCP) sits beside the target of its wire that runs them in "
    "the harness's own loop."
)
DIFFERENCES_PER_GROUP = 5
"""Scenarios that differ listed per migration group in report.md (the rest are counted; every one
is in report.html and report.json)."""


def group_title(group: MigrationGroup) -> str:
    """``gemma3-270m at local:gemma3-270m@llama-server, streaming``: what the group's targets
    share (a group joined by ``migrates_from`` may not share a model or an endpoint)."""
    title = f"{group.model or 'several models'} at {group.endpoint or 'several endpoints'}"
    if group.stream is not None:
        title += ", streaming" if group.stream else ", not streaming"
    if group.mode not in (None, "native"):
        title += f", {group.mode}"
    return title


def noise_text(group: MigrationGroup) -> str:
    """Whether the success figures tell the group's targets apart, never a ranking they do not
    support."""
    if not group.apart:
        return (
            "The success figures cannot tell these wires apart: every difference between them is "
            "within the 95 % noise."
        )
    told = "; ".join(
        f"{s.second} against {s.first}: {s.change:+.1f} points ({s.interval[0]:+.1f} to {s.interval[1]:+.1f})"
        for s in group.apart
    )
    pairs = len(group.targets) * (len(group.targets) - 1) // 2
    rest = "" if len(group.apart) == pairs else " The other pairs are within the noise."
    return f"Told apart by the success figures (95 % interval of the difference): {told}.{rest}"


def verdict_why(verdict: Verdict) -> str:
    """Who caused a verdict that is no pass, and what shows it: ``model: expected a call``."""
    if verdict.cause is None:
        return ""
    return f"{verdict.cause}: {verdict.detail}" if verdict.detail else verdict.cause


def verdicts_text(verdicts: dict[str, Verdict], limit: int = 150) -> str:
    """Targets grouped by status, each verdict that is no pass naming who caused it and the
    finding that shows it: ``pass on a, b; fail on c (model: expected a call to 'get_weather')``."""
    by_status: dict[str, list[str]] = {}
    for name, verdict in verdicts.items():
        why = verdict_why(verdict)
        by_status.setdefault(verdict.status, []).append(
            inline(name) + (f" ({inline(why, limit)})" if why else "")
        )
    return "; ".join(f"{status} on {', '.join(names)}" for status, names in by_status.items())


def change_text(change: Change) -> str:
    """``protocol.wire warn on t, caused by the endpoint (wire.x), in 79 scenarios``."""
    found = f" ({', '.join(change.findings)})" if change.findings else ""
    return (
        f"{change.check} {change.status} on {change.target}, caused by the {change.cause}{found}, in "
        f"{change.scenarios} scenario{'s' if change.scenarios != 1 else ''}"
    )


def _migration_lines(groups: list[MigrationGroup]) -> list[str]:
    if not groups:
        return []
    lines = ["## Switching wires: the same model in other wire formats", "", MIGRATION_NOTE, ""]
    for group in groups:
        labels = [
            " (simulated)" if group.simulated else "",
            " (joined by migrates_from)" if group.declared else "",
        ]
        lines += [f"### {inline(group_title(group))}{''.join(labels)}", ""]
        served = group.model is None or group.endpoint is None
        header = [
            "target",
            "wire",
            *(["model", "endpoint"] if served else []),
            "success",
            "compliance",
            "runs",
        ]
        rows = [
            [
                row.target,
                row.wire,
                *([row.model, row.endpoint or "-"] if served else []),
                figure(row),
                figure(row.compliance),
                f"{row.tested}" + (f" +{row.errors} error" if row.errors else ""),
            ]
            for row in group.targets
        ]
        lines += [*_table(header, rows), "", noise_text(group), ""]
        if not group.differences:
            lines += [f"No scenario differs between them ({group.compared} compared).", ""]
            continue
        lines += [
            f"What changes, in the {len(group.differences)} of {group.compared} scenarios that differ:",
            "",
        ]
        lines += [
            f"- {inline(change_text(change))}"
            + (f"; e.g. {inline(change.example, 150)}" if change.example else "")
            for change in group.changes
        ]
        lines += ["", "Scenario by scenario:", ""]
        for found in group.differences[:DIFFERENCES_PER_GROUP]:
            where = f"`{inline(found.scenario)}` ({inline(found.category)})"
            lines.append(f"- {where}, outcome: {verdicts_text(found.outcome)}")
            lines += [f"  - `{inline(c.check)}`: {verdicts_text(c.targets)}" for c in found.checks]
        more = len(group.differences) - DIFFERENCES_PER_GROUP
        if more > 0:
            lines.append(f"- and {more} more: report.html (Switching wires) and report.json (`migrations`)")
        lines.append("")
    return lines


STEP_SUMMARY_LIMIT = 1024 * 1024 - 1024
"""GitHub caps a step summary at 1 MiB; ours stays under it."""


def step_summary(report: Report, out_dir: str) -> str:
    """The compact summary for ``$GITHUB_STEP_SUMMARY``: scores, what the endpoints caused, the
    baseline's changes and where the full reports are."""
    header, rows = matrix(report)
    failing = sum(1 for r in report.runs if not r.passed)
    lines = [
        "### Tool-calling conformance",
        "",
        *_table(header, rows),
        "",
        f"{len(report.runs)} runs, {failing} failed.",
        "",
    ]
    lines += [f"- caused by the endpoint, not the model: {line}" for line in endpoint_fault_lines(report)]
    for group in report.verification:
        lines += ["", *verification_lines(group.reference, group.endpoints)]
    baseline = report.baseline
    if baseline:
        changes = baseline.lines
        lines += ["", f"**Against the baseline {baseline.base}:** {len(changes)} change(s)", ""]
        lines += [f"- {inline(line, 200)}" for line in changes[:50]]
        if len(changes) > 50:
            lines.append(f"- ... {len(changes) - 50} more in report.md")
    lines += ["", f"Full reports: `{out_dir}/report.html`, `report.md`, `report.json`, `junit.xml`.", ""]
    text = visible("\n".join(lines))
    return text if len(text.encode()) < STEP_SUMMARY_LIMIT else text[: STEP_SUMMARY_LIMIT // 4]


def write(report: Report, records: Iterable[RunRecord], out_dir: Path) -> Path:
    """report.md, written a line at a time (:func:`render`'s text, its lines never all held)."""
    lines = _render(report)
    first = next(lines, "")
    return write_redacted(out_dir / "report.md", chain([first], ("\n" + line for line in lines)))


def percent(value: float | None) -> str:
    """A share as a percentage with one decimal (``-`` when undefined)."""
    return "-" if value is None else f"{100 * value:.1f}%"


def verification_lines(reference: str, endpoints: Iterable[VerifiedEndpoint]) -> list[str]:
    """The verification table (``harness verify``, and the reports' verification section): one
    row per endpoint against ``reference``, then each endpoint's thresholds and verdicts."""
    lines = [
        f"Verified against **{reference}** (pairs: requests identical on both sides; F1 of "
        '"ended in tool calls"; errors: invalid JSON / unknown tool / schema mismatch of the '
        "requests with calls)",
        "",
        "| endpoint | pairs | TP/FP/FN/TN | precision | recall | F1 | tool-call errors | arguments agree | "
        "answered | finish reasons | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    endpoints = list(endpoints)
    for e in endpoints:
        t, errors = e.trigger, e.tool_call_errors
        reasons = inline(", ".join(f"{k} {v}" for k, v in e.finish_reasons.items())) or "-"
        lines.append(
            f"| {inline(e.endpoint)} | {e.pairs} | {t.tp}/{t.fp}/{t.fn}/{t.tn} | "
            f"{percent(t.precision)} | {percent(t.recall)} | {percent(t.f1)} | "
            f"{errors.invalid_json}/{errors.unknown_tool}/{errors.schema_mismatch} of "
            f"{errors.requests_with_calls} | "
            f"{percent(e.argument_agreement)} ({e.argument_pairs} pairs) | "
            f"{percent(e.answered)} | {reasons} | **{e.verdict}** |"
        )
    lines.append("")
    for e in endpoints:
        why = "; ".join(
            f"{name} {verdict} (interval {_span(e.intervals[name])}, threshold {percent(e.thresholds[name])})"
            for name, verdict in e.verdicts.items()
        )
        lines.append(f"- {inline(e.endpoint)}: {why}")
    return lines


def _span(span: list[float] | None) -> str:
    return "-" if not span else f"{percent(span[0])}-{percent(span[1])}"
