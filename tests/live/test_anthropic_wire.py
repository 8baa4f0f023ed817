"""Live tier: the bundled llama-server on its second wire, Anthropic Messages (``/v1/messages``).

llama-server converts a Messages request to a chat completion and renders it with the same chat
template, so the Gemma 3 270M GGUF (no tool template) never shows the model the tools on this
wire either. The tool-delivery probe asks in the target's own format (the tool in the Messages
shape, the prompt counted with the cache reads Anthropic's usage keeps apart), and every run
recorded here must charge the dropped tools, the cut turns and the leaked ChatML to the endpoint,
never to the model.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from harness.servers.local import local_server
from tests.helpers.llama_server_wire import need_llama_server, recorded_runs_charge_the_endpoint

pytestmark = pytest.mark.live

TARGETS = ["local-llamacpp-gemma3-270m-anthropic", "local-llamacpp-gemma3-270m-anthropic-stream"]


def test_the_probe_asks_on_the_messages_wire_and_counts_the_cached_prompt() -> None:
    """The facts a recording keeps, asked on /v1/messages; and the usage split the probe adds up:
    the same prompt twice reads most of it from the cache the second time."""
    need_llama_server()
    ask = {
        "model": "gemma3-270m",
        "max_tokens": 1,
        "temperature": 0,
        "messages": [{"role": "user", "content": "What's the weather in Paris?"}],
    }
    with local_server("gemma3-270m@llama-server") as server:
        usages = [
            httpx.post(f"{server.base_url}/v1/messages", json=ask, timeout=120).json()["usage"]
            for _ in range(2)
        ]
        facts = server.facts("anthropic-messages")
    assert facts["tools_delivered"] is False, facts
    assert facts["prompt_tokens"]["with_tools"] == facts["prompt_tokens"]["without_tools"], facts
    assert facts["evidence"].startswith("/props chat_template_caps.supports_tools = false; prompt tokens ")
    assert facts["evidence"].endswith(" with one tool on /v1/messages")
    cold, warm = ({"cache_read_input_tokens": 0} | usage for usage in usages)
    assert warm["cache_read_input_tokens"] > cold["cache_read_input_tokens"], usages
    assert warm["input_tokens"] < cold["input_tokens"], usages
    total = [u["input_tokens"] + u["cache_read_input_tokens"] for u in (cold, warm)]
    assert total[0] == total[1] == facts["prompt_tokens"]["without_tools"], (usages, facts)


def test_recorded_runs_on_the_messages_wire_charge_the_endpoint(tmp_path: Path) -> None:
    """On /v1/messages (see the helper); the cut is said: stop_reason max_tokens."""
    cut = recorded_runs_charge_the_endpoint(tmp_path, TARGETS, "/v1/messages", "llamacpp-anthropic")
    assert all(any(e.parsed.finish_reason == "max_tokens" for e in r.transcript.exchanges) for r in cut)
