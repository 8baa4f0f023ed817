"""What the history keeps of a run, as rows: computed from the run's summary (what the report's
headline, compliance and per-check figures are computed from) and its run folder's manifest, so
the rows of a run are the same whether they are written as the run ends or imported later from
its folder (``harness history import``): the results files stay the source of truth.

Example::

    facts = folder_facts(Path("reports/runs/20261126T202923Z-65f60947"))
    print(facts.run["run_id"], [t["score"] for t in facts.targets])
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from harness.checks.scoring import Scores, Summary
from harness.errors import ConfigError
from harness.records import RunRecord
from harness.results import RecordLog, RunFolder

Row = dict[str, Any]


@dataclass(frozen=True)
class RunFacts:
    """One run's rows: the run, then per target, per (target, scenario) and per (target, check)
    (those two made as they are read, from the run's summary: one row a run when a suite has one
    repeat, never all held in memory)."""

    run: Row
    targets: list[Row]
    scenarios: Iterable[Row]
    checks: Iterable[Row]


class Rows:
    """Rows made each time they are read (from a summary that may be spooled to disk: a history's
    rows, report.html's per-target tables), never all held; equal to rows with the same items."""

    def __init__(self, make: Callable[[], Iterator[Row]]) -> None:
        self._make = make

    def __iter__(self) -> Iterator[Row]:
        return self._make()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Iterable):
            return NotImplemented
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<rows: {list(self)!r}>"


def iso(stamp: str) -> str:
    """A run folder's UTC stamp (``20261126T202923Z``) as ISO 8601 (``2026-11-26T20:29:23Z``)."""
    return datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now() -> str:
    """The current UTC second, ISO 8601."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def servers(records: Sequence[RunRecord]) -> dict[str, str]:
    """Per target, the server that answered and its version, as the first run of the target (in
    key order) recorded them (``llama-cpp-python 0.3.36``); a target whose server says nothing (the
    simulator, a hosted API) is left out. One record read per target: a
    :class:`~harness.results.RecordLog` reads only those."""
    firsts: dict[str, int] = {}
    keys = records.iter_keys() if isinstance(records, RecordLog) else (r.key for r in records)
    for index, (target, _, _) in enumerate(keys):
        firsts.setdefault(target, index)
    found = {target: server_of(records[index]) for target, index in firsts.items()}
    return {target: named for target, named in found.items() if named}


def server_of(record: RunRecord) -> str | None:
    """The server that answered ``record``'s run and its version, as it said (``None``: it said
    nothing)."""
    endpoint = record.transcript.endpoint
    server, version = str(endpoint.get("server") or ""), str(endpoint.get("version") or "")
    if version.startswith(server):  # llama-cpp-python's version names its server
        server = ""
    return f"{server} {version}".strip() or None


class Collector:
    """The facts of a run without a run folder (an API run, a pytest session), gathered one
    record at a time (a few figures a record: no record is kept)."""

    def __init__(self, started: str | None = None) -> None:
        self.started = started or now()
        self.scores = Scores()
        self.servers: dict[str, str | None] = {}
        self.modes: set[str] = set()

    def add(self, record: RunRecord) -> None:
        self.scores.add(record)
        self.modes.add(record.mode)
        if record.target.name not in self.servers:
            self.servers[record.target.name] = server_of(record)

    def facts(self, source: str, harness_version: str) -> RunFacts | None:
        """The run's rows under a new run id ``<source>-<UTC second>-<random>`` (``None``: no
        record was added)."""
        if not self.modes:
            return None
        stamp = self.started.replace("-", "").replace(":", "")
        return facts_of(
            self.scores.summary(),
            run_id=f"{source}-{stamp}-{os.urandom(4).hex()}",
            started=self.started,
            finished=now(),
            mode=",".join(sorted(self.modes)),
            harness_version=harness_version,
            server_versions={t: s for t, s in self.servers.items() if s},
            source=source,
        )


def facts_of(
    summary: Summary,
    *,
    run_id: str,
    started: str,
    mode: str,
    harness_version: str | None,
    finished: str | None = None,
    server_versions: dict[str, str] | None = None,
    source: str = "run folder",
) -> RunFacts:
    """The rows of a run whose :class:`~harness.checks.scoring.Summary` is ``summary`` (the
    report's ``summary``)."""
    versions = server_versions or {}
    targets: list[Row] = []
    for name, target in summary.targets.items():
        low, high = target.interval or (None, None)
        compliance = target.compliance
        latency = target.latency_ms
        targets.append(
            {
                "run_id": run_id,
                "target": name,
                "format": target.info.format,
                "model": target.info.model,
                "simulated": target.info.simulated,
                "server": versions.get(name),
                "score": target.score,
                "score_low": low,
                "score_high": high,
                "grade": target.grade,
                "compliance": compliance.score if compliance else None,
                "call_turns": compliance.call_turns if compliance else 0,
                "clean_turns": compliance.clean_turns if compliance else 0,
                "pass_at_1": target.pass_at_1,
                "runs": target.runs,
                "tested": target.tested,
                "errors": target.errors,
                "latency_p50_ms": latency.p50 if latency else None,
                "latency_p95_ms": latency.p95 if latency else None,
            }
        )
    run = {
        "run_id": run_id,
        "started": started,
        "finished": finished,
        "mode": mode,
        "harness_version": harness_version,
        "source": source,
        "targets": len(targets),
        "runs": sum(t["runs"] for t in targets),
    }
    return RunFacts(
        run,
        targets,
        Rows(partial(_scenario_rows, summary, run_id)),
        Rows(partial(_check_rows, summary, run_id)),
    )


def _scenario_rows(summary: Summary, run_id: str) -> Iterator[Row]:
    for name, target in summary.targets.items():
        for scenario_id, scenario in target.scenarios.items():
            yield {
                "run_id": run_id,
                "target": name,
                "scenario": scenario_id,
                "category": scenario.category,
                "score": scenario.score,
                "runs": scenario.runs,
                "tested": scenario.tested,
                "succeeded": scenario.succeeded,
                "errors": len(scenario.errors),
            }


def _check_rows(summary: Summary, run_id: str) -> Iterator[Row]:
    for name, target in summary.targets.items():
        for check_id, share in target.checks.items():
            yield {
                "run_id": run_id,
                "target": name,
                "check_id": check_id,
                "runs": share.runs,
                "passed": share.passed,
                "passes": share.pass_,
                "warns": share.warn,
                "fails": share.fail,
            }


def summarise(records: Iterable[RunRecord]) -> Summary:
    """The summary of ``records`` (sorted by key, as a results file is read), as the report
    computes it."""
    scores = Scores()
    for record in records:
        scores.add(record)
    return scores.summary()


def read_manifest(folder: Path) -> dict[str, Any]:
    """A run folder's manifest (``run.json``); a folder without one, or one that is not JSON, is a
    :class:`ConfigError` naming it."""
    path = folder / "run.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"{folder}: not a run folder (no run.json); run folders are under reports/runs/"
        ) from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot be read as a run manifest: {exc}") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("started"), str):
        raise ConfigError(f"{path}: not a run manifest (expected an object with 'started')")
    return manifest


def manifest_facts(folder: RunFolder, summary: Summary, records: Sequence[RunRecord]) -> RunFacts:
    """The rows of the run in ``folder`` from its manifest, its ``summary`` and its records."""
    manifest = folder.manifest
    return facts_of(
        summary,
        run_id=folder.run_id,
        started=iso(manifest["started"]),
        finished=manifest.get("finished"),
        mode=str(manifest.get("mode", "")),
        harness_version=manifest.get("harness_version"),
        server_versions=servers(records),
    )


def folder_facts(path: Path) -> RunFacts:
    """The rows of the run in the run folder ``path`` (``reports/runs/<run id>``), read through
    the results reader (:class:`~harness.results.RecordLog`)."""
    folder = RunFolder(path, read_manifest(path))
    records = RecordLog.open(folder.results)
    return manifest_facts(folder, summarise(records), records)
