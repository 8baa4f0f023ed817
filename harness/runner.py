"""The runner: targets x scenarios x repeats, concurrently, one result line per run as it ends.

For each target it provides the endpoint (the simulator or a managed local
model when calls go live), then for each run builds fresh tools, a transport
wrapped in the run's cassette, drives the agent loop, runs the checks and
appends the scored record to the results file. A run that cannot be played
(a missing or drifted cassette) or that hits a harness fault is recorded with
its error, and the others go on.
"""

from __future__ import annotations

import contextlib
import json
import threading
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from harness.agent.builtin import builtin_tool
from harness.agent.loop import LoopSettings, run_loop
from harness.agent.mcp_run import MCPSession, recording_path
from harness.agent.registry import Fault, ToolRegistry
from harness.checks import RunContext, run_checks
from harness.errors import CassetteError, ConfigError, UserError
from harness.model import Transcript, to_data
from harness.providers import RequestOptions
from harness.recording import CassetteTransport, Mode, RecordMode, cassette_path
from harness.scenarios import Scenario
from harness.scoring import run_score
from harness.targets import Target, pick
from harness.transport import Transport, api_key, live_transport

RESULT_SCHEMA = "harness.result/1"
REPLAY_HOST = "http://replay.invalid"


@dataclass
class RunConfig:
    mode: Mode = "replay"
    cassettes: Path = Path("cassettes")
    results: Path = Path("reports/results.jsonl")
    repeats: int = 1
    concurrency: int = 8
    record_mode: RecordMode = "all"
    retries: int = 2
    live_mcp: bool = False  # start MCP servers even in replay (their results must match the recording)


@dataclass
class Endpoint:
    """Where a target's requests go for this run, and its key."""

    base_url: str
    auth_headers: dict[str, str] = field(default_factory=dict)


OnResult = Callable[[dict[str, Any]], None]


@contextlib.contextmanager
def endpoints(targets: list[Target], scenarios: list[Scenario], mode: Mode) -> Iterator[dict[str, Endpoint]]:
    """Endpoints for every target; starts (and always stops) the simulator or local model when live."""
    with contextlib.ExitStack() as stack:
        found: dict[str, Endpoint] = {}
        sim = None
        local: dict[str, str] = {}  # local model -> base URL: one server per model, shared by its targets
        for target in targets:
            if mode == "replay":  # nothing is contacted; only the path must match the recording
                if target.simulated:
                    found[target.name] = Endpoint(f"{REPLAY_HOST}/{target.sim_route}")
                elif target.local_model:
                    found[target.name] = Endpoint(REPLAY_HOST)
                else:
                    found[target.name] = Endpoint(target.resolved_base_url() or REPLAY_HOST)
                continue
            if target.simulated:
                if sim is None:
                    from harness.sim.server import SimServer

                    sim = stack.enter_context(SimServer(scenarios))
                found[target.name] = Endpoint(sim.base_url(target.sim_route))
            elif target.local_model:
                from harness.local import local_server

                if target.local_model not in local:
                    local[target.local_model] = stack.enter_context(local_server(target.local_model)).base_url
                found[target.name] = Endpoint(local[target.local_model])
            else:
                base = target.resolved_base_url()
                if not base:
                    raise ConfigError(f"target {target.name!r} has no base_url")
                key = api_key(target.api_key_variable())
                found[target.name] = Endpoint(base, target.adapter().auth_headers(key) if key else {})
        yield found


def choose_targets(known: dict[str, Target], names: list[str], mode: Mode, cassettes: Path) -> list[Target]:
    """The targets named (globs allowed), or by default: in replay every target with
    recordings, when recording the simulated ones; a live run must name its targets."""
    if names:
        return pick(known, names)
    if mode == "replay":
        chosen = [t for name, t in sorted(known.items()) if (cassettes / name).is_dir()]
        if not chosen:
            raise ConfigError(f"no recorded target under {cassettes}/; name targets with --target")
        return chosen
    if mode == "record":
        return [t for _, t in sorted(known.items()) if t.simulated]
    raise ConfigError("a live run needs at least one --target")


def build_registry(scenario: Scenario) -> ToolRegistry:
    """Fresh tools for one run, with the scenario's injected faults."""
    registry = ToolRegistry(
        faults=[Fault(f["tool"], f.get("on_call", 1), f["error"]) for f in scenario.faults]
    )
    for name in scenario.tools:
        registry.add(builtin_tool(name))
    return registry


def run_one(
    target: Target, scenario: Scenario, repeat: int, endpoint: Endpoint, config: RunConfig
) -> dict[str, Any]:
    """One run of one scenario against one target: the scored result record.

    A cassette error or a harness fault ends the run with its error recorded
    (it scores 0 and fails); bad user input (a :class:`UserError`) is raised.
    """
    transcript = Transcript(target.name, scenario.id, repeat)
    error: dict[str, str] | None = None
    checks: list[dict[str, Any]] = []
    path = cassette_path(config.cassettes, target.name, scenario.id, repeat)
    mcp: MCPSession | None = None
    cassette: CassetteTransport | None = None
    transport: Transport | None = None
    try:
        registry = build_registry(scenario)
        if scenario.mcp_servers:
            mcp = MCPSession(
                target.name,
                scenario,
                target.format,
                recording_path(path),
                live=config.mode != "replay" or config.live_mcp,
                record=config.mode == "record",
                reserved=list(registry.names()),
            )
            mcp.start()
            for tool in mcp.tools():
                registry.add(tool)
            transcript.tool_names = mcp.names()
        client_transport = None if config.mode == "replay" else live_transport()
        if config.mode != "live":
            cassette = client_transport = CassetteTransport(
                path,
                mode=config.mode,
                target=target.name,
                scenario_id=scenario.id,
                inner=client_transport,
                record_mode=config.record_mode,
            )
        transport = Transport(
            endpoint.base_url,
            auth_headers=endpoint.auth_headers,
            client_transport=client_transport,
            timeout_s=target.timeout_s,
            retries=config.retries,
            sleep=(lambda s: None) if config.mode == "replay" else None,
        )
        options = RequestOptions(
            target.model,
            target.stream,
            target.temperature,
            target.max_tokens,
            target.seed,
            scenario.parallel_tool_calls,
            dict(target.request_options),
        )
        settings = LoopSettings(scenario.max_turns, scenario.tool_choice, options)
        run_loop(transcript, target.adapter(), transport.send, registry, scenario.messages, settings)
        if mcp is not None:
            mcp.close()
            transcript.findings.extend(mcp.findings())
            mcp = None
        if cassette is not None:
            cassette.save()
        context = RunContext(
            transcript,
            scenario,
            target.protocol,
            native_tool_choice=scenario.tool_choice.mode in target.endpoint_profile().tool_choice,
        )
        checks = [
            {
                "id": r.id,
                "kind": r.kind,
                "weight": r.weight,
                "status": r.status,
                "findings": to_data(r.findings),
            }
            for r in run_checks(context)
        ]
    except UserError:
        raise
    except CassetteError as exc:
        error = {"kind": type(exc).__name__, "message": str(exc)}
    except Exception as exc:  # a harness fault: recorded, the other runs go on
        error = {
            "kind": "HarnessError",
            "message": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc(limit=8),
        }
    finally:
        if transport is not None:
            transport.close()
        if cassette is not None:
            cassette.close()
        if mcp is not None:  # the run ended before its MCP servers were stopped
            mcp.close()
    return {
        "schema": RESULT_SCHEMA,
        "target": target.name,
        "target_info": target.info(),
        "scenario": scenario.id,
        "category": scenario.category,
        "repeat": repeat,
        "mode": config.mode,
        "score": 0.0 if error else run_score(checks),
        "passed": error is None and all(c["status"] != "fail" for c in checks),
        "error": error,
        "checks": checks,
        "usage": to_data(transcript.usage()),
        "transcript": to_data(transcript),
    }


def run(
    targets: list[Target],
    scenarios: list[Scenario],
    config: RunConfig,
    on_result: OnResult | None = None,
) -> list[dict[str, Any]]:
    """Run everything; every record is appended to ``config.results`` as its run ends."""
    config.results.parent.mkdir(parents=True, exist_ok=True)
    records: list[dict[str, Any]] = []
    lock = threading.Lock()
    with (
        endpoints(targets, scenarios, config.mode) as found,
        config.results.open("w", encoding="utf-8") as out,
    ):
        limits = _limits(targets, found)

        def task(target: Target, scenario: Scenario, repeat: int) -> None:
            with limits[target.name]:
                record = run_one(target, scenario, repeat, found[target.name], config)
            _write(out, record, lock)
            with lock:
                records.append(record)
            if on_result is not None:
                on_result(record)

        # interleaved across targets, so no target's limit holds every worker
        jobs = [(t, s, k) for s in scenarios for k in range(config.repeats) for t in targets]
        with ThreadPoolExecutor(max_workers=max(1, config.concurrency), thread_name_prefix="run") as pool:
            for future in [pool.submit(task, *job) for job in jobs]:
                future.result()
    return sorted(records, key=lambda r: (r["target"], r["scenario"], r["repeat"]))


def _limits(targets: list[Target], found: dict[str, Endpoint]) -> dict[str, threading.Semaphore]:
    """One concurrency limit per target; targets sharing a managed local server share its limit
    (the smallest of theirs), since the server answers one request at a time."""
    shared: dict[str, threading.Semaphore] = {}
    limits = {}
    for target in sorted(targets, key=lambda t: t.concurrency):
        if target.local_model:
            base = found[target.name].base_url
            limits[target.name] = shared.setdefault(base, threading.Semaphore(max(1, target.concurrency)))
        else:
            limits[target.name] = threading.Semaphore(max(1, target.concurrency))
    return limits


def _write(out: TextIO, record: dict[str, Any], lock: threading.Lock) -> None:
    line = json.dumps(record, ensure_ascii=False, sort_keys=True)
    with lock:
        out.write(line + "\n")
        out.flush()


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """Records of a results file, sorted; a bad line is an error naming its line."""
    records = []
    with Path(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{path}:{number}: not a JSON line: {exc}") from exc
            if record.get("schema") != RESULT_SCHEMA:
                raise ConfigError(f"{path}:{number}: not a harness result (schema {record.get('schema')!r})")
            records.append(record)
    return sorted(records, key=lambda r: (r["target"], r["scenario"], r["repeat"]))
