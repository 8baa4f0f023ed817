"""A target's ``hosted_mcp``: which wires have a connector, its mode, and whom it may migrate from."""

from __future__ import annotations

import pytest

from harness.errors import ConfigError
from harness.targets_file import read_config

BASE = """
[targets.own]
format = "openai-responses"
model = "m"
base_url = "sim"
"""


def test_a_hosted_target_may_migrate_from_the_same_wire_running_mcp_itself() -> None:
    text = BASE + '[targets.hosted]\nformat = "openai-responses"\nmodel = "m"\nbase_url = "sim"\n'
    text += 'hosted_mcp = {require_approval = "always"}\nmigrates_from = "own"\n'
    targets = read_config("harness.toml", text).targets
    assert targets["hosted"].hosted_mcp == {"require_approval": "always"}
    assert targets["hosted"].info().mode == "native+hosted-mcp" and targets["own"].info().mode == "native"


def test_hosted_mcp_on_a_wire_without_a_connector_is_refused() -> None:
    text = '[targets.chat]\nformat = "openai-chat"\nmodel = "m"\nhosted_mcp = {}\n'
    with pytest.raises(ConfigError) as caught:
        read_config("harness.toml", text)
    message = str(caught.value)
    assert "hosted_mcp" in message and "anthropic-messages, openai-responses" in message


def test_an_unknown_approval_setting_is_refused() -> None:
    text = '[targets.r]\nformat = "openai-responses"\nmodel = "m"\n'
    text += 'hosted_mcp = {require_approval = "sometimes"}\n'
    with pytest.raises(ConfigError, match="require_approval"):
        read_config("harness.toml", text)


def test_two_targets_of_one_wire_both_running_mcp_themselves_are_no_migration() -> None:
    text = BASE + '[targets.again]\nformat = "openai-responses"\nmodel = "m"\nmigrates_from = "own"\n'
    with pytest.raises(ConfigError, match="same wire format"):
        read_config("harness.toml", text)
