"""Reading Gemini ``generateContent`` requests back (private to :mod:`harness.providers`).

The inverse of :meth:`GeminiGenerateAdapter.build_request`, that also takes what
real clients write: camelCase or snake_case keys (the API takes both),
``systemInstruction.parts``, ``functionResponse.response`` objects of any shape,
declarations with ``parametersJsonSchema`` or the OpenAPI-subset ``parameters``
(upper-case or integer-encoded types), integer-encoded modes. The model and the
streaming mode are read from the request path. Thought signatures are kept in
``Message.extra`` and ``ToolCall.extra`` the way the response parser keeps them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from harness.model import Message, ToolCall, ToolChoice, ToolSpec
from harness.providers._calls import id_part, join_text
from harness.providers._requests import RequestReader
from harness.providers.adapter import RequestView

OPTIONAL_ID = "ids are optional on this API; Gemini 2.x sends none"
MODEL_IN_PATH = re.compile(r"models/([^/:?]+)")
# google.ai.generativelanguage.v1beta Type and FunctionCallingConfig.Mode, for int-encoded enums.
TYPES = ("TYPE_UNSPECIFIED", "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL")
MODES = ("MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED")
SCHEMA_LISTS = ("anyOf", "any_of")
SCHEMA_NODES = ("items",)


class _Reader(RequestReader):
    """A request reader that takes every key in camelCase or snake_case (noting the latter once)."""

    def get(self, obj: dict[str, Any], camel: str) -> Any:
        if camel in obj:
            return obj[camel]
        snake = re.sub(r"([A-Z])", r"_\1", camel).lower()
        if snake in obj:
            self.info(
                "", "request_snake_case_keys", "the request spells keys in snake_case (the API takes both)"
            )
            return obj[snake]
        return None


def read_generate_request(body: dict[str, Any], path: str) -> RequestView:
    """A ``generateContent`` request; ``path`` gives the model and the streaming mode."""
    reader = _Reader()
    _system(reader, reader.get(body, "systemInstruction"))
    for where, content in reader.items("contents", reader.get(body, "contents"), required=True):
        role = content.get("role")
        parts = reader.items(f"{where}.parts", content.get("parts"), required=True)
        if role == "assistant":
            reader.deviation(where, "request_role", "role 'assistant'; Gemini takes 'model'")
            role = "model"
        if role is None:
            reader.info(where, "request_role_missing", "a content without role is read as user")
        elif role in ("function", "tool"):
            reader.info(where, f"request_role_mapped:{role}", f"role {role!r} is read as user")
        if role == "model":
            _model(reader, where, parts)
        elif role in (None, "user", "function", "tool"):
            _user(reader, where, parts)
        else:
            reader.malformed(where, f"unknown role {role!r}; content skipped")
    tools = _tools(reader, reader.get(body, "tools"))
    choice = _choice(reader, reader.get(body, "toolConfig"))
    stream, model = _path(reader, body, path)
    return reader.view(tools, choice, stream, model)


def _system(reader: _Reader, value: Any) -> None:
    """One system message per text part of ``systemInstruction``."""
    if value is None:
        return
    if isinstance(value, str):
        reader.deviation("systemInstruction", "request_system_shape", "a string, not a Content with parts")
        reader.add("systemInstruction", Message("system", value))
        return
    if not isinstance(value, dict):
        reader.malformed("systemInstruction", f"is {type(value).__name__}, not a Content; not read")
        return
    for where, part in reader.items("systemInstruction.parts", value.get("parts"), required=True):
        if isinstance(part.get("text"), str):
            reader.add(where, Message("system", part["text"]))
        else:
            reader.info(where, "request_part_not_read:system", f"a system part with keys {sorted(part)}")


def _user(reader: _Reader, where: str, parts: list[tuple[str, dict[str, Any]]]) -> None:
    """A user content: ``functionResponse`` parts become tool messages, then the text one user message."""
    texts: list[str] = []
    results = 0
    for part_where, part in parts:
        response = reader.get(part, "functionResponse")
        if response is not None:
            if texts and not results:
                reader.info(
                    part_where,
                    "request_text_before_function_response",
                    "text comes before the functionResponse parts; read after them",
                )
            results += 1
            _result(reader, part_where, response)
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
        else:
            reader.info(
                part_where,
                "request_part_not_read:user",
                f"a part with keys {sorted(part)}; text only is read",
            )
    if texts or not results:
        reader.add(where, Message("user", "".join(texts) if texts else None))


def _result(reader: _Reader, where: str, value: Any) -> None:
    """A ``functionResponse``: ``{"result"|"output": x}`` is x, ``{"error": x}`` an error, any other
    object its JSON text; the id when sent, else linked to the unanswered call of that name."""
    if not isinstance(value, dict):
        reader.malformed(where, f"functionResponse is {type(value).__name__}; skipped")
        return
    name = reader.string(f"{where}.name", value.get("name"), "name")
    if not name:
        reader.deviation(where, "request_function_response_name_missing", "a functionResponse without name")
    call_id = reader.string(f"{where}.id", value.get("id"), "id")
    response = value.get("response")
    is_error = False
    if (
        isinstance(response, dict)
        and len(response) == 1
        and next(iter(response)) in ("result", "output", "error")
    ):
        key, inner = next(iter(response.items()))
        is_error = key == "error"
        content = inner if isinstance(inner, str) else json.dumps(inner, ensure_ascii=False)
    elif isinstance(response, dict):
        reader.info(
            where,
            "request_function_response_object",
            f"response keys {sorted(response)} are not result, output or error; its JSON text is the content",
        )
        content = json.dumps(response, ensure_ascii=False)
    else:
        reader.malformed(where, f"response is {type(response).__name__}, not an object; read as its text")
        content = "" if response is None else str(response)
    reader.result(where, call_id or None, name or None, content, is_error)


def _model(reader: _Reader, where: str, parts: list[tuple[str, dict[str, Any]]]) -> None:
    """A model content: calls with their thought signatures; text parts kept whole when they carry
    a signature or a thought, as the response parser keeps them for replay."""
    text_parts: list[dict[str, Any]] = []
    calls: list[ToolCall] = []
    for part_where, part in parts:
        function = reader.get(part, "functionCall")
        signature = reader.get(part, "thoughtSignature")
        if function is not None:
            if not isinstance(function, dict):
                reader.malformed(part_where, f"functionCall is {type(function).__name__}; skipped")
                continue
            call = reader.call(
                part_where,
                function.get("name"),
                function.get("args"),
                function.get("id"),
                len(calls),
                wire_type="object",
                optional_id=OPTIONAL_ID,
            )
            if signature is not None:
                call.extra["thoughtSignature"] = signature
            calls.append(call)
        elif "text" in part or signature is not None:
            kept: dict[str, Any] = {
                "text": reader.string(f"{part_where}.text", part.get("text"), "text") or ""
            }
            if part.get("thought"):
                kept["thought"] = True
            if signature is not None:
                kept["thoughtSignature"] = signature
            text_parts.append(kept)
        else:
            reader.info(
                part_where, "request_part_not_read:model", f"a part with keys {sorted(part)}; not read"
            )
    message = Message("assistant", join_text([p["text"] for p in text_parts if not p.get("thought")]), calls)
    if any("thoughtSignature" in p or p.get("thought") for p in text_parts):
        message.extra["gemini_text_parts"] = text_parts
    reader.add(where, message)


def _tools(reader: _Reader, value: Any) -> list[ToolSpec]:
    """``functionDeclarations`` of every tool; other tools (search, code execution) are noted."""
    tools = []
    for where, tool in reader.items("tools", value):
        for key in tool:
            if key not in ("functionDeclarations", "function_declarations"):
                reader.info(
                    where, f"request_tool_not_read:{id_part(key)}", f"a {key!r} tool is not a function"
                )
        declarations = reader.get(tool, "functionDeclarations")
        for declaration_where, declaration in reader.items(f"{where}.functionDeclarations", declarations):
            spec = reader.tool(
                declaration_where,
                declaration.get("name"),
                declaration.get("description"),
                _parameters(reader, declaration_where, declaration),
            )
            if spec is not None:
                tools.append(spec)
    return tools


def _parameters(reader: _Reader, where: str, declaration: dict[str, Any]) -> Any:
    """``parametersJsonSchema`` as it is; the OpenAPI-subset ``parameters`` with its types made JSON
    Schema types (``OBJECT`` or ``6`` is ``object``)."""
    json_schema = reader.get(declaration, "parametersJsonSchema")
    schema = declaration.get("parameters")
    if json_schema is not None:
        if schema is not None:
            reader.deviation(where, "request_parameters_twice", "both parameters and parametersJsonSchema")
        return json_schema
    if not isinstance(schema, dict):
        return schema
    converted, changed = _json_schema(schema)
    if changed:
        reader.info(
            where,
            "request_schema_types_converted",
            "OpenAPI Schema types (upper-case or integer) read as JSON Schema",
        )
    return converted


def _json_schema(node: Any) -> tuple[Any, bool]:
    """A Gemini ``Schema`` with its ``type`` values lower-cased (integer enums named), recursively."""
    if not isinstance(node, dict):
        return node, False
    out: dict[str, Any] = {}
    changed = False
    for key, value in node.items():
        if (
            key == "type"
            and isinstance(value, int)
            and not isinstance(value, bool)
            and 0 <= value < len(TYPES)
        ):
            out[key], changed = TYPES[value].lower(), True
        elif key == "type" and isinstance(value, str) and value != value.lower():
            out[key], changed = value.lower(), True
        elif key == "properties" and isinstance(value, dict):
            out[key] = {}
            for name, child in value.items():
                out[key][name], child_changed = _json_schema(child)
                changed = changed or child_changed
        elif key in SCHEMA_NODES:
            out[key], child_changed = _json_schema(value)
            changed = changed or child_changed
        elif key in SCHEMA_LISTS and isinstance(value, list):
            pairs = [_json_schema(child) for child in value]
            out[key] = [schema for schema, _ in pairs]
            changed = changed or any(flag for _, flag in pairs)
        else:
            out[key] = value
    return out, changed


def _choice(reader: _Reader, value: Any) -> ToolChoice | None:
    """``toolConfig.functionCallingConfig``: ANY with one allowed name is a named choice."""
    if value is None:
        return None
    if not isinstance(value, dict):
        reader.malformed("toolConfig", f"is {type(value).__name__}, not an object; not read")
        return None
    config = reader.get(value, "functionCallingConfig")
    if config is None:
        return None
    where = "toolConfig.functionCallingConfig"
    if not isinstance(config, dict):
        reader.malformed(where, f"is {type(config).__name__}, not an object; not read")
        return None
    mode = config.get("mode")
    if isinstance(mode, int) and not isinstance(mode, bool) and 0 <= mode < len(MODES):
        reader.info(where, "request_mode_integer_enum", f"mode is the integer enum {mode} ({MODES[mode]})")
        mode = MODES[mode]
    names = reader.get(config, "allowedFunctionNames")
    if names is not None and not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
        reader.malformed(where, "allowedFunctionNames is not a list of strings; not read")
        names = None
    if names and mode not in ("ANY", "VALIDATED"):
        reader.deviation(where, "request_allowed_names_ignored", f"allowedFunctionNames with mode {mode!r}")
    if mode in (None, "MODE_UNSPECIFIED"):
        return None
    if mode == "AUTO":
        return ToolChoice("auto")
    if mode == "NONE":
        return ToolChoice("none")
    if mode == "VALIDATED":
        reader.info(
            where, "request_mode_validated", "mode VALIDATED (call or answer, calls schema-checked): auto"
        )
        return ToolChoice("auto")
    if mode == "ANY":
        if names and len(names) > 1:
            reader.info(where, "request_allowed_names_subset", f"ANY among {names}: read as required")
        return ToolChoice("named", names[0]) if names and len(names) == 1 else ToolChoice("required")
    reader.deviation(where, "request_tool_choice_unknown", f"unknown mode {mode!r}; not read")
    return None


def _path(reader: _Reader, body: dict[str, Any], path: str) -> tuple[bool, str | None]:
    """Streaming and the model from the path (``models/{model}:streamGenerateContent``; the query,
    when given, tells SSE from a JSON array); the model from a ``model`` body field when the path
    has none."""
    match = MODEL_IN_PATH.search(path)
    model = match.group(1) if match else None
    body_model = reader.model(body, required=False)
    if model is None and body_model is not None:
        model = body_model.removeprefix("models/")
    stream = ":streamGenerateContent" in path
    if not path:
        reader.info(
            "path",
            "request_path_missing",
            "no path: Gemini puts the model and streaming there; read as not streamed",
        )
    elif model is None:
        reader.deviation(
            "path", "request_model_missing", f"neither the path {path!r} nor the body names a model"
        )
    if path and not stream and ":generateContent" not in path:
        reader.deviation(
            "path", "request_path", f"{path!r} names neither generateContent nor streamGenerateContent"
        )
    elif stream and "?" in path and "alt=sse" not in path:  # a path without its query cannot tell
        reader.info(
            "path", "request_stream_without_sse", "streamGenerateContent without alt=sse: a JSON array"
        )
    return stream, model
