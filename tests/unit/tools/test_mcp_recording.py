"""MCP recordings carry structured results, output schemas, annotations, protocol error codes and
progress through replay; recordings written before them replay as they did."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.errors import CassetteCorruptError
from harness.model import ToolCall
from harness.tools.mcp.session import MCPSession
from harness.tools.mcp.types import MCPUse
from harness.tools.run_tools import RunTools

SCHEMA = {"type": "object", "properties": {"lines": {"type": "integer"}}, "required": ["lines"]}
ANNOTATIONS = {"readOnlyHint": False, "destructiveHint": True}


def session(tmp_path: Path, tools: list[dict[str, Any]], calls: list[dict[str, Any]]) -> MCPSession:
    recording = tmp_path / "s.mcp.yaml"
    recording.write_text(
        yaml.safe_dump({"scenario": "s", "servers": {"code": tools}, "calls": calls, "issues": []})
    )
    use = MCPUse("s", tools=(("code", None),))
    return MCPSession("t", use, "openai-chat", recording, live=False, record=False, reserved=[]).start()


def registry(s: MCPSession) -> RunTools:
    tools = RunTools()
    for tool in s.tools():
        tools.add(tool)
    return tools


def test_structured_results_and_tool_info_replay(tmp_path: Path) -> None:
    tools = [
        {"name": "info", "input_schema": {"type": "object"}, "output_schema": SCHEMA},
        {"name": "delete", "input_schema": {"type": "object"}, "annotations": ANNOTATIONS},
    ]
    calls = [
        {
            "server": "code",
            "tool": "info",
            "arguments": {},
            "text": '{"lines": "3"}',
            "is_error": False,
            "structured_content": {"lines": "3"},
            "progress": 2,
        },
        {
            "server": "code",
            "tool": "delete",
            "arguments": {"path": "x"},
            "failure": "protocol error -32602",
            "error_code": -32602,
        },
    ]
    s = session(tmp_path, tools, calls)
    info = s.tool_info()
    assert (
        info["mcp__code__info"].output_schema == SCHEMA
        and info["mcp__code__delete"].annotations == ANNOTATIONS
    )
    run = registry(s)
    ok = run.execute(ToolCall("mcp__code__info", {}, id="c1"), turn=0)
    assert ok.result.content == '{"lines": "3"}' and not ok.result.is_error
    assert ok.mcp is not None and (ok.mcp.structured, ok.mcp.content, ok.mcp.progress) == (
        True,
        {"lines": "3"},
        2,
    )
    failed = run.execute(ToolCall("mcp__code__delete", {"path": "x"}, id="c2"), turn=0)
    assert failed.result.is_error and failed.mcp is not None and failed.mcp.error_code == -32602
    (note,) = [f for f in s.findings() if f.check_id == "mcp.tool_annotations"]
    assert note.severity == "info" and "destructiveHint=true" in note.detail


def test_a_recording_from_before_replays_without_structured_fields(tmp_path: Path) -> None:
    """What the committed recordings hold: no output_schema, annotations or structured_content."""
    tools = [{"name": "find", "description": "Find.", "input_schema": {"type": "object"}}]
    calls = [{"server": "code", "tool": "find", "arguments": {}, "text": "src/a.py", "is_error": False}]
    s = session(tmp_path, tools, calls)
    assert s.tool_info() == {} and not [f for f in s.findings() if f.check_id.startswith("mcp.")]
    execution = registry(s).execute(ToolCall("mcp__code__find", {}, id="c1"), turn=0)
    assert execution.result.content == "src/a.py" and execution.mcp is not None
    assert (execution.mcp.structured, execution.mcp.error_code, execution.mcp.progress) == (False, None, 0)


@pytest.mark.parametrize(
    ("tool", "call", "pointer"),
    [
        ({"output_schema": "object"}, {}, "/servers/code/0/output_schema"),
        ({"annotations": ["readOnlyHint"]}, {}, "/servers/code/0/annotations"),
        ({}, {"error_code": "-32602"}, "/calls/0/error_code"),
        ({}, {"progress": True}, "/calls/0/progress"),
    ],
)
def test_a_malformed_new_field_is_refused_with_its_place(
    tmp_path: Path, tool: dict[str, Any], call: dict[str, Any], pointer: str
) -> None:
    tools = [{"name": "find", "input_schema": {"type": "object"}, **tool}]
    calls = [{"server": "code", "tool": "find", "arguments": {}, "text": "x", **call}]
    with pytest.raises(CassetteCorruptError) as refused:
        session(tmp_path, tools, calls)
    assert pointer.rsplit("/", 1)[1] in str(refused.value)


def test_a_secret_the_server_echoes_in_structured_content_is_redacted(tmp_path: Path) -> None:
    from harness import secrets

    secret = "sk-structured-5f0c9e2b7a"
    secrets.register(secret)
    tools = [{"name": "info", "input_schema": {"type": "object"}}]
    structured = {"token": secret, "nested": [f"Bearer {secret}"]}
    calls = [
        {"server": "code", "tool": "info", "arguments": {}, "text": "ok", "structured_content": structured}
    ]
    execution = registry(session(tmp_path, tools, calls)).execute(ToolCall("mcp__code__info", {}, id="c1"), 0)
    assert execution.mcp is not None
    assert execution.mcp.content == {"token": "<redacted>", "nested": ["Bearer <redacted>"]}
