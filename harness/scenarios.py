"""Scenario files: load YAML, validate against the shipped JSON Schema, build Scenario objects.

A bad file is refused with its path, the line of the bad field and its JSON
pointer, and every error of the file is listed, not just the first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from harness.errors import ScenarioError
from harness.matchers import check_matcher
from harness.model import Message, ToolChoice
from harness.tools.mcp.types import MCPServerDecl, MCPUse

DEFAULT_MAX_TURNS = 5


@dataclass(frozen=True)
class ExpectedCall:
    name: str
    args: dict[str, Any] = field(default_factory=dict)
    args_exact: bool = False


@dataclass(frozen=True)
class Expectation:
    calls: tuple[ExpectedCall, ...] | None = None  # None: no expectation on calls; (): no call
    order: str = "strict"
    parallel: bool = False
    allow_extra: bool = False
    no_call: bool = False
    final: Any = None


@dataclass(frozen=True)
class Scenario:
    id: str
    category: str
    messages: tuple[Message, ...]
    expect: Expectation
    description: str = ""
    tools: tuple[str, ...] = ()
    mcp_tools: tuple[tuple[str, tuple[str, ...] | None], ...] = ()
    mcp_servers: tuple[MCPServerDecl, ...] = ()
    mcp_naming: str = "prefixed"
    tool_choice: ToolChoice = field(default_factory=ToolChoice)
    parallel_tool_calls: bool | None = None
    max_turns: int = DEFAULT_MAX_TURNS
    faults: tuple[dict[str, Any], ...] = ()
    tags: tuple[str, ...] = ()
    path: str = ""
    data: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def expects_no_call(self) -> bool:
        return self.expect.no_call or self.expect.calls == ()

    @property
    def mcp(self) -> MCPUse:
        """The scenario's MCP servers, the tools to offer from each, and how to name them."""
        return MCPUse(self.id, self.mcp_servers, self.mcp_tools, self.mcp_naming)


@cache
def scenario_schema() -> dict[str, Any]:
    text = resources.files("harness").joinpath("schemas/scenario.schema.json").read_text()
    return json.loads(text)  # type: ignore[no-any-return]


def _line_of(node: yaml.Node | None, path: Sequence[object]) -> int | None:
    """The 1-based line of the YAML node at ``path`` (or of its nearest existing parent)."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in path:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if k.value == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            node = None
        if node is None:
            break
        line = node.start_mark.line + 1
    return line


def _pointer(path: Sequence[object]) -> str:
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path) if path else "/"


def load_file(path: str | Path) -> list[Scenario]:
    """Load one YAML file (a scenario, or a list of scenarios)."""
    import jsonschema

    path = Path(path)
    text = path.read_text(encoding="utf-8")
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ScenarioError(
            str(path), f"invalid YAML: {getattr(exc, 'problem', exc)}", line=mark.line + 1 if mark else None
        ) from exc
    items = data if isinstance(data, list) else [data]
    nodes = node.value if isinstance(node, yaml.SequenceNode) else [node]
    validator = jsonschema.Draft202012Validator(scenario_schema())
    scenarios = []
    for item, item_node in zip(items, nodes, strict=True):
        errors = sorted(validator.iter_errors(item), key=lambda e: list(e.absolute_path))
        if errors:
            first = errors[0]
            path_parts = list(first.absolute_path)
            more = "".join(
                f"\n  line {_line_of(item_node, list(e.absolute_path))} {_pointer(list(e.absolute_path))}: "
                f"{e.message}"
                for e in errors[1:]
            )
            raise ScenarioError(
                str(path),
                first.message + (f"; other errors:{more}" if more else ""),
                line=_line_of(item_node, path_parts),
                pointer=_pointer(path_parts),
            )
        scenarios.append(_build(item, str(path), item_node))
    return scenarios


def _build(data: dict[str, Any], path: str, node: yaml.Node) -> Scenario:
    expect = data.get("expect") or {}
    for i, call in enumerate(expect.get("calls") or []):
        problems = check_matcher(call.get("args") or {})
        if problems:
            where = ["expect", "calls", i, "args"]
            raise ScenarioError(
                path, "; ".join(problems), line=_line_of(node, where), pointer=_pointer(where)
            )
    problems = check_matcher(expect.get("final"))
    if problems:
        raise ScenarioError(
            path, "; ".join(problems), line=_line_of(node, ["expect", "final"]), pointer="/expect/final"
        )
    servers = tuple(
        MCPServerDecl(
            name,
            spec["command"],
            tuple(spec.get("args", ())),
            dict(spec.get("env", {})),
            spec.get("cwd"),
            float(spec.get("timeout_s", 20.0)),
            spec.get("fixture"),
        )
        for name, spec in (data.get("mcp_servers") or {}).items()
    )
    from harness.tools.builtin import BUILTINS

    def refuse(message: str, *where: str | int) -> ScenarioError:
        return ScenarioError(path, message, line=_line_of(node, where), pointer=_pointer(where))

    tools = data.get("tools", [])
    for index, tool in enumerate(tools):
        if isinstance(tool, str) and tool not in BUILTINS:
            raise refuse(f"unknown built-in tool {tool!r}; known: {', '.join(BUILTINS)}", "tools", index)
        if isinstance(tool, dict) and tool["mcp"] not in {s.name for s in servers}:
            raise refuse(f"MCP server {tool['mcp']!r} is not declared in mcp_servers", "tools", index, "mcp")
    builtin = tuple(t for t in tools if isinstance(t, str))
    mcp = tuple((t["mcp"], tuple(t["tools"]) if "tools" in t else None) for t in tools if isinstance(t, dict))
    for index, fault in enumerate(data.get("faults") or []):
        if (
            fault["tool"] not in builtin
            and not fault["tool"].startswith("mcp__")
            and "." not in fault["tool"]
        ):
            raise refuse(
                f"fault on {fault['tool']!r}, which the scenario does not offer; offered built-ins: "
                f"{', '.join(builtin) or '(none)'} (MCP tools by their scenario name, mcp__<server>__<tool>)",
                "faults",
                index,
                "tool",
            )
    return Scenario(
        id=data["id"],
        category=data["category"],
        description=data.get("description", ""),
        messages=tuple(Message(m["role"], m["content"]) for m in data["messages"]),
        expect=Expectation(
            calls=None
            if "calls" not in expect
            else tuple(
                ExpectedCall(c["name"], c.get("args") or {}, c.get("args_exact", False))
                for c in expect["calls"]
            ),
            order=expect.get("order", "strict"),
            parallel=expect.get("parallel", False),
            allow_extra=expect.get("allow_extra", False),
            no_call=expect.get("no_call", False),
            final=expect.get("final"),
        ),
        tools=builtin,
        mcp_tools=mcp,
        mcp_servers=servers,
        mcp_naming=data.get("mcp_naming", "prefixed"),
        tool_choice=ToolChoice.parse(data.get("tool_choice")),
        parallel_tool_calls=data.get("parallel_tool_calls"),
        max_turns=(data.get("limits") or {}).get("max_turns", DEFAULT_MAX_TURNS),
        faults=tuple(data.get("faults") or ()),
        tags=tuple(data.get("tags") or ()),
        path=path,
        data=data,
    )


def load(paths: list[str | Path]) -> list[Scenario]:
    """Load scenario files and folders (``*.yaml`` / ``*.yml``, recursively), sorted by id.

    Ids must be unique: an id names a cassette.
    """
    files: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            files.extend(sorted(q for q in p.rglob("*") if q.suffix in (".yaml", ".yml")))
        elif p.exists():
            files.append(p)
        else:
            raise ScenarioError(str(p), "no such file or folder")
    scenarios: dict[str, Scenario] = {}
    for file in files:
        for scenario in load_file(file):
            if scenario.id in scenarios:
                raise ScenarioError(
                    str(file),
                    f"duplicate scenario id {scenario.id!r} (also in {scenarios[scenario.id].path})",
                    pointer="/id",
                )
            scenarios[scenario.id] = scenario
    return sorted(scenarios.values(), key=lambda s: s.id)


def select(scenarios: list[Scenario], patterns: list[str] | None) -> list[Scenario]:
    """Scenarios whose id or category matches one of the glob patterns (all when none)."""
    import fnmatch

    if not patterns:
        return scenarios
    return [
        s
        for s in scenarios
        if any(
            fnmatch.fnmatch(s.id, p) or s.category == p or fnmatch.fnmatch(s.category, p) for p in patterns
        )
    ]
