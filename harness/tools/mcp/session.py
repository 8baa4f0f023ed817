"""The MCP side of one run: live servers, or their recording next to the HTTP cassette.

Live (``record`` and ``live`` modes, or ``--live-mcp``): the scenario's stdio
servers are started, and its Streamable HTTP ones reached, with
:class:`~harness.tools.mcp.manager.MCPManager`, their tools offered under provider-safe
names, and every listing, call, issue and revision spoken is recorded. Replay: the same
tools and results come from ``cassettes/<target>/<scenario-id>.mcp.yaml``, no process is
started and no socket opened; a call the recording does not hold is drift, as for HTTP.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args

import yaml

from harness import secrets
from harness.errors import CassetteDriftError, CassetteMissingError, ConfigError
from harness.model import Finding, MCPToolInfo
from harness.providers import adapter_class
from harness.providers.rules import NameRules
from harness.tools.mcp.manager import registry_tool, tool_failure, tool_text
from harness.tools.mcp.types import (
    IssueKind,
    MCPCallResult,
    MCPIssue,
    MCPServerDecl,
    MCPServerSpec,
    MCPTool,
    MCPUse,
    fill_env,
)
from harness.tools.naming import Style, ToolNamer
from harness.tools.run_tools import Answered, Tool
from harness.transport.cassette_files import NONE, Shape, check_field, described, load_recording


def recording_path(cassette: Path) -> Path:
    """``<scenario-id>.mcp.yaml`` beside ``<scenario-id>.yaml``."""
    return cassette.with_name(cassette.name.removesuffix(".yaml") + ".mcp.yaml")


def _canonical(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False)


class MCPSession:
    """Tools from the scenario's MCP servers for one run, recorded or replayed."""

    def __init__(
        self,
        target: str,
        use: MCPUse,
        wire_format: str,
        recording: Path,
        *,
        live: bool,
        record: bool,
        reserved: list[str],
        stop: threading.Event | None = None,
        protocol_version: str | None = None,
    ):
        self.target, self.use, self.recording = target, use, recording
        self.live, self.record = live, record
        self.stop = stop  # the run's interruption: ends the live servers' calls in flight
        self.protocol_version = protocol_version  # the target's MCP revision, for servers that pin none
        self.family = adapter_class(wire_format).family  # whose tool name rules the exposed names follow
        self.reserved = reserved
        self.manager: Any = None
        self.listed: list[MCPTool] = []
        self.protocol_versions: dict[str, str | None] = {}  # server -> the MCP revision spoken
        self.issues: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self._replay_calls: list[dict[str, Any]] = []
        self._fixtures: list[Path] = []
        self._lock = threading.Lock()
        self.namer: ToolNamer | None = None

    # -- lifecycle ------------------------------------------------------------------

    def start(self) -> MCPSession:
        if self.live:
            self._start_live()
        else:
            self._load()
        wanted = dict(self.use.tools)  # server -> the tools to offer (None: all of them)
        self.listed = [
            t for t in self.listed if t.server in wanted and t.name in (wanted[t.server] or [t.name])
        ]
        style: Style = "dotted" if self.use.naming == "dotted" else "mcp"
        self.namer = ToolNamer(
            [(t.server, t.name) for t in self.listed], self.family, style=style, reserved=self.reserved
        )
        return self

    def _start_live(self) -> None:
        from harness.tools.mcp.manager import MCPManager

        self.manager = MCPManager([self._spec(s) for s in self.use.servers], stop=self.stop)
        self.manager.start()
        self.listed = self.manager.tools()
        self.protocol_versions = {s.name: self.manager.protocol_version(s.name) for s in self.use.servers}

    def _spec(self, server: MCPServerDecl) -> MCPServerSpec:
        """The declared server with ``{python}`` and ``{fixture}`` filled in (fixtures made now), or
        its headers' ``{env:NAME}`` (every value registered as a secret)."""
        if server.url is not None:
            headers = {
                name: fill_env(value, self._unset(server, name)) for name, value in server.headers.items()
            }
            return MCPServerSpec(
                server.name,
                timeout_s=server.timeout_s,
                url=server.url,
                headers=headers,
                protocol_version=server.protocol_version or self.protocol_version,
            )
        fixture = ""
        if server.fixture:
            from harness.tools.mcp.fixtures import FIXTURES

            make = FIXTURES.get(server.fixture)
            if make is None:
                raise ConfigError(
                    f"scenario {self.use.scenario_id}: unknown MCP fixture {server.fixture!r}; "
                    f"known: {sorted(FIXTURES)}"
                )
            path = Path(tempfile.mkdtemp(prefix=f"harness-{server.fixture}-"))
            self._fixtures.append(path)
            fixture = str(make(path / "repo"))

        def fill(text: str) -> str:
            return text.replace("{python}", sys.executable).replace("{fixture}", fixture)

        cwd = fill(server.cwd) if server.cwd else (fixture or None)
        env = dict(server.env)
        for name in server.secret_env:
            value = os.environ.get(name)
            if value is None:
                raise ConfigError(
                    f"scenario {self.use.scenario_id}: MCP server {server.name!r} needs the environment "
                    f"variable {name} (secret_env)"
                )
            secrets.register(value)
            env[name] = value
        return MCPServerSpec(
            server.name,
            fill(server.command),
            [fill(a) for a in server.args],
            env,
            cwd,
            server.timeout_s,
            protocol_version=server.protocol_version or self.protocol_version,
        )

    def _unset(self, server: MCPServerDecl, header: str) -> Callable[[str], str]:
        """What a header's ``{env:NAME}`` of a variable that is not set comes to: an error naming it."""

        def refuse(name: str) -> str:
            raise ConfigError(
                f"scenario {self.use.scenario_id}: MCP server {server.name!r} needs the environment "
                f"variable {name} (headers.{header})"
            )

        return refuse

    def _load(self) -> None:
        try:  # bounded and guarded as cassettes are; a broken one is a CassetteCorruptError
            data = load_recording(self.recording, "mcp", recording_shape)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise CassetteMissingError(str(self.recording), self.target, self.use.scenario_id) from None
        self.listed = [
            MCPTool(
                server,
                t["name"],
                t.get("description") or "",
                t.get("input_schema") or {},
                t.get("output_schema"),
                t.get("annotations"),
            )
            for server, tools in data["servers"].items()
            for t in tools
        ]
        self.protocol_versions = dict(data.get("protocol_versions") or {})
        self._replay_calls = list(data["calls"])
        self.issues = list(data["issues"])

    def close(self) -> None:
        """Stop the servers, keep their issues, write the recording in record mode."""
        try:
            if self.manager is not None:
                self.manager.close()
                self.issues = [_issue(i) for i in self.manager.issues]
            if self.record and self.live:
                self._save()
        finally:
            for path in self._fixtures:
                shutil.rmtree(path, ignore_errors=True)

    def _save(self) -> None:
        servers: dict[str, list[dict[str, Any]]] = {s.name: [] for s in self.use.servers}
        for tool in self.listed:  # what the run offered (the scenario may use part of a server)
            listed = {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
            if tool.output_schema is not None:  # written only when listed: older recordings stay as they are
                listed["output_schema"] = tool.output_schema
            if tool.annotations is not None:
                listed["annotations"] = tool.annotations
            servers.setdefault(tool.server, []).append(listed)
        data = {
            "scenario": self.use.scenario_id,
            "servers": servers,
            "protocol_versions": self.protocol_versions,
            "calls": self.calls,
            "issues": self.issues,
        }
        self.recording.parent.mkdir(parents=True, exist_ok=True)
        self.recording.write_text(
            secrets.redact(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)),
            encoding="utf-8",
        )

    # -- what the run uses -------------------------------------------------------

    def tools(self) -> list[Tool]:
        """Registry tools: the live servers' (each call recorded), or the recording's."""
        assert self.namer is not None
        if self.live:
            return list(self.manager.as_tools(self.namer, self.listed, self._record_call))
        return [registry_tool(t, self.namer, self._replay(t.server, t.name)) for t in self.listed]

    def _record_call(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        result: MCPCallResult | None,
        failure: str | None,
        code: int | None,
    ) -> None:
        entry: dict[str, Any] = {"server": server, "tool": tool, "arguments": arguments}
        if result is not None:
            entry.update(text=result.text, is_error=result.is_error)
            if result.has_structured:
                entry["structured_content"] = result.structured
                if not result.serialized:
                    entry["serialized"] = False
            if result.progress:  # the values, in order (older recordings kept only their count)
                entry["progress"] = list(result.progress_values) or result.progress
        else:
            entry["failure"] = failure
            if code is not None:
                entry["error_code"] = code
        with self._lock:
            self.calls.append(entry)

    def tool_info(self) -> dict[str, MCPToolInfo]:
        """What the servers listed about the offered tools beyond their input schemas (output
        schemas, annotations), by the name scenarios use; tools with neither are left out."""
        assert self.namer is not None
        return {
            self.namer.raw(t.server, t.name): MCPToolInfo(t.server, t.name, t.output_schema, t.annotations)
            for t in self.listed
            if t.output_schema is not None or t.annotations is not None
        }

    def names(self) -> dict[str, str]:
        """Exposed name -> the name scenarios use (``mcp__<server>__<tool>`` or ``<server>.<tool>``)."""
        assert self.namer is not None
        return {exposed: self.namer.raw(*pair) for exposed, pair in self.namer.mapping().items()}

    def findings(self) -> list[Finding]:
        """Server issues and naming changes (what the provider would reject in a tool's schema
        the adapter reports, for every tool)."""
        found = [MCPIssue(**issue).to_finding() for issue in self.issues]
        if self.namer is not None:
            for exposed, why in sorted(self.namer.changes.items()):
                logical = self.names()[exposed]
                found.append(
                    Finding(
                        "wire.tool_name_mapped",
                        "info",
                        False,
                        f"MCP tool {logical!r} offered as {exposed!r} ({why}) for {self.family} naming rules",
                    )
                )
            found += [Finding("wire.tool_name_mapped", "info", False, note) for note in self.namer.notes]
        for tool in self.listed:
            if problem := tool_name_problem(tool.name):
                detail = f"MCP server {tool.server!r} lists a tool named {tool.name!r}: {problem}"
                evidence = {"server": tool.server, "tool": tool.name, "spec": TOOL_NAMES}
                found.append(Finding("mcp.tool_name_invalid", "warning", False, detail, evidence=evidence))
        for name, info in sorted(self.tool_info().items()):
            if info.annotations:
                hints = ", ".join(
                    f"{key}={json.dumps(value)}" for key, value in sorted(info.annotations.items())
                )
                found.append(
                    Finding(
                        "mcp.tool_annotations",
                        "info",
                        False,
                        f"MCP tool {name!r} is annotated {hints}",
                        evidence={"annotations": info.annotations},
                    )
                )
        return found

    def _replay(self, server: str, tool: str) -> Callable[[dict[str, Any]], Answered]:
        def replay(arguments: dict[str, Any]) -> Answered:
            key = (server, tool, _canonical(arguments))
            with self._lock:  # calls to two servers in one turn replay concurrently
                entry = next(
                    (
                        e
                        for e in self._replay_calls
                        if (e["server"], e["tool"], _canonical(e.get("arguments") or {})) == key
                    ),
                    None,
                )
                if entry is not None:
                    self._replay_calls.remove(entry)
            if entry is not None:
                if "failure" in entry:
                    raise tool_failure(server, tool, entry["failure"], entry.get("error_code"))
                structured = entry.get("structured_content")
                progress = entry.get("progress") or 0
                values = tuple(progress) if isinstance(progress, list) else ()
                result = MCPCallResult(
                    str(entry.get("text", "")),
                    bool(entry.get("is_error")),
                    structured,
                    "structured_content" in entry,
                    len(values) if isinstance(progress, list) else int(progress),
                    values,
                    entry.get("serialized", True) is not False,
                )
                return tool_text(server, tool, result)
            recorded = [
                f"{e['server']}/{e['tool']}({_canonical(e.get('arguments') or {})})"
                for e in self._replay_calls
            ] or ["nothing left"]
            raise CassetteDriftError(
                str(self.recording),
                self.use.scenario_id,
                f"MCP call {server}/{tool}({key[2]}) is not in the recording; "
                f"unplayed calls: {', '.join(recorded)}",
            )

        return replay


def recording_shape(data: Any) -> None:
    """Check what replay reads of an MCP recording (:class:`~harness.transport.cassette_files.Shape` for the
    first field that is wrong): the ``servers`` with their tools, the ``calls`` and the ``issues``
    a recording always holds (one without them is empty or cut short)."""
    if data is None:
        raise Shape([], "the file is empty (an MCP recording holds its servers, calls and issues)")
    if not isinstance(data, dict):
        raise Shape([], f"not an MCP recording: the file holds {described(data)}, not a mapping")
    for key, kind in (("servers", dict), ("calls", list), ("issues", list)):
        if not isinstance(data.get(key), kind):
            expected = "a mapping" if kind is dict else "a list"
            found = "no" if key not in data else described(data[key]) + " for"
            raise Shape(
                [key] if key in data else [], f"{found} {key!r}, expected {expected} (a file cut short?)"
            )
    for server, tools in data["servers"].items():
        if not isinstance(server, str) or not isinstance(tools, list):
            raise Shape(
                ["servers"], f"server {server!r} has {described(tools)}, expected a list of its tools"
            )
        for index, tool in enumerate(tools):
            where: list[str | int] = ["servers", server, index]
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                raise Shape(where, f"tool {index} of server {server!r} has no name")
            what = f"tool {tool['name']!r}"
            check_field(tool, "description", (str, NONE), "text", where, what)
            check_field(tool, "input_schema", (dict, NONE), "a mapping", where, what)
            check_field(tool, "output_schema", (dict, NONE), "a mapping", where, what)
            check_field(tool, "annotations", (dict, NONE), "a mapping", where, what)
    versions = data.get("protocol_versions")
    if versions is not None and (
        not isinstance(versions, dict) or not all(isinstance(v, str | NONE) for v in versions.values())
    ):
        raise Shape(
            ["protocol_versions"], "protocol_versions: expected a mapping of each server to its MCP revision"
        )
    for index, call in enumerate(data["calls"]):
        where = ["calls", index]
        if not isinstance(call, dict) or not all(isinstance(call.get(k), str) for k in ("server", "tool")):
            raise Shape(where, f"call {index} has no server and tool")
        check_field(call, "arguments", (dict, NONE), "a mapping", where, f"call {index}")
        check_field(call, "text", (str,), "text", where, f"call {index}")
        check_field(call, "failure", (str,), "text", where, f"call {index}")
        check_field(call, "error_code", (int,), "an integer", where, f"call {index}")
        check_field(call, "progress", (int, list), "a count or a list of values", where, f"call {index}")
        progress = call.get("progress")
        if isinstance(progress, list) and not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in progress
        ):
            raise Shape([*where, "progress"], f"call {index}: progress: expected a list of numbers")
        check_field(call, "serialized", (bool,), "true or false", where, f"call {index}")
    kinds = get_args(IssueKind)
    for index, issue in enumerate(data["issues"]):
        where = ["issues", index]
        if not isinstance(issue, dict) or not all(
            isinstance(issue.get(k), str) for k in ("server", "detail")
        ):
            raise Shape(where, f"issue {index} has no server and detail")
        if issue.get("kind") not in kinds:
            raise Shape(where, f"issue {index} has kind {issue.get('kind')!r}, expected one of {list(kinds)}")
        if unknown := set(issue) - ISSUE_FIELDS:
            raise Shape(where, f"issue {index} has unknown field(s) {sorted(map(str, unknown))}")
        check_field(issue, "stderr_tail", (str,), "text", where, f"issue {index}")
        check_field(issue, "tool", (str, NONE), "text", where, f"issue {index}")


ISSUE_FIELDS = frozenset(f.name for f in dataclasses.fields(MCPIssue))


def _issue(issue: MCPIssue) -> dict[str, Any]:
    return {
        "server": issue.server,
        "kind": issue.kind,
        "detail": secrets.redact(issue.detail),
        "stderr_tail": secrets.redact(issue.stderr_tail),
        "tool": issue.tool,
    }


TOOL_NAMES = "https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-names"
MCP_NAMES = NameRules("mcp", "A-Za-z0-9_.-", 128, source=TOOL_NAMES)
"""MCP's own rule for a tool's name (2025-11-25): 1 to 128 ASCII letters, digits, ``_``, ``-``
and ``.``. A provider's narrower rule is the namer's to meet (``wire.tool_name_mapped``)."""


def tool_name_problem(name: str) -> str | None:
    """How a listed tool's name breaks :data:`MCP_NAMES`, or None."""
    if MCP_NAMES.is_valid(name):
        return None
    if not 1 <= len(name) <= MCP_NAMES.max_len:
        return f"{len(name)} characters, where MCP allows 1 to {MCP_NAMES.max_len}"
    odd = sorted({c for c in name if not MCP_NAMES.allows(c)})
    return f"it holds {', '.join(map(repr, odd))}, where MCP allows ASCII letters, digits, '_', '-' and '.'"
