"""Helpers the adapters share to write a seeded history's variants: content given as a list of
parts, tool results given as parts, JSON or an image, and the note when a wire has no place for
one (sent anyway in the closest shape, so the run shows what the endpoint does: never dropped
silently). Private to :mod:`harness.providers`.
"""

from __future__ import annotations

from typing import Any

from harness.model import Finding, Part, ToolResult


def data_url(part: Part) -> str:
    """An image part as a ``data:`` URL (OpenAI's ``image_url``)."""
    return f"data:{part.media_type};base64,{part.data}"


def images(result: ToolResult) -> list[Part]:
    return [p for p in result.parts if p.kind == "image"]


def openai_parts(parts: list[Part]) -> list[dict[str, Any]]:
    """Parts in OpenAI's chat shape: ``{"type": "text"}`` and ``{"type": "image_url"}``."""
    return [
        {"type": "text", "text": p.text}
        if p.kind == "text"
        else {"type": "image_url", "image_url": {"url": data_url(p)}}
        for p in parts
    ]


def anthropic_parts(parts: list[Part]) -> list[dict[str, Any]]:
    """Parts as Anthropic content blocks (``text``, ``image`` with a base64 source)."""
    return [
        {"type": "text", "text": p.text}
        if p.kind == "text"
        else {"type": "image", "source": {"type": "base64", "media_type": p.media_type, "data": p.data}}
        for p in parts
    ]


def unsupported(fmt: str, what: str, how: str) -> Finding:
    """An info note: the wire has no place for a history variant; ``how`` says what was sent."""
    return Finding(
        "wire.history_variant_unsupported",
        "info",
        False,
        f"{fmt} has no place for {what} in a request; {how}",
    )
