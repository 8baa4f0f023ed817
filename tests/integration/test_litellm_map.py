"""``harness capabilities --format litellm`` on the default run, read by LiteLLM itself: every
key it writes is one LiteLLM's own model map uses, with the same type, and a field of LiteLLM's
``ModelInfoBase`` whose type its value validates against; ``litellm.register_model`` takes the
file so that ``litellm.supports_function_calling`` and the others answer what was measured.

LiteLLM is imported with ``LITELLM_LOCAL_MODEL_COST_MAP=True``: its bundled model map, no
download (https://docs.litellm.ai/docs/completion/token_usage)."""

from __future__ import annotations

import importlib
import json
import os
import typing
from types import ModuleType
from typing import Any

import pytest

from harness.analysis.capability_map import FLAGS
from tests.helpers.cli import harness


@pytest.fixture(scope="module")
def litellm() -> ModuleType:
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # its bundled map: no network at import
    return pytest.importorskip("litellm")


@pytest.fixture(scope="module")
def maps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The default run (``harness run``: every recorded target, the bundled suite, replayed) as a
    LiteLLM map, of the real targets and (``--simulated``) of the simulator's too."""
    out = tmp_path_factory.mktemp("litellm")
    ran = harness("run", "--out", out, "--no-history")
    assert ran.returncode in (0, 1), ran.stderr[-2000:]  # gemma fails some runs: that is measured
    found = {}
    for name, flags in (("real", ()), ("simulated", ("--simulated",))):
        path = out / f"{name}.json"
        wrote = harness("capabilities", out, "--format", "litellm", *flags, "--out", path)
        assert wrote.returncode == 0, wrote.stderr
        found[name] = json.loads(path.read_text())
    assert len(found["simulated"]) > len(found["real"]) >= 2
    return found


@pytest.fixture(scope="module", params=["real", "simulated"])
def measured(request: pytest.FixtureRequest, maps: dict[str, dict[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = maps[request.param]
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


def test_every_value_has_the_type_litellm_s_model_info_gives_its_key(
    litellm: ModuleType, measured: dict[str, Any]
) -> None:
    """Each key but ``metadata`` (an object in LiteLLM's map, not in its model info) is a field
    of LiteLLM's own ``ModelInfoBase`` and its value validates, strictly, against that field's
    type (``mode`` against its literals)."""
    from pydantic import TypeAdapter

    hints = typing.get_type_hints(importlib.import_module("litellm.types.utils").ModelInfoBase)
    for name, entry in measured.items():
        for key, value in entry.items():
            if key == "metadata":
                assert isinstance(value, dict) and isinstance(value["x-harness"], dict)
                continue
            assert key in hints, f"{name}: {key} is not a field of LiteLLM's ModelInfoBase"
            TypeAdapter(hints[key]).validate_python(value, strict=True)


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
    anthropic = measured["anthropic/gemma3-270m"]["metadata"]["x-harness"]["targets"]
    assert "local-llamacpp-gemma3-270m-anthropic" in anthropic
    for name, entry in measured.items():
        for flag, ask in asks.items():
            if flag in entry:
                assert ask(model=name) is entry[flag], (name, flag)
        stored = litellm.model_cost[litellm.get_model_info(name)["key"]]  # where LiteLLM keeps it
        assert stored["metadata"]["x-harness"] == entry["metadata"]["x-harness"]
