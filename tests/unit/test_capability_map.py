"""The capability grid as a LiteLLM model map and as dated, tiered JSON, from real replayed runs
(the committed cassettes of Gemma 3 270M on llama-cpp-python, and the simulator)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

from harness.analysis.capabilities import capabilities
from harness.analysis.capability_map import (
    FLAGS,
    Provenance,
    grid_json,
    litellm_map,
    provenance,
)
from harness.errors import ConfigError
from harness.providers import formats
from harness.providers.litellm_names import FORMATS, PROVIDERS
from harness.providers.profiles import PROFILES
from harness.records import RunError, RunRecord, TargetInfo
from tests.helpers.result_sets import replay_bundled

TARGETS = [
    "local-gemma3-270m",
    "local-gemma3-270m-stream",
    "sim-openai",
    "sim-ollama",
    "sim-openai-prompted-json",
]
CASES = [
    "weather.parallel.two_cities",
    "tool_choice.required.weather",
    "tool_choice.named.time",
    "weather.single.paris",
]
SOURCE = Provenance("2026-11-26T10:00:00Z", "9.9.9", "20261126T100000Z-abcd1234", "results.jsonl")


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> list[RunRecord]:
    return replay_bundled(TARGETS, CASES, tmp_path_factory.mktemp("capability-map") / "r.jsonl")


def entry(found: dict[str, Any], key: str) -> dict[str, Any]:
    value: dict[str, Any] = found[key]
    return value


def test_one_entry_per_model_under_the_name_litellm_calls(records: list[RunRecord]) -> None:
    found = litellm_map(records, SOURCE, simulated=True)
    assert list(found) == ["ollama_chat/sim-conformant", "openai/gemma3-270m", "openai/sim-conformant"]
    gemma = entry(found, "openai/gemma3-270m")["metadata"]["x-harness"]
    assert gemma["targets"] == ["local-gemma3-270m", "local-gemma3-270m-stream"]
    assert gemma["simulated"] is False
    sim = entry(found, "openai/sim-conformant")["metadata"]["x-harness"]
    assert sim["targets"] == ["sim-openai"]  # the prompted target says nothing of native calls
    assert sim["simulated"] is True


def test_the_flags_are_what_the_runs_showed(records: list[RunRecord]) -> None:
    found = litellm_map(records, SOURCE, simulated=True)
    gemma = entry(found, "openai/gemma3-270m")
    assert gemma["litellm_provider"] == "openai" and gemma["mode"] == "chat"
    assert gemma["supports_function_calling"] is True  # calls in some runs
    assert gemma["supports_parallel_function_calling"] is False  # never two in one turn
    assert gemma["supports_tool_choice"] is False  # required: refused (HTTP 500)
    evidence = gemma["metadata"]["x-harness"]["evidence"]
    assert evidence["supports_tool_choice"]["value"] == "no"
    assert "tool_choice_required: no" in evidence["supports_tool_choice"]["detail"]
    assert "refused (HTTP 500)" in evidence["supports_tool_choice"]["detail"]
    sim = entry(found, "openai/sim-conformant")
    assert [sim[flag] for flag in FLAGS] == [True, True, True]
    ollama = entry(found, "ollama_chat/sim-conformant")
    assert ollama["supports_tool_choice"] is False  # /api/chat has no tool_choice field


def test_each_flag_names_the_runs_of_its_grid_cells(records: list[RunRecord]) -> None:
    """The evidence of a flag is every run of the cells it is decided by, as the grid has them."""
    grid = capabilities(records)["targets"]["sim-openai"]
    sim = entry(litellm_map(records, SOURCE, simulated=True), "openai/sim-conformant")["metadata"][
        "x-harness"
    ]
    assert sim["evidence"]["supports_parallel_function_calling"]["runs"] == grid["parallel_calls"]["runs"]
    choice = sorted({r for c in FLAGS["supports_tool_choice"] for r in grid[c]["runs"]})
    assert sim["evidence"]["supports_tool_choice"]["runs"] == choice
    assert {"date", "harness_version", "run", "tier"} <= set(sim)
    assert (sim["date"], sim["harness_version"], sim["run"]) == (SOURCE.date, "9.9.9", SOURCE.run)


def test_an_untested_flag_is_left_out_for_litellm_s_own_value(records: list[RunRecord]) -> None:
    """A flag no run could decide is not written: LiteLLM's own value stands."""
    single = [r for r in records if r.scenario == "weather.single.paris"]
    found = entry(litellm_map(single, SOURCE, simulated=True), "openai/sim-conformant")
    assert found["supports_function_calling"] is True
    assert "supports_parallel_function_calling" not in found and "supports_tool_choice" not in found
    evidence = found["metadata"]["x-harness"]["evidence"]
    assert evidence["supports_tool_choice"] == {"value": "untested", "detail": "no run tested it", "runs": []}


def test_simulated_targets_are_left_out_unless_asked(records: list[RunRecord]) -> None:
    assert list(litellm_map(records, SOURCE)) == ["openai/gemma3-270m"]


def test_a_simulated_and_a_real_target_never_share_an_entry(records: list[RunRecord]) -> None:
    """The simulator's runs are never counted as a model's: a simulated target whose LiteLLM name
    is a real target's is refused, both named (as ``harness init``'s twin would be)."""
    twin = TargetInfo("sim-local", "openai-chat", "gemma3-270m", True, False, "native", "openai")
    sim = [dataclasses.replace(r, target=twin) for r in records if r.target.name == "sim-openai"]
    gemma = [r for r in records if r.target.name == "local-gemma3-270m"]
    with pytest.raises(ConfigError, match=r"openai/gemma3-270m .*local-gemma3-270m, sim-local"):
        litellm_map(gemma + sim, SOURCE, simulated=True)
    assert list(litellm_map(gemma + sim, SOURCE)) == ["openai/gemma3-270m"]


def test_the_tier_follows_how_the_runs_were_made(records: list[RunRecord]) -> None:
    sim = [r for r in records if r.target.name == "sim-openai"]

    def tier(runs: list[RunRecord]) -> str:
        found = entry(litellm_map(runs, SOURCE, simulated=True), "openai/sim-conformant")
        tier: str = found["metadata"]["x-harness"]["tier"]
        return tier

    assert tier(sim) == "replayed"
    assert tier([dataclasses.replace(r, mode="record") for r in sim]) == "verified"
    assert tier([dataclasses.replace(r, mode="live") for r in sim]) == "verified"
    mixed = [dataclasses.replace(r, mode="live") for r in sim[1:]] + sim[:1]
    assert tier(mixed) == "replayed"
    failed = RunError("TransportError", "no response", cause="transport")
    assert tier([dataclasses.replace(r, outcome="error", error=failed) for r in sim]) == "untested"


def test_the_full_grid_is_dated_and_tiered(records: list[RunRecord]) -> None:
    found = grid_json(records, SOURCE)
    assert found["x-harness"]["date"] == SOURCE.date
    assert found["x-harness"]["tiers"] == {name: "replayed" for name in sorted(TARGETS)}
    assert {k: v for k, v in found.items() if k != "x-harness"} == capabilities(records)
    json.dumps(found)


def test_every_profile_and_format_named_exists() -> None:
    assert set(PROVIDERS) <= set(PROFILES)
    assert set(FORMATS) == set(formats())


def test_provenance_reads_the_run_folder(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "20261126T101112Z-0badf00d"
    run.mkdir(parents=True)
    (run / "results.jsonl").write_text("{}\n")
    (run / "run.json").write_text(json.dumps({"run_id": run.name, "started": "20261126T101112Z"}))
    (tmp_path / "results.jsonl").write_text("{}\n")  # published copy of the same run
    (tmp_path / "report.json").write_text(json.dumps({"harness_version": "1.2.3"}))
    for path in (run / "results.jsonl", tmp_path / "results.jsonl"):
        found = provenance(path)
        assert (found.date, found.run) == ("2026-11-26T10:11:12Z", run.name)
    assert provenance(tmp_path / "results.jsonl").harness_version == "1.2.3"


def test_provenance_without_a_run_folder_is_the_file_s_time(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text("{}\n")
    os.utime(path, (1_790_000_000, 1_790_000_000))
    found = provenance(path)
    assert (found.date, found.run) == ("2026-09-21T14:13:20Z", None)


def test_a_wire_without_tool_choice_none_still_supports_tool_choice(tmp_path: Path) -> None:
    """Bedrock Converse forces a call (``any``, ``tool``) but has no "none": LiteLLM may send it
    ``tool_choice``, so the flag is true and "none" is shown beside, deciding nothing."""
    cases = ["tool_choice.required.weather", "tool_choice.named.time", "tool_choice.none.weather"]
    found = litellm_map(replay_bundled(["sim-bedrock"], cases, tmp_path / "r.jsonl"), SOURCE, simulated=True)
    (bedrock,) = found.values()
    assert bedrock["supports_tool_choice"] is True
    detail = bedrock["metadata"]["x-harness"]["evidence"]["supports_tool_choice"]["detail"]
    assert "tool_choice_required: yes" in detail and "tool_choice_named: yes" in detail
    assert "tool_choice_none (shown, not deciding): no" in detail
