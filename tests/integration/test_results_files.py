"""The commands over results files and run folders, given what breaks them: two resumes of one
killed run at once, a last line cut short, files that are not results files (a gigabyte of
zeros, ``/dev/zero``, a FIFO) under a memory limit, and a disk that fills during a run."""

from __future__ import annotations

import errno
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from harness.api import load_scenarios
from harness.cli import main
from harness.results import RunFolder
from tests.helpers.cli import REPO, harness

SUITE = ["--scenarios", str(REPO / "scenarios"), "--cassettes", str(REPO / "cassettes")]
RUN = ["-t", "sim-openai", "-s", "weather.*", *SUITE]  # four replayed runs
MEMORY = 512 << 20
"""The address space a command gets here: a normal report needs under 400 MiB; reading a 1 GB
line needed 2.1 GB, /dev/zero ran to 5.7 GB."""


def invoke(*args: str | Path) -> Result:
    """``harness ARGS`` in this process (its stdout and stderr apart)."""
    return CliRunner().invoke(main, [str(a) for a in args])


def killed_run(out: Path, left: int, *run: str) -> Path:
    """The folder of a replayed run killed after ``left`` runs, its manifest running."""
    assert invoke("run", *run, "--out", out).exit_code == 0
    (folder,) = (out / "runs").iterdir()
    lines = (folder / "results.jsonl").read_bytes().splitlines(keepends=True)
    (folder / "results.jsonl").write_bytes(b"".join(lines[:left]))
    manifest = json.loads((folder / "run.json").read_text())
    (folder / "run.json").write_text(json.dumps({**manifest, "status": "running"}))
    return folder


def test_two_resumes_of_one_killed_run_at_once_run_it_once(tmp_path: Path) -> None:
    """Both went on with it: 236 lines for 180 runs (the suite then). Now one runs it, the other is
    refused."""
    folder = killed_run(tmp_path / "o", 2, "-t", "sim-openai", "-t", "sim-anthropic", *SUITE)
    command = [sys.executable, "-m", "harness", "run", "--resume", "--out", str(tmp_path / "o")]
    both = [subprocess.Popen(command, cwd=REPO, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    ended = [(p.wait(timeout=300), p.stderr.read() if p.stderr else "") for p in both]
    codes = sorted(code for code, _ in ended)
    assert codes == [0, 2], ended
    (refused,) = [err for code, err in ended if code == 2]  # while the other ran, or after it
    held = ("is in use by another harness (pid ", "is in use by another harness (a process that is starting)")
    assert any(m in refused for m in held) or "no an unfinished run" in refused, refused
    lines = (folder / "results.jsonl").read_text().splitlines()
    keys = [(r["target"]["name"], r["scenario"], r["repeat"]) for r in map(json.loads, lines)]
    assert len(keys) == len(set(keys)) == 2 * len(load_scenarios(REPO / "scenarios"))


def test_a_resume_is_refused_at_once_while_a_live_run_holds_its_folder(tmp_path: Path) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(
        '[targets.stuck]\nformat = "openai-chat"\nmodel = "sim-conformant"\nbase_url = "sim~slow"\n'
        "timeout_s = 120.0\n"
    )
    args = ["run", "--live", "-t", "stuck", "-s", "weather.single.paris", "--out", tmp_path / "o"]
    holder = subprocess.Popen(
        [sys.executable, "-m", "harness", *map(str, args), "--config", str(config)],
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stderr is not None
        assert holder.stderr.readline().startswith("live: 1 target(s)")  # its folder is made, and held
        second = harness("run", "--resume", "--out", tmp_path / "o", "--config", config, timeout=60)
        assert second.returncode == 2, second.stderr
        assert f"is in use by another harness (pid {holder.pid} on " in second.stderr
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=60)
    RunFolder.resume(tmp_path / "o").release()  # a killed holder lets the folder go at once


def test_the_readers_say_when_they_leave_out_a_last_line_cut_short(tmp_path: Path) -> None:
    """report, merge, compare and baseline read 3 of 4 runs, exit 0, and said nothing."""
    assert invoke("run", *RUN, "--out", tmp_path / "o").exit_code == 0
    whole = (tmp_path / "o" / "results.jsonl").read_bytes()
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(whole[:-200])
    shared = (tmp_path / "o" / "results.shared.jsonl.gz").read_bytes()
    (tmp_path / "cut.shared.jsonl.gz").write_bytes(shared)  # what the lines refer to, beside them
    for args in (
        ["report", cut, "--out", tmp_path / "r"],
        ["merge", cut, "--out", tmp_path / "m"],
        ["compare", cut, tmp_path / "o"],
        ["baseline", cut, "--out", tmp_path / "b.json"],
    ):
        result = invoke(*args)
        assert result.exit_code == 0, result.stderr
        assert f"warning: {cut}:4: the last line is cut short (" in result.stderr
        assert "1 line left out, 3 run(s) read" in result.stderr
        assert result.stderr.rstrip().endswith("warning: 1 results line(s) cut short were left out (above)")


def limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


@pytest.mark.parametrize("given", ["a gigabyte of zeros", "/dev/zero", "a FIFO"])
def test_what_is_no_results_file_is_refused_quickly_in_bounded_memory(tmp_path: Path, given: str) -> None:
    path = {"/dev/zero": Path("/dev/zero")}.get(given, tmp_path / "results.jsonl")
    if given == "a FIFO":
        os.mkfifo(path)
    if given == "a gigabyte of zeros":
        with path.open("wb") as out:
            out.truncate(1 << 30)  # sparse: a gigabyte to read, nothing written
    expected = {
        "a gigabyte of zeros": f"{path}:1: a NUL byte at column 1: not a results file",
        "/dev/zero": f"{path}: a device, not a regular file",
        "a FIFO": f"{path}: a FIFO, not a regular file",
    }[given]
    for command in (["report", path, "--out", tmp_path / "r"], ["compare", path, path]):
        done = subprocess.run(
            [sys.executable, "-m", "harness", *map(str, command)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=limited,
        )
        assert done.returncode == 2, done.stderr
        assert expected in done.stderr and "Traceback" not in done.stderr


class FullDisk:
    """A results file on a disk that fills on the third line: half of it is written."""

    def __init__(self, real: Any) -> None:
        self.real, self.lines = real, 0

    def write(self, data: bytes) -> int:
        for line in data.splitlines(keepends=True):  # lines are written a few at a time
            self.lines += 1
            if self.lines == 3:
                self.real.write(line[: len(line) // 2])
                self.real.flush()
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            self.real.write(line)
        return len(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def test_a_full_disk_is_its_own_exit_code_and_the_run_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk was a traceback and exit code 1, which reads as a failed gate."""
    opened = Path.open

    def open_(path: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        file = opened(path, mode, *args, **kwargs)
        return FullDisk(file) if path.name == "results.jsonl" and mode == "wb" else file

    monkeypatch.setattr(Path, "open", open_)
    full = invoke("run", *RUN, "--out", tmp_path / "o")
    monkeypatch.undo()
    assert full.exit_code == 8, full.output
    (folder,) = (tmp_path / "o" / "runs").iterdir()
    assert (
        f"error: no space left on device writing {folder / 'results.jsonl'}: the lines written before it "
        "are kept; once there is room, `harness run --resume` (same --out) continues the run"
    ) in " ".join(full.stderr.split())
    assert "Traceback" not in full.output
    assert json.loads((folder / "run.json").read_text())["status"] == "running"
    assert len((folder / "results.jsonl").read_bytes().splitlines()) == 3  # two lines and half of one

    resumed = invoke("run", "--resume", "--out", tmp_path / "o")
    assert resumed.exit_code == 0, resumed.output
    assert "2 done, 2 to go" in resumed.stderr and ":3: cut short when the run stopped" in resumed.stderr
    assert len((tmp_path / "o" / "results.jsonl").read_text().splitlines()) == 4


def test_reports_rebuilt_from_the_results_are_the_ones_the_run_wrote(tmp_path: Path) -> None:
    """Results lines refer to the values runs share, kept once in the store beside them; the run
    folder is published by links, not copies; ``harness report`` on the published results alone
    rebuilds every report byte for byte (but the time it was generated)."""
    out, rebuilt = tmp_path / "reports", tmp_path / "rebuilt"
    assert invoke("run", "-t", "sim-*", "-s", "weather.*", *SUITE, "--out", out).exit_code in (0, 1)
    (folder,) = (out / "runs").iterdir()
    published = sorted(p.name for p in out.iterdir() if p.is_file())
    assert "results.shared.jsonl.gz" in published
    for name in published:  # the same file, no byte copied
        assert os.path.samefile(out / name, folder / name)
    assert invoke("report", out / "results.jsonl", "--out", rebuilt).exit_code == 0
    when = json.loads((out / "report.json").read_text())["generated_at"].encode()
    again = json.loads((rebuilt / "report.json").read_text())["generated_at"].encode()
    for name in ("report.json", "report.md", "report.html", "junit.xml"):
        assert (rebuilt / name).read_bytes().replace(again, when) == (out / name).read_bytes(), name


def test_a_command_collects_cycles_less_often_and_leaves_the_collector_as_it_found_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While ``harness run`` builds its report the collector runs at the command's thresholds;
    the command invoked in this process gives the host's back, whatever they were."""
    import gc

    from harness.cli import GC_THRESHOLD
    from harness.cli import run as run_command

    seen: list[tuple[int, ...]] = []
    build = run_command.build_report
    monkeypatch.setattr(run_command, "build_report", lambda *a: seen.append(gc.get_threshold()) or build(*a))
    before = gc.get_threshold()
    try:
        gc.set_threshold(1234, 5, 6)
        assert invoke("run", *RUN, "--out", tmp_path / "o").exit_code == 0
        assert gc.get_threshold() == (1234, 5, 6)
    finally:
        gc.set_threshold(*before)
    assert seen == [GC_THRESHOLD]
