"""The commands over results files, given what breaks them: a last line cut short, files that
are not results files (a gigabyte of zeros, ``/dev/zero``, a FIFO) under a memory limit."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from harness.cli import main
from tests.helpers.cli import REPO

SUITE = ["--scenarios", str(REPO / "scenarios"), "--cassettes", str(REPO / "cassettes")]
RUN = ["-t", "sim-openai", "-s", "weather.*", *SUITE]  # four replayed runs
MEMORY = 512 << 20
"""The address space a command gets here: a normal report needs under 400 MiB; reading a 1 GB
line needed 2.1 GB, /dev/zero ran to 5.7 GB."""


def invoke(*args: str | Path) -> Result:
    """``harness ARGS`` in this process (its stdout and stderr apart)."""
    return CliRunner().invoke(main, [str(a) for a in args])


def test_the_readers_say_when_they_leave_out_a_last_line_cut_short(tmp_path: Path) -> None:
    """report, merge, compare and baseline read 3 of 4 runs, exit 0, and said nothing."""
    assert invoke("run", *RUN, "--out", tmp_path / "o").exit_code == 0
    whole = (tmp_path / "o" / "results.jsonl").read_bytes()
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(whole[:-200])
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
