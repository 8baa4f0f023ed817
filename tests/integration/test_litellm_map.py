"""``harness capabilities --format litellm`` read by LiteLLM itself: every key it writes is one
LiteLLM's own model map uses, with the same type, and ``litellm.register_model`` takes the file
so that ``litellm.supports_function_calling`` and the others answer what was measured.

LiteLLM is imported with ``LITELLM_LOCAL_MODEL_COST_MAP=True``: its bundled model map, no
download (https://docs.litellm.ai/docs/completion/token_usage)."""

from __future__ import annotations

import importlib
import json
import os
from types import ModuleType
from typing import Any

import pytest

from harness.analysis.capability_map import FLAGS
from tests.helpers.cli import harness

TARGETS = ["local-gemma3-270m", "local-llamacpp-gemma3-270m-anthropic", "sim-openai", "sim-ollama"]
SCENARIOS = ["weather.parallel.*", "tool_choice.*.weather", "tool_choice.named.time", "weather.single.*"]


@pytest.fixture(scope="module")
def litellm() -> ModuleType:
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # its bundled map: no network at import
    return pytest.importorskip("litellm")


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("litellm")
    selection = [a for t in TARGETS for a in ("-t", t)] + [a for s in SCENARIOS for a in ("-s", s)]
    ran = harness("run", "--out", out, *selection)
    assert ran.returncode in (0, 1), ran.stderr[-2000:]  # gemma fails some runs: that is measured
    wrote = harness("capabilities", out, "--format", "litellm", "--simulated", "--out", out / "litellm.json")
    assert wrote.returncode == 0, wrote.stderr
    found: dict[str, Any] = json.loads((out / "litellm.json").read_text())
    return found


def test_every_key_written_is_one_litellm_s_own_map_uses(
    litellm: ModuleType, measured: dict[str, Any]
) -> None:
    """Nothing is invented under LiteLLM's names: each key of each entry appears in LiteLLM's
    bundled model_prices_and_context_window.json with a value of the same JSON type, and each
    ``mode`` is one it uses."""
    shipped: dict[str, Any] = litellm.get_model_cost_map(url="")
    shipped.pop("sample_spec", None)
    types: dict[str, set[type]] = {}
    for entry in shipped.values():
        for key, value in entry.items():
            types.setdefault(key, set()).add(type(value))
    modes = {entry.get("mode") for entry in shipped.values()}
    assert measured
    for name, entry in measured.items():
        for key, value in entry.items():
            assert key in types, f"{name}: {key} is not a key of LiteLLM's model map"
            assert type(value) in types[key], f"{name}: {key} is {type(value)}, LiteLLM's is {types[key]}"
        assert entry["mode"] in modes
        assert entry["litellm_provider"] in litellm.provider_list


def test_register_model_takes_it_and_litellm_answers_what_was_measured(
    litellm: ModuleType, measured: dict[str, Any]
) -> None:
    utils = importlib.import_module("litellm.utils")
    asks = {
        "supports_function_calling": litellm.supports_function_calling,
        "supports_parallel_function_calling": litellm.supports_parallel_function_calling,
        "supports_tool_choice": utils.supports_tool_choice,
    }
    assert set(asks) == set(FLAGS)
    litellm.register_model(measured)
    assert measured["openai/gemma3-270m"]["supports_parallel_function_calling"] is False
    assert measured["anthropic/gemma3-270m"]["metadata"]["x-harness"]["targets"] == [TARGETS[1]]
    for name, entry in measured.items():
        for flag, ask in asks.items():
            if flag in entry:
                assert ask(model=name) is entry[flag], (name, flag)
        stored = litellm.model_cost[litellm.get_model_info(name)["key"]]  # where LiteLLM keeps it
        assert stored["metadata"]["x-harness"] == entry["metadata"]["x-harness"]
