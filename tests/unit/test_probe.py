"""The tool-delivery probe's reasoning, over canned answers (the live tier asks real servers:
tests/live/test_two_servers.py)."""

from __future__ import annotations

import json
from typing import Any

import httpx

from harness.servers.probe import tool_delivery


def server(props: dict[str, Any] | None, tokens: tuple[int, int] | None) -> httpx.MockTransport:
    """A server with ``props`` at /props (404 when None) whose prompt counts ``tokens`` without and
    with the tool (HTTP 500 when None)."""

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/props":
            return httpx.Response(404) if props is None else httpx.Response(200, json=props)
        if tokens is None:
            return httpx.Response(500, json={"error": {"message": "boom"}})
        with_tools = "tools" in json.loads(request.content)
        return httpx.Response(200, json={"usage": {"prompt_tokens": tokens[with_tools]}})

    return httpx.MockTransport(answer)


def probe(props: dict[str, Any] | None, tokens: tuple[int, int] | None, **options: Any) -> dict[str, Any]:
    return tool_delivery("http://127.0.0.1:9", transport=server(props, tokens), **options)


LLAMA_SERVER_PROPS = {
    "chat_template": "{% for m in messages %}...{% endfor %}",
    "model_path": "/home/me/models/x.gguf",
    "build_info": "b0-unknown",
    "chat_template_caps": {"supports_tools": False, "supports_tool_calls": False},
}


def test_the_servers_own_capability_report_decides_and_is_kept_without_paths_or_template() -> None:
    facts = probe(LLAMA_SERVER_PROPS, (31, 31))
    assert facts["tools_delivered"] is False
    assert facts["evidence"] == (
        "/props chat_template_caps.supports_tools = false; prompt tokens 31 without tools, 31 with one tool"
    )
    assert set(facts["props"]) == {"build_info", "chat_template_caps"}  # no template text, no local path


def test_prompt_tokens_decide_where_there_is_no_report() -> None:
    assert probe(None, (31, 90))["tools_delivered"] is True
    assert probe(None, (31, 31))["tools_delivered"] is False
    # llama-cpp-python renders the tools but leaves them out of its usage: equal counts prove nothing
    assert probe(None, (34, 34), usage_counts_tools=False)["tools_delivered"] is None


def test_a_failed_probe_decides_nothing_and_says_why() -> None:
    facts = probe(None, None)
    assert facts["tools_delivered"] is None and "prompt_tokens" not in facts
    assert facts["evidence"].startswith("the delivery probe failed: HTTPStatusError")
