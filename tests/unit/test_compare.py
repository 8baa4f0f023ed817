"""Comparing two result sets, and the baseline file: on real replayed records that differ in known
ways (tests/helpers/result_sets.py): one scenario broken on one target, one fixed on another, one
run newly in error."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from harness.compare import (
    BASELINE_SCHEMA,
    compare,
    entries,
    from_records,
    load,
    read_baseline,
    render_baseline,
    target_score,
    write_baseline,
)
from harness.errors import ConfigError
from harness.records import RunRecord, read_sorted
from harness.reports.json_report import build
from tests.helpers import result_sets
from tests.helpers.result_sets import BROKEN, USELESS


@pytest.fixture(scope="module")
def sets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return result_sets.base_and_new(tmp_path_factory.mktemp("sets"))


def run_of(path: Path, target: str, scenario: str) -> RunRecord:
    (record,) = [r for r in read_sorted(path) if r.key == (target, scenario, 0)]
    return record


def score(record: RunRecord) -> float:
    assert record.score is not None
    return record.score


def number(value: float | None) -> str:
    assert value is not None
    return f"{round(value, 2):g}"


def signed(value: float) -> str:
    return f"{round(value, 2):+g}"


def expected_lines(base: Path, new: Path) -> list[str]:
    """What the comparison must say, with the scores and the finding taken from the records (the
    test fixes which changes are listed and how, not the checks' weights)."""
    was_broken = run_of(base, "sim-mistral", BROKEN)
    broken = run_of(new, "sim-openai", BROKEN)
    for record in (was_broken, broken):  # the premise: only the final answer check fails
        assert [c.id for c in record.checks if c.status == "fail"] == ["expect.final"]
    (finding,) = [f for f in broken.findings() if not f.passed]
    assert USELESS in finding.detail
    assert {r.category for r in read_sorted(new)} == {"single"}  # target score = mean of scenarios
    mistral_before = round((score(was_broken) + 200) / 3, 2)
    openai_after = round((score(broken) + 100) / 2, 2)  # tokyo, in error, is not compared
    return [
        f"sim-mistral: score {number(mistral_before)} -> 100 ({signed(100 - mistral_before)}); "
        "2 fixed, 1 score rise, 1 gone finding",
        f"    fixed        {BROKEN}: fail -> pass",
        f"    fixed        {BROKEN} expect.final: no longer fails",
        f"    score        {BROKEN}: {number(score(was_broken))} -> 100 ({signed(100 - score(was_broken))})",
        f"    gone finding {BROKEN} expect.final: {finding.detail}",
        f"sim-openai: score 100 -> {number(openai_after)} ({signed(openai_after - 100)}, a regression "
        "beyond 0 point(s)); 1 new error, 2 new failures, 1 score drop, 1 new finding",
        "  ! new error    time.single.tokyo: pass -> error (cassette)",
        f"  ! new failure  {BROKEN}: pass -> fail",
        f"  ! new failure  {BROKEN} expect.final: fails now",
        f"  ! score        {BROKEN}: 100 -> {number(score(broken))} ({signed(score(broken) - 100)})",
        f"    new finding  {BROKEN} expect.final: {finding.detail}",
        "5 regression(s), 2 fix(es) in 2 target(s) compared (tolerance 0 point(s))",
    ]


def test_compare_lists_exactly_the_known_differences(sets: tuple[Path, Path]) -> None:
    base, new = sets
    comparison = compare(load(base), load(new))
    assert comparison.lines() == expected_lines(base, new)
    assert all(line.startswith("sim-openai") for line in comparison.regressions)  # mistral got better
    assert len(comparison.regressions) == 5
    assert comparison.regressions[0].startswith("sim-openai: score 100 -> ")
    assert "sim-openai time.single.tokyo: new error: pass -> error (cassette)" in comparison.regressions


def test_the_other_way_round_fixes_are_regressions_and_errors_go_away(sets: tuple[Path, Path]) -> None:
    base, new = sets
    lines = compare(load(new), load(base)).lines()
    assert "  ! new failure  weather.single.paris: pass -> fail" in lines
    assert "    error gone   time.single.tokyo: error (cassette) -> pass" in lines
    # mistral: scenario, check, its score and the target score; openai: scenario, check, error gone
    assert lines[-1].startswith("4 regression(s), 3 fix(es)")


def test_a_baseline_gives_the_same_comparison_as_its_results_file(
    sets: tuple[Path, Path], tmp_path: Path
) -> None:
    base, new = sets
    write_baseline(read_sorted(base), tmp_path / "base.json")
    write_baseline(read_sorted(new), tmp_path / "new.json")
    assert load(tmp_path / "base.json").entries == load(base).entries
    from_files = compare(load(base), load(new))
    for a, b in [
        (tmp_path / "base.json", new),
        (base, tmp_path / "new.json"),
        (tmp_path / "base.json", tmp_path / "new.json"),
    ]:
        comparison = compare(load(a), load(b))
        assert comparison.lines() == from_files.lines()
        assert comparison.targets == from_files.targets


def test_the_baseline_file_is_sorted_one_entry_per_line_and_stable(
    sets: tuple[Path, Path], tmp_path: Path
) -> None:
    base, _ = sets
    records = read_sorted(base)
    text = render_baseline(entries(reversed(records)).values())
    assert text == render_baseline(entries(records).values())  # the order of the records is irrelevant
    lines = text.splitlines()
    assert lines[0] == f'{{"schema": "{BASELINE_SCHEMA}", "entries": ['
    assert lines[-1] == "]}"
    body = [json.loads(line.rstrip(",")) for line in lines[1:-1]]
    assert [(e["target"], e["scenario"]) for e in body] == sorted({r.key[:2] for r in records})
    assert list(body[0]) == [
        "target",
        "scenario",
        "category",
        "outcome",
        "score",
        "failed",
        "findings",
        "cause",
    ]
    assert json.loads(text)["entries"] == body  # one JSON document
    broken = next(e for e in body if e["target"] == "sim-mistral" and e["scenario"] == BROKEN)
    assert broken["outcome"] == "fail" and broken["failed"] == ["expect.final"]
    assert [check for check, _ in broken["findings"]] == ["expect.final"]


def test_an_error_entry_keeps_its_cause(sets: tuple[Path, Path]) -> None:
    _, new = sets
    entry = load(new).entries[("sim-openai", "time.single.tokyo")]
    assert (entry.outcome, entry.score, entry.failed, entry.cause) == ("error", None, (), "cassette")


def test_the_target_score_is_the_reports(sets: tuple[Path, Path]) -> None:
    for path in sets:
        records = read_sorted(path)
        report = build(records)
        loaded = load(path)
        for target in loaded.targets():
            assert target_score(loaded.of(target).values()) == report["summary"]["targets"][target]["score"]


def test_repeats_fold_into_one_entry(sets: tuple[Path, Path]) -> None:
    """The worst outcome, the mean score, the union of failed checks over the repeats."""
    base, new = sets
    good = run_of(base, "sim-openai", BROKEN)
    bad = run_of(new, "sim-openai", BROKEN)
    (entry,) = entries([good, dataclasses.replace(bad, repeat=1)]).values()
    assert entry.outcome == "fail" and entry.failed == ("expect.final",)
    assert entry.score == round((score(good) + score(bad)) / 2, 2)


def test_a_score_drop_within_the_tolerance_is_listed_but_is_no_regression(sets: tuple[Path, Path]) -> None:
    base, _ = sets
    loaded = load(base)
    key = ("sim-openai", "todo.single.create")
    lowered = dataclasses.replace(loaded.entries[key], score=97.5)
    new = dataclasses.replace(loaded, source="new", entries={**loaded.entries, key: lowered})
    lenient = compare(loaded, new, tolerance=5)
    assert lenient.regressions == []
    assert "    score        todo.single.create: 100 -> 97.5 (-2.5)" in lenient.lines()
    strict = compare(loaded, new)
    assert "sim-openai todo.single.create: score: 100 -> 97.5 (-2.5)" in strict.regressions
    assert any(line.startswith("sim-openai: score 100 -> ") for line in strict.regressions)


def test_a_subset_run_is_compared_over_what_both_ran(sets: tuple[Path, Path]) -> None:
    base, _ = sets
    records = read_sorted(base)
    subset = [r for r in records if r.target.name == "sim-mistral" and r.scenario != "todo.single.create"]
    comparison = compare(load(base), from_records(subset))
    assert comparison.regressions == []
    assert comparison.only_in_base == ("sim-openai",)
    shared = [e for e in load(base).of("sim-mistral").values() if e.scenario != "todo.single.create"]
    before, after = target_score(shared), target_score(from_records(subset).of("sim-mistral").values())
    assert before == after
    assert comparison.lines() == [
        f"sim-mistral: score {number(before)} -> {number(after)}; 1 scenario(s) only in base, not compared",
        "1 target(s) only in base, not compared: sim-openai",
        "no regression, 0 fix(es) in 1 target(s) compared (tolerance 0 point(s))",
    ]


def test_json_has_every_change(sets: tuple[Path, Path]) -> None:
    data = json.loads(json.dumps(compare(load(sets[0]), load(sets[1])).to_json()))
    (openai,) = [t for t in data["targets"] if t["target"] == "sim-openai"]
    assert openai["counts"] == {"new error": 1, "new failure": 2, "score drop": 1, "new finding": 1}
    assert {c["kind"] for c in openai["changes"] if c["regression"]} == {"new error", "new failure", "score"}
    assert len(data["regressions"]) == 5


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"schema": "harness.baseline/9", "entries": []}', ":1: baseline format 'harness.baseline/9'"),
        ("not json", "not a baseline file (harness.baseline/1 JSON)"),
        (
            '{"schema": "harness.baseline/1", "entries": [\n'
            '{"target": "a", "scenario": "s.x", "category": "single", "outcome": "pass", "score": 100},\n'
            '{"target": "a", "scenario": "s.y", "category": "single", "outcome": "flaky", "score": 1}\n]}',
            ":3: entries[1].outcome: Invalid enum value 'flaky' (an entry holds target, scenario, "
            "category, outcome pass|fail|error",
        ),
        (
            '{"schema": "harness.baseline/1", "entries": [\n'
            '{"target": "a", "scenario": "s.x", "category": "single", "outcome": "pass", '
            '"score": "high"}\n]}',
            ":2: entries[0].score: Expected `float | null`, got `str`",
        ),
        (
            '{"schema": "harness.baseline/1", "entries": [\n'
            '{"target": "a", "scenario": "s.x", "category": "single", "outcome": "pass", "score": 1},\n'
            '{"target": "a", "scenario": "s.x", "category": "single", "outcome": "pass", "score": 1}\n]}',
            ":3: entries[1]: a s.x is listed twice",
        ),
    ],
)
def test_a_bad_baseline_names_file_line_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "harness-baseline.json"
    path.write_text(text)
    with pytest.raises(ConfigError) as error:
        read_baseline(path)
    assert str(error.value).startswith(str(path)), str(error.value)
    assert message in str(error.value), str(error.value)


def test_load_takes_a_run_folder_and_names_what_it_expected(sets: tuple[Path, Path], tmp_path: Path) -> None:
    folder = tmp_path / "runs" / "20260101T000000Z-1"
    folder.mkdir(parents=True)
    (folder / "results.jsonl").write_bytes(sets[0].read_bytes())
    assert load(folder).entries == load(sets[0]).entries
    with pytest.raises(ConfigError, match=r"no results\.jsonl in this folder"):
        load(tmp_path)
    with pytest.raises(ConfigError, match="no such file"):
        load(tmp_path / "nope.json")
