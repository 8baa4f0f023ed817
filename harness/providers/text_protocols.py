"""Prompted mode: tool calling through text, for models without native tool support.

A :class:`TextProtocol` describes the tools in a system prompt, renders calls
and results as text, and parses the calls back out of a reply. A
:class:`PromptedAdapter` wraps any native adapter with one protocol, so the
rest of the harness sees an ordinary :class:`~harness.providers.base.Adapter`.
:func:`detect_leaks` serves *native* mode: it spots calls a model wrote into
its content instead of the tool-call fields.

Calls parsed from text never carry a wire id: ids are synthesized (and so
marked, ``id != wire_id``), and ``raw_arguments`` is the exact argument text
of the reply.
"""

from __future__ import annotations

import functools
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from harness.errors import UnknownNameError
from harness.model import (
    Finding,
    ToolCall,
    ToolChoice,
    ToolResult,
    ToolSpec,
    canonical,
    deviation,
)
from harness.providers._calls import parse_arguments, synthesize_id
from harness.providers._text_parsing import (
    NAME_IN_JSON,
    SNIPPET,
    JsonEntry,
    Leak,
    Tagged,
    cdata,
    detect_leaks,
    find_elements,
    infer_scalar,
    json_entries,
    json_objects,
    parse_xml,
    remove_spans,
    render_xml_value,
    tagged_calls,
    widen_to_fences,
    xml_object,
)

UNPARSEABLE = "wire.text_call_unparseable"
EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
EMPTY_SCHEMA_TEXT = canonical(EMPTY_SCHEMA)


@dataclass
class TextParse:
    """What a protocol found in a reply: the calls, the prose left around them, and findings."""

    calls: list[ToolCall] = field(default_factory=list)
    text: str | None = None
    findings: list[Finding] = field(default_factory=list)


@dataclass
class _Found:
    """One piece of call markup: its span, and the call in it (``name`` ``None`` when there is none)."""

    start: int
    end: int
    name: str | None = None
    raw: str | None = None
    value: Any = None
    error: str | None = None
    findings: list[Finding] = field(default_factory=list)


_EXAMPLE = ToolCall(
    "example_tool",
    {
        "path": "notes.md",
        "text": "First line\nSecond line",
        "count": 2,
        "tags": ["todo", "home"],
        "options": {"overwrite": True},
    },
)
_EXAMPLE_RESULT = ToolResult("h1a2b3c4d", "example_tool", "saved 2 lines")


def choice_instruction(choice: ToolChoice | None) -> str | None:
    """``tool_choice`` as a sentence: prompted mode has no wire field for it."""
    if choice is None or choice.mode == "auto":
        return None
    if choice.mode == "none":
        return "In this reply, do not call any tool: answer in plain text only."
    if choice.mode == "required":
        return "In this reply, you must call at least one tool."
    return f"In this reply, you must call the tool {choice.name}."


def _arguments_json(call: ToolCall) -> str:
    """A call's arguments as JSON text; a call whose arguments never parsed replays its raw text."""
    if call.arguments is None and isinstance(call.raw_arguments, str):
        return call.raw_arguments
    return json.dumps(call.arguments or {}, ensure_ascii=False)


def _json_call_text(call: ToolCall) -> str:
    return f'{{"name": {json.dumps(call.name)}, "arguments": {_arguments_json(call)}}}'


def _result_data(result: ToolResult) -> dict[str, Any]:
    return {
        "call_id": result.call_id,
        "name": result.name,
        "status": "error" if result.is_error else "ok",
        "content": result.content,
    }


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


class TextProtocol(ABC):
    """A syntax for tool calls in text. Subclasses give the syntax; parsing bookkeeping is shared."""

    name: ClassVar[str]
    instructions: ClassVar[str]

    def system_prompt(self, tools: Sequence[ToolSpec], tool_choice: ToolChoice | None = None) -> str:
        """The tools and the call syntax, deterministic byte for byte (schemas are dumped with
        sorted keys, so equal tools give the same prompt whatever their dict order)."""
        if not tools:
            return ""
        lines = [
            "# Tools",
            "",
            "You can call the tools below. Each has a name, a description and a JSON "
            "Schema of its arguments.",
            "",
        ]
        for tool in tools:
            schema = tool.schema_text if tool.parameters else EMPTY_SCHEMA_TEXT
            lines += [
                f"## {tool.name}",
                tool.description.strip() or "(no description)",
                f"Arguments schema: {schema}",
                "",
            ]
        lines += [
            "# How to call a tool",
            "",
            self.instructions,
            "",
            "For example (example_tool only shows the syntax; it is not one of your tools):",
            "",
            self.render_calls([_EXAMPLE]),
            "",
            "Rules:",
            "- Write each call exactly in this syntax. You may write a short text before the calls.",
            "- You may call several tools in one reply: write the calls one after another.",
            "- After your calls, end your reply. The results come back in the next user message, "
            "each marked with the call it answers, like this:",
            "",
            self.render_results([_EXAMPLE_RESULT]),
            "",
            "- When you need no tool, answer in plain text without this syntax.",
        ]
        choice = choice_instruction(tool_choice)
        if choice:
            lines.append(f"- {choice}")
        return "\n".join(lines)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        """The text a conformant model would write for these calls."""
        return "\n".join(self.render_call(call) for call in calls)

    @abstractmethod
    def render_call(self, call: ToolCall) -> str:
        """One call in this syntax."""

    def render_results(self, results: Sequence[ToolResult]) -> str:
        """Tool results as the text of one user message."""
        return "\n".join(self.render_result(result) for result in results)

    def render_result(self, result: ToolResult) -> str:
        status = "error" if result.is_error else "ok"
        return (
            f'<tool_result call_id="{_attr(result.call_id or "")}" name="{_attr(result.name)}" '
            f'status="{status}">{cdata(result.content)}</tool_result>'
        )

    @abstractmethod
    def extract(self, text: str, schemas: Mapping[str, Any]) -> list[_Found]:
        """Every piece of this protocol's markup in ``text``, parsed or not."""

    def parse(self, text: str, tools: Sequence[ToolSpec] = ()) -> TextParse:
        """The calls in a reply, the prose around them, and findings.

        Markup that yields a call (even one whose arguments do not parse) is
        cut from the prose, with a code fence that holds only calls; markup
        with no recoverable call stays in the prose and is reported.
        """
        schemas = {tool.name: tool.parameters for tool in tools}
        calls: list[ToolCall] = []
        findings: list[Finding] = []
        spans: list[tuple[int, int]] = []
        for item in self.extract(text, schemas):
            findings += item.findings
            if item.error is not None:
                findings.append(
                    deviation(
                        "text_call_unparseable",
                        f"{self.name} protocol: {item.error}",
                        severity="error",
                        snippet=text[item.start : item.end][:SNIPPET],
                    )
                )
            if item.name is None:
                if item.error is None:
                    spans.append((item.start, item.end))
                continue
            spans.append((item.start, item.end))
            arguments, error = None, item.error
            if error is None:
                arguments, error, notes = parse_arguments(item.value, wire_type="object")
                findings += notes
            index = len(calls)
            call_id = synthesize_id(item.name, item.raw, index)
            calls.append(
                ToolCall(
                    item.name, arguments, item.raw, call_id, None, index, error, {"text_protocol": self.name}
                )
            )
        prose = remove_spans(text, widen_to_fences(text, spans))
        leaks = detect_leaks(prose, schemas)
        if leaks and not any(f.check_id == UNPARSEABLE for f in findings):
            findings.append(
                deviation(
                    "text_call_foreign_syntax",
                    f"the reply holds tool-call markup of another syntax than "
                    f"{self.name}: {sorted({leak.marker for leak in leaks})}",
                    snippet=leaks[0].snippet,
                )
            )
        return TextParse(calls, prose, findings)


def _json_call(text: str, start: int, end: int, entries: list[JsonEntry]) -> _Found:
    """A call from the members of a ``{"name": ..., "arguments": ...}`` object."""
    members = {key: (s, e, value) for key, s, e, value in entries}
    found = _Found(start, end)
    name = members.get("name")
    if name is None or not isinstance(name[2], str) or not name[2]:
        found.error = 'a call has no "name" string'
        return found
    found.name = name[2]
    key = next((k for k in ("arguments", "parameters") if k in members), None)
    if key == "parameters":
        found.findings.append(deviation("text_call_parameters_key", 'arguments written under "parameters"'))
    if key is not None:
        value_start, value_end, found.value = members[key]
        found.raw = text[value_start:value_end]
    return found


class JsonProtocol(TextProtocol):
    """``{"tool_calls": [{"name": ..., "arguments": {...}}]}`` anywhere in the reply, fenced or not."""

    name = "json"
    instructions = (
        'To call tools, write one JSON object with a "tool_calls" list. Each entry has the tool "name" and '
        'its "arguments" as a JSON object:\n{"tool_calls": [{"name": "TOOL_NAME", "arguments": {...}}]}\n'
        "Put every call of the reply in that one list. You may put the object in a ```json code block."
    )

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        if not calls:
            return ""
        return f'{{"tool_calls": [{", ".join(_json_call_text(c) for c in calls)}]}}'

    def render_call(self, call: ToolCall) -> str:
        return self.render_calls([call])

    def render_results(self, results: Sequence[ToolResult]) -> str:
        return json.dumps({"tool_results": [_result_data(r) for r in results]}, ensure_ascii=False)

    def extract(self, text: str, schemas: Mapping[str, Any]) -> list[_Found]:
        found: list[_Found] = []
        for start, end, value in json_objects(text):
            if not isinstance(value, dict) or "tool_calls" not in value:
                continue
            at = [s for key, s, _, _ in (json_entries(text, start) or ([], 0))[0] if key == "tool_calls"]
            items = json_entries(text, at[-1]) if at and isinstance(value["tool_calls"], list) else None
            if items is None:
                found.append(_Found(start, end, error='"tool_calls" is not a list'))
                continue
            if not items[0]:
                found.append(_Found(start, end))  # an empty list: markup without a call
            for _, item_start, _, item in items[0]:
                entries = json_entries(text, item_start) if isinstance(item, dict) else None
                found.append(
                    _json_call(text, start, end, entries[0])
                    if entries
                    else _Found(start, end, error="a tool_calls entry is not an object")
                )
        for match in re.finditer(r'"tool_calls"', text):
            if not any(f.start <= match.start() < f.end for f in found):
                begin = max(text.rfind("{", 0, match.start()), 0)
                found.append(_Found(begin, begin + SNIPPET, error='"tool_calls" outside of valid JSON'))
        return found


def _unclosed(found: _Found, tag: Tagged) -> _Found:
    if not tag.closed and found.error is None:
        found.findings.append(deviation("text_call_unclosed", "a <tool_call> element is not closed"))
    return found


class HermesProtocol(TextProtocol):
    """Hermes / Qwen 2.5: ``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>``, repeated."""

    name = "hermes"
    instructions = (
        'To call a tool, write a <tool_call> element holding one JSON object with the tool "name" and its '
        '"arguments" object:\n<tool_call>\n{"name": "TOOL_NAME", "arguments": {...}}\n</tool_call>\n'
        "Write one <tool_call> element per call."
    )

    def render_call(self, call: ToolCall) -> str:
        return f"<tool_call>\n{_json_call_text(call)}\n</tool_call>"

    def render_result(self, result: ToolResult) -> str:
        return f"<tool_response>\n{json.dumps(_result_data(result), ensure_ascii=False)}\n</tool_response>"

    def extract(self, text: str, schemas: Mapping[str, Any]) -> list[_Found]:
        found: list[_Found] = []
        for tag in tagged_calls(text):
            entries = json_entries(text, tag.body_start) if tag.decoded else None
            if entries is None:
                name = NAME_IN_JSON.search(tag.body)
                item = _Found(
                    tag.start,
                    tag.end,
                    name[1] if name else None,
                    tag.body.strip(),
                    error="the <tool_call> body is not a JSON object",
                )
            else:
                item = _json_call(text, tag.start, tag.end, entries[0])
            found.append(_unclosed(item, tag))
        return found


class NameAttrProtocol(TextProtocol):
    """``<tool_call name="NAME">{json arguments}</tool_call>``."""

    name = "xml-name-attr"
    instructions = (
        "To call a tool, write a <tool_call> element with the tool name in its name attribute and the "
        'arguments as one JSON object inside:\n<tool_call name="TOOL_NAME">{"argument": "value"}'
        "</tool_call>\n"
        "Write one <tool_call> element per call."
    )

    def render_call(self, call: ToolCall) -> str:
        return f'<tool_call name="{_attr(call.name)}">{_arguments_json(call)}</tool_call>'

    def extract(self, text: str, schemas: Mapping[str, Any]) -> list[_Found]:
        found: list[_Found] = []
        for tag in tagged_calls(text):
            name = tag.attrs.get("name") or None
            item = _Found(tag.start, tag.end, name, tag.body.strip() if tag.body.strip() else None)
            if name is None:
                item.error = "the <tool_call> tag has no name attribute"
            elif tag.decoded:
                item.raw, item.value = tag.body, tag.decoded[0]
            elif tag.body.strip() or not tag.closed:
                item.error = "the <tool_call> body is not a JSON object"
            found.append(_unclosed(item, tag))
        return found


class XmlProtocol(TextProtocol):
    """``<tool_call><tool_name>NAME</tool_name><arguments>...</arguments></tool_call>`` with
    one element per argument; plain text is typed by the tool's JSON Schema."""

    name = "xml"
    instructions = (
        "To call a tool, write a <tool_call> element holding a <tool_name> element and an <arguments> "
        "element. Inside <arguments>, write one element per argument, named after the argument:\n"
        "- a string inside CDATA: <city><![CDATA[Paris]]></city>. Any text may go inside CDATA; to write "
        "]]> end the section and open another: ]]]]><![CDATA[>\n"
        "- a number, true, false or null as plain text: <count>3</count>\n"
        "- an object as nested elements, one per key\n"
        "- an array by repeating the element once per item; write an empty or one-item array as JSON: "
        "<tags>[]</tags>\n"
        "Write one <tool_call> element per call. A tool without arguments takes <arguments></arguments>."
    )

    def render_call(self, call: ToolCall) -> str:
        if call.arguments is None and isinstance(call.raw_arguments, str):
            arguments = call.raw_arguments
        else:
            arguments = "".join(f"\n{render_xml_value(k, v)}" for k, v in (call.arguments or {}).items())
            arguments += "\n"
        return (
            f"<tool_call>\n<tool_name>{_attr(call.name)}</tool_name>\n"
            f"<arguments>{arguments}</arguments>\n</tool_call>"
        )

    def extract(self, text: str, schemas: Mapping[str, Any]) -> list[_Found]:
        found: list[_Found] = []
        for element in find_elements(parse_xml(text), "tool_call"):
            item = _Found(element.start, len(text) if element.end is None else element.end)
            found.append(item)
            names = element.elements("tool_name")
            item.name = "".join(t.value for t in names[0].texts()).strip() if names else None
            if not item.name:
                item.name, item.error = None, "the <tool_call> element has no <tool_name>"
                continue
            arguments = element.elements("arguments")
            if arguments:
                item.raw = arguments[0].inner(text)
            if element.end is None:
                item.error = "the <tool_call> element is not closed"
            elif arguments and not arguments[0].elements() and item.raw and item.raw.strip():
                value = infer_scalar(item.raw.strip())
                if not isinstance(value, dict):
                    item.error = "<arguments> holds text, not one element per argument"
                item.value = value
                item.findings.append(
                    deviation(
                        "text_call_arguments_as_json",
                        "<arguments> holds JSON text instead of one element per argument",
                    )
                )
            elif arguments:
                item.value = xml_object(arguments[0], schemas.get(item.name), text)
        return found


PROTOCOLS: dict[str, TextProtocol] = {
    p.name: p for p in (JsonProtocol(), XmlProtocol(), NameAttrProtocol(), HermesProtocol())
}


def protocols() -> list[str]:
    """The names users may give in config."""
    return sorted(PROTOCOLS)


def get_protocol(name: str) -> TextProtocol:
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise UnknownNameError("text protocol", name, PROTOCOLS) from None


# -- prompted adapter ---------------------------------------------------------


def estimate_tokens(characters: int) -> int:
    """An *estimate*: one token per ~4 characters (rounded up), good enough to compare modes."""
    return (characters + 3) // 4


def native_tools_size(tools: Sequence[ToolSpec]) -> dict[str, int]:
    """Size of the native tool declarations: ``json.dumps`` of the OpenAI-format ``tools`` list
    (its brackets, each declaration, and a ``", "`` between two)."""
    characters = sum(_declared_size(t.name, t.description, t.schema_text) for t in tools) + 2 * len(tools)
    return {"characters": characters, "estimated_tokens": estimate_tokens(characters)}


@functools.lru_cache(maxsize=4096)
def _declared_size(name: str, description: str, schema_text: str) -> int:
    """Characters of one tool's OpenAI-format declaration in ``json.dumps`` (cached: every run of
    a scenario offers the same tools; the order of keys does not change the count)."""
    from harness.providers.openai import OpenAIChatAdapter

    tool = ToolSpec(name, description, json.loads(schema_text))
    return len(json.dumps(OpenAIChatAdapter().map_tools([tool])[0]))


__all__ = [
    "PROTOCOLS",
    "Leak",
    "TextParse",
    "TextProtocol",
    "detect_leaks",
    "estimate_tokens",
    "get_protocol",
    "native_tools_size",
    "protocols",
]
