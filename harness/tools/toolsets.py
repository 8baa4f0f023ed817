"""Tool sets: YAML files of declared tools that many scenarios share.

A tool set file (``toolsets/billing.yaml``) holds ``toolset: <name>`` and a list
of tools (see :mod:`harness.tools.declared`), valid against
``schemas/toolset.schema.json``. A scenario offers tools from it with
``{toolset: billing}`` (all of them) or ``{toolset: billing, tools: [a, b]}``.

A tool set is found by name in a ``toolsets/`` folder beside the scenario file or
in any folder above it (the nearest wins), then among the bundled tool sets
(``harness/toolsets/``: the built-in tools ``memory``, ``todo``, ``get_weather``,
``get_time`` and ``convert_temperature`` are just bundled tool sets). A name with
a ``/`` or ending in ``.yaml`` is a path relative to the scenario file.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from harness import yamlio
from harness.errors import ScenarioError, UnknownNameError
from harness.matchers import check_matcher
from harness.tools.declared import DeclarationError, DeclaredTool, declare
from harness.tools.run_tools import Tool
from harness.validation import (
    bundled_schema_bytes,
    bundled_validator,
    explain,
    in_path_order,
    judged,
    ref_problems,
)

SUFFIXES = (".yaml", ".yml")
FOLDER = "toolsets"


@dataclass(frozen=True)
class ToolSet:
    """A named set of declared tools, from one file.

    Example::

        billing = harness.load_toolset("scenarios/toolsets/billing.yaml")
        print(billing.name, billing.names)
    """

    name: str
    tools: tuple[DeclaredTool, ...]
    description: str = ""
    path: str = ""

    def tool(self, name: str) -> DeclaredTool | None:
        return next((t for t in self.tools if t.name == name), None)

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.tools]


def validate_declaration(
    data: Any, path: str, node: Any, where: tuple[str | int, ...]
) -> list[ScenarioError]:
    """Every schema error of one tool declaration at ``where`` in a YAML file (:func:`judged`)."""
    errors = judged(
        "toolset-schema",
        bundled_schema_bytes("toolset") + b"#/$defs/tool",
        data,
        lambda: in_path_order(bundled_validator("toolset", "tool").iter_errors(data)),
    )
    return [_error(path, node, [*where, *at], message) for at, message in explain(errors)]


def _error(path: str, node: Any, at: list[str | int], message: str) -> ScenarioError:
    return ScenarioError(path, message, line=yamlio.line_of(node, at), pointer=yamlio.pointer(at))


def declare_checked(
    data: Any, path: str, node: Any, where: tuple[str | int, ...], toolset: str = ""
) -> tuple[DeclaredTool | None, list[ScenarioError]]:
    """One tool declaration at ``where`` in a YAML file: the tool, or ``None`` and every error
    found (its schema, its parameters' ``$ref`` s, then what :func:`declare_at` refuses)."""
    problems = validate_declaration(data, path, node, where)
    if problems:
        return None, problems
    problems = [
        _error(path, node, [*where, "parameters", *at], f"tool {data['name']!r}: parameters: {message}")
        for at, message in ref_problems(data["parameters"])
    ]
    problems += [
        _error(path, node, [*where, "cases", index, "when"], f"tool {data['name']!r}: {message}")
        for index, case in enumerate(data.get("cases", ()))
        for message in check_matcher(case["when"])
    ]
    try:
        tool = declare_at(data, path, node, where, toolset)
    except ScenarioError as exc:
        problems.append(exc)
    return (None, problems) if problems else (tool, [])


def declare_at(
    data: dict[str, Any], path: str, node: Any, where: tuple[str | int, ...], toolset: str = ""
) -> DeclaredTool:
    """:func:`~harness.tools.declared.declare`, with a bad declaration reported at its line."""
    try:
        return declare(data, toolset=toolset, origin=path)
    except DeclarationError as exc:
        raise _error(path, node, [*where, *exc.where], str(exc)) from None


@dataclass(frozen=True)
class Reading:
    """A tool set file as read: the tool set of its good tools, every error of the file (each
    once), the names of the tools declared with errors, and whether every tool's name is known
    (a scenario offering the set then knows which names it offers, so that an expected call to a
    broken tool is not reported again as "not offered")."""

    toolset: ToolSet
    errors: tuple[ScenarioError, ...] = ()
    broken: frozenset[str] = frozenset()
    names_known: bool = True
    name_line: int | None = None  # of the ``toolset:`` key


_lock = threading.Lock()
_read: dict[tuple[str, float], Reading] = {}


def read_toolset(path: str | Path) -> Reading:
    """A tool set file, validated: every error listed, each with its line (a bad tool does not
    hide the others); read once per version of the file."""
    path = Path(path)
    try:
        key = (str(path.resolve()), path.stat().st_mtime)
    except OSError:
        key = None
    if key is not None:
        with _lock:
            if key in _read:
                return _read[key]
    reading = _read_file(path)
    if key is not None:
        with _lock:
            _read[key] = reading
    return reading


def _read_file(path: Path) -> Reading:
    source = str(path)
    try:
        data, node = yamlio.load(path)
    except yamlio.YamlError as exc:
        errors = [ScenarioError(source, str(e), line=e.line, pointer=e.pointer) for e in exc.problems]
        return Reading(ToolSet(path.stem, (), path=source), tuple(errors), names_known=False)
    found = judged(
        "toolset-schema",
        bundled_schema_bytes("toolset"),
        data,
        lambda: in_path_order(bundled_validator("toolset").iter_errors(data)),
    )
    errors = [  # the tools are checked one by one below
        _error(source, node, at, message)
        for at, message in explain(
            e for e in found if not (len(e.absolute_path) >= 2 and e.absolute_path[0] == "tools")
        )
    ]
    raw = data.get("tools") if isinstance(data, dict) else None
    name = path.stem
    if isinstance(data, dict) and isinstance(data.get("toolset"), str):
        name = data["toolset"]
    if not isinstance(raw, list):
        return Reading(ToolSet(name, (), path=source), tuple(errors), names_known=False)
    tools: list[DeclaredTool] = []
    broken: set[str] = set()
    names_known = True
    for index, item in enumerate(raw):
        tool, problems = declare_checked(item, source, node, ("tools", index), name)
        errors += problems
        if tool is not None:
            tools.append(tool)
        elif isinstance(item, dict) and isinstance(item.get("name"), str):
            broken.add(item["name"])
        else:
            names_known = False
    named = [item.get("name") if isinstance(item, dict) else None for item in raw]
    for index, tool_name in enumerate(named):
        if tool_name is not None and tool_name in named[:index]:
            first = yamlio.line_of(node, ["tools", named.index(tool_name), "name"])
            errors.append(
                _error(
                    source,
                    node,
                    ["tools", index, "name"],
                    f"tool {tool_name!r} is declared twice (first at line {first})",
                )
            )
    description = data.get("description", "") if isinstance(data.get("description"), str) else ""
    toolset = ToolSet(name, tuple(tools), description, source)
    return Reading(toolset, tuple(errors), frozenset(broken), names_known, yamlio.line_of(node, ["toolset"]))


def load_toolset(path: str | Path) -> ToolSet:
    """A tool set file, validated (every error listed, each with its line); loaded once per
    version of the file.

    Example::

        billing = harness.load_toolset("scenarios/toolsets/billing.yaml")
    """
    reading = read_toolset(path)
    if reading.errors:
        raise ScenarioError.many(reading.errors)
    return reading.toolset


def bundled_dir() -> Path:
    return Path(str(resources.files("harness").joinpath(FOLDER)))


@cache
def bundled() -> dict[str, ToolSet]:
    """The tool sets shipped with the harness, by name."""
    found = {}
    for path in sorted(bundled_dir().iterdir()):
        if path.suffix in SUFFIXES:
            toolset = load_toolset(path)
            found[toolset.name] = toolset
    return found


@cache
def bundled_tools() -> dict[str, DeclaredTool]:
    """Every tool of the bundled tool sets, by name: what a scenario names with a plain string."""
    return {tool.name: tool for toolset in bundled().values() for tool in toolset.tools}


def find_toolset(name: str, scenario_path: str | Path) -> Reading | None:
    """The tool set ``name`` as seen from a scenario file (see the module docstring), as read
    (its errors with it), or None when there is no such tool set."""
    start = Path(scenario_path).resolve().parent
    if "/" in name or name.endswith(SUFFIXES):
        candidate = start / name
        return read_toolset(candidate) if candidate.is_file() else None
    for folder in [start, *start.parents]:
        for suffix in SUFFIXES:
            candidate = folder / FOLDER / f"{name}{suffix}"
            if candidate.is_file():
                reading = read_toolset(candidate)
                if reading.toolset.name != name:
                    mismatch = ScenarioError(
                        str(candidate),
                        f"the file is named {name!r} but declares toolset {reading.toolset.name!r}",
                        line=reading.name_line,
                        pointer="/toolset",
                    )
                    return dataclasses.replace(reading, errors=(*reading.errors, mismatch))
                return reading
    toolset = bundled().get(name)
    return Reading(toolset) if toolset is not None else None


def known_toolsets(scenario_path: str | Path) -> list[str]:
    """Tool set names visible from a scenario file (for "unknown tool set" messages)."""
    start = Path(scenario_path).resolve().parent
    names = set(bundled())
    for folder in [start, *start.parents]:
        if (folder / FOLDER).is_dir():
            names.update(p.stem for p in (folder / FOLDER).iterdir() if p.suffix in SUFFIXES)
    return sorted(names)


def bundled_tool(name: str, state: dict[str, Any] | None = None) -> Tool:
    """A fresh instance of the bundled tool ``name`` (``state``: its run state, new by default)."""
    tools = bundled_tools()
    if name not in tools:
        raise UnknownNameError("bundled tool", name, tools)
    return tools[name].instantiate({} if state is None else state)
