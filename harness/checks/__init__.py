"""Checks: small functions registered by id; each reads a finished run and returns findings.

A check returns no finding when it does not apply to the run, one passed
finding when all is well, or failed findings saying what went wrong. Its
result is ``pass``, ``warn`` (a failed warning), ``fail`` (a failed error) or
``n/a``; scores weigh check results, see :mod:`harness.checks.scoring`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.model import Finding, HostedServer, Transcript
from harness.providers.profiles import Profile
from harness.records import CheckResult, Kind
from harness.scenarios import Scenario


@dataclass(frozen=True)
class RunContext:
    """What a check may read: the run, its scenario, and how the target was driven."""

    transcript: Transcript
    scenario: Scenario
    protocol: str | None = None  # the prompted text protocol, None in native mode
    native_tool_choice: bool = True  # False when the endpoint does not honour the scenario's tool_choice
    profile: Profile | None = None  # the endpoint profile, whose documented quirks findings may name
    max_tokens: int | None = None  # the output token limit the harness's loop sent (None: not sent)
    hosted: tuple[HostedServer, ...] = ()  # the MCP servers handed to the provider's connector (hosted MCP)
    cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)  # shared by checks


CheckFn = Callable[[RunContext], list[Finding]]


@dataclass(frozen=True)
class Check:
    """A registered check: its id (from :data:`harness.registry.CHECKS`), kind, weight, what it
    catches (its docstring) and the function."""

    id: str
    kind: Kind
    weight: float
    doc: str
    fn: CheckFn


def check(*, kind: Kind, weight: float = 1.0) -> Callable[[CheckFn], CheckFn]:
    """Mark a function as a check of ``kind`` with ``weight``; its docstring says what it catches
    and why it matters. Its id is the name it is registered under in :data:`harness.registry.CHECKS`."""

    def mark(fn: CheckFn) -> CheckFn:
        fn.check_kind, fn.check_weight = kind, weight  # type: ignore[attr-defined]
        return fn

    return mark


_BUILT: dict[tuple[str, Any], Check] = {}


def get_check(check_id: str) -> Check:
    """The check registered as ``check_id`` (built once per registered function)."""
    from harness.registry import CHECKS

    fn = CHECKS.get(check_id)
    built = _BUILT.get((check_id, fn))
    if built is None:
        built = Check(check_id, fn.check_kind, fn.check_weight, (fn.__doc__ or "").strip(), fn)
        _BUILT[(check_id, fn)] = built
    return built


_ALL: tuple[int, list[Check]] = (-1, [])


def all_checks() -> list[Check]:
    """Every registered check, in the order they run (looked up again only after a check is
    registered)."""
    global _ALL
    from harness.registry import CHECKS

    if _ALL[0] != CHECKS.version:
        _ALL = (CHECKS.version, [get_check(name) for name in CHECKS.names()])
    return list(_ALL[1])


OWN_IDS = ("wire.", "transport.", "loop.", "mcp.", "agent.")
"""Finding ids that keep their own name under a check (wire deviations, retries, loops, MCP issues)."""


def run_checks(context: RunContext) -> list[CheckResult]:
    """Every registered check over one run, in registration order.

    When the endpoint never put the tools in front of the model, what the model did with them was
    never tested: every expectation that applies is *not reached* (shown, not scored), and the
    run is failed by ``protocol.tools_delivered``, which names the endpoint.

    A scenario with follow-ups has one expectation per phase: expectation checks run on each
    phase (its turns, under its own ``expect``) and their findings are named by phase; a phase
    the run never reached has its expectations *not reached*."""
    from harness.checks.attribution import not_reached, tools_withheld

    withheld = tools_withheld(context)
    phases = phase_contexts(context)
    results = []
    for item in all_checks():
        if item.kind == "expectation" and len(phases) > 1:
            findings = [f for phase in phases for f in _phase_findings(item, phase)]
        else:
            findings = item.fn(context)
        findings = [f if f.check_id.startswith(OWN_IDS) else f.as_check(item.id) for f in findings]
        if withheld and item.kind == "expectation" and findings:
            findings = [not_reached(withheld).as_check(item.id)]
        results.append(CheckResult.of(item.id, item.kind, item.weight, findings))
    return results


Phase = tuple[str, RunContext, str | None]
"""A phase's label (``""`` for the opening, ``"follow-up 1"`` ...), its context, and why it was
not reached (None when it was)."""


def phase_contexts(context: RunContext) -> list[Phase]:
    """The run's phases: the opening request and each follow-up, each seen on its own."""
    scenario, transcript = context.scenario, context.transcript
    if not scenario.follow_ups:
        return [("", context, None)]
    phases: list[Phase] = []
    for index in range(len(scenario.follow_ups) + 1):
        view = transcript.phase(index)
        missed = None
        if view is None:
            missed = f"the conversation ended ({transcript.stop_reason}) before follow-up {index}"
            view = dataclasses.replace(transcript, exchanges=[], executions=[], findings=[], phases=[])
        label = f"follow-up {index}" if index else "opening"
        phases.append(
            (
                label,
                dataclasses.replace(context, transcript=view, scenario=scenario.phase(index), cache={}),
                missed,
            )
        )
    return phases


def _phase_findings(item: Check, phase: Phase) -> list[Finding]:
    from harness.checks.attribution import not_reached

    label, context, missed = phase
    findings = item.fn(context)
    if missed is not None and findings:
        findings = [not_reached(missed)]
    return [dataclasses.replace(f, detail=f"{label}: {f.detail}") for f in findings]


def with_quirk(context: RunContext, finding: Finding) -> Finding:
    """``finding``, naming the endpoint profile's documented quirk that explains it, if one does."""
    profile = context.profile
    quirk = next((q for q in profile.quirks if q.explains == finding.check_id), None) if profile else None
    if quirk is None or profile is None:
        return finding
    return dataclasses.replace(
        finding, detail=f"{finding.detail} (the documented quirk {quirk.id!r} of profile {profile.name!r})"
    )


def passed(check_id: str, detail: str) -> Finding:
    """A passed finding (``check_id`` may be empty: :func:`run_checks` fills it in)."""
    return Finding(check_id, "info", True, detail)
