"""``report.json``: scores, per-run summaries and findings, deterministic for a replay.

Apart from ``generated_at`` nothing in it depends on when or how fast the
harness ran: latencies are the ones recorded in the cassettes, and wall-clock
times of the run itself are left out (they live in the results file).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness import __version__
from harness.scoring import aggregate

SCHEMA = "harness.report/1"
EVIDENCE_LIMIT = 4000
SIMULATED_NOTE = ("Targets marked simulated talk to the harness's reference simulator, not to a model: "
                  "their scores show the harness works, never how a provider or model performs.")


def _clip(value: Any) -> Any:
    """Evidence with long strings cut, so the report stays readable."""
    if isinstance(value, str):
        return value if len(value) <= EVIDENCE_LIMIT else value[:EVIDENCE_LIMIT] + f"... [{len(value)} chars]"
    if isinstance(value, dict):
        return {k: _clip(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clip(v) for v in value]
    return value


def run_summary(record: dict[str, Any]) -> dict[str, Any]:
    """What the report keeps of one run."""
    transcript = record["transcript"]
    exchanges = transcript["exchanges"]
    usage_in = [e["parsed"]["usage"]["input_tokens"] for e in exchanges
                if e["parsed"]["usage"] and e["parsed"]["usage"]["input_tokens"] is not None]
    usage_out = [e["parsed"]["usage"]["output_tokens"] for e in exchanges
                 if e["parsed"]["usage"] and e["parsed"]["usage"]["output_tokens"] is not None]
    return {
        "target": record["target"],
        "scenario": record["scenario"],
        "category": record["category"],
        "repeat": record["repeat"],
        "score": record["score"],
        "passed": record["passed"],
        "error": record["error"] and {k: v for k, v in record["error"].items() if k != "traceback"},
        "stop_reason": transcript["stop_reason"],
        "turns": len(exchanges),
        "calls": [[c["name"], c["arguments"]] for e in exchanges for c in e["parsed"]["tool_calls"]],
        "usage": {"input_tokens": sum(usage_in) if usage_in else None,
                  "output_tokens": sum(usage_out) if usage_out else None},
        "recorded_latency_ms": [e["elapsed_ms"] for e in exchanges] if record["mode"] != "live" else None,
        "checks": {c["id"]: c["status"] for c in record["checks"]},
        "findings": [_clip(f) for c in record["checks"] for f in c["findings"] if not f["passed"]],
    }


def notes(records: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Per target: the informational findings (unsupported features, endpoint quirks), once each."""
    found: dict[str, set[str]] = {}
    for record in records:
        for check in record["checks"]:
            for finding in check["findings"]:
                if not finding["passed"] and finding["severity"] == "info":
                    found.setdefault(record["target"], set()).add(f"{finding['check_id']}: {finding['detail']}")
    return {target: sorted(items) for target, items in sorted(found.items())}


def build(records: list[dict[str, Any]], generated_at: str | None = None) -> dict[str, Any]:
    modes = sorted({r["mode"] for r in records})
    return {
        "schema": SCHEMA,
        "generated_at": generated_at or datetime.now(UTC).isoformat(timespec="seconds"),
        "harness_version": __version__,
        "mode": modes[0] if len(modes) == 1 else modes,
        "simulated_note": SIMULATED_NOTE,
        "summary": aggregate(records),
        "notes": notes(records),
        "runs": [run_summary(r) for r in records],
    }


def write(report: dict[str, Any], records: list[dict[str, Any]], out_dir: Path) -> Path:
    path = out_dir / "report.json"
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    return path
