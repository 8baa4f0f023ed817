import re
from pathlib import Path

import pytest

from harness.errors import ConfigError, UnknownNameError
from harness.targets import load_targets, pick


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
