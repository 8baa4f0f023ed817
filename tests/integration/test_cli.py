"""The harness command end to end, on the bundled suite and on copies of it."""

import json
import shutil
from pathlib import Path

import yaml

from harness import scenarios
from harness.servers.sim.server import SimServer
from tests.helpers.cli import REPO, harness

SIM_TARGETS = [
    "sim-openai",
    "sim-openai-stream",
    "sim-mistral",
    "sim-mistral-stream",
    "sim-ollama",
    "sim-ollama-stream",
]


def test_default_run_replays_the_bundled_suite(tmp_path: Path) -> None:
    first = harness("run", "--out", tmp_path / "a")
    assert first.returncode == 0, first.stderr
    for name in SIM_TARGETS:
        assert f"{name} (simulated)" in first.stdout
    assert "simulated talk to the harness's reference simulator" in first.stdout
    report = json.loads((tmp_path / "a" / "report.json").read_text())
    assert (tmp_path / "a" / "report.md").is_file() and (tmp_path / "a" / "junit.xml").is_file()
    targets = report["summary"]["targets"]
    for name in SIM_TARGETS:
        assert targets[name]["info"]["simulated"] is True
        assert targets[name]["score"] == 100
        assert all(c["score"] == 100 for c in targets[name]["categories"].values())
        assert len(targets[name]["scenarios"]) >= 12
    results = (tmp_path / "a" / "results.jsonl").read_text().splitlines()
    assert len(results) == len(report["runs"])
    suite = scenarios.load([REPO / "scenarios"])
    categories = scenarios.scenario_schema()["properties"]["category"]["enum"]
    assert len(suite) >= 80
    assert all(sum(s.category == c for s in suite) >= 4 for c in categories)
    for name, target in targets.items():  # every scenario recorded for every target, none an error
        prompted = target["info"]["mode"].startswith("prompted")  # a refusal does not apply there
        expected = [s.id for s in suite if not (prompted and s.expect.refused is not None)]
        assert sorted(target["scenarios"]) == sorted(expected), name
    assert not [r for r in report["runs"] if r["outcome"] == "error"]
    gemma = targets["local-gemma3-270m"]["categories"]
    assert set(categories) <= set(gemma) and all(gemma[c]["score"] is not None for c in categories)
    table = (tmp_path / "a" / "report.md").read_text().split("## Scores")[1].split("\n\n")[1]
    assert all(f" {c} |" in table.splitlines()[0] for c in categories)

    second = harness("run", "--out", tmp_path / "b")
    assert second.returncode == 0, second.stderr
    a = json.loads((tmp_path / "a" / "report.json").read_text())
    b = json.loads((tmp_path / "b" / "report.json").read_text())
    a.pop("generated_at"), b.pop("generated_at")
    assert a == b


def copy_suite(tmp_path: Path, targets: list[str]) -> tuple[Path, Path]:
    scenarios = tmp_path / "scenarios"
    shutil.copytree(REPO / "scenarios", scenarios)
    cassettes = tmp_path / "cassettes"
    for target in targets:
        shutil.copytree(REPO / "cassettes" / target, cassettes / target)
    return scenarios, cassettes


def test_min_score_gate_fails_when_expectations_are_not_met(tmp_path: Path) -> None:
    scenarios, cassettes = copy_suite(tmp_path, ["sim-openai"])
    path = scenarios / "single" / "weather_paris.yaml"
    data = yaml.safe_load(path.read_text())
    data["expect"]["final"] = {"contains": "snow"}  # the recorded answer does not say snow
    path.write_text(yaml.safe_dump(data))
    result = harness(
        "run",
        "--scenarios",
        scenarios,
        "--cassettes",
        cassettes,
        "--out",
        tmp_path / "out",
        "--min-score",
        "100",
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "below --min-score 100" in result.stderr
    md = (tmp_path / "out" / "report.md").read_text()
    assert "### sim-openai (1 failed)" in md and "- weather.single.paris, score" in md
    assert "final answer does not match" in md


def test_drift_is_a_clear_error_never_a_live_call(tmp_path: Path) -> None:
    scenarios, cassettes = copy_suite(tmp_path, ["sim-mistral"])
    path = scenarios / "single" / "todo_create.yaml"
    path.write_text(path.read_text().replace("buy milk", "buy oat milk"))
    result = harness(
        "run",
        "-t",
        "sim-mistral",
        "-s",
        "todo.single.create",
        "--scenarios",
        scenarios,
        "--cassettes",
        cassettes,
        "--out",
        tmp_path / "out",
    )
    assert result.returncode == 3
    assert "request drift in scenario 'todo.single.create'" in result.stderr
    assert "buy oat milk" in result.stderr and "buy milk" in result.stderr


def test_missing_cassette(tmp_path: Path) -> None:
    result = harness(
        "run",
        "-t",
        "sim-openai",
        "--cassettes",
        tmp_path / "none",
        "--out",
        tmp_path / "out",
        "-s",
        "memory.single.add",
    )
    assert result.returncode == 3
    assert "harness record --target sim-openai --scenario memory.single.add" in result.stderr


def test_validate_reports_file_line_and_pointer(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        (REPO / "scenarios/single/todo_create.yaml")
        .read_text()
        .replace("category: single", "category: singel")
    )
    result = harness("validate", bad)
    assert result.returncode == 2
    assert f"{bad}:2:" in result.stderr and "at /category" in result.stderr
    assert harness("validate").returncode == 0


def test_validate_is_one_pass_and_a_tool_set_function_never_crashes_it(tmp_path: Path) -> None:
    """Fifteen scenarios on a tool set whose function file does not import: one error (the tool
    set's, at its line), no traceback, exit 2, whatever the import did (SystemExit(7) too)."""
    (tmp_path / "toolsets").mkdir()
    for n in range(15):
        (tmp_path / f"s{n}.yaml").write_text(
            f"id: billing.s{n}\ncategory: single\ntools: [{{toolset: billing}}]\n"
            "messages: [{role: user, content: Refund 3 euros}]\n"
            "expect: {calls: [{name: refund, args: {amount: 3}}]}\n"
        )
    toolset = tmp_path / "toolsets" / "billing.yaml"
    toolset.write_text(
        "toolset: billing\ntools:\n  - name: refund\n    parameters: {type: object}\n"
        "    function: refunds.py:refund\n"
    )
    for source, said in [
        ("def refund(arguments, state:\n", "syntax error at"),
        ("raise SystemExit(7)\n", "raised SystemExit: 7"),
    ]:
        (tmp_path / "toolsets" / "refunds.py").write_text(source)
        result = harness("validate", tmp_path)
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr
        (error,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert error.startswith(f"error: {toolset}:5: function 'refunds.py:refund': ") and said in error
        assert error.endswith("at /tools/0/function")
        assert "0 scenario(s) valid; 1 error(s) in 1 file(s)" in result.stdout


def test_a_bad_target_is_refused_at_its_line_before_any_run(tmp_path: Path) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(
        '[targets.dev]\nformat = "openai-chat"\nmodel = "m"\nbase_url = "sim~nosuch"\n'
        '[targets.port]\nformat = "openai-chat"\nmodel = "m"\nbase_url = "http://127.0.0.1:99999"\n'
    )
    result = harness("run", "--mode", "live", "--target", "dev", "--out", tmp_path / "out", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "harness.toml:4: [targets.dev] base_url: unknown simulator deviation 'nosuch'" in result.stderr
    assert "harness.toml:8: [targets.port] base_url: port 99999 is out of range" in result.stderr
    config.write_text(
        '[targets.mine]\nformat = "openai-chat"\nmodel = "m"\nbase_url = "sim"\nagent = "nope:run"\n'
    )
    shutil.copytree(REPO / "scenarios", tmp_path / "scenarios")
    result = harness("run", "--mode", "live", "--target", "mine", "--out", tmp_path / "out", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert (
        "harness.toml:5: [targets.mine] agent: " in result.stderr
        and "No module named 'nope'" in result.stderr
    )
    assert (
        not (tmp_path / "out" / "results.jsonl").exists()
        or not (tmp_path / "out" / "results.jsonl").read_text()
    )


def test_validate_reports_every_bad_file_of_a_folder(tmp_path: Path) -> None:
    shutil.copytree(REPO / "scenarios", tmp_path / "s")
    paris = tmp_path / "s" / "single" / "weather_paris.yaml"
    paris.write_text(paris.read_text().replace("name: get_weather", "name: get_wether"))
    tokyo = tmp_path / "s" / "single" / "time_tokyo.yaml"
    tokyo.write_text(tokyo.read_text().replace("expect:", "tool_choice: {name: get_clock}\nexpect:"))
    todo = tmp_path / "s" / "single" / "todo_create.yaml"
    todo.write_text(todo.read_text().replace("contains:", "contain:", 1))
    result = harness("validate", tmp_path / "s")
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 3, result.stderr
    assert f"{paris}:" in result.stderr and "expected call to 'get_wether'" in result.stderr
    assert f"{tokyo}:" in result.stderr and "tool_choice names 'get_clock'" in result.stderr
    assert f"{todo}:" in result.stderr and "did you mean 'contains'" in result.stderr
    assert "3 error(s) in 3 file(s)" in result.stdout


def test_record_then_replay_a_new_cassette_set(tmp_path: Path) -> None:
    recorded = harness(
        "record",
        "-t",
        "sim-ollama-stream",
        "-s",
        "parallel",
        "--cassettes",
        tmp_path / "c",
        "--out",
        tmp_path / "o",
    )
    assert recorded.returncode == 0, recorded.stderr
    parallel = [x for x in scenarios.load([REPO / "scenarios"]) if x.category == "parallel"]
    assert sorted(p.name for p in (tmp_path / "c" / "sim-ollama-stream").iterdir()) == sorted(
        f"{x.id}.yaml" for x in parallel
    )
    replayed = harness("run", "--cassettes", tmp_path / "c", "--out", tmp_path / "r", "-s", "parallel")
    assert replayed.returncode == 0, replayed.stderr
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert list(report["summary"]["targets"]) == ["sim-ollama-stream"]


def test_report_is_rebuilt_from_results(tmp_path: Path) -> None:
    assert harness("run", "-s", "irrelevance", "--out", tmp_path / "a").returncode == 0
    rebuilt = harness("report", tmp_path / "a" / "results.jsonl", "--out", tmp_path / "b")
    assert rebuilt.returncode == 0, rebuilt.stderr
    a = json.loads((tmp_path / "a" / "report.json").read_text())
    b = json.loads((tmp_path / "b" / "report.json").read_text())
    assert a["summary"] == b["summary"] and a["runs"] == b["runs"]


def test_list_and_unknown_target(tmp_path: Path) -> None:
    listed = harness("list", "targets")
    assert listed.returncode == 0 and "sim-openai" in listed.stdout
    unknown = harness("run", "-t", "nope", "--out", tmp_path)
    assert unknown.returncode == 2 and "unknown target 'nope'; known:" in unknown.stderr


def test_a_profile_declared_in_harness_toml_works_end_to_end(tmp_path: Path) -> None:
    """A new OpenAI-compatible gateway needs no code: a profile and a target in harness.toml,
    recorded against the simulator on loopback, then replayed."""
    with SimServer(scenarios.load([REPO / "scenarios"])) as sim:
        (tmp_path / "harness.toml").write_text(
            "[profiles.gateway]\n"
            'format = "openai-chat"\n'
            f'base_url = "{sim.base_url("openai-chat")}"\n'
            'api_key_env = "GATEWAY_KEY"\n'
            'headers = {x-team = "search"}\n'
            "[targets.gateway-small]\n"
            'profile = "gateway"\n'
            'model = "small-1"\n'
        )
        listed = harness("list", "profiles", "--config", tmp_path / "harness.toml")
        assert listed.returncode == 0, listed.stderr
        assert "gateway" in listed.stdout and "harness.toml" in listed.stdout and "groq" in listed.stdout
        common = ["-t", "gateway-small", "-s", "weather.single.paris", "--config", tmp_path / "harness.toml"]
        common += ["--cassettes", tmp_path / "c"]
        keyless = harness("record", *common, "--out", tmp_path / "o")
        assert keyless.returncode == 2 and "GATEWAY_KEY" in keyless.stderr
        recorded = harness("record", *common, "--out", tmp_path / "o", env={"GATEWAY_KEY": "sk-test-123"})
        assert recorded.returncode == 0, recorded.stderr
    cassette = (tmp_path / "c" / "gateway-small" / "weather.single.paris.yaml").read_text()
    assert "x-team" in cassette and "sk-test-123" not in cassette
    replayed = harness("run", *common, "--out", tmp_path / "r", "--strict")
    assert replayed.returncode == 0, replayed.stderr
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    info = report["summary"]["targets"]["gateway-small"]
    assert info["info"]["profile"] == "gateway" and info["score"] == 100


def test_live_mcp_asks_the_mcp_server_in_a_replay(tmp_path: Path) -> None:
    """``--live-mcp``: a replay asks the scenario's MCP server itself, not its recording. With the
    recorded answer altered, a plain replay sends the altered answer to the model, and the
    requests drift from the cassette (exit 3); with ``--live-mcp`` the server's real answer goes,
    as it was recorded, and the run passes."""
    name = "mcp.single.find_symbol"
    recorded = REPO / "cassettes" / "sim-openai"
    folder = tmp_path / "cassettes" / "sim-openai"
    folder.mkdir(parents=True)
    shutil.copy(recorded / f"{name}.yaml", folder)
    recording = yaml.safe_load((recorded / f"{name}.mcp.yaml").read_text())
    assert "src/geometry.py" in recording["calls"][0]["text"]
    recording["calls"][0]["text"] = recording["calls"][0]["text"].replace("geometry.py", "elsewhere.py")
    (folder / f"{name}.mcp.yaml").write_text(yaml.safe_dump(recording))
    common = ("run", "-t", "sim-openai", "-s", name, "--cassettes", tmp_path / "cassettes")
    replayed = harness(*common, "--out", tmp_path / "replayed")
    assert replayed.returncode == 3, replayed.stderr
    assert "CassetteDriftError" in (tmp_path / "replayed" / "results.jsonl").read_text()
    live = harness(*common, "--live-mcp", "--out", tmp_path / "live")
    assert live.returncode == 0, live.stderr
