"""Run folders (``<out>/runs/<id>/``) and the results sink: run ids never collide, and a killed
run's file is mended for its resume."""

from __future__ import annotations

import datetime as dates
from pathlib import Path
from typing import Any

import pytest

from harness import api
from harness.api import RunFolder
from harness.records import RecordLog
from harness.runner import _Results
from tests.unit.test_records import record
from tests.unit.test_results_input import whole

MANIFEST = {"mode": "replay", "targets": ["sim-openai"]}


def test_runs_started_in_the_same_second_by_one_pid_get_their_own_folders(tmp_path: Path) -> None:
    """Run ids were the UTC second and the pid: two runs in two containers (PID namespaces) in
    one second collided (FileExistsError), as do two runs of one process in one second."""
    folders = [RunFolder.create(tmp_path, MANIFEST) for _ in range(20)]
    assert len({folder.path for folder in folders}) == 20


def test_a_run_id_already_taken_is_drawn_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Frozen(dates.datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Frozen:
            return cls(2026, 1, 2, 3, 4, 5, tzinfo=tz)

    drawn = iter(["0badcafe", "0badcafe", "0badcafe", "5eed5eed"])
    monkeypatch.setattr(dates, "datetime", Frozen)
    monkeypatch.setattr(api, "_token", lambda: next(drawn))
    first, second = RunFolder.create(tmp_path, MANIFEST), RunFolder.create(tmp_path, MANIFEST)
    assert [first.run_id, second.run_id] == ["20260102T030405Z-0badcafe", "20260102T030405Z-5eed5eed"]
    assert second.manifest["run_id"] == second.run_id


@pytest.mark.parametrize(
    ("tail", "kept"),
    [(b"", 2), (whole(2)[:300], 2), (whole(2)[:-1], 3)],
    ids=["two lines", "a third cut short", "a third without its line end"],
)
def test_a_resumed_run_appends_after_the_last_whole_line(tmp_path: Path, tail: bytes, kept: int) -> None:
    path = tmp_path / "results.jsonl"
    path.write_bytes(whole(0) + whole(1) + tail)
    with _Results(path, True, None) as results:
        results.keep(record(repeat=9))
    log = RecordLog.open(path)
    assert [key[2] for key in log.run_keys()] == [*range(kept), 9]
    assert path.read_bytes() == b"".join(whole(k) for k in range(kept)) + whole(9)
    assert [r.repeat for r in results.records()] == [9] and results.records()[0] == record(repeat=9)
