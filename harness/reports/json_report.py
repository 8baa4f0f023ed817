"""``report.json``: scores, per-run summaries and findings, deterministic for a replay.

In a replay, apart from ``generated_at`` nothing in it depends on when or how
fast the harness ran: latencies are the ones recorded in the cassettes (a live
run's summary aggregates the latencies it measured), and wall-clock times of
the run itself are left out (they live in the results file).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from harness import secrets
from harness._version import __version__
from harness.analysis.capabilities import Grid, columns
from harness.analysis.gate import GatePolicy, XFail, expect_failure
from harness.analysis.migration import Migrations, ScenarioDifference
from harness.checks.scoring import ErrorSummary, Scores, Summary, TargetSummary, overall, record_score
from harness.model import Exchange, Finding
from harness.records import RunRecord, to_builtins
from harness.reports.report import (
    Call,
    CapabilityCell,
    CapabilityColumn,
    CapabilityGrid,
    ExchangeEvidence,
    ModeGroup,
    ModeRow,
    Note,
    Report,
    ReportFinding,
    RequestEvidence,
    ResponseEvidence,
    RunSummary,
    Verification,
)
from harness.reports.safe import DEPTH_LIMIT, bounded, elided, encodable, encode
from harness.reports.spool import KeyedSpool, RunSpool, Spool
from harness.results import RecordLog, select

SCHEMA = "harness.report/1"
EVIDENCE_LIMIT = 4000
SIMULATED_NOTE = (
    "Targets marked simulated talk to the harness's reference simulator, not to a model: "
    "their scores show the harness works, never how a provider or model performs."
)


def _clip(value: Any, limit: int | None = EVIDENCE_LIMIT, depth: int = 0) -> Any:
    """JSON data as the report keeps it: strings cut at ``limit`` characters (so the report stays
    readable) and :func:`~harness.reports.safe.encodable` (keys too), anything nested deeper than
    :data:`~harness.reports.safe.DEPTH_LIMIT` elided (so every writer can walk it). ``depth`` is
    how deep ``value`` sits in the run summary."""
    if isinstance(value, str):
        if limit is not None and len(value) > limit:
            value = value[:limit] + f"... [{len(value)} chars]"
        return encodable(value)
    if isinstance(value, dict | list) and depth == DEPTH_LIMIT:
        return elided(value)
    if isinstance(value, dict):
        return {
            encodable(k) if isinstance(k, str) else k: _clip(v, limit, depth + 1) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_clip(v, limit, depth + 1) for v in value]
    return value


def _finding(finding: Finding) -> ReportFinding:
    """A failed finding as the report keeps it (:func:`_clip`; its evidence bounded before it is
    converted, since the converter walks it whole)."""
    evidence = finding.evidence
    return ReportFinding(
        check_id=_clip(finding.check_id),
        severity=_clip(finding.severity),
        passed=finding.passed,
        detail=_clip(finding.detail),
        turn_index=finding.turn_index,
        evidence=None if evidence is None else _clip(to_builtins(bounded(evidence)), depth=1),
    )


def _error(record: RunRecord) -> ErrorSummary | None:
    error = record.error
    if error is None:
        return None
    return ErrorSummary(encodable(error.kind), encodable(error.cause), encodable(error.message))


def run_summary(record: RunRecord) -> RunSummary:
    """What the report keeps of one run."""
    exchanges = record.transcript.exchanges
    findings = [_finding(f) for f in record.findings() if not f.passed]
    return RunSummary(
        target=record.target.name,
        scenario=record.scenario,
        category=record.category,
        repeat=record.repeat,
        score=record_score(record),
        passed=record.passed,
        outcome=record.outcome,
        error=_error(record),
        stop_reason=record.transcript.stop_reason,
        turns=len(exchanges),
        calls=[
            Call(encodable(c.name), _clip(c.arguments, None, 1))
            for e in exchanges
            for c in e.parsed.tool_calls
        ],
        usage=record.usage,
        recorded_latency_ms=[e.elapsed_ms for e in exchanges] if record.mode != "live" else None,
        checks={c.id: c.status for c in record.checks},
        findings=findings,
        # a passing run's warnings are listed, its wire evidence stays in the results file: the
        # report grows with what failed
        exchanges=_evidence(exchanges, findings) if record.outcome != "pass" else [],
    )


def _evidence(exchanges: list[Exchange], findings: list[ReportFinding]) -> list[ExchangeEvidence]:
    """The wire request and response of every turn a failed finding points at (a run that did not
    pass: a passing run's are in the results file)."""
    turns = {f.turn_index for f in findings if f.severity != "info" and f.turn_index is not None}
    return [
        ExchangeEvidence(
            exchange.turn,
            RequestEvidence(
                _clip(exchange.request.method),
                _clip(exchange.request.url),
                _clip(exchange.request.body, depth=2),
            ),
            ResponseEvidence(
                exchange.response.status if exchange.response else None,
                _clip(exchange.response.body, depth=2) if exchange.response else None,
            ),
        )
        for exchange in exchanges
        if exchange.turn in turns
    ]


def _note(found: dict[str, dict[str, Note]], record: RunRecord) -> None:
    seen = {
        f.check_id: encodable(f.detail) for f in record.findings() if not f.passed and f.severity == "info"
    }
    for check_id, detail in seen.items():
        entry = found.setdefault(record.target.name, {}).setdefault(check_id, Note(check_id, 0, detail))
        entry.runs += 1


def _notes(found: dict[str, dict[str, Note]]) -> dict[str, list[Note]]:
    return {target: [items[k] for k in sorted(items)] for target, items in sorted(found.items())}


class _Prompts:
    """Per target, what the tool definitions cost in the prompt, summed over its runs."""

    def __init__(self) -> None:
        self.groups: dict[tuple[Any, ...], list[str]] = {}
        self.sizes: dict[str, list[int]] = {}  # name -> [characters, tokens, runs]
        self.modes: dict[str, str] = {}  # name -> how its tools are delivered

    def add(self, record: RunRecord) -> None:
        info = record.target
        self.modes[info.name] = info.mode
        key = (info.format, info.model, info.profile, info.simulated)
        if info.name not in self.groups.setdefault(key, []):
            self.groups[key].append(info.name)
        if record.tool_prompt is not None:
            size = self.sizes.setdefault(info.name, [0, 0, 0])
            size[0] += record.tool_prompt.characters
            size[1] += record.tool_prompt.estimated_tokens
            size[2] += 1

    def comparison(self, summary: Summary) -> list[ModeGroup]:
        """Targets that differ only in how tools are delivered (native vs each prompted protocol):
        their scores side by side with the mean size of what the tools cost in the prompt."""
        targets = summary.targets
        comparison = []
        for (fmt, model, _, simulated), names in sorted(self.groups.items()):
            if len({self.modes[n] for n in names}) < 2:  # read from the summary only when shown
                continue
            rows = []
            for name in sorted(names, key=lambda n: (self.modes[n] != "native", n)):
                characters, tokens, runs = self.sizes.get(name, (0, 0, 0))
                target = targets[name]
                rows.append(
                    ModeRow(
                        target=name,
                        mode=target.info.mode,
                        score=target.score,
                        interval=target.interval,
                        tool_prompt_characters=round(characters / runs) if runs else None,
                        tool_prompt_estimated_tokens=round(tokens / runs) if runs else None,
                    )
                )
            comparison.append(ModeGroup(fmt, model, simulated, rows))
        return comparison


def build(
    records: Iterable[RunRecord],
    generated_at: str | None = None,
    policies: Mapping[str, GatePolicy] | None = None,
    *,
    spool: bool = False,
) -> Report:
    """The report of a set of run records (what report.json holds; the other writers read it),
    with the runs each target of ``policies`` expects to fail (``report.xfail``).

    One pass over the records, each section adding what it needs of each record as it comes
    (:class:`~harness.checks.scoring.Scores`, :class:`~harness.analysis.capabilities.Grid`, ...):
    no transcript outlives its record. With ``spool`` (a report built to be written, as the command line and
    :func:`harness.reports.write_reports` build it), the per-run summaries go to a
    :class:`~harness.reports.spool.RunSpool` on disk (and each migration group's differences to
    a :class:`~harness.reports.spool.Spool`), so the report of any number of runs fits in memory;
    without it they are lists. Only targets verified against a reference are read
    again, for the verification."""
    # over a results file, a target's runs come one after another: each target's sections are
    # spooled as soon as its runs are all added, and forgotten
    by_target = spool and isinstance(records, RecordLog)
    targets: MutableMapping[str, TargetSummary] = KeyedSpool(TargetSummary) if by_target else {}
    cells: MutableMapping[str, dict[str, CapabilityCell]] = (
        KeyedSpool(dict[str, CapabilityCell]) if by_target else {}
    )
    current: str | None = None
    modes: set[str] = set()
    scores = Scores()
    grid = Grid()
    found: dict[str, dict[str, Note]] = {}
    prompts = _Prompts()
    migrations = Migrations()
    runs: RunSpool | list[RunSummary] = RunSpool() if spool else []
    references: dict[str, str] = {}  # target -> the reference it declares
    xfail: dict[str, XFail] = {}
    for record in records:
        if by_target and record.target.name != current:
            if current is not None:
                _take(current, scores, grid, targets, cells)
            current = record.target.name
        modes.add(record.mode)
        scores.add(record)
        grid.add(record)
        _note(found, record)
        prompts.add(record)
        migrations.add(record)
        runs.append(run_summary(record))
        if record.target.reference and record.error is None:
            references[record.target.name] = record.target.reference
        if policies is not None:
            expect_failure(xfail, record, policies)
    for name in sorted(scores.targets):  # the last target's, or every target's (the grid has the same)
        _take(name, scores, grid, targets, cells)
    summary = Summary(targets, overall(targets))
    ordered = sorted(modes)
    involved = {*references, *references.values()}
    return Report(
        schema=SCHEMA,
        generated_at=generated_at or datetime.now(UTC).isoformat(timespec="seconds"),
        harness_version=__version__,
        mode=ordered[0] if len(ordered) == 1 else ordered,
        simulated_note=SIMULATED_NOTE,
        summary=summary,
        modes=prompts.comparison(summary),
        notes=_notes(found),
        capabilities=CapabilityGrid(msgspec.convert(columns(), list[CapabilityColumn]), cells),
        verification=verifications(select(records, lambda key: key[0] in involved)) if involved else [],
        runs=runs,
        xfail={target: xfail[target] for target in sorted(xfail)} if policies is not None else None,
        migrations=migrations.groups(summary, partial(Spool, ScenarioDifference) if spool else list),
    )


def _take(
    name: str,
    scores: Scores,
    grid: Grid,
    targets: MutableMapping[str, TargetSummary],
    cells: MutableMapping[str, dict[str, CapabilityCell]],
) -> None:
    """Target ``name``'s summary and capability cells, its runs all added, moved into the report's
    sections (typed at the report's boundary)."""
    targets[name] = scores.take(name)
    cells[name] = msgspec.convert(grid.take(name), dict[str, CapabilityCell])


def verifications(records: Iterable[RunRecord]) -> list[Verification]:
    """Per reference, every target that declares it (``reference``) and ran beside it, judged
    against it (:mod:`harness.analysis.verify`); each figure lists the runs it rests on."""
    from harness.analysis.verify import RunRequests, verify_runs

    by_target: dict[str, list[RunRequests]] = {}  # what verification reads of each run, not the run
    declared: dict[str, str | None] = {}  # target -> the reference it declares (its first run's)
    for record in records:
        if record.error is None:
            by_target.setdefault(record.target.name, []).append(RunRequests.of(record))
            declared.setdefault(record.target.name, record.target.reference)
    groups: dict[str, list[str]] = {}
    for name, reference in declared.items():
        if reference and reference in by_target:
            groups.setdefault(reference, []).append(name)
    return [
        Verification(
            reference,
            [
                j.to_report()
                for j in verify_runs(by_target[reference], {n: by_target[n] for n in sorted(names)})
            ],
        )
        for reference, names in sorted(groups.items())
    ]


def write(report: Report, records: Iterable[RunRecord], out_dir: Path) -> Path:
    """``report.json``, keys sorted, indented by two, each run on one line of its own (compact:
    a report of many runs stays small and a line per run greps); the runs and spooled sections
    written one at a time (read from their spool one at a time, never all in memory), the rest
    (:func:`_write_formatted`) a part at a time. A lone surrogate anywhere is written as its escape
    text (:func:`~harness.reports.safe.encode`)."""
    path = out_dir / "report.json"
    with path.open("wb") as out:
        _write_struct(out, report, 0)
        out.write(b"\n")
    return path


def _write_struct(out: BinaryIO, value: msgspec.Struct, indent: int) -> None:
    """A report section formatted as :func:`_write_formatted` formats it, ``indent`` spaces in;
    its runs (one a line: :func:`_write_runs`), its spools and the sections holding one written a
    member at a time as they are read, never encoded whole."""
    runs = "runs" if isinstance(value, Report) else None  # the field written one run a line
    parts = {
        name: part
        for name, part in ((name, getattr(value, name)) for name in value.__struct_fields__)
        if name == runs
        or isinstance(part, KeyedSpool | Spool)
        or _holds_spool(part)
        or (isinstance(part, list) and any(map(_holds_spool, part)))
    }
    # written below a member at a time, not encoded here (a list stands in as one that is not
    # empty: a field that defaults to an empty list, ``migrations``, would be left out)
    emptied: dict[str, Any] = {
        name: {} if isinstance(part, KeyedSpool | msgspec.Struct) else [0] for name, part in parts.items()
    }
    head = msgspec.json.decode(encode(msgspec.structs.replace(value, **emptied), order="sorted"), type=_Parts)
    pad = b"\n" + b" " * indent
    out.write(b"{")
    for index, (key, member) in enumerate(head.items()):
        out.write(
            (b"," if index else b"") + pad + b"  " + secrets.redact_bytes(msgspec.json.encode(key)) + b": "
        )
        part = parts.get(key)
        if part is None:
            _write_formatted(out, member, indent + 2)
        elif isinstance(part, KeyedSpool):
            _write_members(out, ((k, encode(v, order="sorted")) for k, v in part.items()), indent + 2, b"{}")
        elif isinstance(part, msgspec.Struct):
            _write_struct(out, part, indent + 2)
        elif key == runs:
            _write_runs(out, part, indent + 2)
        else:  # a spool, or a list of sections holding one (the migration groups)
            _write_items(out, part, indent + 2)
    out.write(pad + b"}")


def _holds_spool(value: object) -> bool:
    """Whether ``value`` is a report section with a spool among its fields."""
    return isinstance(value, msgspec.Struct) and any(
        isinstance(getattr(value, name), KeyedSpool | Spool) for name in value.__struct_fields__
    )


def _write_items(out: BinaryIO, items: Sequence[Any], indent: int) -> None:
    """A list of report sections, one read and written at a time (a section holding a spool by
    :func:`_write_struct`)."""
    members = ((None, item if _holds_spool(item) else encode(item, order="sorted")) for item in items)
    _write_members(out, members, indent, b"[]")


_Parts = dict[str, msgspec.Raw]
_WHOLE = 1 << 16
"""JSON up to this size is formatted in one piece; a larger object or list a member at a time."""


def _write_formatted(out: BinaryIO, value: bytes | msgspec.Raw, indent: int) -> None:
    """Compact JSON ``data`` as ``msgspec.json.format(indent=2)`` writes it at ``indent`` spaces
    in, secrets redacted, without ever holding the whole of a large value formatted: a large
    object or list is written a member at a time (its members are views into ``data``)."""
    data = memoryview(value)
    first = bytes(data[:1])
    pad = b"\n" + b" " * indent
    if len(data) <= max(_WHOLE, 2) or first not in (b"{", b"["):  # 2: an empty one
        out.write(secrets.redact_bytes(msgspec.json.format(data, indent=2).replace(b"\n", pad)))
        return
    members: Any = msgspec.json.decode(data, type=_Parts if first == b"{" else list[msgspec.Raw])
    pairs = members.items() if isinstance(members, dict) else ((None, v) for v in members)
    _write_members(out, pairs, indent, b"{}" if isinstance(members, dict) else b"[]")


def _write_members(
    out: BinaryIO,
    pairs: Iterable[tuple[str | None, bytes | msgspec.Raw | msgspec.Struct]],
    indent: int,
    brackets: bytes,
) -> None:
    """An object's members (name and compact JSON) or a list's (no name), each formatted by
    :func:`_write_formatted` (a section holding a spool by :func:`_write_struct`), inside
    ``brackets`` (``{}`` or ``[]``; just those when there is none)."""
    pad = b"\n" + b" " * indent
    count = 0
    for count, (key, member) in enumerate(pairs, 1):
        out.write((b"," if count > 1 else brackets[:1]) + pad + b"  ")
        if key is not None:
            out.write(secrets.redact_bytes(msgspec.json.encode(key)) + b": ")
        if isinstance(member, msgspec.Struct):
            _write_struct(out, member, indent + 2)
        else:
            _write_formatted(out, member, indent + 2)
    out.write(pad + brackets[1:] if count else brackets)


def _write_runs(out: BinaryIO, runs: Sequence[RunSummary], indent: int) -> None:
    """The ``runs`` list of report.json, ``indent`` spaces in: ``[]``, or one run a line."""
    if not runs:
        out.write(b"[]")
        return
    pad = b"\n" + b" " * indent
    out.write(b"[")
    for index, run in enumerate(runs):
        out.write((b"," if index else b"") + pad + b"  " + secrets.redact_bytes(encode(run, order="sorted")))
    out.write(pad + b"]")
