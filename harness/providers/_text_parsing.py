"""Tolerant parsing helpers for tool calls written as text (see :mod:`harness.providers.text_protocols`).

Model output is not a document: it mixes prose, half-closed tags and code, so
nothing here raises on malformed input. JSON is located with the standard
decoder (``raw_decode`` at a position) so the *exact* text of each value is
kept; XML-like markup goes through a small forgiving tree builder instead of
``xml.etree``, which rejects the first stray ``<`` or unclosed tag.
"""

from __future__ import annotations

import functools
import html
import json
import re
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

# -- JSON with positions ------------------------------------------------------

SNIPPET = 200  # characters of evidence kept from a reply
_DECODER = json.JSONDecoder()
_WS = re.compile(r"\s*")


def skip_ws(text: str, pos: int) -> int:
    """The first position at or after ``pos`` that is not whitespace."""
    match = _WS.match(text, pos)
    return match.end() if match else pos


def json_at(text: str, pos: int) -> tuple[Any, int] | None:
    """The JSON value starting exactly at ``pos`` and the position after it, or ``None``."""
    try:
        return _DECODER.raw_decode(text, pos)
    except (ValueError, RecursionError):  # not JSON, an over-long integer, or nested past the stack
        return None


JsonEntry = tuple[Any, int, int, Any]  # key (or index), value start, value end, value


def json_entries(text: str, pos: int) -> tuple[list[JsonEntry], int] | None:
    """The entries of the JSON object or array at ``pos``, each with the span of its value.

    The spans let a caller keep the exact argument text the model wrote,
    which a plain ``json.loads`` of the enclosing object would lose.
    """
    closer = {"{": "}", "[": "]"}.get(text[pos : pos + 1])
    if closer is None:
        return None
    entries: list[JsonEntry] = []
    pos = skip_ws(text, pos + 1)
    if text.startswith(closer, pos):
        return entries, pos + 1
    while True:
        key: Any = len(entries)
        if closer == "}":
            decoded = json_at(text, pos)
            if decoded is None or not isinstance(decoded[0], str):
                return None
            key, pos = decoded[0], skip_ws(text, decoded[1])
            if not text.startswith(":", pos):
                return None
            pos = skip_ws(text, pos + 1)
        value = json_at(text, pos)
        if value is None:
            return None
        entries.append((key, pos, value[1], value[0]))
        pos = skip_ws(text, value[1])
        if text.startswith(closer, pos):
            return entries, pos + 1
        if not text.startswith(",", pos):
            return None
        pos = skip_ws(text, pos + 1)


def json_objects(text: str) -> Iterator[tuple[int, int, Any]]:
    """Every top-level JSON object embedded in prose: ``(start, end, value)``.

    A ``{`` that does not start valid JSON is skipped; a decoded object is
    skipped whole, so objects nested inside it are not reported again.
    """
    pos = text.find("{")
    while pos != -1:
        decoded = json_at(text, pos)
        if decoded is None:
            pos = text.find("{", pos + 1)
            continue
        yield pos, decoded[1], decoded[0]
        pos = text.find("{", decoded[1])


# -- tolerant XML -------------------------------------------------------------

_TOKEN = re.compile(
    r"<!\[CDATA\[(?P<cdata>.*?)\]\]>"
    r"|<!--.*?-->"
    r"|</(?P<close>[A-Za-z_][\w.:-]*)\s*>"
    r"|<(?P<open>[A-Za-z_][\w.:-]*)(?P<attrs>(?:\s+[\w.:-]+\s*=\s*(?:\"[^\"]*\"|'[^']*'))*)\s*(?P<empty>/?)>",
    re.S,
)
_ATTR = re.compile(r"([\w.:-]+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')")


def _attrs(text: str) -> dict[str, str]:
    return {m[1]: html.unescape(m[2] if m[2] is not None else m[3]) for m in _ATTR.finditer(text)}


@dataclass
class XText:
    """A run of character data: entity-decoded text, or the verbatim content of a CDATA section."""

    value: str
    cdata: bool = False


@dataclass
class XElement:
    """An element with its source positions (``end`` is ``None`` when it was never closed)."""

    tag: str
    attrs: dict[str, str]
    start: int
    inner_start: int
    inner_end: int | None = None
    end: int | None = None
    children: list[XElement | XText] = field(default_factory=list)

    def elements(self, tag: str | None = None) -> list[XElement]:
        return [c for c in self.children if isinstance(c, XElement) and (tag is None or c.tag == tag)]

    def texts(self) -> list[XText]:
        return [c for c in self.children if isinstance(c, XText)]

    def inner(self, source: str) -> str:
        """The element's content exactly as written."""
        return source[self.inner_start : len(source) if self.inner_end is None else self.inner_end]


MAX_XML_DEPTH = 100
"""Elements nested deeper than this are read as text (values are built recursively from the tree)."""


def parse_xml(text: str) -> list[XElement | XText]:
    """A forgiving parse of XML-like markup in prose.

    A ``<`` that does not form a tag is text; a close tag shuts the nearest
    open element of that name (closing those opened inside it); a stray close
    tag is text; elements still open at the end keep ``end = None``; an open tag
    nested deeper than :data:`MAX_XML_DEPTH` is text.
    """
    root = XElement("", {}, 0, 0)
    stack = [root]
    pos = 0
    for match in _TOKEN.finditer(text):
        if match.start() > pos:
            stack[-1].children.append(XText(html.unescape(text[pos : match.start()])))
        pos = match.end()
        if match["cdata"] is not None:
            stack[-1].children.append(XText(match["cdata"], cdata=True))
        elif match["open"] and len(stack) > MAX_XML_DEPTH:  # deeper markup is read as text
            stack[-1].children.append(XText(html.unescape(match.group(0))))
        elif match["open"]:
            element = XElement(match["open"], _attrs(match["attrs"]), match.start(), match.end())
            stack[-1].children.append(element)
            if match["empty"]:
                element.inner_end = element.end = match.end()
            else:
                stack.append(element)
        elif match["close"]:
            depth = next((i for i in range(len(stack) - 1, 0, -1) if stack[i].tag == match["close"]), None)
            if depth is None:
                stack[-1].children.append(XText(match.group(0)))
                continue
            for element in stack[depth:]:
                element.inner_end, element.end = match.start(), match.start()
            stack[depth].end = match.end()
            del stack[depth:]
    if pos < len(text):
        stack[-1].children.append(XText(html.unescape(text[pos:])))
    return root.children


def find_elements(nodes: Iterable[XElement | XText], tag: str) -> Iterator[XElement]:
    """Elements named ``tag`` at any depth (not looking inside a match), in document order."""
    stack = [iter(nodes)]
    while stack:
        node = next(stack[-1], None)
        if node is None:
            stack.pop()
        elif isinstance(node, XElement):
            if node.tag == tag:
                yield node
            else:
                stack.append(iter(node.children))


# -- values guided by JSON Schema ---------------------------------------------


def schema_types(schema: Any) -> set[str]:
    """The JSON types a schema allows (empty when it does not say)."""
    if not isinstance(schema, dict):
        return set()
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {t for t in declared if isinstance(t, str)}
    if "properties" in schema:
        return {"object"}
    if "items" in schema:
        return {"array"}
    return set()


def _sub_schema(schema: Any, key: str) -> Any:
    if not isinstance(schema, dict):
        return None
    if key == "items":
        return schema.get("items")
    properties = schema.get("properties")
    if isinstance(properties, dict) and key in properties:
        return properties[key]
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


def infer_scalar(text: str) -> Any:
    """Plain text as JSON when it is a number, boolean, null, array or object; else the text."""
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):  # not JSON, an over-long integer, or nested past the stack
        return text
    return text if isinstance(value, str) else value


def coerce_text(text: str, types: set[str]) -> Any:
    """Plain (non-CDATA) element text as the type the schema asks for.

    The schema wins over appearance, so a string property ``007`` or ``true``
    stays a string; without a schema the text is read as JSON when it can be.
    """
    if text == "null" and "null" in types:
        return None
    if "string" in types:
        return text
    if "boolean" in types and text in ("true", "false"):
        return text == "true"
    if "integer" in types and re.fullmatch(r"-?\d{1,4000}", text):
        return int(text)
    return infer_scalar(text)


def xml_value(element: XElement, schema: Any, source: str) -> Any:
    """The JSON value an argument element stands for.

    CDATA makes a string (sections and non-blank text between them are
    joined, so a split ``]]>`` comes back whole); child elements make an
    object, unless the schema says string, in which case the markup is taken
    verbatim (a model that forgot CDATA around HTML); other text is coerced.
    """
    types = schema_types(schema)
    if element.elements():
        if types and types <= {"string", "null"}:
            return element.inner(source)
        return xml_object(element, schema, source)
    texts = element.texts()
    if any(t.cdata for t in texts):
        return "".join(t.value for t in texts if t.cdata or t.value.strip())
    return coerce_text("".join(t.value for t in texts).strip(), types)


def xml_object(element: XElement, schema: Any, source: str) -> dict[str, Any]:
    """The object an element's children stand for: repeated children make an array,
    and so does a single child whose schema is an array."""
    groups: dict[str, list[XElement]] = {}
    for child in element.elements():
        groups.setdefault(child.tag, []).append(child)
    result: dict[str, Any] = {}
    for tag, group in groups.items():
        schema_of = _sub_schema(schema, tag)
        is_array = "array" in schema_types(schema_of)
        item_schema = _sub_schema(schema_of, "items") if is_array else schema_of
        if len(group) > 1:
            result[tag] = [xml_value(child, item_schema, source) for child in group]
            continue
        value = xml_value(group[0], schema_of, source)
        if is_array and not isinstance(value, list):  # a one-item array
            value = [xml_value(group[0], item_schema, source)]
        result[tag] = value
    return result


def cdata(text: str) -> str:
    """``text`` as CDATA, split where it contains ``]]>`` so any text survives."""
    return "<![CDATA[" + text.replace("]]>", "]]]]><![CDATA[>") + "]]>"


def render_xml_value(tag: str, value: Any) -> str:
    """An argument as XML: strings in CDATA, objects as child elements, arrays of two
    or more items by repetition; anything repetition cannot express (empty and
    one-item arrays, nested arrays, empty objects) and scalars as JSON text."""
    if isinstance(value, str):
        return f"<{tag}>{cdata(value)}</{tag}>"
    if isinstance(value, dict) and value:
        inner = "\n".join(render_xml_value(str(key), item) for key, item in value.items())
        return f"<{tag}>\n{inner}\n</{tag}>"
    if isinstance(value, list) and len(value) > 1 and not any(isinstance(item, list) for item in value):
        return "\n".join(render_xml_value(tag, item) for item in value)
    return f"<{tag}>{html.escape(json.dumps(value, ensure_ascii=False), quote=False)}</{tag}>"


# -- spans of prose -----------------------------------------------------------

_FENCE_OPEN = re.compile(r"\s*```[\w.+-]*\s*")
_FENCE_LINE = re.compile(r"^\s*```", re.M)


def widen_to_fences(text: str, spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans grown to a Markdown code fence that holds nothing else, merged when adjacent.

    Checked from the call outwards (not by pairing fences), so backticks
    inside an argument string cannot confuse it.
    """
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and not text[merged[-1][1] : start].strip():
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    widened: list[tuple[int, int]] = []
    for start, end in merged:
        before = text[:start].rstrip()
        line_start = before.rfind("\n") + 1
        after = text[end:]
        opens = len(_FENCE_LINE.findall(text, 0, line_start)) % 2 == 0  # not the end of an earlier block
        if opens and _FENCE_OPEN.fullmatch(before[line_start:]) and after.lstrip().startswith("```"):
            start, end = line_start, end + len(after) - len(after.lstrip()) + 3
        widened.append((start, end))
    return widened


def remove_spans(text: str, spans: Iterable[tuple[int, int]]) -> str | None:
    """The prose left once the spans are cut out: pieces stripped, joined as paragraphs."""
    pieces: list[str] = []
    pos = 0
    for start, end in sorted(spans):
        if start > pos:
            pieces.append(text[pos:start])
        pos = max(pos, end)
    pieces.append(text[pos:])
    return "\n\n".join(p.strip() for p in pieces if p.strip()) or None


# -- <tool_call> with a JSON body ------------------------------------------------

_OPEN_TAG = re.compile(r"<tool_call\b(?P<attrs>[^>]*)>")
_CLOSE_TAG = "</tool_call>"
NAME_IN_JSON = re.compile(r'"name"\s*:\s*"([^"\\]+)"')


@dataclass
class Tagged:
    """A ``<tool_call ...>`` element whose body is (meant to be) JSON."""

    start: int
    end: int
    attrs: dict[str, str]
    body: str
    body_start: int
    decoded: tuple[Any, int] | None
    closed: bool


def tagged_calls(text: str) -> Iterator[Tagged]:
    """``<tool_call>`` elements with a JSON body, decoded before the closing tag is looked
    for, so a closing tag inside a string argument does not end the call."""
    pos = 0
    while (match := _OPEN_TAG.search(text, pos)) is not None:
        body_start = skip_ws(text, match.end())
        decoded = json_at(text, body_start) if text.startswith("{", body_start) else None
        if decoded is not None:
            after = skip_ws(text, decoded[1])
            closed = text.startswith(_CLOSE_TAG, after)
            body_end, end = decoded[1], after + len(_CLOSE_TAG) if closed else decoded[1]
        else:
            close = text.find(_CLOSE_TAG, match.end())
            closed = close != -1
            body_end, end = (close, close + len(_CLOSE_TAG)) if closed else (len(text), len(text))
        body = text[body_start:body_end]
        yield Tagged(match.start(), end, _attrs(match["attrs"]), body, body_start, decoded, closed)
        pos = end


# -- leaks in native mode -----------------------------------------------------


@dataclass(frozen=True)
class Leak:
    """A tool call written into content: which syntax (``marker``), where, and the text."""

    marker: str
    snippet: str
    start: int = 0


_PARAGRAPH_END = r"(?=\n\s*\n|\Z)"
_LEAK_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("tool_call", re.compile(r"<tool_call\b[^>]*>.*?(?:</tool_call>|\Z)", re.S)),
    (
        "function_calls",
        re.compile(r"<function_calls>.*?(?:</function_calls>|\Z)|<invoke\s+name=.*?(?:</invoke>|\Z)", re.S),
    ),
    ("TOOL_CALLS", re.compile(r"\[TOOL_CALLS\].*?" + _PARAGRAPH_END, re.S)),
    ("python_tag", re.compile(r"<\|python_tag\|>.*?" + _PARAGRAPH_END, re.S)),
    ("functiongemma", re.compile(r"<start_function_call>.*?(?:<end_function_call>|\Z)", re.S)),
    ("function=", re.compile(r"<function=[^>\s]+>.*?(?:</function>|\Z)", re.S)),
)


def _json_marker(value: Any) -> str | None:
    """Which JSON call shape ``value`` has, if any.

    A tool *declaration* (it has a description) is not a call.
    """
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("tool_calls"), list):
        return "tool_calls_json"
    for call in (value, value.get("function")):
        if (
            isinstance(call, dict)
            and isinstance(call.get("name"), str)
            and "description" not in call
            and any(isinstance(call.get(k), dict | str) for k in ("arguments", "parameters"))
        ):
            return "name_arguments_json"
    return None


@functools.lru_cache(maxsize=256)
def _pythonic(names: tuple[str, ...]) -> re.Pattern[str]:
    """Pythonic calls of these tools, ``[f(x=1)]`` (one pattern per set of names: every turn of
    a run offers the same tools)."""
    return re.compile(r"\[\s*(?:" + "|".join(map(re.escape, names)) + r")\s*\(.*?\)\s*\]", re.S)


def detect_leaks(text: str | None, tool_names: Collection[str] | None = None) -> list[Leak]:
    """Tool calls written into content, in any known text syntax, in order of position.

    Pythonic ``[f(x=1)]`` is only looked for with ``tool_names`` (bracketed
    calls are common in prose); overlapping matches are reported once, the
    earliest (and longest) winning, so a Qwen3-Coder call inside
    ``<tool_call>`` is one leak.
    """
    if not text:
        return []
    spans = [(m.start(), m.end(), marker) for marker, regex in _LEAK_PATTERNS for m in regex.finditer(text)]
    names = tuple(sorted(n for n in tool_names or () if n))
    if names:
        spans += [(m.start(), m.end(), "pythonic") for m in _pythonic(names).finditer(text)]
    spans += [(s, e, marker) for s, e, v in json_objects(text) if (marker := _json_marker(v))]
    leaks: list[Leak] = []
    reached = 0
    for start, end, marker in sorted(spans, key=lambda s: (s[0], -s[1])):
        if start >= reached:
            leaks.append(Leak(marker, text[start : min(end, start + SNIPPET)], start))
            reached = end
    return leaks
