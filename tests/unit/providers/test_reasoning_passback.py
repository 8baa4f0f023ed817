"""The harness's own loop sends back each format's reasoning with the tool result.

Each case parses a response as the provider writes it (its reasoning artefact beside one call),
turns it into the assistant message the loop appends, and builds the next request with the tool
result: the artefact must be in that request, where the provider requires it (the citation key
of :mod:`harness.providers.sources` names where that is documented or was recorded).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from harness.model import Message, ToolChoice, ToolResult, ToolSpec, WireResponse
from harness.providers import RequestOptions, adapter_class
from harness.providers.sources import SOURCES

WEATHER = ToolSpec(
    "weather", "Weather for a city", {"type": "object", "properties": {"city": {"type": "string"}}}
)
ARGS = {"city": "Paris"}
CALL_ID = "call_1"

CHAT = {
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "reasoning_content": "The user wants the weather.",
                "tool_calls": [
                    {
                        "id": CALL_ID,
                        "type": "function",
                        "function": {"name": "weather", "arguments": json.dumps(ARGS)},
                    }
                ],
            },
            "finish_reason": "tool_calls",
        }
    ]
}
THINKING = {"type": "thinking", "thinking": "The user wants the weather.", "signature": "c2lnbmF0dXJl"}
ANTHROPIC = {
    "type": "message",
    "role": "assistant",
    "content": [THINKING, {"type": "tool_use", "id": CALL_ID, "name": "weather", "input": ARGS}],
    "stop_reason": "tool_use",
    "usage": {"input_tokens": 5, "output_tokens": 7},
}
GEMINI = {
    "candidates": [
        {
            "content": {
                "role": "model",
                "parts": [
                    {
                        "functionCall": {"id": CALL_ID, "name": "weather", "args": ARGS},
                        "thoughtSignature": "U0lH",
                    }
                ],
            },
            "finishReason": "STOP",
        }
    ]
}
REASONING_CONTENT = {"reasoningContent": {"reasoningText": {"text": "Weather wanted.", "signature": "SIG"}}}
BEDROCK = {
    "output": {
        "message": {
            "role": "assistant",
            "content": [
                REASONING_CONTENT,
                {"toolUse": {"toolUseId": CALL_ID, "name": "weather", "input": ARGS}},
            ],
        }
    },
    "stopReason": "tool_use",
    "usage": {"inputTokens": 5, "outputTokens": 7, "totalTokens": 12},
}
COHERE = {
    "id": "r",
    "finish_reason": "TOOL_CALL",
    "message": {
        "role": "assistant",
        "tool_plan": "I will look up the weather.",
        "tool_calls": [
            {
                "id": CALL_ID,
                "type": "function",
                "function": {"name": "weather", "arguments": json.dumps(ARGS)},
            }
        ],
    },
}
REASONING_ITEM = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "ZW5j"}
RESPONSES = {
    "id": "resp_1",
    "object": "response",
    "status": "completed",
    "output": [
        REASONING_ITEM,
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": CALL_ID,
            "name": "weather",
            "arguments": json.dumps(ARGS),
            "status": "completed",
        },
    ],
}
THOUGHT = {"type": "thought", "signature": "U0lH"}
INTERACTIONS = {
    "id": "v1_1",
    "status": "requires_action",
    "steps": [THOUGHT, {"type": "function_call", "id": CALL_ID, "name": "weather", "arguments": ARGS}],
}


def _assistant(body: dict[str, Any], key: str = "messages") -> Any:
    return next(m for m in body[key] if m.get("role") in ("assistant", "model"))


CASES: dict[str, tuple[dict[str, Any], dict[str, Any], str, Callable[[dict[str, Any]], bool]]] = {
    "openai-chat": (
        CHAT,
        {},
        "X1",
        lambda b: _assistant(b)["reasoning_content"] == "The user wants the weather.",
    ),
    "anthropic-messages": (ANTHROPIC, {}, "A16", lambda b: _assistant(b)["content"][0] == THINKING),
    "gemini-generate": (
        GEMINI,
        {},
        "G19",
        lambda b: _assistant(b, "contents")["parts"][0]["thoughtSignature"] == "U0lH",
    ),
    "bedrock-converse": (BEDROCK, {}, "B15", lambda b: _assistant(b)["content"][0] == REASONING_CONTENT),
    "cohere-chat": (COHERE, {}, "CO8", lambda b: _assistant(b)["tool_plan"] == "I will look up the weather."),
    "openai-responses": (
        RESPONSES,
        {"store": False},
        "RS20",
        lambda b: (
            [i.get("type") for i in b["input"][1:3]] == ["reasoning", "function_call"]
            and b["input"][1]["encrypted_content"] == "ZW5j"
        ),
    ),
    "gemini-interactions": (
        INTERACTIONS,
        {"store": False},
        "GI1",
        lambda b: (
            THOUGHT in [s for turn in b["input"] for s in (turn.get("content") or [])]
            or THOUGHT in b["input"]
        ),
    ),
}


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_the_loop_sends_the_reasoning_back_with_the_tool_result(fmt: str) -> None:
    response, extra, source, sent_back = CASES[fmt]
    adapter = adapter_class(fmt)()
    turn = adapter.parse(WireResponse(200, json.dumps(response)), stream=False)
    assert [c.name for c in turn.tool_calls] == ["weather"], turn.findings
    call = turn.tool_calls[0]
    result = Message("tool", tool_result=ToolResult(call.wire_id or call.id, "weather", "21C"))
    messages = [Message("user", "Weather in Paris?"), turn.as_message(), result]
    request = adapter.build_request(messages, [WEATHER], ToolChoice(), RequestOptions("m", extra=extra))
    assert sent_back(request.body), json.dumps(request.body, indent=1)
    assert source in SOURCES


def test_chat_reasoning_streamed_in_pieces_goes_back_whole() -> None:
    """A thinking-mode stream's ``reasoning_content`` deltas are joined as they came [X1]."""
    adapter = adapter_class("openai-chat")()
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "reasoning_content": "The user "}}]},
        {"choices": [{"index": 0, "delta": {"reasoning_content": "wants weather."}}]},
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": CALL_ID,
                                "type": "function",
                                "function": {"name": "weather", "arguments": "{}"},
                            }
                        ]
                    },
                    "finish_reason": "tool_calls",
                }
            ]
        },
    ]
    stream = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    turn = adapter.parse(WireResponse(200, stream), stream=True)
    assert turn.as_message().extra["reasoning_content"] == "The user wants weather."


def test_chat_without_reasoning_sends_no_reasoning_field() -> None:
    """A turn with no reasoning goes back as it was: no empty ``reasoning_content`` is invented."""
    adapter = adapter_class("openai-chat")()
    plain = json.loads(json.dumps(CHAT))
    del plain["choices"][0]["message"]["reasoning_content"]
    turn = adapter.parse(WireResponse(200, json.dumps(plain)), stream=False)
    request = adapter.build_request(
        [Message("user", "Weather?"), turn.as_message()], [WEATHER], ToolChoice(), RequestOptions("m")
    )
    assert "reasoning_content" not in _assistant(request.body)
