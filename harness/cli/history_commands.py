"""``harness history``: the runs in the history, a target's figures and checks over time, and
``harness history import`` (the history rebuilt from run folders). Thin over
:mod:`harness.history`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from harness.cli.console import console, escape

_DB_HELP = (
    "The history: an SQLite file or a postgresql:// URL "
    "(default: $HARNESS_HISTORY, else harness.toml's [history] url, else reports/history.sqlite)."
)


def _where(db: str | None, config: str | None) -> str:
    from harness.errors import ConfigError
    from harness.history import DEFAULT, where
    from harness.targets_file import load_config

    chosen = where(db, default=load_config(config).history or DEFAULT)
    if chosen is None:
        raise ConfigError("history: it is off ($HARNESS_HISTORY); name one with --db")
    return chosen


@click.group(name="history", invoke_without_command=True)
@click.option("--db", default=None, metavar="PATH|URL", help=_DB_HELP)
@click.option("--target", "-t", default=None, help="A target's headline, compliance and checks over time.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.option("--config", default=None, help="Config file for [history] (default ./harness.toml if present).")
@click.pass_context
def history(
    ctx: click.Context, db: str | None, target: str | None, as_json: bool, config: str | None
) -> None:
    """List the runs in the history, or (--target) one target over time: its headline, compliance
    and each check per run, and the run where each check first failed."""
    if ctx.invoked_subcommand is not None:
        return
    from harness.history.store import History
    from harness.history.views import runs_lines, target_lines, target_view

    with History.open(_where(db, config), create=False) as opened:
        data = target_view(opened, target) if target else opened.runs()
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    lines = target_lines(data) if isinstance(data, dict) else runs_lines(data)
    click.echo("\n".join(lines))


@history.command(name="import")
@click.argument("folders", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--db", default=None, metavar="PATH|URL", help=_DB_HELP)
@click.pass_context
def import_(ctx: click.Context, folders: tuple[Path, ...], db: str | None) -> None:
    """Rebuild the history from run folders (reports/runs/*, or reports/runs): each finished
    run's rows, as they were written when it ended (a run already in the history is replaced)."""
    from harness.history import import_folders
    from harness.history.store import shown

    group = ctx.parent.params if ctx.parent else {}
    chosen = _where(db or group.get("db"), group.get("config"))
    imported, skipped = import_folders(folders, chosen)
    err = console(stderr=True)
    for why in skipped:
        err.print(escape(f"left out {why}"), soft_wrap=True)
    err.print(escape(f"imported {len(imported)} run(s) into {shown(chosen)}"), soft_wrap=True)


COMMANDS = (history,)
