"""Reading Gemini Interactions requests back (private to :mod:`harness.providers`).

The inverse of :meth:`GeminiInteractionsAdapter.build_request`, that also takes
what other clients write [GI1]: ``input`` as a string, one content object, a list of
contents (one user turn) or a list of steps; ``system_instruction`` as a string; a
``function_result`` whose ``result`` is a string, a list of content items or any
object; ``tool_choice`` as a mode string or ``allowed_tools``. A request that continues a
stored interaction (``previous_interaction_id``) holds only the new steps: the history
before them is on the server, and the view says so. Consecutive model steps
(``model_output``, ``thought``, ``function_call``) are one assistant message; thought
steps and other tools' steps are kept in its ``extra`` the way the response parser keeps
them for replay.
"""

from __future__ import annotations

import json
from typing import Any

from harness.model import ChoiceMode, Message, ToolCall, ToolChoice, ToolSpec
from harness.providers._calls import id_part, join_text
from harness.providers._requests import RequestReader
from harness.providers.adapter import RequestView

CONTENT_TYPES = frozenset({"text", "image", "audio", "document", "video"})
MODEL_STEPS = frozenset({"model_output", "thought", "function_call"})
MODES: dict[str, ChoiceMode] = {"auto": "auto", "any": "required", "none": "none", "validated": "auto"}


class _Turn:
    """The model steps of one assistant message, as they are read."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.text: list[str] = []
        self.calls: list[ToolCall] = []
        self.steps: list[dict[str, Any]] = []
        self.neutral = True

    def message(self) -> Message:
        message = Message("assistant", join_text(self.text), self.calls)
        if not self.neutral:
            message.extra["interactions_steps"] = self.steps
        return message


def read_interactions_request(body: dict[str, Any], path: str) -> RequestView:
    """An interaction request; ``path`` (when given) must be the interactions endpoint."""
    reader = RequestReader()
    system = body.get("system_instruction")
    if isinstance(system, str):
        reader.add("system_instruction", Message("system", system))
    elif system is not None:
        reader.malformed("system_instruction", f"is {type(system).__name__}, not a string; not read")
    if body.get("previous_interaction_id") is not None:
        reader.info(
            "previous_interaction_id",
            "request_previous_interaction",
            "the request continues a stored interaction: the history before its input is on the server",
        )
    _input(reader, body.get("input"))
    tools = _tools(reader, body.get("tools"))
    config = body.get("generation_config")
    if config is not None and not isinstance(config, dict):
        reader.malformed("generation_config", f"is {type(config).__name__}, not an object; not read")
        config = None
    choice = _choice(reader, (config or {}).get("tool_choice"))
    if "store" in body:
        reader.flag("store", body["store"], "store")
    if path and not path.split("?")[0].rstrip("/").endswith("/interactions"):
        reader.deviation("path", "request_path", f"{path!r} is not the interactions endpoint")
    return reader.view(tools, choice, reader.stream(body), reader.model(body))


def _input(reader: RequestReader, value: Any) -> None:
    """``input``: a string or a content object (one user message), a list of contents (one user
    message) or a list of steps (the conversation)."""
    if value is None:
        reader.malformed("input", "the field is missing")
        return
    if isinstance(value, str):
        reader.add("input", Message("user", value))
        return
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        reader.malformed("input", f"is {type(value).__name__}, not a string, an object or a list; not read")
        return
    items = reader.items("input", value)
    if items and all(_kind(item) in CONTENT_TYPES for _, item in items):
        reader.add("input", Message("user", _text(reader, "input", [item for _, item in items])))
        return
    turn: _Turn | None = None
    for where, step in items:
        kind = _kind(step)
        if kind in MODEL_STEPS:
            turn = turn or _Turn(where)
            _model_step(reader, where, step, turn)
            continue
        if turn is not None:
            reader.add(turn.where, turn.message())
            turn = None
        if kind == "user_input":
            reader.add(where, Message("user", _text(reader, f"{where}.content", step.get("content"))))
        elif kind == "function_result":
            _result(reader, where, step)
        elif kind is not None and kind.endswith("_result"):
            reader.info(
                where, f"request_step_not_read:{id_part(kind)}", f"a {kind!r} step is not a function's"
            )
        elif kind in CONTENT_TYPES:
            reader.malformed(where, f"a {kind!r} content among steps; read as a user message")
            reader.add(where, Message("user", _text(reader, where, [step])))
        else:
            reader.malformed(where, f"unknown step type {step.get('type')!r}; skipped")
    if turn is not None:
        reader.add(turn.where, turn.message())


def _kind(item: dict[str, Any]) -> str | None:
    """An item's ``type`` when it is a string."""
    kind = item.get("type")
    return kind if isinstance(kind, str) else None


def _text(reader: RequestReader, where: str, value: Any) -> str | None:
    """The text items of a content list joined; other items are noted as not read."""
    if isinstance(value, str):
        return value
    texts = []
    for item_where, item in reader.items(where, value):
        if item.get("type") == "text" and isinstance(item.get("text"), str):
            texts.append(item["text"])
        else:
            kind = item.get("type")
            reader.info(
                item_where,
                f"request_part_not_read:{id_part(kind)}",
                f"a {kind!r} content is not text; the neutral types carry text only",
            )
    return "".join(texts) if texts else None


def _model_step(reader: RequestReader, where: str, step: dict[str, Any], turn: _Turn) -> None:
    """One model step of the assistant message being read."""
    kind = step["type"]
    if kind == "function_call":
        call = reader.call(
            where,
            step.get("name"),
            step.get("arguments"),
            step.get("id"),
            len(turn.calls),
            wire_type="object",
        )
        turn.calls.append(call)
        turn.steps.append(
            {"type": "function_call", "id": call.id, "name": call.name, "arguments": call.arguments or {}}
        )
    elif kind == "model_output":
        text = _text(reader, f"{where}.content", step.get("content")) or ""
        turn.text.append(text)
        turn.steps.append({"type": "model_output", "content": [{"type": "text", "text": text}]})
    else:
        turn.neutral = False
        turn.steps.append(dict(step))


def _result(reader: RequestReader, where: str, step: dict[str, Any]) -> None:
    """A ``function_result``: a string result as it is, a list of content items as their text, any
    other value as its JSON text; linked to its call by ``call_id``."""
    call_id = reader.string(f"{where}.call_id", step.get("call_id"), "call_id")
    if not call_id:
        reader.deviation(
            where, "request_function_result_call_id_missing", "a function_result without call_id"
        )
    name = reader.string(f"{where}.name", step.get("name"), "name")
    result = step.get("result")
    if isinstance(result, str):
        content = result
    elif isinstance(result, list):
        content = _text(reader, f"{where}.result", result) or ""
    else:
        if result is None:
            reader.malformed(where, "a function_result without result; read as empty")
        content = "" if result is None else json.dumps(result, ensure_ascii=False)
    is_error = reader.flag(f"{where}.is_error", step.get("is_error"), "is_error")
    reader.result(where, call_id or None, name or None, content, is_error)


def _tools(reader: RequestReader, value: Any) -> list[ToolSpec]:
    """The ``function`` tools; other tools (search, code execution, MCP servers) are noted."""
    tools = []
    for where, tool in reader.items("tools", value):
        kind = tool.get("type")
        if kind != "function":
            reader.info(where, f"request_tool_not_read:{id_part(kind)}", f"a {kind!r} tool is not a function")
            continue
        spec = reader.tool(where, tool.get("name"), tool.get("description"), tool.get("parameters"))
        if spec is not None:
            tools.append(spec)
    return tools


def _choice(reader: RequestReader, value: Any) -> ToolChoice | None:
    """``generation_config.tool_choice``: a mode, or ``allowed_tools`` (mode ``any`` with one tool
    is a named choice)."""
    where = "generation_config.tool_choice"
    if value is None:
        return None
    if isinstance(value, str):
        return _mode(reader, where, value, [])
    if not isinstance(value, dict):
        reader.malformed(where, f"is {type(value).__name__}, not a string or an object; not read")
        return None
    allowed = value.get("allowed_tools")
    if not isinstance(allowed, dict):
        reader.malformed(where, "an object without allowed_tools; not read")
        return None
    names = allowed.get("tools")
    if names is not None and not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
        reader.malformed(f"{where}.allowed_tools.tools", "is not a list of strings; not read")
        names = None
    mode = allowed.get("mode", "auto")
    if not isinstance(mode, str):
        reader.malformed(f"{where}.allowed_tools.mode", f"is {type(mode).__name__}, not a string; not read")
        return None
    return _mode(reader, f"{where}.allowed_tools", mode, names or [])


def _mode(reader: RequestReader, where: str, mode: str, names: list[str]) -> ToolChoice | None:
    if mode not in MODES:
        reader.deviation(where, "request_tool_choice_unknown", f"unknown tool_choice mode {mode!r}; not read")
        return None
    if mode == "validated":
        reader.info(
            where, "request_mode_validated", "mode validated (call or answer, calls schema-checked): auto"
        )
    if mode == "any" and len(names) == 1:
        return ToolChoice("named", names[0])
    if names:
        reader.info(
            where,
            "request_allowed_tools_subset",
            f"mode {mode!r} among {names}: read as {MODES[mode]} (the neutral types name one tool or all)",
        )
    return ToolChoice(MODES[mode])
