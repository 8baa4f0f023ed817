"""Secrets never reach disk: every secret the process knows is redacted by value everywhere.

Scrubbing by name (``Authorization``, ``x-api-key``, ``key=`` ...) misses a key a
server echoes back (``401 Incorrect API key provided: sk-...``), a signed URL, a
password in a base URL, a value an MCP server prints on stderr. So every secret
the harness learns (the keys it reads from the environment, URL userinfo, custom
header values, MCP server environment values marked secret) is registered here,
and :func:`redact` replaces each one, wherever it appears, in every request,
response, header, URL, body, stderr and report before anything is written.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

REDACTED = "<redacted>"
MIN_LENGTH = 6
"""Shorter values are not registered: redacting ``"abc"`` everywhere would mangle ordinary text."""

_lock = threading.Lock()
_known: set[str] = set()
_ordered: tuple[str, ...] = ()


def register(*values: str | None) -> None:
    """Remember secret values (and the forms they travel in: base64 of ``user:pass``, URL-quoted)."""
    global _ordered
    fresh = set()
    for value in values:
        if not value or len(value) < MIN_LENGTH:
            continue
        fresh |= {value, quote(value, safe=""), base64.b64encode(value.encode()).decode()}
    if not fresh - _known:
        return
    with _lock:
        _known.update(v for v in fresh if len(v) >= MIN_LENGTH)
        _ordered = tuple(sorted(_known, key=len, reverse=True))  # longest first: a key inside another


def known() -> tuple[str, ...]:
    return _ordered


def redact(text: str) -> str:
    """``text`` with every registered secret replaced by ``<redacted>``."""
    for secret in _ordered:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact_bytes(data: bytes) -> bytes:
    """:func:`redact` for bytes (secrets are matched in their UTF-8 form)."""
    for secret in _ordered:
        encoded = secret.encode()
        if encoded in data:
            data = data.replace(encoded, REDACTED.encode())
    return data


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
