"""The pytest plugin: scenario files as items, markers, failures in words, Allure, xdist, the fixture."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

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
        "scenarios/single/weather_paris.yaml::weather.single.paris[sim-anthropic-hosted-mcp]",
        "scenarios/single/weather_paris.yaml::weather.single.paris[sim-anthropic-stream]",
    ]


def test_a_failure_shows_checks_findings_and_wire_not_a_traceback() -> None:
    out = pytest_run("--harness-targets", "local-gemma3-270m", "-k", "required", "-q")
    assert out.returncode == 1
    assert "protocol.provider_error: fail" in out.stdout and "HTTP 500 internal_server_error" in out.stdout
    assert "turn 0: POST http://replay.invalid/v1/chat/completions -> 500" in out.stdout
    assert "Traceback" not in out.stdout and "harness/pytest_plugin.py" not in out.stdout


def test_xdist_gives_the_same_outcomes_and_one_run_in_the_history(tmp_path: Path) -> None:
    """Two workers: the same outcomes, and the session is one run in the history (the controller
    keeps the workers' runs), with the figures one process gives."""
    from tests.helpers.cli import harness

    common = ["--harness-targets", "sim-openai,local-gemma3-270m", "-q", "-m", "single or parallel or error"]
    pytest_run(*common, "--junitxml", tmp_path / "one.xml", "--harness-history", tmp_path / "one.sqlite")
    pytest_run(
        *common, "-n", "2", "--junitxml", tmp_path / "two.xml", "--harness-history", tmp_path / "two.sqlite"
    )
    one, two = outcomes(tmp_path / "one.xml"), outcomes(tmp_path / "two.xml")
    assert one == two and len(one) >= 10
    assert set(one.values()) == {"passed", "failure"}  # the local model fails some: same ones both ways

    def figures(db: Path, target: str) -> list[Any]:
        shown = harness("history", "--db", db, "-t", target, "--json")
        assert shown.returncode == 0, shown.stderr
        return [
            {k: v for k, v in r.items() if k not in ("run_id", "started")}
            for r in json.loads(shown.stdout)["runs"]
        ]

    for target in ("sim-openai", "local-gemma3-270m"):
        alone = figures(tmp_path / "one.sqlite", target)
        assert len(alone) == 1 and figures(tmp_path / "two.sqlite", target) == alone


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


def test_only_scenario_files_are_collected_and_the_scenarios_option_narrows(
    pytester: pytest.Pytester,
) -> None:
    """A project's root holds cassettes, docker-compose.yml and mkdocs.yml besides its scenarios:
    only the scenarios become items; --harness-scenarios keeps the ones under it."""
    (pytester.path / "scenarios").mkdir()
    shutil.copy(REPO / "scenarios" / "single" / "weather_paris.yaml", pytester.path / "scenarios")
    (pytester.path / "more").mkdir()
    shutil.copy(REPO / "scenarios" / "single" / "time_tokyo.yaml", pytester.path / "more")
    shutil.copytree(REPO / "cassettes" / "sim-openai", pytester.path / "cassettes" / "sim-openai")
    pytester.makefile(".yml", **{"docker-compose": "services:\n  app:\n    image: python:3.11\n"})
    pytester.makefile(".yml", mkdocs="site_name: My agent\nnav:\n  - index.md\n")
    collect = ("--harness-targets", "sim-openai", "--collect-only", "-q", "-p", "no:cacheprovider")
    everything = pytester.runpytest_subprocess(*collect)
    assert everything.ret == 0, everything.stdout.str()
    assert sorted(line for line in everything.outlines if "::" in line) == [
        "more/time_tokyo.yaml::time.single.tokyo[sim-openai]",
        "scenarios/weather_paris.yaml::weather.single.paris[sim-openai]",
    ]
    narrowed = pytester.runpytest_subprocess(*collect, "--harness-scenarios", "scenarios")
    assert [line for line in narrowed.outlines if "::" in line] == [
        "scenarios/weather_paris.yaml::weather.single.paris[sim-openai]"
    ]


def allure_results(folder: Path) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in map(json.loads, map(Path.read_text, folder.glob("*-result.json")))}


def test_a_failed_check_is_an_allure_failure_that_names_the_check(tmp_path: Path) -> None:
    allure = tmp_path / "allure"  # not there yet: an existing folder would move pytest's rootdir
    out = pytest_run("--harness-targets", "local-gemma3-270m", "-k", "required", "--alluredir", allure, "-q")
    assert out.returncode == 1
    results = allure_results(allure)
    assert results
    for result in results.values():
        assert result["status"] == "failed", result["name"]
        message = result["statusDetails"]["message"]
        assert "failed checks: " in message and "protocol.provider_error: fail" in message
        assert "HTTP 500 internal_server_error" in message


def test_fixture_tests_get_attachments_and_an_untestable_item_is_broken(pytester: pytest.Pytester) -> None:
    (pytester.path / "scenarios").mkdir()
    shutil.copy(REPO / "scenarios" / "single" / "weather_paris.yaml", pytester.path / "scenarios")
    pytester.makepyfile(
        f"""
        def test_paris(harness):
            record = harness.run(
                "weather.single.paris", "sim-openai", scenarios={str(REPO / "scenarios")!r},
                cassettes={str(REPO / "cassettes")!r},
            )
            assert record.passed, harness.explain(record)

        def test_gemma_required(harness):
            record = harness.run(
                "tool_choice.required.weather", "local-gemma3-270m", scenarios={str(REPO / "scenarios")!r},
                cassettes={str(REPO / "cassettes")!r},
            )
            assert record.passed, harness.explain(record)
        """
    )
    allure = pytester.path / "allure"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--harness-targets", "sim-openai", "--harness-cassettes", "none",
        "--alluredir", str(allure),
    )  # fmt: skip
    result.assert_outcomes(passed=1, failed=2)
    results = allure_results(allure)
    paris, gemma = results["test_paris"], results["test_gemma_required"]
    assert (paris["status"], gemma["status"]) == ("passed", "failed")
    names = {a["name"] for a in paris["attachments"]}
    assert {
        "weather.single.paris[sim-openai] transcript",
        "weather.single.paris[sim-openai] findings",
    } <= names
    assert "weather.single.paris[sim-openai] turn 0 request" in names
    assert "tool_choice.required.weather[local-gemma3-270m] findings" in {
        a["name"] for a in gemma["attachments"]
    }
    untestable = results["weather.single.paris[sim-openai]"]
    assert untestable["status"] == "broken"
    assert "could not be tested: CassetteMissingError (cassette)" in untestable["statusDetails"]["message"]
