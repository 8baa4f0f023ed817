"""What users read: per target, how often the model did what was asked (the headline), how often
its calls kept to the protocol (compliance), and how sure each figure is.

**The headline is task success.** A run *succeeds* when every expectation of its scenario held
(no expectation check failed: the expected calls with their arguments, no call where none is
wanted, order, parallelism, the final answer, recovery, batch mode, the turn budget) and no call
it made was broken (:data:`BROKEN_CALL`: unparseable arguments, an unknown tool, arguments
against the schema, a call leaked into the text in native mode, a forced ``tool_choice``
ignored, a tool result the user's agent changed). A run the endpoint failed
(:data:`PRECONDITIONS`: the tools never reached the model, a provider error) is no success for
the target as served, and is counted against the endpoint, never the model; a run in ``error``
could not be tested and is never scored. A scenario that expects the endpoint to refuse its
request (``expect.refused``) succeeds when the endpoint refused it with a 4xx: refusing what must
be refused is conformance; a 5xx fails it and is counted against the endpoint, a silent 2xx is a
warning (providers disagree on what they refuse).
Such a run tests the endpoint alone: it shows in its scenario's row and in the endpoint's faults,
never in the headline, pass@1 or pass^k, which say how often the model did what was asked.
A scenario's figure is the share of its tested repeats
that succeeded; a category's the mean of its scenarios; a target's the mean of its categories
(each category weighs the same, so a suite with many single-call scenarios does not drown the
rest), 0-100, with a grade 0-5 derived from it. A model that never calls a tool therefore scores
what never calling is worth: the scenarios whose right answer is no call.

**Compliance** stands beside it: of the model turns that made calls (native calls, or calls
leaked into the text), the share free of protocol and wire violations (:data:`COMPLIANCE`:
invalid JSON, an unknown tool, a schema mismatch, ids, finish reasons, stream framing, ...).

**How sure.** Every share carries a 95 % Wilson score interval. For a figure that is a weighted
mean of runs (a category, a target) the interval is Wilson's at Kish's effective sample size
(``1 / sum(w**2)`` for the runs' weights ``w`` in the figure): each tested run is taken as an
independent trial weighted as the figure weighs it, so repeats narrow it and a figure resting on
a few runs says so. :func:`difference` gives Newcombe's interval for the change between two
such figures (what ``harness compare`` and ``--baseline`` call outside or within the noise).

pass@1 is the share of tested runs that succeeded; pass^k the share of scenarios whose every
tested repeat succeeded (tau-bench's reading). Per check, the share of runs it passed (a
``warn`` counting half) is shown beside, as partial credit that never enters the headline.
"""

from __future__ import annotations

import math
from array import array
from collections import defaultdict
from collections.abc import Iterable, Mapping
from statistics import mean
from typing import Any

import msgspec

from harness.records import CheckResult, RunError, RunRecord, TargetInfo

CREDIT = {"pass": 1.0, "warn": 0.5, "fail": 0.0}
"""Partial credit of a check result, for the per-check shares only (never the headline)."""
GRADES = ((95.0, 5), (85.0, 4), (70.0, 3), (50.0, 2), (25.0, 1))
Z95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95 % interval."""

PRECONDITIONS = frozenset({"protocol.tools_delivered", "protocol.provider_error"})
"""Checks that fail when the endpoint failed the run: the tools never reached the model, or a turn
ended in a provider error (an HTTP error, an error inside a 200, an empty or broken stream). Such
a run is no success: the target as served did no tool calling there. The finding names the
endpoint, and the model's checks after that point show as not reached, so nothing is charged to
the model."""

BROKEN_CALL = frozenset(
    {
        "protocol.arguments_json",
        "protocol.arguments_schema",
        "protocol.known_tool",
        "protocol.native_delivery",
        "protocol.tool_choice",
        "protocol.agent_conduct",
        "protocol.history_portability",
        "protocol.confirm_before",
    }
)
"""Protocol checks whose failure means the run did not do what was asked, whatever the
expectations say: a call that cannot be executed as made (invalid JSON, an unknown tool,
arguments against the schema), a call written into the text in native mode, a forced
``tool_choice`` the endpoint honours but the model ignored, a user's agent that did not pass the
tool results back as they were, a history from another provider sent against the target's id,
name or reasoning rules, a tool the scenario says is destructive called without asking the user."""

COMPLIANCE = frozenset(
    {
        "protocol.wire",
        "protocol.arguments_json",
        "protocol.arguments_schema",
        "protocol.known_tool",
        "protocol.call_ids",
        "protocol.native_delivery",
    }
)
"""Checks whose failed findings (errors and warnings) at a model turn that made calls make that
turn non-compliant: OpenRouter's buckets (invalid JSON, unknown tool, schema mismatch) plus ids,
finish reasons, argument encoding and stream framing as the adapter noticed them."""

REQUEST_SIDE = ("wire.quirk:",)
"""Findings about how the harness had to build a request for the endpoint (a documented quirk
it works around), not about the model's turn: left out of compliance."""

ENDPOINT_CHECKS = {
    "protocol.tools_delivered": "tools not delivered",
    "protocol.provider_error": "provider errors",
    "protocol.truncation": "truncated turns",
    "protocol.template_leak": "template leaks",
    "expect.refused": "malformed requests failed on, not refused",
}
"""Failed checks that name the endpoint, not the model, as the cause (each target's row counts
the runs they failed)."""


def run_success(checks: Iterable[CheckResult]) -> bool:
    """Whether a tested run did what its scenario asks (see the module's docstring)."""
    for item in checks:
        if item.status == "fail" and (
            item.kind == "expectation" or item.id in BROKEN_CALL or item.id in PRECONDITIONS
        ):
            return False
    return True


def run_score(checks: Iterable[CheckResult]) -> float:
    """A tested run's score: 100 when it succeeded, else 0 (the mean over runs is a success rate)."""
    return 100.0 if run_success(checks) else 0.0


def record_score(record: RunRecord) -> float | None:
    """A run's score read from its checks (100 when it succeeded, 0 when not, ``None`` when it was
    not tested), whatever results format wrote it: what every report and comparison reads."""
    return None if record.outcome == "error" else run_score(record.checks)


def asks_refusal(record: RunRecord) -> bool:
    """The run's scenario asks the endpoint to refuse a malformed request (``expect.refused``): it
    tests the endpoint alone, so it counts in the endpoint's figures, never in the headline."""
    return any(c.id == "expect.refused" and c.status != "n/a" for c in record.checks)


def endpoint_failed(checks: Iterable[CheckResult]) -> bool:
    """Whether the endpoint failed the run (a failed :data:`PRECONDITIONS` check)."""
    return any(item.id in PRECONDITIONS and item.status == "fail" for item in checks)


def _not_reached(finding: Any) -> bool:
    return bool(finding.evidence and finding.evidence.get("not_reached"))


def compliance_turns(record: RunRecord) -> tuple[int, int]:
    """(model turns that made calls, those of them free of :data:`COMPLIANCE` violations). A turn
    whose call leaked into the text counts as a turn that made a call, and a violating one; a
    violation that names no turn counts against every call turn of the run."""
    turns = {e.turn for e in record.transcript.exchanges if e.parsed.tool_calls}
    bad: set[int] = set()
    everywhere = False
    for check in record.checks:
        if check.id not in COMPLIANCE or check.status not in ("fail", "warn"):
            continue
        for finding in check.findings:
            if (
                finding.passed
                or finding.severity == "info"
                or finding.check_id.startswith(REQUEST_SIDE)
                or _not_reached(finding)
            ):
                continue
            if finding.turn_index is None:
                everywhere = True
                continue
            if check.id == "protocol.native_delivery":
                turns.add(finding.turn_index)
            bad.add(finding.turn_index)
    if everywhere:
        bad |= turns
    return len(turns), len(turns - bad)


# -- how sure ----------------------------------------------------------------------------------


def wilson(share: float, n: float, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of a share observed over ``n`` trials (``n`` may be an effective,
    fractional count); ``None`` without trials."""
    if n <= 0:
        return None
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (share + z2 / (2 * n)) / denominator
    half = z * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def difference(before: tuple[float, float], after: tuple[float, float]) -> tuple[float, float] | None:
    """Newcombe's hybrid score interval (method 10) of ``after - before`` for two independent
    shares, each given as (share, effective n); ``None`` when a side has no trials. A change is
    *outside the noise* when the interval does not hold 0."""
    (p1, n1), (p2, n2) = before, after
    first, second = wilson(p1, n1), wilson(p2, n2)
    if first is None or second is None:
        return None
    (l1, u1), (l2, u2) = first, second
    change = p2 - p1
    return (
        change - math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2),
        change + math.sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2),
    )


def percent_interval(share: float, n: float) -> list[float] | None:
    """:func:`wilson` as percentages to one decimal, as reports show it."""
    found = wilson(share, n)
    return None if found is None else [round(100 * found[0], 1), round(100 * found[1], 1)]


def grade(score: float | None) -> int | None:
    """0-5: 5 from 95, 4 from 85, 3 from 70, 2 from 50, 1 from 25."""
    if score is None:
        return None
    return next((g for threshold, g in GRADES if score >= threshold), 0)


def mean_score(values: Iterable[float | None]) -> float | None:
    """The mean of the scores present (``None`` ones left out), rounded as every score is."""
    present = [v for v in values if v is not None]
    return round(mean(present), 2) if present else None


class Figure:
    """A headline-style figure: the mean over groups of the mean over scenarios of the mean over
    tested runs (each run a success, 1, or not, 0), with its weights for the interval.

    ``groups`` maps a group (a category) to its scenarios' (successes, tested runs)."""

    def __init__(self, groups: dict[str, list[tuple[int, int]]]):
        self.groups = {g: [s for s in scenarios if s[1]] for g, scenarios in groups.items()}
        self.groups = {g: scenarios for g, scenarios in self.groups.items() if scenarios}

    def share(self) -> float | None:
        if not self.groups:
            return None
        return mean(mean(won / runs for won, runs in scenarios) for scenarios in self.groups.values())

    def effective_runs(self) -> float:
        """Kish's ``1 / sum(w**2)``: a run of scenario ``s`` (``k`` tested runs) in a group of ``n``
        scenarios, among ``G`` groups, weighs ``1 / (G n k)``, so ``k`` such runs add
        ``1 / (G**2 n**2 k)`` to the sum."""
        groups = len(self.groups)
        return 1 / sum(
            1 / (groups * groups * len(scenarios) ** 2 * runs)
            for scenarios in self.groups.values()
            for _, runs in scenarios
        )

    def data(self) -> tuple[float | None, list[float] | None, int | float]:
        """``score`` (0-100, two decimals), ``interval`` (95 %, percent) and ``effective_runs``
        (``0`` when no run was tested)."""
        share = self.share()
        if share is None:
            return None, None, 0
        n = self.effective_runs()
        return round(100 * share, 2), percent_interval(share, n), round(n, 1)


# -- what report.summary holds -------------------------------------------------------------------
# Typed as report.json writes them (msgspec Structs: report.json is encoded from them, keys
# sorted); a figure that is a whole number when it divides exactly is ``int | float``.


class LatencyFigures(msgspec.Struct):
    """Per-exchange latency in ms (the recorded or the measured one): median, 95th percentile,
    and how many exchanges they rest on."""

    p50: float
    p95: float
    exchanges: int


class TokenFigures(msgspec.Struct):
    """Tokens per run as the provider reported them, and how many runs reported them."""

    input: int | float
    output: int | float
    runs: int


class ErrorSummary(msgspec.Struct):
    """Why a run could not be tested, as reports show it (the traceback stays in the results
    file)."""

    kind: str
    cause: str
    message: str

    @classmethod
    def of(cls, error: RunError) -> ErrorSummary:
        return cls(error.kind, error.cause, error.message)


class ScenarioSummary(msgspec.Struct):
    """One scenario of a target: the share of its tested repeats that succeeded."""

    category: str
    score: float | None
    interval: list[float] | None
    runs: int
    tested: int
    succeeded: int
    pass_all: bool
    errors: list[ErrorSummary]  # of the repeats in error, in repeat order
    latency_ms: LatencyFigures | None
    tokens_per_run: TokenFigures | None


class CategorySummary(msgspec.Struct):
    """One category of a target: the mean over its scenarios."""

    score: float | None
    interval: list[float] | None
    effective_runs: int | float
    grade: int | None
    scenarios: int


class Compliance(msgspec.Struct):
    """Of the model turns that made calls, the share free of protocol and wire violations."""

    score: float
    interval: list[float] | None
    call_turns: int
    clean_turns: int


class CheckShare(msgspec.Struct):
    """One check over a target's tested runs: how many it judged, passed, warned and failed, and
    the share passed (a ``warn`` counting half)."""

    runs: int
    passed: float
    pass_: int = msgspec.field(name="pass")
    warn: int
    fail: int


class TargetSummary(msgspec.Struct):
    """One target: the headline (``score``, the mean over categories), its grade, compliance,
    per-check shares, endpoint faults, latency and tokens, and every scenario."""

    info: TargetInfo
    score: float | None
    interval: list[float] | None
    effective_runs: int | float
    grade: int | None
    categories: dict[str, CategorySummary]
    compliance: Compliance | None
    pass_at_1: float | None
    pass_all_k: float
    runs: int
    tested: int
    errors: int
    endpoint_faults: dict[str, int]  # what the endpoint did -> runs
    checks: dict[str, CheckShare]
    latency_ms: LatencyFigures | None
    tokens_per_run: TokenFigures | None
    scenarios: dict[str, ScenarioSummary]


class Overall(msgspec.Struct):
    """Every target together: the mean of their scores, and of the real (not simulated) ones."""

    score: float | None
    grade: int | None
    targets: int
    simulated_targets: int
    real_targets_score: float | None


class Summary(msgspec.Struct):
    """What ``report.summary`` holds: every target by name (sorted), and overall."""

    targets: Mapping[str, TargetSummary]  # a dict, or a spool (harness.reports.spool)
    overall: Overall


def _percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile of sorted ``values``."""
    rank = max(1, -(-len(values) * share // 1))  # ceil
    return values[int(rank) - 1]


class _Figures:
    """Running latencies and token usage of a set of runs (a scenario's or a target's), added one
    run at a time (a few numbers a run, never the run)."""

    def __init__(self) -> None:
        self.latencies = array("d")
        self.usage = [0, 0, 0]  # input tokens, output tokens, runs that reported usage

    def add(self, record: RunRecord) -> None:
        self.latencies.extend(e.elapsed_ms for e in record.transcript.exchanges if e.elapsed_ms is not None)
        usage = record.usage
        if usage.total is not None:
            self.usage[0] += usage.input_tokens or 0
            self.usage[1] += usage.output_tokens or 0
            self.usage[2] += 1

    @classmethod
    def of(cls, parts: Iterable[_Figures]) -> _Figures:
        """The figures of several sets of runs together (a target's, from its scenarios')."""
        whole = cls()
        for part in parts:
            whole.latencies.extend(part.latencies)
            whole.usage = [a + b for a, b in zip(whole.usage, part.usage, strict=True)]
        return whole

    def latency(self) -> LatencyFigures | None:
        """Per-exchange latency p50/p95 (the recorded or measured one; none in a replay of a
        cassette without timings)."""
        latencies = sorted(self.latencies)
        if not latencies:
            return None
        return LatencyFigures(_percentile(latencies, 0.5), _percentile(latencies, 0.95), len(latencies))

    def tokens(self) -> TokenFigures | None:
        """Tokens per run as the provider reported them (none when no run reported any)."""
        inputs, outputs, runs = self.usage
        return TokenFigures(_mean(inputs, runs), _mean(outputs, runs), runs) if runs else None


def _mean(total: int, count: int) -> float:
    """``total / count`` to one decimal, an int when it divides exactly (as ``statistics.mean``
    of ints gives it, so report.json stays as it was)."""
    return round(total // count if total % count == 0 else total / count, 1)


class _Scenario(_Figures):
    def __init__(self, category: str) -> None:
        super().__init__()
        self.category = category
        self.runs = self.tested = self.succeeded = 0
        self.errors: list[tuple[int, ErrorSummary]] = []  # (repeat, error) of the runs that had one
        self.refusal = False  # it asks the endpoint to refuse a malformed request: not the model's task

    def add_repeat(self, record: RunRecord) -> None:
        self.add(record)
        self.runs += 1
        self.refusal = self.refusal or asks_refusal(record)
        score = record_score(record)
        if score is not None:
            self.tested += 1
            self.succeeded += score > 0
        if record.error:
            self.errors.append((record.repeat, ErrorSummary.of(record.error)))

    def row(self) -> ScenarioSummary:
        share = self.succeeded / self.tested if self.tested else None
        return ScenarioSummary(
            category=self.category,
            score=None if share is None else round(100 * share, 2),
            interval=None if share is None else percent_interval(share, self.tested),
            runs=self.runs,
            tested=self.tested,
            succeeded=self.succeeded,
            pass_all=bool(self.tested) and self.succeeded == self.tested,
            errors=[error for _, error in sorted(self.errors, key=lambda item: item[0])],
            latency_ms=self.latency(),
            tokens_per_run=self.tokens(),
        )


class _Target:
    def __init__(self, info: TargetInfo) -> None:
        self.info = info
        self.scenarios: dict[str, _Scenario] = {}
        self.runs = self.errors = 0
        self.call_turns = self.clean_turns = 0
        self.checks: dict[str, dict[str, int]] = {}  # check id -> runs per status
        self.faults: dict[str, int] = {}  # endpoint fault -> runs

    def add_run(self, record: RunRecord) -> None:
        scenario = self.scenarios.get(record.scenario)
        if scenario is None:
            scenario = self.scenarios[record.scenario] = _Scenario(record.category)
        scenario.add_repeat(record)
        self.runs += 1
        if record.outcome == "error":
            self.errors += 1
            return
        turns, clean = compliance_turns(record)
        self.call_turns += turns
        self.clean_turns += clean
        for item in record.checks:
            if item.status in CREDIT:
                self.checks.setdefault(item.id, dict.fromkeys(CREDIT, 0))[item.status] += 1
            if item.status == "fail" and item.id in ENDPOINT_CHECKS:
                self._fault(ENDPOINT_CHECKS[item.id])
        if any(_not_reached(f) for f in record.findings()):
            self._fault("model checks not reached")

    def _fault(self, name: str) -> None:
        self.faults[name] = self.faults.get(name, 0) + 1

    def check_shares(self) -> dict[str, CheckShare]:
        """Per check id: how many tested runs it passed, warned and failed, and the share passed
        (a ``warn`` counts half: partial credit shown per check, never in the headline), so a
        check a target always fails stands out. Runs the harness could not test (``error``) are
        left out."""
        shares = {}
        for check_id, found in sorted(self.checks.items()):
            judged = sum(found.values())
            earned = sum(CREDIT[status] * n for status, n in found.items())
            shares[check_id] = CheckShare(
                judged, round(100 * earned / judged, 1), found["pass"], found["warn"], found["fail"]
            )
        return shares

    def compliance(self) -> Compliance | None:
        """Of the model turns that made calls, the share free of protocol and wire violations."""
        if not self.call_turns:
            return None
        share = self.clean_turns / self.call_turns
        return Compliance(
            round(100 * share, 2), percent_interval(share, self.call_turns), self.call_turns, self.clean_turns
        )

    def entry(self) -> TargetSummary:
        rows = {scenario_id: self.scenarios[scenario_id].row() for scenario_id in sorted(self.scenarios)}
        groups: dict[str, list[tuple[int, int]]] = defaultdict(list)
        modelled = [self.scenarios[s] for s in sorted(self.scenarios) if not self.scenarios[s].refusal]
        for scenario in modelled:
            groups[scenario.category].append((scenario.succeeded, scenario.tested))
        score, interval, effective_runs = Figure(groups).data()
        tested = self.runs - self.errors
        graded = tested > self.errors  # a target most of whose runs are in error shows no grade
        categories = {}
        for category in sorted(groups):
            figure = Figure({category: groups[category]}).data()
            categories[category] = CategorySummary(
                *figure, grade=grade(figure[0]) if graded else None, scenarios=len(groups[category])
            )
        succeeded = sum(s.succeeded for s in modelled)
        tested_modelled = sum(s.tested for s in modelled)
        figures = _Figures.of(self.scenarios.values())  # each run counted in its scenario
        return TargetSummary(
            info=self.info,
            score=score,
            interval=interval,
            effective_runs=effective_runs,
            grade=grade(score) if graded else None,
            categories=categories,
            compliance=self.compliance(),
            pass_at_1=round(succeeded / tested_modelled, 4) if tested_modelled else None,
            pass_all_k=round(sum(s.row().pass_all for s in modelled) / len(modelled), 4) if modelled else 0.0,
            runs=self.runs,
            tested=tested,
            errors=self.errors,
            endpoint_faults=dict(self.faults),
            checks=self.check_shares(),
            latency_ms=figures.latency(),
            tokens_per_run=figures.tokens(),
            scenarios=rows,
        )


class Scores:
    """Scores of every target (with its categories and scenarios) and overall, computed as runs
    are added one at a time: what it keeps grows with targets and scenarios, and by a few numbers
    a run (its success, its latencies), never with its transcript.

    Example::

        scores = Scores()
        for record in harness.read_results("reports/results.jsonl"):
            scores.add(record)
        target = scores.summary().targets["sim-openai"]
        print(target.score, target.interval, target.compliance)
    """

    def __init__(self) -> None:
        self.targets: dict[str, _Target] = {}

    def add(self, record: RunRecord) -> None:
        target = self.targets.get(record.target.name)
        if target is None:
            target = self.targets[record.target.name] = _Target(record.target)
        target.add_run(record)

    def take(self, name: str) -> TargetSummary:
        """The summary of target ``name``, its runs all added; the scores forget it (a report over
        records read a target at a time keeps one target's figures in memory)."""
        return self.targets.pop(name).entry()

    def summary(self) -> Summary:
        """What ``report.summary`` holds."""
        targets = {name: self.targets[name].entry() for name in sorted(self.targets)}
        return Summary(targets, overall(targets))


def overall(targets: Mapping[str, TargetSummary]) -> Overall:
    """The figures over every target: the mean of their scores, of the real ones', and counts."""
    scores = [(t.score, t.info.simulated) for t in targets.values()]  # one pass: a spool reads each once
    score = mean_score(s for s, _ in scores)
    return Overall(
        score=score,
        grade=grade(score),
        targets=len(scores),
        simulated_targets=sum(1 for _, simulated in scores if simulated),
        real_targets_score=mean_score(s for s, simulated in scores if not simulated),
    )
