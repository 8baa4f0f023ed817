"""Comparing two result sets, and the baseline file: on real replayed records that differ in known
ways (tests/helpers/result_sets.py): one scenario broken on one target, one fixed on another, one
run newly in error."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from harness.analysis.compare import (
    BASELINE_SCHEMA,
    Entry,
    ResultSet,
    compare,
    entries,
    from_records,
    load,
    read_baseline,
    render_baseline,
    target_score,
    write_baseline,
)
from harness.checks.scoring import difference
from harness.errors import ConfigError
from harness.records import RunRecord
from harness.reports.json_report import build
from harness.results import read_sorted
from harness.results.store import store_path
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


def noise(before: tuple[float, float], after: tuple[float, float]) -> str:
    """How the comparison words the 95 % interval of a change between (share, runs) pairs."""
    interval = difference(before, after)
    assert interval is not None
    low, high = (round(100 * x, 1) for x in interval)
    where = "outside" if high < 0 or low > 0 else "within"
    return f"{where} the noise: {signed(low)} to {signed(high)} at 95 %"


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
    assert score(was_broken) == score(broken) == 0  # a run whose final answer failed did not succeed
    mistral_before = round(200 / 3, 2)  # the other two of its three scenarios succeeded
    return [
        f"sim-mistral: score {number(mistral_before)} -> 100 ({signed(100 - mistral_before)}, "
        f"{noise((2 / 3, 3), (1, 3))}); 2 fixed, 1 score rise, 1 gone finding",
        f"    fixed        {BROKEN}: fail -> pass",
        f"    fixed        {BROKEN} expect.final: no longer fails",
        f"    score        {BROKEN}: 0 -> 100 (+100, {noise((0, 1), (1, 1))})",
        f"    gone finding {BROKEN} expect.final: {finding.detail}",
        # tokyo, in error, is not compared: the target's score is over the two others
        f"sim-openai: score 100 -> 50 (-50, {noise((1, 2), (0.5, 2))}; a regression "
        "beyond 0 point(s)); 1 new error, 2 new failures, 1 score drop, 1 new finding",
        "  ! new error    time.single.tokyo: pass -> error (cassette)",
        f"  ! new failure  {BROKEN}: pass -> fail",
        f"  ! new failure  {BROKEN} expect.final: fails now",
        f"  ! score        {BROKEN}: 100 -> 0 (-100, {noise((1, 1), (0, 1))})",
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
        "runs",
        "succeeded",
        "failed",
        "warned",
        "findings",
        "cause",
    ]
    assert json.loads(text)["entries"] == body  # one JSON document
    broken = next(e for e in body if e["target"] == "sim-mistral" and e["scenario"] == BROKEN)
    assert broken["outcome"] == "fail" and broken["failed"] == {"expect.final": 1}
    assert (broken["score"], broken["runs"], broken["succeeded"]) == (0, 1, 0)
    assert [check for check, _ in broken["findings"]] == ["expect.final"]


def test_an_error_entry_keeps_its_cause(sets: tuple[Path, Path]) -> None:
    _, new = sets
    entry = load(new).entries[("sim-openai", "time.single.tokyo")]
    assert (entry.outcome, entry.score, entry.runs, entry.failed, entry.cause) == (
        "error",
        None,
        0,
        {},
        "cassette",
    )


def test_the_target_score_is_the_reports(sets: tuple[Path, Path]) -> None:
    for path in sets:
        records = read_sorted(path)
        report = build(records)
        loaded = load(path)
        for target in loaded.targets():
            assert target_score(loaded.of(target).values()) == report.summary.targets[target].score


def test_repeats_fold_into_one_entry(sets: tuple[Path, Path]) -> None:
    """The worst outcome, the share of repeats that succeeded, in how many each check failed."""
    base, new = sets
    good = run_of(base, "sim-openai", BROKEN)
    bad = run_of(new, "sim-openai", BROKEN)
    (entry,) = entries([good, dataclasses.replace(bad, repeat=1)]).values()
    assert entry.outcome == "fail" and entry.failed == {"expect.final": 1}
    assert (entry.score, entry.runs, entry.succeeded) == (50, 2, 1)


def test_a_score_drop_within_the_tolerance_is_listed_but_is_no_regression(sets: tuple[Path, Path]) -> None:
    base, _ = sets
    loaded = load(base)
    key = ("sim-openai", "todo.single.create")
    lowered = dataclasses.replace(loaded.entries[key], score=97.5)
    new = dataclasses.replace(loaded, source="new", entries={**loaded.entries, key: lowered})
    lenient = compare(loaded, new, tolerance=5)
    assert lenient.regressions == []
    assert any(
        line.startswith("    score        todo.single.create: 100 -> 97.5 (-2.5, ")
        for line in lenient.lines()
    )
    strict = compare(loaded, new)
    assert any(
        r.startswith("sim-openai todo.single.create: score: 100 -> 97.5 (-2.5, ") for r in strict.regressions
    )
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
        ("not json", "not a baseline file (harness.baseline/2 JSON)"),
        (
            '{"schema": "harness.baseline/1", "entries": []}',
            ":1: baseline format 'harness.baseline/1' (its scores are the older partial credit, not task "
            "success); this harness reads 'harness.baseline/2': write it again with `harness baseline "
            "<results.jsonl> --out",
        ),
        (
            '{"schema": "harness.baseline/2", "entries": [\n'
            '{"target": "a", "scenario": "s.x", "category": "single", "outcome": "pass", "score": 100},\n'
            '{"target": "a", "scenario": "s.y", "category": "single", "outcome": "flaky", "score": 1}\n]}',
            ":3: entries[1].outcome: Invalid enum value 'flaky' (an entry holds target, scenario, "
            "category, outcome pass|fail|error",
        ),
        (
            '{"schema": "harness.baseline/2", "entries": [\n'
            '{"target": "a", "scenario": "s.x", "category": "single", "outcome": "pass", '
            '"score": "high"}\n]}',
            ":2: entries[0].score: Expected `float | null`, got `str`",
        ),
        (
            '{"schema": "harness.baseline/2", "entries": [\n'
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
    (folder / "results.shared.jsonl.gz").write_bytes(store_path(sets[0]).read_bytes())  # its values
    assert load(folder).entries == load(sets[0]).entries
    with pytest.raises(ConfigError, match=r"no results\.jsonl in this folder"):
        load(tmp_path)
    with pytest.raises(ConfigError, match="no such file"):
        load(tmp_path / "nope.json")


def repeated(succeeded: int, runs: int, failed: int = 0, scenario: str = "s.x") -> Entry:
    """An entry of ``runs`` repeats of one scenario, ``succeeded`` of them, the others failing
    ``expect.calls`` (``failed`` runs, by default every run that did not succeed)."""
    misses = failed or runs - succeeded
    return Entry(
        "t",
        scenario,
        "single",
        "fail" if misses else "pass",
        round(100 * succeeded / runs, 2),
        runs,
        succeeded,
        {"expect.calls": misses} if misses else {},
    )


def one_target(*items: Entry) -> ResultSet:
    return ResultSet("x", {item.key: item for item in items})


def test_with_repeats_a_drop_within_the_noise_is_listed_but_does_not_gate() -> None:
    """5 of 5 then 4 of 5 (``--repeat 5``): a scenario failing once in five runs may be noise, so
    nothing gates; 10 of 10 then 2 of 10 is outside the noise at 95 %: it gates, once for the
    scenario's failure, the check's and the score drop, and once for the target."""
    noisy = compare(one_target(repeated(5, 5)), one_target(repeated(4, 5)))
    assert noisy.regressions == []
    assert "    new failure  s.x: pass -> fail" in noisy.lines()
    assert "    new failure  s.x expect.calls: fails now in 1 of 5 runs (within the noise:" in " ".join(
        noisy.lines()
    )
    assert any("score        s.x: 100 -> 80 (-20, within the noise" in line for line in noisy.lines())
    real = compare(one_target(repeated(10, 10)), one_target(repeated(2, 10)))
    assert [r.split(":")[0] for r in real.regressions] == ["t", "t s.x", "t s.x expect.calls", "t s.x"]
    assert "outside the noise" in real.lines()[0]


def test_with_repeats_a_check_failing_more_often_is_judged_by_its_share() -> None:
    before, after = repeated(0, 10, failed=2), repeated(0, 10, failed=9)
    comparison = compare(one_target(before), one_target(after))
    (change,) = [c for t in comparison.targets for c in t.changes if c.check == "expect.calls"]
    assert change.text.startswith("fails in 9 of 10 runs (was 2 of 10; outside the noise")
    assert change.regression


def test_single_runs_gate_on_any_drop_and_only_show_the_noise() -> None:
    """A replay is deterministic: one scenario newly failing is a regression even though a single
    run cannot tell it from noise."""
    comparison = compare(one_target(repeated(1, 1)), one_target(repeated(0, 1)))
    assert len(comparison.regressions) == 4
    assert "within the noise" in comparison.lines()[0]


def test_a_check_that_now_warns_gates_as_a_failure_does() -> None:
    """Passed, now warns: a regression with single runs; with repeats, only outside the noise."""
    passing = Entry("t", "s.x", "single", "pass", 100.0, 1, 1)
    warning = dataclasses.replace(passing, warned={"expect.extra_calls": 1})
    (change,) = [c for t in compare(one_target(passing), one_target(warning)).targets for c in t.changes]
    assert (change.kind, change.check, change.text, change.regression) == (
        "new warning",
        "expect.extra_calls",
        "warns now",
        True,
    )
    five = dataclasses.replace(passing, runs=5, succeeded=5)
    once = dataclasses.replace(five, warned={"expect.extra_calls": 1})
    always = dataclasses.replace(five, runs=10, succeeded=10, warned={"expect.extra_calls": 10})
    assert compare(one_target(five), one_target(once)).regressions == []
    assert (
        len(
            compare(
                one_target(dataclasses.replace(five, runs=10, succeeded=10)), one_target(always)
            ).regressions
        )
        == 1
    )
