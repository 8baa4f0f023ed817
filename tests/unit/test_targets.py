import re
from pathlib import Path

import pytest

from harness.errors import ConfigError, UnknownNameError
from harness.model import Message, ToolChoice
from harness.providers import RequestOptions
from harness.targets import load_config, load_targets, pick


def test_bundled_targets_label_what_is_simulated() -> None:
    targets = load_targets()
    assert all(t.simulated for name, t in targets.items() if name.startswith("sim-"))
    assert not any(t.simulated for name, t in targets.items() if not name.startswith("sim-"))
    assert targets["local-gemma3-270m"].local_model == "gemma3-270m"
    assert targets["openai-gpt-4o-mini"].api_key_variable() == "OPENAI_API_KEY"
    assert targets["local-gemma3-270m"].api_key_variable() is None
    assert targets["sim-openai-prompted-xml"].mode_label == "prompted:xml"
    for target in targets.values():
        target.adapter()  # every bundled target builds its adapter (format, profile, protocol exist)


def test_user_file_adds_and_overrides(tmp_path: Path) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(
        '[targets.mine]\nformat = "mistral-chat"\nmodel = "m"\nprofile = "mistral"\n'
        '[targets.sim-openai]\nformat = "openai-chat"\nmodel = "other"\nbase_url = "sim"\n'
    )
    targets = load_targets(config)
    assert targets["mine"].resolved_base_url() == "https://api.mistral.ai"
    assert targets["sim-openai"].model == "other"
    assert [t.name for t in pick(targets, ["sim-openai*"])][:2] == [
        "sim-openai",
        "sim-openai-prompted-hermes",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[targets.x]\nmodel = "m"\n', "needs 'format'"),
        ('[targets.x]\nformat = "openai-chat"\nmodel = "m"\ncolour = 1\n', "unknown keys ['colour']"),
        ("[targets.x\n", "harness.toml"),
    ],
)
def test_bad_config_names_the_file_and_the_field(tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_targets(config)


def test_unknown_target_lists_the_known_ones() -> None:
    with pytest.raises(UnknownNameError, match=r"unknown target 'nope'; known: .*sim-openai"):
        pick(load_targets(), ["nope"])


def test_a_format_that_contradicts_the_profile_is_refused_with_both(tmp_path: Path) -> None:
    config = tmp_path / "harness.toml"
    config.write_text('[targets.mixed]\nformat = "ollama-chat"\nprofile = "groq"\nmodel = "m"\n')
    with pytest.raises(ConfigError) as error:
        load_targets(config)
    message = str(error.value)
    assert "'mixed'" in message and "'ollama-chat'" in message and "'openai-chat'" in message
    assert "groq" in message and str(config) in message


def test_the_format_comes_from_the_profile(tmp_path: Path) -> None:
    config = tmp_path / "harness.toml"
    config.write_text('[targets.fast]\nprofile = "groq"\nmodel = "llama"\n')
    target = load_targets(config)["fast"]
    assert target.format == "openai-chat" and target.profile.name == "groq"
    assert target.api_key_variable() == "GROQ_API_KEY"


def test_a_declared_profile_is_a_whole_endpoint(tmp_path: Path) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(
        "[profiles.gateway]\n"
        'format = "openai-chat"\n'
        'base_url = "https://llm.example.com/api"\n'
        'api_key_env = "GATEWAY_KEY"\n'
        'path = "/chat"\n'
        'headers = {x-team = "search"}\n'
        'tool_choice = ["auto", "none"]\n'
        'quirks = [{id = "slow", detail = "answers slowly"}]\n'
        "[profiles.strict-openai]\n"
        'extends = "openai"\n'
        "assistant_content_null = false\n"
        "[targets.gw]\n"
        'profile = "gateway"\n'
        'model = "small"\n'
        "[targets.so]\n"
        'profile = "strict-openai"\n'
        'model = "gpt"\n'
    )
    loaded = load_config(config)
    gateway = loaded.profiles["gateway"]
    assert gateway.headers == {"x-team": "search"} and gateway.request_path("/v1/chat/completions") == "/chat"
    assert gateway.tool_choice == frozenset({"auto", "none"}) and gateway.quirk("slow") is not None
    assert loaded.targets["gw"].resolved_base_url() == "https://llm.example.com/api"
    assert loaded.targets["gw"].api_key_variable() == "GATEWAY_KEY"
    strict = loaded.targets["so"].profile
    assert strict.format == "openai-chat" and strict.base_url == "https://api.openai.com"
    assert not strict.assistant_content_null
    request = (
        loaded.targets["gw"]
        .adapter()
        .build_request([Message("user", "hi")], [], ToolChoice("auto"), RequestOptions("small"))
    )
    assert request.path == "/chat"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[profiles.p]\nbase_url = "x"\n', "[profiles.p] needs 'format'"),
        ('[profiles.p]\nformat = "carrier-pigeon"\n', "unknown wire format 'carrier-pigeon'"),
        ('[profiles.p]\nformat = "openai-chat"\ncolour = 1\n', "[profiles.p] has unknown keys ['colour']"),
        ('[profiles.p]\nextends = "groq"\nformat = "ollama-chat"\n', "contradicts the profile it extends"),
        ('[targets.x]\nprofile = "nope"\nmodel = "m"\n', "unknown endpoint profile 'nope'"),
    ],
)
def test_bad_profiles_are_refused(tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(config)
