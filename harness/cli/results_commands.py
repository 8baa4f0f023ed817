"""The ``harness`` commands over results files: ``report``, ``merge``, ``compare``, ``baseline``
and ``capabilities`` (registered on the ``harness`` group by :mod:`harness.cli`), and the report
and gate every command that writes reports shares."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from harness.cli.console import console, escape, github_step_summary, print_table

if TYPE_CHECKING:
    from harness.records import RunRecord
    from harness.reports.report import Report
    from harness.targets import Target


def history_to_keep(history: str | None, no_history: bool, configured: str | None, out: Path) -> str | None:
    """Where a command that writes a run folder under ``out`` keeps the run (``--history``,
    ``$HARNESS_HISTORY``, harness.toml's ``[history] url``, ``out/history.sqlite``; ``None`` for
    none); a URL that cannot be read fails now, before the run (exit 2)."""
    from harness.history import where

    kept = None if no_history else where(history, default=configured or out / "history.sqlite")
    if kept is not None:
        from harness.history.store import url_of

        url_of(kept)
    return kept


def build_report(records: Iterable[RunRecord], targets: Mapping[str, Target]) -> Report:
    """The report of ``records``, to be written (its run summaries spooled to disk), with the runs
    each target expects to fail (``report.xfail``, read by the JUnit writer and the gate)."""
    from harness.reports.json_report import build

    return build(records, policies=targets, spool=True)


@click.command()
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", default="reports", show_default=True, type=click.Path(path_type=Path))
@click.option("--config", default=None, help="Targets file for xfail (default ./harness.toml if present).")
def report(results: Path, out: Path, config: str | None) -> None:
    """Rebuild the reports from a results file."""
    from harness.reports import write_built
    from harness.results import RecordLog
    from harness.targets_file import load_targets

    records = RecordLog.open(results)
    built = build_report(records, load_targets(config))
    paths = write_built(built, records, out)
    print_table(built)
    click.echo("wrote " + ", ".join(str(p) for p in paths), err=True)


@click.command()
@click.argument("shards", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--out", default="reports", show_default=True, type=click.Path(path_type=Path))
@click.option("--config", default=None, help="Targets file (default ./harness.toml if present).")
@click.option("--min-score", default=None, type=click.FloatRange(0, 100), help="Exit 1 below this score.")
@click.option("--strict", is_flag=True, help="Exit 1 when any run fails.")
@click.option(
    "--history",
    default=None,
    metavar="PATH|URL",
    help="Keep the merged run in this history: an SQLite file or a postgresql:// URL (default: "
    "$HARNESS_HISTORY, else harness.toml's [history] url, else OUT/history.sqlite).",
)
@click.option("--no-history", is_flag=True, help="Keep no history of the merged run.")
@click.option(
    "--keep-runs",
    default=None,
    type=click.IntRange(0),
    help="Run folders to keep under OUT/runs/ (default: harness.toml's [history] keep_runs, else 5; "
    "0 keeps every one).",
)
def merge(
    shards: tuple[Path, ...],
    out: Path,
    config: str | None,
    min_score: float | None,
    strict: bool,
    history: str | None,
    no_history: bool,
    keep_runs: int | None,
) -> None:
    """Put the results of `harness run --shard K/N` jobs together: one run, the same as one
    unsharded run's (each SHARD is a results file or its folder). The merged run gets a run folder
    under OUT/runs/ (its manifest names the shards), is published to OUT/ and kept in the run
    history; the shards themselves are not."""
    from harness._version import __version__
    from harness.history import remember
    from harness.history.facts import manifest_facts, now
    from harness.reports import write_built
    from harness.results import RunFolder, merge_results, shard_manifests
    from harness.targets_file import load_config

    loaded = load_config(config)
    kept = history_to_keep(history, no_history, loaded.history, out)
    manifests = shard_manifests(shards)
    missing = _not_whole(manifests)
    modes = sorted({str(m["mode"]) for m in manifests if m.get("mode")})
    manifest = {
        "mode": modes[0] if len(modes) == 1 else "+".join(modes),
        "harness_version": __version__,
        "merged_from": [str(m.get("run_id") or path) for path, m in zip(shards, manifests, strict=True)],
    }
    folder = RunFolder.create(out, manifest)
    try:
        started = sorted(str(m["started"]) for m in manifests if m.get("started"))
        if started:  # the merged run started when its first shard did
            folder.manifest["started"] = started[0]
        records = merge_results(shards, folder.results)
        built = build_report(records, loaded.targets)
        paths = write_built(built, records, folder.path)
        folder.manifest["finished"] = now()
        keep = keep_runs if keep_runs is not None else loaded.keep_runs
        published = folder.finish("complete", paths, out, keep)
    except BaseException:  # nothing was published: no half-merged folder is left to be resumed
        import shutil

        folder.release()
        shutil.rmtree(folder.path, ignore_errors=True)
        raise
    if kept is not None and missing:
        console(stderr=True).print(
            escape(f"the merged run is not kept in the history: {missing}"), markup=False, soft_wrap=True
        )
    elif kept is not None:
        remember(lambda: manifest_facts(folder, built.summary, records), kept)
    print_table(built)
    github_step_summary(built, out)
    wrote = ", ".join(map(str, published))
    click.echo(
        f"merged {len(records)} run(s) of {len(shards)} shard(s) as run {folder.run_id}; wrote {wrote}",
        err=True,
    )
    exit_on_gate(built, loaded.targets, min_score=min_score, strict=strict)


def _not_whole(manifests: Sequence[Mapping[str, object]]) -> str | None:
    """Why the shards' manifests do not make one whole run (each shard K of one N, every K, each
    run finished), or None when they do: only a whole run is kept in the history."""
    if not all(m.get("shard") for m in manifests):
        return "a shard's run manifest (run.json) was not found beside its results"
    if any(m.get("status") != "complete" for m in manifests):
        return "a shard's run did not finish"
    shards = sorted(str(m["shard"]) for m in manifests)
    parts = [shard.split("/") for shard in shards]
    counts = {n for _, n in parts}
    if len(counts) != 1 or sorted(int(k) for k, _ in parts) != list(range(1, int(counts.pop()) + 1)):
        return f"the shards {', '.join(shards)} are not every shard of one run"
    return None


@click.command(name="compare")
@click.argument("base", type=click.Path(exists=True, path_type=Path))
@click.argument("new", type=click.Path(exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.option(
    "--tolerance",
    default=0.0,
    show_default=True,
    type=click.FloatRange(0, 100),
    help="Score drops of at most this many points are not regressions.",
)
def compare_(base: Path, new: Path, as_json: bool, tolerance: float) -> None:
    """List what changed from BASE to NEW, per target x scenario x check: new failures, fixes,
    score changes, new and gone findings, new errors and errors gone.

    Each is a results file, a folder holding results.jsonl (reports/, reports/runs/<id>/) or a
    baseline file (`harness baseline`). Exits 5 when there is a regression (a scenario or check
    that passed and now fails, a run newly in error, a score drop beyond --tolerance), else 0."""
    import json

    from harness.analysis import compare

    comparison = compare.compare(compare.load(base), compare.load(new), tolerance)
    if as_json:
        click.echo(json.dumps(comparison.to_json(), indent=2, ensure_ascii=False))
    else:
        click.echo(f"base: {comparison.base}\nnew:  {comparison.new}")
        click.echo("\n".join(comparison.lines()))
    if comparison.regressions:
        sys.exit(5)


@click.command()
@click.argument("results", default="reports/results.jsonl", type=click.Path(path_type=Path))
@click.option(
    "--out",
    default="harness-baseline.json",
    show_default=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The baseline file to write (commit it; `harness run --baseline` reads it).",
)
def baseline(results: Path, out: Path) -> None:
    """Write the baseline file of RESULTS (a results file or a run folder; default
    reports/results.jsonl): one sorted line per target x scenario with its outcome, score,
    failed checks and findings."""
    from harness.analysis import compare

    items = list(compare.load(results).entries.values())
    out.write_text(compare.render_baseline(items), encoding="utf-8")
    failing = sum(1 for e in items if e.outcome == "fail")
    errors = sum(1 for e in items if e.outcome == "error")
    targets = len({e.target for e in items})
    click.echo(
        f"wrote {out}: {len(items)} target x scenario entries ({targets} target(s); "
        f"{failing} failing, {errors} in error)",
        err=True,
    )


@click.command(name="capabilities")
@click.argument("results", default="reports/results.jsonl", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "shape",
    type=click.Choice(["text", "json", "litellm"]),
    default="text",
    show_default=True,
    help="text: the table; json: the full grid with the runs behind each cell, dated and tiered; "
    "litellm: the measured flags as a LiteLLM model map (litellm.register_model reads it).",
)
@click.option("--json", "as_json", is_flag=True, help="The same as --format json.")
@click.option(
    "-t", "--target", "targets", multiple=True, help="Only these targets (name or glob; repeatable)."
)
@click.option(
    "--simulated", is_flag=True, help="--format litellm: keep the simulated targets (left out by default)."
)
@click.option(
    "--out", default=None, type=click.Path(dir_okay=False, path_type=Path), help="Write to this file."
)
@click.option(
    "--structured-results",
    "structured",
    is_flag=True,
    help="Instead: what each target's adapter forwards to the model for a structured tool result "
    "(the JSON value, its text, both), read from the request it builds.",
)
def capabilities_command(
    results: Path,
    shape: str,
    as_json: bool,
    targets: tuple[str, ...],
    simulated: bool,
    out: Path | None,
    structured: bool,
) -> None:
    """What each target was measured to do, from the runs of RESULTS (a results file or a run
    folder; default reports/results.jsonl): native and parallel calls, each tool_choice mode,
    streamed calls, MCP tools and the JSON Schema features the endpoint accepted."""
    import json

    from harness.analysis.capabilities import capabilities, render_capabilities_text
    from harness.analysis.capability_map import grid_json, litellm_map, provenance
    from harness.results import RecordLog

    path = results / "results.jsonl" if results.is_dir() else results
    if not path.exists():  # a path that is no regular file is refused when it is read
        raise click.UsageError(f"no results file at {path}: run `harness run` first")
    records = RecordLog.open(path)
    if targets:
        from fnmatch import fnmatchcase

        records = records.where(lambda key: any(fnmatchcase(key[0], t) for t in targets))
    shape = "json" if as_json else shape
    if structured:
        from harness.analysis.structured_results import forwarding_table, render_text
        from harness.targets_file import load_targets

        known = load_targets()
        names = sorted({key[0] for key in records.iter_keys()})  # no record decoded
        rows = forwarding_table(known[name] for name in names if name in known)
        text = json.dumps([row.data() for row in rows], indent=2) if shape == "json" else render_text(rows)
    elif shape == "litellm":
        text = json.dumps(litellm_map(records, provenance(path), simulated=simulated), indent=2)
    elif shape == "json":
        text = json.dumps(grid_json(records, provenance(path)), indent=2)
    else:
        text = render_capabilities_text(capabilities(records), console().width)
    if out is None:
        click.echo(text)
    else:
        out.write_text(text + "\n", encoding="utf-8")
        click.echo(f"wrote {out}", err=True)


def exit_on_gate(
    report: Report,
    targets: Mapping[str, Target],
    *,
    min_score: float | None,
    strict: bool,
    regressions: Sequence[str] = (),
) -> None:
    """Exit with the gate's code and its reason when it fails (:func:`harness.analysis.gate.gate`;
    each target's own ``min_score`` counts)."""
    from harness.analysis.gate import gate

    code, message = gate(
        report,
        min_score=min_score,
        strict=strict,
        min_scores={t.name: t.min_score for t in targets.values() if t.min_score is not None},
        regressions=regressions,
    )
    if code:
        console(stderr=True).print(f"[red]{escape(message)}[/red]", markup=True, soft_wrap=True)
        sys.exit(code)


COMMANDS = (report, merge, compare_, baseline, capabilities_command)
