"""Reports over records read from a results file: the run summaries go to a spool on disk and
every writer streams, and what they write is the same as from records in memory."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from unittest.mock import patch

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from harness.analysis.gate import gate
from harness.checks.scoring import TargetSummary
from harness.reports import json_report, write_built
from harness.reports.html import FILES, read_details
from harness.reports.json_report import build, run_summary, write
from harness.reports.junit import render
from harness.reports.report import RunSummary
from harness.reports.spool import KeyedSpool, RunSpool, Spool
from harness.results import RecordLog, read_sorted
from tests.helpers import result_sets


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results file with a failed run and an error (see :mod:`tests.helpers.result_sets`)."""
    return result_sets.base_and_new(tmp_path_factory.mktemp("sets"))[1]


def test_a_spool_is_a_sequence_of_the_summaries_given(results: Path) -> None:
    summaries = [run_summary(record) for record in read_sorted(results)][:3]
    summaries[0].checks = {"b": "pass", "a": "fail"}
    spool = RunSpool()
    for summary in summaries:
        spool.append(summary)
    assert len(spool) == 3 and list(spool) == summaries and spool == summaries
    assert spool[-1] == summaries[2] and spool[1:] == summaries[1:]
    assert all(isinstance(run, RunSummary) for run in spool)  # read back typed
    assert list(spool[0].checks) == ["b", "a"]  # keys in the order given
    with pytest.raises(IndexError):
        spool[3]


def test_a_keyed_spool_is_a_mapping_of_the_values_set_in_order(results: Path) -> None:
    targets = build(read_sorted(results), "now").summary.targets
    spool: KeyedSpool[TargetSummary] = KeyedSpool(TargetSummary)
    for name, target in targets.items():
        spool[name] = target
    assert spool == targets and list(spool) == list(targets) == ["sim-mistral", "sim-openai"]
    assert spool["sim-openai"] == targets["sim-openai"] and spool["sim-openai"] is spool["sim-openai"]
    assert spool.get("sim-nope") is None and "sim-mistral" in spool and len(spool) == 2
    with pytest.raises(ValueError, match="'sim-a' set after 'sim-openai'"):
        spool["sim-a"] = targets["sim-openai"]  # a report lists targets sorted: out of order is a bug
    with pytest.raises(TypeError):
        del spool["sim-openai"]


def test_every_writer_writes_the_same_from_a_results_file_as_from_records_in_memory(
    results: Path, tmp_path: Path
) -> None:
    log, records = RecordLog.open(results), read_sorted(results)
    spooled, listed = build(log, "now", spool=True), build(records, "now")
    assert isinstance(spooled.runs, RunSpool) and isinstance(listed.runs, list)
    # over a results file a target's sections are spooled as soon as its runs are all read
    assert isinstance(spooled.summary.targets, KeyedSpool) and isinstance(
        spooled.capabilities.targets, KeyedSpool
    )
    assert isinstance(listed.summary.targets, dict) and isinstance(listed.capabilities.targets, dict)
    # a migration group's differences (a verdict per target for each scenario) too
    differences = spooled.migrations[0].differences
    assert isinstance(differences, Spool) and len(differences) > 0
    assert isinstance(listed.migrations[0].differences, list)
    assert differences == listed.migrations[0].differences
    assert spooled.runs == listed.runs and replace(spooled, runs=[]) == replace(listed, runs=[])
    from_file = write_built(spooled, log, tmp_path / "file")
    in_memory = write_built(listed, records, tmp_path / "memory")
    assert [p.name for p in from_file] == ["report.json", "report.md", "report.html", "junit.xml"]
    for a, b in zip(from_file, in_memory, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name
    files = sorted(p.name for p in (tmp_path / "file" / FILES).iterdir())
    assert files == sorted(p.name for p in (tmp_path / "memory" / FILES).iterdir())
    assert "runs-1.js" in files
    for name in files:  # each target's runs file written as its runs end, the same as at the end
        assert (tmp_path / "file" / FILES / name).read_bytes() == (
            tmp_path / "memory" / FILES / name
        ).read_bytes()
    assert spooled.to_data() == listed.to_data()
    details = read_details(tmp_path / "file" / FILES)
    assert details == read_details(tmp_path / "memory" / FILES)
    assert any(result_sets.USELESS in d for d in details.values())  # a failed run's transcript
    assert gate(spooled) == gate(listed) == gate(listed, records)
    assert gate(spooled)[0] == 3  # the missing cassette


def test_junit_groups_a_target_s_runs_whatever_their_order(results: Path) -> None:
    records = read_sorted(results)
    report = build(records, "now")
    mixed = build(records[::2] + records[1::2], "now")  # targets interleaved
    suites = ET.fromstring("".join(render(mixed)).encode()).findall("testsuite")
    assert [s.get("name") for s in suites] == ["sim-mistral", "sim-openai"]
    assert [s.get("tests") for s in suites] == ["3", "3"]
    expected = ET.fromstring("".join(render(report)).encode()).findall("testsuite")
    assert sorted(c.get("name") or "" for c in suites[0].iter("testcase")) == sorted(
        c.get("name") or "" for c in expected[0].iter("testcase")
    )


def test_a_results_file_with_no_run_gives_empty_reports(tmp_path: Path) -> None:
    (tmp_path / "results.jsonl").write_bytes(b"")
    log = RecordLog.open(tmp_path / "results.jsonl")
    report = build(log, "now", spool=True)
    paths = write_built(report, log, tmp_path)
    assert '"runs": []' in paths[0].read_text()
    assert ET.fromstring(paths[3].read_bytes()).tag == "testsuites"


def test_a_report_not_built_to_be_written_holds_its_runs_in_memory(results: Path, tmp_path: Path) -> None:
    """``RunResult.report`` (built without a spool) holds its runs as a list, so it copies and
    pickles whole, even when the records come from a file; ``to_data()`` is the JSON report.json
    holds."""
    import copy
    import json
    import pickle

    from harness.api import RunResult

    log = RecordLog.open(results)
    report = RunResult(log, results).report
    assert isinstance(report.runs, list) and len(report.runs) == len(log)
    assert copy.deepcopy(report) == report == pickle.loads(pickle.dumps(report))
    written = write(report, log, tmp_path)
    assert report.to_data() == json.loads(written.read_text(encoding="utf-8"))


def test_junit_and_report_json_grow_with_what_failed_not_with_what_passed(
    results: Path, tmp_path: Path
) -> None:
    """Every passing case carried every check's status in system-out, and every passing run with a
    warning its wire requests and responses in report.json: both grew with the passing runs."""
    records = read_sorted(results)
    report = build(records, "now")
    cases = ET.fromstring("".join(render(report)).encode()).iter("testcase")
    for case in cases:
        said = case.find("system-out")
        if case.find("failure") is None and case.find("error") is None and case.find("skipped") is None:
            assert said is None, case.get("name")
        else:
            assert said is not None and "checks not passed {" in (said.text or "")
            assert "'n/a'" not in (said.text or "") and "'pass'" not in (said.text or "")
    runs = json.loads(write(report, records, tmp_path).read_text())["runs"]
    assert all(run["exchanges"] == [] for run in runs if run["outcome"] == "pass")
    assert any(run["exchanges"] for run in runs if run["outcome"] == "fail")  # the evidence of a failure
    lines = write(report, records, tmp_path).read_text().splitlines()
    assert sum(1 for line in lines if line.startswith('    {"calls":')) == len(runs)  # a run a line


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(value=JSON, whole=st.sampled_from([0, 8, 1 << 16]))
def test_report_json_written_a_part_at_a_time_is_the_whole_formatted(value: object, whole: int) -> None:
    """Large values are written a member at a time (here any value over ``whole`` bytes): the
    bytes are those of formatting the value whole, at any depth."""
    data = msgspec.json.encode({"a": value, "runs": []})
    out = io.BytesIO()
    with patch.object(json_report, "_WHOLE", whole):
        json_report._write_formatted(out, data, 0)
    assert out.getvalue() == msgspec.json.format(data, indent=2)


def test_report_json_without_runs_is_the_report_formatted_whole(results: Path, tmp_path: Path) -> None:
    """What :func:`write` puts out a member at a time is the report formatted in one piece."""
    report = replace(build(read_sorted(results)), runs=[])
    with patch.object(json_report, "_WHOLE", 0):
        written = write(report, [], tmp_path).read_bytes()
    assert written == msgspec.json.format(msgspec.json.encode(report, order="sorted"), indent=2) + b"\n"
