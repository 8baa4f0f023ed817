"""The fixture MCP server: a code index over a fixed in-memory corpus, served over stdio.

Run it with ``python -m harness.servers.mcp_fixture.server``. Everything is deterministic and
offline so that MCP scenarios replay identically; ``flaky`` fails on demand so the
harness's handling of tool errors, crashed servers and hung calls can be tested.

Tools:

* ``find_symbol(name)`` -> ``{"path", "line", "kind"}``; an error result for an unknown symbol.
* ``read_file(path, start_line?, end_line?)`` -> the text (1-based, inclusive lines).
* ``list_files()`` -> the corpus paths, one per line.
* ``search.files(query)`` -> ``path:line: text`` for each line containing ``query``. Its
  name has a dot, which OpenAI-style providers forbid: it exercises name sanitising.
* ``flaky(mode)`` -> ``"ok"``; ``"error"`` returns an isError result, ``"crash"`` exits the
  process at once (status 3), ``"hang"`` never returns.

And the tools of the MCP cases (structured results with and without a schema, a schema
violation, ``isError`` and protocol errors for bad input, annotations, a 128-character name,
progress, cancellation): see :mod:`harness.servers.mcp_fixture.cases`.
"""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING, Any, Literal, TypedDict

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

SERVER_NAME = "codeindex"

CORPUS: dict[str, str] = {
    "src/geometry.py": '''"""Plane geometry helpers."""

import math

TOLERANCE = 1e-9


class Point:
    """A point in the plane."""

    def __init__(self, x: float, y: float) -> None:
        self.x, self.y = x, y

    def distance_to(self, other: "Point") -> float:
        return math.hypot(self.x - other.x, self.y - other.y)


def area_of_circle(radius: float) -> float:
    return math.pi * radius * radius
''',
    "src/inventory.py": '''"""A toy inventory."""

from dataclasses import dataclass

MAX_ITEMS = 100


@dataclass
class Item:
    sku: str
    quantity: int


def restock(item: Item, amount: int) -> Item:
    return Item(item.sku, min(MAX_ITEMS, item.quantity + amount))
''',
    "README.md": """# codeindex fixture

A fixed corpus for MCP tests: geometry and inventory helpers.
""",
}

_DEFINITION = re.compile(
    r"^(?P<indent>\s*)(?:(?P<kw>def|class)\s+(?P<name>\w+)|(?P<const>[A-Z][A-Z0-9_]*)\s*=)"
)


class Location(TypedDict):
    """Where a symbol is defined."""

    path: str
    line: int
    kind: str


def build_index(corpus: dict[str, str]) -> dict[str, Location]:
    """Symbol -> first definition, scanning Python files line by line (first one wins)."""
    index: dict[str, Location] = {}
    for path in sorted(corpus):
        if not path.endswith(".py"):
            continue
        for number, text in enumerate(corpus[path].splitlines(), start=1):
            match = _DEFINITION.match(text)
            if match is None:
                continue
            if match["const"]:
                name, kind = match["const"], "constant"
            else:
                name = match["name"]
                kind = "class" if match["kw"] == "class" else ("method" if match["indent"] else "function")
            index.setdefault(name, Location(path=path, line=number, kind=kind))
    return index


INDEX = build_index(CORPUS)


def create_server() -> MCPServer[Any]:
    """The MCPServer with the fixture's tools (mcp is imported here so the module stays cheap)."""
    import anyio
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer(SERVER_NAME, version="1.0.0", log_level="WARNING")

    @server.tool(description="Find where a symbol (function, class, method, constant) is defined.")
    def find_symbol(name: str) -> Location:
        try:
            return INDEX[name]
        except KeyError:
            raise ToolError(f"unknown symbol {name!r}") from None

    @server.tool(
        description="Read a corpus file, optionally only lines start_line..end_line (1-based).",
        structured_output=False,
    )
    def read_file(path: str, start_line: int | None = None, end_line: int | None = None) -> str:
        if path not in CORPUS:
            raise ToolError(f"unknown path {path!r}; known: {', '.join(sorted(CORPUS))}")
        lines = CORPUS[path].splitlines()
        start = max(start_line or 1, 1)
        end = min(end_line or len(lines), len(lines))
        return "\n".join(lines[start - 1 : end])

    @server.tool(description="List the files of the corpus, one path per line.", structured_output=False)
    def list_files() -> str:
        return "\n".join(sorted(CORPUS))

    @server.tool(
        name="search.files",
        description="Lines containing query, as path:line: text.",
        structured_output=False,
    )
    def search_files(query: str) -> str:
        hits = [
            f"{path}:{number}: {text}"
            for path in sorted(CORPUS)
            for number, text in enumerate(CORPUS[path].splitlines(), start=1)
            if query and query in text
        ]
        return "\n".join(hits) or "no matches"

    @server.tool(description="Fail on demand: mode ok | error | crash | hang.", structured_output=False)
    async def flaky(mode: Literal["ok", "error", "crash", "hang"] = "ok") -> str:
        if mode == "error":
            raise ToolError("flaky: error requested")
        if mode == "crash":
            print("flaky: crash requested, exiting with status 3", file=sys.stderr, flush=True)
            os._exit(3)
        if mode == "hang":
            print("flaky: hang requested", file=sys.stderr, flush=True)
            await anyio.sleep_forever()
        return "ok"

    from harness.servers.mcp_fixture.cases import add_case_tools

    add_case_tools(server)
    return server


def main() -> None:
    """Serve over stdio until stdin closes."""
    server = create_server()
    server.run("stdio")


if __name__ == "__main__":
    main()
