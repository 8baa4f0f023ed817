"""``harness run`` and ``harness record``: the options, the run folder, the reports and the gate."""

from __future__ import annotations

import signal
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from harness import results
from harness.cli.console import (
    console,
    escape,
    github_step_summary,
    print_table,
    warn_unmatched_xfail,
)
from harness.cli.results_commands import build_report, exit_on_gate, history_to_keep
from harness.cli.signals import signals

CONCURRENCY = click.IntRange(1, 1024)
"""The runs a command keeps in flight at once (``--concurrency`` of run, record and verify)."""


def _run_options(fn: Any) -> Any:
    options = [
        click.option("--target", "-t", "targets", multiple=True, help="Target name or glob (repeatable)."),
        click.option(
            "--scenario",
            "-s",
            "scenario_patterns",
            multiple=True,
            help="Scenario id, glob or category (repeatable).",
        ),
        click.option(
            "--scenarios",
            "scenario_dir",
            default="scenarios",
            show_default=True,
            help="Scenario file or folder.",
        ),
        click.option("--cassettes", default="cassettes", show_default=True, type=click.Path(path_type=Path)),
        click.option(
            "--out",
            default="reports",
            show_default=True,
            type=click.Path(path_type=Path),
            help="Folder for results.jsonl and the reports.",
        ),
        click.option("--config", default=None, help="Targets file (default ./harness.toml if present)."),
        click.option(
            "--repeat",
            "repeats",
            default=1,
            show_default=True,
            type=click.IntRange(1, 100),
            help="Runs per scenario (pass^k).",
        ),
        click.option(
            "--concurrency",
            default=8,
            show_default=True,
            type=CONCURRENCY,
            help="Runs in flight at once, all targets together (live and record; each target also "
            "keeps to its own concurrency, and to the pace its provider accepts). A replay runs one "
            "at a time in each process.",
        ),
        click.option(
            "--min-score",
            default=None,
            type=click.FloatRange(0, 100),
            help="Exit 1 when a target scores below this.",
        ),
        click.option("--strict", is_flag=True, help="Exit 1 when any run fails."),
        click.option(
            "--processes",
            default=0,
            type=click.IntRange(0, 64),
            help="Worker processes (Linux). Replay: one per core unless 1. Live and record: only when "
            "above 1, each with its share of every target's concurrency and rate limits.",
        ),
        click.option(
            "--shard",
            default=None,
            metavar="K/N",
            help="Run only shard K of N: a stable share of the (target, scenario) pairs, for N CI "
            "jobs; put their results together with `harness merge`.",
        ),
        click.option(
            "--live-mcp",
            is_flag=True,
            help="Start the scenarios' MCP servers even in replay (their results must match the "
            "recording); a replay otherwise answers MCP calls from the recording.",
        ),
        click.option(
            "--history",
            default=None,
            metavar="PATH|URL",
            help="Also keep the run in this history: an SQLite file or a postgresql:// URL (default: "
            "$HARNESS_HISTORY, else harness.toml's [history] url, else OUT/history.sqlite).",
        ),
        click.option("--no-history", is_flag=True, help="Keep no history of this run."),
        click.option(
            "--keep-runs",
            default=None,
            type=click.IntRange(0),
            help="Run folders to keep under OUT/runs/, the newest (default: harness.toml's [history] "
            "keep_runs, else 5; 0 keeps every one, so `harness history import` can rebuild them all).",
        ),
        click.option(
            "--resume",
            "resume",
            is_flag=False,
            flag_value="latest",
            default=None,
            help="Continue an interrupted run (the newest one, or the run id given) without redoing "
            "the runs it finished.",
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


@click.command()
@_run_options
@click.option("--mode", type=click.Choice(["replay", "record", "live"]), default="replay", show_default=True)
@click.option("--live", "live_flag", is_flag=True, help="Same as --mode live: real calls, nothing written.")
@click.option(
    "--record-mode",
    type=click.Choice(["once", "new_episodes", "all"]),
    default="all",
    show_default=True,
    help="With --mode record: vcrpy record mode.",
)
@click.option(
    "--baseline",
    default=None,
    type=click.Path(exists=True, path_type=Path),
    help="Compare with this baseline file (or results.jsonl, or run folder) and exit 5 on a regression.",
)
@click.option(
    "--tolerance",
    default=0.0,
    show_default=True,
    type=click.FloatRange(0, 100),
    help="With --baseline: score drops of at most this many points are not regressions.",
)
@click.option(
    "--rechunk",
    default=0,
    type=click.IntRange(0, 64),
    help="Replay: run each agent target's scenarios again with every recorded stream re-sliced "
    "into chunks of 1..N bytes and at line ends; a difference is an agent.stream_rechunk finding.",
)
def run(live_flag: bool, **options: Any) -> None:
    """Run scenarios against targets (default: replay every recorded target offline)."""
    if live_flag:
        options["mode"] = "live"
    _run(**options)


@click.command()
@_run_options
@click.option(
    "--record-mode", type=click.Choice(["once", "new_episodes", "all"]), default="all", show_default=True
)
def record(**options: Any) -> None:
    """Run live and write cassettes (default targets: the simulated ones)."""
    _run(mode="record", **options)


def _run(
    *,
    targets: tuple[str, ...],
    scenario_patterns: tuple[str, ...],
    scenario_dir: str,
    out: Path,
    config: str | None,
    min_score: float | None,
    strict: bool,
    resume: str | None,
    history: str | None = None,
    no_history: bool = False,
    keep_runs: int | None = None,
    baseline: Path | None = None,
    tolerance: float = 0.0,
    **run_options: Any,
) -> None:
    """``harness run`` and ``harness record``: ``run_options`` are the options named as the
    fields of :class:`~harness.runner.RunConfig` (``--mode``, ``--cassettes``, ``--repeat``...)."""
    from harness import api
    from harness._version import __version__
    from harness.analysis import compare
    from harness.errors import ConfigError
    from harness.history import remember
    from harness.history.facts import manifest_facts, now
    from harness.reports import write_built
    from harness.reports.report import Baseline
    from harness.results import RecordLog
    from harness.runner import RunEnd, Shard, run_config
    from harness.targets_file import load_config

    settings = run_config(run_options)
    if settings.rechunk and settings.mode != "replay":
        raise ConfigError(
            f"--rechunk re-slices recorded streams: it needs --mode replay, not {settings.mode}"
        )
    loaded = load_config(config)
    known = loaded.targets
    kept = history_to_keep(history, no_history, loaded.history, out)
    base = compare.load(baseline) if baseline is not None else None  # a bad file fails before the run
    folder: results.RunFolder
    if resume:
        folder = results.RunFolder.resume(out, None if resume == "latest" else resume)
        manifest = folder.manifest
        settings = replace(
            settings,
            mode=manifest["mode"],
            record_mode=manifest["record_mode"],
            repeats=manifest["repeats"],
            shard=Shard.parse(manifest["shard"]) if manifest.get("shard") else None,
            cassettes=Path(manifest["cassettes"]),
        )
        chosen = [known[name] for name in manifest["targets"] if name in known]
        wanted = set(manifest["scenarios"])
        selected = [s for s in api.load_scenarios(manifest["scenario_dir"]) if s.id in wanted]
    else:
        chosen = api.select_targets(known, targets, settings.mode, settings.cassettes)
        selected = api.load_scenarios(scenario_dir, select=scenario_patterns)
        if not selected:
            raise ConfigError(f"no scenario matches {list(scenario_patterns)}")
        manifest = {
            "mode": settings.mode,
            "record_mode": settings.record_mode,
            "repeats": settings.repeats,
            "cassettes": str(settings.cassettes),
            "scenario_dir": scenario_dir,
            "targets": [t.name for t in chosen],
            "scenarios": [s.id for s in selected],
            "shard": str(settings.shard) if settings.shard else None,
            "harness_version": __version__,
        }
        folder = results.RunFolder.create(out, manifest)
    click.get_current_context().call_on_close(folder.release)  # however the command ends
    if settings.shard is not None:  # a part of a run: `harness merge` keeps the whole one
        kept = None
    done = folder.done()
    err = console(stderr=True)
    if settings.rechunk and not any(t.agent for t in chosen):
        err.print(
            "--rechunk re-slices the streams of agent targets only, and none is chosen; the harness's "
            "own adapters are swept by `harness audit --rechunk N`"
        )
    mode, repeat, part = settings.mode, settings.repeats, settings.shard
    pairs = sum(1 for t in chosen for s in selected if part is None or part.holds(t.name, s.id))
    total = pairs * repeat
    left = total - len(done)
    size = f"{len(chosen)} target(s) x {len(selected)} scenario(s) x {repeat}"
    err.print(
        escape(f"{mode}: {size} = {len(chosen) * len(selected) * repeat} run(s)")
        + (escape(f"; shard {part}: {total} of them") if part else "")
        + (escape(f"; resuming {folder.run_id}: {len(done)} done, {left} to go") if done else "")
    )
    if done.cut is not None:
        cut = f"{folder.results}:{done.cut}"
        err.print(escape(f"{cut}: cut short when the run stopped; dropped, its run goes again"))
    stop = threading.Event()
    settings = replace(settings, results=folder.results, skip=frozenset(done.iter_keys()), stop=stop)

    def interrupt(signum: int) -> None:
        stop.set()
        err.print(
            escape(
                f"interrupted ({signal.Signals(signum).name}): no new run starts; writing the reports "
                "of the runs that finished (a second Ctrl-C or signal quits at once)"
            )
        )

    with signals.first(interrupt):
        from rich.progress import Progress

        with Progress(console=err, transient=True, disable=not err.is_terminal) as progress:
            task = progress.add_task(mode, total=left)

            def finished(end: RunEnd) -> None:
                if err.is_terminal:
                    progress.advance(task)
                else:  # CI logs: one line per finished run, as it ends
                    score = "-" if end.score is None else f"{end.score:g}"
                    sys.stderr.write(f"{end.outcome:5} {score:>6}  {end.target}  {end.scenario}\n")
                    sys.stderr.flush()

            ran = api.run(selected, chosen, settings, on_end=finished, history=False)
    paces = ran.paces
    store = ran.records.store if isinstance(ran.records, RecordLog) else None  # indexed as written
    del ran  # its keys of this run's records: the report reads every run's below
    for name, pace in paces.items():  # what a provider's limits made of the run
        err.print(
            escape(
                f"{name}: paced to its provider's limit: {pace['requests_per_minute']:g} requests a minute "
                f"at the end, {pace['lowest_per_minute']:g} at the lowest; {pace['backoffs']} backoff(s), "
                f"{pace['paused_s']:g} s paused"
            )
        )
    if paces:
        folder.manifest["paces"] = dict(paces)
    records = RecordLog.open(folder.results, store=store)  # the runs done before a resume, and this one's
    report = build_report(records, known)
    comparison = None
    if base is not None:
        comparison = compare.compare(base, compare.from_records(records, str(folder.path)), tolerance)
        report.baseline = Baseline(str(baseline), tolerance, comparison.regressions, comparison.lines())
    paths = write_built(report, records, folder.path, sections=_trends(kept, folder, report, records))
    if not stop.is_set():
        folder.manifest["finished"] = now()  # saved by finish, read by `harness history import`
    keep = keep_runs if keep_runs is not None else loaded.keep_runs
    published = folder.finish("interrupted" if stop.is_set() else "complete", [*paths], out, keep)
    if not stop.is_set() and kept is not None:  # written once the results are published: never costs them
        remember(lambda: manifest_facts(folder, report.summary, records), kept)
    print_table(report)
    github_step_summary(report, out)
    warn_unmatched_xfail(chosen, {s.id for s in selected})
    if comparison is not None:
        console().print(escape(f"compared with the baseline {baseline}:"))
        for line in comparison.lines():
            console().print(line, markup=False, soft_wrap=True)
    for run in report.runs:
        if run.error is not None:
            err.print(
                f"[red]{escape(run.target)} {escape(run.scenario)}:[/red] {escape(run.error.message)}",
                markup=True,
                soft_wrap=True,
            )
    err.print(escape("wrote " + ", ".join(str(p) for p in published or [folder.results, *paths])))
    if stop.is_set():
        err.print(escape(f"interrupted: {len(records)} of {total} run(s) finished; continue with --resume"))
        sys.exit(130)
    regressions = comparison.regressions if comparison is not None else ()
    exit_on_gate(report, known, min_score=min_score, strict=strict, regressions=regressions)


COMMANDS = (
    run,
    record,
)


def _trends(kept: str | None, folder: results.RunFolder, report: Any, records: Any) -> tuple[Any, ...]:
    """report.html's *Trends* section: each target's figures over the history ``kept`` and this
    run (none without a history, or before a target's second run)."""
    if kept is None:
        return ()
    from markupsafe import Markup

    from harness.history.facts import manifest_facts
    from harness.history.trend import trend_html
    from harness.reports.html import Section

    try:
        current = manifest_facts(folder, report.summary, records)
    except Exception:  # rows that cannot be made: the history warns of it when written; no trends
        return ()
    body = trend_html(kept, list(report.summary.targets), current=current)
    return (Section("trends", "Trends", Markup(body)),) if body else ()
