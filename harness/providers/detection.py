"""Which wire format recorded traffic speaks, asked of the registered adapters.

Each adapter says how its own traffic looks (:meth:`Adapter.claims_url`,
:meth:`Adapter.claims_payload`, :meth:`Adapter.claims_bytes` for a binary body): the URL decides
first, else the first response payload that a format claims by positive evidence (a binary
body: its framing). A subclass is asked before its base (Mistral,
which claims its host and its ids, before OpenAI chat, which claims every
``/chat/completions``). A payload no format claims may still be one the harness knows of
and does not read (:data:`FOREIGN`): it is named, never parsed as a lookalike.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from harness.providers.adapter import Adapter
from harness.providers.framing import decode_stream


def adapters() -> tuple[tuple[str, type[Adapter]], ...]:
    """Every registered wire format and its adapter, in the order they are asked: registration
    order, each subclass before its base."""
    from harness.registry import ADAPTERS

    return _ordered(ADAPTERS.version)


@functools.lru_cache(maxsize=1)
def _ordered(version: int) -> tuple[tuple[str, type[Adapter]], ...]:
    from harness.registry import ADAPTERS

    ordered: list[tuple[str, type[Adapter]]] = []
    for name, adapter in ADAPTERS.items():
        base = next((i for i, (_, known) in enumerate(ordered) if issubclass(adapter, known)), len(ordered))
        ordered.insert(base, (name, adapter))
    return tuple(ordered)


def format_from_url(url: str | None) -> str | None:
    """The wire format the first adapter claims for ``url``, or ``None``."""
    try:
        parts = urlsplit(url or "")
        host, path = parts.hostname or "", parts.path.rstrip("/")
    except ValueError:
        return None
    return next((name for name, adapter in adapters() if adapter.claims_url(host, path)), None)


def format_from_payload(data: Any) -> str | None:
    """The wire format the first adapter claims for one payload, or ``None``."""
    if not isinstance(data, dict):
        return None
    return next((name for name, adapter in adapters() if adapter.claims_payload(data)), None)


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


def _cohere_v1(data: dict[str, Any]) -> str | None:
    """Cohere's v1 chat stream (``/v1/chat``); its v2 chat is read (``cohere-chat``)."""
    if data.get("event_type") in COHERE_V1_EVENTS:
        return f"a Cohere v1 chat stream (event_type {data['event_type']!r})"
    return None


def _batches(data: dict[str, Any]) -> str | None:
    kind = data.get("type")
    if isinstance(kind, str) and kind.startswith("message_batch"):
        return f"an Anthropic Message Batches object (type {kind!r})"
    if "custom_id" in data and "result" in data:
        return "Anthropic Message Batches results (lines with custom_id and result)"
    if "custom_id" in data and "response" in data:
        return "OpenAI Batch output (lines with custom_id and response)"
    return None


def _openai_other(data: dict[str, Any]) -> str | None:
    obj = data.get("object")
    if isinstance(obj, str) and obj in ("text_completion", "batch", "list"):
        return f"an OpenAI object {obj!r}"
    return None


FOREIGN: tuple[Callable[[dict[str, Any]], str | None], ...] = (_cohere_v1, _batches, _openai_other)
"""Formats the harness knows of but does not read: each says what a payload is, or ``None``."""


def foreign(data: Any) -> str | None:
    """What a payload no adapter claims is, when it is a format the harness does not read."""
    if not isinstance(data, dict):
        return None
    return next((found for rule in FOREIGN if (found := rule(data))), None)


def payloads(body: str) -> list[Any]:
    """The JSON values of a body: the whole value, the items of an array, or the stream's events."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # not one JSON value (a stream), or nested past the stack
        return [event.data for event in decode_stream(body).events]
    return data if isinstance(data, list) else [data]


def _seen(found: list[Any]) -> str:
    """A short description of payloads no rule recognised, for the unknown-format finding."""
    if not found:
        return "no JSON payload"
    objects = [p for p in found if isinstance(p, dict)]
    types = sorted({str(p["type"])[:40] for p in objects if isinstance(p.get("type"), str)})
    if types:
        return f"payload types {types[:8]}"
    keys = sorted({str(k)[:40] for p in objects[:5] for k in p})
    if keys:
        return f"objects with keys {keys[:12]}"
    return f"JSON {sorted({type(p).__name__ for p in found})}"


def binary_body(data: bytes) -> tuple[str, str] | None:
    """The wire format whose binary framing ``data`` is in, and its content type (a body of bytes,
    not text: AWS's event stream), or ``None``."""
    for name, adapter in adapters():
        if content_type := adapter.claims_bytes(data):
            return name, content_type
    return None


def identify(url: str | None, body: str, data: bytes | None = None) -> tuple[str | None, str | None, str]:
    """The wire format, what told it (``url`` or ``body``), and what was seen.

    The URL comes first; else the first payload that a format claims, or that is a foreign
    one, decides (a foreign one gives no format: it must not be parsed as a lookalike).
    ``seen`` names what the body holds when no known format is told. ``data`` is the body's
    bytes when it is binary (``body`` then holds their base64): its framing tells the format.
    """
    if found := format_from_url(url):
        return found, "url", ""
    if data is not None:
        binary = binary_body(data)
        return (binary[0], "body", "") if binary else (None, None, f"{len(data)} bytes in no known framing")
    found_payloads = payloads(body)
    for payload in found_payloads:
        if fmt := format_from_payload(payload):
            return fmt, "body", ""
        if other := foreign(payload):
            return None, None, other
    return None, None, _seen(found_payloads)


def detect_format(url: str | None, body: str) -> tuple[str | None, str | None]:
    """The wire format and what told it: the ``url``, else the first telling ``body`` payload."""
    fmt, how, _ = identify(url, body)
    return fmt, how
