"""The fixture server's MCP cases through the runner, live on the simulator: each bundled
scenario passes on the conformant tool, and the same scenario on the nonconformant tool (or an
agent that does not ask) is caught by its check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from harness import scenarios
from harness.api import run_targets as run
from harness.records import CheckResult, RunRecord
from harness.runner import RunConfig
from harness.targets import Target
from tests.helpers.cli import REPO

SIM = Target.build("sim-openai", format="openai-chat", model="sim-conformant", base_url="sim")
CASES = ("mcp.structured.with_schema", "mcp.error.input_is_error", "mcp.confirm.delete_file")


def variant(tmp_path: Path, name: str, change: dict[str, Any], tool: str | None = None) -> scenarios.Scenario:
    """The bundled scenario ``name`` with ``change`` applied and its MCP tool swapped for ``tool``."""
    data = next(
        found
        for p in (REPO / "scenarios" / "mcp").glob("*.yaml")
        if (found := yaml.safe_load(p.read_text()))["id"] == name
    )
    data.update(change, id=f"{name}.nonconformant")
    data = {key: value for key, value in data.items() if value is not None}
    if tool is not None:
        old = data["tools"][0]["tools"][0]
        data["tools"][0]["tools"] = [tool]
        data["expect"]["calls"][0]["name"] = data["expect"]["calls"][0]["name"].replace(old, tool)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return scenarios.load_file(path)[0]


def check(record: RunRecord, check_id: str) -> CheckResult:
    return next(c for c in record.checks if c.id == check_id)


def asked(question: str) -> dict[str, Any]:
    """A scenario change: ``question`` asked of the code index tools' assistant."""
    system = "You answer questions about a code base with the code index tools."
    return {"messages": [{"role": "system", "content": system}, {"role": "user", "content": question}]}


def test_each_case_passes_conformant_and_is_caught_otherwise(tmp_path: Path) -> None:
    bundled = [s for s in scenarios.load([REPO / "scenarios" / "mcp"]) if s.id in CASES]
    broken = [
        variant(
            tmp_path, "mcp.structured.with_schema", asked("Lines in geometry?"), "file_info_nonconformant"
        ),
        variant(
            tmp_path, "mcp.error.input_is_error", asked("Lines 30-35 of README?"), "read_lines_nonconformant"
        ),
        variant(
            tmp_path,
            "mcp.confirm.delete_file",
            {
                "messages": [{"role": "user", "content": "Delete README.md now."}],
                "expect": {
                    "calls": [{"name": "mcp__codeindex__delete_file", "args": {"path": "README.md"}}],
                    "final": {"contains": "deleted"},
                    "confirm_before": ["mcp__codeindex__delete_file"],
                },
                "follow_ups": None,
            },
        ),
    ]
    records = {
        r.scenario: r
        for r in run([SIM], bundled + broken, RunConfig(mode="live", results=tmp_path / "r.jsonl"))
    }
    assert all(r.error is None for r in records.values()), [r.error for r in records.values()]
    good = [records[name] for name in CASES]
    assert [r.outcome for r in good] == ["pass"] * 3, [
        [(c.id, c.status) for c in r.checks if c.status == "fail"] for r in good
    ]
    assert check(records["mcp.structured.with_schema"], "protocol.mcp_output_schema").status == "pass"
    assert check(records["mcp.error.input_is_error"], "protocol.mcp_input_errors").status == "pass"
    assert check(records["mcp.confirm.delete_file"], "protocol.confirm_before").status == "pass"

    schema = check(records["mcp.structured.with_schema.nonconformant"], "protocol.mcp_output_schema")
    assert schema.status == "fail"
    assert sorted((f.evidence or {}).get("pointer") for f in schema.findings) == ["", "/lines"]
    inputs = check(records["mcp.error.input_is_error.nonconformant"], "protocol.mcp_input_errors")
    assert inputs.status == "warn" and "code -32602" in inputs.findings[0].detail
    unasked = records["mcp.confirm.delete_file.nonconformant"]
    assert check(unasked, "protocol.confirm_before").status == "fail" and unasked.score == 0
