"""Adapter.read_request: the inverse of build_request, for every wire format.

(a) What the builder writes reads back to the same conversation, tools and tool_choice;
where a format cannot carry something, the difference is asserted, not skipped.
(b) Real request bodies recorded by public projects (tests/data/realworld/raw) read
without exception. (c) Malformed bodies give findings, never exceptions.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pytest

from harness.analysis.audit import _cassette, _text, detect_format
from harness.model import Message, ToolCall, ToolChoice, ToolResult, ToolSpec, WireResponse
from harness.providers import RequestOptions, adapter_class, formats
from harness.providers.adapter import Adapter, RequestView
from harness.providers.anthropic import anthropic_id
from harness.providers.mistral import mistral_id
from harness.providers.openai import OpenAIChatAdapter
from tests.helpers.realworld import REALWORLD, UNRECORDED

FORMATS = tuple(formats())  # every registered format
OPENAI_SHAPED = ("openai-chat", "mistral-chat", "ollama-chat", "openai-responses")
NO_ERROR_FLAG = (*OPENAI_SHAPED, "cohere-chat")
"""Formats whose tool results carry no error flag (the error is in the result's text)."""
MODEL = "test-model-1"

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
NESTED = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "what to look for"},
        "filter": {
            "type": "object",
            "properties": {
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
                "range": {
                    "type": "object",
                    "properties": {"from": {"type": "integer"}, "to": {"type": ["integer", "null"]}},
                    "required": ["from"],
                    "additionalProperties": False,
                },
            },
        },
        "items": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "number"}]}},
    },
    "required": ["query", "filter"],
}
WEATHER = ToolSpec("weather", "Weather for a city", CITY)
SEARCH = ToolSpec("search", "Search documents", NESTED)
TOOLS = (WEATHER, SEARCH)


def call(call_id: str | None, name: str, arguments: dict[str, Any], index: int = 0) -> ToolCall:
    """A call as the response side makes it (``wire_id`` ``None``: the id was synthesized)."""
    return ToolCall(name, arguments, json.dumps(arguments), call_id or f"h{index:08d}", call_id, index)


def result(call_id: str | None, name: str, content: str, *, is_error: bool = False) -> Message:
    return Message("tool", tool_result=ToolResult(call_id, name, content, is_error))


SEARCH_ARGS = {
    "query": "docs",
    "filter": {"tags": ["a", "b"], "range": {"from": 1, "to": None}},
    "items": [1, "x"],
}
CONVERSATIONS: dict[str, list[Message]] = {
    "system_user": [Message("system", "Be brief."), Message("user", "Hi there")],
    "two_calls": [
        Message("system", "You answer with tools."),
        Message("user", "Weather in Paris, and the docs?"),
        Message(
            "assistant",
            "Let me check.",
            [call("abcDEF123", "weather", {"city": "Paris"}), call("xyz987QWE", "search", SEARCH_ARGS, 1)],
        ),
        result("abcDEF123", "weather", "18C and sunny"),
        result("xyz987QWE", "search", '[{"title": "Guide"}]'),
        Message("user", "Thanks. And in Rome?"),
    ],
    "tool_error": [
        Message("user", "Weather in Atlantis?"),
        Message("assistant", None, [call("err000001", "weather", {"city": "Atlantis"})]),
        result("err000001", "weather", "no such city: Atlantis", is_error=True),
        Message("assistant", "There is no such city."),
        Message("user", "Fine."),
    ],
}
CHOICES = {
    "auto": ToolChoice("auto"),
    "required": ToolChoice("required"),
    "none": ToolChoice("none"),
    "named": ToolChoice("named", "search"),
}


def adapter(fmt: str) -> Adapter:
    instance: Adapter = adapter_class(fmt)()
    return instance


def roundtrip(
    fmt: str,
    messages: list[Message],
    tools: tuple[ToolSpec, ...] = TOOLS,
    choice: ToolChoice | None = None,
    **options: Any,
) -> RequestView:
    """Build a request and read its body (and path) back."""
    request = adapter(fmt).build_request(
        messages, tools, choice or ToolChoice(), RequestOptions(MODEL, **options)
    )
    return adapter(fmt).read_request(json.loads(json.dumps(request.body)), request.path)


def shape(messages: tuple[Message, ...] | list[Message]) -> list[tuple[Any, ...]]:
    """What a round trip must keep: role, text ("" and None alike), calls, results."""
    return [
        (
            m.role,
            m.content or "",
            [(c.id, c.name, c.arguments) for c in m.tool_calls],
            None
            if m.tool_result is None
            else (m.tool_result.call_id, m.tool_result.name, m.tool_result.content, m.tool_result.is_error),
        )
        for m in messages
    ]


def problems(view: RequestView) -> list[str]:
    """Findings above info: the builder's own output must have none."""
    return [f"{f.check_id}: {f.detail}" for f in view.findings if f.severity != "info"]


def ids(view: RequestView) -> set[str]:
    return {f.check_id for f in view.findings}


def expected_messages(fmt: str, messages: list[Message]) -> list[Message]:
    """The conversation as the format can carry it (the documented differences)."""
    out = []
    for message in messages:
        if message.tool_result is not None and fmt in NO_ERROR_FLAG:
            # OpenAI-shaped formats, Ollama and Cohere have no error flag on a tool result
            result = message.tool_result
            message = Message("tool", tool_result=ToolResult(result.call_id, result.name, result.content))
        out.append(message)
    return out


def expected_offer(fmt: str, choice: ToolChoice) -> tuple[tuple[ToolSpec, ...], ToolChoice | None]:
    """The tools and the choice as the format can carry them (the documented differences)."""
    if fmt == "ollama-chat":  # /api/chat has no tool_choice field: the request never says
        return TOOLS, None
    if fmt == "bedrock-converse" and choice.mode == "none":  # Converse's toolChoice has no "none"
        return TOOLS, None
    if fmt == "bedrock-converse" and choice.mode == "none":  # Converse's toolChoice has no "none"
        return TOOLS, None
    if fmt == "cohere-chat":  # auto is tool_choice left out; named is REQUIRED with that tool alone
        if choice.mode == "named":
            return tuple(t for t in TOOLS if t.name == choice.name), ToolChoice("required")
        return TOOLS, None if choice.mode == "auto" else choice
    return TOOLS, choice


# -- (a) round trips ------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("choice", list(CHOICES), ids=list(CHOICES))
@pytest.mark.parametrize("conversation", list(CONVERSATIONS), ids=list(CONVERSATIONS))
@pytest.mark.parametrize("fmt", FORMATS)
def test_what_the_builder_writes_reads_back(fmt: str, conversation: str, choice: str, stream: bool) -> None:
    messages = CONVERSATIONS[conversation]
    view = roundtrip(fmt, messages, choice=CHOICES[choice], stream=stream)
    assert shape(view.messages) == shape(expected_messages(fmt, messages))
    assert (view.tools, view.tool_choice) == expected_offer(fmt, CHOICES[choice])
    assert view.stream is stream
    assert view.model == MODEL
    assert problems(view) == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_request_without_tools_reads_back_without_tools_or_choice(fmt: str) -> None:
    view = roundtrip(fmt, CONVERSATIONS["system_user"], tools=(), choice=ToolChoice("required"))
    assert view.tools == ()
    assert view.tool_choice is None  # the builder sends tool_choice only with tools
    assert shape(view.messages) == shape(CONVERSATIONS["system_user"])


@pytest.mark.parametrize("fmt", NO_ERROR_FLAG)
def test_formats_without_an_error_flag_lose_it(fmt: str) -> None:
    view = roundtrip(fmt, CONVERSATIONS["tool_error"])
    results = [m.tool_result for m in view.messages if m.tool_result is not None]
    assert [(r.content, r.is_error) for r in results] == [("no such city: Atlantis", False)]


@pytest.mark.parametrize("fmt", ["anthropic-messages", "gemini-generate"])
def test_formats_with_an_error_flag_keep_it(fmt: str) -> None:
    view = roundtrip(fmt, CONVERSATIONS["tool_error"])
    results = [m.tool_result for m in view.messages if m.tool_result is not None]
    assert [(r.content, r.is_error) for r in results] == [("no such city: Atlantis", True)]


def test_mistral_ids_come_back_rewritten_to_nine_characters() -> None:
    messages = [
        Message("user", "Paris?"),
        Message("assistant", None, [call("call_1", "weather", {"city": "Paris"})]),
        result("call_1", "weather", "18C"),
    ]
    view = roundtrip("mistral-chat", messages)
    rewritten = mistral_id("call_1")
    assert rewritten is not None and rewritten != "call_1" and len(rewritten) == 9
    assert [c.id for c in view.messages[1].tool_calls] == [rewritten]
    assert view.messages[2].tool_result is not None and view.messages[2].tool_result.call_id == rewritten
    assert problems(view) == []


def test_anthropic_ids_come_back_rewritten_to_its_rule() -> None:
    messages = [
        Message("user", "Paris?"),
        Message("assistant", None, [call("call.1", "weather", {"city": "Paris"})]),
        result("call.1", "weather", "18C"),
    ]
    view = roundtrip("anthropic-messages", messages)
    assert [c.id for c in view.messages[1].tool_calls] == [anthropic_id("call.1")] != ["call.1"]
    assert view.messages[2].tool_result is not None
    assert view.messages[2].tool_result.call_id == anthropic_id("call.1")


@pytest.mark.parametrize("fmt", ["gemini-generate", "ollama-chat"])
def test_ids_the_provider_never_sent_are_synthesized_again_and_results_link_by_name(fmt: str) -> None:
    """Gemini 2.x and Ollama before v0.12.10 send no ids, and the builder sends no synthesized id back:
    the reader makes ids again and links each result to its call by name (then order)."""
    messages = [
        Message("user", "Paris and docs?"),
        Message(
            "assistant",
            None,
            [call(None, "weather", {"city": "Paris"}), call(None, "search", SEARCH_ARGS, 1)],
        ),
        result("h00000001", "search", "found"),
        result("h00000000", "weather", "18C"),
    ]
    view = roundtrip(fmt, messages)
    calls = view.messages[1].tool_calls
    assert [(c.name, c.arguments, c.wire_id) for c in calls] == [
        ("weather", {"city": "Paris"}, None),
        ("search", SEARCH_ARGS, None),
    ]
    assert all(c.id and c.id_synthesized for c in calls)
    links = [(m.tool_result.name, m.tool_result.call_id) for m in view.messages[2:] if m.tool_result]
    assert links == [("search", calls[1].id), ("weather", calls[0].id)]
    assert problems(view) == []
    assert "wire.missing_id" in ids(view)  # an info note: ids are optional on these APIs


@pytest.mark.parametrize("fmt", ["anthropic-messages", "gemini-generate"])
def test_system_messages_are_joined_into_one_where_the_system_prompt_is_apart(fmt: str) -> None:
    messages = [Message("system", "One."), Message("user", "Hi"), Message("system", "Two.")]
    view = roundtrip(fmt, messages)
    assert shape(view.messages) == shape([Message("system", "One.\n\nTwo."), Message("user", "Hi")])


def test_openai_keeps_system_messages_where_they_are() -> None:
    messages = [Message("system", "One."), Message("user", "Hi"), Message("system", "Two.")]
    assert shape(roundtrip("openai-chat", messages).messages) == shape(messages)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_tool_without_parameters_comes_back_with_the_schema_the_format_sent(fmt: str) -> None:
    view = roundtrip(fmt, CONVERSATIONS["system_user"], tools=(ToolSpec("now", "The time", {}),))
    # Gemini omits an empty schema; the others send the empty object schema
    empty = {} if fmt == "gemini-generate" else {"type": "object", "properties": {}}
    assert view.tools == (ToolSpec("now", "The time", empty),)


def test_gemini_thought_signatures_survive_parse_build_read() -> None:
    gemini = adapter("gemini-generate")
    parts = [
        {"text": "thinking", "thought": True, "thoughtSignature": "sig-text"},
        {"text": "Checking."},
        {"functionCall": {"name": "weather", "args": {"city": "Paris"}}, "thoughtSignature": "sig-call"},
    ]
    body = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}]}
    turn = gemini.parse(WireResponse(200, json.dumps(body)), stream=False)
    call_id = turn.tool_calls[0].id
    messages = [Message("user", "Paris?"), turn.as_message(), result(call_id, "weather", "18C")]
    view = roundtrip("gemini-generate", messages)
    assistant = view.messages[1]
    assert assistant.content == "Checking."
    assert assistant.extra == turn.extra
    assert assistant.tool_calls[0].extra == {"thoughtSignature": "sig-call"}
    assert view.messages[2].tool_result is not None
    assert view.messages[2].tool_result.call_id == assistant.tool_calls[0].id


def test_anthropic_thinking_blocks_are_kept_for_replay() -> None:
    blocks = [
        {"type": "thinking", "thinking": "hmm", "signature": "sig"},
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}},
    ]
    body = {"role": "assistant", "content": blocks, "stop_reason": "tool_use"}
    turn = adapter("anthropic-messages").parse(WireResponse(200, json.dumps(body)), stream=False)
    messages = [Message("user", "Paris?"), turn.as_message(), result("toolu_1", "weather", "18C")]
    view = roundtrip("anthropic-messages", messages)
    assert view.messages[1].extra == {"anthropic_content": blocks}
    assert view.messages[1].content == "Checking."
    assert [c.id for c in view.messages[1].tool_calls] == ["toolu_1"]


@pytest.mark.parametrize("fmt", ["openai-chat", "ollama-chat"])
def test_fields_the_builder_replays_from_extra_come_back_in_extra(fmt: str) -> None:
    key, value = (
        ("extra_content", {"google": {"thought_signature": "s"}})
        if fmt == "openai-chat"
        else ("thinking", "hm")
    )
    assistant = Message("assistant", "ok", extra={key: value})
    view = roundtrip(fmt, [Message("user", "Hi"), assistant])
    assert view.messages[1].extra == {key: value}


# -- what real SDKs write ---------------------------------------------------


def read(fmt: str, body: Any, path: str = "") -> RequestView:
    return adapter(fmt).read_request(body, path)


def test_openai_content_parts_and_null_content_beside_calls() -> None:
    body = {
        "model": "gpt-4o",
        "messages": [
            {
                "role": "developer",
                "content": [{"type": "text", "text": "Be "}, {"type": "text", "text": "brief."}],
            },
            {
                "role": "user",
                "content": [{"type": "text", "text": "Look:"}, {"type": "image_url", "image_url": {}}],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
                ],
                "reasoning_content": "thought",
            },
            {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "18C"}]},
        ],
        "tool_choice": {"type": "function", "function": {"name": "weather"}},
        "tools": [{"type": "function", "function": {"name": "weather", "parameters": CITY}}],
    }
    view = read("openai-chat", body)
    assert shape(view.messages) == shape(
        [
            Message("system", "Be brief."),
            Message("user", "Look:"),
            Message("assistant", None, [ToolCall("weather", {}, "{}", "c1", "c1")]),
            result("c1", "weather", "18C"),
        ]
    )
    assert view.messages[2].extra == {"reasoning_content": "thought"}
    assert view.tool_choice == ToolChoice("named", "weather")
    assert view.tools == (ToolSpec("weather", "", CITY),)
    assert view.stream is False and view.model == "gpt-4o"
    assert {"wire.request_role_mapped:developer", "wire.request_part_not_read:image_url"} <= ids(view)
    assert problems(view) == []


def test_mistral_reads_any_as_required_and_takes_the_tool_name() -> None:
    body = {
        "model": "mistral-small",
        "messages": [
            {"role": "user", "content": "Paris?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "abcDEF123", "function": {"name": "weather", "arguments": {"city": "Paris"}}}
                ],
            },
            {"role": "tool", "tool_call_id": "abcDEF123", "name": "weather", "content": "18C"},
        ],
        "tool_choice": "any",
    }
    view = read("mistral-chat", body)
    assert view.tool_choice == ToolChoice("required")
    assert view.messages[1].tool_calls[0].arguments == {"city": "Paris"}  # Mistral takes objects too
    assert view.messages[2].tool_result == ToolResult("abcDEF123", "weather", "18C")
    assert read("openai-chat", body).tool_choice is None  # "any" is not OpenAI's
    assert "wire.request_tool_choice_unknown" in ids(read("openai-chat", body))


def test_mistral_notes_ids_that_break_its_rule() -> None:
    call_ = {"id": "call_1", "function": {"name": "weather", "arguments": "{}"}}
    body = {"messages": [{"role": "assistant", "content": None, "tool_calls": [call_]}]}
    assert "wire.id_format" in ids(read("mistral-chat", body))
    assert "wire.id_format" not in ids(read("openai-chat", body))


def test_anthropic_system_blocks_user_strings_and_result_blocks() -> None:
    body = {
        "model": "claude",
        "max_tokens": 100,
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": "Paris?"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Paris"}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [{"type": "text", "text": "18C"}],
                        "is_error": True,
                    },
                    {"type": "text", "text": "And Rome?"},
                ],
            },
        ],
        "tools": [
            {"name": "weather", "input_schema": CITY},
            {"type": "web_search_20250305", "name": "web_search"},
        ],
        "tool_choice": {"type": "any", "disable_parallel_tool_use": True},
        "stream": True,
    }
    view = read("anthropic-messages", body)
    assert shape(view.messages) == shape(
        [
            Message("system", "Be brief."),
            Message("user", "Paris?"),
            Message("assistant", None, [ToolCall("weather", {"city": "Paris"}, None, "t1", "t1")]),
            result("t1", "weather", "18C", is_error=True),
            Message("user", "And Rome?"),
        ]
    )
    assert view.tools == (ToolSpec("weather", "", CITY),)
    assert "wire.request_tool_not_read:web_search_20250305" in ids(view)
    assert view.tool_choice == ToolChoice("required") and view.stream is True
    assert problems(view) == []


def test_anthropic_text_before_tool_results_is_a_deviation_and_read_after_them() -> None:
    body = {
        "messages": [
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "weather", "input": {}}],
            },
            {
                "role": "user",
                "content": [{"type": "text", "text": "here"}, {"type": "tool_result", "tool_use_id": "t1"}],
            },
        ]
    }
    view = read("anthropic-messages", body)
    assert [m.role for m in view.messages] == ["assistant", "tool", "user"]
    assert "wire.request_text_before_tool_result" in ids(view)


def test_gemini_snake_case_keys_response_objects_and_the_path() -> None:
    body = {
        "system_instruction": {"parts": [{"text": "Be brief."}, {"text": "Use tools."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "Paris?"}]},
            {
                "role": "model",
                "parts": [
                    {
                        "function_call": {"name": "weather", "args": {"city": "Paris"}},
                        "thought_signature": "s",
                    }
                ],
            },
            {"role": "user", "parts": [{"function_response": {"name": "weather", "response": {"temp": 18}}}]},
        ],
        "tools": [
            {
                "function_declarations": [
                    {
                        "name": "weather",
                        "description": "W",
                        "parameters": {
                            "type": "OBJECT",
                            "properties": {"city": {"type": "STRING"}, "type": {"type": "STRING"}},
                        },
                    }
                ]
            },
            {"googleSearch": {}},
        ],
        "tool_config": {"function_calling_config": {"mode": "ANY", "allowed_function_names": ["weather"]}},
    }
    view = read("gemini-generate", body, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
    assert [m.content for m in view.messages[:2]] == ["Be brief.", "Use tools."]
    call_ = view.messages[3].tool_calls[0]
    assert (call_.name, call_.arguments, call_.extra) == (
        "weather",
        {"city": "Paris"},
        {"thoughtSignature": "s"},
    )
    assert view.messages[4].tool_result == ToolResult(call_.id, "weather", '{"temp": 18}')
    schema = {"type": "object", "properties": {"city": {"type": "string"}, "type": {"type": "string"}}}
    assert view.tools == (ToolSpec("weather", "W", schema),)
    assert view.tool_choice == ToolChoice("named", "weather")
    assert (view.stream, view.model) == (True, "gemini-2.5-flash")
    assert {
        "wire.request_snake_case_keys",
        "wire.request_function_response_object",
        "wire.request_schema_types_converted",
        "wire.request_tool_not_read:googleSearch",
    } <= ids(view)
    assert problems(view) == []


@pytest.mark.parametrize(
    ("config", "choice"),
    [
        ({"mode": "AUTO"}, ToolChoice("auto")),
        ({"mode": "NONE"}, ToolChoice("none")),
        ({"mode": "ANY"}, ToolChoice("required")),
        ({"mode": "ANY", "allowedFunctionNames": ["a", "b"]}, ToolChoice("required")),
        ({"mode": 2, "allowedFunctionNames": ["a"]}, ToolChoice("named", "a")),
        ({"mode": "VALIDATED"}, ToolChoice("auto")),
        ({}, None),
    ],
)
def test_gemini_function_calling_modes(config: dict[str, Any], choice: ToolChoice | None) -> None:
    body = {"contents": [], "toolConfig": {"functionCallingConfig": config}}
    assert read("gemini-generate", body, "/v1beta/models/m:generateContent").tool_choice == choice


def test_ollama_streams_by_default_and_ignores_tool_choice() -> None:
    body = {"model": "qwen3", "messages": [{"role": "user", "content": "Hi"}], "tool_choice": "required"}
    view = read("ollama-chat", body)
    assert view.stream is True and view.tool_choice is None
    assert {"wire.request_stream_default", "wire.request_tool_choice_unsupported"} <= ids(view)


def test_invalid_json_arguments_in_history_are_a_parse_error_not_an_exception() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "Hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{bad"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "error"},
        ]
    }
    view = read("openai-chat", body)
    bad = view.messages[1].tool_calls[0]
    assert bad.arguments is None and bad.parse_error and bad.raw_arguments == "{bad"
    assert "wire.arguments_invalid_json" in ids(view)
    assert any(f.detail.startswith("messages[1].tool_calls[0]: ") for f in view.findings)


def test_conversation_level_deviations_are_noted() -> None:
    body = {
        "messages": [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
                    {"id": "c2", "type": "function", "function": {"name": "a", "arguments": "{}"}},
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "one"},
            {"role": "tool", "tool_call_id": "zz", "content": "stray"},
            {"role": "user", "content": "next"},
        ],
        "tools": [
            {"type": "function", "function": {"name": "a"}},
            {"type": "function", "function": {"name": "a"}},
        ],
        "tool_choice": {"type": "function", "function": {"name": "b"}},
    }
    assert {
        "wire.request_tool_result_unknown_call",
        "wire.request_tool_calls_unanswered",
        "wire.request_duplicate_tool_names",
        "wire.request_tool_choice_unknown_tool",
    } <= ids(read("openai-chat", body))


# -- (b) real recorded requests ------------------------------------------


@dataclass(frozen=True)
class Recorded:
    """One request body recorded by a public project, with its URL and wire format."""

    id: str
    url: str
    body: Any
    fmt: str

    @property
    def path(self) -> str:
        parts = urlsplit(self.url)
        return parts.path + (f"?{parts.query}" if parts.query else "")


def _httprr(data: bytes) -> Iterator[tuple[str, str]]:
    """langchaingo's httprr traces: ``<request bytes> <response bytes>`` headers, raw HTTP."""
    position = data.index(b"\n") + 1
    while position < len(data):
        end = data.index(b"\n", position)
        request_size, response_size = map(int, data[position:end].split())
        request = data[end + 1 : end + 1 + request_size].decode()
        head, _, body = request.replace("\r\n", "\n").partition("\n\n")
        yield head.split()[1], body
        position = end + 1 + request_size + response_size


def _curl(text: str) -> Iterator[tuple[str, str]]:
    """Developer notes holding a ``curl ... -d '{...}'`` command (the body is the first JSON object)."""
    for match in re.finditer(r"curl\b", text):
        url = re.search(r"https?://\S+", text[match.end() :])
        start = text.find("-d ", match.end())
        if url is None or start < 0:
            continue
        body, _ = json.JSONDecoder().raw_decode(text, text.index("{", start))
        yield url.group(0), json.dumps(body)


def recorded_requests() -> list[Recorded]:
    """Every request body under tests/data/realworld/raw that is easy to read: vcrpy, pytest-recording
    and ruby VCR cassettes (read as :mod:`harness.analysis.audit` reads them), httprr traces, curl notes."""
    found = []
    for path in sorted((REALWORLD / "raw").rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()
        text = _text(data)
        if data.startswith(b"httprr trace v1\n"):
            pairs = list(_httprr(data))
        elif (interactions := _cassette(text)) is not None:
            pairs = [(str(i.url), i.request_body) for i in interactions if i.request_body]
        else:
            pairs = list(_curl(text))
        for position, (url, body) in enumerate(pairs):
            fmt = detect_format(url, "")[0]
            if fmt is not None:
                name = f"{path.parent.name}/{path.name}:{position}"
                found.append(Recorded(name, url, json.loads(body), fmt))
    return found


RECORDED = recorded_requests()


def test_recordings_of_every_format_are_read() -> None:
    assert len(RECORDED) >= 45
    assert {r.fmt for r in RECORDED} == set(FORMATS) - set(UNRECORDED)


def _declares_tools(record: Recorded) -> bool:
    tools = record.body.get("tools") or []
    if record.fmt == "gemini-generate":
        return any(t.get("functionDeclarations") or t.get("function_declarations") for t in tools)
    return bool(tools)


@pytest.mark.parametrize("record", RECORDED, ids=[r.id for r in RECORDED])
def test_a_recorded_request_reads_without_exception(record: Recorded) -> None:
    view = adapter(record.fmt).read_request(record.body, record.path)
    assert isinstance(view, RequestView)
    if record.body.get("messages") or record.body.get("contents"):
        assert view.messages
    if _declares_tools(record):
        assert view.tools and all(t.name for t in view.tools)
    assert [f.detail for f in view.findings if f.severity == "error"] == []
    calls = {c.id for m in view.messages for c in m.tool_calls}
    results = [m.tool_result for m in view.messages if m.tool_result is not None]
    # a request that continues a stored response or conversation answers calls the server holds
    if not (record.body.get("previous_response_id") or record.body.get("conversation")):
        assert all(r.call_id in calls and r.name for r in results)  # every result linked to its call


def recorded(name: str) -> RequestView:
    record = next(r for r in RECORDED if r.id == name)
    return adapter(record.fmt).read_request(record.body, record.path)


def test_recorded_anthropic_parallel_results_link_to_their_calls() -> None:
    view = recorded("anthropic/pydantic-ai__test_multiple_parallel_tool_calls.yaml:1")
    assert view.messages[0].role == "system"
    calls = view.messages[2].tool_calls
    assert [c.arguments for c in calls] == [{"name": n} for n in ("Alice", "Bob", "Charlie", "Daisy")]
    results = [m.tool_result for m in view.messages[3:] if m.tool_result]
    assert [(r.call_id, r.name, r.is_error) for r in results] == [(c.id, c.name, False) for c in calls]
    assert view.tool_choice == ToolChoice("auto")


def test_recorded_gemini_calls_keep_their_thought_signatures() -> None:
    view = recorded(
        "gemini/ruby_llm__chat_function_calling_gemini_gemini-2_5-flash_can_use_tools_with_multi-turn"
        "_streaming_conversations.yml:3"
    )
    assert (view.stream, view.model) == (True, "gemini-2.5-flash")
    first = view.messages[1].tool_calls[0]
    assert first.arguments == {"latitude": "52.5200", "longitude": "13.4050"}
    assert "thoughtSignature" in first.extra
    assert view.messages[2].tool_result is not None
    assert "15°C" in view.messages[2].tool_result.content


def test_recorded_gemini_integer_enum_schema_is_read_as_json_schema() -> None:
    view = recorded("gemini/langchaingo__TestGoogleAIToolCallResponse.httprr:0")
    assert view.model == "gemini-2.0-flash"
    assert view.tools[0].parameters["type"] == "object"
    assert view.tools[0].parameters["properties"]["expression"]["type"] == "string"


def test_recorded_flat_ollama_tools_are_read_with_a_deviation() -> None:
    view = recorded("ollama-native/ask-openai.nvim__ollama-tool-call.txt:0")
    assert [t.name for t in view.tools] == ["run_command"]
    assert "wire.request_tool_shape" in ids(view)


# -- (c) malformed bodies -------------------------------------------------

MALFORMED: list[Any] = [
    [],
    "x",
    {},
    {"messages": "x", "contents": "x"},
    {
        "messages": [1, None, "x", [], {"role": "wizard", "content": "hi"}],
        "contents": [1, {"role": "wizard"}],
    },
    {"messages": [{"role": "user"}], "tools": "x"},
    {
        "messages": [{"role": "assistant", "content": 5, "tool_calls": "x"}],
        "tools": ["x", {"type": "function"}],
    },
    {
        "messages": [
            {
                "role": "assistant",
                "tool_calls": [{"function": "x"}, {"function": {"name": 3, "arguments": 4}}],
            }
        ]
    },
    {"messages": [{"role": "tool", "content": {"a": 1}}], "tool_choice": 7, "stream": "yes", "model": 1},
    {
        "messages": [
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": 5, "is_error": "no"}]}
        ]
    },
    {
        "messages": [{"role": "assistant", "content": [{"type": "tool_use", "input": "{bad"}, "x"]}],
        "system": 4,
    },
    {"tool_choice": {"type": "tool"}, "tools": [{"name": "t", "input_schema": "x"}]},
    {"contents": [{"role": "model", "parts": [{"functionCall": "x"}, {"functionCall": {"args": []}}, 3]}]},
    {
        "contents": [{"role": "user", "parts": [{"functionResponse": {"response": "x"}}]}],
        "systemInstruction": 3,
    },
    {"contents": [], "tools": [{"functionDeclarations": "x"}], "toolConfig": {"functionCallingConfig": "x"}},
    {
        "contents": [],
        "toolConfig": {"functionCallingConfig": {"mode": "SOMETIMES", "allowedFunctionNames": 3}},
    },
]


@pytest.mark.parametrize("body", MALFORMED, ids=[f"body{i}" for i in range(len(MALFORMED))])
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_malformed_body_gives_findings_not_exceptions(fmt: str, body: Any) -> None:
    view = read(fmt, body, "/v1beta/models/m:generateContent")
    assert view.findings, "a malformed body must be noted"
    assert all(not f.passed for f in view.findings)
    assert not any("could not be read" in f.detail for f in view.findings), "the reader itself must cope"


@pytest.mark.parametrize("fmt", FORMATS)
def test_unknown_roles_are_noted_and_skipped(fmt: str) -> None:
    key = {"gemini-generate": "contents", "openai-responses": "input", "gemini-interactions": "input"}.get(
        fmt, "messages"
    )
    entry = {"role": "wizard", "content": "hi", "parts": [{"text": "hi"}]}
    if fmt == "gemini-interactions":  # a step is known by its type
        entry["type"] = "wizard"
    view = read(fmt, {key: [entry]}, "/x:generateContent")
    assert view.messages == ()
    assert any(f.check_id == "wire.request_malformed" and "wizard" in f.detail for f in view.findings)


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield from _nodes(child, (*path, key))


@pytest.mark.parametrize("fmt", FORMATS)
def test_any_value_replaced_by_any_wrong_type_never_breaks_the_reader(fmt: str) -> None:
    """Every node of a full built body, replaced in turn by a value of each JSON type."""
    messages = CONVERSATIONS["two_calls"] + CONVERSATIONS["tool_error"][1:3]
    request = adapter(fmt).build_request(
        messages, TOOLS, ToolChoice("named", "search"), RequestOptions(MODEL)
    )
    body = json.loads(json.dumps(request.body))
    for path in list(_nodes(body))[1:]:
        for wrong in (None, 7, "x", [], {}, [1], {"x": 1}, True):
            mutated = copy.deepcopy(body)
            target = mutated
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = wrong
            view = adapter(fmt).read_request(mutated, request.path)
            assert not any("could not be read" in f.detail for f in view.findings), (
                path,
                wrong,
                view.findings,
            )


def test_an_adapter_that_does_not_read_requests_says_so() -> None:
    class NoReader(OpenAIChatAdapter):
        read_body = Adapter.read_body

    with pytest.raises(NotImplementedError):
        NoReader().read_request({"messages": []})


def test_a_reader_that_fails_anyway_gives_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    """The last line of defence: whatever a body does to a reader is a finding, not an exception."""

    def explode(self: Adapter, body: dict[str, Any], path: str) -> RequestView:
        raise KeyError("boom")

    monkeypatch.setattr(OpenAIChatAdapter, "read_body", explode)
    view = read("openai-chat", {"messages": []})
    assert [(f.check_id, f.severity) for f in view.findings] == [("wire.request_malformed", "error")]
    assert "KeyError" in view.findings[0].detail


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_request_that_names_no_model_is_noted(fmt: str) -> None:
    key = {"gemini-generate": "contents", "openai-responses": "input"}.get(fmt, "messages")
    view = read(fmt, {key: [], "max_tokens": 10}, "/v1beta/models:generateContent")
    assert view.model is None
    assert "wire.request_model_missing" in ids(view)
