"""The Responses API's output items, whole or streamed, folded into one turn (private to
:mod:`harness.providers.openai_responses`).

A response is a list of output items (``message``, ``function_call``, ``reasoning``, hosted
tool calls...). A whole body carries them in ``output``; a stream carries them as item events:
``response.output_item.added`` opens an item at its ``output_index``, the delta events
(``response.function_call_arguments.delta``, ``response.output_text.delta``...) append to it,
keyed by ``item_id`` (else ``output_index``), the ``.done`` events and then
``response.output_item.done`` override what the deltas made, and a terminal event
(``response.completed`` / ``.incomplete`` / ``.failed`` / ``.cancelled``) ends the response,
holding a copy of the whole output. Both go through :class:`ItemsAccumulator`: a whole body is
fed as the items of one terminal response. The copy inside the terminal event is read only when
no item event came; otherwise it is compared with the items the events made (a server that
changes a ``call_id`` between them breaks the join of a ``function_call_output`` to its call).

The finish reason is the response ``status``, with ``incomplete_details.reason`` after a colon
(``incomplete:max_output_tokens``); in a stream only a terminal event sets it.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from typing import Any

from harness.model import Finding, HostedCall, ParsedTurn, ProviderError, ToolCall, Usage, deviation
from harness.providers._calls import Notes, id_findings, id_part, join_text, make_call
from harness.providers._hosted import hosted_call, listing
from harness.providers._json import JsonProblem, decode
from harness.providers.envelopes import provider_error
from harness.providers.text_protocols import detect_leaks

TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed", "response.cancelled"})
OPENING = frozenset({"response.created", "response.in_progress", "response.queued"})
QUIET = frozenset(
    {
        "response.content_part.added",
        "response.output_text.annotation.added",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_part.done",
        "response.reasoning_summary_text.done",
        "response.reasoning_text.done",
        "keepalive",
    }
)
"""Events that carry nothing the turn needs beyond what other events (or the ``.done`` item) hold."""
HOSTED_EVENTS = (
    "response.web_search_call.",
    "response.file_search_call.",
    "response.code_interpreter_call",
    "response.image_generation_call.",
    "response.image_gen_call.",
    "response.mcp_call",
    "response.mcp_list_tools.",
    "response.custom_tool_call_input.",
    "response.shell_call",
    "response.apply_patch_call",
    "response.tool_search_call",
    "response.audio.",
    "response.compaction",
)
"""Event prefixes of hosted tools and other item kinds the harness does not read (their items are)."""
HOSTED_ITEMS = frozenset(
    {
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "tool_search_call",
        "tool_search_output",
    }
)
"""Items of tools the provider runs itself: not calls for the client to execute (its MCP
connector's items are :data:`MCP_ITEMS`, read apart)."""
MCP_ITEMS = frozenset({"mcp_call", "mcp_list_tools", "mcp_approval_request"})
"""The hosted MCP items, read into :class:`~harness.model.HostedCall` values [RS21]."""
CLIENT_ITEMS = frozenset(
    {"custom_tool_call", "computer_call", "local_shell_call", "shell_call", "apply_patch_call"}
)
"""Calls of tools the client runs that are not functions (the harness declares functions only)."""
CONTENT_EVENTS = {
    "response.function_call_arguments.delta": ("delta", "arguments"),
    "response.function_call_arguments.done": ("arguments", "arguments_done"),
    "response.output_text.delta": ("delta", "text"),
    "response.output_text.done": ("text", "text_done"),
    "response.content_part.done": ("part", "part"),
    "response.reasoning_summary_text.delta": ("delta", "reasoning"),
    "response.reasoning_text.delta": ("delta", "reasoning"),
    "response.refusal.delta": ("delta", "refusal"),
    "response.refusal.done": ("refusal", "refusal"),
}
"""The events that add to one item: the field they carry, and what it is."""
REFUSAL = Finding("wire.refusal_content", "info", False, "the model refused (refusal content)")
COUNTER_ID = re.compile(r"call_[0-9]+")
FUNCTIONS_ID = re.compile(r"functions\.[^:]+:[0-9]+")
WRAPPERS = frozenset({"parallel", "multi_tool_use.parallel"})
"""Names under which a model wraps several calls in one (``{"tool_uses": [{"recipient_name"...}]}``)."""


@dataclass
class _Item:
    """One output item as it is assembled from its events (or given whole)."""

    index: int
    added: dict[str, Any] | None = None
    done: dict[str, Any] | None = None
    arguments: list[str] = field(default_factory=list)
    arguments_done: str | None = None
    texts: dict[int, list[str]] = field(default_factory=dict)
    texts_done: dict[int, str] = field(default_factory=dict)
    parts_done: dict[int, dict[str, Any]] = field(default_factory=dict)
    reasoning: list[str] = field(default_factory=list)

    @property
    def type(self) -> str:
        value = (self.done or self.added or {}).get("type")
        return value if isinstance(value, str) else ""

    def field(self, key: str) -> Any:
        """``key`` from the ``.done`` item, else from the ``.added`` one."""
        for item in (self.done, self.added):
            if item is not None and item.get(key) is not None:
                return item[key]
        return None

    def streamed_arguments(self) -> str | None:
        """The arguments the ``added`` item and its deltas make (``None`` when nothing carried any)."""
        start = (self.added or {}).get("arguments")
        if not self.arguments:
            return start if isinstance(start, str) else None
        return (start if isinstance(start, str) else "") + "".join(self.arguments)

    def final_arguments(self) -> Any:
        """Added, appended to by the deltas, overridden by ``arguments.done``, then by the done item."""
        value: Any = self.streamed_arguments()
        if self.arguments_done is not None:
            value = self.arguments_done
        if self.done is not None and "arguments" in self.done:
            value = self.done["arguments"]
        return value

    def streamed_text(self) -> dict[int, str]:
        """Each content part's text as the events made it: the part's ``.done``, else the text's
        ``.done``, else the deltas joined."""
        out = {ci: "".join(parts) for ci, parts in self.texts.items()}
        out.update(self.texts_done)
        out.update({ci: str(p.get("text") or "") for ci, p in self.parts_done.items() if "text" in p})
        return out

    def wire(self) -> dict[str, Any]:
        """The item as a whole response would hold it (what is replayed)."""
        if self.done is not None:
            return self.done
        item = dict(self.added or {})
        if self.type == "function_call":
            arguments = self.final_arguments()
            if arguments is not None:
                item["arguments"] = arguments
        elif self.type == "message" and (self.texts or self.texts_done or self.parts_done):
            texts = self.streamed_text()
            item["content"] = [
                {"type": "output_text", "text": texts[ci], "annotations": []} for ci in sorted(texts)
            ]
        return item


class ItemsAccumulator(Notes):
    """Folds a whole response, or the events of a stream, into one turn."""

    def __init__(self, *, streaming: bool):
        super().__init__()
        self.streaming = streaming
        self.items: list[_Item] = []
        self.at: dict[int, _Item] = {}
        self.by_id: dict[str, _Item] = {}
        self.events = 0  # item events seen (a stream that sent none is read from its terminal copy)
        self.top = -1  # the highest output_index opened so far
        self.terminal: dict[str, Any] | None = None
        self.terminal_kind: str | None = None
        self.finish: str | None = None
        self.usage: Usage | None = None
        self.error: ProviderError | None = None
        self.response_id: str | None = None
        self.sequence: int | None = None

    # -- events ---------------------------------------------------------------------------------

    def feed(self, data: dict[str, Any], where: str, event: str | None) -> None:
        """Fold one stream event (its ``type``, else its SSE ``event:`` name, says which)."""
        kind = self.string(f"{where}type", data.get("type")) or event or ""
        if event and data.get("type") is not None and kind != event:
            self.note(deviation("event_name_mismatch", f"SSE event {event!r} carries data of type {kind!r}"))
        self.sequence_number(data.get("sequence_number"))
        if kind == "error":
            self.error_event(data)
        elif kind in TERMINAL:
            self.terminal_event(kind, self.obj(f"{where}response", data.get("response")) or {}, where)
        elif kind in OPENING:
            response = self.obj(f"{where}response", data.get("response")) or {}
            self.response_id = self.string(f"{where}response.id", response.get("id")) or self.response_id
        elif kind == "response.output_item.added":
            self.open(data, where)
        elif kind == "response.output_item.done":
            self.close(data, where)
        elif kind in QUIET or kind.startswith(HOSTED_EVENTS):
            pass
        else:
            self.content_event(kind, data, where)

    def content_event(self, kind: str, data: dict[str, Any], where: str) -> None:
        """A delta or ``.done`` event of one item's arguments, text, refusal or reasoning."""
        if kind not in CONTENT_EVENTS:
            detail = f"unknown stream event {kind!r} ignored"
            self.note(Finding("wire.unknown_stream_event", "info", False, detail))
            return
        key, what = CONTENT_EVENTS[kind]
        item = self.slot(data, where, kind)
        if item is None:
            return
        self.events += 1
        if what == "refusal":
            self.note(REFUSAL)
            return
        if what == "part":
            part = self.obj(f"{where}part", data.get("part"))
            if part is not None and part.get("type") == "output_text":
                item.parts_done[self.content_index(data, where)] = part
            elif part is not None and part.get("type") == "refusal":
                self.note(REFUSAL)
            return
        value = self.string(f"{where}{key}", data.get(key))
        if value is None:
            return
        if what == "arguments":
            item.arguments.append(value)
        elif what == "arguments_done":
            item.arguments_done = value
        elif what == "text":
            item.texts.setdefault(self.content_index(data, where), []).append(value)
        elif what == "text_done":
            item.texts_done[self.content_index(data, where)] = value
        else:
            item.reasoning.append(value)

    def content_index(self, data: dict[str, Any], where: str) -> int:
        return self.integer(f"{where}content_index", data.get("content_index")) or 0

    def sequence_number(self, value: Any) -> None:
        """Sequence numbers, where a stream carries them, count up by one."""
        if not isinstance(value, int) or isinstance(value, bool):
            return
        if self.sequence is not None and value != self.sequence + 1:
            detail = f"sequence_number went from {self.sequence} to {value}"
            self.note(Finding("wire.sequence_number_gap", "info", False, detail))
        self.sequence = value

    def slot(self, data: dict[str, Any], where: str, kind: str) -> _Item | None:
        """The open item an event is for: by ``item_id``, else by ``output_index`` (noted)."""
        item_id = self.string(f"{where}item_id", data.get("item_id"))
        if item_id is not None and item_id in self.by_id:
            return self.by_id[item_id]
        index = self.integer(f"{where}output_index", data.get("output_index"))
        if index is not None and index in self.at:
            if item_id is not None:
                self.note_each(
                    "event_item_id_unknown_matched_by_output_index",
                    f"{kind} for item_id {item_id!r}",
                    "item events whose item_id names no open item, matched by output_index (a client "
                    "keyed on item_id assembles nothing)",
                )
            return self.at[index]
        self.note_each(
            "event_for_unknown_item",
            f"{kind} (item_id {item_id!r}, output_index {index!r})",
            "item events for no open item, dropped",
        )
        return None

    def open(self, data: dict[str, Any], where: str) -> None:
        """``response.output_item.added``: a new item at its ``output_index``."""
        item = self.obj(f"{where}item", data.get("item"))
        if item is None:
            return
        self.events += 1
        index = self.index(data, where)
        if index in self.at:
            detail = f"output_item.added reuses output_index {index}; both items are kept"
            self.note(deviation("output_index_reused", detail))
        if index < self.top:
            detail = (
                f"output_item.added for output_index {index} came after index {self.top}; read in index order"
            )
            self.note(deviation("output_items_out_of_order", detail))
        self.top = max(self.top, index)
        slot = _Item(index, added=item)
        self.place(slot, item)

    def close(self, data: dict[str, Any], where: str) -> None:
        """``response.output_item.done``: the whole item, overriding what the deltas made."""
        item = self.obj(f"{where}item", data.get("item"))
        if item is None:
            return
        self.events += 1
        index = self.index(data, where)
        item_id = item.get("id")
        slot = self.by_id.get(item_id) if isinstance(item_id, str) else None
        slot = slot or self.at.get(index)
        if slot is None:
            detail = (
                f"output_item.done for output_index {index} (type {item.get('type')!r}) that was never added"
            )
            self.note(deviation("output_item_done_without_added", detail))
            slot = _Item(index)
            self.top = max(self.top, index)
            self.place(slot, item)
        elif slot.done is not None:
            self.note(
                deviation("output_item_done_repeated", f"output_item.done repeated for output_index {index}")
            )
        slot.done = item
        if isinstance(item_id, str):
            self.by_id[item_id] = slot

    def index(self, data: dict[str, Any], where: str) -> int:
        index = self.integer(f"{where}output_index", data.get("output_index"))
        if index is None:
            self.note(deviation("output_index_missing", "an output item event without output_index"))
            return self.top + 1
        return index

    def place(self, slot: _Item, item: dict[str, Any]) -> None:
        self.items.append(slot)
        self.at[slot.index] = slot
        if isinstance(item.get("id"), str):
            self.by_id[item["id"]] = slot

    def error_event(self, data: dict[str, Any]) -> None:
        """An ``error`` event, ``{"error": {...}}`` or flat ``{code, message, param}``: the turn's error
        (it wins over the error a later ``response.failed`` carries)."""
        self.note(deviation("error_event_in_stream", "an error event arrived in the 2xx stream"))
        inner = data.get("error")
        error = (
            inner
            if isinstance(inner, dict)
            else {k: v for k, v in data.items() if k not in ("type", "sequence_number")}
        )
        self.error = provider_error(error, 200, embedded=True)

    def terminal_event(self, kind: str, response: dict[str, Any], where: str) -> None:
        """A terminal event: status, usage and the copy of the output (kept to compare)."""
        if self.terminal_kind is not None:
            self.note(deviation("terminal_event_repeated", f"{kind} after {self.terminal_kind}"))
        self.terminal_kind, self.terminal = kind, response
        if kind == "response.failed":
            self.note(deviation("response_failed_event", "the stream ended with response.failed"))
        self.read_response(response, f"{where}response.")

    # -- a whole response (a body, or the one a terminal event holds) -----------------------------

    def read_response(self, response: dict[str, Any], where: str) -> None:
        """Status and ``incomplete_details`` (the finish reason), usage, id and, for a failed
        response, its error."""
        self.response_id = self.string(f"{where}id", response.get("id")) or self.response_id
        status = self.string(f"{where}status", response.get("status"))
        details = self.obj(f"{where}incomplete_details", response.get("incomplete_details")) or {}
        reason = self.string(f"{where}incomplete_details.reason", details.get("reason"))
        self.finish = f"{status}:{reason}" if status and reason else status
        usage = self.obj(f"{where}usage", response.get("usage"))
        if usage is not None:
            self.usage = Usage(
                self.count(f"{where}usage.input_tokens", usage.get("input_tokens")),
                self.count(f"{where}usage.output_tokens", usage.get("output_tokens")),
            )
        error = response.get("error")
        if error and self.error is None and (status == "failed" or not self.streaming):
            self.error = provider_error(error, 200, embedded=True)

    def whole(self, body: dict[str, Any]) -> None:
        """A whole response body: its ``output`` items, in order."""
        self.read_response(body, "")
        self.take(body.get("output"), "output")

    def take(self, output: Any, where: str) -> None:
        """The items of a whole output list, each at its position."""
        for position, item in enumerate(self.array(where, output)):
            if isinstance(item, dict):
                self.place(_Item(position, done=item), item)
            else:
                self.wrong_type(f"{where}[{position}]", item, "object", "skipped")

    # -- the turn -------------------------------------------------------------------------------

    def turn(self, stream_events: bool) -> ParsedTurn:
        """The turn: items in ``output_index`` order; calls, text, reasoning, finish, usage."""
        if stream_events:
            self.end_of_stream()
        ordered = sorted(self.items, key=lambda s: s.index)
        calls: list[ToolCall] = []
        texts: list[str] = []
        reasoning: list[str] = []
        hosted: list[HostedCall] = []
        for slot in ordered:
            if slot.type in MCP_ITEMS:
                hosted.append(self.hosted_item(slot))
            else:
                self.read_item(slot, calls, texts, reasoning)
        for finding in id_findings(calls):
            self.note(finding)
        self.id_forms(calls)
        status = (self.finish or "").split(":")[0]
        if calls and status and status != "completed":
            detail = f"the response status is {status!r} although it holds tool calls"
            self.note(deviation(f"status_{id_part(status)}_with_tool_calls", detail))
        text = join_text(texts)
        self.note_text_beside_calls(text, calls)
        extra: dict[str, Any] = {}
        if self.items:
            extra["openai_output"] = [slot.wire() for slot in ordered]
        if self.response_id:
            extra["openai_response_id"] = self.response_id
        return ParsedTurn(
            text,
            calls,
            self.finish,
            self.usage,
            self.error,
            self.findings,
            join_text(reasoning),
            extra,
            hosted,
        )

    def hosted_item(self, slot: _Item) -> HostedCall:
        """A hosted MCP item: a listing, an approval request, or a call with its output or error
        (an item still ``in_progress`` when the stream ended has neither, and is noted)."""
        where = f"output[{slot.index}]."
        if slot.type == "mcp_list_tools":
            return listing(self, where, slot.field("server_label"), slot.field("tools"), slot.field("error"))
        kind = "call" if slot.type == "mcp_call" else "approval_request"
        found = hosted_call(
            self,
            where,
            kind,
            slot.field("server_label"),
            slot.field("name"),
            slot.field("arguments"),
            wire_type="string",
            call_id=slot.field("id"),
        )
        if kind == "call":
            found.output = self.string(f"{where}output", slot.field("output"))
            error = slot.field("error")
            found.error = error if isinstance(error, str) or error is None else str(error)
            found.approval = self.string(f"{where}approval_request_id", slot.field("approval_request_id"))
            if found.output is None and found.error is None:
                detail = f"hosted MCP call {found.name!r} came with neither output nor error"
                self.note(deviation("hosted_call_without_output", detail))
        return found

    def id_forms(self, calls: list[ToolCall]) -> None:
        """Call ids that are counters (``call_0``) or name the function (``functions.name:0``): each
        server turn starts them again, so the same id comes back in later turns of the history."""
        for code, form, shape in (
            ("tool_call_id_counter_form", COUNTER_ID, "call_<n>"),
            ("tool_call_id_functions_index_form", FUNCTIONS_ID, "functions.<name>:<n>"),
        ):
            found = [c.wire_id for c in calls if c.wire_id and form.fullmatch(c.wire_id)]
            if found:
                detail = f"call ids {found} have the form {shape}, which repeats from turn to turn"
                self.note(Finding(f"wire.{code}", "info", False, detail))

    def end_of_stream(self) -> None:
        """What only the end of a stream tells: no terminal event; output only in the terminal copy,
        or a copy that disagrees with the items the events made."""
        if self.terminal_kind is None:
            self.note(
                deviation(
                    "stream_without_terminal_event",
                    "the stream ended without response.completed, .incomplete, .failed or .cancelled",
                )
            )
        if self.terminal is None or "output" not in self.terminal:
            return
        if not self.events:
            if self.terminal.get("output"):
                detail = "no item event came: the output is read from the terminal event's copy"
                self.note(Finding("wire.output_only_in_terminal_event", "info", False, detail))
            self.take(self.terminal.get("output"), "response.output")
            return
        copy = self.terminal.get("output")
        if copy == [] and self.items:
            detail = f"the terminal event's output is empty although {len(self.items)} item(s) streamed"
            self.note(deviation("completed_output_empty", detail))
            return
        streamed = [
            _call_key(s.field("call_id"), s.field("name"), s.final_arguments()) for s in self.function_calls()
        ]
        copied = [
            _call_key(item.get("call_id"), item.get("name"), item.get("arguments"))
            for item in (copy if isinstance(copy, list) else [])
            if isinstance(item, dict) and item.get("type") == "function_call"
        ]
        if [c[1:] for c in streamed] != [c[1:] for c in copied]:
            names = ([c[1] for c in copied], [c[1] for c in streamed])
            detail = f"the terminal event's calls {names[0]} differ from the streamed calls {names[1]}"
            self.note(deviation("completed_output_calls_differ", detail))
        elif [c[0] for c in streamed] != [c[0] for c in copied]:
            detail = (
                f"the streamed call_ids {[c[0] for c in streamed]} differ from those of the terminal event "
                f"{[c[0] for c in copied]} (the streamed ones are kept: a function_call_output must name one)"
            )
            self.note(deviation("completed_output_call_ids_differ", detail, severity="error"))

    def function_calls(self) -> list[_Item]:
        return [s for s in sorted(self.items, key=lambda s: s.index) if s.type == "function_call"]

    def read_item(self, slot: _Item, calls: list[ToolCall], texts: list[str], reasoning: list[str]) -> None:
        kind = slot.type
        if kind == "function_call":
            calls.append(self.make_call(slot, len(calls)))
        elif kind == "message":
            texts.append(self.message_text(slot))
        elif kind == "reasoning":
            self.note(
                Finding(
                    "wire.reasoning_item",
                    "info",
                    False,
                    "the output holds reasoning items (replayed as received)",
                )
            )
            reasoning.append(self.reasoning_text(slot))
        elif kind in HOSTED_ITEMS:
            self.note_each(
                "server_side_tool_item",
                kind,
                "items of tools the provider ran itself (not calls)",
                severity="info",
            )
        elif kind in CLIENT_ITEMS:
            self.note_each(
                "non_function_tool_call", kind, "calls of client tools that are not functions (not executed)"
            )
        else:
            self.note_each(
                "output_item",
                id_part(kind) if kind else "untyped",
                "output items of other types, kept for replay only",
                severity="info",
            )

    def message_text(self, slot: _Item) -> str:
        """A message item's text: its ``output_text`` parts (refusals are not text); a stream's
        deltas must agree with the ``.done`` item."""
        texts: list[str] = []
        content = slot.done.get("content") if slot.done is not None else None
        if content is None:
            streamed = slot.streamed_text()
            texts = [streamed[ci] for ci in sorted(streamed)]
        else:
            for part in content if isinstance(content, list) else []:
                if not isinstance(part, dict):
                    continue
                if part.get("type") == "refusal":
                    self.note(REFUSAL)
                elif isinstance(part.get("text"), str):
                    texts.append(part["text"])
            streamed = slot.streamed_text()
            if streamed and "".join(streamed[ci] for ci in sorted(streamed)) != "".join(texts):
                detail = f"the text deltas of output item {slot.index} differ from its output_item.done"
                self.note(deviation("text_deltas_differ_from_item", detail))
        text = "".join(texts)
        if self.streaming and slot.texts:
            self.call_as_text(slot, text)
        return text

    def call_as_text(self, slot: _Item, text: str) -> None:
        """A call streamed as ``response.output_text.delta`` text (vLLM #29725, #36435)."""
        leaks = detect_leaks(text)
        if leaks:
            self.note(
                deviation(
                    "call_streamed_as_text",
                    f"output item {slot.index} streamed a tool call as output_text deltas "
                    f"({leaks[0].marker}): {leaks[0].snippet!r}",
                    item_id=slot.field("id"),
                    snippet=leaks[0].snippet,
                )
            )

    def reasoning_text(self, slot: _Item) -> str:
        parts: list[str] = []
        for key in ("summary", "content"):
            value = slot.field(key)
            for part in value if isinstance(value, list) else []:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    parts.append(part["text"])
        return "\n".join(parts) if parts else "".join(slot.reasoning)

    def make_call(self, slot: _Item, position: int) -> ToolCall:
        """A ``function_call`` item: ``call_id`` is the call's id (the ``fc_`` item id is kept apart)."""
        name, call_id, item_id = slot.field("name"), slot.field("call_id"), slot.field("id")
        if not isinstance(name, str) or not name:
            self.note(deviation("tool_call_missing_name", f"function_call item {slot.index} has no name"))
            name = "" if name is None else str(name)
        if call_id is not None and not isinstance(call_id, str):
            self.wrong_type(f"output[{slot.index}].call_id", call_id, "string", "dropped")
            call_id = None
        if call_id is None:
            self.note(
                deviation(
                    "function_call_without_call_id",
                    f"function_call item {slot.index} ({name}) has no call_id",
                )
            )
        if item_id is None:
            detail = f"function_call item {slot.index} ({name}) has no id"
            self.note(Finding("wire.function_call_item_without_id", "info", False, detail))
        elif call_id is not None and item_id == call_id:
            detail = f"function_call item {slot.index} uses its call_id {call_id!r} as its item id too"
            self.note(Finding("wire.call_id_equals_item_id", "info", False, detail))
        self.stream_agreement(slot, name)
        raw = slot.final_arguments()
        call, findings = make_call(name, raw, call_id, position, wire_type="string")
        if isinstance(item_id, str):
            call.extra["item_id"] = item_id
        for finding in findings:
            self.note(finding)
        if (
            name in WRAPPERS
            and isinstance(call.arguments, dict)
            and isinstance(call.arguments.get("tool_uses"), list)
        ):
            wrapped = [u.get("recipient_name") for u in call.arguments["tool_uses"] if isinstance(u, dict)]
            self.note(
                deviation(
                    "parallel_wrapper_call",
                    f"call {position} is a {name!r} wrapper carrying {len(wrapped)} call(s) in tool_uses "
                    f"({wrapped}), not one function_call item each",
                    wrapped=wrapped,
                )
            )
        return call

    def stream_agreement(self, slot: _Item, name: str) -> None:
        """The added and done items, the deltas and ``arguments.done`` of one call must agree."""
        added, done = slot.added or {}, slot.done or {}
        for key, code in (("call_id", "call_id_changed_in_stream"), ("name", "name_changed_in_stream")):
            if added.get(key) and done.get(key) and added[key] != done[key]:
                detail = f"call {name!r}: {key} {added[key]!r} in output_item.added, {done[key]!r} in .done"
                self.note(deviation(code, detail))
        streamed = slot.streamed_arguments() if slot.arguments else None
        if streamed is not None and slot.arguments_done is not None and streamed != slot.arguments_done:
            self.note(
                deviation(
                    "arguments_deltas_differ_from_done",
                    f"call {name!r}: the argument deltas differ from arguments.done",
                )
            )
        told = slot.arguments_done if slot.arguments_done is not None else streamed
        if told is not None and "arguments" in done and done["arguments"] != told:
            self.note(
                deviation(
                    "arguments_done_differs_from_item",
                    f"call {name!r}: the streamed arguments differ from output_item.done",
                )
            )


def _call_key(call_id: Any, name: Any, arguments: Any) -> tuple[Any, Any, Any]:
    """A call as the comparison of the streamed and the terminal copies sees it (arguments parsed
    when they are JSON text, so spacing does not count)."""
    if isinstance(arguments, str):
        with contextlib.suppress(JsonProblem):
            arguments = decode(arguments).value if arguments.strip() else {}
    return call_id, name, arguments
