"""Recording files are untrusted: a cassette or an MCP recording that is a FIFO, a device, too
large, not YAML, nested or aliased without end, or shaped wrongly is a cassette error (exit 3)
naming the file (and the line and the interaction, where known), read with bounds and never a
crash or a hang."""

from __future__ import annotations

import os
import shutil
import threading
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness import cache
from harness.api import RunResult, load_scenarios, run
from harness.errors import CassetteCorruptError
from harness.records import decode_record, record_line
from harness.runner import RunConfig
from harness.transport.cassette import CassetteTransport
from harness.transport.cassette_files import MAX_RECORDING_BYTES
from tests.helpers.cli import REPO

PARIS = REPO / "cassettes" / "sim-openai" / "weather.single.paris.yaml"
DOTTED = REPO / "cassettes" / "sim-openai" / "mcp.naming.dotted.yaml"
DOTTED_MCP = REPO / "cassettes" / "sim-openai" / "mcp.naming.dotted.mcp.yaml"


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))


def opened(path: Path, within_s: float = 5.0, **how: Any) -> Any:
    """The cassette transport of ``path`` (replay unless ``how`` says otherwise), or the exception
    it raised; a test that blocks fails after ``within_s`` instead of hanging (a FIFO blocked
    forever before)."""
    outcome: list[Any] = []

    def load() -> None:
        try:
            outcome.append(
                CassetteTransport(path, **{"mode": "replay", "target": "t", "scenario_id": "s", **how})
            )
        except Exception as exc:
            outcome.append(exc)

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    thread.join(within_s)
    assert outcome, f"reading {path} did not end within {within_s} s"
    return outcome[0]


def refused(path: Path, what: str, **how: Any) -> CassetteCorruptError:
    error = opened(path, **how)
    assert isinstance(error, CassetteCorruptError), error
    assert str(path) in str(error) and what in str(error) and error.exit_code == 3, error
    return error


@pytest.mark.parametrize(
    "how", [{}, {"mode": "record", "record_mode": "once"}], ids=["replay", "record-once"]
)
def test_a_fifo_as_a_cassette_is_refused_not_waited_on(tmp_path: Path, how: dict[str, str]) -> None:
    path = tmp_path / "c.yaml"
    os.mkfifo(path)
    refused(path, "it is a FIFO, not a regular file", **how)


def test_a_cassette_linked_to_dev_zero_is_refused_before_reading(tmp_path: Path) -> None:
    """Before: 21 GB read in 88 s, the size limit checked only after reading."""
    path = tmp_path / "c.yaml"
    path.symlink_to("/dev/zero")
    started = time.process_time()
    refused(path, "it is a character device, not a regular file")
    assert time.process_time() - started < 1


def test_a_cassette_past_the_limit_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    with path.open("wb") as sparse:  # a gigabyte that takes no disk
        sparse.truncate(MAX_RECORDING_BYTES + 1)
    tracemalloc.start()
    try:
        refused(path, f"it holds more than {MAX_RECORDING_BYTES:,} bytes")
        assert tracemalloc.get_traced_memory()[1] < 1 << 20
    finally:
        tracemalloc.stop()


def test_a_cassette_that_cannot_be_read_is_a_cassette_error(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.symlink_to(path)  # a link to itself: no permission bit stops root, this stops anyone
    refused(path, "it cannot be read: Too many levels of symbolic links")


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux's /proc")
def test_a_file_longer_than_its_stat_says_is_cut_while_reading(tmp_path: Path) -> None:
    """A regular file may say it is empty and hold more (``/proc``), or grow after its stat: the
    limit holds while reading too, at most one byte past it read."""
    maps = Path("/proc/self/maps")
    assert maps.stat().st_size == 0 and len(maps.read_bytes()) > 64
    with pytest.raises(cache.Refused, match="it holds more than 64 bytes"):
        cache.parsed(maps, "k", yaml.safe_load, limit=64)


# -- shapes playback reads ------------------------------------------------------------------------------


def replay(scenario: str, cassettes: Path) -> RunResult:
    return run(
        load_scenarios(REPO / "scenarios", select=[scenario]), ["sim-openai"], RunConfig(cassettes=cassettes)
    )


def cassette_error(result: RunResult) -> str:
    (record,) = result.records
    assert record.error is not None and record.error.kind == "CassetteCorruptError", record.error
    assert record.error.cause == "cassette" and result.gate()[0] == 3
    return record.error.message


def edited(tmp_path: Path, edit: Callable[[dict[str, Any]], object]) -> Path:
    """A copy of a real cassette (sim-openai, weather.single.paris) with one field changed."""
    data = yaml.safe_load(PARIS.read_text())
    edit(data)
    folder = tmp_path / "c"
    (folder / "sim-openai").mkdir(parents=True)
    (folder / "sim-openai" / PARIS.name).write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


def first(data: dict[str, Any], part: str) -> dict[str, Any]:
    item: dict[str, Any] = data["interactions"][0][part]
    return item


@pytest.mark.parametrize(
    ("edit", "what"),
    [
        (
            lambda d: first(d, "response")["body"].update(string=5),
            "interaction 0: response body string is an integer (5)",
        ),
        (lambda d: first(d, "response").pop("body"), "interaction 0: response has no body"),
        (
            lambda d: first(d, "response")["headers"].update({"x": [1]}),
            "interaction 0: response header 'x' is a list",
        ),
        (
            lambda d: first(d, "response").update(elapsed_ms="soon"),
            "interaction 0: response elapsed_ms is text",
        ),
        (lambda d: first(d, "request").update(extra=1), "interaction 0: unknown request field(s) ['extra']"),
        (lambda d: first(d, "request").update(body=[1]), "interaction 0: request body is a list"),
        (lambda d: d.update(metadata=[1]), "the cassette metadata is a list"),
        (lambda d: d.update(metadata={"harness": {"endpoint": [1]}}), "metadata.harness endpoint is a list"),
    ],
)
def test_a_field_playback_would_trip_over_names_the_file_line_and_interaction(
    tmp_path: Path, edit: Callable[[dict[str, Any]], object], what: str
) -> None:
    """``body.string: 5`` was an AttributeError, exit 4."""
    folder = edited(tmp_path, edit)
    message = cassette_error(replay("weather.single.paris", folder))
    assert what in message and f"{folder / 'sim-openai' / PARIS.name}" in message, message


def test_the_line_of_the_bad_field_is_named(tmp_path: Path) -> None:
    folder = edited(tmp_path, lambda d: first(d, "response")["body"].update(string=5))
    path = folder / "sim-openai" / PARIS.name
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "string: 5" in text)
    assert f"{path}:{line}: " in cassette_error(replay("weather.single.paris", folder))


ALIAS_BOMB = "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 10) if prev else ', '.join(['x'] * 10)}]\n"
    for prev, name in zip(["", "a", "b", "c", "d", "e", "f", "g"], "abcdefgh", strict=True)
)
"""Eight lines that stand for 10^8 values."""


@pytest.mark.parametrize(
    ("text", "what"),
    [
        (b"interactions: " + b"[" * 100_000 + b"]" * 100_000, "too deeply nested"),
        (
            b"".join(b"  " * i + b"a:\n" for i in range(199)) + b"  " * 199 + b"a: 1\n",
            "nested deeper than 100",
        ),
        (ALIAS_BOMB.encode(), "more than 100,000 values once its aliases are expanded"),
        (b"interactions: []\n\x00\x01binary", "not a text file: a NUL"),
        (b"interactions: [\x85\xff]", "not UTF-8"),
        (b'interactions: ["\\ud83d"]', "invalid Unicode character escape"),
    ],
)
def test_yaml_no_reader_should_take_is_a_cassette_error(tmp_path: Path, text: bytes, what: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(text)
    tracemalloc.start()
    try:
        refused(path, what)
        assert tracemalloc.get_traced_memory()[1] < 64 << 20
    finally:
        tracemalloc.stop()


# -- JSON nested 100,000 deep in a cassette --------------------------------------------------------------


def test_a_request_body_nested_past_json_is_drift_with_a_short_diff(tmp_path: Path) -> None:
    """Matching a request against a recorded body nested 100,000 deep was a RecursionError, exit 4."""
    folder = edited(
        tmp_path, lambda d: first(d, "request").update(body='{"a":' * 100_000 + "1" + "}" * 100_000)
    )
    (record,) = replay("weather.single.paris", folder).records
    assert record.error is not None and record.error.kind == "CassetteDriftError"
    assert len(record.error.message) < 5_000 and "more characters" in record.error.message


def test_a_reply_nested_100000_deep_in_a_cassette_is_a_finding_and_its_line_is_written(
    tmp_path: Path,
) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    folder = edited(tmp_path, lambda d: first(d, "response")["body"].update(string=deep))
    (record,) = replay("weather.single.paris", folder).records
    assert record.error is None and record.outcome == "fail" and record.score is not None
    assert "wire.body_too_deep" in {f.check_id for f in record.findings()}
    assert decode_record(record_line(record)).transcript.exchanges[0].response.body == deep  # type: ignore[union-attr]


# -- MCP recordings ---------------------------------------------------------------------------------------


def mcp_folder(tmp_path: Path, recording: bytes) -> Path:
    folder = tmp_path / "c" / "sim-openai"
    folder.mkdir(parents=True)
    shutil.copy(DOTTED, folder)
    (folder / "mcp.naming.dotted.mcp.yaml").write_bytes(recording)
    return folder.parent


ORIGINAL = DOTTED_MCP.read_bytes()


@pytest.mark.parametrize(
    ("recording", "what"),
    [
        (bytes(range(256)) * 4, "not a text file: a NUL byte"),
        (b"servers: " + b"[" * 100_000 + b"]" * 100_000, "too deeply nested"),
        (ALIAS_BOMB.encode(), "more than 100,000 values once its aliases are expanded"),
        (b"", "the file is empty"),
        (ORIGINAL[: ORIGINAL.index(b"calls:")], "no 'calls', expected a list (a file cut short?)"),
        (ORIGINAL.replace(b"tool: list_files", b"tool: [1]", 1), "call 0 has no server and tool"),
        (
            ORIGINAL.replace(b"issues: []", b"issues:\n- {server: codeindex, kind: exploded, detail: x}"),
            "issue 0 has kind 'exploded'",
        ),
        (
            ORIGINAL.replace(b"is_error: false", b"is_error: false\n  progress: [1, two]", 1),
            "call 0: progress: expected a list of numbers",
        ),
        (
            ORIGINAL.replace(b"is_error: false", b"is_error: false\n  serialized: 'no'", 1),
            "call 0 serialized",
        ),
    ],
)
def test_a_broken_mcp_recording_is_a_cassette_error_naming_it(
    tmp_path: Path, recording: bytes, what: str
) -> None:
    """Binary or deeply nested was exit 4 with a decoder error; truncated or empty was exit 3 blaming
    request drift in the HTTP cassette."""
    folder = mcp_folder(tmp_path, recording)
    message = cassette_error(replay("mcp.naming.dotted", folder))
    assert str(folder / "sim-openai" / "mcp.naming.dotted.mcp.yaml") in message and what in message, message


def test_the_intact_mcp_recording_still_replays(tmp_path: Path) -> None:
    (record,) = replay("mcp.naming.dotted", mcp_folder(tmp_path, ORIGINAL)).records
    assert record.error is None and record.outcome == "pass"
