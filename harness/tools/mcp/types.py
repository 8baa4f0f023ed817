"""The values the MCP manager hands out: server specs, tools, call results and issues.

Kept apart from the manager so they can be imported (and pickled, and written to
results files) without touching asyncio or the ``mcp`` package.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from harness import secrets
from harness.errors import ServerError
from harness.model import Finding, Severity
from harness.transport.credentials import safe_url

IssueKind = Literal["start_failed", "timeout", "crashed", "protocol_error", "orphan", "shutdown_error"]
ENV_REFERENCE = re.compile(r"\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
"""``{env:NAME}`` in an HTTP server's header value: that variable of the harness's environment."""


def fill_env(value: str, missing: Callable[[str], str]) -> str:
    """``value`` with each ``{env:NAME}`` replaced by that variable's value, registered as a
    secret (a header may carry it among other text); a variable that is not set is replaced by
    what ``missing(NAME)`` gives, or its error."""

    def variable(match: re.Match[str]) -> str:
        found = os.environ.get(match[1])
        if found is None:
            return missing(match[1])
        secrets.register(found)
        return found

    return ENV_REFERENCE.sub(variable, value)


FATAL_KINDS: frozenset[str] = frozenset({"start_failed", "timeout", "crashed"})
"""Issue kinds after which the server is stopped and every later call fails fast."""


class ServerSpecLike(Protocol):
    """Anything shaped like a server spec (``harness.scenarios.MCPServerSpec`` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def command(self) -> str: ...
    @property
    def args(self) -> Sequence[str]: ...
    @property
    def env(self) -> Mapping[str, str]: ...
    @property
    def cwd(self) -> str | None: ...
    @property
    def timeout_s(self) -> float: ...


@dataclass(frozen=True)
class MCPServerDecl:
    """An MCP server as a scenario declares it: a stdio ``command`` (``{python}`` and ``{fixture}``
    not yet filled in) or a Streamable HTTP ``url`` with ``headers`` (``{env:NAME}`` not yet
    filled in); ``protocol_version`` pins the revision (None: the newest both sides speak)."""

    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    timeout_s: float = 20.0
    fixture: str | None = None
    secret_env: tuple[str, ...] = ()  # variables passed from the harness's environment, never written
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)  # every value a secret, never written
    protocol_version: str | None = None


@dataclass(frozen=True)
class MCPUse:
    """The MCP side of a scenario: its servers, which of their tools to offer (``None``: all of
    a server's), and how to name them (``prefixed``: ``mcp__<server>__<tool>``; ``dotted``)."""

    scenario_id: str
    servers: tuple[MCPServerDecl, ...] = ()
    tools: tuple[tuple[str, tuple[str, ...] | None], ...] = ()
    naming: str = "prefixed"


@dataclass
class MCPServerSpec:
    """One MCP server declared for a run: a stdio ``command``, or a Streamable HTTP ``url``.

    ``env`` is added to the SDK's minimal inherited environment (HOME, LOGNAME, PATH,
    SHELL, TERM, USER), not to the harness's whole environment. ``headers`` go with every
    HTTP request to ``url`` (their values are registered as secrets). ``timeout_s`` bounds
    the start (spawn or connect, handshake, tool listing) and is the default per-call timeout.
    ``protocol_version`` pins the MCP revision; None negotiates the newest both sides speak.
    """

    name: str
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    timeout_s: float = 10.0
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    protocol_version: str | None = None

    @classmethod
    def of(cls, spec: ServerSpecLike) -> MCPServerSpec:
        """A copy of any spec-shaped object, so the manager owns plain lists and dicts (a spec
        without ``url``, ``headers`` or ``protocol_version`` is a stdio one, negotiating)."""
        return cls(
            spec.name,
            spec.command,
            list(spec.args),
            dict(spec.env),
            spec.cwd,
            float(spec.timeout_s),
            getattr(spec, "url", None),
            dict(getattr(spec, "headers", None) or {}),
            getattr(spec, "protocol_version", None),
        )

    @property
    def where(self) -> str:
        """What to call the server in a message: its command, or its URL without credentials."""
        return repr(self.command) if self.url is None else safe_url(self.url)


@dataclass(frozen=True)
class MCPTool:
    """A tool as an MCP server listed it (``output_schema`` and ``annotations`` as listed, or
    ``None``)."""

    server: str
    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None


@dataclass(frozen=True)
class MCPCallResult:
    """What a ``tools/call`` returned: the text for the model, the isError flag, and
    the structured content when the server sent one (``has_structured``: it did), and how many
    progress notifications came before it, with their values in order (``progress_values``: empty
    when a recording from before they were kept has only the count). ``serialized`` is false when
    a structured result came without its JSON in a text block."""

    text: str
    is_error: bool = False
    structured: Any = None
    has_structured: bool = False
    progress: int = 0
    progress_values: tuple[float, ...] = ()
    serialized: bool = True


@dataclass(frozen=True)
class MCPIssue:
    """Something that went wrong with a server, recorded instead of raised.

    ``stderr_tail`` is the end of what the server wrote to stderr up to that moment.
    """

    server: str
    kind: IssueKind
    detail: str
    stderr_tail: str = ""
    tool: str | None = None

    @property
    def fatal(self) -> bool:
        return self.kind in FATAL_KINDS

    def to_finding(self, turn_index: int | None = None) -> Finding:
        """A failed finding ``mcp.<kind>`` with the server, tool and stderr tail as evidence."""
        evidence = {"server": self.server, "tool": self.tool, "stderr_tail": self.stderr_tail}
        severity: Severity = "warning" if self.kind == "protocol_error" else "error"
        detail = f"MCP server {self.server!r}: {self.detail}"
        return Finding(f"mcp.{self.kind}", severity, False, detail, turn_index, evidence)


class MCPCallError(ServerError):
    """A call that got no result: unknown or dead server, timeout, protocol error.

    ``issue`` is the recorded issue behind it (for a dead server, the one that killed it);
    ``code`` the JSON-RPC error code when the server answered the call with a protocol error.
    """

    def __init__(
        self,
        message: str,
        *,
        server: str,
        tool: str,
        issue: MCPIssue | None = None,
        code: int | None = None,
    ) -> None:
        super().__init__(message)
        self.server, self.tool, self.issue, self.code = server, tool, issue, code


def render_result(result: Any) -> MCPCallResult:
    """An SDK ``CallToolResult`` as text: text parts joined by newlines, others described briefly.

    With no content at all, the structured content (if any) is the text, as JSON.
    """
    content = getattr(result, "content", None) or []
    parts = [_describe_part(part) for part in content]
    structured = getattr(result, "structured_content", None)
    fields = getattr(result, "model_fields_set", None) or ()
    has_structured = structured is not None or "structured_content" in fields
    text = "\n".join(parts)
    if not parts and structured is not None:
        text = json.dumps(structured, ensure_ascii=False, sort_keys=True)
    serialized = not has_structured or _serialized(content, structured)
    return MCPCallResult(
        text, bool(getattr(result, "is_error", False)), structured, has_structured, serialized=serialized
    )


def _serialized(content: list[Any], structured: Any) -> bool:
    """Whether the text blocks of ``content`` carry ``structured`` (MCP 2025-06-18: a tool returning
    structured content should also return it serialized in a text block): one block holding it as
    JSON, or the official SDK's own form for a tool returning a plain value or a list, which it
    wraps as ``{"result": ...}`` and writes as that value's text, a block per item."""
    values = [_value(part.text) for part in content if getattr(part, "type", None) == "text"]
    wrapped = [{"result": v} for v in values] + [{"result": values}]
    return structured in values or structured in wrapped


def _value(text: str) -> Any:
    """A text block's JSON value, or the text itself when it is no JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _describe_part(part: Any) -> str:
    kind = getattr(part, "type", None)
    if kind == "text":
        return str(part.text)
    if kind in ("image", "audio"):
        size = len(part.data) * 3 // 4
        return f"[{kind} {part.mime_type}, ~{size} bytes]"
    if kind == "resource":
        resource = part.resource
        if getattr(resource, "text", None) is not None:
            return f"[resource {resource.uri}]\n{resource.text}"
        size = len(getattr(resource, "blob", "") or "") * 3 // 4
        return f"[resource {resource.uri}: {resource.mime_type or 'binary'}, ~{size} bytes]"
    if kind == "resource_link":
        return f"[resource link {part.uri} {part.name}]".rstrip()
    return f"[{kind or type(part).__name__} content]"
