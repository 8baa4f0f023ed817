"""The harness as a library: load scenarios and targets, run them, read the records, build reports.

Everything the ``harness`` command does goes through these functions; the
command line only parses options and prints. They are re-exported by
``import harness``::

    import harness

    result = harness.run("scenarios", ["sim-openai"], harness.RunConfig(mode="replay"))
    print(result.score("sim-openai"), len(result.records))
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from harness.analysis.verify import Judgement, VerifyConfig
from harness.errors import ConfigError
from harness.history import DEFAULT, where
from harness.history.facts import now
from harness.records import RunRecord
from harness.results import read_sorted
from harness.runner import OnEnd, OnResult, RunConfig
from harness.runner import run as run_with_endpoints
from harness.runner import run_config as config_from_options
from harness.scenarios import Scenario
from harness.scenarios import load as load_scenario_files
from harness.scenarios import select as select_scenarios
from harness.servers.endpoints import open_endpoints
from harness.targets import Target, pick
from harness.targets_file import load_config
from harness.transport.cassette import Mode, RecordMode

if TYPE_CHECKING:
    from harness.reports.report import Report


def load_scenarios(
    *paths: str | Path, select: Sequence[str] = (), select_: Sequence[str] | None = None
) -> list[Scenario]:
    """Scenarios from files and folders (``*.yaml``, recursively; ``toolsets/`` folders are tool
    sets, not scenarios), validated, sorted by id; ``select`` keeps those whose id or category
    matches one of the glob patterns. Every bad file is reported in one
    :class:`~harness.errors.ScenarioError`. ``select_`` is the old name of ``select``, deprecated
    (it still works, with a :class:`DeprecationWarning`, until the next release).

    Example::

        suite = harness.load_scenarios("scenarios", select=["weather.*", "parallel"])
    """
    if select_ is not None:
        if select:
            raise TypeError("load_scenarios() takes select or select_ (its old name), not both")
        warnings.warn(
            "load_scenarios(select_=...) is deprecated: use select=... (select_ goes in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        select = select_
    loaded = load_scenario_files(list(paths or ("scenarios",)))
    return select_scenarios(loaded, list(select)) if select else loaded


def select_targets(
    known: dict[str, Target], names: Sequence[str], mode: Mode, cassettes: Path
) -> list[Target]:
    """The targets named (globs allowed), or by default: in replay every target with
    recordings, when recording the simulated ones; a live run must name its targets.

    Example::

        chosen = harness.select_targets(harness.load_targets(), ["sim-*"], "replay", Path("cassettes"))
    """
    if names:
        return pick(known, list(names))
    if mode == "replay":
        chosen = [t for name, t in sorted(known.items()) if (cassettes / name).is_dir()]
        if not chosen:
            raise ConfigError(f"no recorded target under {cassettes}/; name targets with --target")
        return chosen
    if mode == "record":
        return [t for _, t in sorted(known.items()) if t.simulated]
    raise ConfigError("a live run needs at least one --target")


@dataclass
class RunResult:
    """What a run gave: its records (sorted by target, scenario, repeat) and, once built, the report.

    Example::

        result = harness.run("scenarios", ["sim-openai"])
        assert result.score("sim-openai") == 100
        failing = [r.scenario for r in result.failed]
        paths = result.write_reports("reports")
    """

    records: Sequence[RunRecord]  # with a results file, a RecordLog reading them from it
    results: Path | None = None
    targets: Mapping[str, Target] = field(default_factory=dict, repr=False)
    paces: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    """Per target whose provider limited the run's pace (live, record; this process's runs): its
    pace's :meth:`~harness.transport.limits.Pace.summary`."""
    _report: Report | None = field(default=None, repr=False)

    @property
    def report(self) -> Report:
        """The typed report (what ``report.json`` holds; :class:`harness.reports.report.Report`):
        scores per target, category and scenario, and the runs each target expects to fail (its
        ``xfail``). ``report.to_data()`` gives it as plain JSON data."""
        if self._report is None:
            from harness.reports.json_report import build

            self._report = build(self.records, policies=self.targets)
        return self._report

    def score(self, target: str) -> float | None:
        """A target's score, 0-100 (``None`` when no check applied)."""
        return self.report.summary.targets[target].score

    @property
    def scores(self) -> dict[str, float | None]:
        """Every target's score."""
        return {name: t.score for name, t in self.report.summary.targets.items()}

    @property
    def failed(self) -> list[RunRecord]:
        """The runs with a failed check or an error."""
        return [r for r in self.records if not r.passed]

    @property
    def errors(self) -> list[RunRecord]:
        """The runs that could not be completed (a cassette error or a harness fault)."""
        return [r for r in self.records if r.error is not None]

    def write_reports(self, out_dir: str | Path, formats: Sequence[str] | None = None) -> list[Path]:
        """Write the report in each format (default: json, markdown, junit) to ``out_dir``."""
        from harness.reports import DEFAULT_WRITERS, write_built

        return write_built(self.report, self.records, Path(out_dir), tuple(formats or DEFAULT_WRITERS))

    def gate(self, *, min_score: float | None = None, strict: bool = False) -> tuple[int, str]:
        """The exit code CI should see, and why (see :func:`harness.analysis.gate.gate`): each target's
        own ``min_score`` and ``xfail`` apply, as in ``harness run``."""
        from harness.analysis.gate import gate

        own = {name: t.min_score for name, t in self.targets.items() if t.min_score is not None}
        return gate(self.report, min_score=min_score, strict=strict, min_scores=own)


def run(
    scenarios: str | Path | Sequence[Scenario],
    targets: Sequence[str | Target] | None = None,
    run_config: RunConfig | None = None,
    *,
    config: str | Path | None = None,
    on_result: OnResult | None = None,
    history: str | Path | bool | None = True,
    on_end: OnEnd | None = None,
    **options: Any,
) -> RunResult:
    """Run ``scenarios`` against ``targets`` as ``run_config`` says, and return the scored records.

    ``scenarios`` is a file or folder to load, or scenarios already loaded.
    ``targets`` are names or globs of bundled / ``harness.toml`` targets (``config`` names
    another targets file), or :class:`~harness.targets.Target` objects; by default every target
    with recordings (replay) or every simulated target (record). ``run_config`` is a
    :class:`~harness.runner.RunConfig` (default: a replay from ``cassettes/``, the records kept
    in memory): the mode (``replay``: cassettes only, never a live call; ``record``: live,
    writing cassettes; ``live``: live, writing nothing), a results file each record is appended
    to as its run ends, repeats, concurrency, worker processes, a shard, ... The simulator or a
    local model server is started when a live or record run needs it, and always stopped.
    ``on_result`` is called with each record as its run ends; ``on_end``, for a progress display,
    with its :class:`~harness.runner.RunEnd` only (target, scenario, repeat, outcome, score): a
    record run in a worker process is decoded again only for ``on_result``.

    ``history``: where the run is also kept in the run history (:mod:`harness.history`): a path
    or a database URL; ``True`` (the default) for ``$HARNESS_HISTORY``, else the targets file's
    ``[history] url``, else ``reports/history.sqlite``; ``False`` or ``None`` for none. A run
    interrupted (``stop`` set) is not kept; a history that cannot be written is a
    :class:`~harness.errors.HistoryWarning`, never an error.

    The fields of :class:`~harness.runner.RunConfig` as keywords (``mode="live"``,
    ``repeats=3``, ...) are deprecated: they still work, with a :class:`DeprecationWarning`,
    until the next release.

    Example::

        result = harness.run("scenarios", ["sim-openai", "sim-anthropic"], harness.RunConfig(repeats=2))
        for record in result.failed:
            print(record.target.name, record.scenario, [c.id for c in record.checks if c.status == "fail"])
    """
    if options:
        unknown = sorted(set(options) - {f.name for f in fields(RunConfig)})
        if unknown:
            raise TypeError(f"run() got unexpected keyword arguments {unknown}; RunConfig has no such field")
        warnings.warn(
            "harness.run(..., mode=..., repeats=...) is deprecated: pass a RunConfig, "
            "harness.run(scenarios, targets, harness.RunConfig(mode=..., repeats=...)) "
            "(the keywords go in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        run_config = config_from_options(options, run_config)
    settings = run_config or RunConfig()
    suite = load_scenarios(scenarios) if isinstance(scenarios, str | Path) else list(scenarios)
    loaded = load_config(config)
    known = loaded.targets
    named = [t for t in targets or () if isinstance(t, str)]
    chosen = select_targets(known, named, settings.mode, settings.cassettes) if named or not targets else []
    chosen += [t for t in targets or () if isinstance(t, Target)]
    started = now()
    with open_endpoints(chosen, suite, settings.mode) as endpoints:
        records = run_with_endpoints(chosen, suite, settings, endpoints, on_result, on_end)
        paces = {
            name: endpoint.pace.summary()
            for name, endpoint in endpoints.items()
            if endpoint.pace is not None and endpoint.pace.backoffs
        }
    result = RunResult(records, settings.results, {t.name: t for t in chosen}, paces=paces)
    stopped = settings.stop is not None and settings.stop.is_set()
    if history and not stopped and settings.shard is None:  # a shard is kept by its merged run
        kept = where(None if history is True else str(history), default=loaded.history or DEFAULT)
        remember(records, kept, "api", started)
    return result


def remember(
    records: Iterable[RunRecord], history: str | None, source: str = "api", started: str | None = None
) -> str | None:
    """Keep a run that has no run folder (an API run, a pytest session) in ``history`` (a path or
    URL; ``None``: nowhere) under a new run id ``<source>-<UTC second>-<random>``. Returns the
    warning when it could not be written (:func:`harness.history.remember`: never an error). Such
    a run cannot be imported again later: only a run folder's can.

    Example::

        harness.api.remember(records, "reports/history.sqlite")
    """
    if history is None:
        return None
    from harness._version import __version__
    from harness.history import remember as write
    from harness.history.facts import Collector, RunFacts

    def facts() -> RunFacts | None:
        collected = Collector(started)
        for record in records:
            collected.add(record)
        return collected.facts(source, __version__)

    return write(facts, history)


def run_targets(
    targets: Sequence[Target],
    scenarios: Sequence[Scenario],
    config: RunConfig | None = None,
    on_result: OnResult | None = None,
) -> Sequence[RunRecord]:
    """The records of running ``scenarios`` against ``targets`` with a :class:`RunConfig`: opens
    their endpoints (starting the simulator or a local model server when needed), runs, and
    always stops them.

    Example::

        records = harness.run_targets([target], suite, harness.RunConfig(mode="live"))
    """
    config = config or RunConfig()
    with open_endpoints(targets, scenarios, config.mode) as endpoints:
        return run_with_endpoints(targets, scenarios, config, endpoints, on_result)


def verify_endpoints(
    reference: Target,
    endpoints: Sequence[Target],
    scenarios: Sequence[Scenario],
    *,
    repeats: int = 1,
    mode: Mode = "replay",
    cassettes: str | Path = "cassettes",
    redo: Sequence[str] = (),
    concurrency: int = 4,
    settings: VerifyConfig | None = None,
) -> list[Judgement]:
    """Run ``scenarios`` on the ``reference`` (``repeats`` times: its own noise) and once on each
    endpoint, and judge each endpoint against it (:mod:`harness.analysis.verify`). Recording keeps what
    is recorded (vcrpy ``once``) except the scenarios ``redo`` names (globs), recorded again.

    Example::

        known = harness.load_targets()
        suite = harness.load_scenarios("scenarios")
        reference, vendor = known["local-gemma3-270m"], known["local-llamacpp-gemma3-270m"]
        (judged,) = harness.api.verify_endpoints(reference, [vendor], suite)
        print(judged.verdict, judged.figures["trigger"])
    """
    from fnmatch import fnmatchcase

    from harness.analysis.verify import verify_records
    from harness.analysis.wire_requests import reader

    again = [s for s in scenarios if mode == "record" and any(fnmatchcase(s.id, p) for p in redo)]
    keep = [s for s in scenarios if s not in again]
    groups = [("once" if mode == "record" else "all", keep), ("all", again)]

    def records(targets: Sequence[Target], count: int) -> list[RunRecord]:
        done: list[RunRecord] = []
        for record_mode, chosen in groups:
            if chosen:
                settings = RunConfig(
                    mode=mode,
                    cassettes=Path(cassettes),
                    repeats=count,
                    concurrency=concurrency,
                    record_mode=cast(RecordMode, record_mode),
                )
                done += run(chosen, targets, settings).records
        return done

    reference_records = records([reference], repeats)
    ran = records(endpoints, 1)
    by_endpoint = {t.name: [r for r in ran if r.target.name == t.name] for t in endpoints}
    return verify_records(reference_records, by_endpoint, settings or VerifyConfig(), reader())


def read_results(path: str | Path) -> list[RunRecord]:
    """The records of a results file, typed and sorted by (target, scenario, repeat).

    Example::

        records = harness.read_results("reports/results.jsonl")
    """
    return read_sorted(path)


def write_reports(
    records: Iterable[RunRecord], out_dir: str | Path, formats: Sequence[str] | None = None
) -> list[Path]:
    """Build the report of ``records`` and write it in each format (default: json, markdown,
    junit) to ``out_dir``; returns the written paths.

    Example::

        harness.write_reports(harness.read_results("reports/results.jsonl"), "rebuilt")
    """
    return RunResult(sorted(records, key=lambda r: r.key)).write_reports(out_dir, formats)
