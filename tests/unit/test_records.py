"""Typed records: the results file is written once per record and read back typed, with a
shipped JSON Schema that matches the types."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from harness.errors import ConfigError
from harness.model import Finding, ParsedTurn, ToolCall, Usage
from harness.records import (
    RESULT_SCHEMA,
    CheckResult,
    PromptSize,
    RunError,
    RunRecord,
    TargetInfo,
    json_schema,
    record_line,
    status_of,
)
from harness.results import RecordLog, read, select
from tests.helpers.transcripts import call, transcript


def record(**changes: object) -> RunRecord:
    t = transcript([call("get_weather", city="Paris")], "It is 18C.")
    t.exchanges[0].parsed.findings.append(Finding("wire.x", "warning", False, "odd", 0, {"raw": "\u00e9"}))
    values: dict[str, object] = {
        "target": TargetInfo("sim-openai", "openai-chat", "m", True, False, "native", "openai"),
        "scenario": "t.case",
        "category": "single",
        "repeat": 0,
        "mode": "replay",
        "score": 87.5,
        "passed": True,
        "error": None,
        "checks": (
            CheckResult.of("expect.calls", "expectation", 3.0, [Finding("expect.calls", "info", True, "ok")]),
        ),
        "usage": Usage(12, 3),
        "transcript": t,
        "tool_prompt": PromptSize(120, 30),
    }
    values.update(changes)
    return RunRecord(**values)  # type: ignore[arg-type]


def test_a_record_round_trips_typed(tmp_path: Path) -> None:
    original = record()
    path = tmp_path / "results.jsonl"
    with path.open("wb") as out:
        out.write(record_line(original) + b"\n")
        out.write(record_line(record(repeat=1, error=RunError("HarnessError", "boom", "tb"))) + b"\n")
    first, second = list(read(path))
    assert first == original
    assert isinstance(first.transcript.exchanges[0].parsed, ParsedTurn)
    assert isinstance(first.transcript.exchanges[0].parsed.tool_calls[0], ToolCall)
    assert second.error == RunError("HarnessError", "boom", "tb")


def test_the_shipped_schema_is_the_one_the_types_give() -> None:
    shipped = json.loads(resources.files("harness").joinpath("schemas/results.schema.json").read_text())
    assert shipped == json_schema(), (
        "regenerate harness/schemas/results.schema.json from harness.records.json_schema()"
    )


def test_every_line_validates_against_the_shipped_schema() -> None:
    line = json.loads(record_line(record()))
    assert line["schema"] == RESULT_SCHEMA
    jsonschema.Draft202012Validator(json_schema()).validate(line)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"not json\n", ":1: not a JSON line"),
        (
            b'{"schema": "harness.result/1", "target": "x"}\n',
            "format 'harness.result/3' (found 'harness.result/1')",
        ),
        (b"{}\n", "found None"),
    ],
)
def test_a_bad_line_names_its_line_and_the_problem(tmp_path: Path, line: bytes, message: str) -> None:
    path = tmp_path / "results.jsonl"
    path.write_bytes(line)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        list(read(path))


def test_a_results_file_of_the_previous_format_is_read_and_scored_from_its_checks(tmp_path: Path) -> None:
    """Version 2 lines have the same fields and an older meaning of ``score`` (partial credit): they
    are read, and what scores reads the run's success from its checks, so an old file gives the
    new headline exactly."""
    from harness.checks.scoring import record_score

    missed = CheckResult.of("expect.calls", "expectation", 3.0, [Finding("", "error", False, "no call")])
    failed = record(checks=(missed,), score=61.5, outcome="fail")  # what version 2 wrote for such a run
    line = record_line(failed).replace(RESULT_SCHEMA.encode(), b"harness.result/2")
    path = tmp_path / "results.jsonl"
    path.write_bytes(line + b"\n")
    (old,) = read(path)
    assert old.schema == "harness.result/2" and old.score == 61.5 and record_score(old) == 0.0
    assert [r.key for r in RecordLog.open(path)] == [old.key]


def test_a_check_lists_each_finding_once() -> None:
    same = Finding("expect.calls", "error", False, "expected a call to 'x'; calls made: no call", 1)
    result = CheckResult.of("expect.calls", "expectation", 3.0, [same, same, same.at(2)])
    assert result.findings == (same, same.at(2)) and result.status == "fail"


def test_a_finding_is_a_value() -> None:
    finding = Finding("", "error", False, "bad")
    with pytest.raises(AttributeError):
        finding.turn_index = 3  # type: ignore[misc]
    assert finding.at(3).turn_index == 3 and finding.turn_index is None
    assert finding.as_check("protocol.wire").check_id == "protocol.wire"


def test_status_of_findings() -> None:
    assert status_of([]) == "n/a"
    assert status_of([Finding("a", "info", True, "")]) == "pass"
    assert status_of([Finding("a", "warning", False, "")]) == "warn"
    assert status_of([Finding("a", "warning", False, ""), Finding("a", "error", False, "")]) == "fail"


def test_a_record_log_holds_places_and_reads_records_back_sorted(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    written = [record(scenario="b.case"), record(scenario="a.case", repeat=1), record(scenario="a.case")]
    path.write_bytes(b"".join(record_line(r) + b"\n" for r in written) + b"\n")  # a blank line too
    log = RecordLog.open(path)
    assert log.run_keys() == [
        ("sim-openai", "a.case", 0),
        ("sim-openai", "a.case", 1),
        ("sim-openai", "b.case", 0),
    ]
    assert [r.key for r in log] == log.run_keys() and len(log) == 3
    assert log[-1] == written[0] and log[0:2] == [written[2], written[1]]
    assert [r.repeat for r in log.where(lambda key: key[1] == "a.case")] == [0, 1]
    assert list(select(log, lambda key: key[2] == 1)) == [written[1]]
    assert select(written, lambda key: key[2] == 1) == [written[1]]
    joined, joined_left = log + [written[0]], [written[0]] + log  # noqa: RUF005 (what is tested)
    assert joined == [*log, written[0]] and joined_left == [written[0], *log]
    assert len(log + log) == 6


def test_a_record_log_names_the_line_of_a_bad_record(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_bytes(record_line(record()) + b"\n" + b'{"target": {"name": "x"}, "scenario": "s"}\n')
    with pytest.raises(ConfigError, match=r"results.jsonl:2: not a harness results line"):
        RecordLog.open(path)
    path.write_bytes(
        record_line(record()) + b"\n" + b'{"target": {"name": "x"}, "scenario": "s", "repeat": 0}\n'
    )
    log = RecordLog.open(path)  # its key reads; the record itself does not
    assert log.run_keys() == [("sim-openai", "t.case", 0), ("x", "s", 0)] and log[0].scenario == "t.case"
    with pytest.raises(ConfigError, match=r"results.jsonl:2: not a harness results line"):
        list(log)
    negative = record_line(record()).replace(b'"repeat":0', b'"repeat":-1')  # a log keeps 0..2**32-1
    path.write_bytes(negative + b"\n")
    with pytest.raises(ConfigError, match=r"results.jsonl:1: invalid results line: .* >= 0 - at `\$.repeat`"):
        RecordLog.open(path)


def test_a_record_log_reads_only_its_own_results_format(tmp_path: Path) -> None:
    """A line of another results format is refused by a RecordLog as read() refuses it, when it is
    opened (its head names the format) and when a record is read back."""
    path = tmp_path / "results.jsonl"
    old = record_line(record()).replace(RESULT_SCHEMA.encode(), b"harness.result/1")
    path.write_bytes(old + b"\n")
    with pytest.raises(ConfigError, match=r"results.jsonl:1: results format 'harness.result/1'"):
        RecordLog.open(path)
    log = RecordLog(path)
    log.add(("sim-openai", "t.case", 0), 0, len(old), 1)
    with pytest.raises(ConfigError, match=r"results.jsonl:1: results format 'harness.result/1'"):
        list(log)
