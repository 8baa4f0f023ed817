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

import json
import threading
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from harness import yamlio
from harness.errors import ScenarioError, UnknownNameError
from harness.tools.declared import DeclarationError, DeclaredTool, declare
from harness.tools.registry import Tool

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


@cache
def toolset_schema() -> dict[str, Any]:
    text = resources.files("harness").joinpath("schemas/toolset.schema.json").read_text()
    return json.loads(text)  # type: ignore[no-any-return]


def validate_declaration(
    data: Any, path: str, node: Any, where: tuple[str | int, ...]
) -> list[ScenarioError]:
    """Every schema error of one tool declaration at ``where`` in a YAML file."""
    import jsonschema

    schema = {"$ref": "#/$defs/tool", "$defs": toolset_schema()["$defs"]}
    validator = jsonschema.Draft202012Validator(schema)
    return [
        ScenarioError(
            path,
            error.message,
            line=yamlio.line_of(node, [*where, *error.absolute_path]),
            pointer=yamlio.pointer([*where, *error.absolute_path]),
        )
        for error in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    ]


def declare_at(
    data: dict[str, Any], path: str, node: Any, where: tuple[str | int, ...], toolset: str = ""
) -> DeclaredTool:
    """:func:`~harness.tools.declared.declare`, with a bad declaration reported at its line."""
    try:
        return declare(data, toolset=toolset, origin=path)
    except DeclarationError as exc:
        at = [*where, *exc.where]
        raise ScenarioError(
            path, str(exc), line=yamlio.line_of(node, at), pointer=yamlio.pointer(at)
        ) from None


_lock = threading.Lock()
_loaded: dict[tuple[str, float], ToolSet] = {}


def load_toolset(path: str | Path) -> ToolSet:
    """A tool set file, validated (every error listed, each with its line); loaded once per
    version of the file.

    Example::

        billing = harness.load_toolset("scenarios/toolsets/billing.yaml")
    """
    path = Path(path)
    key = (str(path.resolve()), path.stat().st_mtime)
    with _lock:
        if key in _loaded:
            return _loaded[key]
    try:
        data, node = yamlio.load(path)
    except yamlio.YamlError as exc:
        raise ScenarioError(str(path), str(exc), line=exc.line) from None
    import jsonschema

    errors = sorted(
        jsonschema.Draft202012Validator(toolset_schema()).iter_errors(data),
        key=lambda e: list(e.absolute_path),
    )
    if errors:
        raise ScenarioError.many(
            [
                ScenarioError(
                    str(path),
                    e.message,
                    line=yamlio.line_of(node, list(e.absolute_path)),
                    pointer=yamlio.pointer(list(e.absolute_path)),
                )
                for e in errors
            ]
        )
    tools = [
        declare_at(t, str(path), node, ("tools", i), data["toolset"]) for i, t in enumerate(data["tools"])
    ]
    names = [t.name for t in tools]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        raise ScenarioError(str(path), f"tool {duplicate!r} is declared twice", pointer="/tools")
    toolset = ToolSet(data["toolset"], tuple(tools), data.get("description", ""), str(path))
    with _lock:
        _loaded[key] = toolset
    return toolset


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


def find_toolset(name: str, scenario_path: str | Path) -> ToolSet | None:
    """The tool set ``name`` as seen from a scenario file (see the module docstring)."""
    start = Path(scenario_path).resolve().parent
    if "/" in name or name.endswith(SUFFIXES):
        candidate = start / name
        return load_toolset(candidate) if candidate.is_file() else None
    for folder in [start, *start.parents]:
        for suffix in SUFFIXES:
            candidate = folder / FOLDER / f"{name}{suffix}"
            if candidate.is_file():
                toolset = load_toolset(candidate)
                if toolset.name != name:
                    raise ScenarioError(
                        str(candidate), f"the file is named {name!r} but declares toolset {toolset.name!r}"
                    )
                return toolset
    return bundled().get(name)


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
