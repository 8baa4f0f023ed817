"""The tools of one run (:class:`RunTools`): the name the model calls -> how to run it, built
fresh for every run (with its tools' state and its injected faults). Not to be confused with
:mod:`harness.registry`, the extension points (adapters, checks, writers...) looked up by name.

An executor is any callable taking the parsed arguments and returning the
result text; raising :class:`ToolFailure` (or any exception) makes an error
result that is sent back to the model, which is what error scenarios test.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness import secrets
from harness.errors import CassetteError, UnknownNameError
from harness.model import MCPAnswer, ToolCall, ToolExecution, ToolResult, ToolSpec


class ToolFailure(Exception):
    """A tool's own failure: its message goes back to the model as an error result.

    Example::

        def record_payment(arguments, state):  # a tool set's function: ./billing.py:record_payment
            if arguments["amount"] <= 0:
                raise harness.ToolFailure("amount must be positive")  # sent to the model as an error result
            ...

    ``mcp`` is what an MCP server answered, when the failure is its ``isError`` result or its
    protocol error (the run's transcript keeps it beside the text).
    """

    def __init__(self, message: str, *, mcp: MCPAnswer | None = None) -> None:
        super().__init__(message)
        self.mcp = mcp


@dataclass(frozen=True)
class Answered:
    """A tool's text together with what its MCP server answered (an MCP executor returns one)."""

    text: str
    mcp: MCPAnswer | None = None


Executor = Callable[[dict[str, Any]], Any]


@dataclass
class Tool:
    """A tool the model can call: its spec, how to run it, and where it comes from.

    ``serial`` names the state a tool shares with others (a built-in's store, an MCP
    server): calls with the same key run one after another in call order, so parallel
    calls stay concurrent yet a replay sees the same results. ``name`` is the name
    scenarios use when the model is offered another (MCP names made provider-safe).
    """

    spec: ToolSpec
    execute: Executor
    source: str = "builtin"
    serial: str | None = None
    name: str = ""

    @property
    def logical_name(self) -> str:
        return self.name or self.spec.name


@dataclass
class Fault:
    """An injected failure: the ``on_call``-th call (1-based) of ``tool`` fails with ``error``."""

    tool: str
    on_call: int
    error: str


@dataclass
class RunTools:
    """The tools of one run, looked up by the name the model sees, with the scenario's injected
    faults and the count of calls each tool had so far (so a fault hits the right call).

    Example::

        tools = RunTools(faults=[Fault("memory", 1, "storage unavailable")])
        tools.add(Tool(spec, execute=lambda arguments: "stored"))
        execution = tools.execute(call, turn=0)
    """

    tools: dict[str, Tool] = field(default_factory=dict)
    faults: list[Fault] = field(default_factory=list)
    validate: bool = False  # answer arguments that break the tool's schema with the errors, unrun
    _calls: dict[str, int] = field(default_factory=dict)

    def add(self, tool: Tool) -> None:
        self.tools[tool.spec.name] = tool

    def specs(self) -> list[ToolSpec]:
        return [tool.spec for tool in self.tools.values()]

    def names(self) -> Iterable[str]:
        return self.tools.keys()

    def get(self, name: str) -> Tool:
        try:
            return self.tools[name]
        except KeyError:
            raise UnknownNameError("tool", name, self.tools) from None

    def plan(self, calls: Sequence[ToolCall]) -> list[Fault | None]:
        """The injected fault, if any, of each call of a turn, counted in call order before
        the calls run (so concurrency cannot change which call a fault hits)."""
        planned: list[Fault | None] = []
        for call in calls:
            tool = self.tools.get(call.name)
            if tool is None or call.arguments is None:
                planned.append(None)
                continue
            name = tool.logical_name
            self._calls[name] = count = self._calls.get(name, 0) + 1
            planned.append(next((f for f in self.faults if f.tool == name and f.on_call == count), None))
        return planned

    def execute(self, call: ToolCall, turn: int, fault: Fault | None = None) -> ToolExecution:
        """Run one call; any failure becomes an error result, never an exception."""
        started = time.perf_counter()
        tool = self.tools.get(call.name)
        source = tool.source if tool else "unknown"
        mcp: MCPAnswer | None = None
        if tool is None:
            content, is_error = f"error: unknown tool {call.name!r}; available: {', '.join(self.tools)}", True
        elif call.arguments is None:
            content, is_error = f"error: arguments could not be parsed: {call.parse_error}", True
        else:
            try:
                if fault is not None:
                    raise ToolFailure(fault.error)
                if self.validate:
                    check_arguments(tool.spec.schema_text, call.arguments)
                returned = tool.execute(call.arguments)
                if isinstance(returned, Answered):
                    mcp, returned = returned.mcp, returned.text
                content, is_error = render(returned), False
            except CassetteError:
                raise  # replay cannot go on: not the tool's failure
            except Exception as exc:  # a tool's failure is a result for the model
                content, is_error = f"error: {exc}", True
                mcp = exc.mcp if isinstance(exc, ToolFailure) else None
        elapsed = (time.perf_counter() - started) * 1000
        content = secrets.redact(content)  # a tool (an MCP server) may echo a secret it was given
        result = ToolResult(call.id, call.name, content, is_error)
        return ToolExecution(turn, call, result, elapsed, source, _redacted(mcp))


def _redacted(mcp: MCPAnswer | None) -> MCPAnswer | None:
    """``mcp`` with any registered secret its server echoed in the structured content redacted."""
    if mcp is None or not mcp.structured:
        return mcp
    text = json.dumps(mcp.content, ensure_ascii=False)
    clean = secrets.redact(text)
    if clean == text:
        return mcp
    try:
        content = json.loads(clean)
    except ValueError:  # the secret spanned JSON syntax: keep the redacted text
        content = clean
    return dataclasses.replace(mcp, content=content)


def check_arguments(schema: dict[str, Any] | str, arguments: dict[str, Any]) -> None:
    """Raise :class:`ToolFailure` listing every way ``arguments`` break ``schema`` (JSON Schema
    draft 2020-12), as an agent framework that validates tool arguments answers the model."""
    from harness.validation import argument_errors

    errors = argument_errors(schema, arguments, formats=False)
    if errors:
        problems = "; ".join(f"{'/'.join(map(str, e.path)) or 'arguments'}: {e.message}" for e in errors)
        raise ToolFailure(f"invalid arguments, the tool was not run: {problems}")


def render(value: Any) -> str:
    """A tool's return value as the text sent to the model (JSON for structures)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
