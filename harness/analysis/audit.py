"""``harness audit FILE...``: show what the adapters make of recorded traffic.

Reads vcrpy / pytest-recording cassettes (``interactions:``), ruby VCR cassettes
(``http_interactions:``) and raw response bodies (JSON, SSE, NDJSON, a Gemini
JSON array), tells each interaction's wire format and framing, and parses it
with the same adapter a run would use. It only reads: no tool is executed and
nothing is sent, so a cassette from anyone's test suite can be audited safely.
Bad input becomes a finding on an entry, never an exception (except a missing
path), so one broken file does not hide the others.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import gzip
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import yaml

from harness.errors import ConfigError
from harness.model import ParsedTurn, WireResponse
from harness.providers import adapter_class
from harness.providers.envelopes import error_from_body
from harness.providers.framing import STREAM_TYPES, decode_stream
from harness.providers.text_protocols import detect_leaks

if TYPE_CHECKING:
    from rich.table import Table

MISTRAL_ID = re.compile(r"^[0-9a-f]{32}$")  # Mistral's response ids; OpenAI-style servers use chatcmpl-...


@dataclass
class AuditEntry:
    """One audited interaction: where it came from, how it was read, and what the adapter found."""

    source: str
    interaction: int
    method: str | None = None
    url: str | None = None
    wire_format: str | None = None
    stream: bool = False
    status: int | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    text: str | None = None
    finish_reason: str | None = None
    error: dict[str, Any] | None = None
    findings: list[dict[str, Any]] = field(default_factory=list)
    detected_by: str | None = None  # "forced", "url" or "body": why this wire format

    def note(self, check_id: str, severity: str, detail: str) -> None:
        self.findings.append({"check_id": check_id, "severity": severity, "detail": detail})


@dataclass
class _Interaction:
    """A recorded exchange in neutral form, whatever layout the file used."""

    method: str | None
    url: str | None
    request_body: str | None
    status: int | None
    headers: dict[str, str]
    body: str


class _Loader(yaml.SafeLoader):
    """Safe YAML that reads unknown tags (ruby VCR's ``!ruby/...``, python tags) as plain data."""


def _plain(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)  # type: ignore[arg-type]


def _binary(loader: yaml.SafeLoader, node: yaml.Node) -> bytes:
    return base64.b64decode(str(loader.construct_scalar(node)))  # type: ignore[arg-type]


_Loader.add_constructor("!binary", _binary)  # ruby VCR's spelling of !!binary
_Loader.add_multi_constructor("", _plain)


def _text(raw: bytes) -> str:
    """Bytes as text; gzip bodies (a cassette recorded without decompression) are unpacked."""
    if raw[:2] == b"\x1f\x8b":
        with contextlib.suppress(OSError, EOFError):
            raw = gzip.decompress(raw)
    return raw.decode("utf-8", errors="replace").removeprefix("\ufeff")


def _body_text(part: dict[str, Any]) -> str | None:
    """A stored body as text: pytest-recording's ``parsed_body``, or ``body`` as a string, bytes
    (``!!binary``), ``{string: ...}`` or ``{base64_string: ...}``."""
    value = part.get("parsed_body", part.get("body"))
    if "parsed_body" not in part and isinstance(value, dict):
        if "base64_string" in value:
            value = base64.b64decode("".join(str(value["base64_string"]).split()), validate=True)
        else:
            value = value.get("string")
    if value is None:
        return None
    if isinstance(value, bytes):
        return _text(value)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _interaction(item: dict[str, Any]) -> _Interaction:
    """One vcrpy, pytest-recording (``parsed_body``) or ruby VCR interaction."""
    request, response = (_mapping(item.get(key)) for key in ("request", "response"))
    status = response.get("status")
    code = status.get("code") if isinstance(status, dict) else status
    method = request.get("method")
    return _Interaction(
        str(method).upper() if method else None,
        str(request["uri"]) if request.get("uri") else None,
        _body_text(request),
        int(code) if isinstance(code, int | str) and str(code).isdigit() else None,
        {
            str(k): ", ".join(map(str, v)) if isinstance(v, list) else str(v)
            for k, v in _mapping(response.get("headers")).items()
        },
        _body_text(response) or "",
    )


def _cassette(text: str) -> list[_Interaction] | None:
    """The interactions of a cassette, or ``None`` when the file is not one (then it is a raw body)."""
    if "request" not in text and "interactions" not in text:
        return None
    try:
        json.loads(text)
        return None  # JSON is YAML too, but a JSON file is a response body
    except RecursionError:
        return None  # JSON nested past the stack: a (broken) response body
    except ValueError:
        pass
    try:
        data = yaml.load(text, Loader=_Loader)
    except (yaml.YAMLError, RecursionError):
        return None
    items = data.get("interactions", data.get("http_interactions")) if isinstance(data, dict) else None
    if isinstance(data, list) and data and all(isinstance(i, dict) and "request" in i for i in data):
        items = data  # interactions sliced out of a cassette
    if not isinstance(items, list):
        return None
    return [_interaction(_mapping(item)) for item in items]


def _format_from_url(url: str | None) -> str | None:
    """The first URL rule that matches; the Mistral host wins over the generic OpenAI path."""
    try:
        parts = urlsplit(url or "")
        host, path = parts.hostname or "", parts.path.rstrip("/")
    except ValueError:
        return None
    rules = (
        (path.endswith("/v1/messages"), "anthropic-messages"),
        (":generateContent" in path or ":streamGenerateContent" in path, "gemini-generate"),
        (path.endswith("/api/chat"), "ollama-chat"),
        (host == "api.mistral.ai", "mistral-chat"),
        (path.endswith("/chat/completions"), "openai-chat"),
    )
    return next((fmt for matched, fmt in rules if matched), None)


def _payloads(body: str) -> list[Any]:
    """The JSON objects of a body: the whole object, the items of an array, or the stream's events."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # not one JSON value (a stream), or nested past the stack
        return [event.data for event in decode_stream(body).events]
    return data if isinstance(data, list) else [data]


ANTHROPIC_EVENTS = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "ping",
    }
)
COHERE_EVENTS = frozenset(
    {
        "message-start",
        "content-start",
        "content-delta",
        "content-end",
        "tool-plan-delta",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-end",
        "citation-start",
        "citation-end",
        "message-end",
        "debug",
    }
)
COHERE_V1_EVENTS = frozenset(
    {
        "stream-start",
        "text-generation",
        "tool-calls-chunk",
        "tool-calls-generation",
        "search-queries-generation",
        "search-results",
        "citation-generation",
        "stream-end",
    }
)
COHERE_FINISH = frozenset({"COMPLETE", "TOOL_CALL", "MAX_TOKENS", "STOP_SEQUENCE", "ERROR", "TIMEOUT"})


def _format_from_payload(data: Any) -> str | None:
    """The wire format a payload shows by positive evidence only, or ``None``.

    Anthropic: one of its stream event types, a ``message`` object with ``role`` and a
    ``content`` list, or its ``{"type": "error", "error": {...}}`` envelope. Gemini: a
    ``candidates`` list or a ``promptFeedback``. Ollama: a boolean ``done`` beside a
    ``message`` object. OpenAI chat: a ``choices`` list and no ``object`` other than
    ``chat.completion[.chunk]`` (Mistral when the id is Mistral's 32 hex digits: its chunks
    are otherwise OpenAI's). A lookalike (Cohere's ``message-start``, a ``message_batch``)
    shows none of these.
    """
    data = _mapping(data)
    kind = data.get("type")
    anthropic = (
        kind in ANTHROPIC_EVENTS
        or (kind == "message" and data.get("role") == "assistant" and isinstance(data.get("content"), list))
        or (kind == "error" and isinstance(data.get("error"), dict))
    )
    obj = data.get("object")
    chat = isinstance(data.get("choices"), list) and (obj is None or str(obj).startswith("chat.completion"))
    rules = (
        (anthropic, "anthropic-messages"),
        (
            isinstance(data.get("candidates"), list) or isinstance(data.get("promptFeedback"), dict),
            "gemini-generate",
        ),
        (isinstance(data.get("done"), bool) and isinstance(data.get("message"), dict), "ollama-chat"),
        (chat and bool(MISTRAL_ID.match(str(data.get("id", "")))), "mistral-chat"),
        (chat, "openai-chat"),
    )
    return next((fmt for matched, fmt in rules if matched), None)


def _foreign(data: Any) -> str | None:
    """What a payload is when it is a format the harness knows of but does not read (so it must
    not be read as a lookalike), or ``None``."""
    data = _mapping(data)
    kind, obj = data.get("type"), data.get("object")
    if kind in COHERE_EVENTS:
        return f"a Cohere v2 chat stream (event type {kind!r})"
    if data.get("event_type") in COHERE_V1_EVENTS:
        return f"a Cohere v1 chat stream (event_type {data['event_type']!r})"
    if isinstance(data.get("message"), dict) and data.get("finish_reason") in COHERE_FINISH:
        return f"a Cohere v2 chat response (finish_reason {data['finish_reason']!r})"
    if isinstance(kind, str) and kind.startswith("message_batch"):
        return f"an Anthropic Message Batches object (type {kind!r})"
    if "custom_id" in data and "result" in data:
        return "Anthropic Message Batches results (lines with custom_id and result)"
    if "custom_id" in data and "response" in data:
        return "OpenAI Batch output (lines with custom_id and response)"
    if obj == "response" or (isinstance(kind, str) and kind.startswith("response.")):
        return f"the OpenAI Responses API ({'object response' if obj == 'response' else f'event {kind!r}'})"
    if isinstance(obj, str) and obj in ("text_completion", "batch", "list"):
        return f"an OpenAI object {obj!r}"
    return None


def _seen(payloads: list[Any]) -> str:
    """A short description of payloads no rule recognised, for the unknown-format finding."""
    if not payloads:
        return "no JSON payload"
    objects = [p for p in payloads if isinstance(p, dict)]
    types = sorted({str(p["type"])[:40] for p in objects if isinstance(p.get("type"), str)})
    if types:
        return f"payload types {types[:8]}"
    keys = sorted({str(k)[:40] for p in objects[:5] for k in p})
    if keys:
        return f"objects with keys {keys[:12]}"
    return f"JSON {sorted({type(p).__name__ for p in payloads})}"


def identify(url: str | None, body: str) -> tuple[str | None, str | None, str]:
    """The wire format, what told it (``url`` or ``body``), and what was seen.

    The URL rules come first; else the first payload that tells a known format or a
    foreign one decides (a foreign one gives no format: it must not be parsed as a
    lookalike). ``seen`` names what the body holds when no known format is told.
    """
    if found := _format_from_url(url):
        return found, "url", ""
    payloads = _payloads(body)
    for payload in payloads:
        if foreign := _foreign(payload):
            return None, None, foreign
        if fmt := _format_from_payload(payload):
            return fmt, "body", ""
    return None, None, _seen(payloads)


def detect_format(url: str | None, body: str) -> tuple[str | None, str | None]:
    """The wire format and what told it: the ``url``, else the first telling ``body`` payload."""
    fmt, how, _ = identify(url, body)
    return fmt, how


def _is_stream(url: str | None, request: Any, content_type: str, body: str) -> bool:
    """A stream by the request (``stream: true``, Gemini's stream path), the content type, or the framing.

    A body that is one JSON object is parsed whole unless a hint says stream and it is one NDJSON line.
    """
    hinted = (
        (isinstance(request, dict) and request.get("stream") is True)
        or ":streamGenerateContent" in (url or "")
        or any(kind in content_type.lower() for kind in STREAM_TYPES)
    )
    try:
        whole = json.loads(body)
    except (ValueError, RecursionError):
        return hinted or bool(decode_stream(body).events)
    if isinstance(whole, list):
        return True
    return hinted and len([line for line in body.splitlines() if line.strip()]) == 1


def _tool_names(request: Any) -> list[str]:
    """Tool names offered by a request of any format (OpenAI/Ollama ``function``, Anthropic, Gemini)."""
    tools = [_mapping(t) for t in _list(_mapping(request).get("tools"))]
    gemini = [_list(t.get("functionDeclarations") or t.get("function_declarations")) for t in tools]
    declared = [d for declarations in gemini for d in declarations]
    named = [_mapping(t.get("function")) or t for t in tools] + [_mapping(d) for d in declared]
    return [n["name"] for n in named if isinstance(n.get("name"), str)]


def _audit(source: str, index: int, it: _Interaction, forced: str | None, rechunk: int = 0) -> AuditEntry:
    """Detect, parse with the format's own adapter, and look for calls leaked into the text."""
    entry = AuditEntry(source, index, it.method, it.url, status=it.status)
    fmt, entry.detected_by, seen = (forced, "forced", "") if forced else identify(it.url, it.body)
    entry.wire_format = fmt
    try:
        request = json.loads(it.request_body) if it.request_body else None
    except (ValueError, RecursionError):
        request = None
    response = WireResponse(it.status or 200, it.body, it.headers)
    entry.stream = _is_stream(it.url, request, response.content_type, it.body)
    if fmt is None:
        entry.note(
            "audit.format_unknown",
            "error",
            f"no URL rule or body shape tells a wire format the harness reads; seen: {seen}. "
            "It is not parsed as a lookalike; pass a format to force one",
        )
        if response.status < 400:
            return entry
        turn = ParsedTurn(error=error_from_body(response.status, response.body))  # errors share envelopes
    else:  # never raises: an unreadable body is a malformed_body finding
        adapter = adapter_class(fmt)()
        turn = adapter.parse(response, stream=entry.stream)
        if rechunk and entry.stream and response.status < 400:
            from harness.agent.rechunk import sweep

            for difference in sweep(it.body, adapter.parse_chunks, rechunk):
                entry.note("stream.rechunk", "error", difference.describe())
    entry.tool_calls = [
        {
            "id": c.wire_id,
            "name": c.name,
            "arguments": c.arguments,
            "raw_arguments": c.raw_arguments,
            "parse_error": c.parse_error,
        }
        for c in turn.tool_calls
    ]
    entry.text, entry.finish_reason = turn.text, turn.finish_reason
    if turn.error is not None:
        entry.error = {"status": turn.error.status, "code": turn.error.code, "message": turn.error.message}
    for finding in turn.findings:
        if not finding.passed:
            entry.note(finding.check_id, finding.severity, finding.detail)
    for leak in detect_leaks(turn.text, tool_names=_tool_names(request)):
        entry.note(
            "protocol.native_delivery",
            "error",
            f"a tool call leaked into the text ({leak.marker}): {leak.snippet!r}",
        )
    return entry


def _files(paths: Sequence[str | Path]) -> list[Path]:
    """The files to audit; a folder stands for every file under it, in order."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise ConfigError(f"no such file: {path}")
        files += sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    return files


def _failed(source: str, check_id: str, severity: str, detail: str) -> list[AuditEntry]:
    entry = AuditEntry(source, 0)
    entry.note(check_id, severity, detail)
    return [entry]


def audit_file(path: Path, *, wire_format: str | None = None, rechunk: int = 0) -> list[AuditEntry]:
    """Every interaction of one cassette, or the one response of a raw body file."""
    source = str(path)
    try:
        text = _text(path.read_bytes())
        interactions = _cassette(text)
    except OSError as exc:
        return _failed(source, "audit.unreadable", "error", f"cannot read {path}: {exc}")
    except ValueError as exc:  # bad base64 (binascii.Error) in a stored body
        return _failed(source, "audit.unreadable", "error", f"a recorded body cannot be decoded: {exc}")
    if interactions is None:  # a raw body: no request, no recorded status
        return [_audit(source, 0, _Interaction(None, None, None, None, {}, text), wire_format, rechunk)]
    if not interactions:
        return _failed(source, "audit.empty_cassette", "warning", "the cassette holds no interaction")
    return [_audit(source, i, it, wire_format, rechunk) for i, it in enumerate(interactions)]


def audit_paths(
    paths: Sequence[str | Path], *, wire_format: str | None = None, rechunk: int = 0
) -> list[AuditEntry]:
    """Audit files (a folder means every file under it); ``wire_format`` forces the format of all;
    ``rechunk`` re-slices every streamed response up to that many bytes a chunk
    (:func:`harness.agent.rechunk.sweep`) and notes each slicing that assembles differently."""
    if wire_format is not None:
        adapter_class(wire_format)  # an unknown name is a UserError before any file is read
    return [
        entry
        for path in _files(paths)
        for entry in audit_file(path, wire_format=wire_format, rechunk=rechunk)
    ]


def to_json(entries: Sequence[AuditEntry]) -> list[dict[str, Any]]:
    return [dataclasses.asdict(entry) for entry in entries]


def _call_label(call: dict[str, Any], width: int = 70) -> str:
    error, arguments = call["parse_error"], json.dumps(call["arguments"], ensure_ascii=False)
    label = f"{call['name']}({f'!{error}' if error else arguments})"
    return label if len(label) <= width else label[: width - 1] + "…"


def _findings_label(findings: list[dict[str, Any]]) -> str:
    counts = {s: sum(f["severity"] == s for f in findings) for s in ("error", "warning", "info")}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    ids = sorted({f["check_id"] for f in findings if f["severity"] != "info"})
    return summary + (": " + ", ".join(ids) if ids else "") if summary else "-"


def render_table(entries: Sequence[AuditEntry]) -> Table:
    """One row per tool call (one per interaction without a call); findings on an interaction's first row."""
    from rich.table import Column, Table
    from rich.text import Text  # plain cells: file names and arguments may hold [brackets]

    headers = ("file:interaction", "format", "status", "call", "finish", "findings")
    table = Table(*(Column(h, overflow="fold") for h in headers), title="audit")
    sources = [Path(e.source).absolute() for e in entries]
    base = os.path.commonpath([p.parent for p in sources]) if sources else ""  # short, yet unambiguous
    for entry, source in zip(entries, sources, strict=True):
        status = "-" if entry.status is None else str(entry.status)
        if entry.error:
            status += f" {entry.error.get('code') or ''}".rstrip()
        fmt = f"{entry.wire_format or '?'}{' (stream)' * entry.stream}"
        first = [
            f"{os.path.relpath(source, base)}:{entry.interaction}",
            fmt,
            status,
            entry.finish_reason or "-",
            _findings_label(entry.findings),
        ]
        calls = [_call_label(c) for c in entry.tool_calls] or (
            [f"error: {entry.error['message'][:60]}"] if entry.error else ["(no call)"]
        )
        for row, call in enumerate(calls):
            cells = first if row == 0 else ["", "", "", "", ""]
            table.add_row(*map(Text, [*cells[:3], call, *cells[3:]]))
    return table
