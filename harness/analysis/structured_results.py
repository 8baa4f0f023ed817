"""What each target's adapter forwards to the model for a structured tool result: the JSON value
itself, its text, both, or nothing.

An MCP tool may answer with ``structuredContent`` (a JSON value) beside its text; wire formats
differ in where a tool result can go (a string, a JSON object, a content block of JSON), so the
same result reaches one model as data and another as text. This is read off the adapters' pure
request builders, never assumed: a conversation holding one call and its structured result (a
``ToolResult`` of form ``json``, as a seeded history gives one) is built into each target's
request, and the request body is searched for the value (an object equal to it) and for its
text (a string holding its JSON). No request is sent.

The harness's own MCP bridge gives the model the text a server put in ``content`` (an MCP
server built on the official SDK writes the structured value there as JSON): what the table
says is what the wire would carry if the structured value were passed on as a value.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from harness.model import Message, ToolCall, ToolChoice, ToolResult, ToolSpec
from harness.providers.adapter import RequestOptions
from harness.targets import Target

Forwarded = Literal["json", "text", "both", "dropped"]

PROBE: dict[str, Any] = {"path": "src/geometry.py", "lines": 19, "language": "python"}
"""The structured result the probe conversation carries (what the fixture's ``file_info`` returns)."""
TOOL = ToolSpec(
    "file_info",
    "Size and language of a corpus file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


@dataclass(frozen=True)
class Forwarding:
    """What one target's request carried for the structured result: ``forwarded`` (``json``: the
    value as data; ``text``: its JSON as a string; ``both``; ``dropped``) and the JSON pointers
    into the request body where each was found."""

    target: str
    format: str
    mode: str
    forwarded: Forwarded
    as_json: tuple[str, ...] = ()
    as_text: tuple[str, ...] = ()

    def data(self) -> dict[str, Any]:
        """As plain JSON data (``harness capabilities --structured-results --json``)."""
        return dataclasses.asdict(self)


def probe_conversation() -> list[Message]:
    """A user question, the model's call of ``file_info`` and its structured result."""
    call = ToolCall("file_info", {"path": "src/geometry.py"}, raw_arguments='{"path": "src/geometry.py"}')
    call.id = call.wire_id = "call_1"
    result = ToolResult("call_1", "file_info", json.dumps(PROBE, sort_keys=True), form="json")
    return [
        Message("user", "How many lines does src/geometry.py have?"),
        Message("assistant", None, tool_calls=[call]),
        Message("tool", tool_result=result),
    ]


def forwarding(target: Target) -> Forwarding:
    """What ``target``'s adapter puts in its request for the probe's structured result."""
    options = RequestOptions(model=target.model)
    wire = target.adapter().build_request(probe_conversation(), [TOOL], ToolChoice(), options)
    as_json, as_text = [], []
    for where, value in _walk(wire.body, ""):
        if value == PROBE:
            as_json.append(where)
        elif isinstance(value, str) and _holds_text(value):
            as_text.append(where)
    forwarded: Forwarded = (
        "both" if as_json and as_text else "json" if as_json else "text" if as_text else "dropped"
    )
    return Forwarding(
        target.name, target.format, target.mode_label, forwarded, tuple(as_json), tuple(as_text)
    )


def forwarding_table(targets: Iterable[Target]) -> list[Forwarding]:
    """:func:`forwarding` for each target, by target name (user's agents left out: their own
    code, not an adapter, builds their requests)."""
    return [forwarding(t) for t in sorted(targets, key=lambda t: t.name) if not t.agent]


def render_text(rows: Iterable[Forwarding]) -> str:
    """The table as plain text: target, format, mode, what is forwarded and where."""
    lines = ["structured tool result forwarded to the model (read from each adapter's request):"]
    for row in rows:
        where = ", ".join([*(f"{p} (JSON)" for p in row.as_json), *(f"{p} (text)" for p in row.as_text)])
        lines.append(f"  {row.target:<44} {row.format:<20} {row.mode:<16} {row.forwarded:<8} {where}")
    return "\n".join(lines)


def _holds_text(value: str) -> bool:
    """``value`` is the probe's JSON text or holds it: written in a message (an XML prompted
    mode), or inside a JSON document that is itself text (a JSON prompted mode's results). To
    the model, all of it is text."""
    if all(f'"{key}"' in value for key in PROBE) and '"src/geometry.py"' in value:
        return True
    return any(
        item == PROBE or (isinstance(item, str) and item != value and _holds_text(item))
        for document in _documents(value)
        for _, item in _walk(document, "")
    )


def _documents(text: str) -> Iterator[Any]:
    """The JSON objects written in ``text`` (a prompted mode wraps them in tags)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            document, end = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        yield document
        start = text.find("{", end)


def _walk(value: Any, where: str) -> Iterator[tuple[str, Any]]:
    yield where, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, f"{where}/{_escape(str(key))}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, f"{where}/{index}")


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")
