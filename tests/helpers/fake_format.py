"""A throwaway wire format, added the way CONTRIBUTING.md says (an adapter, its simulator side,
one registry entry) and taken away again: what the tests of "add a wire format" register."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

from harness.providers.openai import OpenAIChatAdapter
from harness.providers.rules import NameRules
from harness.registry import ADAPTERS
from harness.servers.sim.wire import OPENAI

FAKE_SIM = dataclasses.replace(OPENAI, name="fake-chat", deviations={})
"""The simulator's side of the fake format (its "wire module"): OpenAI's wire under another name."""


class FakeChatAdapter(OpenAIChatAdapter):
    """A format shaped like OpenAI chat, at its own path, with rules and words of its own."""

    format = "fake-chat"
    name_rules = NameRules("fake", "a-z_", 32)
    simulator = "tests.helpers.fake_format:FAKE_SIM"
    default_path = "/fake/v1/talk"
    truncation_reasons = frozenset({"ran_out"})

    @classmethod
    def claims_url(cls, host: str, path: str) -> bool:
        return path.endswith("/fake/v1/talk")

    @classmethod
    def claims_payload(cls, data: dict[str, Any]) -> bool:
        return data.get("object") == "fake.reply" and isinstance(data.get("choices"), list)


@contextlib.contextmanager
def registered() -> Iterator[type[FakeChatAdapter]]:
    """The fake format registered, then taken away (what was built from the registry is rebuilt
    after either)."""
    before = dict(ADAPTERS._entries)
    ADAPTERS.register("fake-chat", FakeChatAdapter)  # the one registry line
    try:
        yield FakeChatAdapter
    finally:
        ADAPTERS._entries.clear()
        ADAPTERS._entries.update(before)
        ADAPTERS.version += 1
