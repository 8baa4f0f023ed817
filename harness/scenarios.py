"""Scenario files: load YAML, validate, resolve the tools offered, build Scenario objects.

A bad file is refused with its path, the line of the bad field and its JSON
pointer; every error of every file is listed, not just the first. Beyond the
JSON Schema (``schemas/scenario.schema.json``), a scenario is checked against
its own tools: an expected call, a named ``tool_choice`` or a fault must name a
tool the scenario offers; expected arguments must be parameters of that tool;
and a misspelt matcher (``{regexp: ...}``) is an error that suggests the right one.

Tools are offered by name (a bundled tool), from a tool set file
(``{toolset: billing}``), from an MCP server (``{mcp: git}``), or declared inline
(``{name, description, parameters, result | error | cases | sequence | function}``);
see :mod:`harness.tools.toolsets` and :mod:`harness.tools.declared`.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from harness import yamlio
from harness.errors import ScenarioError
from harness.matchers import MATCHERS, check_matcher, is_matcher
from harness.model import Message, ToolChoice
from harness.tools.declared import DeclaredTool
from harness.tools.mcp.types import MCPServerDecl, MCPUse
from harness.tools.registry import Fault
from harness.tools.toolsets import (
    FOLDER,
    bundled_tools,
    declare_at,
    find_toolset,
    known_toolsets,
    validate_declaration,
)

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
    batch: str | None = None  # "one_turn" or "per_item": how the N expected calls of a batch arrive


@dataclass(frozen=True)
class FollowUp:
    """A user message sent once the model has answered, continuing the conversation, and what
    the model should do with it."""

    content: str
    expect: Expectation


@dataclass(frozen=True)
class Scenario:
    """One scenario: the conversation, the tools offered, what is expected, and its limits.

    Example::

        scenario = harness.load_scenarios("scenarios", select_=["weather.single.paris"])[0]
        print(scenario.category, scenario.tool_names, scenario.expect.calls)
    """

    id: str
    category: str
    messages: tuple[Message, ...]
    expect: Expectation
    description: str = ""
    tools: tuple[DeclaredTool, ...] = ()
    mcp_tools: tuple[tuple[str, tuple[str, ...] | None], ...] = ()
    mcp_servers: tuple[MCPServerDecl, ...] = ()
    mcp_naming: str = "prefixed"
    tool_choice: ToolChoice = field(default_factory=ToolChoice)
    parallel_tool_calls: bool | None = None
    max_turns: int = DEFAULT_MAX_TURNS
    faults: tuple[Fault, ...] = ()
    tags: tuple[str, ...] = ()
    follow_ups: tuple[FollowUp, ...] = ()
    validate_arguments: bool = False
    path: str = ""
    data: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def expects_no_call(self) -> bool:
        return self.expect.no_call or self.expect.calls == ()

    def phase(self, index: int) -> Scenario:
        """The scenario as seen by one phase of the conversation: phase 0 is the opening request,
        phase ``i`` the ``i``-th follow-up (its message appended, its expectation in force)."""
        if index == 0:
            return self
        follow_up = self.follow_ups[index - 1]
        asked = tuple(Message("user", f.content) for f in self.follow_ups[:index])
        return dataclasses.replace(
            self, messages=self.messages + asked, expect=follow_up.expect, follow_ups=()
        )

    @property
    def mcp(self) -> MCPUse:
        """The scenario's MCP servers, the tools to offer from each, and how to name them."""
        return MCPUse(self.id, self.mcp_servers, self.mcp_tools, self.mcp_naming)

    @property
    def tool_names(self) -> list[str]:
        """The names of the declared tools (MCP tools are named when the servers list them)."""
        return [tool.name for tool in self.tools]


@cache
def scenario_schema() -> dict[str, Any]:
    text = resources.files("harness").joinpath("schemas/scenario.schema.json").read_text()
    return json.loads(text)  # type: ignore[no-any-return]


class _File:
    """One scenario file being read: its path and node tree, and the errors found so far."""

    def __init__(self, path: Path, node: Any):
        self.path, self.node = str(path), node
        self.errors: list[ScenarioError] = []
        self.broken: set[str] = set()  # tools declared with errors: not reported again as "not offered"

    def error(self, message: str, *where: str | int) -> None:
        self.errors.append(
            ScenarioError(
                self.path, message, line=yamlio.line_of(self.node, where), pointer=yamlio.pointer(where)
            )
        )


def load_file(path: str | Path) -> list[Scenario]:
    """Load one YAML file (a scenario, or a list of scenarios); every error in it is listed."""
    import jsonschema

    path = Path(path)
    try:
        data, node = yamlio.load(path)
    except yamlio.YamlError as exc:
        raise ScenarioError(str(path), str(exc), line=exc.line) from None
    except UnicodeDecodeError as exc:
        raise ScenarioError(str(path), f"not UTF-8 text: {exc}") from None
    items = data if isinstance(data, list) else [data]
    validator = jsonschema.Draft202012Validator(scenario_schema())
    scenarios = []
    errors: list[ScenarioError] = []
    for index, item in enumerate(items):
        where: tuple[int, ...] = (index,) if isinstance(data, list) else ()
        file = _File(path, _node_at(node, where))
        for error in sorted(validator.iter_errors(item), key=lambda e: list(e.absolute_path)):
            file.error(error.message, *error.absolute_path)
        if not file.errors:
            scenario = _build(item, file)
            if not file.errors and scenario is not None:
                scenarios.append(scenario)
        errors += file.errors
    if errors:
        raise ScenarioError.many(errors)
    return scenarios


def _node_at(node: Any, where: tuple[int, ...]) -> Any:
    for index in where:
        node = node.value[index]
    return node


def _tools(data: dict[str, Any], file: _File, servers: set[str]) -> tuple[list[DeclaredTool], list[Any]]:
    """The declared tools and the MCP uses of a scenario's ``tools`` list."""
    declared: list[DeclaredTool] = []
    mcp: list[Any] = []
    bundled = bundled_tools()
    for index, item in enumerate(data.get("tools", [])):
        if isinstance(item, str):
            if item in bundled:
                declared.append(bundled[item])
            else:
                near = difflib.get_close_matches(item, bundled, n=1)
                hint = f"; did you mean {near[0]!r}?" if near else ""
                file.error(
                    f"unknown tool {item!r}: not a bundled tool ({', '.join(bundled)}){hint} Declare it "
                    "inline ({name, parameters, result ...}) or offer a tool set ({toolset: <name>}).",
                    "tools",
                    index,
                )
        elif "mcp" in item:
            if not _valid(item, "mcp_tools", file, ("tools", index)):
                continue
            if item["mcp"] not in servers:
                file.error(
                    f"MCP server {item['mcp']!r} is not declared in mcp_servers", "tools", index, "mcp"
                )
            mcp.append((item["mcp"], tuple(item["tools"]) if "tools" in item else None))
        elif "toolset" in item:
            if _valid(item, "toolset_tools", file, ("tools", index)):
                declared += _from_toolset(item, file, index)
        else:
            problems = validate_declaration(item, file.path, file.node, ("tools", index))
            try:
                if not problems:
                    declared.append(declare_at(item, file.path, file.node, ("tools", index)))
            except ScenarioError as exc:
                problems = [exc]
            if problems:
                file.errors += problems
                file.broken.add(str(item.get("name")))
    names = [tool.name for tool in declared]
    for name in sorted({n for n in names if names.count(n) > 1}):
        file.error(f"tool {name!r} is offered twice", "tools")
    return declared, mcp


def _valid(item: Any, definition: str, file: _File, where: tuple[str | int, ...]) -> bool:
    """Whether ``item`` is valid against ``$defs/<definition>`` of the scenario schema (errors noted)."""
    import jsonschema

    schema = {"$ref": f"#/$defs/{definition}", "$defs": scenario_schema()["$defs"]}
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(item))
    for error in errors:
        file.error(error.message, *where, *error.absolute_path)
    return not errors


def _from_toolset(item: dict[str, Any], file: _File, index: int) -> list[DeclaredTool]:
    try:
        toolset = find_toolset(item["toolset"], file.path)
    except ScenarioError as exc:
        file.errors.append(exc)
        return []
    if toolset is None:
        known = ", ".join(known_toolsets(file.path))
        file.error(
            f"unknown tool set {item['toolset']!r}: no {FOLDER}/{item['toolset']}.yaml beside this file or "
            f"in a folder above it, and no bundled one; known: {known}",
            "tools",
            index,
            "toolset",
        )
        return []
    wanted = item.get("tools") or toolset.names
    missing = [name for name in wanted if toolset.tool(name) is None]
    if missing:
        file.error(
            f"tool set {toolset.name!r} ({toolset.path}) has no tool {', '.join(map(repr, missing))}; "
            f"it has: {', '.join(toolset.names)}",
            "tools",
            index,
            "tools",
        )
    return [tool for name in wanted if (tool := toolset.tool(name)) is not None]


def _is_offered(name: str, declared: dict[str, DeclaredTool], mcp: list[Any], naming: str) -> bool:
    """Whether ``name`` (a name the scenario uses) is a tool the scenario offers."""
    if name in declared:
        return True
    for server, tools in mcp:
        for tool in tools or ():
            if name in (f"mcp__{server}__{tool}", f"{server}.{tool}"):
                return True
        if tools is None and name.startswith((f"mcp__{server}__", f"{server}.")):
            return True  # the server's whole list is offered; its names are known when it runs
    return False


def _offered_names(declared: dict[str, DeclaredTool], mcp: list[Any], naming: str) -> str:
    names = list(declared)
    for server, tools in mcp:
        prefix = f"{server}." if naming == "dotted" else f"mcp__{server}__"
        names += [prefix + t for t in tools] if tools else [prefix + "*"]
    return ", ".join(names) or "(none)"


def _check_names(
    data: dict[str, Any], file: _File, declared: dict[str, DeclaredTool], mcp: list[Any]
) -> None:
    """Expected calls, a named tool_choice and faults name offered tools."""
    naming = data.get("mcp_naming", "prefixed")
    offered = _offered_names(declared, mcp, naming)

    def offered_here(name: str) -> bool:
        return name in file.broken or _is_offered(name, declared, mcp, naming)

    for where, expect in _expects(data):
        for index, call in enumerate(expect.get("calls") or []):
            if not offered_here(call["name"]):
                file.error(
                    f"expected call to {call['name']!r}, which the scenario does not offer; "
                    f"offered: {offered}",
                    *where,
                    "calls",
                    index,
                    "name",
                )
    choice = data.get("tool_choice")
    if isinstance(choice, dict) and not offered_here(choice["name"]):
        file.error(
            f"tool_choice names {choice['name']!r}, which the scenario does not offer; offered: {offered}",
            "tool_choice",
            "name",
        )
    for index, fault in enumerate(data.get("faults") or []):
        if not offered_here(fault["tool"]):
            file.error(
                f"fault on {fault['tool']!r}, which the scenario does not offer; offered: {offered}",
                "faults",
                index,
                "tool",
            )


def matcher_problems(expected: Any, schema: Any = None) -> Iterator[tuple[list[str | int], str]]:
    """Problems with an expectation's matchers, each with its path inside ``expected``: what
    :func:`~harness.matchers.check_matcher` finds, a one-key object whose key is close to a
    matcher's name (``regexp``: did you mean ``regex``?), and a literal object where the tool's
    schema expects no object."""
    for problem in check_matcher(expected):
        yield [], problem
    yield from _literal_problems(expected, schema, [])


def _literal_problems(value: Any, schema: Any, at: list[str | int]) -> Iterator[tuple[list[str | int], str]]:
    if not isinstance(value, dict) or is_matcher(value):
        if is_matcher(value):
            ((kind, operand),) = value.items()
            if kind == "subset" and isinstance(operand, dict):
                yield from _literal_problems(operand, schema, at)
            elif kind == "any_of" and isinstance(operand, list):
                for option in operand:
                    yield from _literal_problems(option, schema, at)
        return
    if len(value) == 1:
        (key,) = value
        near = difflib.get_close_matches(str(key), sorted(MATCHERS), n=1, cutoff=0.75)
        if near:
            yield (
                at,
                f"unknown matcher {key!r}; did you mean {near[0]!r}? (for a literal object with this key, "
                f"write {{exact: {{{key}: ...}}}})",
            )
            return
    if isinstance(schema, dict) and "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if "object" not in types:
            yield (
                at,
                f"a literal object where the tool's schema expects {' or '.join(types)}: {value!r}; "
                f"matchers are {', '.join(sorted(MATCHERS))}",
            )
            return
    properties = schema.get("properties", {}) if isinstance(schema, dict) else {}
    for key, item in value.items():
        yield from _literal_problems(item, properties.get(key), [*at, key])


def _expects(data: dict[str, Any]) -> list[tuple[tuple[str | int, ...], dict[str, Any]]]:
    """Every expectation of a scenario with where it is: the opening's, then each follow-up's."""
    found: list[tuple[tuple[str | int, ...], dict[str, Any]]] = [(("expect",), data.get("expect") or {})]
    for index, follow_up in enumerate(data.get("follow_ups") or []):
        found.append((("follow_ups", index, "expect"), follow_up.get("expect") or {}))
    return found


def _check_expectations(data: dict[str, Any], file: _File, declared: dict[str, DeclaredTool]) -> None:
    for where, expect in _expects(data):
        _check_expectation(expect, where, file, declared)
        _check_batch(expect, where, file, (data.get("limits") or {}).get("max_turns", DEFAULT_MAX_TURNS))


def _check_expectation(
    expect: dict[str, Any], at_expect: tuple[str | int, ...], file: _File, declared: dict[str, DeclaredTool]
) -> None:
    for index, call in enumerate(expect.get("calls") or []):
        args = call.get("args") or {}
        tool = declared.get(call["name"])
        schema = tool.parameters if tool is not None else None
        where = (*at_expect, "calls", index, "args")
        for at, problem in matcher_problems(args, schema):
            file.error(problem, *where, *at)
        if isinstance(schema, dict) and schema.get("additionalProperties") is False:
            known = schema.get("properties", {})
            for key in args:
                if key not in known:
                    near = difflib.get_close_matches(key, known, n=1)
                    hint = f"; did you mean {near[0]!r}?" if near else ""
                    file.error(
                        f"expected argument {key!r} is not a parameter of {call['name']!r} "
                        f"(parameters: {', '.join(known) or 'none'}){hint}",
                        *where,
                        key,
                    )
    for at, problem in matcher_problems(expect.get("final")):
        file.error(problem, *at_expect, "final", *at)


def _check_batch(expect: dict[str, Any], where: tuple[str | int, ...], file: _File, max_turns: int) -> None:
    """A batch is N expected calls (one per item); a per-item loop needs a turn per item and one
    to answer."""
    mode = expect.get("batch")
    if mode is None:
        return
    items = len(expect.get("calls") or [])
    if items < 2:
        file.error(
            f"a batch expects one call per item, at least 2; this one expects {items}", *where, "batch"
        )
    elif expect.get("parallel"):
        file.error("a batch states its mode in 'batch'; drop 'parallel'", *where, "parallel")
    elif mode == "per_item" and max_turns < items + 1:
        file.error(
            f"a per-item loop over {items} items needs limits.max_turns of at least {items + 1} "
            f"(one turn per item and one to answer); it is {max_turns}",
            *where,
            "batch",
        )


def _build(data: dict[str, Any], file: _File) -> Scenario | None:
    servers = tuple(
        MCPServerDecl(
            name,
            spec["command"],
            tuple(spec.get("args", ())),
            dict(spec.get("env", {})),
            spec.get("cwd"),
            float(spec.get("timeout_s", 20.0)),
            spec.get("fixture"),
            tuple(spec.get("secret_env", ())),
        )
        for name, spec in (data.get("mcp_servers") or {}).items()
    )
    tools, mcp = _tools(data, file, {s.name for s in servers})
    declared = {tool.name: tool for tool in tools}
    _check_names(data, file, declared, mcp)
    _check_expectations(data, file, declared)
    if file.errors:
        return None
    return Scenario(
        id=data["id"],
        category=data["category"],
        description=data.get("description", ""),
        messages=tuple(Message(m["role"], m["content"]) for m in data["messages"]),
        expect=_expectation(data.get("expect") or {}),
        tools=tuple(tools),
        mcp_tools=tuple(mcp),
        mcp_servers=servers,
        mcp_naming=data.get("mcp_naming", "prefixed"),
        tool_choice=ToolChoice.parse(data.get("tool_choice")),
        parallel_tool_calls=data.get("parallel_tool_calls"),
        max_turns=(data.get("limits") or {}).get("max_turns", DEFAULT_MAX_TURNS),
        faults=tuple(Fault(f["tool"], f.get("on_call", 1), f["error"]) for f in data.get("faults") or ()),
        tags=tuple(data.get("tags") or ()),
        follow_ups=tuple(
            FollowUp(f["content"], _expectation(f["expect"])) for f in data.get("follow_ups") or ()
        ),
        validate_arguments=data.get("validate_arguments", False),
        path=file.path,
        data=data,
    )


def _expectation(expect: dict[str, Any]) -> Expectation:
    return Expectation(
        calls=None
        if "calls" not in expect
        else tuple(
            ExpectedCall(c["name"], c.get("args") or {}, c.get("args_exact", False)) for c in expect["calls"]
        ),
        order=expect.get("order", "strict"),
        parallel=expect.get("parallel", False),
        allow_extra=expect.get("allow_extra", False),
        no_call=expect.get("no_call", False),
        final=expect.get("final"),
        batch=expect.get("batch"),
    )


def scenario_files(paths: Sequence[str | Path]) -> list[Path]:
    """The YAML files under ``paths`` (folders searched recursively, ``toolsets/`` folders skipped);
    a path that does not exist is a :class:`ScenarioError`."""
    files: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            files.extend(
                sorted(
                    q
                    for q in p.rglob("*")
                    if q.suffix in (".yaml", ".yml") and FOLDER not in q.relative_to(p).parts[:-1]
                )
            )
        elif p.exists():
            files.append(p)
        else:
            raise ScenarioError(str(p), "no such file or folder")
    return files


def load(paths: Sequence[str | Path]) -> list[Scenario]:
    """Load scenario files and folders (``*.yaml`` / ``*.yml``, recursively), sorted by id.

    Every bad file is reported (one :class:`ScenarioError` listing them all). Ids
    must be unique: an id names a cassette.
    """
    scenarios: dict[str, Scenario] = {}
    errors: list[ScenarioError] = []
    for file in scenario_files(paths):
        try:
            loaded = load_file(file)
        except ScenarioError as exc:
            errors.append(exc)
            continue
        for scenario in loaded:
            if scenario.id in scenarios:
                errors.append(
                    ScenarioError(
                        str(file),
                        f"duplicate scenario id {scenario.id!r} (also in {scenarios[scenario.id].path})",
                        pointer="/id",
                    )
                )
                continue
            scenarios[scenario.id] = scenario
    if errors:
        raise ScenarioError.many(errors)
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
