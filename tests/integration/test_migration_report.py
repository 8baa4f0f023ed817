"""Switching wires on a real replayed run: the bundled cassettes of the simulator's Chat Completions
and Responses targets, and a Responses target on a deviating simulator (``sim~text-leak``, its
calls streamed as text) that names the chat target with ``migrates_from``, recorded here and
replayed beside them. Every report names what changes, on which wire, and who caused it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.reports.html import FILES, read_details
from tests.helpers.cli import deviant_beside, harness

CHAT, RESPONSES, DEVIANT = "sim-openai-stream", "sim-openai-responses-stream", "responses-text-leak"
SCENARIOS = ("weather.single.paris", "weather.parallel.two_cities", "irrelevance.greeting")
CONFIG = f"""[targets.{DEVIANT}]
format = "openai-responses"
model = "sim-conformant"
base_url = "sim~text-leak"
stream = true
migrates_from = "{CHAT}"
"""


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reports of the three targets replayed together (the deviant's cassettes recorded first)."""
    root = tmp_path_factory.mktemp("migration")
    return deviant_beside(root, (CHAT, RESPONSES), DEVIANT, CONFIG, SCENARIOS)


def test_the_json_report_names_each_difference_with_its_wire_status_and_cause(replayed: Path) -> None:
    report = json.loads((replayed / "report.json").read_text())
    assert report["mode"] == "replay"
    (group,) = report["migrations"]
    assert [(r["target"], r["format"], r["endpoint"]) for r in group["targets"]] == [
        (CHAT, "openai-chat", "sim"),  # the target the deviant migrates from comes first
        (DEVIANT, "openai-responses", "sim~text-leak"),
        (RESPONSES, "openai-responses", "sim"),
    ]
    for row in group["targets"]:  # the headline as the Scores table has it
        target = report["summary"]["targets"][row["target"]]
        assert (row["score"], row["interval"]) == (target["score"], target["interval"])
    assert group["declared"] and group["model"] == "sim-conformant" and group["endpoint"] is None
    assert group["apart"] == []  # three scenarios cannot tell 100 from 33: said, not ranked
    assert group["compared"] == 3
    differing = {d["scenario"]: d for d in group["differences"]}
    assert sorted(differing) == [
        "weather.parallel.two_cities",
        "weather.single.paris",
    ]  # no call in the greeting
    paris = differing["weather.single.paris"]
    assert paris["outcome"] == {
        CHAT: {"status": "pass"},
        RESPONSES: {"status": "pass"},
        DEVIANT: {"status": "fail", "cause": "model"},
    }
    checks = {c["check"]: c["targets"] for c in paris["checks"]}
    assert checks["protocol.native_delivery"][DEVIANT]["cause"] == "model"
    assert checks["protocol.native_delivery"][DEVIANT]["detail"].startswith(
        "a tool call leaked into the text"
    )
    wire = checks["protocol.wire"][DEVIANT]
    assert (wire["status"], wire["cause"], wire["findings"]) == (
        "warn",
        "endpoint",
        ["wire.call_streamed_as_text"],
    )
    assert all(verdicts[CHAT] == verdicts[RESPONSES] == {"status": "pass"} for verdicts in checks.values())
    changes = {(c["check"], c["target"], c["status"], c["cause"]): c["scenarios"] for c in group["changes"]}
    assert changes[("protocol.wire", DEVIANT, "warn", "endpoint")] == 2
    assert changes[("expect.parallel", DEVIANT, "fail", "model")] == 1


def test_markdown_and_html_show_the_same_differences(replayed: Path) -> None:
    text = (replayed / "report.md").read_text()
    section = text[text.index("## Switching wires") :]
    assert f"| {DEVIANT} | openai-responses | sim-conformant | sim~text-leak | 33.3 (6-79) |" in section
    assert "The success figures cannot tell these wires apart" in section
    caused = f"protocol.wire warn on {DEVIANT}, caused by the endpoint (wire.call_streamed_as_text)"
    assert f"{caused}, in 2 scenarios" in section
    assert (
        f"- `weather.single.paris` (single), outcome: pass on {CHAT}, {RESPONSES}; fail on {DEVIANT} (model)"
        in section
    )
    page = (replayed / "report.html").read_text()
    assert '<a href="#migrations">Switching wires</a>' in page
    assert '<details class="wire-rows" data-group="0"><summary>scenario by scenario</summary>' in page
    (wires,) = (replayed / FILES).glob("wires-*.js")  # the rows, loaded when opened
    rows = json.loads(wires.read_text(encoding="ascii").split(", ", 1)[1].removesuffix(");\n"))
    assert f'<a href="#run-{DEVIANT}/weather.single.paris/0">fail</a>' in rows
    assert f"run-{DEVIANT}/weather.single.paris/0" in read_details(replayed / FILES)  # the link lands on it


def test_the_conformant_wires_alone_differ_nowhere(replayed: Path, tmp_path: Path) -> None:
    results = [line for line in (replayed / "results.jsonl").read_text().splitlines() if DEVIANT not in line]
    (tmp_path / "results.jsonl").write_text("\n".join(results) + "\n")
    shutil.copy(replayed / "results.shared.jsonl.gz", tmp_path)  # the values the lines refer to
    rebuilt = harness("report", tmp_path / "results.jsonl", "--out", tmp_path / "out")
    assert rebuilt.returncode == 0, rebuilt.stderr
    (group,) = json.loads((tmp_path / "out" / "report.json").read_text())["migrations"]
    assert [r["target"] for r in group["targets"]] == [CHAT, RESPONSES] and not group["declared"]
    assert group["differences"] == [] and group["compared"] == 3
    assert "No scenario differs between them (3 compared)." in (tmp_path / "out" / "report.md").read_text()
