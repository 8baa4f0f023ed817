"""``harness compare``, ``harness baseline``, ``harness run --baseline`` and expected failures,
end to end in subprocesses, on result sets that differ in known ways (tests/helpers/result_sets.py)
and on the bundled local Gemma target's recordings."""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.analysis.compare import compare, load
from harness.results.store import store_path
from tests.helpers import result_sets
from tests.helpers.cli import REPO, harness
from tests.helpers.result_sets import BROKEN, SCENARIOS

GEMMA = "local-gemma3-270m"


@pytest.fixture(scope="module")
def sets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return result_sets.base_and_new(tmp_path_factory.mktemp("sets"))


def scenario_options() -> list[str]:
    return [arg for scenario in SCENARIOS for arg in ("-s", scenario)]


def run(cassettes: Path, out: Path, *args: str | Path, targets: tuple[str, ...] = result_sets.TARGETS):
    target_options = [arg for target in targets for arg in ("-t", target)]
    return harness("run", "--cassettes", cassettes, "--out", out, *target_options, *args)


def test_compare_prints_the_changes_and_exits_5_on_a_regression(sets: tuple[Path, Path]) -> None:
    base, new = sets
    out = harness("compare", base, new)
    assert out.returncode == 5, out.stderr
    assert out.stdout.splitlines() == [
        f"base: {base}",
        f"new:  {new}",
        *compare(load(base), load(new)).lines(),  # the library's lines, checked in tests/unit/test_compare.py
    ]
    assert "  ! new error    time.single.tokyo: pass -> error (cassette)" in out.stdout.splitlines()
    assert f"    fixed        {BROKEN}: fail -> pass" in out.stdout.splitlines()
    same = harness("compare", base, base)
    assert same.returncode == 0, same.stderr
    assert (
        same.stdout.splitlines()[-1]
        == "no regression, 0 fix(es) in 2 target(s) compared (tolerance 0 point(s))"
    )


def test_compare_json(sets: tuple[Path, Path]) -> None:
    out = harness("compare", "--json", *sets)
    assert out.returncode == 5, out.stderr
    data = json.loads(out.stdout)
    assert data["base"] == str(sets[0]) and data["tolerance"] == 0
    assert len(data["regressions"]) == 5
    (mistral,) = [t for t in data["targets"] if t["target"] == "sim-mistral"]
    assert mistral["counts"] == {"fixed": 2, "score rise": 1, "gone finding": 1}


def test_a_baseline_file_compares_like_its_results(sets: tuple[Path, Path], tmp_path: Path) -> None:
    base, new = sets
    written = harness("baseline", base, "--out", tmp_path / "harness-baseline.json")
    assert written.returncode == 0, written.stderr
    assert "6 target x scenario entries (2 target(s); 1 failing, 0 in error)" in written.stderr
    from_file = harness("compare", tmp_path / "harness-baseline.json", new)
    from_results = harness("compare", base, new)
    assert from_file.stdout.splitlines()[2:] == from_results.stdout.splitlines()[2:]
    assert from_file.returncode == 5


def test_baseline_defaults_to_reports_results_and_harness_baseline_json(
    sets: tuple[Path, Path], tmp_path: Path
) -> None:
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "results.jsonl").write_bytes(sets[0].read_bytes())
    (tmp_path / "reports" / "results.shared.jsonl.gz").write_bytes(store_path(sets[0]).read_bytes())
    out = harness("baseline", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert load(tmp_path / "harness-baseline.json").entries == load(sets[0]).entries
    missing = harness("baseline", tmp_path / "nowhere", cwd=tmp_path)
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_run_with_a_baseline_exits_5_on_a_regression_and_0_without(tmp_path: Path) -> None:
    """The baseline is written from a first run; a second run over cassettes with one answer made
    useless is a regression (exit 5, listed in the output and in report.json); the first
    cassettes again are not."""
    good = result_sets.cassettes(tmp_path / "good")
    first = run(good, tmp_path / "first", *scenario_options())
    assert first.returncode == 0, first.stderr
    baseline = tmp_path / "harness-baseline.json"
    assert harness("baseline", tmp_path / "first", "--out", baseline).returncode == 0

    bad = result_sets.cassettes(tmp_path / "bad", broken=[("sim-openai", BROKEN)])
    out = run(bad, tmp_path / "second", *scenario_options(), "--baseline", baseline, "--tolerance", "50")
    assert out.returncode == 5, out.stdout + out.stderr
    assert f"  ! new failure  {BROKEN}: pass -> fail" in out.stdout.splitlines()
    assert "regression(s) against the baseline: sim-openai weather.single.paris: new failure" in out.stderr
    report = json.loads((tmp_path / "second" / "report.json").read_text())
    assert report["baseline"]["base"] == str(baseline)
    # the scenario, its check and its score (100 -> 0); the target's drop (33 points) is within 50
    assert report["baseline"]["lines"][-1].startswith("3 regression(s)")
    assert f"  ! new failure  {BROKEN} expect.final: fails now" in report["baseline"]["lines"]

    again = run(good, tmp_path / "third", *scenario_options(), "--baseline", baseline)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "no regression, 0 fix(es) in 2 target(s) compared (tolerance 0 point(s))" in again.stdout


def test_a_bad_baseline_is_bad_input_before_anything_runs(tmp_path: Path) -> None:
    baseline = tmp_path / "harness-baseline.json"
    baseline.write_text('{"schema": "harness.baseline/0", "entries": []}\n')
    out = harness("run", "-t", "sim-openai", "--out", tmp_path / "out", "--baseline", baseline)
    assert out.returncode == 2
    assert f"{baseline}:1: baseline format 'harness.baseline/0'" in out.stderr
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def gemma(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A snapshot of the Gemma target's cassettes (they may be re-recorded while tests run) and
    the scenarios it fails there, found by a first replay (not hard-coded: scores move when
    the model is re-recorded)."""
    root = result_sets.snapshot(GEMMA, tmp_path_factory.mktemp("gemma"))
    failing = sorted({r.scenario for r in result_sets.replay_all(GEMMA, root) if r.outcome == "fail"})
    assert failing, "the local Gemma target fails some scenarios"
    return root, failing


def xfail_config(path: Path, target: str, scenarios: list[str], *extra: str) -> Path:
    entries = "\n".join(f'"{scenario}" = "Gemma 3 270M gets it wrong"' for scenario in scenarios)
    path.write_text(f"[targets.{target}.xfail]\n{entries}\n" + "".join(f"\n{line}" for line in extra))
    return path


def test_xfail_turns_the_gemma_failures_into_expected_ones(
    gemma: tuple[Path, list[str]], tmp_path: Path
) -> None:
    cassettes, failing = gemma
    without = run(cassettes, tmp_path / "a", "--strict", targets=(GEMMA,))
    assert without.returncode == 1, without.stdout + without.stderr
    assert "failed (--strict)" in without.stderr

    config = xfail_config(tmp_path / "harness.toml", GEMMA, failing)
    out = run(cassettes, tmp_path / "b", "--strict", "--config", config, targets=(GEMMA,))
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"expected failures (xfail in harness.toml): {len(failing)} xfail, 0 xpass" in out.stdout
    suite = ET.parse(tmp_path / "b" / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("skipped"), suite.get("failures")) == (str(len(failing)), "0")
    report = json.loads((tmp_path / "b" / "report.json").read_text())
    assert sorted(report["xfail"][GEMMA]["scenarios"]) == failing


def test_a_target_min_score_gates_that_target_only(gemma: tuple[Path, list[str]], tmp_path: Path) -> None:
    cassettes, _ = gemma
    config = tmp_path / "harness.toml"
    config.write_text(f"[targets.{GEMMA}]\nmin_score = 100\n")
    low = run(cassettes, tmp_path / "a", "--config", config, targets=(GEMMA,))
    assert (
        low.returncode == 1 and "below the target's min_score (harness.toml): local-gemma3-270m" in low.stderr
    )
    config.write_text(f"[targets.{GEMMA}]\nmin_score = 0\n")
    overridden = run(cassettes, tmp_path / "b", "--config", config, "--min-score", "100", targets=(GEMMA,))
    assert overridden.returncode == 0, overridden.stderr


def test_an_xpass_fails_when_strict_and_is_reported_when_not(tmp_path: Path) -> None:
    cassettes = result_sets.cassettes(tmp_path / "c")
    config = xfail_config(tmp_path / "harness.toml", "sim-openai", [BROKEN])
    strict = run(cassettes, tmp_path / "a", *scenario_options(), "--config", config)
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert (
        "expected failures (xfail in harness.toml): 0 xfail, 1 xpass (1 strict: failing the gate)"
        in strict.stdout
    )
    assert (
        "1 run(s) expected to fail passed (xpass; xfail_strict): sim-openai/weather.single.paris"
        in strict.stderr
    )
    junit = (tmp_path / "a" / "junit.xml").read_text()
    assert "XPASS(strict): expected to fail (Gemma 3 270M gets it wrong) but passed" in junit

    config = xfail_config(
        tmp_path / "harness.toml", "sim-openai", [BROKEN], "[targets.sim-openai]", "xfail_strict = false"
    )
    lenient = run(cassettes, tmp_path / "b", *scenario_options(), "--config", config)
    assert lenient.returncode == 0, lenient.stdout + lenient.stderr
    assert "expected failures (xfail in harness.toml): 0 xfail, 1 xpass" in lenient.stdout


def test_an_xfail_that_matches_no_scenario_is_warned_about(tmp_path: Path) -> None:
    config = xfail_config(tmp_path / "harness.toml", "sim-openai", ["weather.single.pariss"])
    out = run(REPO / "cassettes", tmp_path / "out", "-s", BROKEN, "--config", config, targets=("sim-openai",))
    assert out.returncode == 0, out.stderr
    assert (
        "warning: xfail 'weather.single.pariss' of target sim-openai matches no scenario of this run"
        in out.stderr
    )


def test_a_check_that_passed_and_now_warns_is_a_regression(tmp_path: Path) -> None:
    """The endpoint starts sending arguments as an object where the wire format says a string:
    the run still passes, protocol.wire warns and the score drops a little. Within the tolerance,
    the warning alone is the regression (exit 5)."""
    config = tmp_path / "harness.toml"

    def live(deviation: str, out: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
        target = 'format = "openai-chat"\nmodel = "sim-conformant"'
        config.write_text(f'[targets.gateway]\n{target}\nbase_url = "sim{deviation}"\n')
        options = ("--config", config, "--out", tmp_path / out, "-t", "gateway", "-s", "weather.single.paris")
        return harness("run", "--live", *options, *args)

    assert live("", "before").returncode == 0
    baseline = tmp_path / "harness-baseline.json"
    assert harness("baseline", tmp_path / "before", "--out", baseline).returncode == 0
    assert json.loads(baseline.read_text())["entries"][0]["warned"] == {}
    after = live("~args-object", "after", "--baseline", baseline, "--tolerance", "10")
    assert after.returncode == 5, after.stdout + after.stderr
    assert "  ! new warning  weather.single.paris protocol.wire: warns now" in after.stdout.splitlines()
    assert "gateway weather.single.paris protocol.wire: new warning: warns now" in after.stderr
    report = json.loads((tmp_path / "after" / "report.json").read_text())
    assert [r["checks"]["protocol.wire"] for r in report["runs"]] == ["warn"]
    compared = harness("compare", tmp_path / "before", tmp_path / "after", "--tolerance", "10")
    assert compared.returncode == 5 and "1 regression(s)" in compared.stdout.splitlines()[-1]
