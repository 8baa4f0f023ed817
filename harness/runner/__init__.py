"""The runner: targets x scenarios x repeats, concurrently, one result line per run as it ends.

It is handed ready endpoints (:mod:`harness.servers.endpoints` starts whatever they
need); for each run it builds fresh tools, wraps the endpoint's transport in
the run's cassette, drives the agent loop, runs the checks and appends the
scored :class:`~harness.records.RunRecord` to the results file. A run that
cannot be played (a missing or drifted cassette) or that hits a harness fault
is recorded with its error, and the others go on.
"""

from __future__ import annotations

import collections
import dataclasses
import gc
import hashlib
import os
import re
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

import httpx

from harness import children
from harness.agent.external import (
    WIRE_LOCK,
    AgentEndpoint,
    AgentTask,
    agent_tools,
    resolve_agent,
    run_agent,
    task_messages,
)
from harness.agent.loop import LoopSettings, run_loop
from harness.agent.rechunk import sweep_agent
from harness.checks import RunContext, run_checks
from harness.checks.outcomes import outcome_of, untestable
from harness.checks.scoring import run_score
from harness.errors import CassetteError, ConfigError, DiskFullError, UserError
from harness.model import Finding, ToolExecution, Transcript
from harness.providers import RequestOptions
from harness.providers.text_protocols import native_tools_size
from harness.records import CheckResult, PromptSize, RunError, RunRecord, decode_record, record_line
from harness.results import Key, RecordLog
from harness.scenarios import Scenario
from harness.targets import Target
from harness.tools.mcp.session import MCPSession, recording_path
from harness.tools.naming import declared_namer
from harness.tools.registry import ToolRegistry
from harness.transport.cassette import CassetteTransport, Mode, RecordMode, cassette_path
from harness.transport.credentials import SECRET_HEADERS
from harness.transport.live import Borrowed
from harness.transport.send import Endpoint, RetryPolicy, Timeouts, Transport


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (``--shard K/N``, 1-based): the (target, scenario) pairs whose
    SHA-256 falls to it, with all their repeats. The assignment is stable: a pair stays in its
    shard whatever other targets or scenarios are added, on any machine, so N CI jobs split a
    suite without talking to each other and ``harness merge`` puts the results back together."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"K/N"`` with 1 <= K <= N."""
        match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
        if not match or not 1 <= int(match[1]) <= int(match[2]):
            raise ConfigError(f"--shard {text!r}: expected K/N with 1 <= K <= N, such as 2/3")
        return cls(int(match[1]), int(match[2]))

    def holds(self, target: str, scenario: str) -> bool:
        digest = hashlib.sha256(f"{target}\0{scenario}".encode()).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass
class RunConfig:
    """How to run: the mode (``replay``, ``record``, ``live``), where cassettes are and where
    results go, repeats per scenario (pass^k), concurrency, the vcrpy record mode, whether MCP
    servers start even in replay; runs to skip (a resumed run), an event that interrupts, and
    the largest chunk size an agent's streams are re-sliced to in replay
    (:func:`harness.agent.rechunk.sweep_agent`).

    Example::

        config = harness.RunConfig(mode="live", results=None, concurrency=4)
        records = harness.run_targets(targets, suite, config)
    """

    mode: Mode = "replay"
    cassettes: Path = Path("cassettes")
    results: Path | None = Path("reports/results.jsonl")  # None: keep the records in memory only
    repeats: int = 1
    concurrency: int = 8
    record_mode: RecordMode = "all"
    live_mcp: bool = False  # start MCP servers even in replay (their results must match the recording)
    skip: frozenset[tuple[str, str, int]] = frozenset()  # runs already done (a resumed run)
    stop: threading.Event | None = None  # set to interrupt (Ctrl-C)
    processes: int = 0  # worker processes: replay 0 = one per core; live and record only when > 1
    rechunk: int = 0  # replay: sweep each agent target's run at stream chunk sizes 1..N (0: no)
    shard: Shard | None = None  # run only this shard's (target, scenario) pairs


OnResult = Callable[[RunRecord], None]


def build_registry(scenario: Scenario) -> ToolRegistry:
    """Fresh tools for one run, with the scenario's injected faults; the Python tools of one
    tool set share one state for the run.

    Example::

        config = harness.RunConfig(mode="live", results=None, concurrency=4)
        records = harness.run_targets(targets, suite, config)
    """
    registry = ToolRegistry(faults=list(scenario.faults), validate=scenario.validate_arguments)
    states: dict[str, dict[str, Any]] = {}
    for tool in scenario.tools:
        registry.add(tool.instantiate(states.setdefault(tool.toolset, {})))
    return registry


class Unsupported(Exception):
    """What the harness cannot test on this target: an ``error`` outcome it causes, never a score."""


def expose_declared(registry: ToolRegistry, family: str, transcript: Transcript) -> None:
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
        if scenario.mcp_servers:
            mcp = MCPSession(
                target.name,
                scenario.mcp,
                target.format,
                recording_path(path),
                live=config.mode != "replay" or config.live_mcp,
                record=config.mode == "record",
                reserved=list(registry.names()),
                stop=config.stop,
            )
            mcp.start()
            for tool in mcp.tools():
                registry.add(tool)
            transcript.tool_names.update(mcp.names())
        if target.agent:
            run_user_agent(target, scenario, registry, transcript, endpoint, config, path)
        else:
            with WIRE_LOCK.shared():
                cassette, transport = _run_loop(
                    target, scenario, registry, transcript, endpoint, config, path
                )
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
        context = RunContext(
            transcript,
            scenario,
            target.protocol,
            native_tool_choice=scenario.tool_choice.mode in target.profile.tool_choice,
            profile=target.profile,
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
    )


def target_timeouts(target: Target) -> Timeouts:
    """The target's connect, read and whole-request limits (the whole request defaults to twice
    the read limit, at least a minute)."""
    read = target.timeout_s
    total = target.request_timeout_s or max(60.0, 2 * read)
    return Timeouts(connect_s=target.connect_timeout_s, read_s=read, total_s=total)


def _run_loop(
    target: Target,
    scenario: Scenario,
    registry: ToolRegistry,
    transcript: Transcript,
    endpoint: Endpoint,
    config: RunConfig,
    path: Path,
) -> tuple[CassetteTransport | None, Transport]:
    """The harness's own agent loop over the endpoint, through the run's cassette."""
    deadline = time.monotonic() + target.run_timeout_s if target.run_timeout_s else None
    cassette: CassetteTransport | None = None
    client_transport: httpx.BaseTransport | None = (
        None if endpoint.transport is None else Borrowed(endpoint.transport)
    )
    if config.mode != "live":
        cassette = client_transport = CassetteTransport(
            path,
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
    settings = LoopSettings(
        scenario.max_turns,
        scenario.tool_choice,
        options,
        tuple(f.content for f in scenario.follow_ups),
        endpoint.limiter.charge if endpoint.limiter is not None else None,
    )
    try:
        run_loop(transcript, target.adapter(), transport.send, registry, scenario.messages, settings)
    except BaseException:
        transport.close()
        raise
    return cassette, transport


def run_user_agent(
    target: Target,
    scenario: Scenario,
    registry: ToolRegistry,
    transcript: Transcript,
    endpoint: Endpoint,
    config: RunConfig,
    path: Path,
) -> None:
    """The user's agent under test, run in its cassette and graded from the wire; with
    ``config.rechunk`` in replay, run again at every slicing of the streams it receives."""
    assert target.agent is not None
    fn = resolve_agent(target.agent, target.origin)
    task, executed = _agent_task(target, scenario, registry, endpoint, config)
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
            lambda: _agent_task(target, scenario, build_registry(scenario), endpoint, config),
            path,
            target.name,
            config.rechunk,
        )
        if found is not None:
            transcript.findings.append(found)


def _agent_task(
    target: Target, scenario: Scenario, registry: ToolRegistry, endpoint: Endpoint, config: RunConfig
) -> tuple[AgentTask, list[ToolExecution]]:
    """The task given to the agent, and the log its tools keep."""
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


def run(
    targets: Sequence[Target],
    scenarios: Sequence[Scenario],
    config: RunConfig,
    endpoints: Mapping[str, Endpoint],
    on_result: OnResult | None = None,
) -> Sequence[RunRecord]:
    """Run everything against ready ``endpoints`` (by target name); every record is appended
    to ``config.results`` (when set) as its run ends. Returns the records sorted by (target,
    scenario, repeat): with a results file, a :class:`~harness.records.RecordLog` reading them
    back from it (a run of any size keeps no transcript in memory), else a list.

    ``config.skip`` lists (target, scenario, repeat) keys already done (a resumed run);
    ``config.shard`` keeps one shard's pairs.
    ``config.stop`` interrupts: no new run starts, the endpoints' connections are closed so
    requests in flight end at once, and runs cut short that way are not recorded."""
    limits = _limits(targets, endpoints)
    stop = config.stop or threading.Event()
    # interleaved across targets, so no target's limit holds every worker
    jobs = [
        (t, s, k)
        for s in scenarios
        for k in range(config.repeats)
        for t in targets
        if (t.name, s.id, k) not in config.skip and (config.shard is None or config.shard.holds(t.name, s.id))
    ]
    workers = _workers(config, jobs)
    if workers > 1:
        _warm(jobs)
    # what exists now (modules, scenarios and their tool schemas, targets, endpoints) lives for the
    # whole run: the cycle collector need not walk it each time it runs (a tenth of a live run's
    # CPU), and forked workers do not copy its pages by touching it
    frozen_before = gc.get_freeze_count()
    gc.freeze()
    try:
        with _Results(config.results, bool(config.skip), on_result, config.mode == "replay", stop) as results:
            if workers > 1:  # before any thread starts here: the workers are forked
                jobs = _run_forked(jobs, workers, config, endpoints, results.keep_line, stop)
            finished = threading.Event()
            watcher = threading.Thread(target=_cut_on_stop, args=(stop, finished, endpoints), daemon=True)
            watcher.start()
            try:
                _run_threads(jobs, config, endpoints, limits, results.keep, stop)
            finally:
                finished.set()
    finally:
        if not frozen_before:  # what the host froze itself stays frozen
            gc.unfreeze()
    return results.records()


class _Results:
    """Where finished runs go: each appended to the results file as its line (then only its key
    and place are kept, in a :class:`RecordLog`), or, without a file, kept in memory. A full disk
    stops the run (``stop`` is set) with a :class:`DiskFullError`: the lines written stay."""

    def __init__(
        self,
        path: Path | None,
        resumed: bool,
        on_result: OnResult | None,
        replay: bool = False,
        stop: threading.Event | None = None,
    ):
        self.on_result = on_result
        # each line reaches the file as its run ends, so a killed run resumes where it stopped;
        # a replay's lines go a megabyte at a time (a replayed run lost with them costs nothing)
        self.buffering = 1 << 20 if replay else -1
        self.flush_each = not replay
        self.lock = threading.Lock()
        self.kept: list[RunRecord] = []
        self.log = RecordLog(path) if path is not None else None
        self.path, self.resumed, self.stop = path, resumed, stop
        self.out: IO[bytes] | None = None
        self.offset = self.number = 0
        self.full: DiskFullError | None = None  # once the disk is full, nothing more is written

    def __enter__(self) -> _Results:
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.resumed and self.path.exists():  # the new lines follow the ones already there
                self._mend(RecordLog.open(self.path, warn=False))
            self.out = self.path.open("ab" if self.resumed else "wb", buffering=self.buffering)
        return self

    def _mend(self, done: RecordLog) -> None:
        """End a killed run's results file with a whole line, as :meth:`RecordLog.open` read it: a
        last line cut short goes (its run goes again), a whole one without its line end gets it."""
        assert self.path is not None
        self.offset, self.number = done.end, done.end_line
        with self.path.open("r+b") as tail:
            tail.truncate(done.end)
            if done.end and (tail.seek(done.end - 1), tail.read(1))[1] != b"\n":
                tail.write(b"\n")
                self.offset += 1

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if self.out is not None:
            try:
                self.out.close()  # a replay's last lines are written here
            except OSError as error:
                if kind is None and DiskFullError.is_full(error):
                    raise self._full() from error
                if kind is None:  # else the run already ends with its own error
                    raise

    def _full(self) -> DiskFullError:
        """The disk is full: the run stops, and nothing more is written."""
        if self.stop is not None:
            self.stop.set()
        self.full = self.full or DiskFullError(str(self.path), "the lines written before it are kept")
        return self.full

    def keep(self, record: RunRecord) -> None:
        """A run finished in this process."""
        self._keep(record.key, record, None)

    def keep_line(self, line: bytes, key: tuple[str, str, int]) -> None:
        """A run a forked worker finished, as its results line and key: decoded only when it is
        kept in memory or ``on_result`` wants it."""
        wanted = self.out is None or self.on_result is not None
        self._keep(key, decode_record(line) if wanted else None, line)

    def _keep(self, key: tuple[str, str, int], record: RunRecord | None, line: bytes | None) -> None:
        """Keep a run (the record, its line, or both: whichever is wanted is given)."""
        with self.lock:
            if self.out is None:
                self.kept.append(cast(RunRecord, record))
            else:
                self._write(line if line is not None else record_line(cast(RunRecord, record)), key)
        if self.on_result is not None:
            self.on_result(cast(RunRecord, record))

    def _write(self, line: bytes, key: tuple[str, str, int]) -> None:
        assert self.out is not None and self.log is not None
        if self.full is not None:  # a line after a failed one could leave a cut line mid-file
            raise self.full
        try:
            self.out.write(line + b"\n")  # one write: a line never reaches the file without its end
            if self.flush_each:
                self.out.flush()
        except OSError as error:
            if DiskFullError.is_full(error):
                raise self._full() from error
            raise
        self.number += 1
        self.log.add(key, self.offset, len(line) + 1, self.number)
        self.offset += len(line) + 1

    def records(self) -> Sequence[RunRecord]:
        """The records, sorted by (target, scenario, repeat)."""
        return self.log if self.log is not None else sorted(self.kept, key=lambda r: r.key)


def _run_threads(
    jobs: Sequence[Job],
    config: RunConfig,
    endpoints: Mapping[str, Endpoint],
    limits: Mapping[str, threading.Semaphore],
    keep: Callable[[RunRecord], None],
    stop: threading.Event,
) -> None:
    """Run ``jobs`` on ``config.concurrency`` threads, each target within its limit; a replay on
    this thread (it waits on nothing: more threads would only contend for the GIL, which cost a
    replay 65 % more CPU on 8 threads), unless its MCP servers run live."""

    def task(target: Target, scenario: Scenario, repeat: int) -> None:
        if stop.is_set():
            return
        with limits[target.name]:
            if stop.is_set():
                return
            record = run_one(target, scenario, repeat, endpoints[target.name], config)
        if stop.is_set() and record.outcome == "error":
            return  # cut short by the interruption: it is not a result
        keep(record)

    if config.mode == "replay" and not config.live_mcp:  # on this thread, one run after another
        for job in jobs:
            task(*job)
        return
    threads = max(1, config.concurrency)
    pending: collections.deque[Future[None]] = collections.deque()
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="run") as pool:
        for job in jobs:  # a window of submitted runs, not all of them: a future costs ~1 KB
            if len(pending) >= 2 * threads:
                _wait(pending.popleft())
            pending.append(pool.submit(task, *job))
        while pending:
            _wait(pending.popleft())


Job = tuple[Target, Scenario, int]

MIN_JOBS_PER_WORKER = 50
"""A replay forks workers only when each gets at least this many runs (a fork costs ~10 ms)."""


def _workers(config: RunConfig, jobs: Sequence[Job]) -> int:
    """How many processes share the runs, on Linux only (where forking a process is safe and
    cheap). A replay: one per core, each with at least :data:`MIN_JOBS_PER_WORKER` runs. A live
    or recording run only when ``config.processes`` asks, and at most the smallest target
    concurrency, since each worker gets its share of every target's concurrency and rate limits
    (a local model server, one request at a time, keeps the run in one process)."""
    if config.processes == 1 or sys.platform != "linux" or not jobs:
        return 1
    if config.mode != "replay":
        smallest = min(target.concurrency for target, _, _ in jobs)
        return max(1, min(config.processes, smallest, len(jobs)))
    if config.live_mcp:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(config.processes or cores, len(jobs) // MIN_JOBS_PER_WORKER))


def _run_forked(
    jobs: list[Job],
    workers: int,
    config: RunConfig,
    endpoints: Mapping[str, Endpoint],
    keep: Callable[[bytes, tuple[str, str, int]], None],
    stop: threading.Event,
) -> list[Job]:
    """Run ``jobs`` in ``workers`` forked processes (the GIL bounds a run in one process), every
    record coming back encoded with its key, in the order runs end; returns the jobs no worker reported (a
    worker that died, an interruption), for this process to run or leave. A replay worker runs
    one run at a time (it is bound by the CPU); a live one runs threads within its share of every
    endpoint's connections, concurrency and rate limits.

    A worker never outlives this process: it gets SIGTERM when this process dies, however it dies
    (``kill -9`` included), or stops the run, and SIGTERM makes it kill what it started (its MCP
    servers) and exit at once. Interrupts and hangups are this process's to handle."""
    import multiprocessing
    import signal
    from multiprocessing.connection import Connection, wait

    context = multiprocessing.get_context("fork")
    if config.mode == "replay":  # by scenario: each worker builds only its own scenarios' caches
        # (argument validators, tool namers, declaration checks), not every scenario's
        place = {scenario_id: n for n, scenario_id in enumerate(dict.fromkeys(job[1].id for job in jobs))}
        shares = [[job for job in jobs if place[job[1].id] % workers == i] for i in range(workers)]
    else:  # live: every worker gets every target's runs, within its share of each one's limits
        shares = [jobs[i::workers] for i in range(workers)]
    # a worker sends each run's key and line, a few runs at a time in a replay (fewer messages to
    # wake the parent; a replayed run lost with its worker is cheap to run again), one at a time
    # live (where each run costs a provider call and progress is watched)
    batch_bytes = 256 * 1024 if config.mode == "replay" else 0
    parent = os.getpid()
    children.preload()

    def work(share: list[Job], conn: Any) -> None:
        children.die_with_parent(parent)
        signal.signal(signal.SIGTERM, lambda signum, frame: children.exit_now(1))
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what an interrupt stops
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        own = {name: endpoint.share(workers) for name, endpoint in endpoints.items()}
        targets = list({target.name: target for target, _, _ in share}.values())
        lock = threading.Lock()

        batch: list[tuple[Key, bytes]] = []
        held = [0]  # bytes in the batch

        def send(record: RunRecord) -> None:
            line = record_line(record)
            with lock:
                batch.append((record.key, line))
                held[0] += len(line)
                if held[0] >= batch_bytes:
                    conn.send(batch)
                    batch.clear()
                    held[0] = 0

        part = dataclasses.replace(config, concurrency=max(1, config.concurrency // workers))
        _run_threads(share, part, own, _limits(targets, own, workers), send, threading.Event())
        if batch:
            conn.send(batch)
        conn.close()

    pending: dict[Any, Any] = {}

    def terminate() -> None:
        for process in list(pending.values()):
            process.terminate()

    tracked = children.track(terminate)  # a second Ctrl-C, exiting at once, still stops them
    for share in shares:
        receive, send = context.Pipe(duplex=False)
        process = context.Process(target=work, args=(share, send), daemon=True)
        process.start()
        send.close()
        pending[receive] = process
    done: set[tuple[str, str, int]] = set()
    try:
        while pending and not stop.is_set():
            for ready in wait(list(pending), timeout=0.5):
                conn = cast(Connection, ready)
                try:
                    batch = conn.recv()
                except EOFError:
                    pending.pop(conn).join()
                    continue
                for (target, scenario, repeat), line in batch:
                    key = (sys.intern(target), sys.intern(scenario), repeat)  # a log holds each name once
                    done.add(key)
                    keep(line, key)
    finally:
        terminate()
        children.untrack(tracked)
    return [] if stop.is_set() else [j for j in jobs if (j[0].name, j[1].id, j[2]) not in done]


WARM_IMPORTS = ("deepdiff", "jsonschema")
"""What a run imports on first need (a mismatch's diff, a schema's validator): each forked worker
would import it again for itself, a fifth of a second for deepdiff."""


def _warm(jobs: Sequence[Job]) -> None:
    """Import and build here, once, what every forked worker would otherwise build for itself:
    the lazily imported libraries, the targets' adapters and the registered checks."""
    import importlib

    from harness.checks import all_checks

    for name in WARM_IMPORTS:
        importlib.import_module(name)
    for target in {job[0].name: job[0] for job in jobs}.values():
        target.adapter()
    all_checks()


def _wait(future: Future[None]) -> None:
    """The future's result, waiting in short slices: a signal (Ctrl-C) delivered to another
    thread only reaches the main thread's Python handler when the main thread wakes."""
    while True:
        try:
            future.result(timeout=0.2)
            return
        except FuturesTimeout:
            continue


def _cut_on_stop(stop: threading.Event, finished: threading.Event, endpoints: Mapping[str, Endpoint]) -> None:
    """When ``stop`` is set before the run finishes, close every endpoint's connections."""
    while not finished.is_set():
        if stop.wait(0.1):
            for endpoint in endpoints.values():
                endpoint.cut()
            return


def _limits(
    targets: Sequence[Target], endpoints: Mapping[str, Endpoint], parts: int = 1
) -> dict[str, threading.Semaphore]:
    """One concurrency limit per endpoint ``limit`` key; targets sharing one (a local model
    server answers one request at a time) share the smallest of their limits; a forked worker,
    one of ``parts``, gets its share."""
    shared: dict[str, threading.Semaphore] = {}
    return {
        target.name: shared.setdefault(
            endpoints[target.name].limit or target.name,
            threading.Semaphore(max(1, target.concurrency // parts)),
        )
        for target in sorted(targets, key=lambda t: t.concurrency)
    }
