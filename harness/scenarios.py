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

import copy
import dataclasses
import datetime
import difflib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness import yamlio
from harness.errors import ScenarioError
from harness.matchers import exact_literal, matcher_problems
from harness.model import Message, ToolChoice
from harness.tools import seeded
from harness.tools.declared import DeclaredTool
from harness.tools.mcp.types import ENV_REFERENCE, MCPServerDecl, MCPUse
from harness.tools.run_tools import Fault
from harness.tools.toolsets import (
    FOLDER,
    bundled_tools,
    declare_checked,
    find_toolset,
    known_toolsets,
)
from harness.transport.credentials import safe_url
from harness.validation import (
    argument_errors,
    bundled_schema,
    bundled_schema_bytes,
    bundled_validator,
    did_you_mean,
    explain,
    in_path_order,
    judged,
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
    refused: dict[str, Any] | None = None  # the endpoint must refuse the request: {status, message?}
    confirm_before: tuple[str, ...] = ()  # tools the agent must ask the user about before calling


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

        scenario = harness.load_scenarios("scenarios", select=["weather.single.paris"])[0]
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


def scenario_schema() -> dict[str, Any]:
    return bundled_schema("scenario")


def _schema_errors(item: Any) -> list[Any]:
    """The scenario schema's errors in ``item``, sorted by where they are (:func:`judged`)."""
    return judged(
        "scenario-schema",
        bundled_schema_bytes("scenario"),
        item,
        lambda: in_path_order(bundled_validator("scenario").iter_errors(item)),
    )


def max_id_length() -> int:
    """The longest scenario id: it names cassette files (``<id>@<repeat>.mcp.yaml``, and temporary
    files beside them), and a file name may hold 255 bytes."""
    return int(scenario_schema()["properties"]["id"]["maxLength"])


Where = tuple[str | int, ...]


class _File:
    """One scenario of a file being read: its path, its place in the file and its node tree, the
    errors found so far (each once), and what its broken parts leave unknown, so that their
    consequences are not reported again (cascades folded into their cause)."""

    def __init__(self, path: Path, node: Any, prefix: Where = ()):
        self.path, self.node, self.prefix = str(path), node, prefix
        self.errors: list[ScenarioError] = []
        self._seen: set[tuple[str, int | None, str | None, str]] = set()
        self.cut: list[Where] = []  # the parts left out of the checks for their schema errors
        self.broken: set[str] = set()  # names of tools offered with errors
        self.offer_unknown = False  # a tool entry too broken to know what it offers

    def error(self, message: str, *where: str | int) -> None:
        line = yamlio.line_of(self.node, where)
        self.add(ScenarioError(self.path, message, line=line, pointer=yamlio.pointer([*self.prefix, *where])))

    def add(self, *errors: ScenarioError) -> None:
        for error in errors:
            if _identity(error) not in self._seen:
                self._seen.add(_identity(error))
                self.errors.append(error)

    def explains(self, name: str) -> bool:
        """Whether a broken tool entry accounts for ``name`` not being offered: the tool itself,
        or a name close to it (``get_weather`` when ``get_wether`` was offered)."""
        return self.offer_unknown or bool(
            self.broken and difflib.get_close_matches(name, self.broken, n=1, cutoff=0.8)
        )

    def was_cut(self, *prefix: str | int) -> bool:
        return any(path[: len(prefix)] == prefix for path in self.cut)


def _identity(error: ScenarioError) -> tuple[str, int | None, str | None, str]:
    """What makes two errors one: the same message at the same place (a tool set's, met again)."""
    return error.path, error.line, error.pointer, error.message


@dataclass
class _Reading:
    """One scenario file as read: its valid scenarios, every error, and each id with its line."""

    scenarios: list[Scenario] = field(default_factory=list)
    errors: list[ScenarioError] = field(default_factory=list)
    ids: list[tuple[str, int | None, str]] = field(default_factory=list)  # id, line, pointer


def load_file(path: str | Path) -> list[Scenario]:
    """Load one YAML file (a scenario, or a list of scenarios); every error in it is listed."""
    reading = _read(Path(path))
    if reading.errors:
        raise ScenarioError.many(reading.errors)
    return reading.scenarios


def _read(path: Path) -> _Reading:
    reading = _Reading()
    try:
        data, node = yamlio.load(path)
    except yamlio.YamlError as exc:
        reading.errors = [
            ScenarioError(str(path), str(e), line=e.line, pointer=e.pointer) for e in exc.problems
        ]
        return reading
    items = data if isinstance(data, list) else [data]
    for index, item in enumerate(items):
        where: Where = (index,) if isinstance(data, list) else ()
        file = _File(path, _node_at(node, where), where)
        scenario = _check(item, file)
        reading.errors += sorted(file.errors, key=lambda e: (e.path != file.path, e.line or 0))
        if scenario is not None:
            reading.scenarios.append(scenario)
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            reading.ids.append(
                (item["id"], yamlio.line_of(file.node, ["id"]), yamlio.pointer([*where, "id"]))
            )
    return reading


def _revisions_as_text(item: Any) -> None:
    """An MCP server's ``protocol_version: 2025-06-18`` unquoted, which YAML reads as a date, as
    the text it was written as."""
    servers = item.get("mcp_servers") if isinstance(item, dict) else None
    for spec in servers.values() if isinstance(servers, dict) else ():
        if isinstance(spec, dict) and isinstance(spec.get("protocol_version"), datetime.date):
            spec["protocol_version"] = spec["protocol_version"].isoformat()


def _node_at(node: Any, where: Where) -> Any:
    for index in where:
        node = node.value[index]
    return node


def _check(item: Any, file: _File) -> Scenario | None:
    """The scenario ``item`` describes, or None; every error noted in ``file``. The checks beyond
    the schema run on what the schema accepts: a part with a schema error is left out of them
    (and what it leaves unknown noted), so one pass finds every error."""
    _revisions_as_text(item)
    errors = _schema_errors(item)
    for at, message in explain(errors):
        file.error(message, *at)
    if not isinstance(item, dict):
        return None
    data = _without(item, errors, file)
    return _build(data, file)


def _without(item: dict[str, Any], errors: list[Any], file: _File) -> dict[str, Any]:
    """A copy of ``item`` without the parts the schema refused (a list item becomes None, so the
    others keep their index), each noted in ``file.cut`` with what it leaves unknown."""
    if not errors:
        return item
    data = copy.deepcopy(item)
    for error in errors:
        path: Where = tuple(error.absolute_path)
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            known = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
            cuts = [(*path, key) for key in error.instance if key not in known]
        else:
            cuts = [path]
        for cut in cuts:
            if cut:
                _cut(data, cut)
                file.cut.append(cut)
    for cut in file.cut:
        if cut[0] == "tools":  # an entry cut: the names it offered are unknown
            entry = item["tools"][cut[1]] if len(cut) > 1 and isinstance(item.get("tools"), list) else None
            if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                file.broken.add(entry["name"])
            else:
                file.offer_unknown = True
    return data


def _cut(data: Any, path: Where) -> None:
    *parents, last = path
    for part in parents:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):  # an enclosing part was cut already
            return
    if isinstance(data, dict):
        data.pop(last, None)
    elif isinstance(data, list) and isinstance(last, int) and last < len(data):
        data[last] = None


def _dicts(items: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """The objects of a list with their index (items cut for their errors are None)."""
    return ((i, item) for i, item in enumerate(items or ()) if isinstance(item, dict))


def _tools(data: dict[str, Any], file: _File) -> tuple[list[DeclaredTool], list[Any]]:
    """The declared tools and the MCP uses of a scenario's ``tools`` list."""
    declared: list[DeclaredTool] = []
    mcp: list[Any] = []
    bundled = bundled_tools()
    servers = data.get("mcp_servers") or {}
    for index, item in enumerate(data.get("tools") or []):
        if isinstance(item, str):
            if item in bundled:
                declared.append(bundled[item])
            else:
                file.broken.add(item)
                hint = did_you_mean(item, list(bundled))
                file.error(
                    f"unknown tool {item!r}: not a bundled tool ({', '.join(bundled)}){hint} Declare it "
                    "inline ({name, parameters, result ...}) or offer a tool set ({toolset: <name>}).",
                    "tools",
                    index,
                )
        elif not isinstance(item, dict):
            continue  # cut for its schema error
        elif "mcp" in item:
            if not _valid(item, "mcp_tools", file, ("tools", index)):
                file.offer_unknown = True
                continue
            if item["mcp"] not in servers and not file.was_cut("mcp_servers"):
                file.error(
                    f"MCP server {item['mcp']!r} is not declared in mcp_servers"
                    f"{did_you_mean(item['mcp'], list(servers))}",
                    "tools",
                    index,
                    "mcp",
                )
            mcp.append((item["mcp"], tuple(item["tools"]) if "tools" in item else None))
        elif "toolset" in item:
            if _valid(item, "toolset_tools", file, ("tools", index)):
                declared += _from_toolset(item, file, index)
            else:
                file.offer_unknown = True
        else:
            tool, problems = declare_checked(item, file.path, file.node, ("tools", index))
            file.add(*problems)
            if tool is not None:
                declared.append(tool)
            elif isinstance(item.get("name"), str):
                file.broken.add(item["name"])
            else:
                file.offer_unknown = True
    names = [tool.name for tool in declared]
    for name in sorted({n for n in names if names.count(n) > 1}):
        file.error(f"tool {name!r} is offered twice", "tools")
    return declared, mcp


def _valid(item: Any, definition: str, file: _File, where: Where) -> bool:
    """Whether ``item`` is valid against ``$defs/<definition>`` of the scenario schema (errors noted)."""
    errors = judged(
        "scenario-schema",
        bundled_schema_bytes("scenario") + definition.encode(),
        item,
        lambda: list(bundled_validator("scenario", definition).iter_errors(item)),
    )
    for at, message in explain(errors):
        file.error(message, *where, *at)
    return not errors


def _from_toolset(item: dict[str, Any], file: _File, index: int) -> list[DeclaredTool]:
    reading = find_toolset(item["toolset"], file.path)
    if reading is None:
        known = known_toolsets(file.path)
        file.offer_unknown = True
        file.error(
            f"unknown tool set {item['toolset']!r}: no {FOLDER}/{item['toolset']}.yaml beside this file "
            f"or in a folder above it, and no bundled one; known: {', '.join(known)}"
            f"{did_you_mean(item['toolset'], known)}",
            "tools",
            index,
            "toolset",
        )
        return []
    file.add(*reading.errors)
    file.broken |= reading.broken
    file.offer_unknown |= not reading.names_known
    toolset = reading.toolset
    wanted = item.get("tools") or toolset.names
    missing = [n for n in wanted if toolset.tool(n) is None and n not in reading.broken]
    if missing and reading.names_known:
        file.error(
            f"tool set {toolset.name!r} ({toolset.path}) has no tool {', '.join(map(repr, missing))}; "
            f"it has: {', '.join(toolset.names)}{did_you_mean(missing[0], toolset.names)}",
            "tools",
            index,
            "tools",
        )
    return [tool for name in wanted if (tool := toolset.tool(name)) is not None]


def _is_offered(name: str, declared: dict[str, DeclaredTool], mcp: list[Any]) -> bool:
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


def _offered_names(declared: dict[str, DeclaredTool], mcp: list[Any], naming: str) -> list[str]:
    names = list(declared)
    for server, tools in mcp:
        prefix = f"{server}." if naming == "dotted" else f"mcp__{server}__"
        names += [prefix + t for t in tools] if tools else [prefix + "*"]
    return names


def _check_names(
    data: dict[str, Any], file: _File, declared: dict[str, DeclaredTool], mcp: list[Any]
) -> None:
    """Expected calls, tools to confirm before, a named tool_choice and faults name offered tools."""
    offered = _offered_names(declared, mcp, data.get("mcp_naming", "prefixed"))

    def check(name: str, what: str, *where: str | int) -> None:
        if not _is_offered(name, declared, mcp) and not file.explains(name):
            file.error(
                f"{what}, which the scenario does not offer; offered: {', '.join(offered) or '(none)'}"
                f"{did_you_mean(name, offered)}",
                *where,
            )

    for where, expect in _expects(data):
        for index, call in _dicts(expect.get("calls")):
            check(call["name"], f"expected call to {call['name']!r}", *where, "calls", index, "name")
        for index, name in enumerate(expect.get("confirm_before") or ()):
            if isinstance(name, str):
                check(name, f"confirm_before names {name!r}", *where, "confirm_before", index)
    choice = data.get("tool_choice")
    refused = "refused" in (data.get("expect") or {})
    if isinstance(choice, dict) and not refused:  # a refusal scenario may name an absent tool
        check(choice["name"], f"tool_choice names {choice['name']!r}", "tool_choice", "name")
    for index, fault in _dicts(data.get("faults")):
        check(fault["tool"], f"fault on {fault['tool']!r}", "faults", index, "tool")


def _expects(data: dict[str, Any]) -> list[tuple[Where, dict[str, Any]]]:
    """Every expectation of a scenario with where it is: the opening's, then each follow-up's."""
    found: list[tuple[Where, dict[str, Any]]] = [(("expect",), data.get("expect") or {})]
    for index, follow_up in _dicts(data.get("follow_ups")):
        found.append((("follow_ups", index, "expect"), follow_up.get("expect") or {}))
    return found


def _check_expectations(data: dict[str, Any], file: _File, declared: dict[str, DeclaredTool]) -> None:
    max_turns = (
        None if file.was_cut("limits") else (data.get("limits") or {}).get("max_turns", DEFAULT_MAX_TURNS)
    )
    for where, expect in _expects(data):
        _check_expectation(expect, where, file, declared)
        _check_batch(expect, where, file, max_turns)


def _check_expectation(
    expect: dict[str, Any], at_expect: Where, file: _File, declared: dict[str, DeclaredTool]
) -> None:
    for index, call in _dicts(expect.get("calls")):
        args = call.get("args") or {}
        tool = declared.get(call["name"])
        schema = tool.parameters if tool is not None else None
        where = (*at_expect, "calls", index, "args")
        flagged: set[str | int] = set()  # arguments with an error already: not checked again
        for at, problem in matcher_problems(args, schema):
            file.error(problem, *where, *at)
            flagged.update(at[:1])
        if isinstance(schema, dict) and schema.get("additionalProperties") is False:
            known = schema.get("properties", {})
            for key in args:
                if key not in known:
                    flagged.add(key)
                    file.error(
                        f"expected argument {key!r} is not a parameter of {call['name']!r} "
                        f"(parameters: {', '.join(known) or 'none'}){did_you_mean(key, list(known))}",
                        *where,
                        key,
                    )
        if tool is not None:
            for at, problem in _literals_against(tool, {k: v for k, v in args.items() if k not in flagged}):
                file.error(problem, *where, *at)
    for at, problem in matcher_problems(expect.get("final")):
        file.error(problem, *at_expect, "final", *at)


def _literals_against(tool: DeclaredTool, args: dict[str, Any]) -> Iterator[tuple[list[str | int], str]]:
    """Each expected literal argument that breaks the tool's schema: a call holding it would
    break the schema too, so no valid call can ever match the expectation."""
    literals = {}
    for key, value in args.items():
        exact, literal = exact_literal(value)
        if exact:
            literals[key] = literal
    if not literals:
        return
    text = tool.spec.schema_text

    def broken() -> list[Any]:  # not the whole call's errors (required...): the call is partial here
        return [
            e for e in argument_errors(text, literals) if e.absolute_path and e.absolute_path[0] in literals
        ]

    for error in judged("literal-arguments", text.encode(), literals, broken):
        rule = yamlio.pointer(list(error.schema_path))
        yield (
            list(error.absolute_path),
            f"{error.message}, as the schema of {tool.name!r} requires (at {rule}): no valid call can "
            "match this expectation",
        )


def _check_batch(expect: dict[str, Any], where: Where, file: _File, max_turns: int | None) -> None:
    """A batch is N expected calls (one per item); a per-item loop needs a turn per item and one
    to answer (unchecked when ``max_turns`` is unknown: its own error is reported)."""
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
    elif mode == "per_item" and max_turns is not None and max_turns < items + 1:
        file.error(
            f"a per-item loop over {items} items needs limits.max_turns of at least {items + 1} "
            f"(one turn per item and one to answer); it is {max_turns}",
            *where,
            "batch",
        )


STDIO_ONLY = ("args", "env", "cwd", "fixture", "secret_env")
"""The fields of a stdio MCP server that an HTTP one (``url``) does not take."""


def _check_servers(data: dict[str, Any], file: _File) -> None:
    """Each MCP server is a stdio ``command`` or a Streamable HTTP ``url`` (with its fields only);
    a url is http(s) with a host; a header value is one line, its ``{env:NAME}`` well formed.
    A header value is never quoted: it is a secret."""
    for name, spec in (data.get("mcp_servers") or {}).items():
        if not isinstance(spec, dict):
            continue  # cut for its schema error
        where = ("mcp_servers", name)
        if ("command" in spec) == ("url" in spec):
            both = "has both 'command' and 'url'" if "command" in spec else "has neither 'command' nor 'url'"
            file.error(
                f"MCP server {name!r} {both}: expected a command (a stdio server it starts) "
                "or a url (a Streamable HTTP server it connects to)",
                *where,
            )
            continue
        if "command" in spec:
            if "headers" in spec:
                message = f"MCP server {name!r}: headers are for url servers, not a command"
                file.error(message, *where, "headers")
            continue
        for key in STDIO_ONLY:
            if key in spec:
                file.error(
                    f"MCP server {name!r}: {key!r} is for stdio servers (command); a url server "
                    "takes url, headers, timeout_s and protocol_version",
                    *where,
                    key,
                )
        url = urlsplit(spec["url"]) if isinstance(spec.get("url"), str) else None
        if url is None or url.scheme not in ("http", "https") or not url.hostname:
            file.error(
                f"MCP server {name!r}: url {safe_url(str(spec.get('url')))!r} is not an http:// or "
                "https:// URL with a host (the server's Streamable HTTP endpoint, e.g. "
                "http://127.0.0.1:8000/mcp)",
                *where,
                "url",
            )
        for header, value in (spec.get("headers") or {}).items():
            if not isinstance(value, str):
                continue  # cut for its schema error
            if "\r" in value or "\n" in value:
                message = f"MCP server {name!r}: header {header!r} holds a line break"
                file.error(message, *where, "headers", header)
            elif "{env:" in ENV_REFERENCE.sub("", value):
                file.error(
                    f"MCP server {name!r}: header {header!r} has an {{env:...}} that is not "
                    "{env:NAME} (NAME: letters, digits and _, not starting with a digit)",
                    *where,
                    "headers",
                    header,
                )


def _server(name: str, spec: dict[str, Any]) -> MCPServerDecl:
    """A declared MCP server (checked by :func:`_check_servers`)."""
    return MCPServerDecl(
        name,
        spec.get("command", ""),
        tuple(spec.get("args", ())),
        dict(spec.get("env", {})),
        spec.get("cwd"),
        float(spec.get("timeout_s", 20.0)),
        spec.get("fixture"),
        tuple(spec.get("secret_env", ())),
        spec.get("url"),
        dict(spec.get("headers", {})),
        spec.get("protocol_version"),
    )


def _build(data: dict[str, Any], file: _File) -> Scenario | None:
    _check_servers(data, file)
    tools, mcp = _tools(data, file)
    declared = {tool.name: tool for tool in tools}
    _check_names(data, file, declared, mcp)
    _check_expectations(data, file, declared)
    messages = seeded.read(data, file.error, lambda name: _is_offered(name, declared, mcp))
    if file.errors:
        return None
    servers = tuple(_server(name, spec) for name, spec in (data.get("mcp_servers") or {}).items())
    return Scenario(
        id=data["id"],
        category=data["category"],
        description=data.get("description", ""),
        messages=messages,
        expect=_expectation(data.get("expect") or {}),
        tools=tuple(tools),
        mcp_tools=tuple(mcp),
        mcp_servers=servers,
        mcp_naming=data.get("mcp_naming", "prefixed"),
        tool_choice=ToolChoice.parse(data.get("tool_choice")),
        parallel_tool_calls=data.get("parallel_tool_calls"),
        max_turns=1  # a scenario expecting a refusal sends one request
        if "refused" in (data.get("expect") or {})
        else (data.get("limits") or {}).get("max_turns", DEFAULT_MAX_TURNS),
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
        refused=expect.get("refused"),
        confirm_before=tuple(expect.get("confirm_before") or ()),
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


def check(paths: Sequence[str | Path]) -> tuple[list[Scenario], list[ScenarioError]]:
    """Every valid scenario of the files and folders ``paths`` (sorted by id) and every error of
    every file, each once (a tool set shared by many scenarios reports its errors once), in one
    pass: what ``harness validate`` prints. Ids must be unique (an id names a cassette): a second
    one is an error at its line, naming the first."""
    errors: dict[tuple[str, int | None, str | None, str], ScenarioError] = {}
    scenarios: dict[str, Scenario] = {}
    first: dict[str, str] = {}  # id -> where it is first
    files: dict[Path, Path] = {}  # each file once, named as first given
    for raw in paths:
        try:
            for given in scenario_files([raw]):
                files.setdefault(given.resolve(), given)
        except ScenarioError as exc:
            errors[_identity(exc)] = exc
    for shown in files.values():
        reading = _read(shown)
        found = {s.id: s for s in reading.scenarios}
        problems = list(reading.errors)
        for scenario_id, line, pointer in reading.ids:
            if scenario_id in first:
                problems.append(
                    ScenarioError(
                        str(shown),
                        f"duplicate scenario id {scenario_id!r}: first at {first[scenario_id]} (an id names "
                        "the scenario's cassettes; give each scenario its own)",
                        line=line,
                        pointer=pointer,
                    )
                )
            else:
                first[scenario_id] = f"{shown}:{line}" if line else str(shown)
                if scenario_id in found:
                    scenarios[scenario_id] = found[scenario_id]
        for error in problems:
            errors.setdefault(_identity(error), error)
    return sorted(scenarios.values(), key=lambda s: s.id), list(errors.values())


def load(paths: Sequence[str | Path]) -> list[Scenario]:
    """Load scenario files and folders (``*.yaml`` / ``*.yml``, recursively), sorted by id.

    Every bad file is reported (one :class:`ScenarioError` listing them all, see :func:`check`).
    Ids must be unique: an id names a cassette.
    """
    scenarios, errors = check(paths)
    if errors:
        raise ScenarioError.many(errors)
    return scenarios


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
