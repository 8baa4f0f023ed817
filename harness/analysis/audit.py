"""``harness audit FILE...``: show what the adapters make of recorded traffic.

Reads vcrpy / pytest-recording cassettes (``interactions:``), ruby VCR cassettes
(``http_interactions:``) and raw response bodies (JSON, SSE, NDJSON, a JSON array of
payloads, a binary AWS event stream), tells each interaction's wire format (the adapters say
how their traffic looks: :mod:`harness.providers.detection`) and framing, and parses it with
the same adapter a run would use. It only reads: no tool is executed and
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
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from harness.errors import ConfigError
from harness.model import ParsedTurn, WireResponse, is_binary
from harness.providers import Adapter, adapter_class
from harness.providers.detection import binary_body, detect_format, identify

__all__ = ["AuditEntry", "audit_file", "audit_paths", "detect_format", "identify", "render_table", "to_json"]
from harness.providers.envelopes import error_from_body
from harness.providers.framing import STREAM_TYPES, decode_stream
from harness.providers.text_protocols import detect_leaks

if TYPE_CHECKING:
    from rich.table import Table


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
    data: bytes | None = None  # a binary body's bytes (``body`` holds their base64, as WireResponse does)


class _Loader(yaml.SafeLoader):
    """Safe YAML that reads unknown tags (ruby VCR's ``!ruby/...``, python tags) as plain data."""


def _plain(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)  # type: ignore[arg-type]


def _yaml_binary(loader: yaml.SafeLoader, node: yaml.Node) -> bytes:
    return base64.b64decode(str(loader.construct_scalar(node)))  # type: ignore[arg-type]


_Loader.add_constructor("!binary", _yaml_binary)  # ruby VCR's spelling of !!binary
_Loader.add_multi_constructor("", _plain)


def _text(raw: bytes) -> str:
    """Bytes as text; gzip bodies (a cassette recorded without decompression) are unpacked."""
    if raw[:2] == b"\x1f\x8b":
        with contextlib.suppress(OSError, EOFError):
            raw = gzip.decompress(raw)
    return raw.decode("utf-8", errors="replace").removeprefix("\ufeff")


def _stored(part: dict[str, Any]) -> Any:
    """A stored body as it is kept: pytest-recording's ``parsed_body``, or ``body`` as a string,
    bytes (``!!binary``), ``{string: ...}`` or ``{base64_string: ...}``."""
    value = part.get("parsed_body", part.get("body"))
    if "parsed_body" not in part and isinstance(value, dict):
        if "base64_string" in value:
            return base64.b64decode("".join(str(value["base64_string"]).split()), validate=True)
        return value.get("string")
    return value


def _body_text(part: dict[str, Any]) -> str | None:
    """A stored body as text (:func:`_stored`)."""
    value = _stored(part)
    if value is None:
        return None
    if isinstance(value, bytes):
        return _text(value)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _binary(content_type: str, part: dict[str, Any]) -> bytes | None:
    """The bytes of a stored body of a binary content type (a text one a cassette stored as a string,
    vcrpy's form of bytes that happened to be UTF-8), or ``None``."""
    if not is_binary(content_type):
        return None
    value = _stored(part)
    return value if isinstance(value, bytes) else str(value or "").encode("utf-8")


def _base64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _interaction(item: dict[str, Any]) -> _Interaction:
    """One vcrpy, pytest-recording (``parsed_body``) or ruby VCR interaction."""
    request, response = (_mapping(item.get(key)) for key in ("request", "response"))
    status = response.get("status")
    code = status.get("code") if isinstance(status, dict) else status
    method = request.get("method")
    headers = {
        str(k): ", ".join(map(str, v)) if isinstance(v, list) else str(v)
        for k, v in _mapping(response.get("headers")).items()
    }
    data = _binary(next((v for k, v in headers.items() if k.lower() == "content-type"), ""), response)
    return _Interaction(
        str(method).upper() if method else None,
        str(request["uri"]) if request.get("uri") else None,
        _body_text(request),
        int(code) if isinstance(code, int | str) and str(code).isdigit() else None,
        headers,
        _base64(data) if data is not None else _body_text(response) or "",
        data,
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


def _is_stream(
    adapter: type[Adapter], url: str | None, request: Any, content_type: str, body: str, status: int | None
) -> bool:
    """A stream by the request (as its format says: ``stream: true``, a stream path), the
    content type, or the framing. An error status answers a stream request with one JSON body:
    the request's word does not count then.

    A body that is one JSON object is parsed whole unless a hint says stream and it is one NDJSON line,
    and never when its content type says JSON (a refused stream answers with a JSON error).
    """
    asked = adapter.request_streams(url, request) and (status or 200) < 400
    hinted = asked or any(kind in content_type.lower() for kind in STREAM_TYPES)
    try:
        whole = json.loads(body)
    except (ValueError, RecursionError):
        return hinted or bool(decode_stream(body).events)
    if isinstance(whole, list):
        return True
    if content_type.lower().startswith("application/json"):
        return False
    return hinted and len([line for line in body.splitlines() if line.strip()]) == 1


def _audit(source: str, index: int, it: _Interaction, forced: str | None, rechunk: int = 0) -> AuditEntry:
    """Detect, parse with the format's own adapter, and look for calls leaked into the text."""
    entry = AuditEntry(source, index, it.method, it.url, status=it.status)
    fmt, entry.detected_by, seen = (forced, "forced", "") if forced else identify(it.url, it.body, it.data)
    entry.wire_format = fmt
    try:
        request = json.loads(it.request_body) if it.request_body else None
    except (ValueError, RecursionError):
        request = None
    response = WireResponse(it.status or 200, it.body, it.headers)
    adapter_type = adapter_class(fmt) if fmt is not None else Adapter
    entry.stream = _is_stream(adapter_type, it.url, request, response.content_type, it.body, it.status)
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

            for difference in sweep(it.body if it.data is None else it.data, adapter.parse_chunks, rechunk):
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
    for leak in detect_leaks(turn.text, tool_names=adapter_type.tool_names(request)):
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
        raw = path.read_bytes()
        if binary := binary_body(raw):  # a raw binary body (an event stream): its framing tells the format
            body = _Interaction(None, None, None, None, {"content-type": binary[1]}, _base64(raw), raw)
            return [_audit(source, 0, body, wire_format, rechunk)]
        text = _text(raw)
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
