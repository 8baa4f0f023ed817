"""Reading Cohere v2 chat requests back (private to :mod:`harness.providers`).

The inverse of :meth:`CohereChatAdapter.build_request`, that also takes what real
clients write [CO2]: ``content`` as a string or a list of text blocks (user images are
noted as not read), assistant ``tool_plan`` and ``thinking`` content (kept for replay),
tool results as a string, text blocks or ``document`` blocks (a document's data read as
its JSON text), and ``tool_choice`` ``REQUIRED`` / ``NONE`` (auto is the field left out,
so a request without it reads as not saying [CO1]).
"""

from __future__ import annotations

import json
from typing import Any

from harness.model import ChoiceMode, Message, ToolCall, ToolChoice
from harness.providers._calls import id_part, join_text
from harness.providers._chat_request import read_function_tools
from harness.providers._requests import RequestReader
from harness.providers.adapter import RequestView

CHOICES: dict[str, ChoiceMode] = {"REQUIRED": "required", "NONE": "none"}
PLAN = "cohere_tool_plan"
THINKING = "cohere_thinking"
"""The keys of an assistant message's ``extra`` that keep its plan and its thinking for replay."""


def read_cohere_request(body: dict[str, Any]) -> RequestView:
    """A v2 chat request: every role in ``messages``, function tools, the upper-case choice."""
    reader = RequestReader()
    for where, item in reader.items("messages", body.get("messages"), required=True):
        role = item.get("role")
        if role in ("system", "user"):
            if item.get("content") is None:
                reader.deviation(where, "request_content_missing", f"a {role} message without content")
            reader.add(where, Message(role, reader.text(f"{where}.content", item.get("content"))))
        elif role == "assistant":
            _assistant(reader, where, item)
        elif role == "tool":
            call_id = reader.string(f"{where}.tool_call_id", item.get("tool_call_id"), "tool_call_id")
            if not call_id:
                reader.deviation(where, "request_tool_call_id_missing", "a tool message without tool_call_id")
            content = _tool_content(reader, f"{where}.content", item.get("content"))
            reader.result(where, call_id or None, None, content or "")
        else:
            reader.malformed(where, f"unknown role {role!r}; message skipped")
    tools = read_function_tools(reader, body.get("tools"))
    return reader.view(
        tools, _choice(reader, body.get("tool_choice")), reader.stream(body), reader.model(body)
    )


def _assistant(reader: RequestReader, where: str, item: dict[str, Any]) -> None:
    """An assistant message: text and thinking content, its plan and its calls (JSON-text arguments)."""
    texts: list[str] = []
    thinking: list[str] = []
    content = item.get("content")
    if isinstance(content, str) or content is None:
        texts.append(content or "")
    else:
        for part_where, part in reader.items(f"{where}.content", content):
            kind = part.get("type")
            if kind == "text":
                texts.append(reader.string(f"{part_where}.text", part.get("text"), "text") or "")
            elif kind == "thinking":
                thinking.append(
                    reader.string(f"{part_where}.thinking", part.get("thinking"), "thinking") or ""
                )
            else:
                reader.info(
                    part_where, f"request_part_not_read:{id_part(kind)}", f"a {kind!r} part is not read"
                )
    calls: list[ToolCall] = []
    for call_where, raw in reader.items(f"{where}.tool_calls", item.get("tool_calls")):
        if raw.get("type", "function") != "function":
            reader.deviation(call_where, "request_tool_call_type", f"a tool call of type {raw['type']!r}")
        function = raw.get("function")
        if not isinstance(function, dict):
            reader.malformed(call_where, "a tool call without a function object; skipped")
            continue
        call = reader.call(
            call_where,
            function.get("name"),
            function.get("arguments"),
            raw.get("id"),
            len(calls),
            wire_type="string",
        )
        calls.append(call)
    message = Message("assistant", join_text(texts), calls)
    plan = reader.string(f"{where}.tool_plan", item.get("tool_plan"), "tool_plan")
    if plan:
        message.extra[PLAN] = plan
    thought = join_text(thinking)
    if thought:
        message.extra[THINKING] = thought
    if content is None and not calls:
        reader.deviation(
            where, "request_content_missing", "an assistant message with neither content nor calls"
        )
    reader.add(where, message)


def _tool_content(reader: RequestReader, where: str, value: Any) -> str | None:
    """A tool result: a string, or ``text`` and ``document`` blocks joined in order (a document's
    ``data`` read as its JSON text)."""
    if value is None:
        reader.deviation(where, "request_content_missing", "a tool message without content")
        return None
    if not isinstance(value, list):
        return reader.text(where, value)
    texts = []
    for block_where, block in reader.items(where, value):
        kind, document = block.get("type"), block.get("document")
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "document" and isinstance(document, dict) and document.get("data") is not None:
            data = document["data"]
            texts.append(data if isinstance(data, str) else json.dumps(data, ensure_ascii=False))
            reader.info(
                block_where, "request_tool_document_read", "a document block read as its data's JSON text"
            )
        else:
            reader.info(
                block_where, f"request_part_not_read:{id_part(kind)}", f"a {kind!r} block is not read"
            )
    return "".join(texts) if texts else None


def _choice(reader: RequestReader, value: Any) -> ToolChoice | None:
    """``REQUIRED`` or ``NONE``; any other value is a deviation (the API knows no named choice)."""
    if value is None:
        return None
    if not isinstance(value, str):
        reader.malformed("tool_choice", f"tool_choice is {type(value).__name__}, not a string; not read")
        return None
    mode = CHOICES.get(value)
    if mode is None and value.upper() in CHOICES:
        reader.deviation(
            "tool_choice",
            "request_tool_choice_case",
            f"tool_choice {value!r} is written {value.upper()!r} on this API; read as that",
        )
        mode = CHOICES[value.upper()]
    if mode is None:
        reader.deviation(
            "tool_choice",
            "request_tool_choice_unknown",
            f"unknown tool_choice {value!r} (REQUIRED or NONE; auto is the field left out); not read",
        )
        return None
    return ToolChoice(mode)
