"""Secrets never reach disk: every secret the process knows is redacted by value everywhere.

Scrubbing by name (``Authorization``, ``x-api-key``, ``key=`` ...) misses a key a
server echoes back (``401 Incorrect API key provided: sk-...``), a signed URL, a
password in a base URL, a value an MCP server prints on stderr. So every secret
the harness learns (the keys it reads from the environment, URL userinfo and
credential query values, credential header values, MCP server environment values
marked secret) is registered here, and :func:`redact` replaces each one, wherever it
appears, in every request, response, header, URL, body, stderr and report before
anything is written.

A server echoes a secret in more shapes than its own, so each value is registered with
the forms it travels in (:func:`forms`): URL-quoted, and base64, both on its own and
inside a longer base64 text (the base64 of ``Bearer <key>``, of ``user:pass``). Each
form is matched with any of its characters JSON-escaped (``\\u0073k-...``, ``\\/``). A
streamed answer brings its text in pieces, one per event, and a key may be cut between
two of them: :func:`redact_body` reads a response body's JSON strings of one field
together, as the reader of the answer will.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, quote_plus

REDACTED = "<redacted>"
MIN_LENGTH = 6
"""Shorter values are not registered: redacting ``"abc"`` everywhere would mangle ordinary text."""

_lock = threading.Lock()
_known: set[str] = set()
_ordered: tuple[str, ...] = ()


def forms(value: str) -> set[str]:
    """The forms ``value`` travels in: itself, URL-quoted, its base64 (standard and URL-safe
    alphabets, with and without padding), and the part of its base64 its neighbours do not
    change, at each of the three alignments a value can have inside longer base64 text (the
    base64 of ``Bearer <key>``, of ``user:pass``)."""
    raw = value.encode()
    found = {value, quote(value, safe=""), quote_plus(value)}
    whole = base64.b64encode(raw).decode()
    encoded = [whole, whole.rstrip("=")]
    for shift in range(3):  # after `shift` bytes: the characters made of the value's bits alone
        first, stop = (8 * shift + 5) // 6, 8 * (shift + len(raw)) // 6
        encoded.append(base64.b64encode(bytes(shift) + raw).decode()[first:stop])
    for text in encoded:
        found |= {text, text.replace("+", "-").replace("/", "_")}
    return {form for form in found if len(form) >= MIN_LENGTH}


def register(*values: str | None) -> None:
    """Remember secret values, with every form they travel in (:func:`forms`)."""
    global _ordered
    fresh = {value for value in values if value and len(value) >= MIN_LENGTH} - _known
    if not fresh:
        return
    with _lock:
        _known.update(fresh)
        found = {form for value in _known for form in forms(value)}
        _ordered = tuple(sorted(found, key=lambda form: (-len(form), form)))  # a key inside another


def known() -> tuple[str, ...]:
    """Every registered form, longest first."""
    return _ordered


def redact(text: str) -> str:
    """``text`` with every registered secret, in any of its forms, replaced by ``<redacted>``."""
    ordered = _ordered
    if not ordered:
        return text
    if "\\u" in text or "\\/" in text:  # JSON escapes may hide one: the slower search
        return _spliced(text, [(start, end, REDACTED) for start, end in _spans(text, ordered)])
    for secret in ordered:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact_bytes(data: bytes) -> bytes:
    """:func:`redact` for bytes (secrets are matched in their UTF-8 form; other bytes are kept)."""
    if not _ordered:
        return data
    return redact(data.decode("utf-8", errors="surrogateescape")).encode("utf-8", errors="surrogateescape")


_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\/")


def _spans(text: str, ordered: tuple[str, ...]) -> list[tuple[int, int]]:
    """Where the forms ``ordered`` are in ``text``, any of their characters JSON-escaped or not:
    sorted, overlapping spans merged. A plain search of the text with its escapes undone (fast)
    says which form's pattern (slow) has anything to find."""
    plain = _ESCAPE.sub(lambda m: chr(int(m[1], 16)) if m[1] else "/", text) if "\\" in text else text
    found = sorted(m.span() for form in ordered if form in plain for m in _pattern(form).finditer(text))
    merged: list[tuple[int, int]] = []
    for start, end in found:
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


@functools.lru_cache(maxsize=256)
def _pattern(form: str) -> re.Pattern[str]:
    """``form`` with any of its characters plain or a JSON escape (``\\u0073``, ``\\u002F``, ``\\/``)."""
    return re.compile("".join(f"(?:{'|'.join(_escapes(char))})" for char in form))


def _escapes(char: str) -> list[str]:
    """The ways ``char`` may be written in a JSON string."""
    options = [re.escape(char)]
    if ord(char) < 0x10000:  # \\uXXXX, its hex digits in either case
        options.append(
            r"\\u" + "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in f"{ord(char):04x}")
        )
    if char == "/":
        options.append(r"\\/")
    return options


def _spliced(text: str, edits: list[tuple[int, int, str]]) -> str:
    """``text`` with each span ``start:end`` of ``edits`` (apart) replaced by its text."""
    if not edits:
        return text
    parts, at = [], 0
    for start, end, value in sorted(edits):
        parts += [text[at:start], value]
        at = end
    return "".join([*parts, text[at:]])


_FIELD = re.compile(r'"([^"\\]*(?:\\.[^"\\]*)*)"\s*:\s*"([^"\\]*(?:\\.[^"\\]*)*)"', re.DOTALL)
"""A JSON string field: ``"name": "value"`` (escapes kept)."""


def redact_body(text: str) -> str:
    """A response body (JSON, JSON lines, server-sent events) with every secret redacted: by
    :func:`redact`, and where a secret is cut between the string values of one field (a streamed
    answer's ``"content"`` pieces, one per event), the pieces that hold it are cut too: the
    first says ``<redacted>`` where the secret began, the others lose their part of it, so the
    answer reads ``<redacted>`` once joined. Each body is read whole, never a chunk at a time."""
    ordered = _ordered
    if not ordered:
        return text
    fields: dict[str, list[re.Match[str]]] = {}
    for match in _FIELD.finditer(text):
        fields.setdefault(match.group(1), []).append(match)
    edits = []
    for matches in fields.values():
        if len(matches) < 2:
            continue  # a secret inside one value is redact's
        pieces = [_decoded(match.group(2)) for match in matches]
        hits = _spans("".join(pieces), ordered)
        for match, piece, cut in zip(matches, pieces, _cut(pieces, hits), strict=True):
            if cut != piece:
                edits.append((match.start(2), match.end(2), json.dumps(cut)[1:-1]))
    return redact(_spliced(text, edits))


def _decoded(raw: str) -> str:
    """A JSON string's value from its text between the quotes (the text itself if it is not JSON)."""
    if "\\" not in raw:
        return raw
    try:
        value = json.loads(f'"{raw}"', strict=False)
    except ValueError:
        return raw
    return value if isinstance(value, str) else raw


def _cut(pieces: list[str], hits: list[tuple[int, int]]) -> list[str]:
    """``pieces`` with the spans ``hits`` (sorted, apart, in the pieces joined) taken out, and
    ``<redacted>`` in the piece where each span begins."""
    out = []
    offset = 0
    for piece in pieces:
        end = offset + len(piece)
        kept, at = [], offset
        for start, stop in hits:
            if stop <= at or start >= end:
                continue
            kept.append(piece[at - offset : max(start, at) - offset])
            if start >= offset:
                kept.append(REDACTED)
            at = min(stop, end)
        out.append("".join([*kept, piece[at - offset :]]))
        offset = end
    return out


def redact_data(value: Any) -> Any:
    """Every string inside a JSON-like value, redacted (keys too)."""
    if not _ordered:
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_data(k): redact_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(v) for v in value]
    return value


def register_all(values: Iterable[str]) -> None:
    register(*values)


def forget_all() -> None:
    """Forget every secret (tests only: a real run keeps them for the whole process)."""
    global _ordered
    with _lock:
        _known.clear()
        _ordered = ()
