"""The runner: targets x scenarios x repeats, concurrently, one result line per run as it ends.

It is handed ready endpoints (:mod:`harness.servers.endpoints` starts whatever they
need); for each run it builds fresh tools, wraps the endpoint's transport in
the run's cassette, drives the agent loop, runs the checks and appends the
scored :class:`~harness.records.RunRecord` to the results file. A run that
cannot be played (a missing or drifted cassette) or that hits a harness fault
is recorded with its error, and the others go on.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Mapping, Sequence

from harness.records import RunRecord
from harness.runner.one import RunSetup, build_registry, expose_declared, run_one
from harness.runner.plan import (
    NOT_OPTIONS,
    OnEnd,
    OnResult,
    RunConfig,
    RunEnd,
    Shard,
    applies,
    run_config,
    target_limits,
    worker_count,
)
from harness.runner.sink import Results
from harness.runner.workers import cut_on_stop, run_forked, run_threads, warm
from harness.scenarios import Scenario
from harness.targets import Target
from harness.transport.send import Endpoint

__all__ = [
    "NOT_OPTIONS",
    "OnEnd",
    "OnResult",
    "RunConfig",
    "RunEnd",
    "RunSetup",
    "Shard",
    "build_registry",
    "expose_declared",
    "run",
    "run_config",
    "run_one",
]


def run(
    targets: Sequence[Target],
    scenarios: Sequence[Scenario],
    config: RunConfig,
    endpoints: Mapping[str, Endpoint],
    on_result: OnResult | None = None,
    on_end: OnEnd | None = None,
) -> Sequence[RunRecord]:
    """Run everything against ready ``endpoints`` (by target name); every record is appended
    to ``config.results`` (when set) as its run ends. Returns the records sorted by (target,
    scenario, repeat): with a results file, a :class:`~harness.records.RecordLog` reading them
    back from it (a run of any size keeps no transcript in memory), else a list.

    ``on_result`` is called with each record as its run ends; ``on_end`` with its
    :class:`RunEnd` only (key, outcome, score), which costs no decoding of a forked worker's run.

    ``config.skip`` lists (target, scenario, repeat) keys already done (a resumed run);
    ``config.shard`` keeps one shard's pairs.
    ``config.stop`` interrupts: no new run starts, the endpoints' connections are closed so
    requests in flight end at once, and runs cut short that way are not recorded."""
    limits = target_limits(targets, endpoints)
    stop = config.stop or threading.Event()
    # interleaved across targets, so no target's limit holds every worker
    jobs = [
        (t, s, k)
        for s in scenarios
        for k in range(config.repeats)
        for t in targets
        if (t.name, s.id, k) not in config.skip
        and (config.shard is None or config.shard.holds(t.name, s.id))
        and applies(t, s)
    ]
    workers = worker_count(config, jobs)
    if workers > 1:
        warm(jobs)
    # what exists now (modules, scenarios and their tool schemas, targets, endpoints) lives for the
    # whole run: the cycle collector need not walk it each time it runs (a tenth of a live run's
    # CPU), and forked workers do not copy its pages by touching it
    frozen_before = gc.get_freeze_count()
    gc.freeze()
    try:
        with Results(
            config.results, bool(config.skip), on_result, config.mode == "replay", stop, on_end
        ) as results:
            if workers > 1:  # before any thread starts here: the workers are forked
                left = run_forked(jobs, workers, config, endpoints, results.keep_line, stop, results.decodes)
                done = set(results.keys()) if left else set()
                jobs = [j for j in left if (j[0].name, j[1].id, j[2]) not in done]
            finished = threading.Event()
            watcher = threading.Thread(target=cut_on_stop, args=(stop, finished, endpoints), daemon=True)
            watcher.start()
            try:
                run_threads(jobs, config, endpoints, limits, results.keep, stop)
            finally:
                finished.set()
    finally:
        if not frozen_before:  # what the host froze itself stays frozen
            gc.unfreeze()
    return results.records()
