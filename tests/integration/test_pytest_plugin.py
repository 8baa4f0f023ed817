"""The pytest plugin: scenario files as items, markers, failures in words, Allure, xdist, the fixture."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.api import load_scenarios
from tests.helpers.cli import REPO

pytest_plugins = ["pytester"]
SUITE = load_scenarios(REPO / "scenarios")


def pytest_run(*args: str | Path, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *map(str, args)]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)


def outcomes(junit: Path) -> dict[str, str]:
    """Test case -> passed / failed / error / skipped, from a JUnit XML file."""
    found = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        found[f"{case.get('classname')}::{case.get('name')}"] = kinds[0] if kinds else "passed"
    return found


def test_every_bundled_scenario_is_an_item_and_allure_gets_labels_and_attachments(tmp_path: Path) -> None:
    out = pytest_run("--harness-targets", "sim-openai", "--alluredir", tmp_path / "allure", "-q")
    assert out.returncode == 0, out.stdout[-3000:]
    assert f"{len(SUITE)} passed" in out.stdout
    results = [json.loads(p.read_text()) for p in (tmp_path / "allure").glob("*-result.json")]
    assert len(results) == len(SUITE)
    paris = next(r for r in results if r["name"] == "weather.single.paris[sim-openai]")
    labels = {(label["name"], label["value"]) for label in paris["labels"]}
    assert {("category", "single"), ("target", "sim-openai"), ("story", "weather.single.paris")} <= labels
    attachments = {a["name"]: a["source"] for a in paris["attachments"]}
    assert {"turn 0 request", "turn 0 response (HTTP 200)", "transcript", "findings"} <= set(attachments)
    transcript = json.loads((tmp_path / "allure" / attachments["transcript"]).read_text())
    assert transcript["scenario_id"] == "weather.single.paris" and transcript["exchanges"]


def test_node_ids_markers_and_keywords_select_as_expected() -> None:
    listed = pytest_run(
        "--harness-targets", "sim-openai,sim-anthropic", "--collect-only", "-q", "-m", "parallel"
    )
    ids = [line for line in listed.stdout.splitlines() if "::" in line]
    parallel = [s for s in SUITE if s.category == "parallel"]
    assert len(ids) == 2 * len(parallel)
    assert "scenarios/parallel/weather_two_cities.yaml::weather.parallel.two_cities[sim-openai]" in ids
    by_target = pytest_run(
        "--harness-targets", "sim-*", "--collect-only", "-q", "-k", "sim-anthropic and paris"
    )
    assert [line for line in by_target.stdout.splitlines() if "::" in line] == [
        "scenarios/single/weather_paris.yaml::weather.single.paris[sim-anthropic]",
        "scenarios/single/weather_paris.yaml::weather.single.paris[sim-anthropic-stream]",
    ]


def test_a_failure_shows_checks_findings_and_wire_not_a_traceback() -> None:
    out = pytest_run("--harness-targets", "local-gemma3-270m", "-k", "required", "-q")
    assert out.returncode == 1
    assert "protocol.provider_error: fail" in out.stdout and "HTTP 500 internal_server_error" in out.stdout
    assert "turn 0: POST http://replay.invalid/v1/chat/completions -> 500" in out.stdout
    assert "Traceback" not in out.stdout and "harness/pytest_plugin.py" not in out.stdout


def test_xdist_gives_the_same_outcomes(tmp_path: Path) -> None:
    common = ["--harness-targets", "sim-openai,local-gemma3-270m", "-q", "-m", "single or parallel or error"]
    pytest_run(*common, "--junitxml", tmp_path / "one.xml")
    pytest_run(*common, "-n", "2", "--junitxml", tmp_path / "two.xml")
    one, two = outcomes(tmp_path / "one.xml"), outcomes(tmp_path / "two.xml")
    assert one == two and len(one) >= 10
    assert set(one.values()) == {"passed", "failure"}  # the local model fails some: same ones both ways


def test_the_harness_fixture_runs_a_scenario_from_python(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        f"""
        def test_paris(harness):
            record = harness.run(
                "weather.single.paris", "sim-openai", scenarios={str(REPO / "scenarios")!r},
                cassettes={str(REPO / "cassettes")!r},
            )
            assert record.passed and record.score == 100, harness.explain(record)

        def test_gemma_required(harness):
            record = harness.run(
                "tool_choice.required.weather", "local-gemma3-270m", scenarios={str(REPO / "scenarios")!r},
                cassettes={str(REPO / "cassettes")!r},
            )
            assert not record.passed
            assert "protocol.provider_error: fail" in harness.explain(record)
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_the_plugin_is_dormant_without_targets(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", scenario="id: x\n")  # not even parsed
    pytester.makepyfile("def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
