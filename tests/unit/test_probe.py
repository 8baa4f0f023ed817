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
        "/props chat_template_caps.supports_tools = false; "
        "prompt tokens 31 without tools, 31 with one tool on /v1/chat/completions"
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


def messages_server(
    usages: tuple[dict[str, int], dict[str, int]], seen: list[httpx.Request]
) -> httpx.MockTransport:
    """An Anthropic Messages endpoint answering ``usages`` without and with the tool."""

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/props":
            return httpx.Response(404)
        with_tools = "tools" in json.loads(request.content)
        return httpx.Response(200, json={"type": "message", "content": [], "usage": usages[with_tools]})

    return httpx.MockTransport(answer)


def test_on_anthropic_messages_the_cached_prompt_counts_too() -> None:
    """llama-server's /v1/messages, measured: the second request reads the shared prefix from the
    cache, so input_tokens alone (31, then 5) would look like a prompt that shrank with the tool."""
    seen: list[httpx.Request] = []
    cold, warm = {"input_tokens": 31, "output_tokens": 1}, {"input_tokens": 5, "cache_read_input_tokens": 26}
    facts = tool_delivery(
        "http://127.0.0.1:9", wire_format="anthropic-messages", transport=messages_server((cold, warm), seen)
    )
    assert facts["prompt_tokens"] == {"without_tools": 31, "with_tools": 31}
    assert facts["tools_delivered"] is False
    assert facts["evidence"] == "prompt tokens 31 without tools, 31 with one tool on /v1/messages"
    posted = [json.loads(r.content) for r in seen if r.method == "POST"]
    assert [r.url.path for r in seen if r.method == "POST"] == ["/v1/messages"] * 2
    assert posted[1]["tools"][0]["input_schema"]["required"] == ["city"]  # the tool in the Messages shape
    assert all(r.headers["anthropic-version"] for r in seen if r.method == "POST")
    delivered = {"input_tokens": 5, "cache_read_input_tokens": 26, "cache_creation_input_tokens": 60}
    more = tool_delivery(
        "http://127.0.0.1:9",
        wire_format="anthropic-messages",
        transport=messages_server((cold, delivered), []),
    )
    assert more["tools_delivered"] is True and more["prompt_tokens"]["with_tools"] == 91


def test_a_format_the_probe_does_not_speak_decides_nothing() -> None:
    facts = tool_delivery("http://127.0.0.1:9", wire_format="gemini-generate", transport=server(None, (1, 2)))
    assert facts == {"tools_delivered": None, "evidence": "the delivery probe does not speak gemini-generate"}


def test_on_the_responses_api_the_question_is_input_and_the_tool_is_flat() -> None:
    """llama-server's /v1/responses: the question goes as ``input`` with ``max_output_tokens``, the tool
    in the flat Responses shape, and ``input_tokens`` counts the cached prompt already [RS1]."""
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/props":
            return httpx.Response(404)
        with_tools = "tools" in json.loads(request.content)
        usage = {"input_tokens": 25 + 40 * with_tools, "input_tokens_details": {"cached_tokens": 24}}
        return httpx.Response(200, json={"object": "response", "output": [], "usage": usage})

    facts = tool_delivery(
        "http://127.0.0.1:9", wire_format="openai-responses", transport=httpx.MockTransport(answer)
    )
    assert (
        facts["prompt_tokens"] == {"without_tools": 25, "with_tools": 65} and facts["tools_delivered"] is True
    )
    posted = [json.loads(r.content) for r in seen if r.method == "POST"]
    assert [r.url.path for r in seen if r.method == "POST"] == ["/v1/responses"] * 2
    assert all("messages" not in body and body["max_output_tokens"] == 1 for body in posted)
    assert posted[0]["input"][0]["content"] == "What's the weather in Paris?"
    assert posted[1]["tools"][0]["name"] == "get_weather" and "function" not in posted[1]["tools"][0]
