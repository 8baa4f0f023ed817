"""MCPManager: the MCP servers of a run (stdio or Streamable HTTP), behind a synchronous,
thread-safe API.

The harness is synchronous and multi-threaded while the MCP SDK is async, so the
manager owns one asyncio loop in a background thread and every public method submits
work to it and waits. Each server lives in one long-running task that enters the
SDK's ``Client`` and leaves it again (the SDK's task groups and cancel scopes must be
entered and left by the same task); calls run as their own tasks on that client.

Failures are values: a server that does not start, crashes, hangs or answers with a
protocol error becomes an :class:`MCPIssue` (with its stderr tail) in ``issues``; the
run goes on. ``start()`` never raises for a server's failure. A timed-out or crashed
server is stopped and later calls to it fail fast with :class:`MCPCallError` (a
:class:`ServerError`), which :meth:`MCPManager.as_tools` turns into ``ToolFailure``.

Shutdown (``close()``, the context manager, or ``atexit``) stops every server through
the SDK (stdin closed, then SIGTERM/SIGKILL to its process group), then kills any
process still carrying the server's environment token: no orphans, checked via /proc.
With a ``stop`` event, setting it (an interrupted run) ends the calls and the start in
flight at once and makes shutdown begin with SIGTERM; until shutdown, a process exiting at
once (:func:`harness.children.exit_now`) kills the servers first.

An HTTP server (``url``) is reached with the SDK's ``streamable_http_client``, its
``headers`` (registered as secrets, with the URL's credentials) on every request; the
manager starts and stops no process for it, and leaves its session at shutdown. Each
server negotiates its MCP revision or keeps to the one its spec pins (:func:`_client`);
:meth:`MCPManager.protocol_version` says which it speaks.

A server is hostile input: lines on its stdout that are not JSON-RPC and tools it lists
without a name are ``protocol_error`` issues, and what the SDK logs about a server passes a
filter that redacts registered secrets and keeps tracebacks (and the values in them) off the
console.

``mcp`` is imported inside functions only: importing this module stays cheap.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import dataclasses
import functools
import logging
import os
import signal
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO, cast

from harness import children, secrets
from harness.errors import ConfigError, ServerError, UnknownNameError
from harness.model import MCPAnswer, ToolSpec
from harness.providers.rules import NameRules
from harness.providers.schemas import normalize_schema, schema_issues
from harness.tools.mcp._loop import Interrupted, LoopThread
from harness.tools.mcp._proc import TOKEN_VARIABLE, is_alive, kill_all, root_pid, token_pids
from harness.tools.mcp.types import (
    IssueKind,
    MCPCallError,
    MCPCallResult,
    MCPIssue,
    MCPServerSpec,
    MCPTool,
    ServerSpecLike,
    render_result,
)
from harness.tools.naming import OnForbidden, Style, ToolNamer
from harness.tools.run_tools import Answered, Tool, ToolFailure
from harness.transport.credentials import register_headers, register_url

if TYPE_CHECKING:
    from anyio import CancelScope, Event
    from mcp import Client

__all__ = [
    "MCPCallError",
    "MCPCallResult",
    "MCPIssue",
    "MCPManager",
    "MCPServerSpec",
    "MCPTool",
    "ServerSpecLike",
    "normalize_schema",
    "schema_issues",
]

CALL_GRACE_S = 2.0
"""Extra wait beyond a call's own timeout before the caller stops waiting regardless."""
STOP_WAIT_S = 8.0
"""Bound on one server's shutdown: the SDK's own escalation takes at most ~6.5 s."""
HTTP_READ_S = 300.0
"""An HTTP read's bound, the SDK's own default: a server holds its event stream open while idle
(a call's own timeout still bounds the wait for its answer)."""
STDERR_TAIL_BYTES = 4000
LIST_PAGES_MAX = 100
EXCERPT_CHARS = 80
"""How much of a server's stray stdout line an issue quotes (after redaction)."""


@dataclass(eq=False)
class _Server:
    """One server's state; touched only by the loop thread once started."""

    spec: MCPServerSpec
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    stderr: TextIO | None = None
    tools: list[MCPTool] = field(default_factory=list)
    client: Client | None = None
    pid: int | None = None
    death: MCPIssue | None = None
    stopping: bool = False
    noise: int = 0  # stdout lines that were not JSON-RPC
    noise_issue: MCPIssue | None = None
    noise_first: str = ""
    start_ms: float | None = None
    protocol_version: str | None = None  # the revision the handshake or discovery settled on
    task: asyncio.Task[None] | None = None
    scope: CancelScope | None = None
    ready: Event | None = None
    stop: Event | None = None


class MCPManager:
    """Starts (or connects to), calls and stops the MCP servers of one run (see the module doc)."""

    def __init__(self, specs: Iterable[ServerSpecLike], *, stop: threading.Event | None = None) -> None:
        self._servers: dict[str, _Server] = {}
        for spec in map(MCPServerSpec.of, specs):
            if not spec.name or spec.name in self._servers:
                raise ConfigError(f"MCP server names must be unique and non-empty: {spec.name!r}")
            register_headers(spec.headers)  # an HTTP server's credentials, never written
            if spec.url is not None:
                register_url(spec.url)
            self._servers[spec.name] = _Server(spec)
        self._issues: list[MCPIssue] = []
        self._lock = threading.Lock()
        self._loop: LoopThread | None = None
        self._state = "new"
        self._interrupt = stop
        self._tracked: int | None = None

    # -- sync API ---------------------------------------------------------------------

    def start(self) -> list[MCPIssue]:
        """Start every server (concurrently), list their tools; return the start issues."""
        if self._state != "new":
            raise ServerError(f"MCPManager cannot start: it is {self._state}")
        self._state = "started"
        _quiet_sdk_logs()
        self._loop = LoopThread("mcp-manager")
        atexit.register(self.close)
        self._tracked = children.track(self._kill_now)
        budget = max((s.spec.timeout_s for s in self._servers.values()), default=0) + STOP_WAIT_S
        try:
            self._loop.run(self._start_all(), budget, self._interrupt)
        except BaseException:  # KeyboardInterrupt included: leave nothing running
            self.close()
            raise
        return self.issues

    def tools(self) -> list[MCPTool]:
        """The tools each server listed at start (servers in declaration order).

        A server that dies later keeps its tools: the model's tool set stays stable
        for the run, and calls to it fail fast instead.
        """
        return [tool for server in self._servers.values() for tool in server.tools]

    def call(
        self, server: str, tool: str, arguments: dict[str, Any] | None = None, timeout_s: float | None = None
    ) -> MCPCallResult:
        """Call ``tool`` on ``server``; an isError result is returned, not raised.

        Raises :class:`MCPCallError` when there is no result (dead server, timeout,
        protocol error, the run interrupted) and :class:`UnknownNameError` for an undeclared server.
        """
        state = self._get(server)
        if self._state != "started" or self._loop is None:
            raise MCPCallError(f"MCPManager is {self._state}", server=server, tool=tool)
        timeout = state.spec.timeout_s if timeout_s is None else timeout_s
        wait = timeout + CALL_GRACE_S + STOP_WAIT_S
        try:
            return self._loop.run(self._call(state, tool, arguments or {}, timeout), wait, self._interrupt)
        except Interrupted:
            message = f"MCP tool {tool!r} on {server!r}: the run was interrupted"
            raise MCPCallError(message, server=server, tool=tool) from None

    def close(self) -> None:
        """Stop every server and the loop; kill anything left over (recorded as ``orphan``)."""
        if self._state != "started":
            self._state = "closed"
            return
        self._state = "closing"
        atexit.unregister(self.close)
        try:
            if self._loop is not None:
                self._loop.run(self._stop_all(), STOP_WAIT_S + 2)
        except (ServerError, RuntimeError):
            pass  # the sweep below still runs
        finally:
            self._sweep()
            if self._tracked is not None:
                children.untrack(self._tracked)
            if self._loop is not None:
                self._loop.stop()
            for state in self._servers.values():
                if state.stderr is not None:
                    state.stderr.close()
            self._state = "closed"

    def __enter__(self) -> MCPManager:
        if self._state == "new":
            self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def issues(self) -> list[MCPIssue]:
        """Every issue recorded so far, oldest first."""
        with self._lock:
            return list(self._issues)

    def alive(self, server: str) -> bool:
        """Whether ``server`` started and has not died or been stopped."""
        state = self._get(server)
        return state.client is not None and state.death is None

    def pids(self, server: str) -> list[int]:
        """Live processes of ``server`` (itself and descendants), found through /proc."""
        return token_pids(self._get(server).token)

    def protocol_version(self, server: str) -> str | None:
        """The MCP revision ``server`` speaks with the harness (None: it did not start)."""
        return self._get(server).protocol_version

    def start_ms(self, server: str) -> float | None:
        """How long the server took to spawn, initialize and list its tools."""
        return self._get(server).start_ms

    def stderr_tail(self, server: str, limit: int = STDERR_TAIL_BYTES) -> str:
        state = self._get(server)
        if state.stderr is None or state.stderr.closed:
            return ""
        fd = state.stderr.fileno()
        size = os.fstat(fd).st_size
        return os.pread(fd, limit, max(0, size - limit)).decode("utf-8", "replace").strip()

    def namer(
        self,
        family: str | NameRules = "openai",
        *,
        style: Style = "mcp",
        on_forbidden: OnForbidden = "sanitise",
        reserved: Iterable[str] = (),
    ) -> ToolNamer:
        """A :class:`ToolNamer` over every listed tool, for one provider family."""
        pairs = [(tool.server, tool.name) for tool in self.tools()]
        return ToolNamer(pairs, family, style=style, on_forbidden=on_forbidden, reserved=reserved)

    def as_tools(
        self,
        naming: ToolNamer | None = None,
        tools: Iterable[MCPTool] | None = None,
        on_call: OnCall | None = None,
    ) -> list[Tool]:
        """Registry tools (source ``mcp:<server>``) named by ``naming`` (default: OpenAI rules),
        for ``tools`` (default: every listed one). ``on_call`` sees each call's outcome (the run
        records them). Executors raise ``ToolFailure`` for isError results and failed calls."""
        namer = naming or self.namer()
        return [
            registry_tool(t, namer, self._executor(t.server, t.name, on_call)) for t in tools or self.tools()
        ]

    def _executor(
        self, server: str, tool: str, on_call: OnCall | None
    ) -> Callable[[dict[str, Any]], Answered]:
        def execute(arguments: dict[str, Any]) -> Answered:
            try:
                result = self.call(server, tool, arguments)
            except ServerError as exc:
                code = exc.code if isinstance(exc, MCPCallError) else None
                if on_call is not None:
                    on_call(server, tool, arguments, None, str(exc), code)
                raise tool_failure(server, tool, str(exc), code) from exc
            if on_call is not None:
                on_call(server, tool, arguments, result, None, None)
            return tool_text(server, tool, result)

        return execute

    def _get(self, server: str) -> _Server:
        try:
            return self._servers[server]
        except KeyError:
            raise UnknownNameError("MCP server", server, self._servers) from None

    def _record(self, state: _Server, kind: IssueKind, detail: str, tool: str | None = None) -> MCPIssue:
        issue = MCPIssue(state.spec.name, kind, detail, self.stderr_tail(state.spec.name), tool)
        with self._lock:
            self._issues.append(issue)
        if issue.fatal and state.death is None:
            state.death = issue
        return issue

    def _kill_now(self) -> None:
        """Kill every server's processes at once (the process is leaving: see :mod:`harness.children`)."""
        for state in self._servers.values():
            kill_all(token_pids(state.token))

    def _noise(self, state: _Server, message: object) -> None:
        """The server wrote something on stdout that is not JSON-RPC (the SDK hands the parse
        error over): one ``protocol_error`` issue per server, counting the lines and quoting the
        first (redacted, shortened), without the parser's traceback."""
        if not isinstance(message, Exception):
            return  # a notification
        state.noise += 1
        if state.noise_issue is None:
            state.noise_first = _stray_line(message)
            detail = f"wrote a line on stdout that is not a JSON-RPC message: {state.noise_first}"
            state.noise_issue = self._record(state, "protocol_error", detail)
            return
        detail = (
            f"wrote {state.noise} lines on stdout that are not JSON-RPC messages; "
            f"the first: {state.noise_first}"
        )
        with self._lock:
            at = self._issues.index(state.noise_issue)
            state.noise_issue = self._issues[at] = dataclasses.replace(state.noise_issue, detail=detail)

    def _sweep(self) -> None:
        """Kill whatever still carries a server's token after shutdown, as an ``orphan`` issue."""
        for state in self._servers.values():
            left = token_pids(state.token)
            if left:
                kill_all(left)
                self._record(state, "orphan", f"processes {left} outlived shutdown and were killed")

    # -- on the loop ------------------------------------------------------------------

    async def _start_all(self) -> None:
        import anyio

        for state in self._servers.values():
            state.ready, state.stop = anyio.Event(), anyio.Event()
            # A real file, not a pipe: the server can never block on it, and it can be read any time.
            stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
            state.stderr = cast(TextIO, stderr)
            state.task = asyncio.get_running_loop().create_task(self._serve(state))
        for state in self._servers.values():
            assert state.ready is not None
            await state.ready.wait()

    async def _serve(self, state: _Server) -> None:
        """The server's whole life: spawn or connect, handshake, list tools, wait for stop, shut down."""
        import anyio
        from mcp.types import Implementation

        spec = state.spec
        assert state.ready is not None and state.stop is not None and state.stderr is not None
        info = Implementation(name="toolcall-harness", version="0.1.0")

        async def on_message(message: object) -> None:  # notifications, and the transport's errors
            self._noise(state, message)

        started = time.perf_counter()
        deadline = asyncio.get_running_loop().call_later(spec.timeout_s, self._start_overdue, state)
        try:
            with anyio.CancelScope() as scope:
                state.scope = scope
                async with contextlib.AsyncExitStack() as stack:
                    transport = await _transport(state, stack)
                    client = _client(
                        transport,
                        spec.protocol_version,
                        read_timeout_seconds=spec.timeout_s,
                        client_info=info,
                        cache=None,
                        message_handler=on_message,
                    )
                    await stack.enter_async_context(client)
                    _keep_structured_results(client)
                    state.protocol_version = client.protocol_version
                    if spec.protocol_version not in (None, client.protocol_version):
                        detail = (
                            f"protocol_version {spec.protocol_version} was asked for, "
                            f"the server answered {client.protocol_version}"
                        )
                        self._record(state, "protocol_error", detail)
                    state.tools = await self._list_tools(state, client)
                    deadline.cancel()
                    state.start_ms = (time.perf_counter() - started) * 1000
                    state.pid = root_pid(state.token)
                    state.client = client
                    state.ready.set()
                    await state.stop.wait()
                    state.client = None
        except Exception as exc:  # includes ExceptionGroup from the SDK's task groups
            if state.start_ms is None and not state.stopping:
                verb = "start" if spec.url is None else "connect to"
                self._record(state, "start_failed", f"could not {verb} {spec.where}: {_describe(exc)}")
            elif state.death is None and not state.stopping:
                self._record(state, "shutdown_error", f"connection failed: {_describe(exc)}")
        finally:
            deadline.cancel()
            state.client = None
            state.ready.set()

    def _start_overdue(self, state: _Server) -> None:
        """The start deadline passed: record it, SIGTERM the server (no 2 s stdin grace), abandon."""
        if state.start_ms is not None or state.stopping:
            return
        self._record(state, "timeout", f"did not start within {state.spec.timeout_s:g}s")
        state.stopping = True
        kill_all(token_pids(state.token), signal.SIGTERM)
        if state.scope is not None:
            state.scope.cancel()

    async def _call(
        self, state: _Server, tool: str, arguments: dict[str, Any], timeout: float
    ) -> MCPCallResult:
        import anyio
        from mcp import MCPError
        from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        name = state.spec.name
        client = state.client
        if client is None or state.death is not None or state.stopping:
            raise _not_running(state, tool)
        if state.pid is not None and not is_alive(state.pid, state.token):
            issue = await self._retire(state, "crashed", f"process {state.pid} exited", tool)
            message = f"MCP server {name!r} crashed before {tool!r}"
            raise MCPCallError(message, server=name, tool=tool, issue=issue)
        notified: list[float] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            notified.append(progress)

        try:
            with anyio.fail_after(timeout + CALL_GRACE_S):
                result = await client.call_tool(
                    tool, arguments, read_timeout_seconds=timeout, progress_callback=on_progress
                )
        except (MCPError, TimeoutError) as exc:
            code = exc.code if isinstance(exc, MCPError) else REQUEST_TIMEOUT
            if state.death is not None or state.stopping:  # another call or close() stopped it
                raise _not_running(state, tool) from None
            if code == REQUEST_TIMEOUT:
                detail = f"{tool!r} gave no answer within {timeout:g}s"
                issue = await self._retire(state, "timeout", detail, tool)
                message = f"MCP tool {tool!r} on {name!r} timed out after {timeout:g}s; server stopped"
            elif code == CONNECTION_CLOSED:
                issue = await self._retire(state, "crashed", f"connection closed during {tool!r}", tool)
                message = f"MCP server {name!r} crashed during {tool!r}"
            else:
                issue = self._record(state, "protocol_error", f"{tool!r}: JSON-RPC error {code}: {exc}", tool)
                message = f"MCP tool {tool!r} on {name!r}: protocol error {code}: {exc}"
                raise MCPCallError(message, server=name, tool=tool, issue=issue, code=code) from None
            raise MCPCallError(message, server=name, tool=tool, issue=issue) from None
        except Exception as exc:  # a malformed result (pydantic ValidationError) and the like
            issue = self._record(state, "protocol_error", f"{tool!r}: {_describe(exc)}", tool)
            message = f"MCP tool {tool!r} on {name!r}: {issue.detail}"
            raise MCPCallError(message, server=name, tool=tool, issue=issue) from None
        return dataclasses.replace(
            render_result(result), progress=len(notified), progress_values=tuple(notified)
        )

    async def _retire(self, state: _Server, kind: IssueKind, detail: str, tool: str) -> MCPIssue:
        """Record a fatal issue, stop the server (SIGTERM first: it is misbehaving) and wait."""
        issue = self._record(state, kind, detail, tool)
        kill_all(token_pids(state.token), signal.SIGTERM)
        await self._stop(state)
        return issue

    async def _stop(self, state: _Server) -> None:
        state.stopping = True
        if state.stop is not None:
            state.stop.set()
        if state.scope is not None and state.start_ms is None:
            state.scope.cancel()  # still starting: abandon the handshake
        if state.task is not None and state.task is not asyncio.current_task():
            await asyncio.wait({state.task}, timeout=STOP_WAIT_S)

    async def _list_tools(self, state: _Server, client: Client) -> list[MCPTool]:
        """Every page of the server's tool list; a tool without a name is left out as an issue
        (nothing could call it, and no provider accepts it)."""
        tools: list[MCPTool] = []
        cursor: str | None = None
        for _ in range(LIST_PAGES_MAX):
            page = await client.list_tools(cursor=cursor)
            for t in page.tools:
                if not t.name:
                    self._record(state, "protocol_error", "listed a tool without a name: left out", t.name)
                    continue
                tools.append(
                    MCPTool(
                        state.spec.name,
                        t.name,
                        t.description or "",
                        dict(t.input_schema),
                        dict(t.output_schema) if t.output_schema is not None else None,
                        _annotations(t.annotations),
                    )
                )
            cursor = page.next_cursor
            if cursor is None:
                break
        return tools

    async def _stop_all(self) -> None:
        for state in self._servers.values():  # a crash while idle would otherwise go unnoticed
            pid = state.pid if state.client is not None and state.death is None else None
            if pid is not None and not is_alive(pid, state.token):
                self._record(state, "crashed", f"process {pid} exited while idle")
        if self._interrupt is not None and self._interrupt.is_set():  # no grace for a hung server
            for state in self._servers.values():
                state.stopping = True  # what follows is no failure of the server's
                kill_all(token_pids(state.token), signal.SIGTERM)
        await asyncio.gather(*(self._stop(state) for state in self._servers.values()))


async def _transport(state: _Server, stack: contextlib.AsyncExitStack) -> Any:
    """The SDK transport for ``state``'s server: its process over stdio (carrying the token), or
    Streamable HTTP to its URL with its headers on every request (the HTTP client closed with
    ``stack``; the SDK's docstring of ``streamable_http_client`` says headers go on one)."""
    spec = state.spec
    if spec.url is None:
        assert state.stderr is not None
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        env = {**spec.env, TOKEN_VARIABLE: state.token}
        params = StdioServerParameters(command=spec.command, args=list(spec.args), env=env, cwd=spec.cwd)
        return stdio_client(params, errlog=state.stderr)
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    timeout = httpx2.Timeout(spec.timeout_s, read=HTTP_READ_S)
    http = await stack.enter_async_context(httpx2.AsyncClient(headers=dict(spec.headers), timeout=timeout))
    return streamable_http_client(spec.url, http_client=http)


def _client(transport: Any, version: str | None, **options: Any) -> Client:
    """An SDK ``Client`` that negotiates the revision (``mode='auto'``: ``server/discover`` at the
    newest revision, falling back to the ``initialize`` handshake, which the server may answer
    with an older one), or is pinned to ``version``: a stateless (2026-07-28 on) one adopted
    directly, a handshake-era one offered in ``initialize``.

    The SDK's handshake always offers its newest handshake revision, so a pinned older one is
    offered by the session's ``initialize`` replaced for this client (SDK 2.3
    ``ClientSession.initialize``; its shape is checked by the pinned-revision tests)."""
    from mcp import Client
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    if version is None or version not in HANDSHAKE_PROTOCOL_VERSIONS:
        return Client(transport, mode=version or "auto", **options)
    if version == HANDSHAKE_PROTOCOL_VERSIONS[-1]:
        return Client(transport, mode="legacy", **options)
    pinned: str = version

    class _Pinned(Client):
        async def _build_session(self, exit_stack: contextlib.AsyncExitStack) -> Any:
            session = await super()._build_session(exit_stack)
            setattr(session, "initialize", functools.partial(_initialize_at, session, pinned))  # noqa: B010
            return session

    return _Pinned(transport, mode="legacy", **options)


async def _initialize_at(session: Any, version: str) -> Any:
    """The ``initialize`` handshake offering ``version`` (the SDK's own, with the offer changed)."""
    from mcp import types
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    result = await session.send_request(
        types.InitializeRequest(
            params=types.InitializeRequestParams(
                protocol_version=version,
                capabilities=session._build_capabilities(version),
                client_info=session._client_info,
            )
        ),
        types.InitializeResult,
    )
    if result.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:  # as the SDK's own refuses it
        raise RuntimeError(f"Unsupported protocol version from the server: {result.protocol_version}")
    session.adopt(result)
    await session.send_notification(types.InitializedNotification())
    return result


OnCall = Callable[[str, str, dict[str, Any], MCPCallResult | None, str | None, int | None], None]
"""(server, tool, arguments, result, failure, JSON-RPC error code): what a call came to."""


def tool_failure(server: str, tool: str, message: str, code: int | None) -> ToolFailure:
    """A call the server refused (a protocol error of ``code``, or none) as the tool's failure."""
    return ToolFailure(message, mcp=None if code is None else MCPAnswer(server, tool, error_code=code))


def tool_text(server: str, tool: str, result: MCPCallResult) -> Answered:
    """A result as the tool's answer (its text, with what the server answered beside it); an
    isError result is the tool's failure."""
    answer = MCPAnswer(
        server,
        tool,
        result.is_error,
        result.has_structured,
        result.structured,
        progress=result.progress,
        progress_values=result.progress_values,
        serialized=result.serialized,
    )
    if result.is_error:
        raise ToolFailure(result.text or f"MCP tool {tool!r} reported an error", mcp=answer)
    return Answered(result.text, answer)


def _keep_structured_results(client: Client) -> None:
    """Turn off the SDK client's own check of structured results against the tool's
    ``outputSchema``: it raises on the first violation and the result is lost, where the harness
    keeps the result (the model gets it as any client that does not validate would pass it on) and
    the ``protocol.mcp_output_schema`` check lists every violation with its JSON pointer."""

    async def keep(name: str, result: Any) -> None:
        return None

    setattr(client.session, "validate_tool_result", keep)  # noqa: B010 (an instance's method)


def _annotations(annotations: Any) -> dict[str, Any] | None:
    """A listed tool's annotations as their wire names (``readOnlyHint``...), unset ones left out."""
    if annotations is None:
        return None
    return dict(annotations.model_dump(mode="json", by_alias=True, exclude_none=True)) or None


def registry_tool(tool: MCPTool, namer: ToolNamer, execute: Callable[[dict[str, Any]], Any]) -> Tool:
    """An MCP tool as the registry holds it: its provider-safe name, its scenario name, and
    one serial lane per server (calls to one server run in call order)."""
    spec = ToolSpec(
        namer.exposed(tool.server, tool.name),
        tool.description or f"{tool.name} (MCP server {tool.server})",
        normalize_schema(tool.input_schema),
    )
    return Tool(
        spec,
        execute,
        source=f"mcp:{tool.server}",
        serial=f"mcp:{tool.server}",
        name=namer.raw(tool.server, tool.name),
    )


def _not_running(state: _Server, tool: str) -> MCPCallError:
    why = f"{state.death.kind}: {state.death.detail}" if state.death else "stopped"
    message = f"MCP server {state.spec.name!r} is not running ({why})"
    return MCPCallError(message, server=state.spec.name, tool=tool, issue=state.death)


def _stray_line(exc: Exception) -> str:
    """What an unparseable stdout line was: the line (redacted first, then shortened, so no part
    of a secret survives the cut) and why it is not JSON-RPC, from the parser's own error."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return secrets.redact(f"{type(exc).__name__}: {exc}")[:EXCERPT_CHARS]
    found = errors(include_url=False)
    line = found[0].get("input") if found else None
    why = "; ".join(dict.fromkeys(str(e.get("msg", "")) for e in found))
    quoted = secrets.redact(line if isinstance(line, str) else repr(line))
    if len(quoted) > EXCERPT_CHARS:
        quoted = quoted[:EXCERPT_CHARS] + "..."
    return f"{quoted!r} ({why})"


class _SDKLogFilter(logging.Filter):
    """On the MCP SDK's loggers: drops the parse failure of a server's stdout line (the manager
    records it as an issue), and makes every other record one line with registered secrets
    redacted: the SDK logs pydantic errors whose tracebacks quote what a server sent."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == "Failed to parse JSONRPC message from server":
            return False
        text = record.getMessage()
        error = record.exc_info[1] if record.exc_info else None
        if error is not None:
            text += f" ({type(error).__name__}: {(str(error).splitlines() or [''])[0]})"
        record.msg, record.args, record.exc_info, record.exc_text = secrets.redact(text), (), None, None
        return True


_SDK_FILTER = _SDKLogFilter()


def _quiet_sdk_logs() -> None:
    """Put :class:`_SDKLogFilter` on every MCP SDK logger (once each)."""
    import mcp.client.stdio  # noqa: F401  (its logger exists once it is imported)

    for name in list(logging.Logger.manager.loggerDict):
        if name == "mcp" or name.startswith("mcp."):
            logger = logging.getLogger(name)
            if _SDK_FILTER not in logger.filters:
                logger.addFilter(_SDK_FILTER)


def _describe(exc: BaseException) -> str:
    """A one-line description, looking inside exception groups for the real causes."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(inner) for inner in exc.exceptions)
    return f"{type(exc).__name__}: {exc}"
