"""Seeded histories: a scenario's ``messages`` beyond system and user text, read into neutral
messages that each adapter writes in its own wire shape.

One shape for every format (``docs/scenarios.md``)::

    - {role: user, content: "What is the weather in Paris?"}
    - role: assistant
      content: null                  # or "", text, or a list of parts [{text: ...}]
      calls: [{id: call_1, name: get_weather, args: {city: Paris}}]
      reasoning: {text: ..., signature: ...}   # with history_from: the origin's reasoning
    - {role: tool, call_id: call_1, content: "18 C"}   # or [parts], json: {...}, is_error: true

Each variant servers disagree on is explicit: assistant content ``null`` / ``""`` / a list of
parts, a result as text, text parts, JSON, an image part or an error. A history must be well
formed (every call answered by one result before the next message, ids unique, names offered,
the model speaking next), except in a scenario that expects the endpoint to refuse it
(``expect.refused``), where a malformed history is the point.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from harness.model import Message, Part, ToolCall, ToolResult, canonical
from harness.providers.portability import seed_reasoning

Error = Callable[..., None]
"""How errors are noted: ``error(message, *where)`` with the path inside the scenario."""

EXTRA_KEYS = {
    "system": ("content",),
    "user": ("content",),
    "assistant": ("content", "calls", "reasoning"),
    "tool": ("call_id", "name", "content", "json", "is_error"),
}


def read(data: dict[str, Any], error: Error, offered: Callable[[str], bool]) -> tuple[Message, ...]:
    """The scenario's messages as neutral messages; every problem noted through ``error``."""
    listed = data.get("messages")
    items: list[Any] = listed if isinstance(listed, list) else []
    refused = isinstance(data.get("expect"), dict) and "refused" in data["expect"]
    origin = data.get("history_from")
    pairing = _Pairing(error, checked=not refused)
    messages: list[Message] = []
    for index, item in enumerate(items):
        role = item.get("role") if isinstance(item, dict) else None
        if role not in EXTRA_KEYS:
            continue  # cut for its schema error
        where = ("messages", index)
        for key in item:
            if key not in EXTRA_KEYS[role] and key != "role":
                error(
                    f"a {role} message takes no {key!r} (it takes {', '.join(EXTRA_KEYS[role])})", *where, key
                )
        if role in ("system", "user"):
            content = item.get("content")
            if not isinstance(content, str) or not content:
                error(f"a {role} message's content is non-empty text", *where, "content")
                continue
            pairing.close(where)
            messages.append(Message(role, content))
        elif role == "assistant":
            message = _assistant(item, where, error, origin, offered if not refused else None)
            if message is not None:
                pairing.close(where)
                pairing.open(message, where)
                messages.append(message)
        else:
            message = _tool(item, where, error)
            if message is not None:
                pairing.answer(message, where)
                messages.append(message)
    pairing.close(("messages", len(items) - 1), end=True)
    if not refused and messages and messages[-1].role == "assistant":
        error(
            "the conversation ends with an assistant turn; end it with a user message or the tool "
            "results (the model speaks next)",
            "messages",
            len(items) - 1,
        )
    return tuple(messages)


def _parts(value: list[Any]) -> list[Part]:
    """The well-formed parts (``{text}``, ``{image: {media_type, data}}``); the schema names the
    others."""
    parts = []
    for p in value:
        image = p.get("image") if isinstance(p, dict) else None
        if isinstance(p, dict) and isinstance(p.get("text"), str):
            parts.append(Part("text", text=p["text"]))
        elif isinstance(image, dict) and all(isinstance(image.get(k), str) for k in ("media_type", "data")):
            parts.append(Part("image", media_type=image["media_type"], data=image["data"]))
    return parts


def _assistant(
    item: dict[str, Any],
    where: tuple[str | int, ...],
    error: Error,
    origin: str | None,
    offered: Callable[[str], bool] | None,
) -> Message | None:
    calls = []
    listed = item.get("calls") or []
    for index, raw in enumerate(listed if isinstance(listed, list) else []):
        if not (
            isinstance(raw, dict) and isinstance(raw.get("name"), str) and isinstance(raw.get("id"), str)
        ):
            error("a call is {id: text, name: text, args: {...}}", *where, "calls", index)
            continue
        if offered is not None and not offered(raw["name"]):
            error(
                f"the history calls {raw['name']!r}, a tool the scenario does not offer",
                *where,
                "calls",
                index,
                "name",
            )
        args = raw.get("args") if isinstance(raw.get("args"), dict) else {}
        calls.append(ToolCall(raw["name"], args, None, raw["id"], raw["id"], index))
    content = item.get("content")
    parts: list[Part] = []
    if isinstance(content, list):
        parts = _parts(content)
        if any(p.kind != "text" for p in parts):
            error("an assistant turn's parts are text ({text: ...})", *where, "content")
            return None
        content = "".join(p.text for p in parts)
    if not calls and not content:
        error("an assistant turn without calls needs text content", *where, "content")
        return None
    message = Message("assistant", content, calls, parts=parts)
    reasoning = item.get("reasoning")
    if reasoning is not None:
        if not isinstance(reasoning, dict) or not isinstance(reasoning.get("text"), str):
            error("reasoning is {text: ..., signature: ...}", *where, "reasoning")
            return None
        if origin is None:
            error(
                "reasoning is kept in its origin's wire shape: say whose it is (history_from)",
                *where,
                "reasoning",
            )
            return None
        seed_reasoning(origin, message, reasoning["text"], reasoning.get("signature"))
    return message


def _tool(item: dict[str, Any], where: tuple[str | int, ...], error: Error) -> Message | None:
    if not isinstance(item.get("call_id"), str) or not isinstance(item.get("name", ""), str):
        error("a tool result names the call it answers (call_id, text)", *where)
        return None
    given = [key for key in ("content", "json") if key in item]
    if len(given) != 1:
        error("a tool result gives either content (text or parts) or json", *where)
        return None
    content = item.get("content")
    if "json" in item:
        result = ToolResult(item["call_id"], item.get("name", ""), canonical(item["json"]), form="json")
    elif isinstance(content, list):
        parts = _parts(content)
        text = "\n".join(p.text for p in parts if p.kind == "text")
        result = ToolResult(item["call_id"], item.get("name", ""), text, form="parts", parts=parts)
    elif isinstance(content, str):
        result = ToolResult(item["call_id"], item.get("name", ""), content)
    else:
        error("a tool result's content is text or a list of parts", *where, "content")
        return None
    result.is_error = bool(item.get("is_error", False))
    return Message("tool", tool_result=result)


class _Pairing:
    """Every call answered once, by id, before the next message; ids unique in the history."""

    def __init__(self, error: Error, *, checked: bool):
        self.error, self.checked = error, checked
        self.pending: dict[str, ToolCall] = {}
        self.calls: dict[str, ToolCall] = {}
        self.where: tuple[str | int, ...] = ()

    def open(self, message: Message, where: tuple[str | int, ...]) -> None:
        for index, call in enumerate(message.tool_calls):
            assert call.id is not None
            if call.id in self.calls and self.checked:
                self.error(f"call id {call.id!r} is used twice in the history", *where, "calls", index, "id")
            self.calls[call.id] = call
            self.pending[call.id] = call
        self.where = where

    def answer(self, message: Message, where: tuple[str | int, ...]) -> None:
        result = message.tool_result
        assert result is not None and result.call_id is not None
        awaited = self.pending.pop(result.call_id, None)
        known = self.calls.get(result.call_id)
        if known is not None and not result.name:
            result.name = known.name  # a result names its call's tool unless it says otherwise
        if not self.checked:
            return
        if known is None:
            self.error(f"a tool result for {result.call_id!r}, which no earlier call has", *where, "call_id")
        elif awaited is None:
            self.error(
                f"a tool result for {result.call_id!r}, a call not awaiting one (answered already, or "
                "of an earlier turn)",
                *where,
                "call_id",
            )

    def close(self, where: tuple[str | int, ...], *, end: bool = False) -> None:
        if self.pending and self.checked:
            ids = ", ".join(self.pending)
            self.error(
                f"call(s) {ids} get no tool result before "
                + ("the conversation ends" if end else "the next message"),
                *self.where,
                "calls",
            )
        self.pending = {}


def as_offered(messages: tuple[Message, ...], offered: dict[str, str]) -> tuple[Message, ...]:
    """``messages`` with the history's tool names as the tools are offered (``offered`` maps an
    offered name to the declared one: ``math_factorial`` -> ``math.factorial``), so a seeded
    history names the tools the request declares."""
    exposed = {declared: name for name, declared in offered.items()}
    if not exposed or not any(m.tool_calls or m.tool_result for m in messages):
        return messages
    renamed = []
    for message in messages:
        calls = [dataclasses.replace(c, name=exposed.get(c.name, c.name)) for c in message.tool_calls]
        result = message.tool_result
        if result is not None:
            result = dataclasses.replace(result, name=exposed.get(result.name, result.name))
        renamed.append(dataclasses.replace(message, tool_calls=calls, tool_result=result))
    return tuple(renamed)
