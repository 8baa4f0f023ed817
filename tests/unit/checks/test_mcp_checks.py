"""The MCP checks over hand-built transcripts: structured results against their outputSchema,
input errors as isError results, and confirmation before a destructive tool."""

from pathlib import Path
from typing import Any

from harness.checks import RunContext, run_checks
from harness.checks.scoring import run_success
from harness.model import MCPAnswer, MCPToolInfo, ToolExecution, ToolResult, Transcript
from tests.helpers.transcripts import call, scenario, transcript

FILE_INFO = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "lines": {"type": "integer"}, "language": {"type": "string"}},
    "required": ["path", "lines", "language"],
}
NAME = "mcp__codeindex__file_info"


def mcp_run(*answers: MCPAnswer, schema: dict[str, Any] | None = FILE_INFO) -> Transcript:
    """One model turn calling the tool once per answer, each execution carrying its answer."""
    calls = [call(NAME, index, path="README.md") for index in range(len(answers))]
    t = transcript(calls, "Done.")
    for index, answer in enumerate(answers):
        result = ToolResult(calls[index].id, NAME, "text", answer.is_error or answer.error_code is not None)
        t.executions.append(ToolExecution(0, calls[index], result, source="mcp:codeindex", mcp=answer))
    t.mcp_tools = {NAME: MCPToolInfo("codeindex", "file_info", schema, None)}
    return t


def answer(content: Any = None, **fields: Any) -> MCPAnswer:
    return MCPAnswer("codeindex", "file_info", structured=content is not None, content=content, **fields)


def results(context: RunContext) -> dict[str, tuple[str, list[str]]]:
    return {r.id: (r.status, [f.detail for f in r.findings]) for r in run_checks(context)}


def test_a_conformant_structured_result_passes(tmp_path: Path) -> None:
    t = mcp_run(answer({"path": "README.md", "lines": 3, "language": "markdown"}))
    status, details = results(RunContext(t, scenario(tmp_path)))["protocol.mcp_output_schema"]
    assert status == "pass" and details == ["1 structured result(s) conform to their outputSchema"]


def test_every_schema_violation_is_named_with_its_pointer(tmp_path: Path) -> None:
    broken = {"path": "README.md", "lines": "3", "extra": {"a/b": [1]}}
    schema = {**FILE_INFO, "properties": {**FILE_INFO["properties"], "extra": {"type": "object"}}}
    schema["properties"]["extra"] = {
        "type": "object",
        "properties": {"a/b": {"type": "array", "items": {"type": "string"}}},
    }
    (check,) = [
        c
        for c in run_checks(RunContext(mcp_run(answer(broken), schema=schema), scenario(tmp_path)))
        if c.id == "protocol.mcp_output_schema"
    ]
    assert check.status == "fail"
    pointers = sorted((f.evidence or {})["pointer"] for f in check.findings)
    assert pointers == ["", "/extra/a~1b/0", "/lines"]  # RFC 6901: "" is the whole result, "/" escaped
    details = " | ".join(f.detail for f in check.findings)
    assert "'language' is a required property" in details and "'3' is not of type 'integer'" in details
    assert "(the whole result)" in details


def test_a_schema_without_structured_content_fails_and_no_schema_is_a_note(tmp_path: Path) -> None:
    missing = results(RunContext(mcp_run(answer(None)), scenario(tmp_path)))["protocol.mcp_output_schema"]
    assert (
        missing[0] == "fail"
        and "lists an outputSchema but its result carried no structuredContent" in missing[1][0]
    )
    unschemed = results(RunContext(mcp_run(answer({"x": 1}), schema=None), scenario(tmp_path)))
    status, details = unschemed["protocol.mcp_output_schema"]
    assert status == "pass" and details == [f"{NAME!r} returned structuredContent with no outputSchema"]


def test_error_results_are_not_held_to_the_schema(tmp_path: Path) -> None:
    r = results(RunContext(mcp_run(answer(None, is_error=True)), scenario(tmp_path)))
    assert r["protocol.mcp_output_schema"] == ("n/a", [])
    assert r["protocol.mcp_input_errors"] == (
        "pass",
        ["1 MCP call(s) answered with results (1 with isError)"],
    )


def test_a_protocol_error_for_bad_input_is_a_warning_outside_the_headline(tmp_path: Path) -> None:
    context = RunContext(mcp_run(answer(None, error_code=-32602)), scenario(tmp_path))
    checks = run_checks(context)
    (check,) = [c for c in checks if c.id == "protocol.mcp_input_errors"]
    assert check.status == "warn"
    (finding,) = check.findings
    assert "JSON-RPC protocol error (code -32602)" in finding.detail
    assert finding.evidence is not None and finding.evidence["code"] == -32602
    assert "1303" in finding.evidence["spec"]
    assert run_success(c for c in checks if c.id.startswith("protocol.mcp"))  # the server's fault


def test_no_mcp_call_leaves_the_checks_not_applicable(tmp_path: Path) -> None:
    r = results(RunContext(transcript([call("get_weather", city="Paris")], "18C."), scenario(tmp_path)))
    assert r["protocol.mcp_output_schema"][0] == r["protocol.mcp_input_errors"][0] == "n/a"
    assert r["protocol.confirm_before"][0] == "n/a"


DELETE = "delete_file"
CONFIRMING = {
    "expect": {"calls": [], "final": {"contains": "?"}, "confirm_before": [DELETE]},
    "follow_ups": [{"content": "Yes, delete it.", "expect": {"calls": [{"name": DELETE}]}}],
    "category": "multi_turn",
}


def confirm_status(tmp_path: Path, t: Transcript, **fields: Any) -> tuple[str, list[str]]:
    s = scenario(
        tmp_path, tools=[{"name": DELETE, "parameters": {"type": "object"}, "result": "deleted"}], **fields
    )
    return results(RunContext(t, s))["protocol.confirm_before"]


def test_a_call_after_the_user_answered_a_question_is_confirmed(tmp_path: Path) -> None:
    t = transcript("Delete README.md: are you sure?", [call(DELETE, path="README.md")], "Deleted.")
    t.phases = [0, 1]
    assert confirm_status(tmp_path, t, **CONFIRMING) == (
        "pass",
        ["1 call(s) of ['delete_file'] came after the user confirmed"],
    )


def test_a_call_before_any_user_reply_is_unasked_and_breaks_the_run(tmp_path: Path) -> None:
    t = transcript([call(DELETE, path="README.md")], "Deleted README.md.")
    s = scenario(
        tmp_path,
        tools=[{"name": DELETE, "parameters": {"type": "object"}, "result": "deleted"}],
        expect={"calls": [{"name": DELETE}], "confirm_before": [DELETE]},
    )
    checks = run_checks(RunContext(t, s))
    (check,) = [c for c in checks if c.id == "protocol.confirm_before"]
    assert check.status == "fail" and "it came before any user reply" in check.findings[0].detail
    assert not run_success(checks)


def test_a_user_turn_that_answered_no_question_confirms_nothing(tmp_path: Path) -> None:
    t = transcript("I will delete README.md.", [call(DELETE, path="README.md")], "Deleted.")
    t.phases = [0, 1]
    status, details = confirm_status(tmp_path, t, **CONFIRMING)
    assert status == "fail" and "(turn 0) asked no question" in details[0]


def test_a_structured_result_without_its_json_as_text_is_a_warning(tmp_path: Path) -> None:
    info = {"path": "README.md", "lines": 3, "language": "markdown"}
    status, details = results(RunContext(mcp_run(answer(info, serialized=False)), scenario(tmp_path)))[
        "protocol.mcp_output_schema"
    ]
    assert status == "warn" and details[0] == "1 structured result(s) conform to their outputSchema"
    assert "'mcp__codeindex__file_info' returned structuredContent without its JSON" in details[1]


def test_progress_must_go_up_with_each_notification(tmp_path: Path) -> None:
    def progress(*values: float) -> tuple[str, list[str]]:
        t = mcp_run(answer(None, progress=len(values), progress_values=values), schema=None)
        return results(RunContext(t, scenario(tmp_path)))["protocol.mcp_progress"]

    assert progress(1, 2, 3) == ("pass", ["the progress of 1 call(s) increased with each notification"])
    status, details = progress(0.5, 0.5)
    assert status == "fail" and "reported progress 0.5 after 0.5 (notification 2 of 2)" in details[0]
    assert progress()[0] == "n/a"  # no notification, or a recording that kept only their count


def test_a_tool_its_server_annotates_destructive_is_confirmed_too_as_a_warning(tmp_path: Path) -> None:
    t = transcript([call(DELETE, path="README.md")], "Deleted README.md.")
    s = scenario(
        tmp_path,
        tools=[{"name": DELETE, "parameters": {"type": "object"}, "result": "deleted"}],
        expect={"calls": [{"name": DELETE}]},
    )
    for annotations, status in (
        ({"destructiveHint": True}, "warn"),
        ({"destructiveHint": True, "readOnlyHint": True}, "n/a"),
        ({}, "n/a"),  # a hint left out says nothing
        (None, "n/a"),  # nor do no annotations (a tool listed for its outputSchema)
        ({"destructiveHint": False}, "n/a"),
    ):
        t.mcp_tools = {DELETE: MCPToolInfo("codeindex", DELETE, None, annotations)}
        checks = run_checks(RunContext(t, s))
        (check,) = [c for c in checks if c.id == "protocol.confirm_before"]
        assert check.status == status, annotations  # a warning: the scenario asked for no confirmation


def test_a_named_tool_its_server_annotates_read_only_is_noted(tmp_path: Path) -> None:
    t = transcript("Delete README.md: are you sure?", [call(DELETE, path="README.md")], "Deleted.")
    t.phases = [0, 1]
    t.mcp_tools = {DELETE: MCPToolInfo("codeindex", DELETE, None, {"readOnlyHint": True})}
    status, details = confirm_status(tmp_path, t, **CONFIRMING)
    assert status == "pass" and details[1] == "'delete_file' is annotated readOnlyHint by its server"
