"""``report.md``: the target x category matrix, then what failed and why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness import secrets
from harness.records import RunRecord


def cell(score: float | None) -> str:
    return "-" if score is None else f"{score:.0f}" if score == int(score) else f"{score:.1f}"


def target_label(name: str, info: dict[str, Any]) -> str:
    return f"{name} (simulated)" if info["simulated"] else name


def matrix(report: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the target x category table (shared by the CLI and markdown)."""
    targets = report["summary"]["targets"]
    categories = sorted({c for t in targets.values() for c in t["categories"]})
    header = ["target", "mode", "model", *categories, "score", "grade", "pass@1"]
    rows = []
    for name, t in targets.items():
        info = t["info"]
        rows.append(
            [
                target_label(name, info),
                info["mode"] + (" stream" if info["stream"] else ""),
                info["model"],
                *[cell(t["categories"].get(c, {}).get("score")) for c in categories],
                cell(t["score"]),
                "-" if t["grade"] is None else str(t["grade"]),
                "-" if t["pass_at_1"] is None else f"{100 * t['pass_at_1']:.0f}%",
            ]
        )
    return header, rows


def endpoint_fault_lines(report: dict[str, Any]) -> list[str]:
    """One line per target whose endpoint failed runs (shared by the CLI and markdown): what the
    endpoint did, counted in runs, so a low score is not read as the model's."""
    lines = []
    for name, t in report["summary"]["targets"].items():
        faults = t.get("endpoint_faults") or {}
        if faults:
            counted = ", ".join(f"{what} in {n} run{'s' if n != 1 else ''}" for what, n in faults.items())
            lines.append(f"{target_label(name, t['info'])}: {counted}")
    return lines


def _exchange(exchange: dict[str, Any]) -> list[str]:
    """A turn's wire request and response, folded, as the evidence behind its findings."""
    request, response = exchange["request"], exchange["response"]
    body = json.dumps(request["body"], indent=1, ensure_ascii=False)
    return [
        f"<details><summary>turn {exchange['turn']}: {request['method']} {request['url']} "
        f"→ HTTP {response['status']}</summary>",
        "",
        "Request body:",
        "",
        "~~~~json",
        body,
        "~~~~",
        "",
        "Response body:",
        "",
        "~~~~",
        response["body"] or "(empty)",
        "~~~~",
        "",
        "</details>",
        "",
    ]


def render(report: dict[str, Any]) -> str:
    summary = report["summary"]
    lines = [
        "# Tool-calling conformance report",
        "",
        f"Mode: {report['mode']} · {len(report['runs'])} runs · {summary['overall']['targets']} targets · "
        f"harness {report['harness_version']} · generated {report['generated_at']}",
        "",
    ]
    if summary["overall"]["simulated_targets"]:
        lines += [f"> {report['simulated_note']}", ""]
    header, rows = matrix(report)
    lines += ["## Scores (0-100)", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines += [
        "",
        "Scores weigh each category equally; grade 0-5; pass@1 is the share of runs with no failed check.",
        "",
    ]
    faults = endpoint_fault_lines(report)
    if faults:
        lines += ["### Caused by the endpoint, not the model", ""] + [f"- {line}" for line in faults] + [""]
    failing = [r for r in report["runs"] if not r["passed"]]
    lines += ["## Failed runs", ""]
    if not failing:
        lines += ["None.", ""]
    for run in failing:
        score = cell(run["score"])
        lines.append(f"### {run['target']} · {run['scenario']} (repeat {run['repeat']}, score {score})")
        lines.append("")
        if run["error"]:
            lines += [f"- **{run['error']['kind']}**: {run['error']['message']}"]
        for finding in run["findings"]:
            if finding["severity"] == "info":
                continue
            turn = f" (turn {finding['turn_index']})" if finding["turn_index"] is not None else ""
            detail = finding["detail"].replace("\n", " ")
            lines.append(f"- `{finding['check_id']}` {finding['severity']}{turn}: {detail}")
        lines.append("")
        for exchange in run["exchanges"]:
            lines += _exchange(exchange)
    if report["modes"]:
        lines += [
            "## Native vs prompted tool calling",
            "",
            "Tool prompt: what the tool definitions cost in the request, as JSON declarations "
            "(native) or as the text protocol's system prompt (prompted); tokens estimated at "
            "4 characters each.",
            "",
        ]
        for group in report["modes"]:
            sim = " (simulated)" if group["simulated"] else ""
            lines += [
                f"**{group['model']}** over {group['format']}{sim}",
                "",
                "| target | mode | score | tool prompt (chars) | tool prompt (~tokens) |",
                "|---|---|---|---|---|",
            ]
            lines += [
                f"| {r['target']} | {r['mode']} | {cell(r['score'])} | {r['tool_prompt_characters']} | "
                f"{r['tool_prompt_estimated_tokens']} |"
                for r in group["targets"]
            ]
            lines.append("")
    if report["notes"]:
        lines += ["## Notes: unsupported features, endpoint quirks, informational findings", ""]
        for target, items in report["notes"].items():
            lines.append(f"- **{target}**")
            lines += [
                f"  - `{item['id']}` in {item['runs']} run(s), e.g. {item['example']}" for item in items
            ]
        lines.append("")
    return "\n".join(lines)


def write(report: dict[str, Any], records: list[RunRecord], out_dir: Path) -> Path:
    path = out_dir / "report.md"
    path.write_text(secrets.redact(render(report)), encoding="utf-8")
    return path
