"""Scores: per run, scenario, category, target and overall, 0-100, with a 0-5 grade.

A run's score is the weighted share of its applicable checks that passed (a
``warn`` counts half), and 0 when the endpoint failed the run. A
run *passes* when no check fails. A scenario's score is the mean over its
repeats; a category's the mean over its scenarios; a target's the mean over
its categories (each category weighs the same, so a suite with many
single-call scenarios does not drown the rest). pass@1 is the share of runs
that pass; pass^k the share of scenarios whose k runs all pass.
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Iterable
from statistics import mean
from typing import Any

from harness.records import CheckResult, RunRecord, TargetInfo, to_builtins

CREDIT = {"pass": 1.0, "warn": 0.5, "fail": 0.0}
GRADES = ((95.0, 5), (85.0, 4), (70.0, 3), (50.0, 2), (25.0, 1))


PRECONDITIONS = frozenset({"protocol.tools_delivered", "protocol.provider_error"})
"""Checks that fail when the endpoint failed the run: the tools never reached the model, or a turn
ended in a provider error (an HTTP error, an error inside a 200, an empty or broken stream). Such
a run scores 0: the target as served did no tool calling there. The finding names the endpoint,
and the model's checks after that point show as not reached, so nothing is charged to the model;
and a target whose endpoint fails runs cannot outscore one whose endpoint answers them."""


def run_score(checks: Iterable[CheckResult]) -> float | None:
    """Weighted share of passed checks (0 when a precondition failed)."""
    total = earned = 0.0
    for item in checks:
        if item.id in PRECONDITIONS and item.status == "fail":
            return 0.0
        if item.status in CREDIT:
            total += item.weight
            earned += item.weight * CREDIT[item.status]
    return round(100 * earned / total, 2) if total else None


ENDPOINT_CHECKS = {
    "protocol.tools_delivered": "tools not delivered",
    "protocol.provider_error": "provider errors",
    "protocol.truncation": "truncated turns",
    "protocol.template_leak": "template leaks",
}
"""Failed checks that name the endpoint, not the model, as the cause (each target's row counts
the runs they failed)."""


def _percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile of sorted ``values``."""
    rank = max(1, -(-len(values) * share // 1))  # ceil
    return values[int(rank) - 1]


def grade(score: float | None) -> int | None:
    """0-5: 5 from 95, 4 from 85, 3 from 70, 2 from 50, 1 from 25."""
    if score is None:
        return None
    return next((g for threshold, g in GRADES if score >= threshold), 0)


def mean_score(values: Iterable[float | None]) -> float | None:
    """The mean of the scores present (``None`` ones left out), rounded as every score is."""
    present = [v for v in values if v is not None]
    return round(mean(present), 2) if present else None


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

    def latency_and_tokens(self) -> dict[str, Any]:
        """Per-exchange latency p50/p95 (the recorded or measured one; none in a replay of a
        cassette without timings) and tokens per run as the provider reported them, with how
        many values each figure rests on."""
        latencies = sorted(self.latencies)
        inputs, outputs, runs = self.usage
        return {
            "latency_ms": {
                "p50": _percentile(latencies, 0.5),
                "p95": _percentile(latencies, 0.95),
                "exchanges": len(latencies),
            }
            if latencies
            else None,
            "tokens_per_run": {"input": _mean(inputs, runs), "output": _mean(outputs, runs), "runs": runs}
            if runs
            else None,
        }


def _mean(total: int, count: int) -> float:
    """``total / count`` to one decimal, an int when it divides exactly (as ``statistics.mean``
    of ints gives it, so report.json stays as it was)."""
    return round(total // count if total % count == 0 else total / count, 1)


class _Scenario(_Figures):
    def __init__(self, category: str) -> None:
        super().__init__()
        self.category = category
        self.scores = array("d")  # of the runs that have one
        self.runs = self.passed = 0
        self.errors: list[tuple[int, dict[str, str]]] = []  # (repeat, error) of the runs that had one

    def add_repeat(self, record: RunRecord) -> None:
        self.add(record)
        if record.score is not None:
            self.scores.append(record.score)
        self.runs += 1
        self.passed += record.passed
        if record.error:
            self.errors.append((record.repeat, record.error.summary()))

    def row(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "score": mean_score(self.scores),
            "runs": self.runs,
            "passed_runs": self.passed,
            "pass_all": bool(self.scores) and self.passed == self.runs,
            "errors": [error for _, error in sorted(self.errors, key=lambda item: item[0])],
            **self.latency_and_tokens(),
        }


class _Target:
    def __init__(self, info: TargetInfo) -> None:
        self.info = info
        self.scenarios: dict[str, _Scenario] = {}
        self.runs = self.errors = self.counted = self.passed = 0
        self.checks: dict[str, dict[str, int]] = {}  # check id -> runs per status
        self.faults: dict[str, int] = {}  # endpoint fault -> runs

    def add_run(self, record: RunRecord) -> None:
        scenario = self.scenarios.get(record.scenario)
        if scenario is None:
            scenario = self.scenarios[record.scenario] = _Scenario(record.category)
        scenario.add_repeat(record)
        self.runs += 1
        self.errors += record.outcome == "error"
        if record.score is not None:
            self.counted += 1
            self.passed += record.passed
        for item in record.checks:
            if item.status in CREDIT and record.outcome != "error":
                self.checks.setdefault(item.id, dict.fromkeys(CREDIT, 0))[item.status] += 1
            if item.status == "fail" and item.id in ENDPOINT_CHECKS:
                self._fault(ENDPOINT_CHECKS[item.id])
        if any(f.evidence and f.evidence.get("not_reached") for f in record.findings()):
            self._fault("model checks not reached")

    def _fault(self, name: str) -> None:
        self.faults[name] = self.faults.get(name, 0) + 1

    def check_shares(self) -> dict[str, dict[str, Any]]:
        """Per check id: how many tested runs it passed, warned and failed, and the share passed
        (a ``warn`` counts half, as in scores), so a check a target always fails stands out. Runs
        the harness could not test (``error``) are left out, as from scores."""
        shares = {}
        for check_id, found in sorted(self.checks.items()):
            judged = sum(found.values())
            earned = sum(CREDIT[status] * n for status, n in found.items())
            shares[check_id] = {"runs": judged, "passed": round(100 * earned / judged, 1), **found}
        return shares

    def entry(self) -> dict[str, Any]:
        rows = {scenario_id: self.scenarios[scenario_id].row() for scenario_id in sorted(self.scenarios)}
        categories: dict[str, list[float | None]] = defaultdict(list)
        for row in rows.values():
            categories[row["category"]].append(row["score"])
        category_scores = {c: mean_score(v) for c, v in sorted(categories.items())}
        score = mean_score(category_scores.values())
        return {
            "info": to_builtins(self.info),
            "score": score,
            "grade": grade(score),
            "categories": {c: {"score": s, "grade": grade(s)} for c, s in category_scores.items()},
            "pass_at_1": round(self.passed / self.counted, 4) if self.counted else None,
            "pass_all_k": round(sum(row["pass_all"] for row in rows.values()) / len(rows), 4),
            "runs": self.runs,
            "errors": self.errors,
            "endpoint_faults": dict(self.faults),
            "checks": self.check_shares(),
            **_Figures.of(self.scenarios.values()).latency_and_tokens(),  # each run counted in its scenario
            "scenarios": rows,
        }


class Scores:
    """Scores of every target (with its categories and scenarios) and overall, computed as runs
    are added one at a time: what it keeps grows with targets and scenarios, and by a few numbers
    a run (its score, its latencies), never with its transcript.

    Example::

        scores = Scores()
        for record in harness.read_results("reports/results.jsonl"):
            scores.add(record)
        print(scores.summary()["overall"]["score"])
    """

    def __init__(self) -> None:
        self.targets: dict[str, _Target] = {}

    def add(self, record: RunRecord) -> None:
        target = self.targets.get(record.target.name)
        if target is None:
            target = self.targets[record.target.name] = _Target(record.target)
        target.add_run(record)

    def summary(self) -> dict[str, Any]:
        """What ``report["summary"]`` holds."""
        targets = {name: self.targets[name].entry() for name in sorted(self.targets)}
        overall = mean_score(t["score"] for t in targets.values())
        real = [t["score"] for t in targets.values() if not t["info"]["simulated"]]
        return {
            "targets": targets,
            "overall": {
                "score": overall,
                "grade": grade(overall),
                "targets": len(targets),
                "simulated_targets": sum(1 for t in targets.values() if t["info"]["simulated"]),
                "real_targets_score": mean_score(real),
            },
        }
