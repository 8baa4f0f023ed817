"""Live tier: the Gemma 3 270M weights the local-* targets serve with llama-cpp-python, on llama.cpp's
own llama-server (built once by ``harness local build``, cached per version).

Measured, not assumed: llama-server renders the GGUF's chat template, and this GGUF carries
none, so llama-server falls back to a ChatML template without tools
(``/props`` ``chat_template_caps.supports_tools`` is false) and the tools never reach the
model. That is the endpoint's doing, which is what :func:`harness.local.tool_delivery`
proves from the wire.
"""

from __future__ import annotations

import os

import pytest

from harness.llamacpp import binary_path
from harness.local import local_server, tool_delivery

pytestmark = pytest.mark.live


def _need(found: bool, what: str) -> None:
    if not found:
        if os.environ.get("HARNESS_REQUIRE_LIVE"):
            pytest.fail(f"HARNESS_REQUIRE_LIVE is set but {what}")
        pytest.skip(what)


def test_llama_server_without_a_tool_template_never_shows_the_model_the_tools() -> None:
    _need(binary_path().is_file(), "llama-server is not built here: harness local build")
    with local_server("gemma3-270m@llama-server") as server:
        delivery = tool_delivery(server.base_url)
    assert not delivery.delivered, delivery.evidence()
    assert delivery.prompt_tokens_with == delivery.prompt_tokens_without
    assert delivery.props["chat_template_caps"]["supports_tools"] is False
    assert "supports_tools = False" in delivery.evidence()
