"""Results files that are not what they should be, given to every reader of results (the
``RecordLog`` that report, merge and capabilities read, ``read``, and ``compare.load`` that
compare and baseline read): each is a clear error naming the file and line, found in bounded
memory and time; a last line cut short is left out with a warning."""

from __future__ import annotations

import os
import signal
import time
import tracemalloc
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from harness import results
from harness.analysis import compare
from harness.errors import ConfigError, CutLineWarning
from harness.records import record_line
from harness.results import RecordLog, merge_results, read
from tests.unit.test_records import record

Reader = Callable[[Path], Any]


def merged(path: Path) -> Any:
    """What ``harness merge`` reads of a shard: its keys and its lines, copied."""
    return merge_results([path], path.with_name("merged.jsonl"))


READERS: dict[str, Reader] = {
    "RecordLog": lambda path: list(RecordLog.open(path)),
    "read": lambda path: list(read(path)),
    "compare.load": compare.load,
    "merge": merged,
}


@pytest.fixture(params=list(READERS))
def reader(request: pytest.FixtureRequest) -> Reader:
    """Each reader of results files."""
    return READERS[request.param]


def whole(repeat: int = 0, **changes: object) -> bytes:
    """A valid results line, with its line end."""
    return record_line(record(repeat=repeat, **changes)) + b"\n"


@pytest.fixture
def no_hang() -> Iterator[None]:
    """Fail, rather than hang, when a read blocks for more than five seconds."""

    def hung(signum: int, frame: Any) -> None:
        raise TimeoutError("the reader blocked")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(5)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def refused(reader: Reader, path: Path) -> tuple[str, float, int]:
    """The error ``reader`` gives for ``path``, the seconds and the peak bytes it took to give it."""
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(ConfigError) as caught:
            reader(path)
        return str(caught.value), time.monotonic() - started, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_gigabyte_of_nul_bytes_is_refused_at_once_in_little_memory(tmp_path: Path, reader: Reader) -> None:
    """A file of zeros (what a crash can leave) was read as an empty results file, holding the
    whole 1 GB "line" in memory (2.1 GB). A sparse file: a gigabyte is read, none is written."""
    path = tmp_path / "results.jsonl"
    with path.open("wb") as out:
        out.write(whole())
        out.truncate(1 << 30)
    message, seconds, peak = refused(reader, path)
    assert f"{path}:2: a NUL byte at column 1: not a results file" in message
    assert seconds < 1.0 and peak < 8 << 20, (seconds, peak)


@pytest.fixture(scope="module")
def long_line(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results file whose second line is 12 MiB without a line end: /dev/zero without the zeros."""
    path = tmp_path_factory.mktemp("long") / "results.jsonl"
    path.write_bytes(whole() + b"[" * (12 << 20))
    return path


def test_a_line_past_the_longest_is_refused_without_reading_the_rest(
    long_line: Path, reader: Reader, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(results, "MAX_LINE_BYTES", 2 << 20)  # as 256 MiB, but smaller
    message, _, peak = refused(reader, long_line)
    assert f"{long_line}:2: a line longer than 2 MiB: not a results line" in message
    assert peak < 6 << 20, peak


@pytest.mark.parametrize("kind", ["a FIFO", "a device"])
def test_what_is_not_a_regular_file_is_refused_without_reading(
    tmp_path: Path, reader: Reader, kind: str, no_hang: None
) -> None:
    """``/dev/zero`` ran report out of memory (5.7 GB); a FIFO with no writer blocked forever."""
    path = Path("/dev/zero") if kind == "a device" else tmp_path / "results.jsonl"
    if kind == "a FIFO":
        os.mkfifo(path)
    message, _, _ = refused(reader, path)
    assert f"{path}: {kind}, not a regular file" in message


def test_a_byte_that_is_not_utf8_names_its_line_and_column(tmp_path: Path, reader: Reader) -> None:
    """A Latin-1 byte was a UnicodeDecodeError traceback."""
    path = tmp_path / "results.jsonl"
    latin = whole(1).replace(b'"category":"single"', b'"category":"singl\xe9"')
    column = latin.index(b"\xe9") + 1
    path.write_bytes(whole() + latin)
    message, _, _ = refused(reader, path)
    assert f"{path}:2: byte 0xe9 at column {column} is not UTF-8" in message


def test_json_nested_past_the_recursion_limit_names_its_line(tmp_path: Path, reader: Reader) -> None:
    """JSON nested 100,000 deep (in a field the reader skips, or one it reads) was a RecursionError."""
    path = tmp_path / "results.jsonl"
    deep = b"[" * 100_000 + b"]" * 100_000
    for where in (b'{"skipped":' + deep + b",", b'{"mode":' + deep + b","):
        path.write_bytes(whole() + where + whole(1)[1:])
        message, _, _ = refused(reader, path)
        assert f"{path}:2: JSON nested too deep to read" in message


def test_a_last_line_cut_short_is_left_out_with_a_warning_naming_it(tmp_path: Path) -> None:
    """A killed run's last line was left out without a word: the readers say so (``read``, which
    reads every line it is given, refuses it)."""
    path = tmp_path / "results.jsonl"
    path.write_bytes(whole(0) + whole(1) + whole(2)[:300])
    for read_ in (RecordLog.open, compare.load, merged):
        with pytest.warns(CutLineWarning) as caught:
            read_(path)
        (warning,) = caught
        assert f"{path}:3: the last line is cut short (300 bytes without a line end" in str(warning.message)
        assert "1 line left out, 2 run(s) read" in str(warning.message)
    with pytest.raises(ConfigError, match=r"results.jsonl:3: not a JSON line"):
        list(read(path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log = RecordLog.open(path, warn=False)  # a resumed run: it runs the line's run again
    assert (len(log), log.cut, log.end, log.end_line) == (2, 3, len(whole(0) + whole(1)), 2)


def test_a_whole_last_line_without_its_line_end_is_read(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_bytes(whole(0) + whole(1)[:-1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log = RecordLog.open(path)
    assert (len(log), log.cut, log.end, log.end_line) == (2, None, path.stat().st_size, 2)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b'{"schema": "harness.baseline/1", "entries": [\n{"target": "x\xe9"}\n]}\n', ":2: not a baseline"),
        (b'{"schema": "harness.baseline/1", "entries": ' + b"[" * 100_000, "nested too deep to read"),
    ],
)
def test_a_bad_baseline_file_is_a_clear_error(tmp_path: Path, text: bytes, message: str) -> None:
    path = tmp_path / "harness-baseline.json"
    path.write_bytes(text)
    with pytest.raises(ConfigError, match=message):
        compare.load(path)
