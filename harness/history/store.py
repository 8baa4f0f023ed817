"""The history database: SQLite by default, PostgreSQL by URL, through SQLAlchemy Core (one code
path for both); its schema is brought up to date on open by numbered migrations, the version it
holds kept in ``history_version``.

A run's rows are written in one transaction, after the rows the database held for the same run
id are removed: writing or importing a run twice leaves it once, as the second time read it.

Example::

    with History.open("reports/history.sqlite") as db:
        for run in db.runs():
            print(run["run_id"], run["started"], run["targets"])
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import islice
from pathlib import Path
from types import TracebackType
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.schema import CreateTable

from harness.errors import ConfigError
from harness.history.facts import Row, RunFacts

metadata = sa.MetaData()


def _key(*names: str) -> list[sa.Column[Any]]:
    return [sa.Column(name, sa.String(200), primary_key=True) for name in names]


version_table = sa.Table("history_version", metadata, sa.Column("version", sa.Integer, nullable=False))
runs_table = sa.Table(
    "runs",
    metadata,
    *_key("run_id"),
    sa.Column("started", sa.String(32), nullable=False, index=True),
    sa.Column("finished", sa.String(32)),
    sa.Column("mode", sa.String(32), nullable=False),
    sa.Column("harness_version", sa.String(64)),
    sa.Column("source", sa.String(32), nullable=False),
    sa.Column("targets", sa.Integer, nullable=False),
    sa.Column("runs", sa.Integer, nullable=False),
)
targets_table = sa.Table(
    "run_targets",
    metadata,
    *_key("run_id", "target"),
    sa.Column("format", sa.String(64), nullable=False),
    sa.Column("model", sa.String(200), nullable=False),
    sa.Column("simulated", sa.Boolean, nullable=False),
    sa.Column("server", sa.String(200)),
    sa.Column("score", sa.Double),
    sa.Column("score_low", sa.Double),
    sa.Column("score_high", sa.Double),
    sa.Column("grade", sa.Integer),
    sa.Column("compliance", sa.Double),
    sa.Column("call_turns", sa.Integer, nullable=False),
    sa.Column("clean_turns", sa.Integer, nullable=False),
    sa.Column("pass_at_1", sa.Double),
    sa.Column("runs", sa.Integer, nullable=False),
    sa.Column("tested", sa.Integer, nullable=False),
    sa.Column("errors", sa.Integer, nullable=False),
    sa.Column("latency_p50_ms", sa.Double),
    sa.Column("latency_p95_ms", sa.Double),
    sa.Index("run_targets_by_target", "target"),
)
scenarios_table = sa.Table(
    "run_scenarios",
    metadata,
    *_key("run_id", "target", "scenario"),
    sa.Column("category", sa.String(64), nullable=False),
    sa.Column("score", sa.Double),
    sa.Column("runs", sa.Integer, nullable=False),
    sa.Column("tested", sa.Integer, nullable=False),
    sa.Column("succeeded", sa.Integer, nullable=False),
    sa.Column("errors", sa.Integer, nullable=False),
)
checks_table = sa.Table(
    "run_checks",
    metadata,
    *_key("run_id", "target", "check_id"),
    sa.Column("runs", sa.Integer, nullable=False),
    sa.Column("passed", sa.Double, nullable=False),
    sa.Column("passes", sa.Integer, nullable=False),
    sa.Column("warns", sa.Integer, nullable=False),
    sa.Column("fails", sa.Integer, nullable=False),
    sa.Index("run_checks_by_target", "target", "check_id"),
)
RUN_TABLES = (runs_table, targets_table, scenarios_table, checks_table)


def _create_v1(connection: Connection) -> None:
    metadata.create_all(connection, tables=list(RUN_TABLES))


MIGRATIONS: tuple[Callable[[Connection], None], ...] = (_create_v1,)
"""Migration ``n`` (1-based) brings a database at version ``n - 1`` to version ``n``. A new one is
appended, never edited: a database already at version ``n`` never runs it again."""
SCHEMA_VERSION = len(MIGRATIONS)


def url_of(where: str | Path) -> sa.URL:
    """The database URL of ``where``: a URL (``sqlite:///...``, ``postgresql://user@host/db``; a
    PostgreSQL URL without a driver uses psycopg 3) or a file path (an SQLite file). A URL that
    cannot be read is a :class:`ConfigError`."""
    text = str(where)
    if "://" not in text:
        return sa.URL.create("sqlite", database=str(Path(text).resolve()))
    try:
        url = sa.make_url(text)
    except sa.exc.ArgumentError:
        raise ConfigError(f"history: {text!r} is not a database URL nor a path") from None
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    if url.get_backend_name() not in ("sqlite", "postgresql"):
        raise ConfigError(f"history: {shown(url)}: only SQLite (a path) and PostgreSQL URLs are supported")
    return url


def shown(url: sa.URL | str | Path) -> str:
    """A database URL as it may be shown: its password hidden."""
    if isinstance(url, sa.URL):
        return url.render_as_string(hide_password=True)
    text = str(url)
    if "://" not in text:
        return text
    try:
        return sa.make_url(text).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return "(an unreadable URL)"


class History:
    """An open history database (:meth:`open`), its schema up to date."""

    def __init__(self, engine: Engine):
        self.engine = engine

    @classmethod
    def open(cls, where: str | Path, *, create: bool = True) -> History:
        """The history at ``where`` (a path or a URL, :func:`url_of`), migrated to
        :data:`SCHEMA_VERSION`. Without ``create``, an SQLite file that does not exist is a
        :class:`ConfigError` (reading a history that was never written). A missing PostgreSQL
        driver is a :class:`ConfigError` saying which extra installs it."""
        url = url_of(where)
        if url.get_backend_name() == "sqlite" and url.database:
            path = Path(url.database)
            if not create and not path.is_file():
                raise ConfigError(
                    f"history: no history at {path} (a run writes it; or `harness history import`)"
                )
            path.parent.mkdir(parents=True, exist_ok=True)
        try:
            engine = sa.create_engine(url, **_engine_options(url))
        except ModuleNotFoundError as exc:
            raise ConfigError(
                f"history: {shown(url)} needs the {exc.name} driver: pip install 'toolcall-harness[postgres]'"
            ) from None
        db = cls(engine)
        try:
            with engine.begin() as connection:
                migrate(connection)
        except BaseException:
            engine.dispose()
            raise
        return db

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> History:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def add(self, facts: RunFacts) -> None:
        """Write a run's rows (replacing any the database held for its run id), in one transaction."""
        run_id = facts.run["run_id"]
        with self.engine.begin() as connection:
            for table in reversed(RUN_TABLES):
                connection.execute(table.delete().where(table.c.run_id == run_id))
            for table, rows in (
                (runs_table, [facts.run]),
                (targets_table, facts.targets),
                (scenarios_table, facts.scenarios),
                (checks_table, facts.checks),
            ):
                _insert(connection, table, rows)

    def runs(self) -> list[Row]:
        """Every run, oldest first."""
        query = sa.select(runs_table).order_by(runs_table.c.started, runs_table.c.run_id)
        return self._rows(query)

    def targets(self) -> list[str]:
        """Every target the history holds, sorted."""
        query = sa.select(targets_table.c.target).distinct().order_by(targets_table.c.target)
        with self.engine.connect() as connection:
            return [row[0] for row in connection.execute(query)]

    def target_runs(self, target: str) -> list[Row]:
        """A target's figures in each run that ran it, oldest first, with the run's time, mode and
        harness version."""
        query = (
            sa.select(
                targets_table,
                runs_table.c.started,
                runs_table.c.mode,
                runs_table.c.harness_version,
            )
            .join(runs_table, runs_table.c.run_id == targets_table.c.run_id)
            .where(targets_table.c.target == target)
            .order_by(runs_table.c.started, runs_table.c.run_id)
        )
        return self._rows(query)

    def target_checks(self, target: str) -> list[Row]:
        """A target's per-check verdict counts in each run that ran it, oldest run first."""
        query = (
            sa.select(checks_table, runs_table.c.started)
            .join(runs_table, runs_table.c.run_id == checks_table.c.run_id)
            .where(checks_table.c.target == target)
            .order_by(runs_table.c.started, runs_table.c.run_id, checks_table.c.check_id)
        )
        return self._rows(query)

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every run table, sorted: two histories holding the same runs dump equal."""
        with self.engine.connect() as connection:
            return {
                table.name: sorted(tuple(row) for row in connection.execute(sa.select(table)))
                for table in RUN_TABLES
            }

    def _rows(self, query: sa.Select[Any]) -> list[Row]:
        with self.engine.connect() as connection:
            return [dict(row._mapping) for row in connection.execute(query)]


def _insert(connection: Connection, table: sa.Table, rows: Iterable[Row]) -> None:
    """Insert ``rows``, :data:`_BATCH` at a time (rows made as they are read are never all held),
    each batch with one DB-API ``executemany`` of the statement compiled once for the dialect:
    SQLAlchemy's own ``execute(insert, rows)`` builds each row's parameters in Python, a third of
    a second for a whole default run's rows (4,000) where this takes a tenth of that. Every value
    is a str, int, float, bool or None, which both drivers take as they are."""
    compiled = table.insert().compile(dialect=connection.dialect)
    order = compiled.positiontup or [] if compiled.positional else None
    given = iter(rows)
    while batch := list(islice(given, _BATCH)):
        params: list[Any] = batch if order is None else [tuple(row[name] for name in order) for row in batch]
        connection.exec_driver_sql(compiled.string, params)


_BATCH = 2_000
"""Rows a batch: 2,000 dicts and their parameters, about 1.5 MB, made and dropped at a time."""


def _engine_options(url: sa.URL) -> dict[str, Any]:
    if url.get_backend_name() == "sqlite":
        # another run writing at the same moment: wait for it (SQLite locks the whole file)
        return {"connect_args": {"timeout": 30}}
    return {}


_LOCK_KEY = 0x686973746F7279  # "history": the PostgreSQL advisory lock the migrations take


def _one_at_a_time(connection: Connection) -> None:
    """Make the version table if missing and hold the database's migration lock until the
    transaction ends: runs that start at once (shards, pytest workers) migrate one after the other,
    the later ones finding the work done. PostgreSQL: an advisory lock; SQLite: its write lock,
    taken by a write that changes nothing (a writer waits for it, up to the connection's timeout)."""
    if connection.dialect.name == "postgresql":
        connection.execute(sa.select(sa.func.pg_advisory_xact_lock(_LOCK_KEY)))
    connection.execute(CreateTable(version_table, if_not_exists=True))
    connection.execute(version_table.update().values(version=version_table.c.version))


def _held(connection: Connection) -> int | None:
    """The schema version the database holds (``None``: none yet)."""
    if not sa.inspect(connection).has_table(version_table.name):
        return None
    found = connection.execute(sa.select(version_table.c.version)).scalar()
    return None if found is None else int(found)


def migrate(connection: Connection) -> int:
    """Bring the database to :data:`SCHEMA_VERSION`; returns the version it held. A database of a
    newer harness (a version this one does not know) is a :class:`ConfigError`."""
    held = _held(connection)
    if held != SCHEMA_VERSION:  # work to do (a database only read is never written to)
        _one_at_a_time(connection)
        held = _held(connection)  # as the run that held the lock before left it
    if held is None:
        connection.execute(version_table.insert().values(version=0))
        held = 0
    if held > SCHEMA_VERSION:
        raise ConfigError(
            f"history: the database is at schema version {held}, this harness knows up to "
            f"{SCHEMA_VERSION}: use a newer harness, or another database"
        )
    for number in range(held, SCHEMA_VERSION):
        MIGRATIONS[number](connection)
        connection.execute(version_table.update().values(version=number + 1))
    return int(held)
