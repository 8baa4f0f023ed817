"""The fixture server's MCP cases, in process over the SDK's in-memory transport (no process):
each conformant tool does what the spec asks, and each nonconformant one breaks it the way its
name says, as the official SDK's own client sees it."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from mcp import Client, MCPError
from mcp.types import INVALID_PARAMS, REQUEST_TIMEOUT

from harness.servers.mcp_fixture.cases import LONG_NAME, STEP_S
from harness.servers.mcp_fixture.server import create_server


def with_client(body: Callable[[Client], Awaitable[Any]]) -> Any:
    async def run() -> Any:
        async with Client(create_server()) as client:
            return await body(client)

    return asyncio.run(run())


def test_the_listing_holds_schemas_annotations_and_a_128_character_name() -> None:
    tools = {t.name: t for t in with_client(lambda c: c.list_tools()).tools}
    assert len(LONG_NAME) == 128 and LONG_NAME in tools
    assert tools["file_info"].output_schema is not None and tools["file_stats"].output_schema is None
    assert tools["file_info_nonconformant"].output_schema == tools["file_info"].output_schema
    delete = tools["delete_file"].annotations
    assert delete is not None and delete.destructive_hint is True and delete.read_only_hint is False
    assert tools["file_info"].annotations is not None and tools["file_info"].annotations.read_only_hint


def test_structured_results_with_and_without_a_schema() -> None:
    async def body(client: Client) -> tuple[Any, Any]:
        return (
            await client.call_tool("file_info", {"path": "src/geometry.py"}),
            await client.call_tool("file_stats", {"path": "src/inventory.py"}),
        )

    info, stats = with_client(body)
    assert info.structured_content == {"path": "src/geometry.py", "lines": 19, "language": "python"}
    assert stats.structured_content == {"path": "src/inventory.py", "lines": 15, "language": "python"}


def raised(name: str, arguments: dict[str, Any]) -> BaseException:
    """What calling ``name`` raised inside the client's context (it leaves in an exception group)."""

    async def body(client: Client) -> BaseException:
        try:
            await client.call_tool(name, arguments)
        except (RuntimeError, MCPError) as exc:
            return exc
        raise AssertionError(f"{name} raised nothing")

    return with_client(body)  # type: ignore[no-any-return]


def test_the_nonconformant_result_breaks_its_schema_as_the_sdk_client_sees_it() -> None:
    error = raised("file_info_nonconformant", {"path": "README.md"})
    assert isinstance(error, RuntimeError)
    assert "Invalid structured content returned by tool file_info_nonconformant" in str(error)


def test_bad_input_is_an_error_result_and_the_nonconformant_tool_a_protocol_error() -> None:
    bad = {"path": "README.md", "start_line": 30, "end_line": 35}
    result = with_client(lambda c: c.call_tool("read_lines", bad))
    assert result.is_error and "outside README.md (lines 1..3)" in result.content[0].text
    wrong_type = with_client(lambda c: c.call_tool("read_lines", {**bad, "start_line": "thirty"}))
    assert wrong_type.is_error
    refused = raised("read_lines_nonconformant", bad)
    assert isinstance(refused, MCPError) and refused.code == INVALID_PARAMS


def test_the_slow_tool_reports_progress_and_stops_when_cancelled(capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    result = with_client(lambda c: c.call_tool("reindex", {"steps": 2}, progress_callback=on_progress))
    assert result.content[0].text == "reindexed 8 symbols in 2 steps"
    assert seen == [(1, 2, "step 1 of 2"), (2, 2, "step 2 of 2")]

    async def cancelled(client: Client) -> int:
        try:
            await client.call_tool("reindex", {"steps": 50}, read_timeout_seconds=STEP_S * 1.5)
        except MCPError as exc:  # the client stops waiting and sends notifications/cancelled
            await asyncio.sleep(STEP_S)  # time for the server to act on it
            return exc.code
        raise AssertionError("the call was not cut short")

    assert with_client(cancelled) == REQUEST_TIMEOUT
    assert re.search(r"^reindex: cancelled at step \d+$", capsys.readouterr().err, re.MULTILINE)


def test_the_sdk_s_own_text_of_a_wrapped_result_counts_as_its_json() -> None:
    """The official SDK writes a plain value's structured result as ``{"result": value}`` and its
    text as the value (a block per list item): not flagged; the fixture's nonconformant tool,
    with no text at all, is."""
    from mcp.server.mcpserver import MCPServer

    from harness.tools.mcp.types import render_result

    def word() -> str:
        return "hello"

    def items() -> list[int]:
        return [1, 2]

    server = MCPServer("wrapped")
    for tool in (word, items):
        server.tool()(tool)

    async def run() -> list[Any]:
        async with Client(server) as client:
            return [render_result(await client.call_tool(name, {})) for name in ("word", "items")]

    found = asyncio.run(run())
    assert [r.structured for r in found] == [{"result": "hello"}, {"result": [1, 2]}]
    assert [r.text for r in found] == ["hello", "1\n2"] and all(r.serialized for r in found)
    missing = with_client(lambda c: c.call_tool("file_stats_nonconformant", {"path": "README.md"}))
    assert render_result(missing).structured == {"path": "README.md", "lines": 3, "language": "markdown"}
    assert not render_result(missing).serialized
