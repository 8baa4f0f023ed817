"""report.md's notes: a note several targets share word for word is listed once."""

from __future__ import annotations

from harness.reports.markdown import _note_lines
from harness.reports.report import Note


def test_a_note_shared_by_several_targets_is_listed_once_with_them_counted() -> None:
    shared = "MCP tool 'delete_file' is annotated destructiveHint=true"
    notes = {
        f"sim-{n}": [Note("mcp.tool_annotations", 2, shared)]
        + ([Note("wire.quirk", 1, "own")] if n == 0 else [])
        for n in range(5)
    }
    lines = _note_lines(notes)
    assert lines[:2] == [
        "- **several targets**",
        f"  - `mcp.tool_annotations` on 5 targets, 10 run(s), e.g. {shared}",
    ]
    assert lines[2:] == [
        "- **sim-0**",
        "  - `wire.quirk` in 1 run(s), e.g. own",
    ]  # the others hold no note of their own
    few = _note_lines({t: [Note("wire.x", 1, "same")] for t in ("a", "b", "c")})
    assert few[1] == "  - `wire.x` on 3 targets (a, b, c), 3 run(s), e.g. same"
    assert _note_lines({"a": [Note("wire.x", 1, "same")], "b": [Note("wire.x", 1, "same")]}) == [
        "- **a**",
        "  - `wire.x` in 1 run(s), e.g. same",
        "- **b**",
        "  - `wire.x` in 1 run(s), e.g. same",
    ]
