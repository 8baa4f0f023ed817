"""Running the jobs: threads in this process, or forked worker processes that send their lines
back, each dying with its parent."""

from __future__ import annotations

import collections
import dataclasses
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from typing import Any, cast

from harness import children
from harness.records import RunRecord
from harness.results.store import stored_line
from harness.runner.one import run_one
from harness.runner.plan import Job, RunConfig, RunEnd, target_limits
from harness.scenarios import Scenario
from harness.targets import Target
from harness.transport.send import Endpoint


def run_threads(
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
    # no more threads than the targets' own limits let run at once: --concurrency 1000 over
    # targets of 4 would otherwise start 1,000 threads, nearly all waiting on a limit
    most = sum({target.name: target.concurrency for target, _, _ in jobs}.values())
    threads = max(1, min(config.concurrency, most))
    pending: collections.deque[Future[None]] = collections.deque()
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="run") as pool:
        for job in jobs:  # a window of submitted runs, not all of them: a future costs ~1 KB
            if len(pending) >= 2 * threads:
                _wait(pending.popleft())
            pending.append(pool.submit(task, *job))
        while pending:
            _wait(pending.popleft())


def run_forked(
    jobs: list[Job],
    workers: int,
    config: RunConfig,
    endpoints: Mapping[str, Endpoint],
    keep: Callable[[bytes, RunEnd, dict[bytes, bytes]], None],
    stop: threading.Event,
    whole: bool = True,
) -> list[Job]:
    """Run ``jobs`` in ``workers`` forked processes (the GIL bounds a run in one process), every
    record coming back encoded with its end (key, outcome, score), in the order runs end; returns
    the jobs of each worker that did not say its whole share ran (it died or failed; none when
    interrupted): the caller runs those it has no record of (the parent keeps no set of the runs
    reported: at 100,000 runs that was 10 MB). Unless ``whole`` (``keep`` decodes each run), a worker sends
    each shared value once, not with every run that refers to it (``keep`` writes it to the store
    once). A replay worker runs one run at a time (it is bound by the CPU); a live one runs
    threads within its share of every endpoint's connections, concurrency and rate limits.

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
    batch_bytes = REPLAY_BATCH if config.mode == "replay" else 0
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

        batch: list[tuple[RunEnd, bytes, dict[bytes, bytes]]] = []
        held = [0]  # bytes in the batch
        sent: set[bytes] = set()  # the shared values sent already: the parent keeps each once

        def send(record: RunRecord) -> None:
            line, shared = stored_line(record)
            with lock:
                new = shared
                if not whole:
                    if len(sent) > SENT_KEYS:
                        sent.clear()  # bounded: a value sent again is kept once all the same
                    new = {key: value for key, value in shared.items() if key not in sent}
                    sent.update(new)
                batch.append((RunEnd.of(record), line, new))
                held[0] += len(line) + sum(map(len, new.values()))
                if held[0] >= batch_bytes:
                    conn.send(batch)
                    batch.clear()
                    held[0] = 0

        part = dataclasses.replace(config, concurrency=max(1, config.concurrency // workers))
        run_threads(share, part, own, target_limits(targets, own, workers), send, threading.Event())
        if batch:
            conn.send(batch)
        conn.send(None)  # the whole share ran: a worker that ends without saying so did not
        conn.close()

    pending: dict[Any, Any] = {}

    def terminate() -> None:
        for process in list(pending.values()):
            process.terminate()

    tracked = children.track(terminate)  # a second Ctrl-C, exiting at once, still stops them
    share_of: dict[Any, list[Job]] = {}
    for share in shares:
        receive, send = context.Pipe(duplex=False)
        process = context.Process(target=work, args=(share, send), daemon=True)
        process.start()
        send.close()
        pending[receive], share_of[receive] = process, share
    left: list[Job] = []
    try:
        while pending and not stop.is_set():
            for ready in wait(list(pending), timeout=0.5):
                conn = cast(Connection, ready)
                try:
                    batch = conn.recv()
                except EOFError:
                    pending.pop(conn).join()
                    left += share_of.pop(conn, [])  # it died before its share was all run
                    continue
                if batch is None:
                    del share_of[conn]
                    continue
                for end, line, shared in batch:
                    keep(line, end, shared)
    finally:
        terminate()
        children.untrack(tracked)
    return [] if stop.is_set() else left


REPLAY_BATCH = 256 * 1024
"""The bytes of runs a replay worker gathers before it sends them to the parent."""


SENT_KEYS = 1 << 16
"""The most shared values' hashes a forked worker remembers having sent (a few MB): runs of one
scenario share their declarations and most of their exchanges, so most values go once."""


WARM_IMPORTS = ("jsonschema",)
"""What every run imports on first need (a tool's argument validator): each forked worker would
import it again for itself. Not deepdiff: only a run whose arguments or request body differ from
what was expected needs its diff, and imports it in the worker that runs it, so a suite that passes
never pays its quarter of a second and 19 MB (it imports numpy when numpy is installed)."""


def warm(jobs: Sequence[Job]) -> None:
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


def cut_on_stop(stop: threading.Event, finished: threading.Event, endpoints: Mapping[str, Endpoint]) -> None:
    """When ``stop`` is set before the run finishes, close every endpoint's connections."""
    while not finished.is_set():
        if stop.wait(0.1):
            for endpoint in endpoints.values():
                endpoint.cut()
            return
