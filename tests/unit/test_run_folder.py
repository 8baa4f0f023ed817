"""Run folders (``<out>/runs/<id>/``) and the results sink: one run holds a folder at a time, run
ids never collide, a killed run's file is mended for its resume, and a full disk stops the run
with a clear error, keeping every line written before."""

from __future__ import annotations

import datetime as dates
import errno
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from harness import results
from harness.errors import ConfigError, DiskFullError
from harness.results import RecordLog, RunFolder
from harness.results.store import Store, store_path, stored_line
from harness.runner.sink import Results
from tests.unit.test_records import record
from tests.unit.test_results_input import whole

MANIFEST = {"mode": "replay", "targets": ["sim-openai"]}


def test_a_run_folder_is_held_by_one_run_at_a_time(tmp_path: Path) -> None:
    """Two ``--resume`` of one killed run both went on with it (236 lines for 180 runs)."""
    first = RunFolder.create(tmp_path, MANIFEST)  # a fresh run holds its folder too
    holder = rf"run {first.run_id} is in use by another harness \(pid {os.getpid()} on "
    with pytest.raises(ConfigError, match=holder):
        RunFolder.resume(tmp_path)
    first.finish("interrupted", [], tmp_path)  # the run ends: the folder is let go
    resumed = RunFolder.resume(tmp_path)
    assert resumed.run_id == first.run_id and resumed.manifest["status"] == "interrupted"
    for run_id in (None, first.run_id):  # the newest unfinished run, or the one named
        with pytest.raises(ConfigError, match="in use by another harness"):
            RunFolder.resume(tmp_path, run_id)
    assert (resumed.path / "run.lock").read_text().startswith(f"pid {os.getpid()} on ")
    resumed.release()
    RunFolder.resume(tmp_path).release()


def test_runs_started_in_the_same_second_by_one_pid_get_their_own_folders(tmp_path: Path) -> None:
    """Run ids were the UTC second and the pid: two runs in two containers (PID namespaces) in
    one second collided (FileExistsError), as do two runs of one process in one second."""
    folders = [RunFolder.create(tmp_path, MANIFEST) for _ in range(20)]
    assert len({folder.path for folder in folders}) == 20
    for folder in folders:
        folder.release()


def test_a_run_id_already_taken_is_drawn_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Frozen(dates.datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Frozen:
            return cls(2026, 1, 2, 3, 4, 5, tzinfo=tz)

    drawn = iter(["0badcafe", "0badcafe", "0badcafe", "5eed5eed"])
    monkeypatch.setattr(dates, "datetime", Frozen)
    monkeypatch.setattr(results, "_token", lambda: next(drawn))
    first, second = RunFolder.create(tmp_path, MANIFEST), RunFolder.create(tmp_path, MANIFEST)
    assert [first.run_id, second.run_id] == ["20260102T030405Z-0badcafe", "20260102T030405Z-5eed5eed"]
    assert second.manifest["run_id"] == second.run_id


def complete(folder: RunFolder, out: Path) -> None:
    """End a run that wrote nothing, as complete."""
    folder.results.touch()
    folder.finish("complete", [], out)


def test_pruning_leaves_a_folder_another_run_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(results, "KEEP_RUNS", 1)
    old = RunFolder.create(tmp_path, MANIFEST)
    complete(old, tmp_path)
    held = RunFolder.resume(tmp_path, old.run_id)  # resumed by its id while a newer run ends
    complete(RunFolder.create(tmp_path, MANIFEST), tmp_path)
    assert held.path.is_dir()
    complete(held, tmp_path)
    complete(RunFolder.create(tmp_path, MANIFEST), tmp_path)
    assert not held.path.exists()


def test_a_finished_run_keeps_the_newest_folders_it_is_told_to(tmp_path: Path) -> None:
    """``keep`` run folders (this one among them), the default five, or every one for 0."""

    def folders() -> int:
        return sum(1 for _ in (tmp_path / "runs").iterdir())

    for _ in range(7):
        folder = RunFolder.create(tmp_path, MANIFEST)
        folder.results.touch()
        folder.finish("complete", [], tmp_path, keep=0)
    assert folders() == 7
    for keep, left in ((None, results.KEEP_RUNS), (2, 2)):
        folder = RunFolder.create(tmp_path, MANIFEST)
        folder.results.touch()
        folder.finish("complete", [], tmp_path, keep=keep)
        assert folders() == left and folder.path.is_dir()


@pytest.mark.parametrize(
    ("tail", "kept"),
    [(b"", 2), (whole(2)[:300], 2), (whole(2)[:-1], 3)],
    ids=["two lines", "a third cut short", "a third without its line end"],
)
def test_a_resumed_run_appends_after_the_last_whole_line(tmp_path: Path, tail: bytes, kept: int) -> None:
    path = tmp_path / "results.jsonl"
    path.write_bytes(whole(0) + whole(1) + tail)
    with Results(path, True, None) as results:
        results.keep(record(repeat=9))
    log = RecordLog.open(path)
    assert [key[2] for key in log.run_keys()] == [*range(kept), 9]
    lines = path.read_bytes().splitlines(keepends=True)
    assert b"".join(lines[:kept]) == b"".join(whole(k) for k in range(kept))
    with Store(store_path(path)) as store:  # the new line refers to the values it shares
        assert store.resolve(lines[kept], "") == whole(9)
    assert [r.repeat for r in results.records()] == [9] and results.records()[0] == record(repeat=9)


def stored(repeat: int) -> bytes:
    """The results line of ``record(repeat=repeat)`` as the sink writes it (its shared values in
    the store beside it)."""
    return stored_line(record(repeat=repeat))[0] + b"\n"


class FillingFile:
    """The sink's file, on a disk with ``room`` bytes left: a write past it writes what fits, then
    fails with ENOSPC, as a full disk does."""

    def __init__(self, results: Results, room: int, fail_on_close: bool = False) -> None:
        assert results.out is not None and results.path is not None
        results.out.close()
        self.file = results.path.open("ab")
        self.room = room
        self.fail_on_close = fail_on_close

    def write(self, data: bytes) -> int:
        fits = data[: max(0, self.room)]
        self.file.write(fits)
        self.file.flush()
        self.room -= len(data)
        if len(fits) < len(data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return len(data)

    def flush(self) -> None:
        self.file.flush()

    def close(self) -> None:
        self.file.close()
        if self.fail_on_close:  # a replay's buffered lines meet the full disk when it closes
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_stops_the_run_with_a_clear_error_keeping_what_was_written(tmp_path: Path) -> None:
    """A full disk was a traceback and exit code 1 (a failed gate)."""
    path = tmp_path / "results.jsonl"
    stop = threading.Event()
    two = len(stored(0) + stored(1))
    with pytest.raises(DiskFullError) as caught, Results(path, False, None, stop=stop) as results:
        results.out = FillingFile(results, room=two + 100)  # type: ignore[assignment]
        results.keep(record(repeat=0))
        results.keep(record(repeat=1))
        assert not stop.is_set()
        try:
            results.keep(record(repeat=2))
        finally:
            assert stop.is_set()  # no new run starts
            with pytest.raises(DiskFullError):  # nothing more is written after the failed line
                results.keep(record(repeat=3))
    error = caught.value
    assert str(error) == f"no space left on device writing {path}: the lines written before it are kept"
    assert error.exit_code == 8 and error.errno == errno.ENOSPC and isinstance(error, OSError)
    assert path.read_bytes() == stored(0) + stored(1) + stored(2)[:100]
    with Results(path, True, None) as resumed:  # room again: the run resumes after line 2
        resumed.keep(record(repeat=2))
    assert path.read_bytes() == stored(0) + stored(1) + stored(2)
    assert [r.repeat for r in RecordLog.open(path)] == [0, 1, 2]


def test_a_full_disk_when_the_last_lines_are_written_is_the_same_error(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    with (
        pytest.raises(DiskFullError, match="no space left on device writing"),
        Results(path, False, None, replay=True) as results,
    ):
        results.out = FillingFile(results, room=1 << 20, fail_on_close=True)  # type: ignore[assignment]
        results.keep(record())
    assert path.read_bytes() == stored(0)


def test_a_manifest_the_disk_has_no_room_for_stays_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = RunFolder.create(tmp_path, MANIFEST)
    before = (folder.path / "run.json").read_bytes()

    def full(self: Path, data: bytes) -> int:
        Path.write_text(self, "half a manifest")  # what fitted
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Path, "write_bytes", full)
    with pytest.raises(DiskFullError, match=r"no space left on device writing .*run.json"):
        folder.finish("complete", [], tmp_path)
    monkeypatch.undo()
    assert (folder.path / "run.json").read_bytes() == before
    assert sorted(p.name for p in folder.path.iterdir()) == ["run.json", "run.lock"]


def test_a_report_s_files_are_published_beside_it_in_place_of_the_last_run_s(tmp_path: Path) -> None:
    """report.html loads its runs from report-files/ beside it: a finished run publishes the
    folder with the page, whole, and nothing of an earlier run's folder stays."""
    out = tmp_path / "out"
    for number, names in enumerate([("runs-0.js", "detail-0.js", "detail-1.js"), ("runs-0.js",)]):
        folder = RunFolder.create(out, MANIFEST)
        folder.results.touch()
        page = folder.path / "report.html"
        page.write_text(f"page {number}")
        (folder.path / "report-files").mkdir()
        for name in names:
            (folder.path / "report-files" / name).write_text(f"{name} of run {number}")
        assert folder.finish("complete", [page], out) == [out / "results.jsonl", out / "report.html"]
    assert (out / "report.html").read_text() == "page 1"
    assert [p.name for p in (out / "report-files").iterdir()] == ["runs-0.js"]
    assert (out / "report-files" / "runs-0.js").read_text() == "runs-0.js of run 1"
    assert sorted(p.name for p in out.iterdir()) == ["report-files", "report.html", "results.jsonl", "runs"]


def test_a_finished_run_is_published_by_links_and_a_resume_writes_its_own_copy(tmp_path: Path) -> None:
    """The run folder was copied to ``<out>/`` (133 MB for the default suite); it is linked now,
    and a complete run resumed by its id must not write through the links into ``<out>/``."""
    folder = RunFolder.create(tmp_path, MANIFEST)
    folder.results.write_bytes(whole(0))
    report = folder.path / "report.json"
    report.write_text("{}")
    assert folder.finish("complete", [report], tmp_path) == [
        tmp_path / "results.jsonl",
        tmp_path / "report.json",
    ]
    assert os.path.samefile(folder.results, tmp_path / "results.jsonl")
    resumed = RunFolder.resume(tmp_path, folder.run_id)
    assert not os.path.samefile(resumed.results, tmp_path / "results.jsonl")
    with resumed.results.open("ab") as out:
        out.write(whole(1))
    assert (tmp_path / "results.jsonl").read_bytes() == whole(0)
    resumed.release()
