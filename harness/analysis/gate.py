"""The gate: what CI's exit code says about a run (:data:`EXIT_CODES`), read from the report
(and a baseline's regressions); and the runs a target expects to fail (``xfail``), which every
writer and the gate read the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Literal, NamedTuple, Protocol

import msgspec

from harness.checks.scoring import ErrorSummary, Summary
from harness.records import RunRecord

EXIT_CODES = {
    0: "every run was tested and the gate passed",
    1: "the gate failed: a target scored below its minimum (--min-score, or min_score in "
    "harness.toml), a run failed with --strict, or a run expected to fail passed (xpass, strict)",
    2: "bad input: a scenario, tool set, harness.toml, baseline, results file or option is invalid, "
    "or --resume names a run another harness is running",
    3: "a cassette is missing, unreadable or incomplete, or the requests drifted from it "
    "(replay never goes live)",
    4: "the harness could not test some runs: no response, an endpoint unavailable after retries, "
    "a refused key",
    5: "a regression against the baseline (--baseline): a scenario or check that passed now fails, "
    "or a target's or scenario's score dropped by more than --tolerance points (with repeated runs, "
    "only a change outside the noise)",
    8: "the disk is full (or the quota spent): what was written is kept; once there is room, "
    "--resume continues the run",
    130: "interrupted (Ctrl-C): the reports describe the runs that finished",
}
"""The documented exit codes of ``harness run`` / ``record`` (and ``audit``, with ``--fail-on``).
When several apply, the first of 3, 4, 5, 1 is the exit code and the message names them all."""


class GatePolicy(Protocol):
    """What the gate reads of a target (:class:`harness.targets.Target` is one)."""

    @property
    def min_score(self) -> float | None: ...

    @property
    def xfail(self) -> Mapping[str, str]: ...

    @property
    def xfail_strict(self) -> bool: ...


class XFail(msgspec.Struct):
    """``report.xfail[target]``: whether the target's expected failures are strict, and the
    scenarios of the report it expects to fail, each with its reason."""

    strict: bool
    scenarios: dict[str, str]


class GatedRun(Protocol):
    """What the gate reads of a run of the report (a :class:`harness.reports.report.RunSummary`)."""

    @property
    def target(self) -> str: ...

    @property
    def scenario(self) -> str: ...

    @property
    def outcome(self) -> str: ...

    @property
    def error(self) -> ErrorSummary | None: ...


class GatedReport(Protocol):
    """What the gate reads of a report (:class:`harness.reports.report.Report` is one): the
    targets' scores, the runs, and the runs each target expects to fail."""

    @property
    def summary(self) -> Summary: ...

    @property
    def runs(self) -> Sequence[GatedRun]: ...

    @property
    def xfail(self) -> Mapping[str, XFail] | None: ...


Verdict = Literal["xfail", "xpass"]


def xfail_reason(patterns: Mapping[str, str], scenario: str) -> str | None:
    """Why ``scenario`` is expected to fail: the reason of its id in ``patterns``, else of the
    first glob pattern (in file order) that matches it; ``None`` when it is not expected to fail."""
    if scenario in patterns:
        return patterns[scenario]
    return next((reason for pattern, reason in patterns.items() if fnmatchcase(scenario, pattern)), None)


def expected_failures(records: Iterable[RunRecord], policies: Mapping[str, GatePolicy]) -> dict[str, XFail]:
    """``report.xfail``: per target that declares ``xfail``, whether it is strict and the
    scenarios of ``records`` it expects to fail, with the reasons. Kept in the report so that
    every writer (JUnit, HTML) and the gate read the same verdicts."""
    found: dict[str, XFail] = {}
    for record in records:
        expect_failure(found, record, policies)
    return {target: found[target] for target in sorted(found)}


def expect_failure(found: dict[str, XFail], record: RunRecord, policies: Mapping[str, GatePolicy]) -> None:
    """Add ``record``'s scenario to ``found`` (see :func:`expected_failures`) when its target
    expects it to fail."""
    policy = policies.get(record.target.name)
    reason = xfail_reason(policy.xfail, record.scenario) if policy is not None else None
    if policy is not None and reason is not None:
        entry = found.setdefault(record.target.name, XFail(policy.xfail_strict, {}))
        entry.scenarios[record.scenario] = reason


def expectation(
    xfail: Mapping[str, XFail] | None, target: str, scenario: str, outcome: str
) -> tuple[Verdict, str, bool] | None:
    """The verdict of a run expected to fail (``xfail`` when it failed, ``xpass`` when it
    passed), its reason and whether it is strict; ``None`` when the run was not expected to fail
    (in the report's ``xfail``) or could not be tested (an ``error`` stays an error)."""
    declared = xfail.get(target) if xfail else None
    reason = declared.scenarios.get(scenario) if declared else None
    if declared is None or reason is None or outcome == "error":
        return None
    return ("xfail" if outcome == "fail" else "xpass"), reason, declared.strict


def expectation_counts(report: GatedReport) -> dict[str, int]:
    """How many runs of the report were ``xfail``, ``xpass`` and strict ``xpass``."""
    counts = {"xfail": 0, "xpass": 0, "xpass_strict": 0}
    for run in report.runs:
        verdict = expectation(report.xfail, run.target, run.scenario, run.outcome)
        if verdict is not None:
            counts[verdict[0]] += 1
            counts["xpass_strict"] += verdict[0] == "xpass" and verdict[2]
    return counts


def gate(
    report: GatedReport,
    records: Iterable[RunRecord] | None = None,
    *,
    min_score: float | None = None,
    strict: bool = False,
    min_scores: Mapping[str, float] | None = None,
    regressions: Sequence[str] = (),
) -> tuple[int, str]:
    """The exit code of a run and why (see :data:`EXIT_CODES`): cassette errors first, then any
    other run that could not be tested, then regressions against a baseline (``regressions``,
    from :attr:`harness.analysis.compare.Comparison.regressions`), then the gate proper: a target below
    its minimum (``min_scores`` per target, else ``min_score``), a strict ``xpass``, and with
    ``strict`` any failed run not expected to fail (``report.xfail``, see
    :func:`expected_failures`). The runs are the report's own (``report.runs``) unless
    ``records`` are given."""
    # one pass, keeping only what did not pass: no list of every run
    errors: list[_Outcome] = []
    xpass: list[str] = []
    failed: list[str] = []
    for run in _outcomes(report, records):
        if run.outcome == "error":
            errors.append(run)
            continue
        verdict = expectation(report.xfail, run.target, run.scenario, run.outcome)
        if verdict is not None and verdict[0] == "xpass" and verdict[2]:
            xpass.append(f"{run.target}/{run.scenario} ({verdict[1]})")
        elif strict and verdict is None and run.outcome == "fail":
            failed.append(f"{run.target}/{run.scenario}")
    cassette = sum(1 for run in errors if run.cause == "cassette")
    if cassette:
        return 3, f"{cassette} run(s) with cassette errors: see above; replay never goes live"
    if errors:
        names = ", ".join(f"{run.target}/{run.scenario}" for run in errors[:10])
        return 4, f"{len(errors)} run(s) could not be tested (error, never scored): {names}"
    failures: list[tuple[int, str]] = []
    if regressions:
        shown = "; ".join(regressions[:10]) + ("; ..." if len(regressions) > 10 else "")
        failures.append((5, f"{len(regressions)} regression(s) against the baseline: {shown}"))
    failures += [(1, message) for message in _score_failures(report, min_score, min_scores or {})]
    failures += [(1, message) for message in _outcome_failures(xpass, failed)]
    if not failures:
        return 0, ""
    return failures[0][0], "\n".join(message for _, message in failures)


class _Outcome(NamedTuple):
    target: str
    scenario: str
    outcome: str
    cause: str | None


def _outcomes(report: GatedReport, records: Iterable[RunRecord] | None) -> Iterator[_Outcome]:
    if records is None:
        for run in report.runs:
            error = run.error
            yield _Outcome(run.target, run.scenario, run.outcome, error.cause if error else None)
        return
    for record in records:
        cause = record.error.cause if record.error else None
        yield _Outcome(record.target.name, record.scenario, record.outcome, cause)


def _score_failures(
    report: GatedReport, min_score: float | None, min_scores: Mapping[str, float]
) -> Iterator[str]:
    """A message for the targets below ``--min-score`` and one for those below their own
    ``min_score``."""
    low: dict[str, float | None] = {}
    own: list[str] = []
    for name, target in report.summary.targets.items():
        threshold = min_scores.get(name, min_score)
        if threshold is None or (target.score is not None and target.score >= threshold):
            continue
        if name in min_scores:
            own.append(f"{name} {target.score} < {threshold}")
        else:
            low[name] = target.score
    if low:
        yield f"below --min-score {min_score}: {low}"
    if own:
        yield f"below the target's min_score (harness.toml): {', '.join(own)}"


def _outcome_failures(xpass: list[str], failed: list[str]) -> Iterator[str]:
    """Strict ``xpass`` runs, and failed runs not expected to fail (listed only with ``strict``)."""
    if xpass:
        yield (
            f"{len(xpass)} run(s) expected to fail passed (xpass; xfail_strict): {', '.join(xpass[:10])}; "
            "remove them from xfail, or set xfail_strict = false"
        )
    if failed:
        yield f"{len(failed)} run(s) failed (--strict): {', '.join(failed[:10])}"
