"""The bundled suite's summary: report.md stays a summary (one line per failed run, the full
evidence in report.html and report.json), the endpoint's faults are in each target's row, and a
narrow log shows every target name whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import scenarios
from harness.api import run_targets
from harness.reports import write_reports
from harness.reports.markdown import matrix, stacked, step_summary
from harness.reports.report import Report
from harness.runner import RunConfig
from harness.targets_file import load_targets
from tests.helpers.cli import REPO


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Report, Path]:
    out = tmp_path_factory.mktemp("bundled")
    records = run_targets(
        list(load_targets().values()),
        scenarios.load([REPO / "scenarios"]),
        RunConfig(results=out / "results.jsonl"),
    )
    report, _ = write_reports(records, out)
    return report, out


def test_report_md_is_a_summary_under_100_kb(bundled: tuple[Report, Path]) -> None:
    report, out = bundled
    text = (out / "report.md").read_text()
    assert len(text.encode()) < 100_000
    failed = [r for r in report.runs if not r.passed]
    assert failed and f"## Failed runs ({len(failed)})" in text
    for target in {r.target for r in failed}:  # each target's failed runs, the worst listed
        group = [r for r in failed if r.target == target]
        assert f"### {target} ({len(group)} failed)" in text
        worst = min(group, key=lambda r: (-1 if r.score is None else r.score, r.scenario))
        assert f"- {worst.scenario}" in text.split(f"### {target} (")[1]
    assert "## Checks: share of applicable runs passed (%)" in text and "`protocol.tools_delivered`" in text
    assert "<details>" not in text  # the wire evidence lives in report.html and report.json


def test_what_the_endpoint_caused_is_in_the_targets_row(bundled: tuple[Report, Path]) -> None:
    report, out = bundled
    targets = report.summary.targets
    suite = scenarios.load([REPO / "scenarios"])
    refusals = sum(s.expect.refused is not None for s in suite)  # one request, no tools asked of it
    runs = targets["local-llamacpp-gemma3-270m"].runs - refusals
    assert targets["local-llamacpp-gemma3-270m"].endpoint_faults["tools not delivered"] == runs
    assert "local-llamacpp-gemma3-270m: tools not delivered in" in (out / "report.md").read_text()
    # the server that drops the tools never outscores the one that delivers them, and made no call
    dropping, delivering = targets["local-llamacpp-gemma3-270m"], targets["local-gemma3-270m"]
    assert dropping.score is not None and delivering.score is not None
    assert dropping.score <= delivering.score
    assert dropping.compliance is None and delivering.compliance is not None
    assert delivering.compliance.call_turns > 0
    latency = targets["local-gemma3-270m"].latency_ms
    assert latency is not None and latency.exchanges > 0


def test_a_narrow_log_shows_every_target_name_whole(bundled: tuple[Report, Path]) -> None:
    report, _ = bundled
    header, rows = matrix(report)
    lines = stacked(header, rows)
    assert all(len(line) <= 80 for line in lines)
    for row in rows:
        assert row[0] in lines


def test_the_github_step_summary_is_compact(bundled: tuple[Report, Path]) -> None:
    report, _ = bundled
    text = step_summary(report, "reports")
    assert len(text.encode()) < 1024 * 1024 and "| local-gemma3-270m |" in text
    assert "Full reports: `reports/report.html`" in text


def test_columns_80_piped_shows_every_target_name_whole(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "COLUMNS": "80"}
    result = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
    )
    assert result.returncode in (0, 1), result.stderr
    lines = result.stdout.splitlines()
    recorded = {path.name for path in (REPO / "cassettes").iterdir() if path.is_dir()}
    for name in recorded:  # the targets of the default run
        assert any(line == name or line == f"{name} (simulated)" for line in lines), name
    assert all(len(line) <= 80 for line in lines if not line.startswith("caused by"))
