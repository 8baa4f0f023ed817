"""What an endpoint says about itself, and whether it puts a request's tools in front of the model.

A server can accept ``tools`` with HTTP 200 and never show them to the model:
llama.cpp's ``llama-server`` renders the GGUF's chat template, and when the
template has no tool support (``/props`` ``chat_template_caps.supports_tools``
false [L1]) the tools are dropped without a word. Scored as it stands, that
looks like a model that will not call. :func:`tool_delivery` asks the endpoint
the same one-token question with and without a tool, in the target's own wire
format (:data:`WIRES`), and reads its capability report where the profile knows
one, so the "tools not delivered" finding can cite the evidence (see
:mod:`harness.checks.attribution`). The facts are kept in the cassette when a
run is recorded, so a replay cites them too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from harness.providers.anthropic import API_VERSION


def _chat_prompt_tokens(answer: dict[str, Any]) -> int:
    return int(answer["usage"]["prompt_tokens"])


def _messages_prompt_tokens(answer: dict[str, Any]) -> int:
    """Anthropic counts the prompt read from or written to the cache apart from ``input_tokens``
    [A3]; llama-server does the same on ``/v1/messages`` (measured: 31 input tokens on a cold
    cache, then 5 input and 26 ``cache_read_input_tokens`` for the same prompt)."""
    usage = answer["usage"]
    cached = (usage.get(k) or 0 for k in ("cache_read_input_tokens", "cache_creation_input_tokens"))
    return int(usage["input_tokens"]) + sum(int(n) for n in cached)


def _responses_prompt_tokens(answer: dict[str, Any]) -> int:
    """The Responses API counts cached tokens inside ``input_tokens`` [RS1]."""
    return int(answer["usage"]["input_tokens"])


def _messages_body(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"messages": messages, "max_tokens": 1}


def _input_body(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"input": messages, "max_output_tokens": 1}


@dataclass(frozen=True)
class ProbeWire:
    """How the probe asks in one wire format: where, the tool in its shape, the headers it needs,
    where the question and the token limit go, and where the answer counts the prompt."""

    path: str
    tool: dict[str, Any]
    prompt_tokens: Callable[[dict[str, Any]], int]
    headers: dict[str, str] = field(default_factory=dict)
    body: Callable[[list[dict[str, Any]]], dict[str, Any]] = _messages_body


_DESCRIPTION = "Current weather for a city."
_PARAMETERS = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}

WIRES: dict[str, ProbeWire] = {
    "openai-chat": ProbeWire(
        "/v1/chat/completions",
        {
            "type": "function",
            "function": {"name": "get_weather", "description": _DESCRIPTION, "parameters": _PARAMETERS},
        },
        _chat_prompt_tokens,
    ),
    "anthropic-messages": ProbeWire(
        "/v1/messages",
        {"name": "get_weather", "description": _DESCRIPTION, "input_schema": _PARAMETERS},
        _messages_prompt_tokens,
        {"anthropic-version": API_VERSION},
    ),
    "openai-responses": ProbeWire(
        "/v1/responses",
        {"type": "function", "name": "get_weather", "description": _DESCRIPTION, "parameters": _PARAMETERS},
        _responses_prompt_tokens,
        body=_input_body,
    ),
}
"""The wire formats the probe speaks: those llama.cpp's llama-server, whose capability report it
reads, serves with tools (the same chat template renders both)."""

KEPT_PROPS = ("chat_template_caps", "build_info", "model_ftype", "total_slots")
"""What of llama-server's ``/props`` is kept: the template's capabilities and the build, not the
template text (large) nor local paths."""


def tool_delivery(
    base_url: str,
    *,
    headers: dict[str, str] | None = None,
    model: str = "probe",
    wire_format: str = "openai-chat",
    path: str | None = None,
    props_path: str | None = "/props",
    usage_counts_tools: bool = True,
    timeout_s: float = 120.0,
    transport: httpx.BaseTransport | None = None,
) -> dict[str, Any]:
    """Facts about tool delivery at an endpoint speaking ``wire_format`` (one of :data:`WIRES`; at
    ``path``, its usual path by default), as plain JSON data:
    ``tools_delivered`` (``True``, ``False`` or ``None`` when nothing proves it either way),
    ``evidence`` (one sentence), ``prompt_tokens`` with and without the tool, and the kept
    ``props``.

    The capability report decides where there is one. Otherwise more prompt tokens with the tool
    prove delivery, and the same count proves the tools were left out of the prompt, unless the
    server's usage leaves them out anyway (``usage_counts_tools=False``: llama-cpp-python's
    chatml-function-calling renders the tools yet reports the same count, measured). A probe that
    fails, or a format it does not speak, says so in ``evidence`` and decides nothing: it never
    stops a run."""
    wire = WIRES.get(wire_format)
    if wire is None:
        return {"tools_delivered": None, "evidence": f"the delivery probe does not speak {wire_format}"}
    path = path or wire.path
    facts: dict[str, Any] = {"tools_delivered": None}
    headers = wire.headers | (headers or {})
    client = httpx.Client(base_url=base_url, headers=headers, timeout=timeout_s, transport=transport)
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
        for extra in ({}, {"tools": [wire.tool]}):
            body = {"model": model, "temperature": 0} | wire.body(messages) | extra
            try:
                answer = client.post(path, json=body)
                answer.raise_for_status()
                counts.append(wire.prompt_tokens(answer.json()))
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
        tokens = f"prompt tokens {counts[0]} without tools, {counts[1]} with one tool on {path}"
        facts["evidence"] = f"{said}; {tokens}" if said else tokens
    elif said:
        facts["evidence"] = f"{said}; {facts['evidence']}"
    return facts
