"""What ``harness history`` shows, as data (``--json``) and as lines: the runs, and one target's
headline, compliance and every check over time, with the run where each check first failed.

Example::

    with History.open("reports/history.sqlite") as db:
        view = target_view(db, "local-gemma3-270m")
        print(view["checks"]["protocol.json_valid"]["first_failed"])
"""

from __future__ import annotations

from typing import Any

from harness.errors import ConfigError
from harness.history.facts import Row
from harness.history.store import History


def target_view(db: History, target: str) -> dict[str, Any]:
    """A target over time: per run (oldest first) its headline (``score`` with its interval),
    compliance, runs, errors, server and every check's verdict counts; per check, the first run
    where it failed (``None``: never) and whether it failed in the latest run. A target the
    history does not hold is a :class:`ConfigError` listing those it holds."""
    rows = db.target_runs(target)
    if not rows:
        known = ", ".join(db.targets()) or "none yet"
        raise ConfigError(f"history: no run of target {target!r}; targets in the history: {known}")
    by_run: dict[str, dict[str, Any]] = {}
    for row in rows:
        by_run[row["run_id"]] = {
            "run_id": row["run_id"],
            "started": row["started"],
            "mode": row["mode"],
            "harness_version": row["harness_version"],
            "server": row["server"],
            "score": row["score"],
            "interval": None if row["score_low"] is None else [row["score_low"], row["score_high"]],
            "compliance": row["compliance"],
            "runs": row["runs"],
            "tested": row["tested"],
            "errors": row["errors"],
            "checks": {},
        }
    checks: dict[str, dict[str, Any]] = {}
    latest = rows[-1]["run_id"]
    for row in db.target_checks(target):
        verdict = {k: row[k] for k in ("runs", "passed", "passes", "warns", "fails")}
        by_run[row["run_id"]]["checks"][row["check_id"]] = verdict
        check = checks.setdefault(row["check_id"], {"first_failed": None, "failing_now": False})
        if row["fails"] and check["first_failed"] is None:
            check["first_failed"] = {"run_id": row["run_id"], "started": row["started"]}
        if row["run_id"] == latest:
            check["failing_now"] = bool(row["fails"])
    return {"target": target, "runs": list(by_run.values()), "checks": dict(sorted(checks.items()))}


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def runs_lines(runs: list[Row]) -> list[str]:
    """The runs as a table, one line each."""
    if not runs:
        return ["no run in the history yet"]
    lines = [f"{'started':20}  {'run id':28}  {'mode':6}  {'targets':>7}  {'runs':>6}  harness"]
    for run in runs:
        lines.append(
            f"{run['started']:20}  {run['run_id']:28}  {run['mode']:6}  {run['targets']:>7}  "
            f"{run['runs']:>6}  {run['harness_version'] or '-'}"
        )
    return lines


def target_lines(view: dict[str, Any]) -> list[str]:
    """A target over time as a table (one line per run, its failing checks named), then each check
    that ever failed: the run where it first did, and whether it still fails."""
    lines = [f"{view['target']}: {len(view['runs'])} run(s)"]
    lines.append(
        f"{'started':20}  {'run id':28}  {'score':>6}  {'95% interval':>13}  {'compliance':>10}  "
        "failing checks (runs)"
    )
    for run in view["runs"]:
        interval = "-" if run["interval"] is None else "{:g}-{:g}".format(*run["interval"])
        failing = [f"{c}({v['fails']})" for c, v in run["checks"].items() if v["fails"]]
        lines.append(
            f"{run['started']:20}  {run['run_id']:28}  {_figure(run['score']):>6}  {interval:>13}  "
            f"{_figure(run['compliance']):>10}  {', '.join(failing) or '-'}"
        )
    failed = {c: v for c, v in view["checks"].items() if v["first_failed"]}
    lines.append("")
    if not failed:
        lines.append("no check failed in these runs")
    for check_id, check in failed.items():
        first = check["first_failed"]
        now = "fails in the latest run" if check["failing_now"] else "passes in the latest run"
        lines.append(f"{check_id}: first failed in run {first['run_id']} ({first['started']}); {now}")
    return lines
