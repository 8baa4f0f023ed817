"""The fixture server's tools for the MCP cases, each conformant unless its name says otherwise.

* ``file_info(path)`` -> ``{"path", "lines", "language"}`` as ``structuredContent`` conforming to
  its ``outputSchema``; read-only (annotated so).
* ``file_stats(path)`` -> ``structuredContent`` with no ``outputSchema`` listed, and its JSON as
  text; ``file_stats_nonconformant`` leaves the text out (``content`` is empty).
* ``file_info_nonconformant(path)`` lists ``file_info``'s ``outputSchema`` and breaks it
  (``lines`` as a string, no ``language``).
* ``read_lines(path, start_line, end_line)`` answers bad input (an unknown path, a range outside
  the file, an argument of the wrong type) with an ``isError`` result; ``read_lines_nonconformant``
  answers it with a JSON-RPC ``-32602`` protocol error instead (what SEP-1303 retired:
  https://modelcontextprotocol.io/seps/1303-input-validation-errors-as-tool-execution-errors).
* ``delete_file(path)`` is annotated destructive (it deletes nothing: the corpus is fixed; it
  says which file it deleted).
* :data:`LONG_NAME`, a 128-character name (the most MCP allows), counts a file's definitions;
  :data:`TOO_LONG_NAME` (129 characters) does the same.
* ``reindex(steps)`` takes ``steps`` x :data:`STEP_S` seconds, reporting progress after each
  step; a cancelled call (``notifications/cancelled``, which the SDK's client sends when it stops
  waiting) stops it, written on stderr as ``reindex: cancelled at step k``.
  ``reindex_nonconformant`` reports the steps left, so its progress goes down.

This module imports ``mcp`` (the SDK reads the tools' annotations at runtime, so they cannot be
strings): only :func:`harness.servers.mcp_fixture.server.create_server` imports it.
"""

import json
import logging
import sys
from typing import Annotated, Any, TypedDict

import anyio
from mcp import MCPError
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import INVALID_PARAMS, CallToolResult, TextContent, ToolAnnotations

from harness.servers.mcp_fixture.server import CORPUS, INDEX

LONG_NAME = "count_definitions_in_one_file_of_the_code_index_".ljust(128, "x")
"""A tool name of 128 characters, the most MCP allows (2025-11-25: tool names)."""
TOO_LONG_NAME = LONG_NAME + "x"
"""One character more than MCP allows."""
STEP_S = 0.2
"""How long one ``reindex`` step takes."""

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(
    title="Delete file",
    read_only_hint=False,
    destructive_hint=True,
    idempotent_hint=True,
    open_world_hint=False,
)


class FileInfo(TypedDict):
    """What ``file_info`` says about a corpus file."""

    path: str
    lines: int
    language: str


def file_info_of(path: str) -> FileInfo:
    """The :class:`FileInfo` of a corpus file (a ``ToolError`` for an unknown path)."""
    text = CORPUS[known(path)]
    language = "python" if path.endswith(".py") else "markdown"
    return FileInfo(path=path, lines=len(text.splitlines()), language=language)


def known(path: str) -> str:
    if path not in CORPUS:
        raise ToolError(f"unknown path {path!r}; known: {', '.join(sorted(CORPUS))}")
    return path


def lines_of(path: str, start_line: int, end_line: int) -> str:
    """Lines ``start_line..end_line`` of a corpus file (a ``ToolError`` outside it)."""
    lines = CORPUS[known(path)].splitlines()
    if not 1 <= start_line <= end_line <= len(lines):
        raise ToolError(f"lines {start_line}..{end_line} are outside {path} (lines 1..{len(lines)})")
    return "\n".join(lines[start_line - 1 : end_line])


def file_info(path: str) -> FileInfo:
    return file_info_of(path)


def file_stats(path: str) -> CallToolResult:
    info = file_info_of(path)
    text = json.dumps(info, sort_keys=True)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=dict(info))


def file_stats_nonconformant(path: str) -> CallToolResult:
    return CallToolResult(content=[], structured_content=dict(file_info_of(path)))


def file_info_nonconformant(path: str) -> Annotated[CallToolResult, FileInfo]:
    info = file_info_of(path)
    broken = {"path": info["path"], "lines": str(info["lines"])}  # a string, and no language
    text = json.dumps(broken, sort_keys=True)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=broken)


def read_lines(path: str, start_line: int, end_line: int) -> str:
    return lines_of(path, start_line, end_line)


def read_lines_nonconformant(path: str, start_line: int, end_line: int) -> str:
    try:
        return lines_of(path, start_line, end_line)
    except ToolError as exc:  # bad input answered as a protocol error
        raise MCPError(code=INVALID_PARAMS, message=str(exc)) from None


def delete_file(path: str) -> str:
    return f"deleted {known(path)}"


def count_definitions(path: str) -> str:
    known(path)
    return str(sum(1 for location in INDEX.values() if location["path"] == path))


async def reindex(ctx: Context, steps: int = 3) -> str:
    step = 0
    try:
        for step in range(1, steps + 1):
            await anyio.sleep(STEP_S)
            await ctx.report_progress(step, steps, f"step {step} of {steps}")
    except anyio.get_cancelled_exc_class():
        print(f"reindex: cancelled at step {step}", file=sys.stderr, flush=True)
        raise
    return f"reindexed {len(INDEX)} symbols in {steps} steps"


async def reindex_nonconformant(ctx: Context, steps: int = 3) -> str:
    for step in range(1, steps + 1):
        await anyio.sleep(STEP_S)
        await ctx.report_progress(steps - step + 1, steps, f"{steps - step + 1} step(s) left")
    return f"reindexed {len(INDEX)} symbols in {steps} steps"


def add_case_tools(server: MCPServer[Any]) -> None:
    """The tools of the MCP cases (see the module doc) on ``server``."""
    server.tool(description="Size and language of a corpus file.", annotations=READ_ONLY)(file_info)
    for stats in (file_stats, file_stats_nonconformant):
        server.tool(description="Size and language of a corpus file, as JSON.", annotations=READ_ONLY)(stats)
    # The schema is derived from FileInfo and listed, but the SDK would validate the result against
    # it and send an error instead: the output model is dropped, so the schema is published and not
    # enforced (FuncMetadata's fields are read live, its docstring says). MCPServer has no public
    # way to add a prebuilt Tool, hence the tool manager.
    broken = Tool.from_function(
        file_info_nonconformant,
        description="Size and language of a corpus file (breaks its own outputSchema).",
        annotations=READ_ONLY,
    )
    broken.fn_metadata.output_model = None
    server._tool_manager._tools[broken.name] = broken
    lines = "Lines start_line..end_line (1-based, inclusive) of a corpus file."
    for function in (read_lines, read_lines_nonconformant):
        server.tool(description=lines, annotations=READ_ONLY, structured_output=False)(function)
    server.tool(
        description="Delete a file from the corpus.", annotations=DESTRUCTIVE, structured_output=False
    )(delete_file)
    # the SDK warns of the name it breaks on purpose (on stderr, at every start): not this one
    logging.getLogger("mcp.shared.tool_name_validation").setLevel(logging.ERROR)
    for name in (LONG_NAME, TOO_LONG_NAME):
        server.tool(
            name=name,
            description="How many definitions (functions, classes, methods, constants) a corpus file holds.",
            annotations=READ_ONLY,
            structured_output=False,
        )(count_definitions)
    for slow in (reindex, reindex_nonconformant):
        server.tool(
            description="Rebuild the symbol index in steps, reporting progress.", structured_output=False
        )(slow)
