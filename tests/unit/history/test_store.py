"""The history database on SQLite: a run's rows from real replayed records, written, replaced,
read back over time (the run where a check first failed), migrated, and never an error when it
cannot be written."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import sqlalchemy as sa

from harness.errors import ConfigError, HistoryWarning
from harness.history import remember, where
from harness.history.facts import RunFacts, facts_of, summarise
from harness.history.store import SCHEMA_VERSION, History, shown, url_of, version_table
from harness.history.views import runs_lines, target_lines, target_view
from tests.helpers.result_sets import BROKEN, cassettes, replay


@pytest.fixture(scope="module")
def summaries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The summaries of two real replays of sim-mistral and sim-openai (3 scenarios each): as
    recorded, and with sim-openai's answer to weather.single.paris made useless."""
    root = tmp_path_factory.mktemp("sets")
    good = replay(cassettes(root / "good"), root / "good.jsonl")
    broken = replay(cassettes(root / "broken", broken=[("sim-openai", BROKEN)]), root / "broken.jsonl")
    return {"good": summarise(good), "broken": summarise(broken)}


def facts(summary: object, run_id: str, started: str) -> RunFacts:
    return facts_of(summary, run_id=run_id, started=started, mode="replay", harness_version="0.1.0")  # type: ignore[arg-type]


def three_runs(db: History, summaries: dict[str, object]) -> None:
    """Good, then broken, then good again."""
    for index, name in enumerate(("good", "broken", "good"), 1):
        db.add(facts(summaries[name], f"run-{index}", f"2026-11-2{index}T10:00:00Z"))


def test_a_target_over_time_names_the_run_where_a_check_first_failed(
    tmp_path: Path, summaries: dict[str, object]
) -> None:
    with History.open(tmp_path / "h.sqlite") as db:
        three_runs(db, summaries)
        assert [r["run_id"] for r in db.runs()] == ["run-1", "run-2", "run-3"]
        view = target_view(db, "sim-openai")
        steady = target_view(db, "sim-mistral")
    assert [r["score"] for r in view["runs"]] == [100, pytest.approx(100 * 2 / 3, abs=0.01), 100]
    assert view["runs"][1]["checks"]["expect.final"]["fails"] == 1
    final = view["checks"]["expect.final"]
    assert final == {
        "first_failed": {"run_id": "run-2", "started": "2026-11-22T10:00:00Z"},
        "failing_now": False,
    }
    assert all(c["first_failed"] is None for c in steady["checks"].values())
    text = "\n".join(target_lines(view))
    assert "expect.final: first failed in run run-2 (2026-11-22T10:00:00Z); passes in the latest run" in text
    assert "expect.final(1)" in text
    assert "no check failed in these runs" in "\n".join(target_lines(steady))


def test_a_run_s_rows_are_made_as_they_are_read_and_compare_as_rows(summaries: dict[str, object]) -> None:
    """The scenario and check rows are made from the summary each time they are read (one a run
    when a suite has one repeat: never all held); they compare, print and pickle as rows."""
    import pickle

    first, again = (
        facts(summaries["good"], "run-1", "2026-11-21T10:00:00Z"),
        facts(summaries["good"], "run-1", "2026-11-21T10:00:00Z"),
    )
    rows = list(first.scenarios)
    assert len(rows) == 6 and rows == list(first.scenarios)  # made again, the same
    assert {r["scenario"] for r in rows} >= {"weather.single.paris"} and all(
        r["run_id"] == "run-1" for r in rows
    )
    assert first == again == pickle.loads(pickle.dumps(first))
    assert first.scenarios == rows and "weather.single.paris" in repr(first.scenarios)
    assert first != facts(summaries["broken"], "run-1", "2026-11-21T10:00:00Z")


def test_a_run_written_twice_is_there_once_as_written_last(
    tmp_path: Path, summaries: dict[str, object]
) -> None:
    with History.open(tmp_path / "h.sqlite") as db:
        db.add(facts(summaries["good"], "run-1", "2026-11-21T10:00:00Z"))
        db.add(facts(summaries["broken"], "run-1", "2026-11-21T10:00:00Z"))
        dump = db.dump()
    with History.open(tmp_path / "other.sqlite") as db:
        db.add(facts(summaries["broken"], "run-1", "2026-11-21T10:00:00Z"))
        assert db.dump() == dump
    assert len(dump["runs"]) == 1 and len(dump["run_targets"]) == 2
    assert len(dump["run_scenarios"]) == 6  # 2 targets x 3 scenarios


def test_an_unknown_target_lists_the_known_ones(tmp_path: Path, summaries: dict[str, object]) -> None:
    with History.open(tmp_path / "h.sqlite") as db:
        three_runs(db, summaries)
        with pytest.raises(ConfigError, match="targets in the history: sim-mistral, sim-openai"):
            target_view(db, "sim-nothing")
        assert runs_lines(db.runs())[1].startswith("2026-11-21T10:00:00Z  run-1")


def test_the_schema_is_migrated_once_and_a_newer_one_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    History.open(path).close()
    History.open(path).close()  # opened again: nothing to do
    engine = sa.create_engine(url_of(path))
    with engine.begin() as connection:
        assert connection.execute(sa.select(version_table.c.version)).scalars().all() == [SCHEMA_VERSION]
        connection.execute(version_table.update().values(version=SCHEMA_VERSION + 1))
    engine.dispose()
    with pytest.raises(ConfigError, match=f"schema version {SCHEMA_VERSION + 1}, this harness knows up to"):
        History.open(path)


def test_reading_a_history_never_written_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no history at"):
        History.open(tmp_path / "none.sqlite", create=False)
    assert not (tmp_path / "none.sqlite").exists()


def test_a_history_that_cannot_be_written_warns_and_raises_nothing(
    tmp_path: Path, summaries: dict[str, object]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        message = remember(
            facts(summaries["good"], "run-1", "2026-11-21T10:00:00Z"), str(blocker / "h.sqlite")
        )
    assert message is not None and "history not written" in message and "run-1" in message
    assert [w.category for w in caught] == [HistoryWarning]


def test_urls_paths_and_passwords() -> None:
    assert url_of("postgresql://u:secret@db.example/h").drivername == "postgresql+psycopg"
    assert url_of("reports/h.sqlite").database == str(Path("reports/h.sqlite").resolve())
    assert "secret" not in shown("postgresql://u:secret@db.example/h")
    with pytest.raises(ConfigError, match="only SQLite"):
        url_of("mysql://u@db.example/h")


def test_where_the_history_goes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARNESS_HISTORY", raising=False)
    assert where() == "reports/history.sqlite"
    assert where(default="out/history.sqlite") == "out/history.sqlite"
    monkeypatch.setenv("HARNESS_HISTORY", "team.sqlite")
    assert where() == "team.sqlite" and where("mine.sqlite") == "mine.sqlite"
    monkeypatch.setenv("HARNESS_HISTORY", "off")
    assert where() is None and where("mine.sqlite") == "mine.sqlite" and where("off") is None


def test_harness_toml_names_the_history(tmp_path: Path) -> None:
    from harness.targets_file import ConfigFileError, read_config

    source = str(tmp_path / "harness.toml")
    assert read_config(source, '[history]\nurl = "runs.sqlite"\n').history == str(tmp_path / "runs.sqlite")
    url = "postgresql://ci@db.internal/harness"
    assert read_config(source, f'[history]\nurl = "{url}"\n').history == url
    assert read_config(source, "").history is None
    with pytest.raises(
        ConfigFileError, match=r"harness.toml:2: \[history.path\]: unknown key; known: keep_runs, url"
    ):
        read_config(source, '[history]\npath = "runs.sqlite"\n')


def test_import_takes_a_pattern_or_the_runs_folder_and_refuses_what_is_no_run(tmp_path: Path) -> None:
    from harness.history import expand, import_folders

    runs = tmp_path / "runs"
    for name in ("20261126T100000Z-aa", "20261126T110000Z-bb"):
        (runs / name).mkdir(parents=True)
        (runs / name / "run.json").write_text('{"started": "20261126T100000Z", "status": "running"}')
    both = sorted(runs.iterdir())
    assert sorted(expand([str(runs / "*")])) == both == sorted(expand([runs]))
    imported, skipped = import_folders([runs], str(tmp_path / "h.sqlite"))
    assert imported == [] and len(skipped) == 2 and "did not finish (running)" in skipped[0]
    with pytest.raises(ConfigError, match="not a run folder"):
        import_folders([tmp_path / "nothing-*"], str(tmp_path / "h.sqlite"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=r"empty: not a run folder \(no run.json\)"):
        import_folders([tmp_path / "empty"], str(tmp_path / "h.sqlite"))


def test_rows_that_cannot_be_computed_warn_too(tmp_path: Path) -> None:
    def unreadable() -> RunFacts:
        raise ConfigError("results.jsonl:3: not a JSON line")

    with pytest.warns(HistoryWarning, match="ConfigError: results.jsonl:3: not a JSON line"):
        assert remember(unreadable, str(tmp_path / "h.sqlite")) is not None
