"""Reading OpenAI Responses API requests back (private to :mod:`harness.providers`).

The inverse of :meth:`OpenAIResponsesAdapter.build_request`, that also takes what real
clients write: ``input`` as one string, ``instructions``, messages with a string or a list of
``input_text`` / ``output_text`` parts, the ``developer`` role, ``function_call_output`` with a
string or a list of ``input_text`` / ``input_image`` parts, reasoning and other output items
replayed between them (kept with the assistant turn they belong to), flat function tools, and
``tool_choice`` in every form (``auto`` / ``none`` / ``required``, ``{"type": "function",
"name"}``, ``{"type": "allowed_tools", "mode", "tools"}``). A request that names a
``previous_response_id`` carries only what came after that response: its tool outputs answer
calls the server holds; so does one that names a ``conversation`` (the Conversations API).
"""

from __future__ import annotations

from typing import Any

from harness.model import ChoiceMode, Message, ToolCall, ToolChoice, ToolResult, ToolSpec
from harness.providers._calls import id_part, join_text
from harness.providers._requests import RequestReader
from harness.providers.adapter import RequestView

MODES: dict[str, ChoiceMode] = {"auto": "auto", "none": "none", "required": "required"}
TEXT_PARTS = ("input_text", "output_text", "text")
OUTPUTS = frozenset(
    {
        "function_call_output",
        "custom_tool_call_output",
        "computer_call_output",
        "local_shell_call_output",
        "shell_call_output",
        "apply_patch_call_output",
        "mcp_approval_response",
    }
)


class _Turn:
    """The output items of one earlier assistant turn, as the request replays them."""

    def __init__(self, where: str):
        self.where = where
        self.texts: list[str] = []
        self.calls: list[ToolCall] = []
        self.kept: list[dict[str, Any]] = []


def read_responses_request(body: dict[str, Any]) -> RequestView:
    """A Responses request: instructions, input items, tools, choice."""
    reader = RequestReader()
    chained = False
    for key in ("previous_response_id", "conversation"):
        if body.get(key):
            chained = True
            reader.info(
                key,
                f"request_{key}",
                f"the request continues a stored {key.removeprefix('previous_').replace('_id', '')}: "
                "the history before it is held by the server",
            )
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions:
        reader.add("instructions", Message("system", instructions))
    elif instructions is not None and not isinstance(instructions, str):
        reader.malformed(
            "instructions", f"instructions are {type(instructions).__name__}, not a string; not read"
        )
    value = body.get("input")
    if isinstance(value, str):
        reader.add("input", Message("user", value))
    else:
        _items(reader, value, chained)
    tools = _tools(reader, body.get("tools"))
    return reader.view(
        tools, _choice(reader, body.get("tool_choice")), reader.stream(body), reader.model(body)
    )


def _items(reader: RequestReader, value: Any, chained: bool) -> None:
    """The input items in order; consecutive output items make one assistant message."""
    turn: _Turn | None = None
    for where, item in reader.items("input", value, required=True):
        kind = item.get("type", "message" if "role" in item else None)
        if not isinstance(kind, str):
            reader.malformed(where, f"an input item whose type is {type(kind).__name__}; skipped")
            continue
        role = item.get("role")
        if kind == "message" and role != "assistant":
            _flush(reader, turn)
            turn = None
            _message(reader, where, item)
            continue
        if kind in OUTPUTS:
            _flush(reader, turn)
            turn = None
            if kind == "function_call_output":
                _output(reader, where, item, chained)
            else:
                reader.info(where, f"request_part_not_read:{id_part(kind)}", f"a {kind!r} item is not read")
            continue
        if kind == "item_reference":
            reader.info(where, "request_item_reference", "an item_reference: the item is held by the server")
            continue
        turn = turn or _Turn(where)
        turn.kept.append(dict(item))
        if kind == "message":
            turn.texts.append(_text(reader, f"{where}.content", item.get("content")) or "")
        elif kind == "function_call":
            call = reader.call(
                where,
                item.get("name"),
                item.get("arguments"),
                item.get("call_id"),
                len(turn.calls),
                wire_type="string",
            )
            if isinstance(item.get("id"), str):
                call.extra["item_id"] = item["id"]
            turn.calls.append(call)
        elif kind != "reasoning":
            reader.info(
                where, f"request_part_not_read:{id_part(kind)}", f"a {kind!r} item is kept for replay only"
            )
    _flush(reader, turn)


def _flush(reader: RequestReader, turn: _Turn | None) -> None:
    """The assistant message of the output items read so far."""
    if turn is not None:
        message = Message("assistant", join_text(turn.texts), turn.calls, extra={"openai_output": turn.kept})
        reader.add(turn.where, message)


def _message(reader: RequestReader, where: str, item: dict[str, Any]) -> None:
    role = item.get("role")
    if role == "developer":
        reader.info(where, "request_role_mapped:developer", "the developer role is read as system")
        role = "system"
    if role not in ("system", "user"):
        reader.malformed(where, f"unknown role {role!r}; message skipped")
        return
    if item.get("content") is None:
        reader.deviation(where, "request_content_missing", f"a {role} message without content")
    reader.add(where, Message(role, _text(reader, f"{where}.content", item.get("content"))))


def _output(reader: RequestReader, where: str, item: dict[str, Any], chained: bool) -> None:
    """A ``function_call_output``: a string, or a list of ``input_text`` / ``input_image`` parts."""
    call_id = reader.string(f"{where}.call_id", item.get("call_id"), "call_id")
    if not call_id:
        reader.deviation(where, "request_tool_call_id_missing", "a function_call_output without call_id")
    output = item.get("output")
    if output is None:
        reader.deviation(where, "request_content_missing", "a function_call_output without output")
    content = _text(reader, f"{where}.output", output) or ""
    if chained and call_id and not any(c.id == call_id for c in reader.pending):
        # the call is in the stored response the request continues, not in this request
        reader.add(where, Message("tool", tool_result=ToolResult(call_id, "", content)))
        return
    reader.result(where, call_id or None, None, content)


def _text(reader: RequestReader, where: str, value: Any) -> str | None:
    """A string, or the text of a list of parts; parts that are not text are noted as not read."""
    if value is None or isinstance(value, str):
        return value
    if not isinstance(value, list):
        reader.malformed(where, f"content is {type(value).__name__}; not read")
        return None
    texts = []
    for part_where, part in reader.items(where, value):
        kind = part.get("type")
        if kind in TEXT_PARTS and isinstance(part.get("text"), str):
            texts.append(part["text"])
        else:
            reader.info(
                part_where,
                f"request_part_not_read:{id_part(kind)}",
                f"a {kind!r} part is not text; the neutral types carry text only",
            )
    return "".join(texts) if texts else None


def _tools(reader: RequestReader, value: Any) -> list[ToolSpec]:
    """Flat function tools; the chat shape (``function: {...}``) is read with a deviation."""
    tools = []
    for where, item in reader.items("tools", value):
        kind = item.get("type")
        if kind != "function":
            reader.info(
                where, f"request_tool_not_read:{id_part(kind)}", f"a tool of type {kind!r} is not a function"
            )
            continue
        declared = item
        if isinstance(item.get("function"), dict) and "name" not in item:
            reader.deviation(
                where,
                "request_tool_shape",
                "a tool in the Chat Completions shape (function: {...}); Responses takes it flat",
            )
            declared = item["function"]
        spec = reader.tool(
            where, declared.get("name"), declared.get("description"), declared.get("parameters")
        )
        if spec is not None:
            tools.append(spec)
    return tools


def _choice(reader: RequestReader, value: Any) -> ToolChoice | None:
    """``tool_choice``: a mode, a named function, or ``allowed_tools`` (its mode is kept)."""
    if value is None:
        return None
    if isinstance(value, str):
        if value not in MODES:
            reader.deviation(
                "tool_choice", "request_tool_choice_unknown", f"unknown tool_choice {value!r}; not read"
            )
            return None
        return ToolChoice(MODES[value])
    if not isinstance(value, dict):
        reader.malformed("tool_choice", f"tool_choice is {type(value).__name__}; not read")
        return None
    kind = value.get("type")
    if kind == "allowed_tools":
        mode = value.get("mode")
        reader.info(
            "tool_choice",
            "request_tool_choice_allowed_tools",
            "an allowed_tools choice; the subset of tools it allows is not kept, only its mode",
        )
        if mode in ("auto", "required"):
            return ToolChoice(mode)
        reader.malformed("tool_choice", f"allowed_tools mode {mode!r} is not auto or required; not read")
        return None
    if kind != "function":
        reader.info(
            "tool_choice", f"request_tool_choice_not_read:{id_part(kind)}", f"a tool_choice of type {kind!r}"
        )
        return None
    name = value.get("name")
    if not isinstance(name, str) and isinstance(value.get("function"), dict):
        reader.deviation(
            "tool_choice",
            "request_tool_choice_shape",
            "a named choice in the Chat Completions shape (function: {name})",
        )
        name = value["function"].get("name")
    if not isinstance(name, str):
        reader.malformed("tool_choice", "a function tool_choice without a name; not read")
        return None
    return ToolChoice("named", name)
