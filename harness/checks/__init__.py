"""Checks: small functions registered by id; each reads a finished run and returns findings.

A check returns no finding when it does not apply to the run, one passed
finding when all is well, or failed findings saying what went wrong. Its
result is ``pass``, ``warn`` (a failed warning), ``fail`` (a failed error) or
``n/a``; scores weigh check results, see :mod:`harness.scoring`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.errors import UnknownNameError
from harness.model import Finding, Transcript
from harness.scenarios import Scenario

Status = Literal["pass", "warn", "fail", "n/a"]
Kind = Literal["protocol", "expectation"]


@dataclass(frozen=True)
class RunContext:
    """What a check may read: the run, its scenario, and how the target was driven."""

    transcript: Transcript
    scenario: Scenario
    protocol: str | None = None  # the prompted text protocol, None in native mode
    native_tool_choice: bool = True  # False when the endpoint does not honour the scenario's tool_choice
    cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)  # shared by checks


CheckFn = Callable[[RunContext], list[Finding]]


@dataclass(frozen=True)
class Check:
    id: str
    kind: Kind
    weight: float
    doc: str
    fn: CheckFn


@dataclass
class CheckResult:
    id: str
    kind: Kind
    weight: float
    findings: list[Finding] = field(default_factory=list)

    @property
    def status(self) -> Status:
        return status_of(self.findings)


def status_of(findings: list[Finding]) -> Status:
    if not findings:
        return "n/a"
    failed = {f.severity for f in findings if not f.passed}
    if "error" in failed:
        return "fail"
    if "warning" in failed:
        return "warn"
    return "pass"


CHECKS: dict[str, Check] = {}


def check(check_id: str, *, kind: Kind, weight: float = 1.0) -> Callable[[CheckFn], CheckFn]:
    """Register a check; its docstring says what it catches and why it matters."""

    def register(fn: CheckFn) -> CheckFn:
        CHECKS[check_id] = Check(check_id, kind, weight, (fn.__doc__ or "").strip(), fn)
        return fn

    return register


def get_check(check_id: str) -> Check:
    load_all()
    try:
        return CHECKS[check_id]
    except KeyError:
        raise UnknownNameError("check", check_id, CHECKS) from None


def load_all() -> None:
    from harness.checks import expectations, protocol  # noqa: F401  (registration)


def run_checks(context: RunContext) -> list[CheckResult]:
    """Every registered check over one run, in registration order."""
    load_all()
    results = []
    for item in CHECKS.values():
        findings = item.fn(context)
        for finding in findings:
            if not finding.check_id.startswith(("wire.", "transport.", "loop.", "mcp.")):
                finding.check_id = item.id
        results.append(CheckResult(item.id, item.kind, item.weight, findings))
    return results


def passed(check_id: str, detail: str) -> Finding:
    """A passed finding (``check_id`` may be empty: :func:`run_checks` fills it in)."""
    return Finding(check_id, "info", True, detail)
