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


def verdicts(record: RunRecord) -> tuple[Any, ...]:
    return (
        record.error,
        record.score,
        [(c.id, c.status, [f.detail for f in c.findings]) for c in record.checks],
    )


def check(record: RunRecord, check_id: str) -> CheckResult:
    return next(c for c in record.checks if c.id == check_id)


def asked(question: str) -> dict[str, Any]:
    """A scenario change: ``question`` asked of the code index tools' assistant."""
    system = "You answer questions about a code base with the code index tools."
    return {"messages": [{"role": "system", "content": system}, {"role": "user", "content": question}]}


def deleted_at_once(request: str, *, confirm: bool = False) -> dict[str, Any]:
    """A scenario change: ``request`` answered by deleting README.md at once (no question, no
    follow-up), the scenario naming the tool in ``confirm_before`` or not."""
    expect: dict[str, Any] = {
        "calls": [{"name": "mcp__codeindex__delete_file", "args": {"path": "README.md"}}],
        "final": {"contains": "deleted"},
    }
    if confirm:
        expect["confirm_before"] = ["mcp__codeindex__delete_file"]
    return {"messages": [{"role": "user", "content": request}], "expect": expect, "follow_ups": None}


def test_each_case_passes_conformant_and_is_caught_otherwise(tmp_path: Path) -> None:
    bundled = [s for s in scenarios.load([REPO / "scenarios" / "mcp"]) if s.id in CASES]
    broken = [
        variant(
            tmp_path, "mcp.structured.with_schema", asked("Lines in geometry?"), "file_info_nonconformant"
        ),
        variant(
            tmp_path, "mcp.error.input_is_error", asked("Lines 30-35 of README?"), "read_lines_nonconformant"
        ),
        variant(tmp_path, "mcp.confirm.delete_file", deleted_at_once("Delete README.md now.", confirm=True)),
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


def test_the_other_cases_pass_conformant_and_are_caught_otherwise(tmp_path: Path) -> None:
    """Structured content without its JSON as text, progress that goes down, a tool name longer
    than MCP allows, a destructive tool (by its annotations alone) called without asking, and a
    call cut short: each caught by its check, where the bundled conformant scenario passes; the
    same verdicts recorded and replayed (the MCP recording keeps what the checks read)."""
    from harness.servers.mcp_fixture.cases import TOO_LONG_NAME

    names = ("mcp.structured.without_schema", "mcp.progress.reindex", "mcp.naming.long_128")
    bundled = [s for s in scenarios.load([REPO / "scenarios" / "mcp"]) if s.id in names]
    opening = {s.id: [{"role": m.role, "content": m.content} for m in s.messages] for s in bundled}

    def reworded(name: str, why: str) -> dict[str, Any]:
        """A scenario change: the opening's last message with ``why`` added (the simulator tells
        scenarios apart by their openings)."""
        *before, last = opening[name]
        return {"messages": [*before, {**last, "content": f"{last['content']} ({why})"}]}

    broken = [
        variant(tmp_path, names[0], reworded(names[0], "as text"), "file_stats_nonconformant"),
        variant(tmp_path, names[1], reworded(names[1], "counting down"), "reindex_nonconformant"),
        variant(tmp_path, names[2], reworded(names[2], "one character more"), TOO_LONG_NAME),
        variant(tmp_path, "mcp.confirm.delete_file", deleted_at_once("Delete README.md now, no questions.")),
    ]
    slow = variant(tmp_path, names[1], reworded(names[1], "in 50 steps"), None)
    data = yaml.safe_load(Path(slow.path).read_text())
    data["id"] = "mcp.progress.cut_short"
    data["mcp_servers"]["codeindex"]["timeout_s"] = 4  # to start (a loaded machine is slow) and to answer
    data["expect"]["calls"][0]["args"] = {"steps": 60}  # 12 s
    cut = tmp_path / "cut.yaml"
    cut.write_text(yaml.safe_dump(data))
    broken.append(scenarios.load_file(cut)[0])
    suite = bundled + broken
    records = {r.scenario: r for r in run([SIM], suite, RunConfig(mode="record", cassettes=tmp_path / "c"))}
    replayed = run([SIM], suite, RunConfig(cassettes=tmp_path / "c"))
    assert {r.scenario: verdicts(r) for r in replayed} == {k: verdicts(r) for k, r in records.items()}
    good = [records[name] for name in names]
    assert [r.outcome for r in good] == ["pass"] * 3, [
        [(c.id, c.status, [f.detail for f in c.findings]) for c in r.checks if c.status != "pass"]
        for r in good
    ]
    assert check(records[names[1]], "protocol.mcp_progress").status == "pass"
    assert check(records[names[2]], "protocol.mcp_servers").status == "pass"

    text = check(records[f"{names[0]}.nonconformant"], "protocol.mcp_output_schema")
    assert text.status == "warn" and "without its JSON in a text block" in text.findings[0].detail
    progress = check(records[f"{names[1]}.nonconformant"], "protocol.mcp_progress")
    assert progress.status == "fail" and "progress 2 after 3" in progress.findings[0].detail
    named = check(records[f"{names[2]}.nonconformant"], "protocol.mcp_servers")
    assert named.status == "warn" and "129 characters" in named.findings[0].detail
    unasked = check(records["mcp.confirm.delete_file.nonconformant"], "protocol.confirm_before")
    assert unasked.status == "warn" and "annotated destructiveHint" in unasked.findings[0].detail
    cut_short = records["mcp.progress.cut_short"]
    servers = check(cut_short, "protocol.mcp_servers")
    assert servers.status == "fail" and "gave no answer within 4s" in servers.findings[0].detail
    assert cut_short.error is None and cut_short.score == 100  # the server's fault, not the model's
