"""The run history end to end: three replayed runs of the bundled suite leave three runs in it,
``harness history --target`` shows them, and ``harness history import reports/runs/*`` rebuilds
the same rows from the run folders, on SQLite and on a real PostgreSQL started here. A history
that cannot be written costs the run nothing; the API and the pytest plugin keep theirs."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import harness
from harness.cli import main
from harness.history.store import SCHEMA_VERSION, History, metadata, version_table
from harness.runner import RunConfig
from tests.helpers.cli import REPO

pytest_plugins = ["pytester"]

TARGET = "local-gemma3-270m"
SUITE = ["--scenarios", str(REPO / "scenarios"), "--cassettes", str(REPO / "cassettes")]
RUN = ["-t", TARGET, "-t", "sim-openai", "-s", "weather.*", "-s", "parallel", *SUITE]


def invoke(*args: str | Path) -> Result:
    """``harness ARGS`` in this process (its stdout and stderr apart)."""
    return CliRunner().invoke(main, [str(a) for a in args])


def three_runs(out: Path, *history: str) -> list[str]:
    """Three replays of the suite into ``out``; their run ids, oldest first."""
    for _ in range(3):
        done = invoke("run", *RUN, "--out", out, *history)
        assert done.exit_code == 0, done.stderr
    return sorted(p.name for p in (out / "runs").iterdir())


def rebuilt_identically(out: Path, db: str, run_ids: list[str], forget: object) -> None:
    """The history holds ``run_ids``; forgotten (``forget()``) and imported from the run folders,
    it holds the same rows."""
    with History.open(db, create=False) as history:
        before = history.dump()
    assert [r[0] for r in sorted(before["runs"], key=lambda r: (r[1], r[0]))] == run_ids
    forget()  # type: ignore[operator]
    imported = invoke("history", "import", *sorted((out / "runs").iterdir()), "--db", db)
    assert imported.exit_code == 0, imported.stderr
    assert "imported 3 run(s)" in imported.stderr
    with History.open(db, create=False) as history:
        assert history.dump() == before


def test_three_runs_are_in_the_history_and_rebuilt_from_their_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HARNESS_HISTORY")  # as a user runs it (tests/conftest.py turns it off)
    out = tmp_path / "reports"
    run_ids = three_runs(out)  # the history goes to OUT/history.sqlite unless told
    db = str(out / "history.sqlite")
    listed = invoke("history", "--db", db)
    assert listed.exit_code == 0 and all(run_id in listed.stdout for run_id in run_ids)
    shown = invoke("history", "--db", db, "--target", TARGET)
    assert shown.exit_code == 0, shown.stderr
    assert f"{TARGET}: 3 run(s)" in shown.stdout and all(run_id in shown.stdout for run_id in run_ids)
    data = json.loads(invoke("history", "--db", db, "--target", TARGET, "--json").stdout)
    assert [r["run_id"] for r in data["runs"]] == run_ids
    assert data["runs"][0]["server"].startswith("llama-cpp-python")  # as the cassettes recorded it
    assert data["runs"][0]["harness_version"] == harness.__version__
    failing = {c: v for c, v in data["checks"].items() if v["first_failed"]}
    assert failing and all(v["first_failed"]["run_id"] == run_ids[0] for v in failing.values())
    page = (out / "report.html").read_text(encoding="utf-8")  # the third run's: a trend panel a target
    trends = page[page.index('<section id="trends"') : page.index("</section>", page.index('id="trends"'))]
    assert (
        f"<strong>{TARGET}</strong>: 3 run(s)" in trends and "<strong>sim-openai</strong>: 3 run(s)" in trends
    )
    assert trends.count("<svg") == 2 and 'href="#trends"' in page
    rebuilt_identically(out, db, run_ids, lambda: os.remove(db))


def test_no_history_a_configured_one_and_one_that_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    done = invoke("run", *RUN, "--out", tmp_path / "r", "--history", blocker / "h.sqlite")
    assert done.exit_code == 0, done.stderr  # the run's own exit code
    assert "warning: history not written to" in done.stderr and "harness history import" in done.stderr
    assert (tmp_path / "r" / "results.jsonl").is_file() and (tmp_path / "r" / "report.json").is_file()
    assert invoke("run", *RUN, "--out", tmp_path / "n", "--no-history").exit_code == 0
    assert not (tmp_path / "n" / "history.sqlite").exists()
    (tmp_path / "harness.toml").write_text('[history]\nurl = "team/history.sqlite"\n')
    monkeypatch.delenv("HARNESS_HISTORY")  # (tests/conftest.py turns it off; it comes before the file)
    configured = invoke("run", *RUN, "--out", tmp_path / "c", "--config", tmp_path / "harness.toml")
    assert configured.exit_code == 0 and (tmp_path / "team" / "history.sqlite").is_file()
    refused = invoke("run", *RUN, "--out", tmp_path / "m", "--history", "mysql://u@h/db")
    assert refused.exit_code == 2 and "only SQLite" in refused.stderr
    assert not (tmp_path / "m").exists()  # refused before the run


def test_every_run_folder_is_kept_when_asked_so_import_rebuilds_every_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the default five run folders, the history holds runs import could no longer rebuild;
    ``[history] keep_runs = 0`` (or ``--keep-runs 0``) keeps every folder, and every run is
    rebuilt; ``--keep-runs 2`` keeps two."""
    monkeypatch.delenv("HARNESS_HISTORY")  # (tests/conftest.py turns it off; it comes before the file)
    (tmp_path / "harness.toml").write_text('[history]\nurl = "h.sqlite"\nkeep_runs = 0\n')
    selection = ["-t", "sim-openai", "-s", "weather.single.*", *SUITE, "--config", tmp_path / "harness.toml"]
    for _ in range(6):
        assert invoke("run", *selection, "--out", tmp_path / "r").exit_code == 0
    folders = sorted((tmp_path / "r" / "runs").iterdir())
    assert len(folders) == 6
    rebuilt = tmp_path / "rebuilt.sqlite"
    assert invoke("history", "import", tmp_path / "r" / "runs", "--db", rebuilt).exit_code == 0
    with (
        History.open(tmp_path / "h.sqlite", create=False) as kept,
        History.open(rebuilt, create=False) as again,
    ):
        assert (
            [r["run_id"] for r in again.runs()]
            == [r["run_id"] for r in kept.runs()]
            == [f.name for f in folders]
        )
    assert invoke("run", *selection, "--out", tmp_path / "r", "--keep-runs", "2").exit_code == 0
    assert len(list((tmp_path / "r" / "runs").iterdir())) == 2


def test_the_api_and_the_pytest_plugin_keep_their_runs(tmp_path: Path, pytester: pytest.Pytester) -> None:
    db = tmp_path / "h.sqlite"
    config = RunConfig(cassettes=REPO / "cassettes")
    weather = harness.load_scenarios(REPO / "scenarios", select=["weather.*"])
    harness.run(weather, ["sim-openai"], config, history=db)
    harness.run(weather, ["sim-openai"], config, history=False)
    shutil.copytree(REPO / "scenarios", pytester.path / "scenarios")
    shutil.copytree(REPO / "cassettes" / "sim-openai", pytester.path / "cassettes" / "sim-openai")
    outcome = pytester.runpytest_inprocess(
        "--harness-targets",
        "sim-openai",
        "-k",
        "weather and not none and not required",
        "--harness-history",
        str(db),
        "-p",
        "no:randomly",
    )
    outcome.assert_outcomes(passed=5)
    with History.open(db, create=False) as history:
        runs = history.runs()
    assert [r["source"] for r in runs] == ["api", "pytest"]
    assert [r["runs"] for r in runs] == [4, 5] and all(r["run_id"].startswith(r["source"]) for r in runs)


# -- PostgreSQL: a real server, started here on 127.0.0.1 -------------------------------------


def _binaries() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return versions[-1].parent if versions else None


@pytest.fixture
def postgres() -> Iterator[str]:
    """The URL of a PostgreSQL server started for the test in a scratch folder on a free port of
    127.0.0.1 (as the ``postgres`` user when the tests run as root: initdb refuses root), stopped
    after it."""
    binaries = _binaries()
    if binaries is None:
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl): install Debian's postgresql")
    root = Path(tempfile.mkdtemp(prefix="harness-pg-"))
    as_user = None
    if os.geteuid() == 0:
        import pwd

        user = pwd.getpwnam("postgres")
        os.chown(root, user.pw_uid, user.pw_gid)

        def as_user() -> None:
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)

    def run(*argv: str) -> None:
        subprocess.run(argv, check=True, capture_output=True, timeout=120, preexec_fn=as_user, cwd=root)

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    data = root / "data"
    run(str(binaries / "initdb"), "-D", str(data), "-U", "harness", "--auth=trust", "-E", "UTF8", "--no-sync")
    options = f"-h 127.0.0.1 -p {port} -k {root} -F"
    run(str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "start")
    try:
        yield f"postgresql://harness@127.0.0.1:{port}/postgres"
    finally:
        run(str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)


def test_the_same_against_postgresql(tmp_path: Path, postgres: str) -> None:
    out = tmp_path / "reports"
    run_ids = three_runs(out, "--history", postgres)
    assert not (out / "history.sqlite").exists()
    shown = invoke("history", "--db", postgres, "--target", TARGET)
    assert shown.exit_code == 0 and all(run_id in shown.stdout for run_id in run_ids)

    def drop_everything() -> None:
        with History.open(postgres) as history, history.engine.begin() as connection:
            metadata.drop_all(connection)
        with History.open(postgres) as history, history.engine.connect() as connection:
            assert connection.execute(version_table.select()).scalar() == 1  # migrated afresh

    rebuilt_identically(out, postgres, run_ids, drop_everything)


def _open_at_once(where: str, start: Any, said: Any) -> None:
    """Open the history at ``where`` when every process is ready; say ``ok``, or what went wrong."""
    start.wait()
    try:
        History.open(where).close()
    except Exception as exc:  # the test shows each failure
        said.put(f"{type(exc).__name__}: {exc}")
    else:
        said.put("ok")


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_runs_that_start_at_once_migrate_a_new_history_once(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    """Shards or pytest workers that start together on a new database: one makes the tables, the
    others wait for it and find them made (two made the same table, one failed, before)."""
    where = str(tmp_path / "h.sqlite") if backend == "sqlite" else request.getfixturevalue("postgres")
    context = multiprocessing.get_context("fork")
    start, said = context.Barrier(6), context.Queue()
    processes = [context.Process(target=_open_at_once, args=(where, start, said)) for _ in range(6)]
    for process in processes:
        process.start()
    assert [said.get(timeout=60) for _ in processes] == ["ok"] * 6
    for process in processes:
        process.join(timeout=60)
    with History.open(where) as history, history.engine.connect() as connection:
        assert connection.execute(version_table.select()).scalars().all() == [SCHEMA_VERSION]


def test_rows_that_cannot_be_made_cost_the_page_its_trends_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, db = tmp_path / "reports", str(tmp_path / "h.sqlite")
    assert invoke("run", *RUN, "--out", out, "--history", db).exit_code == 0  # one run in the history

    def broken(*_: object) -> None:
        raise ValueError("a manifest the history cannot read")

    monkeypatch.setattr("harness.history.facts.manifest_facts", broken)
    done = invoke("run", *RUN, "--out", out, "--history", db)
    assert done.exit_code == 0, done.stderr  # the run's own exit code: its reports are all written
    assert "warning: history not written to" in done.stderr
    assert 'id="trends"' not in (out / "report.html").read_text(encoding="utf-8")
