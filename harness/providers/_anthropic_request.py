"""Reading Anthropic Messages requests back (private to :mod:`harness.providers`).

The inverse of :meth:`AnthropicMessagesAdapter.build_request`, that also takes
what real clients write: ``system`` as a string or a list of text blocks, user
``content`` as a string or blocks, ``tool_result.content`` as a string or a
list of text blocks, ``is_error``, thinking blocks kept for replay.
"""

from __future__ import annotations

import re
from typing import Any

from harness.model import ChoiceMode, Message, ToolCall, ToolChoice, ToolSpec
from harness.providers._calls import id_part, join_text
from harness.providers._requests import RequestReader
from harness.providers.adapter import RequestView

CHOICES: dict[str, ChoiceMode] = {"auto": "auto", "any": "required", "none": "none", "tool": "named"}
NEUTRAL_BLOCKS = ("text", "tool_use")


def read_messages_request(body: dict[str, Any], id_rule: re.Pattern[str]) -> RequestView:
    """A Messages request: top-level system, user and assistant content blocks, tools, choice."""
    reader = RequestReader()
    _system(reader, body.get("system"))
    for where, item in reader.items("messages", body.get("messages"), required=True):
        role, content = item.get("role"), item.get("content")
        if role == "user":
            _user(reader, where, content)
        elif role == "assistant":
            _assistant(reader, where, content, id_rule)
        elif role == "system":
            reader.deviation(
                where,
                "request_system_in_messages",
                "Anthropic takes the system prompt top-level, not as a message",
            )
            reader.add(where, Message("system", reader.text(f"{where}.content", content)))
        else:
            reader.malformed(where, f"unknown role {role!r}; message skipped")
    tools = _tools(reader, body.get("tools"))
    if body.get("max_tokens") is None:
        reader.deviation("max_tokens", "request_max_tokens_missing", "max_tokens is required on this API")
    return reader.view(
        tools, _choice(reader, body.get("tool_choice")), reader.stream(body), reader.model(body)
    )


def _system(reader: RequestReader, value: Any) -> None:
    """One system message for a string, one per text block for a list."""
    if isinstance(value, str):
        if value:
            reader.add("system", Message("system", value))
        return
    for where, block in reader.items("system", value):
        if block.get("type", "text") == "text" and isinstance(block.get("text"), str):
            reader.add(where, Message("system", block["text"]))
        else:
            reader.malformed(where, f"a system block of type {block.get('type')!r}; only text is allowed")


def _user(reader: RequestReader, where: str, content: Any) -> None:
    """A user message: ``tool_result`` blocks become tool messages, then the text is one user message."""
    if isinstance(content, str):
        reader.add(where, Message("user", content))
        return
    blocks = reader.items(f"{where}.content", content, required=True)
    if isinstance(content, list) and not content:
        reader.malformed(where, "a user message with empty content")
    texts: list[str] = []
    results = 0
    for block_where, block in blocks:
        kind = block.get("type")
        if kind == "tool_result":
            if texts and not results:
                reader.deviation(
                    block_where,
                    "request_text_before_tool_result",
                    "text comes before the tool_result blocks (they must come first); read after them",
                )
            results += 1
            _result(reader, block_where, block)
        elif kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        else:
            reader.info(
                block_where,
                f"request_part_not_read:{id_part(kind)}",
                f"a {kind!r} block; the neutral types carry text only",
            )
    if texts or not results:
        reader.add(where, Message("user", "".join(texts) if texts else None))


def _result(reader: RequestReader, where: str, block: dict[str, Any]) -> None:
    """One ``tool_result``: content as a string or text blocks, ``is_error`` when true."""
    call_id = reader.string(f"{where}.tool_use_id", block.get("tool_use_id"), "tool_use_id")
    if not call_id:
        reader.deviation(where, "request_tool_call_id_missing", "a tool_result without tool_use_id")
    content = reader.text(f"{where}.content", block.get("content"))
    is_error = reader.flag(f"{where}.is_error", block.get("is_error"), "is_error")
    reader.result(where, call_id or None, None, content or "", is_error)


def _assistant(reader: RequestReader, where: str, content: Any, id_rule: re.Pattern[str]) -> None:
    """An assistant message; blocks other than text and tool_use (thinking) are kept for replay,
    as :meth:`AnthropicMessagesAdapter.parse` keeps them."""
    if isinstance(content, str):
        reader.add(where, Message("assistant", content))
        return
    texts: list[str] = []
    calls: list[ToolCall] = []
    kept: list[dict[str, Any]] = []
    for block_where, block in reader.items(f"{where}.content", content, required=True):
        kind = block.get("type")
        kept.append(dict(block))
        if kind == "text":
            texts.append(reader.string(f"{block_where}.text", block.get("text"), "text") or "")
        elif kind == "tool_use":
            call = reader.call(
                block_where,
                block.get("name"),
                block.get("input"),
                block.get("id"),
                len(calls),
                wire_type="object",
            )
            calls.append(call)
        elif kind not in ("thinking", "redacted_thinking"):
            reader.info(
                block_where,
                f"request_part_not_read:{id_part(kind)}",
                f"a {kind!r} block is kept for replay only",
            )
    message = Message("assistant", join_text(texts), calls)
    if any(b.get("type") not in NEUTRAL_BLOCKS for b in kept):
        message.extra["anthropic_content"] = kept
    bad = [c.wire_id for c in calls if c.wire_id and not id_rule.match(c.wire_id)]
    if bad:
        reader.deviation(where, "id_format", f"tool_use ids {bad} break Anthropic's rule {id_rule.pattern}")
    reader.add(where, message)


def _tools(reader: RequestReader, value: Any) -> list[ToolSpec]:
    """Custom tools ``{name, description, input_schema}``; server tools (a versioned ``type``) are noted."""
    tools = []
    for where, item in reader.items("tools", value):
        kind = item.get("type")
        if kind not in (None, "custom"):
            reader.info(
                where, f"request_tool_not_read:{id_part(kind)}", f"a server tool of type {kind!r} is not read"
            )
            continue
        if "input_schema" not in item:
            reader.deviation(where, "request_tool_schema_missing", "a tool without input_schema (required)")
        spec = reader.tool(where, item.get("name"), item.get("description"), item.get("input_schema"))
        if spec is not None:
            tools.append(spec)
    return tools


def _choice(reader: RequestReader, value: Any) -> ToolChoice | None:
    """``{"type": auto|any|tool|none, "name"?}``; ``disable_parallel_tool_use`` has no neutral field."""
    if value is None:
        return None
    if isinstance(value, str):
        reader.deviation(
            "tool_choice", "request_tool_choice_shape", "tool_choice is a string, not {type: ...}"
        )
        value = {"type": value}
    if not isinstance(value, dict):
        reader.malformed("tool_choice", f"tool_choice is {type(value).__name__}; not read")
        return None
    mode = CHOICES.get(str(value.get("type")))
    if mode is None:
        reader.deviation(
            "tool_choice", "request_tool_choice_unknown", f"unknown tool_choice type {value.get('type')!r}"
        )
        return None
    if mode != "named":
        return ToolChoice(mode)
    if not isinstance(value.get("name"), str):
        reader.malformed("tool_choice", "tool_choice type tool without a name; not read")
        return None
    return ToolChoice("named", value["name"])
