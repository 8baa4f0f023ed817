"""Live tier: the bundled llama-server on its third wire, the OpenAI Responses API (``/v1/responses``).

llama-server converts a Responses request to a chat completion [L8] and renders it with the same chat
template, so the Gemma 3 270M GGUF (no tool template) never shows the model the tools on this wire
either. The tool-delivery probe asks in the Responses shape (``input``, a flat function tool,
``max_output_tokens``), and every run recorded here must charge the dropped tools, the cut turns and
the leaked ChatML to the endpoint, never to the model.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from harness.servers.local import local_server
from tests.helpers.llama_server_wire import details, need_llama_server, recorded_runs_charge_the_endpoint

pytestmark = pytest.mark.live

TARGETS = ["local-llamacpp-gemma3-270m-responses", "local-llamacpp-gemma3-270m-responses-stream"]


def test_the_probe_asks_on_the_responses_wire_and_the_server_refuses_chaining() -> None:
    """The facts a recording keeps, asked on /v1/responses; and the refusal the profile cites: this
    server keeps no responses, so a previous_response_id is a 400 [L8]."""
    need_llama_server()
    with local_server("gemma3-270m@llama-server") as server:
        facts = server.facts("openai-responses")
        chained = httpx.post(
            f"{server.base_url}/v1/responses",
            json={
                "model": "gemma3-270m",
                "input": "hi",
                "previous_response_id": "resp_1",
                "max_output_tokens": 1,
            },
            timeout=120,
        )
    assert facts["tools_delivered"] is False, facts
    assert facts["prompt_tokens"]["with_tools"] == facts["prompt_tokens"]["without_tools"], facts
    assert facts["evidence"].startswith("/props chat_template_caps.supports_tools = false; prompt tokens ")
    assert facts["evidence"].endswith(" with one tool on /v1/responses")
    assert chained.status_code == 400 and "previous_response_id" in chained.text, chained.text


def test_recorded_runs_on_the_responses_wire_charge_the_endpoint(tmp_path: Path) -> None:
    """On /v1/responses (see the helper); the cut is unsaid: status completed at the limit."""
    cut = recorded_runs_charge_the_endpoint(tmp_path, TARGETS, "/v1/responses", "llamacpp-responses")
    # llama-server answers status completed at the limit: the cut is found by the token count
    assert all(any("did not report the cut" in d for d in details(r, "protocol.truncation")) for r in cut)
