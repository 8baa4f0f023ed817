"""The user's own agent under test, graded from the wire.

A target may name an agent instead of the harness's loop: ``agent =
"mypkg.agents:run"`` (or ``path/to/agent.py:run``). The harness calls it with an
:class:`AgentTask` (the scenario's messages, the tools as schemas plus Python
callables that answer as declared, the endpoint and the model) and lets it talk to
the provider with whatever client it likes. The run happens inside a vcrpy
cassette (vcrpy patches httpx, requests and aiohttp), so in replay nothing is sent
and in record every exchange is kept. Afterwards the transcript is rebuilt from
the recorded wire with the harness's own adapters (requests read back with
:meth:`~harness.providers.adapter.Adapter.read_request`, responses parsed as
``harness audit`` does) and every check runs on it: the user's stack is graded by
what it actually sent and received.

What the agent's tool callables did is known too, and compared with the wire
(:func:`conduct_findings`): a call on the wire the agent never executed, an
execution with no call on the wire, a result never sent back to the model, or sent
back changed.

vcrpy's patches are process-wide, so an agent run must have the process to
itself: :data:`WIRE_LOCK` lets harness-loop runs share the process and gives an
agent run exclusive use of it.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import secrets
from harness.errors import CassetteDriftError, CassetteMissingError, ConfigError
from harness.model import (
    Attempt,
    Exchange,
    Finding,
    Message,
    ParsedTurn,
    ProviderError,
    SentRequest,
    ToolCall,
    ToolChoice,
    ToolExecution,
    ToolResult,
    Transcript,
    WireResponse,
)
from harness.providers import Adapter
from harness.providers.reasoning import ARTEFACTS
from harness.tools.run_tools import RunTools, ToolFailure
from harness.transport.cassette import (
    MATCH_ON,
    Mode,
    RecordMode,
    drift_error,
    normalised_body,
    scrub_request,
    scrub_response,
)
from harness.transport.credentials import masked, scrub_uri

AgentFunction = Callable[["AgentTask"], Any]


class _WireLock:
    """A readers-writer lock: harness-loop runs share the process, an agent run has it alone."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._writer)
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._writer and self._readers == 0)
            self._writer = True
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()


WIRE_LOCK = _WireLock()
"""Held shared by every harness-loop run and exclusively by every agent run (vcrpy's patches
would otherwise catch the harness's own requests)."""


@dataclass(frozen=True)
class AgentEndpoint:
    """Where the agent's requests must go: ``base_url`` plus the wire format's own path (for
    the OpenAI SDK, ``openai_base_url`` ends in ``/v1``), the model, the key (a placeholder when
    the endpoint needs none: replay, the simulator) and the target's options.

    Example::

        client = openai.OpenAI(base_url=task.endpoint.openai_base_url, api_key=task.endpoint.api_key)
        reply = client.chat.completions.create(model=task.endpoint.model, messages=task.messages)
    """

    base_url: str
    model: str
    format: str
    api_key: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    stream: bool = False
    temperature: float | None = None
    max_tokens: int | None = None

    @property
    def openai_base_url(self) -> str:
        """The base URL an OpenAI-SDK client takes (``.../v1``)."""
        return self.base_url.rstrip("/") + "/v1"


@dataclass
class AgentTool:
    """A tool as the agent sees it: name, description, JSON Schema, and :meth:`__call__`, which
    answers as the scenario declares (raising :class:`~harness.tools.run_tools.ToolFailure` for
    an error the agent should send back to the model as a tool error).

    Example::

        try:
            content = task.tool(call.function.name)(call.function.arguments)
        except harness.ToolFailure as failure:
            content = f"error: {failure}"
    """

    name: str
    description: str
    parameters: dict[str, Any]
    _run: Callable[[dict[str, Any] | None, Any, str | None], ToolExecution] = field(repr=False)

    def __call__(self, arguments: dict[str, Any] | str | None = None) -> str:
        """Run the tool with ``arguments`` (an object, or its JSON text); the result text.
        Arguments that are not a JSON object are the model's error, answered as the harness's loop
        answers them: a :class:`~harness.tools.run_tools.ToolFailure` saying so, the tool not run."""
        parsed, error = _arguments(arguments)
        execution = self._run(parsed, arguments, error)
        if execution.result.is_error:
            raise ToolFailure(execution.result.content.removeprefix("error: "))
        return execution.result.content

    def openai(self) -> dict[str, Any]:
        """This tool in OpenAI's ``tools`` shape."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


@dataclass
class AgentTask:
    """What the harness gives the agent under test for one run of one scenario.

    Example::

        def run(task: harness.AgentTask) -> str:
            client = openai.OpenAI(base_url=task.endpoint.openai_base_url, api_key=task.endpoint.api_key)
            ...  # call task.tool(name)(arguments) for each tool call the model makes
    """

    scenario_id: str
    messages: list[dict[str, Any]]
    tools: list[AgentTool]
    tool_choice: str | dict[str, Any]
    endpoint: AgentEndpoint
    max_turns: int

    def tool(self, name: str) -> AgentTool:
        """The tool named ``name`` (``KeyError`` naming the tools when there is none)."""
        for tool in self.tools:
            if tool.name == name:
                return tool
        raise KeyError(f"no tool {name!r}; tools: {[t.name for t in self.tools]}")

    def openai_tools(self) -> list[dict[str, Any]]:
        """Every tool in OpenAI's ``tools`` shape."""
        return [tool.openai() for tool in self.tools]


def agent_tools(registry: RunTools, log: list[ToolExecution]) -> list[AgentTool]:
    """The run's tools as agent callables; every call is kept in ``log`` in call order."""
    lock = threading.Lock()
    tools = []
    for spec in registry.specs():

        def run(
            arguments: dict[str, Any] | None, raw: Any, error: str | None, name: str = spec.name
        ) -> ToolExecution:
            with lock:
                call = ToolCall(name, arguments, raw, f"agent-{len(log)}", None, len(log), error)
                (fault,) = registry.plan([call])
                execution = registry.execute(call, -1, fault)
                log.append(execution)
            return execution

        tools.append(AgentTool(spec.name, spec.description, spec.parameters, run))
    return tools


def _arguments(value: Any) -> tuple[dict[str, Any] | None, str | None]:
    """A call's arguments as the agent passed them (an object, its JSON text, nothing) as an
    object, or ``None`` and why they are not one."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return {}, None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError) as exc:
            return None, f"arguments are not valid JSON: {exc}"
    if not isinstance(value, dict):
        return None, f"arguments are not a JSON object: {type(value).__name__}"
    return dict(value), None


def call_agent(fn: AgentFunction, task: AgentTask) -> Any:
    """Call a sync or async agent function."""
    result = fn(task)
    if inspect.isawaitable(result):
        return asyncio.run(_await(result))
    return result


async def _await(value: Any) -> Any:
    return await value


# -- the cassette ------------------------------------------------------------------------------


class _Wire:
    """Every request the agent sent through vcrpy's patches, in the order it sent them, each with
    the cassette interaction that answered it (played, or recorded now), or ``None``: in replay a
    request the cassette does not hold (drift), live or recording one that got no response at all.

    vcrpy's stubs ask ``can_play_response_for`` about each request (some clients twice), then
    play it or, once the real server answered, ``append`` it: watching those three calls on the
    cassette gives the order of the conversation, whatever order the cassette holds it in."""

    def __init__(self, cassette: Any):
        self._lock = threading.Lock()
        self.sent: list[list[Any]] = []  # [vcrpy request, interaction index or None]
        can_play, play, append = cassette.can_play_response_for, cassette.play_response, cassette.append

        def asked(request: Any) -> bool:
            with self._lock:
                if not any(entry[0] is request for entry in self.sent):
                    self.sent.append([request, None])
            return bool(can_play(request))

        def played(request: Any) -> Any:
            with self._lock:
                before = cassette.play_counts.copy()
                response = play(request)
                index = next(i for i in cassette.play_counts if cassette.play_counts[i] != before[i])
                self._answer(request, index)
            return response

        def appended(request: Any, response: Any) -> None:
            with self._lock:
                index = len(cassette.data)
                append(request, response)
                if len(cassette.data) > index:
                    self._answer(request, index)

        cassette.can_play_response_for, cassette.play_response, cassette.append = asked, played, appended

    def _answer(self, request: Any, index: int) -> None:
        entry = next((e for e in self.sent if e[0] is request), None)
        if entry is None:
            self.sent.append([request, index])
        else:
            entry[1] = index

    def unanswered(self) -> list[Any]:
        """The requests no interaction answered (replay: the drifted ones)."""
        return [request for request, index in self.sent if index is None]


class _NoFiles:
    """A vcrpy persister for the runs that must leave the cassettes alone (replay and live): it
    reads the cassette (live: none, every request goes to the server) and never writes one."""

    def __init__(self, read: bool):
        self.read = read

    def load_cassette(self, cassette_path: str, serializer: Any) -> Any:
        from vcr.persisters.filesystem import CassetteNotFoundError, FilesystemPersister

        if not self.read:
            raise CassetteNotFoundError()
        return FilesystemPersister.load_cassette(cassette_path, serializer)

    def save_cassette(self, cassette_path: str, cassette_dict: Any, serializer: Any) -> None:
        return None


@contextmanager
def agent_cassette(
    path: Path, mode: Mode, record_mode: RecordMode, target: str, scenario_id: str
) -> Iterator[Any]:
    """vcrpy's cassette around an agent run: replay plays ``path`` and never goes live, record
    writes it (secrets scrubbed), live keeps the exchanges in memory only. Only record mode ever
    writes a file. ``cassette.harness_wire`` is the run's :class:`_Wire`."""
    import vcr

    if mode == "replay" and not path.is_file():
        raise CassetteMissingError(str(path), target, scenario_id)
    recorder = vcr.VCR(
        record_mode={"replay": "none", "live": "all"}.get(mode, record_mode),
        before_record_response=scrub_response,
        decode_compressed_response=True,
    )
    if mode != "record":
        recorder.register_persister(_NoFiles(read=mode == "replay"))
    for matcher in MATCH_ON:
        recorder.register_matcher(matcher.__name__, matcher)
    if mode == "record" and record_mode == "all" and path.exists():
        path.unlink()  # a fresh recording replaces the old one entirely
    with recorder.use_cassette(
        str(path), match_on=[m.__name__ for m in MATCH_ON], before_record_request=scrub_request
    ) as cassette:
        cassette.harness_wire = _Wire(cassette)
        yield cassette


def drift(cassette: Any, path: Path, scenario_id: str) -> CassetteDriftError | None:
    """A request the agent sent that the cassette does not hold (replay, or record mode ``once``
    over an existing cassette), with the diff to the closest recorded request."""
    unanswered = cassette.harness_wire.unanswered()
    if not unanswered:
        return None
    played = [cassette.play_counts[i] > 0 for i in range(len(cassette.data))]
    return drift_error(path, scenario_id, cassette.requests, played, unanswered[0])


def wire_exchanges(cassette: Any) -> list[tuple[Any, dict[str, Any] | None]]:
    """The run's (request, response) pairs in the order the agent sent the requests: the recorded
    pair for an answered request, the request as sent and ``None`` for one with no response."""
    return [
        (request, None) if index is None else cassette.data[index]
        for request, index in cassette.harness_wire.sent
    ]


# -- the transcript, rebuilt from the wire ---------------------------------------------------


def _text(body: Any) -> str:
    if isinstance(body, bytes):
        return body.decode("utf-8", errors="replace")
    return "" if body is None else str(body)


def _same(one: Any, other: Any) -> bool:
    """The same request sent again (a client's retry)."""
    return one.path == other.path and normalised_body(one) == normalised_body(other)


def rebuild(
    transcript: Transcript,
    adapter: Adapter,
    interactions: list[tuple[Any, dict[str, Any] | None]],
    why: str = "the agent's HTTP client got none",
) -> None:
    """Fill ``transcript`` with the exchanges the agent had, parsed by the harness's adapter. A
    request with no response (``None``) is an exchange without one, its error saying ``why``;
    sent again with the same body, it was retried: one exchange, each try an attempt."""
    failed: list[Attempt] = []
    for position, (request, response) in enumerate(interactions):
        following = interactions[position + 1][0] if position + 1 < len(interactions) else None
        no_response = f"no usable response from {scrub_uri(request.uri)}: {why}"
        if response is None and following is not None and _same(following, request):
            failed.append(Attempt(None, no_response))
            continue
        turn = len(transcript.exchanges)
        raw = _text(request.body)
        try:
            body = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            body = raw
        view = adapter.read_request(body if isinstance(body, dict) else {}, request.path)
        if turn == 0:
            transcript.tools = list(view.tools)
        transcript.findings.extend(f.at(turn) for f in view.findings)
        sent = SentRequest(
            request.method, scrub_uri(request.uri), masked(dict(request.headers)), secrets.redact_data(body)
        )
        if response is None:
            error = ProviderError(0, no_response, "transport_error")
            attempts = [*failed, Attempt(None, no_response)] if failed else []
            transcript.exchanges.append(Exchange(turn, sent, None, ParsedTurn(error=error), None, attempts))
            transcript.messages = list(view.messages)
            failed = []
            continue
        headers = {
            k: ", ".join(v) if isinstance(v, list) else str(v)
            for k, v in (response.get("headers") or {}).items()
        }
        wire = WireResponse(
            int(response["status"]["code"]), _text(response["body"].get("string")), masked(headers)
        )
        parsed = adapter.parse(wire, stream=view.stream, tools=view.tools)
        parsed.findings = [f.at(turn) for f in parsed.findings]
        if parsed.error is not None and parsed.error.refused_request:
            transcript.findings.append(_refused(turn, wire, parsed.error, view))
        attempts = [*failed, Attempt(wire.status, None, response.get("elapsed_ms"))] if failed else []
        failed = []
        transcript.exchanges.append(Exchange(turn, sent, wire, parsed, response.get("elapsed_ms"), attempts))
        transcript.messages = [*view.messages, parsed.as_message()]
    last = transcript.exchanges[-1] if transcript.exchanges else None
    if last is None:
        transcript.stop_reason = "harness_error"
    elif last.response is None:
        transcript.stop_reason = "transport_error"
    elif last.parsed.error is not None:
        transcript.stop_reason = "provider_error"
    elif last.parsed.tool_calls:
        transcript.stop_reason = "max_turns"
    else:
        transcript.stop_reason = "final"


SIM_RULE = "x-sim-rule"
"""The header in which the simulator names the rule a request it refused broke."""


def _refused(turn: int, wire: WireResponse, error: ProviderError, view: Any) -> Finding:
    """The endpoint refused the agent's request (a 4xx): the agent's fault, named with the rule it
    broke (the simulator's ``x-sim-rule`` header) and what the harness's reader saw wrong in it."""
    rule = next((v for k, v in wire.headers.items() if k.lower() == SIM_RULE), None)
    seen = [f.detail for f in view.findings if f.severity != "info"]
    message = error.message or "(no message)"
    detail = f"the endpoint refused the agent's request with HTTP {error.status}: {message}"
    if rule:
        detail += f"; the rule broken: {rule}"
    if seen:
        detail += f"; in the request: {'; '.join(seen[:3])}"
    return Finding(
        "agent.request_refused",
        "error",
        False,
        secrets.redact(detail),
        turn,
        {"status": error.status, "rule": rule, "request_findings": seen},
    )


def conduct_findings(
    transcript: Transcript, adapter: Adapter, executed: list[ToolExecution]
) -> list[Finding]:
    """Where the agent's conduct and the wire disagree: calls on the wire it never executed,
    executions no call on the wire asked for, results not sent back (or sent back changed).
    Also gives each execution the turn of the call it answered."""
    findings: list[Finding] = []
    pending = list(range(len(executed)))
    for turn, call in transcript.calls:
        match = next(
            (
                i
                for i in pending
                if executed[i].call.name == call.name and executed[i].call.arguments == call.arguments
            ),
            None,
        )
        if match is None:
            findings.append(
                Finding(
                    "agent.call_not_executed",
                    "error",
                    False,
                    f"the model called {call.name}({json.dumps(call.arguments)}) in turn {turn}; "
                    "the agent never ran it",
                    turn,
                )
            )
            continue
        pending.remove(match)
        execution = executed[match]
        executed[match] = ToolExecution(
            turn,
            call,
            ToolResult(call.id, call.name, execution.result.content, execution.result.is_error),
            execution.elapsed_ms,
            execution.source,
        )
        findings += _result_sent_back(transcript, adapter, turn, call, executed[match].result)
    findings += _reasoning_sent_back(transcript, adapter)
    for index in pending:
        execution = executed[index]
        findings.append(
            Finding(
                "agent.execution_without_call",
                "warning",
                False,
                f"the agent ran {execution.call.name}({json.dumps(execution.call.arguments)}) without a call "
                "on the wire asking for it",
            )
        )
    return findings


def _result_sent_back(
    transcript: Transcript, adapter: Adapter, turn: int, call: ToolCall, result: ToolResult
) -> list[Finding]:
    """The request after ``turn`` carries a result for ``call`` (by id, else by name), with what
    the tool returned."""
    if turn + 1 >= len(transcript.exchanges):
        return []  # the run ended on this turn; whether it should have is for other checks
    request = transcript.exchanges[turn + 1].request
    view = adapter.read_request(request.body if isinstance(request.body, dict) else {}, "")
    results = [m.tool_result for m in view.messages if m.tool_result is not None]
    sent = next((r for r in results if call.wire_id and r.call_id == call.wire_id), None)
    if sent is None:
        sent = next((r for r in results if r.name == call.name and not call.wire_id), None)
    if sent is None:
        return [
            Finding(
                "agent.tool_result_missing",
                "error",
                False,
                f"the result of {call.name} (call {call.wire_id or call.id}, turn {turn}) is not in the "
                "next request",
                turn + 1,
            )
        ]
    if _normal(sent.content) != _normal(result.content):
        what = "an empty result" if not sent.content.strip() else _quoted(sent.content)
        return [
            Finding(
                "agent.tool_result_changed",
                "error",
                False,
                f"the agent sent back {what} for {call.name} (call {call.wire_id or call.id}, turn {turn}); "
                f"the tool returned {_quoted(result.content)}",
                turn + 1,
                {"returned": result.content, "sent": sent.content},
            )
        ]
    return []


def _reasoning_sent_back(transcript: Transcript, adapter: Adapter) -> list[Finding]:
    """Each turn whose calls came with the format's reasoning artefact comes back, in the next
    request, with that artefact: thinking models refuse (or answer worse) a tool turn without it."""
    artefact = ARTEFACTS.get(adapter.format)
    findings: list[Finding] = []
    for turn, exchange in enumerate(transcript.exchanges[:-1]):
        returned = exchange.parsed.as_message()
        if artefact is None or not returned.tool_calls or not artefact.carried(returned):
            continue
        ids = {c.wire_id for c in returned.tool_calls if c.wire_id}
        request = transcript.exchanges[turn + 1].request
        view = adapter.read_request(request.body if isinstance(request.body, dict) else {}, request.url)
        sent = [
            m
            for m in view.messages
            if m.role == "assistant" and m.tool_calls and {c.wire_id for c in m.tool_calls} & ids
        ]
        if sent and not any(artefact.carried(m) for m in sent):
            names = ", ".join(c.name for c in returned.tool_calls)
            findings.append(
                Finding(
                    "agent.reasoning_dropped",
                    "error",
                    False,
                    f"the endpoint returned a {artefact.name} with the calls of turn {turn} ({names}); the "
                    f"agent sent that turn back without it in the next request "
                    f"[{', '.join(artefact.sources)}]",
                    turn + 1,
                    {"artefact": artefact.name, "turn": turn},
                )
            )
    return findings


def _choice_sent(transcript: Transcript, adapter: Adapter, scenario: str | dict[str, Any]) -> list[Finding]:
    """The scenario's forcing ``tool_choice`` (``required``, ``none`` or a named tool) is in the
    agent's first request: an agent that leaves it out leaves the model free to do otherwise."""
    wanted = ToolChoice.parse(scenario)
    if wanted.mode == "auto" or not transcript.exchanges:
        return []
    request = transcript.exchanges[0].request
    view = adapter.read_request(request.body if isinstance(request.body, dict) else {}, request.url)
    if view.tool_choice is None and any(
        f.check_id.startswith("wire.request_tool_choice") for f in view.findings
    ):
        return []  # sent, in a shape the provider refuses: agent.request_refused names it
    sent = view.tool_choice.label() if view.tool_choice is not None else "none given (the provider's default)"
    if sent == wanted.label():
        return []
    return [
        Finding(
            "agent.tool_choice_not_sent",
            "error",
            False,
            f"the scenario forces tool_choice {wanted.label()!r}; the agent's first request sent {sent!r}",
            0,
            {"scenario": wanted.label(), "sent": sent},
        )
    ]


def _quoted(text: str, limit: int = 120) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _normal(text: str) -> Any:
    """Tool result text compared as JSON when it is JSON (clients re-serialise it)."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return text.strip()


def task_messages(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """The scenario's opening messages as plain ``{role, content}`` dicts; a seeded history's
    turns in the scenario's neutral shape (``calls: [{id, name, args}]`` on an assistant
    turn, ``{role: tool, call_id, name, content, is_error}`` for a result: a JSON result's content
    is its JSON text), for the agent to write in its own wire shape."""
    plain: list[dict[str, Any]] = []
    for m in messages:
        if m.tool_result is not None:
            r = m.tool_result
            plain.append(
                {
                    "role": "tool",
                    "call_id": r.call_id,
                    "name": r.name,
                    "content": r.content,
                    "is_error": r.is_error,
                }
            )
        elif m.tool_calls:
            calls = [{"id": c.id, "name": c.name, "args": c.arguments or {}} for c in m.tool_calls]
            plain.append({"role": m.role, "content": m.content, "calls": calls})
        else:
            plain.append({"role": m.role, "content": m.content or ""})
    return plain


def run_agent(
    transcript: Transcript,
    fn: AgentFunction,
    task: AgentTask,
    adapter: Adapter,
    cassette_path: Path,
    *,
    mode: Mode,
    record_mode: RecordMode,
    executed: list[ToolExecution],
) -> Transcript:
    """Run the agent inside its cassette and rebuild ``transcript`` from what went on the wire."""
    started = time.perf_counter()
    transcript.agent = f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', fn)}"
    with (
        WIRE_LOCK.exclusive(),
        agent_cassette(cassette_path, mode, record_mode, transcript.target, task.scenario_id) as cassette,
    ):
        failure: Exception | None = None
        try:
            call_agent(fn, task)
        except Exception as exc:  # the agent's own failure: kept, the wire still tells what happened
            failure = exc
        if cassette.write_protected:  # replay, or record mode "once" over a cassette: never live
            drifted = drift(cassette, cassette_path, task.scenario_id)
            if drifted is not None:
                raise drifted
        interactions = wire_exchanges(cassette)
    rebuild(transcript, adapter, interactions, _no_response(failure))
    transcript.findings += conduct_findings(transcript, adapter, executed)
    transcript.findings += _choice_sent(transcript, adapter, task.tool_choice)
    transcript.executions = executed
    if failure is not None:
        transcript.findings.append(
            Finding(
                "agent.raised",
                "error",
                False,
                secrets.redact(f"the agent raised {type(failure).__name__}: {failure}"),
                len(transcript.exchanges) - 1 if transcript.exchanges else None,
                {"traceback": _traceback(failure)},
            )
        )
    transcript.elapsed_ms = (time.perf_counter() - started) * 1000
    return transcript


TRACEBACK_FRAMES = (3, 6)
"""The frames an agent's traceback keeps: the outermost (the agent's own code) and the innermost
(where it was raised); a framework's frames between them are counted, not shown."""


def _traceback(failure: Exception) -> str:
    """The agent's traceback, from its function down (the harness's frames above it left out), its
    own exception only (what it was raised from is on the wire: the exchange's error)."""
    frames = failure.__traceback__
    while frames is not None and frames.tb_frame.f_code.co_filename == __file__:
        frames = frames.tb_next
    found = traceback.TracebackException(type(failure), failure, frames)
    outer, inner = TRACEBACK_FRAMES
    stack = list(found.stack)
    lines = ["Traceback (most recent call last):\n"]
    if len(stack) > outer + inner:
        lines += traceback.StackSummary.from_list(stack[:outer]).format()
        lines.append(f"  ... {len(stack) - outer - inner} frame(s) left out ...\n")
        stack = stack[-inner:]
    lines += traceback.StackSummary.from_list(stack).format()
    lines += found.format_exception_only()
    return secrets.redact("".join(lines))


def _no_response(failure: Exception | None) -> str:
    """Why a request got no response, as far as the agent's own exception tells: the innermost
    error it was raised from (``ConnectionResetError: [Errno 104] Connection reset by peer``)."""
    if failure is None:
        return "the agent's HTTP client got none"
    root: BaseException = failure
    seen = {id(root)}
    while (nested := root.__cause__ or root.__context__) is not None and id(nested) not in seen:
        root = nested
        seen.add(id(root))
    return secrets.redact(f"{type(root).__name__}: {root}")


def resolve_agent(reference: str, origin: str | Path = "") -> AgentFunction:
    """The agent function ``package.module:function`` or ``path/file.py:function`` names."""
    from harness.tools.declared import DeclarationError, resolve_callable

    try:
        fn: AgentFunction = resolve_callable(reference, origin, arity=1)
        return fn
    except DeclarationError as exc:
        raise ConfigError(f"agent {reference!r}: {exc}") from exc
