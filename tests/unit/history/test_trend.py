"""The trend panels the HTML report shows: well-formed inline SVG with no reference to anything
outside it, every text escaped (a target name or run id holding markup stays text), a gap where
a run has no figure."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from harness.history.facts import RunFacts
from harness.history.store import History
from harness.history.trend import trend_html, trend_section, trend_svg

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = '<script>alert("x")</script>&'


def rows(*scores: float | None) -> list[dict[str, object]]:
    return [
        {"run_id": f"run-{i}", "started": f"2026-11-2{i}T10:00:00Z", "score": s, "compliance": 90.0}
        for i, s in enumerate(scores)
    ]


def test_one_dot_per_figure_and_a_line_through_them() -> None:
    svg = ET.fromstring(trend_svg(rows(50.0, 75.0, 100.0), "sim-openai"))
    assert len(svg.findall(f"{SVG}circle")) == 6  # headline and compliance, 3 runs each
    lines = svg.findall(f"{SVG}polyline")
    assert len(lines) == 2 and len(lines[0].get("points", "").split()) == 3
    tips = [c.findtext(f"{SVG}title") for c in svg.findall(f"{SVG}circle")]
    assert "headline 75 in run run-1 (2026-11-21T10:00:00Z)" in tips


def test_a_run_without_a_figure_leaves_a_gap() -> None:
    svg = ET.fromstring(trend_svg(rows(50.0, None, 60.0, 70.0)))
    headline = [p for p in svg.findall(f"{SVG}polyline") if p.get("stroke") == "#1f6feb"]
    assert [len(p.get("points", "").split()) for p in headline] == [2]  # 50 alone, then 60-70
    assert len(svg.findall(f"{SVG}circle")) == 3 + 4


def test_a_single_run_is_a_dot() -> None:
    svg = ET.fromstring(trend_svg(rows(100.0)))
    assert not svg.findall(f"{SVG}polyline") and len(svg.findall(f"{SVG}circle")) == 2


def _hostile_history(path: Path) -> None:
    target = {
        "run_id": HOSTILE, "target": HOSTILE, "format": "openai-chat", "model": "m", "simulated": True,
        "server": None, "score": 80.0, "score_low": 60.0, "score_high": 90.0, "grade": 3,
        "compliance": None, "call_turns": 0, "clean_turns": 0, "pass_at_1": 0.8, "runs": 5,
        "tested": 5, "errors": 0, "latency_p50_ms": None, "latency_p95_ms": None,
    }  # fmt: skip
    run = {
        "run_id": HOSTILE, "started": "2026-11-21T10:00:00Z", "finished": None, "mode": "replay",
        "harness_version": "0.1.0", "source": "api", "targets": 1, "runs": 5,
    }  # fmt: skip
    with History.open(path) as db:
        db.add(RunFacts(run, [target], [], []))
        later = {"run_id": "run-2", "started": "2026-11-22T10:00:00Z"}
        db.add(RunFacts({**run, **later}, [{**target, **later, "score": 90.0}], [], []))


def test_the_section_escapes_every_name_and_skips_targets_without_history(tmp_path: Path) -> None:
    _hostile_history(tmp_path / "h.sqlite")
    with History.open(tmp_path / "h.sqlite") as db:
        html = trend_section(db, [HOSTILE, "sim-never-ran"])
        assert trend_section(db, ["sim-never-ran"]) == ""
    assert "<script>" not in html and "&lt;script&gt;" in html
    section = ET.fromstring(html.replace("&#9632;", "#"))  # well-formed: the markup is its own
    assert len(section.findall("figure")) == 1
    assert "http" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")  # nothing fetched


def test_the_run_being_reported_is_drawn_last_and_one_run_is_no_trend(tmp_path: Path) -> None:
    _hostile_history(tmp_path / "h.sqlite")
    with History.open(tmp_path / "h.sqlite") as db:
        (row,) = [r for r in db.target_runs(HOSTILE) if r["run_id"] == "run-2"]
        run = db.runs()[-1]
    current = RunFacts(
        {**run, "run_id": "run-3", "started": "2026-11-23T10:00:00Z"}, [{**row, "score": 10.0}], [], []
    )
    html = trend_html(tmp_path / "h.sqlite", [HOSTILE], current)
    assert (
        "headline 10 in run run-3 (2026-11-23T10:00:00Z)" in html and "3 run(s); latest headline 10" in html
    )
    assert trend_html(tmp_path / "h.sqlite", [HOSTILE], RunFacts(run, [row], [], [])).count("<circle") == 2
    assert trend_section(None, [HOSTILE], current) == ""  # the first run: no trend yet


def test_no_history_means_no_section(tmp_path: Path) -> None:
    assert trend_html(tmp_path / "none.sqlite", ["sim-openai"]) == ""
    assert trend_html(None, ["sim-openai"]) == ""
    assert not (tmp_path / "none.sqlite").exists()
