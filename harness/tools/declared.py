"""Declared tools: a name, a description, a JSON Schema, and what a call returns.

What a call returns is one of:

* ``result``: a canned result (any JSON value; a string is sent as it is);
* ``error``: every call fails with this message (sent back to the model as an error result);
* ``cases``: answers chosen by the call's arguments with the harness's matchers
  (``when`` is matched as a subset of the arguments, first match wins), and a
  ``default`` answer when none matches;
* ``sequence``: the answer of each call in turn, the last one repeating (a first
  call that fails, then one that succeeds);
* ``function``: a Python callable ``package.module:function`` (or
  ``path/to/file.py:function``, relative to the declaring file), called as
  ``function(arguments, state)`` where ``state`` is a dict that lives for one run
  and is shared by the functions of one tool set. Raising ``ToolFailure`` (or any
  exception) makes an error result.

Arguments that break the declared schema are not refused here: the tool answers
as declared so the run goes on, and the ``protocol.arguments_schema`` check
reports the error with its JSON Schema path.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import inspect
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.matchers import subset
from harness.model import ToolSpec
from harness.tools.run_tools import Tool, ToolFailure
from harness.validation import draft_2020_12_error

BEHAVIOURS = ("result", "error", "cases", "sequence", "function")
"""The keys that say what a declared tool returns; a tool has exactly one."""

ToolFunction = Callable[[dict[str, Any], dict[str, Any]], Any]


class DeclarationError(ValueError):
    """A tool declaration that cannot be used; ``where`` is the path of the bad field inside it."""

    def __init__(self, message: str, *where: str | int):
        super().__init__(message)
        self.where: tuple[str | int, ...] = where


@dataclass(frozen=True)
class Answer:
    """One answer of a tool: a result, or an error message."""

    result: Any = None
    error: str | None = None

    @classmethod
    def of(cls, data: dict[str, Any]) -> Answer:
        return cls(error=data["error"]) if "error" in data else cls(result=data.get("result"))

    def give(self) -> Any:
        if self.error is not None:
            raise ToolFailure(self.error)
        return self.result


@dataclass(frozen=True)
class Case:
    """An answer for calls whose arguments match ``when`` (a subset, with matchers)."""

    when: dict[str, Any]
    answer: Answer


@dataclass(frozen=True)
class DeclaredTool:
    """A tool as declared in a scenario or a tool set file. :meth:`instantiate` makes a fresh
    :class:`~harness.tools.run_tools.Tool` for one run.

    Example::

        billing = harness.load_toolset("scenarios/toolsets/billing.yaml")
        tool = billing.tool("lookup_customer").instantiate({})
        tool.execute({"email": "ana@example.com"})  # the declared case's result
    """

    name: str
    description: str
    parameters: dict[str, Any]
    toolset: str = ""
    answer: Answer | None = None
    cases: tuple[Case, ...] = ()
    default: Answer | None = None
    sequence: tuple[Answer, ...] = ()
    function: str | None = None
    origin: str = ""  # the file that declared it, for messages and relative function paths
    resolved: ToolFunction | None = field(default=None, compare=False, repr=False)

    @functools.cached_property
    def spec(self) -> ToolSpec:
        """The tool as offered to a model: one spec for every run (its canonical JSON made once)."""
        return ToolSpec(self.name, self.description, self.parameters)

    @property
    def source(self) -> str:
        """Where the tool comes from, as transcripts record it."""
        return f"toolset:{self.toolset}" if self.toolset else "declared"

    def instantiate(self, state: dict[str, Any]) -> Tool:
        """A fresh tool for one run; ``state`` is the run's state for this tool's tool set."""
        if self.resolved is not None:
            fn = self.resolved
            return Tool(self.spec, lambda args: fn(args, state), self.source, serial=f"state:{self.toolset}")
        if self.sequence:
            calls = [0]
            answers = self.sequence

            def next_answer(args: dict[str, Any]) -> Any:
                calls[0] += 1
                return answers[min(calls[0], len(answers)) - 1].give()

            return Tool(self.spec, next_answer, self.source, serial=f"sequence:{self.name}")
        if self.cases:
            return Tool(self.spec, self._by_case, self.source)
        answer = self.answer or Answer()
        return Tool(self.spec, lambda args: answer.give(), self.source)

    def _by_case(self, args: dict[str, Any]) -> Any:
        for case in self.cases:
            if not subset(case.when, args):
                return case.answer.give()
        if self.default is not None:
            return self.default.give()
        raise ToolFailure(f"no answer declared for these arguments (tool {self.name!r} has no case for them)")


def declare(data: dict[str, Any], *, toolset: str = "", origin: str | Path = "") -> DeclaredTool:
    """A :class:`DeclaredTool` from its declaration (already valid against the tool set schema's
    ``tool`` definition); :class:`DeclarationError` for what that schema cannot say."""
    behaviours = [key for key in BEHAVIOURS if key in data]
    if len(behaviours) != 1:
        found = ", ".join(behaviours) or "none of them"
        raise DeclarationError(
            f"tool {data['name']!r} needs exactly one of {', '.join(BEHAVIOURS)} to say what a call returns; "
            f"it has {found}"
        )
    if "default" in data and "cases" not in data:
        raise DeclarationError(f"tool {data['name']!r}: 'default' goes with 'cases'", "default")
    _check_parameters(data["name"], data["parameters"])
    function = data.get("function")
    resolved = resolve_function(function, origin) if function else None
    return DeclaredTool(
        name=data["name"],
        description=data.get("description", ""),
        parameters=data["parameters"],
        toolset=toolset,
        answer=Answer.of(data) if behaviours[0] in ("result", "error") else None,
        cases=tuple(Case(c["when"], Answer.of(c)) for c in data.get("cases", ())),
        default=Answer.of(data["default"]) if "default" in data else None,
        sequence=tuple(Answer.of(a) for a in data.get("sequence", ())),
        function=function,
        origin=str(origin),
        resolved=resolved,
    )


def _check_parameters(name: str, schema: dict[str, Any]) -> None:
    exc = draft_2020_12_error(schema)
    if exc is not None:
        where = "/".join(map(str, exc.absolute_path))
        raise DeclarationError(
            f"tool {name!r}: parameters is not a valid JSON Schema (draft 2020-12) at "
            f"{where or '(root)'}: {exc.message}",
            "parameters",
            *exc.absolute_path,
        ) from None
    if schema.get("type") != "object":
        raise DeclarationError(
            f"tool {name!r}: parameters must be an object schema ({{type: object, properties: ...}}); "
            "every provider requires it",
            "parameters",
        )


def resolve_function(reference: str, origin: str | Path = "") -> ToolFunction:
    """The tool function ``package.module:function`` or ``path/file.py:function`` names (a path is
    relative to ``origin``'s folder); :class:`DeclarationError` when it cannot be used."""
    fn: ToolFunction = resolve_callable(reference, origin, arity=2)
    return fn


def resolve_callable(reference: str, origin: str | Path = "", *, arity: int) -> Any:
    """The callable a ``module:function`` or ``file.py:function`` reference names, checked to take
    ``arity`` positional arguments."""
    module_name, _, attribute = reference.rpartition(":")
    try:
        if module_name.endswith(".py") or "/" in module_name:
            base = Path(origin).parent if origin else Path.cwd()
            module = _load_file((base / module_name).resolve())
        else:
            module = importlib.import_module(module_name)
    except SyntaxError as exc:  # the user's file: where, not a traceback
        where = f"{exc.filename}:{exc.lineno}" if exc.lineno else str(exc.filename)
        raise DeclarationError(
            f"function {reference!r}: cannot import {module_name!r}: syntax error at {where}: {exc.msg}",
            "function",
        ) from None
    except (ImportError, OSError) as exc:
        raise DeclarationError(
            f"function {reference!r}: cannot import {module_name!r}: {exc}", "function"
        ) from exc
    except (Exception, SystemExit) as exc:  # importing it ran code that failed, or asked to exit
        raise DeclarationError(
            f"function {reference!r}: importing {module_name!r} raised {type(exc).__name__}: {exc}",
            "function",
        ) from None
    fn = getattr(module, attribute, None)
    if not callable(fn):
        raise DeclarationError(
            f"function {reference!r}: {module_name!r} has no callable {attribute!r}", "function"
        )
    expected = ["(arguments, state)", "(task)"][arity == 1] if arity in (1, 2) else f"{arity} arguments"
    try:
        inspect.signature(fn).bind(*([{}] * arity))
    except TypeError:
        raise DeclarationError(
            f"function {reference!r} must accept {expected}: {arity} positional parameter(s)", "function"
        ) from None
    except ValueError:
        pass  # no signature to inspect (a builtin): trust it
    return fn


_LOADING = threading.Lock()


def _load_file(path: Path) -> Any:
    """A Python file as a module, loaded once per path (runs resolve their tools concurrently)."""
    with _LOADING:
        return _load_file_once(path)


def _load_file_once(path: Path) -> Any:
    name = f"harness_tools_{path.stem.replace('-', '_')}_{hashlib.sha1(str(path).encode()).hexdigest()[:10]}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"not a Python file: {path}")
    if not path.is_file():
        raise ImportError(f"no such file: {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
