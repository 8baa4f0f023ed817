"""Bedrock Converse requests, built and read back (private to :mod:`harness.providers`).

The parts of :meth:`BedrockConverseAdapter.build_request`, and their inverse, which also takes
what real clients write (boto3, the AWS SDKs, pydantic-ai, vercel/ai): ``system`` text blocks,
user messages of ``text`` and ``toolResult`` blocks (``content`` of ``text`` and ``json`` items,
``status``), assistant messages of ``text``, ``toolUse`` and reasoning blocks, ``toolConfig``
with ``toolSpec`` tools and ``toolChoice``. The model and the streaming mode are in the path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from harness.model import Finding, Message, ToolCall, ToolChoice, ToolSpec, deviation
from harness.providers._calls import id_part, ids_rewritten, join_text, synthesize_id
from harness.providers._requests import RequestReader
from harness.providers.adapter import RequestView
from harness.providers.rules import NameRules

NEUTRAL = ("text", "toolUse")
ID_RULE = re.compile(r"^[a-zA-Z0-9_.:-]{1,64}$")
"""ToolUseId's pattern and length [B1]."""
SERVER_TOOL = "server_tool_use"
"""The ``type`` of a ``toolUse`` the provider runs itself (not a call) [B1]."""


def info(code: str, detail: str) -> Finding:
    """A note (``wire.<code>``, info): legal on the wire, or not the model's doing, but worth knowing."""
    return Finding(f"wire.{code}", "info", False, detail)


def bedrock_id(call_id: str) -> str:
    """The id unchanged when it follows the ToolUseId rule, else a deterministic one that does."""
    return call_id if ID_RULE.match(call_id) else synthesize_id("id", call_id, 0)


def client_calls(blocks: list[Any]) -> list[Any]:
    """The ids of the ``toolUse`` blocks of a message that are calls: not run by the provider (a
    ``server_tool_use``, or answered by a ``toolResult`` of the same message)."""
    uses = [b["toolUse"] for b in blocks if isinstance(b, dict) and isinstance(b.get("toolUse"), dict)]
    answered = {
        b["toolResult"].get("toolUseId")
        for b in blocks
        if isinstance(b, dict) and isinstance(b.get("toolResult"), dict)
    }
    return [
        use.get("toolUseId")
        for use in uses
        if use.get("type") != SERVER_TOOL and use.get("toolUseId") not in answered
    ]


# -- building -----------------------------------------------------------------------------------


def converse_tool(tool: ToolSpec) -> dict[str, Any]:
    """One ``toolSpec``; ``inputSchema.json`` is required, ``description`` must not be empty."""
    spec: dict[str, Any] = {
        "name": tool.name,
        "inputSchema": {"json": tool.parameters or {"type": "object", "properties": {}}},
    }
    if tool.description:
        spec["description"] = tool.description
    return {"toolSpec": spec}


def converse_tool_choice(choice: ToolChoice, findings: list[Finding]) -> dict[str, Any] | None:
    """``required`` is ``any``, a named tool ``tool``; ``none`` does not exist [B5]: not sent."""
    if choice.mode == "none":
        findings.append(
            info(
                "tool_choice_unsupported",
                "Converse's toolChoice has no 'none' (auto, any and tool only): not sent, and the "
                "model chose freely among the tools (they stay declared: a history with toolUse "
                "blocks needs toolConfig)",
            )
        )
        return None
    if choice.mode == "named":
        return {"tool": {"name": choice.name}}
    return {"any": {}} if choice.mode == "required" else {"auto": {}}


def converse_messages(
    messages: Sequence[Message], rules: NameRules, findings: list[Finding]
) -> list[dict[str, Any]]:
    """Conversation messages: roles alternate (a user message after tool results or another user
    message joins it), ids rewritten to the ToolUseId rule, history names checked."""
    bad = {i for m in messages for i in _message_ids(m) if not ID_RULE.match(i)}
    findings.extend(ids_rewritten(sorted(bad), "Bedrock's ToolUseId rule"))
    names = sorted({c.name for m in messages for c in m.tool_calls if not rules.is_valid(c.name)})
    if names:
        findings.append(
            info(
                "tool_name_rule",
                f"tool name(s) {names} in the history break Bedrock's rule {rules.pattern.pattern}: "
                "Bedrock refuses the request ('failed to satisfy constraint: Member must satisfy regular "
                "expression pattern') [B6]",
            )
        )
    wire: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "assistant":
            wire.append({"role": "assistant", "content": _assistant_blocks(message, findings)})
            continue
        block = _tool_result(message) if message.role == "tool" else {"text": message.content or ""}
        if message.role == "user" and not message.content and wire and wire[-1]["role"] == "user":
            continue  # nothing to add to the user message already open
        if wire and wire[-1]["role"] == "user":
            wire[-1]["content"].append(block)
        else:
            wire.append({"role": "user", "content": [block]})
    return wire


def _tool_result(message: Message) -> dict[str, Any]:
    """One ``toolResult``; ``status`` only for an error (Claude and Nova read it) [B1]."""
    result = message.tool_result
    assert result is not None
    content: list[dict[str, Any]]
    if result.form == "json":  # a json content block takes the value itself [B1]
        content = [{"json": result.value()}]
    elif result.form == "parts":
        content = [
            {"text": p.text}
            if p.kind == "text"
            else {"image": {"format": (p.media_type or "").partition("/")[2], "source": {"bytes": p.data}}}
            for p in result.parts
        ]
    else:
        content = [{"text": result.content}]
    block: dict[str, Any] = {"toolUseId": bedrock_id(result.call_id or ""), "content": content}
    if result.is_error:
        block["status"] = "error"
    return {"toolResult": block}


def _assistant_blocks(message: Message, findings: list[Finding]) -> list[dict[str, Any]]:
    """The raw blocks of the parse when kept (reasoning must go back unchanged), else rebuilt."""
    raw = message.extra.get("bedrock_content")
    if isinstance(raw, list):
        if client_calls(raw) == [bedrock_id(c.id or "") for c in message.tool_calls]:
            return raw
        findings.append(
            deviation(
                "replay_content_rebuilt",
                "kept Bedrock content blocks no longer match the message's tool calls; blocks "
                "rebuilt (reasoning not replayed)",
            )
        )
    blocks: list[dict[str, Any]] = [{"text": p.text} for p in message.parts]
    if message.content and not message.parts:
        blocks.append({"text": message.content})
    for call in message.tool_calls:
        if call.arguments is None:
            findings.append(
                deviation(
                    "unparsed_arguments_replayed_empty",
                    f"call {call.id} had unparseable arguments; replayed as input {{}}",
                )
            )
        blocks.append(
            {
                "toolUse": {
                    "toolUseId": bedrock_id(call.id or ""),
                    "name": call.name,
                    "input": call.arguments or {},
                }
            }
        )
    if not blocks:
        findings.append(
            info(
                "empty_assistant_content",
                "an assistant message with no text and no call: Bedrock refuses empty content ('Add a "
                "ContentBlock object to the content field') [B7]",
            )
        )
    return blocks


def _message_ids(message: Message) -> list[str]:
    ids = [c.id or "" for c in message.tool_calls]
    if message.tool_result is not None:
        ids.append(message.tool_result.call_id or "")
    return ids


# -- reading back -------------------------------------------------------------------------------


def read_converse_request(
    body: dict[str, Any], model: str | None, stream: bool, names: NameRules
) -> RequestView:
    """A Converse request: system blocks, messages of content blocks, tools, choice."""
    reader = RequestReader()
    for where, block in reader.items("system", body.get("system")):
        if isinstance(block.get("text"), str):
            reader.add(where, Message("system", block["text"]))
        else:
            reader.info(
                where, f"request_part_not_read:{id_part(_kind(block))}", "a system block that is not text"
            )
    tool_blocks = False
    for where, item in reader.items("messages", body.get("messages"), required=True):
        role, content = item.get("role"), item.get("content")
        if isinstance(content, str):  # another format's shape (OpenAI's, Anthropic's)
            reader.malformed(f"{where}.content", "content is a string, not a list of blocks; read as text")
            content = [{"text": content}]
        blocks = reader.items(f"{where}.content", content, required=True)
        if isinstance(content, list) and not content:
            reader.malformed(where, "a message with empty content (Bedrock refuses it)")
        tool_blocks = tool_blocks or any(_kind(b) in ("toolUse", "toolResult") for _, b in blocks)
        if role == "user":
            _user(reader, blocks)
        elif role == "assistant":
            _assistant(reader, where, blocks, names)
        else:
            reader.malformed(where, f"role {role!r} (user or assistant only; system is top-level); skipped")
    config = body.get("toolConfig")
    if config is not None and not isinstance(config, dict):
        reader.malformed("toolConfig", f"toolConfig is {type(config).__name__}; not read")
        config = None
    if tool_blocks and config is None:
        reader.deviation(
            "toolConfig",
            "request_tool_config_missing",
            "toolUse or toolResult blocks without toolConfig (Bedrock refuses them)",
        )
    if model is None:
        reader.deviation("path", "request_model_missing", "the path names no model (/model/<id>/converse)")
    config = config or {}
    tools = _tools(reader, config.get("tools"), names)
    return reader.view(tools, _choice(reader, config.get("toolChoice")), stream, model)


def _kind(block: dict[str, Any]) -> str:
    """The member a content block (a union of one member) holds."""
    return str(next(iter(block), ""))


def _user(reader: RequestReader, blocks: list[tuple[str, dict[str, Any]]]) -> None:
    """``toolResult`` blocks become tool messages, each ``text`` block one user message."""
    for where, block in blocks:
        kind = _kind(block)
        if kind == "toolResult" and isinstance(block["toolResult"], dict):
            _result(reader, f"{where}.toolResult", block["toolResult"])
        elif kind == "text" and isinstance(block["text"], str):
            reader.add(where, Message("user", block["text"]))
        else:
            reader.info(
                where,
                f"request_part_not_read:{id_part(kind)}",
                f"a {kind!r} block; the neutral types carry text",
            )


def _result(reader: RequestReader, where: str, block: dict[str, Any]) -> None:
    """One ``toolResult``: its ``text`` items as they are, ``json`` items as JSON text, ``status``."""
    call_id = reader.string(f"{where}.toolUseId", block.get("toolUseId"), "toolUseId")
    if not call_id:
        reader.deviation(where, "request_tool_call_id_missing", "a toolResult without toolUseId")
    texts = []
    for item_where, item in reader.items(f"{where}.content", block.get("content"), required=True):
        if isinstance(item.get("text"), str):
            texts.append(item["text"])
        elif "json" in item:
            texts.append(json.dumps(item["json"], ensure_ascii=False))
        else:
            kind = _kind(item)
            reader.info(
                item_where, f"request_part_not_read:{id_part(kind)}", f"a {kind!r} item of a tool result"
            )
    status = block.get("status")
    if status not in (None, "success", "error"):
        reader.malformed(f"{where}.status", f"status {status!r} (success or error); read as success")
    reader.result(where, call_id or None, None, "".join(texts), status == "error")


def _assistant(
    reader: RequestReader,
    where: str,
    blocks: list[tuple[str, dict[str, Any]]],
    names: NameRules,
) -> None:
    """An assistant message; blocks other than text and toolUse (reasoning) are kept for replay, as
    :meth:`BedrockConverseAdapter.parse` keeps them."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    kept: list[dict[str, Any]] = []
    for block_where, block in blocks:
        kind = _kind(block)
        kept.append(dict(block))
        value = block.get(kind)
        if kind == "text":
            texts.append(reader.string(f"{block_where}.text", value, "text") or "")
        elif kind == "toolUse" and isinstance(value, dict):
            call = reader.call(
                f"{block_where}.toolUse",
                value.get("name"),
                value.get("input"),
                value.get("toolUseId"),
                len(calls),
                wire_type="object",
            )
            calls.append(call)
        elif kind != "reasoningContent":
            reader.info(
                block_where, f"request_part_not_read:{id_part(kind)}", f"a {kind!r} block kept for replay"
            )
    message = Message("assistant", join_text(texts), calls)
    if any(_kind(b) not in NEUTRAL for b in kept):
        message.extra["bedrock_content"] = kept
    bad = [c.wire_id for c in calls if c.wire_id and not ID_RULE.match(c.wire_id)]
    if bad:
        reader.deviation(where, "id_format", f"toolUseIds {bad} break Bedrock's rule {ID_RULE.pattern}")
    broken = [c.name for c in calls if not names.is_valid(c.name)]
    if broken:
        reader.deviation(
            where,
            "tool_name_rule",
            f"tool names {broken} in the history break Bedrock's rule {names.pattern.pattern} (refused)",
            severity="error",
        )
    reader.add(where, message)


def _tools(reader: RequestReader, value: Any, names: NameRules) -> list[ToolSpec]:
    """``toolSpec`` tools; a ``systemTool`` or a ``cachePoint`` is noted and not read."""
    tools = []
    for where, item in reader.items("toolConfig.tools", value):
        spec = item.get("toolSpec")
        if not isinstance(spec, dict):
            kind = _kind(item)
            reader.info(
                where, f"request_tool_not_read:{id_part(kind)}", f"a {kind!r} entry is not a toolSpec"
            )
            continue
        schema = spec.get("inputSchema")
        if not isinstance(schema, dict) or "json" not in schema:
            reader.deviation(
                where, "request_tool_schema_missing", "a toolSpec without inputSchema.json (required)"
            )
        name = spec.get("name")
        if isinstance(name, str) and name and not names.is_valid(name):
            reader.deviation(
                where, "tool_name_rule", f"tool name {name!r} breaks Bedrock's rule {names.pattern.pattern}"
            )
        parameters = schema.get("json") if isinstance(schema, dict) else None
        found = reader.tool(f"{where}.toolSpec", name, spec.get("description"), parameters)
        if found is not None:
            tools.append(found)
    return tools


def _choice(reader: RequestReader, value: Any) -> ToolChoice | None:
    """``{auto: {}}``, ``{any: {}}`` or ``{tool: {name}}``; Converse has no ``none``."""
    if value is None:
        return None
    if not isinstance(value, dict) or len(value) != 1:
        reader.malformed(
            "toolChoice", "toolChoice is not an object of one member (auto, any or tool); not read"
        )
        return None
    kind = _kind(value)
    if kind == "auto":
        return ToolChoice("auto")
    if kind == "any":
        return ToolChoice("required")
    if kind == "tool":
        name = value["tool"].get("name") if isinstance(value["tool"], dict) else None
        if not isinstance(name, str):
            reader.malformed("toolChoice", "toolChoice tool without a name; not read")
            return None
        return ToolChoice("named", name)
    reader.deviation(
        "toolChoice", "request_tool_choice_unknown", f"unknown toolChoice {kind!r} (auto, any, tool)"
    )
    return None
