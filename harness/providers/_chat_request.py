"""Reading chat requests back: OpenAI Chat Completions (and Mistral, its dialect) and Ollama ``/api/chat``.

The inverse of :meth:`OpenAIChatAdapter.build_request` and
:meth:`OllamaChatAdapter.build_request`, that also takes what real clients
write: ``content`` as a list of text parts, ``null`` beside ``tool_calls``,
reasoning fields on assistant messages, the ``developer`` role, the legacy
``functions`` / ``function_call`` fields. Private to :mod:`harness.providers`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from harness.model import ChoiceMode, Message, ToolCall, ToolChoice, ToolSpec
from harness.providers._calls import id_part
from harness.providers._requests import RequestReader
from harness.providers.adapter import RequestView

REASONING_FIELDS = ("reasoning_content", "reasoning", "thinking")
OPENAI_CHOICES: Mapping[str, ChoiceMode] = {"auto": "auto", "none": "none", "required": "required"}
OLLAMA_OPTIONAL_ID = "Ollama sends ids only since v0.12.10"


def read_function_tools(reader: RequestReader, value: Any) -> list[ToolSpec]:
    """``tools`` as ``{"type": "function", "function": {name, description, parameters}}``."""
    tools = []
    for where, item in reader.items("tools", value):
        kind = item.get("type")
        if kind is None:
            reader.info(where, "request_tool_missing_type", 'a tool without type: "function"')
        elif kind != "function":
            reader.info(
                where, f"request_tool_not_read:{id_part(kind)}", f"a tool of type {kind!r} is not a function"
            )
            continue
        function = item.get("function")
        if function is None and isinstance(item.get("name"), str):
            reader.deviation(
                where, "request_tool_shape", "a tool declared flat, without the function object; read as one"
            )
            function = item
        if not isinstance(function, dict):
            reader.malformed(where, "a function tool without a function object; skipped")
            continue
        spec = reader.tool(
            where, function.get("name"), function.get("description"), function.get("parameters")
        )
        if spec is not None:
            tools.append(spec)
    return tools


def read_chat(
    body: dict[str, Any],
    *,
    wire_type: str,
    choices: Mapping[str, ChoiceMode] = OPENAI_CHOICES,
    id_rule: re.Pattern[str] | None = None,
    id_rule_name: str = "",
) -> RequestView:
    """An OpenAI-shaped chat request. ``choices`` are the string ``tool_choice`` values the
    dialect takes (Mistral adds ``any``); ``id_rule`` is the dialect's call id rule, if any."""
    reader = RequestReader()
    for where, item in reader.items("messages", body.get("messages"), required=True):
        role = item.get("role")
        if role == "developer":
            reader.info(where, "request_role_mapped:developer", "the developer role is read as system")
            role = "system"
        if role in ("system", "user"):
            content = reader.text(f"{where}.content", item.get("content"))
            if item.get("content") is None:
                reader.deviation(where, "request_content_missing", f"a {role} message without content")
            reader.add(where, Message(role, content))
        elif role == "assistant":
            _assistant(reader, where, item, wire_type, id_rule, id_rule_name)
        elif role == "tool":
            call_id = reader.string(f"{where}.tool_call_id", item.get("tool_call_id"), "tool_call_id")
            if not call_id:
                reader.deviation(where, "request_tool_call_id_missing", "a tool message without tool_call_id")
            content = reader.text(f"{where}.content", item.get("content"))
            if item.get("content") is None:
                reader.deviation(where, "request_content_missing", "a tool message without content")
            name = reader.string(f"{where}.name", item.get("name"), "name")
            reader.result(where, call_id or None, name, content or "")
        else:
            reader.malformed(where, f"unknown role {role!r}; message skipped")
    tools = read_function_tools(reader, body.get("tools"))
    if body.get("functions") is not None:
        reader.deviation(
            "functions", "legacy_functions_field", "tools declared in the deprecated functions field"
        )
        for where, item in reader.items("functions", body["functions"]):
            spec = reader.tool(where, item.get("name"), item.get("description"), item.get("parameters"))
            if spec is not None:
                tools.append(spec)
    choice = _choice(reader, body, choices)
    return reader.view(tools, choice, reader.stream(body), reader.model(body))


def _assistant(
    reader: RequestReader,
    where: str,
    item: dict[str, Any],
    wire_type: str,
    id_rule: re.Pattern[str] | None,
    id_rule_name: str,
) -> None:
    """An assistant message: text (``null`` beside calls), calls with JSON-string arguments."""
    content = reader.text(f"{where}.content", item.get("content"))
    calls: list[ToolCall] = []
    for call_where, raw in reader.items(f"{where}.tool_calls", item.get("tool_calls")):
        if "type" not in raw:
            reader.info(call_where, "tool_call_missing_type", "tool call without type: function")
        elif raw["type"] != "function":
            reader.deviation(call_where, "request_tool_call_type", f"a tool call of type {raw['type']!r}")
        function = raw.get("function")
        if not isinstance(function, dict):
            reader.malformed(call_where, "a tool call without a function object; skipped")
            continue
        name, arguments = function.get("name"), function.get("arguments")
        call = reader.call(call_where, name, arguments, raw.get("id"), len(calls), wire_type=wire_type)
        if "extra_content" in raw:
            call.extra["extra_content"] = raw["extra_content"]
        calls.append(call)
    message = Message("assistant", content, calls)
    if "extra_content" in item:
        message.extra["extra_content"] = item["extra_content"]
    for name in REASONING_FIELDS:
        value = item.get(name)
        if isinstance(value, str) and value:
            message.extra[name] = value
            reader.info(
                where, f"reasoning_field:{name}", f"reasoning text in the non-standard field {name!r}"
            )
    if item.get("function_call"):
        reader.deviation(
            where, "legacy_function_call_field", "the deprecated function_call field; not read as a call"
        )
    elif content is None and not calls:
        reader.deviation(
            where, "request_content_missing", "an assistant message with neither content nor calls"
        )
    if id_rule is not None:
        bad = [c.wire_id for c in calls if c.wire_id and not id_rule.match(c.wire_id)]
        if bad:
            reader.deviation(where, "id_format", f"call ids {bad} break {id_rule_name}")
    reader.add(where, message)


def _choice(
    reader: RequestReader, body: dict[str, Any], choices: Mapping[str, ChoiceMode]
) -> ToolChoice | None:
    """``tool_choice`` (or the legacy ``function_call``): a string mode or a named function."""
    value, where = body.get("tool_choice"), "tool_choice"
    if value is None and body.get("function_call") is not None:
        value, where = body["function_call"], "function_call"
        reader.deviation(
            where, "legacy_function_call_field", "tool choice in the deprecated function_call field"
        )
        if isinstance(value, dict) and "function" not in value:
            value = {"type": "function", "function": value}
    if value is None:
        return None
    if isinstance(value, str):
        mode = choices.get(value)
        if mode is None:
            reader.deviation(where, "request_tool_choice_unknown", f"unknown tool_choice {value!r}; not read")
            return None
        return ToolChoice(mode)
    if not isinstance(value, dict):
        reader.malformed(where, f"tool_choice is {type(value).__name__}; not read")
        return None
    kind, function = value.get("type"), value.get("function")
    if kind == "allowed_tools" and isinstance(value.get("allowed_tools"), dict):
        mode = choices.get(str(value["allowed_tools"].get("mode", "auto")))
        reader.info(
            where,
            "request_tool_choice_allowed_tools",
            "an allowed_tools choice; the subset of tools it allows is not kept, only its mode",
        )
        return ToolChoice(mode) if mode in ("auto", "required") else None
    if not isinstance(function, dict) and isinstance(value.get("name"), str):
        reader.deviation(where, "request_tool_choice_shape", "a named choice without the function object")
        function = value
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        reader.malformed(where, "an object tool_choice without function.name; not read")
        return None
    if kind != "function":
        reader.info(where, "request_tool_choice_missing_type", 'a named tool_choice without type: "function"')
    return ToolChoice("named", function["name"])


def read_ollama(body: dict[str, Any]) -> RequestView:
    """An Ollama ``/api/chat`` request: object arguments, optional ids, results by ``tool_name``;
    it has no ``tool_choice`` and streams unless told not to."""
    reader = RequestReader()
    for where, item in reader.items("messages", body.get("messages"), required=True):
        role = item.get("role")
        content = reader.text(f"{where}.content", item.get("content"))
        if item.get("content") is not None and not isinstance(item["content"], str):
            reader.deviation(where, "request_content_not_string", "Ollama takes content as a string")
        if item.get("images"):
            reader.info(
                where, "request_part_not_read:images", "images are not read; the neutral types carry text"
            )
        if role in ("system", "user"):
            reader.add(where, Message(role, content))
        elif role == "assistant":
            calls: list[ToolCall] = []
            for call_where, raw in reader.items(f"{where}.tool_calls", item.get("tool_calls")):
                function = raw.get("function")
                if not isinstance(function, dict):
                    reader.malformed(call_where, "a tool call without a function object; skipped")
                    continue
                name, arguments = function.get("name"), function.get("arguments")
                call = reader.call(
                    call_where,
                    name,
                    arguments,
                    raw.get("id"),
                    len(calls),
                    wire_type="object",
                    optional_id=OLLAMA_OPTIONAL_ID,
                )
                calls.append(call)
            message = Message("assistant", content, calls)
            thinking = item.get("thinking")
            if isinstance(thinking, str) and thinking:
                message.extra["thinking"] = thinking
            reader.add(where, message)
        elif role == "tool":
            call_id = reader.string(f"{where}.tool_call_id", item.get("tool_call_id"), "tool_call_id")
            name = reader.string(f"{where}.tool_name", item.get("tool_name"), "tool_name")
            if name is None and isinstance(item.get("name"), str):
                reader.info(where, "request_tool_result_name_field", "the result names its tool in name")
                name = item["name"]
            reader.result(where, call_id or None, name, content or "")
        else:
            reader.malformed(where, f"unknown role {role!r}; message skipped")
    tools = read_function_tools(reader, body.get("tools"))
    if body.get("tool_choice") is not None:
        reader.deviation(
            "tool_choice",
            "request_tool_choice_unsupported",
            f"Ollama's /api/chat has no tool_choice field: {body['tool_choice']!r} is ignored by the server",
        )
    if body.get("stream") is None:
        reader.info("stream", "request_stream_default", "stream is not set; Ollama streams by default")
    return reader.view(tools, None, reader.stream(body, default=True), reader.model(body))
