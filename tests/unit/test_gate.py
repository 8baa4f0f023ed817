"""The gate: exit codes and their order, per-target minimum scores, expected failures (xfail /
xpass) in the gate, the JUnit file and harness.toml; on real replayed records
(tests/helpers/result_sets.py)."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from harness.analysis.gate import (
    EXIT_CODES,
    XFail,
    expectation_counts,
    expected_failures,
    gate,
    xfail_reason,
)
from harness.records import RunRecord
from harness.reports.json_report import build
from harness.reports.junit import render
from harness.reports.report import Report
from harness.results import read_sorted
from harness.runner import RunConfig
from harness.targets import Target
from harness.targets_file import ConfigFileError, load_config, load_targets
from tests.helpers import result_sets
from tests.helpers.result_sets import BROKEN


@pytest.fixture(scope="module")
def sets(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[RunRecord], list[RunRecord]]:
    """Base: sim-mistral fails weather.single.paris. New: sim-openai fails it, and one run is in
    error (a missing cassette)."""
    base, new = result_sets.base_and_new(tmp_path_factory.mktemp("sets"))
    return read_sorted(base), read_sorted(new)


def with_xfail(records: list[RunRecord], **targets: Target) -> Report:
    report = build(records)
    report.xfail = expected_failures(records, targets)
    return report


def bundled(name: str, **changes: Any) -> Target:
    return dataclasses.replace(load_targets()[name], **changes)


def test_exit_code_5_is_documented_and_the_others_keep_their_meaning() -> None:
    assert sorted(EXIT_CODES) == [0, 1, 2, 3, 4, 5, 8, 130]
    assert "regression against the baseline" in EXIT_CODES[5]
    assert "--min-score" in EXIT_CODES[1] and "cassette" in EXIT_CODES[3] and "interrupted" in EXIT_CODES[130]
    assert "disk is full" in EXIT_CODES[8]


def test_cassette_errors_come_before_regressions(sets: tuple[list[RunRecord], list[RunRecord]]) -> None:
    _, new = sets
    code, message = gate(build(new), new, regressions=["sim-openai x: new failure: pass -> fail"])
    assert code == 3 and "cassette" in message


def test_regressions_exit_5_and_the_message_names_every_failed_gate(
    sets: tuple[list[RunRecord], list[RunRecord]],
) -> None:
    base, _ = sets
    report = build(base)
    assert gate(report, base) == (0, "")
    code, message = gate(report, base, min_score=100, regressions=["sim-openai x: new failure: pass -> fail"])
    assert code == 5
    first, second = message.splitlines()
    assert first == "1 regression(s) against the baseline: sim-openai x: new failure: pass -> fail"
    assert second.startswith("below --min-score 100: {'sim-mistral': ")


def test_a_target_min_score_overrides_the_option(sets: tuple[list[RunRecord], list[RunRecord]]) -> None:
    base, _ = sets
    report = build(base)
    mistral = report.summary.targets["sim-mistral"].score
    assert mistral == 66.67  # two of its three scenarios succeeded
    assert gate(report, base, min_score=100, min_scores={"sim-mistral": 60}) == (0, "")
    code, message = gate(report, base, min_scores={"sim-mistral": 99})
    assert (code, message) == (1, f"below the target's min_score (harness.toml): sim-mistral {mistral} < 99")


def test_an_expected_failure_does_not_fail_the_gate(sets: tuple[list[RunRecord], list[RunRecord]]) -> None:
    base, _ = sets
    assert gate(build(base), base, strict=True)[0] == 1  # sim-mistral fails weather.single.paris
    report = with_xfail(base, **{"sim-mistral": bundled("sim-mistral", xfail={"weather.*": "answers badly"})})
    assert report.xfail == {"sim-mistral": XFail(strict=True, scenarios={BROKEN: "answers badly"})}
    assert gate(report, base, strict=True) == (0, "")
    assert expectation_counts(report) == {"xfail": 1, "xpass": 0, "xpass_strict": 0}


def test_an_xpass_fails_the_gate_unless_not_strict(sets: tuple[list[RunRecord], list[RunRecord]]) -> None:
    base, _ = sets
    strict = with_xfail(base, **{"sim-openai": bundled("sim-openai", xfail={BROKEN: "flaky"})})
    code, message = gate(strict, base)
    assert code == 1
    assert message.startswith("1 run(s) expected to fail passed (xpass; xfail_strict): sim-openai/")
    assert "or set xfail_strict = false" in message
    lenient = with_xfail(
        base, **{"sim-openai": bundled("sim-openai", xfail={BROKEN: "flaky"}, xfail_strict=False)}
    )
    assert gate(lenient, base) == (0, "")
    assert expectation_counts(lenient) == {"xfail": 0, "xpass": 1, "xpass_strict": 0}


def test_an_error_run_stays_an_error_even_when_expected_to_fail(
    sets: tuple[list[RunRecord], list[RunRecord]],
) -> None:
    _, new = sets
    report = with_xfail(new, **{"sim-openai": bundled("sim-openai", xfail={"*": "everything"})})
    assert expectation_counts(report) == {"xfail": 1, "xpass": 1, "xpass_strict": 1}  # tokyo: neither
    assert gate(report, new)[0] == 3


def test_an_exact_id_wins_over_a_pattern() -> None:
    patterns = {"weather.*": "all weather", "weather.single.paris": "paris"}
    assert xfail_reason(patterns, "weather.single.paris") == "paris"
    assert xfail_reason(patterns, "weather.parallel.two_cities") == "all weather"
    assert xfail_reason(patterns, "time.single.tokyo") is None


def test_junit_skips_an_xfail_and_fails_a_strict_xpass(sets: tuple[list[RunRecord], list[RunRecord]]) -> None:
    base, _ = sets
    report = with_xfail(
        base,
        **{
            "sim-mistral": bundled("sim-mistral", xfail={BROKEN: "answers badly"}),
            "sim-openai": bundled("sim-openai", xfail={BROKEN: "flaky"}),
        },
    )
    root = ET.fromstring("".join(render(report)).encode())
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert suites["sim-mistral"].get("skipped") == "1" and suites["sim-mistral"].get("failures") == "0"
    assert suites["sim-openai"].get("failures") == "1" and suites["sim-openai"].get("skipped") == "0"
    skipped = case(suites["sim-mistral"], BROKEN).find("skipped")
    assert skipped is not None and skipped.get("message") == "xfail: answers badly"
    failure = case(suites["sim-openai"], BROKEN).find("failure")
    assert failure is not None and failure.get("type") == "xpass"
    assert failure.get("message") == "XPASS(strict): expected to fail (flaky) but passed"


def case(suite: ET.Element, name: str) -> ET.Element:
    (found,) = [c for c in suite.iter("testcase") if c.get("name") == name]
    return found


def test_a_table_of_gate_keys_changes_the_bundled_target(tmp_path: Path) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(
        "[targets.local-gemma3-270m]\n"
        "min_score = 60\n"
        'xfail = {"weather.parallel.*" = "no parallel calls"}\n'
        "xfail_strict = false\n"
    )
    target = load_config(config).targets["local-gemma3-270m"]
    bundled_target = load_targets()["local-gemma3-270m"]
    assert (target.min_score, target.xfail, target.xfail_strict) == (
        60,
        {"weather.parallel.*": "no parallel calls"},
        False,
    )
    assert dataclasses.replace(target, min_score=None, xfail={}, xfail_strict=True) == bundled_target


@pytest.mark.parametrize(
    ("text", "line", "where", "message"),
    [
        (
            '[targets.nope]\nxfail = {"a.b" = "r"}\n',
            1,
            "[targets.nope]",
            "no bundled target 'nope' to add xfail to: a new target needs 'model' and 'format' or 'profile'",
        ),
        (
            "[targets.sim-openai]\nmin_score = 120\n",
            2,
            "[targets.sim-openai] min_score",
            "must be >= 0 and <= 100",
        ),
        (
            '[targets.sim-openai]\nmin_score = "high"\n',
            2,
            "[targets.sim-openai] min_score",
            "expected a number",
        ),
        ('[targets.sim-openai]\nxfail = ["a.b"]\n', 2, "[targets.sim-openai] xfail", "expected a table"),
        (
            '[targets.sim-openai]\nxfail_strict = "no"\n',
            2,
            "[targets.sim-openai] xfail_strict",
            "expected a boolean",
        ),
        (
            '[targets.sim-openai.xfail]\n"a.b" = "r"\n"Weather X" = "r"\n',
            3,
            '[targets.sim-openai] xfail."Weather X"',
            "not a scenario id or glob pattern",
        ),
        (
            '[targets.sim-openai]\nxfail = {"a.b" = ""}\n',
            2,
            '[targets.sim-openai] xfail."a.b"',
            "must not be empty",
        ),
        (
            '[targets.sim-openai]\nxfail = {"a.b" = 3}\n',
            2,
            '[targets.sim-openai] xfail."a.b"',
            "expected a string (the reason the scenario is expected to fail), got 3",
        ),
        ("[targets.x]\n", 1, "[targets.x] model", "required, but missing"),
        (
            '[targets.x]\nmodel = "m"\nmin_score = 50\n',
            1,
            "[targets.x] format",
            "needs 'format' or 'profile'",
        ),
    ],
)
def test_each_bad_gate_key_names_file_line_and_key(
    tmp_path: Path, text: str, line: int, where: str, message: str
) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(text)
    with pytest.raises(ConfigFileError) as error:
        load_config(config)
    problems = error.value.problems
    assert any(p.line == line and str(p).startswith(f"{config}:{line}: {where}: ") for p in problems), str(
        error.value
    )
    assert message in str(error.value), str(error.value)


def test_the_python_api_gate_applies_each_targets_own_xfail_and_min_score(tmp_path: Path) -> None:
    """``harness.run(...).gate()`` holds the same verdicts as ``harness run``: a strict xpass fails
    it, a non-strict one does not, and a target's own min_score applies."""
    import harness
    from tests.helpers.cli import REPO

    def gate(toml: str, target: str = "sim-openai") -> tuple[int, str]:
        config = tmp_path / "harness.toml"
        config.write_text(toml)
        result = harness.run(
            REPO / "scenarios",
            [target],
            RunConfig(cassettes=REPO / "cassettes", results=tmp_path / "r.jsonl"),
            config=config,
        )
        return result.gate()

    strict = gate('[targets.sim-openai]\nxfail = {"weather.single.paris" = "expected to fail"}\n')
    assert strict[0] == 1 and "xpass" in strict[1]
    relaxed = '[targets.sim-openai]\nxfail_strict = false\nxfail = {"weather.single.paris" = "r"}\n'
    assert gate(relaxed)[0] == 0
    low = gate("[targets.local-gemma3-270m]\nmin_score = 90\n", "local-gemma3-270m")
    assert low[0] == 1 and "local-gemma3-270m" in low[1]
