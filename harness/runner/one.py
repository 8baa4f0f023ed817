"""One run of one scenario against one target: tools, the cassette, the agent loop or the user's
agent, the checks, and the scored record."""

from __future__ import annotations

import dataclasses
import functools
import os
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from harness.agent.external import (
    WIRE_LOCK,
    AgentEndpoint,
    AgentTask,
    agent_tools,
    resolve_agent,
    run_agent,
    task_messages,
)
from harness.agent.loop import LoopConfig, run_loop
from harness.agent.rechunk import sweep_agent
from harness.checks import RunContext, run_checks
from harness.checks.outcomes import outcome_of, untestable
from harness.checks.scoring import run_score
from harness.errors import CassetteError, UserError
from harness.model import Finding, HostedServer, ToolExecution, Transcript
from harness.providers import Adapter, RequestOptions, adapter_class
from harness.providers.schemas import schema_features
from harness.providers.text_protocols import native_tools_size
from harness.records import CheckResult, Offered, PromptSize, RunError, RunRecord
from harness.runner.plan import RunConfig
from harness.scenarios import Scenario
from harness.targets import Target
from harness.tools.mcp.hosted import hosted_servers
from harness.tools.mcp.session import MCPSession, recording_path
from harness.tools.naming import declared_namer
from harness.tools.run_tools import RunTools
from harness.tools.seeded import as_offered
from harness.transport.cassette import CassetteTransport, cassette_path
from harness.transport.credentials import SECRET_HEADERS
from harness.transport.live import Borrowed
from harness.transport.send import Endpoint, RetryPolicy, Timeouts, Transport


@dataclass(frozen=True)
class RunSetup:
    """What one run needs, made once by :func:`run_one` and handed to the harness's own loop or to
    the user's agent: the target and scenario, the ready endpoint, the run configuration, the
    cassette's path, and the run's own tools and transcript (filled in as the run goes)."""

    target: Target
    scenario: Scenario
    endpoint: Endpoint
    config: RunConfig
    path: Path
    registry: RunTools
    transcript: Transcript
    hosted: tuple[HostedServer, ...] = ()  # the MCP servers the provider's connector runs (hosted_mcp)


def hosted_for(target: Target, scenario: Scenario) -> tuple[HostedServer, ...]:
    """The scenario's MCP servers as the provider's connector gets them, for a target with
    ``hosted_mcp`` driven by the harness's loop; else none (the harness runs them itself)."""
    if target.hosted_mcp is None or target.agent or not scenario.mcp_servers:
        return ()
    return hosted_servers(scenario.mcp, target.hosted_mcp)


def build_registry(scenario: Scenario) -> RunTools:
    """Fresh tools for one run, with the scenario's injected faults; the Python tools of one
    tool set share one state for the run.

    Example::

        config = harness.RunConfig(mode="live", results=None, concurrency=4)
        records = harness.run_targets(targets, suite, config)
    """
    registry = RunTools(faults=list(scenario.faults), validate=scenario.validate_arguments)
    states: dict[str, dict[str, Any]] = {}
    for tool in scenario.tools:
        registry.add(tool.instantiate(states.setdefault(tool.toolset, {})))
    return registry


class Unsupported(Exception):
    """What the harness cannot test on this target: an ``error`` outcome it causes, never a score."""


def expose_declared(registry: RunTools, family: str, transcript: Transcript) -> None:
    """Offer each declared tool under a name the provider accepts: unchanged when its rules allow
    the name (``math.factorial`` for Gemini), else sanitised or cut, reversibly; the transcript
    maps the offered names back, and a ``wire.tool_name_mapped`` note says what was done."""
    namer = declared_namer(registry.names(), family)
    if not namer.changes:
        return
    tools = {}
    for name, tool in registry.tools.items():
        exposed = namer.exposed("", name)
        if exposed != name:
            tool = dataclasses.replace(tool, spec=dataclasses.replace(tool.spec, name=exposed), name=name)
            transcript.tool_names[exposed] = name
            transcript.findings.append(
                Finding(
                    "wire.tool_name_mapped",
                    "info",
                    False,
                    f"tool {name!r} offered as {exposed!r} ({namer.changes[exposed]}): {family}'s tool name "
                    f"rule is {namer.rules.pattern.pattern}",
                )
            )
        tools[exposed] = tool
    registry.tools = tools


def tool_prompt(transcript: Transcript) -> PromptSize | None:
    """What the tool definitions cost in the first request: the prompted protocol's system
    prompt when the adapter noted one, else the native JSON declarations."""
    for finding in transcript.findings:
        if finding.check_id == "wire.prompted_mode" and finding.evidence:
            return PromptSize(finding.evidence["characters"], finding.evidence["estimated_tokens"])
    if not transcript.tools:
        return None
    return PromptSize(**native_tools_size(transcript.tools))


def run_one(
    target: Target, scenario: Scenario, repeat: int, endpoint: Endpoint, config: RunConfig
) -> RunRecord:
    """One run of one scenario against one target: the scored record.

    A cassette error or a harness fault ends the run with its error recorded
    (it scores 0 and fails); bad user input (a :class:`UserError`) is raised.
    """
    transcript = Transcript(target.name, scenario.id, repeat)
    error: RunError | None = None
    checks: list[CheckResult] = []
    path = cassette_path(config.cassettes, target.name, scenario.id, repeat)
    mcp: MCPSession | None = None
    cassette: CassetteTransport | None = None
    transport: Transport | None = None
    try:
        registry = build_registry(scenario)
        if target.agent and scenario.follow_ups:
            raise Unsupported(
                "follow-ups are not given to agents under test yet (AgentTask has no follow-ups); "
                "run this scenario on a target without 'agent'"
            )
        if not target.agent:  # an agent names the tools itself: it gets the declared names
            expose_declared(registry, target.adapter().family, transcript)
        hosted = hosted_for(target, scenario)
        if scenario.mcp_servers and not hosted:
            mcp = MCPSession(
                target.name,
                scenario.mcp,
                target.format,
                recording_path(path),
                live=config.mode != "replay" or config.live_mcp,
                record=config.mode == "record",
                reserved=list(registry.names()),
                stop=config.stop,
                protocol_version=target.mcp_protocol_version,
            )
            mcp.start()
            for tool in mcp.tools():
                registry.add(tool)
            transcript.tool_names.update(mcp.names())
            transcript.mcp_tools = mcp.tool_info()
        setup = RunSetup(target, scenario, endpoint, config, path, registry, transcript, hosted)
        if target.agent:
            run_user_agent(setup)
        else:
            with WIRE_LOCK.shared():
                cassette, transport = _run_loop(setup)
        if mcp is not None:
            mcp.close()
            transcript.findings.extend(mcp.findings())
            mcp = None
        if cassette is not None:
            if transcript.stop_reason == "transport_error":
                last = transcript.exchanges[-1]
                reason = last.parsed.error.message if last.parsed.error else "no response"
                cassette.mark_incomplete(f"turn {last.turn} got no response while recording: {reason}")
            cassette.save()
        sent = offered(target.format, transcript) if transcript.agent else None
        context = RunContext(
            transcript,
            scenario,
            target.protocol,
            # a user's agent that did not send the scenario's tool_choice: the endpoint was never asked
            native_tool_choice=scenario.tool_choice.mode in target.profile.tool_choice
            and (sent is None or sent.tool_choice == scenario.tool_choice.label()),
            profile=target.profile,
            max_tokens=target.max_tokens if target.agent is None else None,
            hosted=hosted,
        )
        checks = run_checks(context)
        error = untestable(transcript, simulated=target.simulated)
    except UserError:
        raise
    except CassetteError as exc:
        error = RunError(type(exc).__name__, str(exc), cause="cassette")
    except Unsupported as exc:
        error = RunError("Unsupported", str(exc), cause="harness")
    except Exception as exc:  # a harness fault: recorded, the other runs go on
        error = RunError("HarnessError", f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=8))
    finally:
        if transport is not None:
            transport.close()
        if cassette is not None:
            cassette.close()
        if mcp is not None:  # the run ended before its MCP servers were stopped
            mcp.close()
    return RunRecord(
        target=target.info(),
        scenario=scenario.id,
        category=scenario.category,
        repeat=repeat,
        mode=config.mode,
        score=None if error else run_score(checks),
        passed=outcome_of(error, checks) == "pass",
        error=error,
        checks=tuple(checks),
        usage=transcript.usage(),
        transcript=transcript,
        tool_prompt=tool_prompt(transcript),
        outcome=outcome_of(error, checks),
        tool_choice=scenario.tool_choice.label(),
        offered=offered(target.format, transcript),
    )


def offered(wire_format: str, transcript: Transcript) -> Offered | None:
    """What the run's first request offered, as neutral facts for the capability grid: the
    format's adapter reads the request back (as sent, by the harness's loop or the user's agent)
    and the features of its tool schemas are named, so reports never parse a wire body. ``None``
    when no request was sent or the adapter cannot read requests."""
    if not transcript.exchanges:
        return None
    request = transcript.exchanges[0].request
    view = _reader(adapter_class(wire_format)).read_offer(request.body, request.url)
    if view is None:
        return None
    try:
        features = set().union(*(schema_features(tool.parameters) for tool in view.tools))
    except RecursionError:  # a schema nested past the stack (a user's agent sent it): not named
        features = set()
    choice = view.tool_choice.label() if view.tool_choice is not None else None
    return Offered(choice, tuple(sorted(features)))


@functools.lru_cache(maxsize=64)
def _reader(adapter: type[Adapter]) -> Adapter:
    """One adapter of each format to read requests back with (adapters keep no state)."""
    return adapter()


def target_timeouts(target: Target) -> Timeouts:
    """The target's connect, read and whole-request limits (the whole request defaults to twice
    the read limit, at least a minute)."""
    read = target.timeout_s
    total = target.request_timeout_s or max(60.0, 2 * read)
    return Timeouts(connect_s=target.connect_timeout_s, read_s=read, total_s=total)


def _run_loop(setup: RunSetup) -> tuple[CassetteTransport | None, Transport]:
    """The harness's own agent loop over the endpoint, through the run's cassette."""
    target, scenario, endpoint, config = setup.target, setup.scenario, setup.endpoint, setup.config
    transcript = setup.transcript
    deadline = time.monotonic() + target.run_timeout_s if target.run_timeout_s else None
    cassette: CassetteTransport | None = None
    client_transport: httpx.BaseTransport | None = (
        None if endpoint.transport is None else Borrowed(endpoint.transport)
    )
    if config.mode != "live":
        cassette = client_transport = CassetteTransport(
            setup.path,
            mode=config.mode,
            target=target.name,
            scenario_id=scenario.id,
            inner=client_transport,
            record_mode=config.record_mode,
            facts=endpoint.facts,
        )
    transcript.endpoint = cassette.facts if cassette is not None else endpoint.facts
    transport = Transport(
        endpoint.base_url,
        auth_headers=endpoint.headers,
        client_transport=client_transport,
        timeouts=target_timeouts(target),
        retry=RetryPolicy(attempts=1 + target.retries, max_wait_s=target.retry_max_wait_s),
        sleep=(lambda s: None) if config.mode == "replay" else config.stop.wait if config.stop else None,
        deadline=deadline,
        interrupted=config.stop,
        limiter=endpoint.limiter,
        pace=endpoint.pace,
    )
    options = RequestOptions(
        target.model,
        target.stream,
        target.temperature,
        target.max_tokens,
        target.seed,
        scenario.parallel_tool_calls,
        dict(target.request_options),
        setup.hosted,
    )
    settings = LoopConfig(
        scenario.max_turns,
        scenario.tool_choice,
        options,
        tuple(f.content for f in scenario.follow_ups),
        endpoint.limiter.charge if endpoint.limiter is not None else None,
    )
    try:
        messages = as_offered(scenario.messages, transcript.tool_names)
        run_loop(transcript, target.adapter(), transport.send, setup.registry, messages, settings)
    except BaseException:
        transport.close()
        raise
    return cassette, transport


def run_user_agent(setup: RunSetup) -> None:
    """The user's agent under test, run in its cassette and graded from the wire; with
    ``config.rechunk`` in replay, run again at every slicing of the streams it receives."""
    target, scenario, config, path, transcript = (
        setup.target,
        setup.scenario,
        setup.config,
        setup.path,
        setup.transcript,
    )
    assert target.agent is not None
    fn = resolve_agent(target.agent, target.origin)
    task, executed = _agent_task(setup, setup.registry)
    run_agent(
        transcript,
        fn,
        task,
        target.adapter(),
        path,
        mode=config.mode,
        record_mode=config.record_mode,
        executed=executed,
    )
    if config.rechunk and config.mode == "replay" and scenario.mcp_servers:
        why = "not re-sliced: the scenario's MCP servers answer once per run (replay it without --rechunk)"
        transcript.findings.append(Finding("agent.stream_rechunk", "info", True, why))
    elif config.rechunk and config.mode == "replay":
        found = sweep_agent(
            fn,
            lambda: _agent_task(setup, build_registry(scenario)),
            path,
            target.name,
            config.rechunk,
        )
        if found is not None:
            transcript.findings.append(found)


def _agent_task(setup: RunSetup, registry: RunTools) -> tuple[AgentTask, list[ToolExecution]]:
    """The task given to the agent (its tools from ``registry``, fresh for a re-sliced replay),
    and the log its tools keep."""
    target, scenario, endpoint, config = setup.target, setup.scenario, setup.endpoint, setup.config
    executed: list[ToolExecution] = []
    key = target.api_key_variable()
    task = AgentTask(
        scenario_id=scenario.id,
        messages=task_messages(scenario.messages),
        tools=agent_tools(registry, executed),
        tool_choice=_choice(scenario),
        endpoint=AgentEndpoint(
            base_url=endpoint.base_url,
            model=target.model,
            format=target.format,
            api_key=(os.environ.get(key) if key and config.mode != "replay" else None) or "harness-no-key",
            headers={k: v for k, v in endpoint.headers.items() if k.lower() not in SECRET_HEADERS},
            stream=target.stream,
            temperature=target.temperature,
            max_tokens=target.max_tokens,
        ),
        max_turns=scenario.max_turns,
    )
    return task, executed


def _choice(scenario: Scenario) -> str | dict[str, Any]:
    choice = scenario.tool_choice
    return {"name": choice.name or ""} if choice.mode == "named" else choice.mode
