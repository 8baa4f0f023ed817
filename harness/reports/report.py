"""The typed report: what ``report.json`` holds, and the one object every writer, the gate, the
console and :attr:`harness.api.RunResult.report` read (by attribute).

Every type is a msgspec Struct named and shaped as report.json writes it, so the file is
encoded straight from the report, keys sorted (:func:`harness.reports.json_report.write`). Where
the keys are names (targets, categories, scenarios, check ids, capability columns), a section
is a ``dict`` of typed values. The sections come from where they are computed:
:mod:`harness.checks.scoring` (the summary), :mod:`harness.analysis.verify` (verification),
:mod:`harness.analysis.gate` (``xfail``), :mod:`harness.analysis.migration` (``migrations``);
the capability grid is typed here, at the report's boundary, from
:meth:`harness.analysis.capabilities.Grid.result`.

Example::

    report = harness.run("scenarios", ["sim-openai"]).report
    target = report.summary.targets["sim-openai"]
    print(target.score, target.interval, [run.scenario for run in report.runs if not run.passed])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from harness.analysis.gate import XFail
from harness.analysis.migration import MigrationGroup
from harness.analysis.verify import VerifiedEndpoint
from harness.checks.scoring import ErrorSummary, Summary
from harness.model import Usage
from harness.reports.safe import spooled


class Call(msgspec.Struct, array_like=True):
    """A call a run made: ``[name, arguments]`` in report.json."""

    name: str
    arguments: Any


class ReportFinding(msgspec.Struct):
    """A failed finding of a run (strings cut at the report's limit; see
    :func:`harness.reports.json_report.run_summary`)."""

    check_id: str
    severity: str
    passed: bool
    detail: str
    turn_index: int | None
    evidence: dict[str, Any] | None


class RequestEvidence(msgspec.Struct):
    method: str
    url: str
    body: Any


class ResponseEvidence(msgspec.Struct):
    status: int | None
    body: str | None


class ExchangeEvidence(msgspec.Struct):
    """The wire request and response of a turn a failed finding points at."""

    turn: int
    request: RequestEvidence
    response: ResponseEvidence


class RunSummary(msgspec.Struct):
    """What the report keeps of one run."""

    target: str
    scenario: str
    category: str
    repeat: int
    score: float | None
    passed: bool
    outcome: str
    error: ErrorSummary | None
    stop_reason: str | None
    turns: int
    calls: list[Call]
    usage: Usage
    recorded_latency_ms: list[int | float | None] | None  # None for a live run (its times vary)
    checks: dict[str, str]  # check id -> status
    findings: list[ReportFinding]
    exchanges: list[ExchangeEvidence]


class ModeRow(msgspec.Struct):
    """One target of a :class:`ModeGroup`: its score and what the tools cost in the prompt."""

    target: str
    mode: str
    score: float | None
    interval: list[float] | None
    tool_prompt_characters: int | None
    tool_prompt_estimated_tokens: int | None


class ModeGroup(msgspec.Struct):
    """Targets that differ only in how tools are delivered (native vs prompted), side by side."""

    format: str
    model: str
    simulated: bool
    targets: list[ModeRow]


class Note(msgspec.Struct):
    """An informational finding of a target (an unsupported feature, an endpoint quirk): its
    check id, how many runs had it, and one example."""

    id: str
    runs: int
    example: str


class CapabilityColumn(msgspec.Struct):
    id: str
    label: str
    group: str


class CapabilityCell(msgspec.Struct):
    """``yes``, ``no``, ``partial`` or ``untested``, why, and the runs that decided it."""

    value: str
    detail: str
    runs: list[str]


class CapabilityGrid(msgspec.Struct):
    """What each target was measured to do: columns in order, cells by target and column id."""

    columns: list[CapabilityColumn]
    targets: Mapping[str, dict[str, CapabilityCell]]  # a dict, or a spool (harness.reports.spool)


class Verification(msgspec.Struct):
    """Every endpoint verified against one reference target."""

    reference: str
    endpoints: list[VerifiedEndpoint]


class Baseline(msgspec.Struct):
    """What changed against a baseline (``harness run --baseline``)."""

    base: str
    tolerance: float
    regressions: list[str]
    lines: list[str]


class Report(msgspec.Struct, omit_defaults=True):
    """The report of a set of runs (:func:`harness.reports.json_report.build`). ``runs`` is a
    list, or a :class:`~harness.reports.spool.RunSpool` reading them from disk when the report
    was built to be written; ``xfail`` is there when the targets' expected failures were given
    (``None``: not written), ``baseline`` when a baseline was compared (``harness run
    --baseline``), ``migrations`` when some targets ran the same model on the same endpoint in
    several wire formats (or name each other with ``migrates_from``).

    Example::

        report = harness.run("scenarios", ["sim-openai"]).report
        print(report.summary.overall.score, len(report.runs), report.to_data()["schema"])
    """

    schema: str
    generated_at: str
    harness_version: str
    mode: str | list[str]
    simulated_note: str
    summary: Summary
    modes: list[ModeGroup]
    notes: dict[str, list[Note]]
    capabilities: CapabilityGrid
    verification: list[Verification]
    runs: Sequence[RunSummary]
    xfail: dict[str, XFail] | None = None
    baseline: Baseline | None = None
    migrations: list[MigrationGroup] = msgspec.field(default_factory=list)

    def to_data(self) -> dict[str, Any]:
        """The report as plain JSON data (dicts, lists, scalars; every run), as report.json
        holds it."""
        data: dict[str, Any] = msgspec.to_builtins(msgspec.structs.replace(self, runs=[]), enc_hook=spooled)
        data["runs"] = [msgspec.to_builtins(run) for run in self.runs]
        return data
