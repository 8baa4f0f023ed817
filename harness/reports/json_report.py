"""``report.json``: scores, per-run summaries and findings, deterministic for a replay.

In a replay, apart from ``generated_at`` nothing in it depends on when or how
fast the harness ran: latencies are the ones recorded in the cassettes (a live
run's summary aggregates the latencies it measured), and wall-clock times of
the run itself are left out (they live in the results file).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness import secrets
from harness._version import __version__
from harness.capabilities import capabilities
from harness.model import Exchange
from harness.records import RunRecord, to_builtins
from harness.scoring import aggregate

SCHEMA = "harness.report/1"
EVIDENCE_LIMIT = 4000
SIMULATED_NOTE = (
    "Targets marked simulated talk to the harness's reference simulator, not to a model: "
    "their scores show the harness works, never how a provider or model performs."
)


def _clip(value: Any) -> Any:
    """Evidence with long strings cut, so the report stays readable."""
    if isinstance(value, str):
        return value if len(value) <= EVIDENCE_LIMIT else value[:EVIDENCE_LIMIT] + f"... [{len(value)} chars]"
    if isinstance(value, dict):
        return {k: _clip(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clip(v) for v in value]
    return value


def run_summary(record: RunRecord) -> dict[str, Any]:
    """What the report keeps of one run."""
    exchanges = record.transcript.exchanges
    findings = [_clip(to_builtins(f)) for f in record.findings() if not f.passed]
    return {
        "target": record.target.name,
        "scenario": record.scenario,
        "category": record.category,
        "repeat": record.repeat,
        "score": record.score,
        "passed": record.passed,
        "outcome": record.outcome,
        "error": record.error.summary() if record.error else None,
        "stop_reason": record.transcript.stop_reason,
        "turns": len(exchanges),
        "calls": [[c.name, c.arguments] for e in exchanges for c in e.parsed.tool_calls],
        "usage": to_builtins(record.usage),
        "recorded_latency_ms": [e.elapsed_ms for e in exchanges] if record.mode != "live" else None,
        "checks": {c.id: c.status for c in record.checks},
        "findings": findings,
        "exchanges": _evidence(exchanges, findings),
    }


def _evidence(exchanges: list[Exchange], findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The wire request and response of every turn a failed finding points at."""
    turns = {f["turn_index"] for f in findings if f["severity"] != "info" and f["turn_index"] is not None}
    return [
        _clip(
            {
                "turn": exchange.turn,
                "request": {
                    "method": exchange.request.method,
                    "url": exchange.request.url,
                    "body": exchange.request.body,
                },
                "response": {
                    "status": exchange.response.status if exchange.response else None,
                    "body": exchange.response.body if exchange.response else None,
                },
            }
        )
        for exchange in exchanges
        if exchange.turn in turns
    ]


def notes(records: list[RunRecord]) -> dict[str, list[dict[str, Any]]]:
    """Per target: the informational findings (unsupported features, endpoint quirks), each id
    once, with the number of runs it was seen in and one example."""
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for record in records:
        seen = {f.check_id: f.detail for f in record.findings() if not f.passed and f.severity == "info"}
        for check_id, detail in seen.items():
            entry = found.setdefault(record.target.name, {}).setdefault(
                check_id, {"id": check_id, "runs": 0, "example": detail}
            )
            entry["runs"] += 1
    return {target: [items[k] for k in sorted(items)] for target, items in sorted(found.items())}


def mode_comparison(records: list[RunRecord], summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Targets that differ only in how tools are delivered (native vs each prompted protocol):
    their scores side by side with the mean size of what the tools cost in the prompt."""
    groups: dict[tuple[Any, ...], list[str]] = {}
    sizes: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        info = record.target
        key = (info.format, info.model, info.profile, info.simulated)
        if info.name not in groups.setdefault(key, []):
            groups[key].append(info.name)
        if record.tool_prompt is not None:
            sizes.setdefault(info.name, []).append(to_builtins(record.tool_prompt))
    comparison = []
    for (fmt, model, _, simulated), names in sorted(groups.items()):
        modes = {summary["targets"][n]["info"]["mode"] for n in names}
        if len(modes) < 2:
            continue
        rows = []
        for name in sorted(names, key=lambda n: (summary["targets"][n]["info"]["mode"] != "native", n)):
            measured = sizes.get(name, [])
            rows.append(
                {
                    "target": name,
                    "mode": summary["targets"][name]["info"]["mode"],
                    "score": summary["targets"][name]["score"],
                    "tool_prompt_characters": round(sum(m["characters"] for m in measured) / len(measured))
                    if measured
                    else None,
                    "tool_prompt_estimated_tokens": round(
                        sum(m["estimated_tokens"] for m in measured) / len(measured)
                    )
                    if measured
                    else None,
                }
            )
        comparison.append({"format": fmt, "model": model, "simulated": simulated, "targets": rows})
    return comparison


def build(records: list[RunRecord], generated_at: str | None = None) -> dict[str, Any]:
    """The report of a set of run records (what report.json holds; the other writers read it)."""
    modes = sorted({r.mode for r in records})
    summary = aggregate(records)
    return {
        "schema": SCHEMA,
        "generated_at": generated_at or datetime.now(UTC).isoformat(timespec="seconds"),
        "harness_version": __version__,
        "mode": modes[0] if len(modes) == 1 else modes,
        "simulated_note": SIMULATED_NOTE,
        "summary": summary,
        "modes": mode_comparison(records, summary),
        "notes": notes(records),
        "capabilities": capabilities(records),
        "verification": verifications(records),
        "runs": [run_summary(r) for r in records],
    }


def verifications(records: list[RunRecord]) -> list[dict[str, Any]]:
    """Per reference, every target that declares it (``reference``) and ran beside it, judged
    against it (:mod:`harness.verify`); each figure lists the runs it rests on."""
    from harness.verify import verify_records

    by_target: dict[str, list[RunRecord]] = {}
    for record in records:
        if record.error is None:
            by_target.setdefault(record.target.name, []).append(record)
    groups: dict[str, list[str]] = {}
    for name, runs in by_target.items():
        reference = runs[0].target.reference
        if reference and reference in by_target:
            groups.setdefault(reference, []).append(name)
    return [
        {
            "reference": reference,
            "endpoints": [
                j.to_data()
                for j in verify_records(by_target[reference], {n: by_target[n] for n in sorted(names)})
            ],
        }
        for reference, names in sorted(groups.items())
    ]


def write(report: dict[str, Any], records: list[RunRecord], out_dir: Path) -> Path:
    path = out_dir / "report.json"
    import msgspec

    text = msgspec.json.format(msgspec.json.encode(report, order="sorted"), indent=2) + b"\n"
    path.write_bytes(secrets.redact_bytes(text))
    return path
