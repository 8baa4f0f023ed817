"""What an endpoint says about itself, and whether it puts a request's tools in front of the model.

A server can accept ``tools`` with HTTP 200 and never show them to the model:
llama.cpp's ``llama-server`` renders the GGUF's chat template, and when the
template has no tool support (``/props`` ``chat_template_caps.supports_tools``
false [L1]) the tools are dropped without a word. Scored as it stands, that
looks like a model that will not call. :func:`tool_delivery` asks the endpoint
the same one-token question with and without a tool and reads its capability
report where the profile knows one, so the "tools not delivered" finding can cite
the evidence (see :mod:`harness.checks.attribution`). The facts are kept in the
cassette when a run is recorded, so a replay cites them too.
"""

from __future__ import annotations

from typing import Any

import httpx

WIRE_FORMAT = "openai-chat"
"""The wire format the probe speaks: llama.cpp's servers, whose capability report it reads, serve
OpenAI Chat Completions."""

PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}

KEPT_PROPS = ("chat_template_caps", "build_info", "model_ftype", "total_slots")
"""What of llama-server's ``/props`` is kept: the template's capabilities and the build, not the
template text (large) nor local paths."""


def tool_delivery(
    base_url: str,
    *,
    headers: dict[str, str] | None = None,
    model: str = "probe",
    chat_path: str = "/v1/chat/completions",
    props_path: str | None = "/props",
    usage_counts_tools: bool = True,
    timeout_s: float = 120.0,
    transport: httpx.BaseTransport | None = None,
) -> dict[str, Any]:
    """Facts about tool delivery at an OpenAI-compatible endpoint, as plain JSON data:
    ``tools_delivered`` (``True``, ``False`` or ``None`` when nothing proves it either way),
    ``evidence`` (one sentence), ``prompt_tokens`` with and without the tool, and the kept
    ``props``.

    The capability report decides where there is one. Otherwise more prompt tokens with the tool
    prove delivery, and the same count proves the tools were left out of the prompt, unless the
    server's usage leaves them out anyway (``usage_counts_tools=False``: llama-cpp-python's
    chatml-function-calling renders the tools yet reports the same count, measured). A probe that
    fails says so in ``evidence`` and decides nothing: it never stops a run."""
    facts: dict[str, Any] = {"tools_delivered": None}
    client = httpx.Client(base_url=base_url, headers=headers or {}, timeout=timeout_s, transport=transport)
    with client:
        props: dict[str, Any] = {}
        if props_path:
            try:
                answer = client.get(props_path)
                reported = answer.json() if answer.status_code == 200 else None
                if isinstance(reported, dict):
                    props = {k: v for k, v in reported.items() if k in KEPT_PROPS}
            except (httpx.HTTPError, ValueError):
                pass
        if props:
            facts["props"] = props
        counts = []
        messages = [{"role": "user", "content": "What's the weather in Paris?"}]
        for extra in ({}, {"tools": [PROBE_TOOL]}):
            body = {"model": model, "messages": messages, "max_tokens": 1, "temperature": 0} | extra
            try:
                answer = client.post(chat_path, json=body)
                answer.raise_for_status()
                counts.append(int(answer.json()["usage"]["prompt_tokens"]))
            except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
                facts["evidence"] = f"the delivery probe failed: {type(exc).__name__}: {exc}"
                break
    said = None
    caps = props.get("chat_template_caps")
    if isinstance(caps, dict) and "supports_tools" in caps:
        facts["tools_delivered"] = bool(caps["supports_tools"])
        said = f"{props_path} chat_template_caps.supports_tools = {str(caps['supports_tools']).lower()}"
    if len(counts) == 2:
        facts["prompt_tokens"] = {"without_tools": counts[0], "with_tools": counts[1]}
        if facts["tools_delivered"] is None and (counts[1] > counts[0] or usage_counts_tools):
            facts["tools_delivered"] = counts[1] > counts[0]
        tokens = f"prompt tokens {counts[0]} without tools, {counts[1]} with one tool"
        facts["evidence"] = f"{said}; {tokens}" if said else tokens
    elif said:
        facts["evidence"] = f"{said}; {facts['evidence']}"
    return facts
