"""Run history: every run's headline, compliance, per-scenario outcomes and per-check verdicts
kept in a database (SQLite by default, ``reports/history.sqlite``; PostgreSQL by URL), so a
target's figures can be read over time (``harness history``).

The results files stay the source of truth: a run's rows are computed from what its run folder
holds (:mod:`harness.history.facts`), so ``harness history import reports/runs/*`` rebuilds
the same rows. Writing the history never costs a run its results: a failure is a
:class:`~harness.errors.HistoryWarning` and the run's exit code stays as it was.

Where it goes (:func:`where`): the ``--history`` option (or the ``history`` argument), else the
``HARNESS_HISTORY`` environment variable, else ``reports/history.sqlite``; ``off`` (or
``--no-history``) writes none.

The database itself is :class:`harness.history.store.History` (SQLAlchemy is imported only when
a history is opened). Example::

    from harness.history.store import History

    with History.open("reports/history.sqlite") as db:
        print([run["run_id"] for run in db.runs()])
"""

from __future__ import annotations

import dataclasses
import glob
import os
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path

from harness.errors import ConfigError, HistoryWarning
from harness.history.facts import RunFacts, folder_facts, read_manifest

__all__ = ["DEFAULT", "ENV", "HistoryWarning", "import_folders", "remember", "where"]

DEFAULT = "reports/history.sqlite"
"""Where the history goes when nothing says otherwise (relative to the working folder)."""
ENV = "HARNESS_HISTORY"
"""The environment variable naming the history (a path or URL, or ``off``)."""
OFF = frozenset({"off", "none", "no", "false", "0", ""})


def where(given: str | Path | None = None, *, default: str | Path = DEFAULT) -> str | None:
    """The history to write: ``given`` (a path or URL; ``off`` for none), else
    ``$HARNESS_HISTORY``, else ``default``. ``None``: no history."""
    chosen = given if given is not None else os.environ.get(ENV)
    if chosen is None:
        chosen = default
    return None if str(chosen).strip().lower() in OFF else str(chosen)


def remember(facts: RunFacts | Callable[[], RunFacts | None] | None, history: str | None) -> str | None:
    """Write a run's rows (``facts``, or what the callable gives: computed here, so that its
    faults count as the history's too) to ``history`` (a path or URL; ``None``: nothing is
    written). Any failure (the database unreachable, locked, of a newer schema, the disk full, a
    driver missing, the rows not computable) is a :class:`HistoryWarning` and returns its message:
    the run's results and exit code are never touched by it. Returns ``None`` when the rows were
    written."""
    if history is None or facts is None:
        return None
    from harness.history.store import History, shown

    run_id = "(unknown)"
    try:
        rows = facts() if callable(facts) else facts
        if rows is None:
            return None
        run_id = rows.run["run_id"]
        with History.open(history) as db:
            db.add(rows)
    except Exception as exc:  # whatever fails here must not lose the run: told, never raised
        message = (
            f"history not written to {shown(history)} ({type(exc).__name__}: {exc}); the run's results "
            f"are kept: `harness history import` adds run {run_id} later"
        )
        warnings.warn(HistoryWarning(message), stacklevel=2)
        return message
    return None


def expand(paths: Iterable[str | Path]) -> list[Path]:
    """``paths`` with each pattern a shell left as it is (``reports/runs/*`` in a shell that does
    not expand it, ``cmd.exe``) replaced by what it matches, and a folder of run folders
    (``reports/runs``) by its run folders."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists() and any(c in str(raw) for c in "*?["):
            found += [Path(p) for p in glob.glob(str(raw))] or [path]
        elif path.is_dir() and not (path / "run.json").exists():
            found += [p for p in path.iterdir() if (p / "run.json").is_file()] or [path]
        else:
            found.append(path)
    return found


def import_folders(folders: Iterable[str | Path], history: str) -> tuple[list[str], list[str]]:
    """Write the rows of each run folder (:func:`expand`) to ``history``, as they were written
    when the run ended (a run already there is replaced). Returns the run ids imported and, for
    each folder left out (a run that did not finish: interrupted, or still running), why. A
    folder that is no run folder, or whose results cannot be read, is a :class:`ConfigError`
    naming it, before anything is written."""
    chosen: list[RunFacts] = []
    skipped: list[str] = []
    for folder in sorted(expand(folders)):
        if not folder.is_dir():
            raise ConfigError(f"{folder}: not a run folder (a folder under reports/runs/)")
        manifest = read_manifest(folder)
        status = manifest.get("status")
        if status != "complete":
            skipped.append(f"{folder}: the run did not finish ({status}); `harness run --resume` it first")
            continue
        if manifest.get("shard"):
            skipped.append(f"{folder}: shard {manifest['shard']} of a run; its `harness merge` run is kept")
            continue
        facts = folder_facts(folder)  # its rows as lists: not every folder's summary kept till written
        chosen.append(dataclasses.replace(facts, scenarios=list(facts.scenarios), checks=list(facts.checks)))
    from harness.history.store import History

    with History.open(history) as db:
        for facts in chosen:
            db.add(facts)
    return [f.run["run_id"] for f in chosen], skipped
