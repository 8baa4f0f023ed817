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

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import mean
from typing import Any

from harness.model import Usage
from harness.records import CheckResult, RunError, RunRecord, Status, TargetInfo, to_builtins

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


@dataclass(frozen=True)
class RunFigures:
    """What scores need of one run: a record without its transcript and findings, so a report
    over many runs keeps a few hundred bytes of each (:func:`aggregate` takes these or records)."""

    target: TargetInfo
    scenario: str
    category: str
    repeat: int
    score: float | None
    passed: bool
    outcome: str
    error: RunError | None
    statuses: tuple[tuple[str, Status], ...]
    faults: tuple[str, ...]  # the endpoint faults of this run (see ENDPOINT_CHECKS)
    latencies: tuple[float, ...]
    usage: Usage

    @classmethod
    def of(cls, record: RunRecord) -> RunFigures:
        faults = [
            ENDPOINT_CHECKS[c.id] for c in record.checks if c.status == "fail" and c.id in ENDPOINT_CHECKS
        ]
        if any(f.evidence and f.evidence.get("not_reached") for f in record.findings()):
            faults.append("model checks not reached")
        return cls(
            record.target,
            record.scenario,
            record.category,
            record.repeat,
            record.score,
            record.passed,
            record.outcome,
            record.error,
            tuple((c.id, c.status) for c in record.checks),
            tuple(faults),
            tuple(e.elapsed_ms for e in record.transcript.exchanges if e.elapsed_ms is not None),
            record.usage,
        )


def endpoint_faults(runs: Iterable[RunFigures]) -> dict[str, int]:
    """How many runs each endpoint-caused check failed, and how many runs had model checks the
    endpoint kept from being reached (``not reached``), omitting zeros."""
    counts: dict[str, int] = defaultdict(int)
    for run in runs:
        for fault in run.faults:
            counts[fault] += 1
    return dict(counts)


def _percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile of sorted ``values``."""
    rank = max(1, -(-len(values) * share // 1))  # ceil
    return values[int(rank) - 1]


def check_shares(runs: Iterable[RunFigures]) -> dict[str, dict[str, Any]]:
    """Per check id: how many tested runs it passed, warned and failed, and the share passed (a
    ``warn`` counts half, as in scores), so a check a target always fails stands out. Runs the
    harness could not test (``error``) are left out, as from scores."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(CREDIT, 0))
    for run in runs:
        if run.outcome == "error":
            continue
        for check_id, status in run.statuses:
            if status in CREDIT:
                counts[check_id][status] += 1
    shares = {}
    for check_id, found in sorted(counts.items()):
        judged = sum(found.values())
        earned = sum(CREDIT[status] * n for status, n in found.items())
        shares[check_id] = {"runs": judged, "passed": round(100 * earned / judged, 1), **found}
    return shares


def latency_and_tokens(runs: Iterable[RunFigures]) -> dict[str, Any]:
    """Per-exchange latency p50/p95 (the recorded or measured one; none in a replay of a cassette
    without timings) and tokens per run as the provider reported them, with how many values each
    figure rests on."""
    runs = list(runs)
    latencies = sorted(latency for r in runs for latency in r.latencies)
    usage = [r.usage for r in runs if r.usage.total is not None]
    return {
        "latency_ms": {
            "p50": _percentile(latencies, 0.5),
            "p95": _percentile(latencies, 0.95),
            "exchanges": len(latencies),
        }
        if latencies
        else None,
        "tokens_per_run": {
            "input": round(mean(u.input_tokens or 0 for u in usage), 1),
            "output": round(mean(u.output_tokens or 0 for u in usage), 1),
            "runs": len(usage),
        }
        if usage
        else None,
    }


def grade(score: float | None) -> int | None:
    """0-5: 5 from 95, 4 from 85, 3 from 70, 2 from 50, 1 from 25."""
    if score is None:
        return None
    return next((g for threshold, g in GRADES if score >= threshold), 0)


def mean_score(values: Iterable[float | None]) -> float | None:
    """The mean of the scores present (``None`` ones left out), rounded as every score is."""
    present = [v for v in values if v is not None]
    return round(mean(present), 2) if present else None


def aggregate(records: Iterable[RunRecord | RunFigures]) -> dict[str, Any]:
    """Scores of every target (with its categories and scenarios) and overall, from run records
    or their :class:`RunFigures`."""
    by_target: dict[str, list[RunFigures]] = defaultdict(list)
    for record in records:
        figures = record if isinstance(record, RunFigures) else RunFigures.of(record)
        by_target[figures.target.name].append(figures)
    targets = {}
    for name in sorted(by_target):
        runs = by_target[name]
        scenarios: dict[str, list[RunFigures]] = defaultdict(list)
        for run in runs:
            scenarios[run.scenario].append(run)
        scenario_rows = {}
        categories: dict[str, list[float | None]] = defaultdict(list)
        for scenario_id in sorted(scenarios):
            reps = sorted(scenarios[scenario_id], key=lambda r: r.repeat)
            scored = [r for r in reps if r.score is not None]
            score = mean_score(r.score for r in scored)
            row: dict[str, Any] = {
                "category": reps[0].category,
                "score": score,
                "runs": len(reps),
                "passed_runs": sum(1 for r in reps if r.passed),
                "pass_all": bool(scored) and all(r.passed for r in reps),
                "errors": [r.error.summary() for r in reps if r.error],
                **latency_and_tokens(reps),
            }
            scenario_rows[scenario_id] = row
            categories[row["category"]].append(score)
        category_scores = {c: mean_score(v) for c, v in sorted(categories.items())}
        score = mean_score(category_scores.values())
        counted = [r for r in runs if r.score is not None]
        targets[name] = {
            "info": to_builtins(runs[0].target),
            "score": score,
            "grade": grade(score),
            "categories": {c: {"score": s, "grade": grade(s)} for c, s in category_scores.items()},
            "pass_at_1": round(sum(r.passed for r in counted) / len(counted), 4) if counted else None,
            "pass_all_k": round(
                sum(row["pass_all"] for row in scenario_rows.values()) / len(scenario_rows), 4
            ),
            "runs": len(runs),
            "errors": sum(1 for r in runs if r.outcome == "error"),
            "endpoint_faults": endpoint_faults(runs),
            "checks": check_shares(runs),
            **latency_and_tokens(runs),
            "scenarios": scenario_rows,
        }
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
