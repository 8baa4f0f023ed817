"""``harness init``'s project (:mod:`harness.scaffold`): a config every profile's target loads
from, scenarios that load, one per main category, and nothing ever written over a file."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import harness
from harness import scenarios
from harness.errors import ConfigError
from harness.scaffold import SCENARIOS, WORKFLOW, default_model, plan, profiles, write
from harness.targets_file import read_config


@pytest.mark.parametrize("profile", profiles())
def test_the_config_loads_for_every_profile(profile: str) -> None:
    project = plan(profile, "some-model")
    config = read_config("harness.toml", project.files[Path("harness.toml")])
    target, twin = config.targets[project.target], config.targets[project.sim_target]
    assert target.profile.name == profile and target.model == "some-model" and not target.simulated
    assert twin.simulated and twin.format == target.format and twin.name.startswith("sim-")


def test_the_scenarios_load_one_per_main_category(tmp_path: Path) -> None:
    write(plan("openai", "gpt-4o-mini"), tmp_path)
    suite = scenarios.load([tmp_path / "scenarios"])
    assert sorted(s.category for s in suite) == sorted(SCENARIOS)
    assert all(s.id.startswith("orders.") for s in suite)


def test_the_workflow_replays_and_gates_on_the_baseline(tmp_path: Path) -> None:
    write(plan("mistral", "mistral-small-latest"), tmp_path)
    workflow = yaml.safe_load((tmp_path / WORKFLOW).read_text())
    runs = [step.get("run", "") for step in workflow["jobs"]["harness"]["steps"]]
    assert "harness run --baseline harness-baseline.json" in runs
    assert f"toolcall-harness=={harness.__version__}" in workflow["env"]["HARNESS"]


def test_nothing_is_written_when_a_file_exists(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "single.yaml").write_text("mine\n")
    (tmp_path / "harness.toml").write_text("# mine\n")
    with pytest.raises(ConfigError) as caught:
        write(plan("openai", "gpt-4o-mini"), tmp_path)
    assert caught.value.exit_code == 2
    assert str(tmp_path / "harness.toml") in str(caught.value)
    assert str(tmp_path / "scenarios" / "single.yaml") in str(caught.value)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == [
        Path("harness.toml"),
        Path("scenarios"),
        Path("scenarios/single.yaml"),
    ]
    assert (tmp_path / "harness.toml").read_text() == "# mine\n"


def test_a_dangling_link_counts_as_a_file(tmp_path: Path) -> None:
    (tmp_path / "harness.toml").symlink_to(tmp_path / "nowhere")
    with pytest.raises(ConfigError, match=r"harness\.toml"):
        write(plan("openai", "gpt-4o-mini"), tmp_path)
    assert not (tmp_path / "scenarios").exists()


def test_an_unknown_profile_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown profile 'opneai'.*openai"):
        plan("opneai", "x")


def test_the_default_model_is_a_bundled_target_s_on_the_provider() -> None:
    assert default_model("openai") == "gpt-4o-mini"  # not the local model served as "openai"
    assert default_model("mistral") == "mistral-small-latest"
    assert default_model("xai") is None
