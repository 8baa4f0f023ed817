"""Histories moved between providers: whose ids, names and reasoning a seeded history carries, and
the portability rules a request breaks on the wire format it is sent to, each rule cited.

A history made on one provider and continued on another (a fallback, a switch, a resumed session)
carries the first one's call ids (Kimi and DeepSeek write ``functions.Bash:0``), tool names, and
reasoning artefacts (Anthropic thinking blocks with signatures, Gemini thought signatures, OpenAI
reasoning items, ``reasoning_content``, Bedrock ``reasoningContent``). The next provider refuses
ids and names outside its own patterns, and reasoning belongs to the wire that made it: kept when
the history goes back to the same wire (the provider requires it with tool calls), dropped when it
goes elsewhere (another provider cannot verify it and may refuse it).

:func:`seed_reasoning` puts a seeded turn's reasoning where its origin's adapter replays it (the
other adapters never read those keys, so they drop it); :func:`broken_rules` reads a request as it
went on the wire and names each rule it breaks.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.model import Finding, Message, canonical
from harness.providers import _bedrock_request, anthropic, mistral
from harness.providers.adapter import RequestView
from harness.providers.rules import rules_for
from harness.providers.sources import cite

ORIGIN_FORMAT = {
    "kimi": "openai-chat",
    "deepseek": "openai-chat",
    "openai": "openai-responses",
    "anthropic": "anthropic-messages",
    "gemini": "gemini-generate",
    "bedrock": "bedrock-converse",
}
"""The wire format each history origin speaks: its reasoning is kept only on that format."""

REASONING_SOURCE = {
    "kimi": "X1",
    "deepseek": "X1",
    "openai": "RS20",
    "anthropic": "A16",
    "gemini": "G19",
    "bedrock": "B15",
}
"""Where each origin documents that its reasoning goes back with tool calls, and whose it is."""

SEEDED = "seeded_reasoning"
"""The :attr:`Message.extra` key that remembers a seeded turn's reasoning (origin, text,
signature): what :func:`broken_rules` looks for on the wire. No adapter sends it."""


@dataclass(frozen=True)
class IdRule:
    """A format's rule for call ids in a request's history, and its evidence."""

    pattern: re.Pattern[str]
    source: str


ID_RULES = {
    "anthropic-messages": IdRule(anthropic.ID_RULE, "A15"),
    "bedrock-converse": IdRule(_bedrock_request.ID_RULE, "B1"),
    "mistral-chat": IdRule(mistral.ID_RULE, "M8"),
}
"""Call id rules by wire format, the adapters' own (formats not listed take any id)."""

NAME_SOURCES = {"bedrock": "B6", "anthropic": "A1", "gemini": "G2", "openai": "O3", "cohere": "CO1"}
"""Where each family's tool name rule is documented or was recorded."""


def seed_reasoning(origin: str, message: Message, text: str, signature: str | None) -> None:
    """Keep a seeded assistant turn's reasoning where the origin's own adapter replays it."""
    message.extra[SEEDED] = {"origin": origin, "text": text, "signature": signature}
    calls = message.tool_calls
    if origin in ("kimi", "deepseek"):
        message.extra["reasoning_content"] = text
    elif origin == "anthropic":
        thinking = {"type": "thinking", "thinking": text, "signature": signature or ""}
        blocks: list[dict[str, Any]] = [thinking]
        if message.content:
            blocks.append({"type": "text", "text": message.content})
        blocks += [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments or {}} for c in calls
        ]
        message.extra["anthropic_content"] = blocks
    elif origin == "gemini" and calls:
        calls[0].extra["thoughtSignature"] = signature or ""  # on the turn's first call
    elif origin == "openai":
        item_id = "rs_" + hashlib.sha256(text.encode()).hexdigest()[:24]
        reasoning: dict[str, Any] = {
            "type": "reasoning",
            "id": item_id,
            "summary": [{"type": "summary_text", "text": text}],
        }
        if signature:
            reasoning["encrypted_content"] = signature
        items: list[dict[str, Any]] = [reasoning]
        if message.content:
            items.append({"role": "assistant", "content": message.content})
        items += [
            {
                "type": "function_call",
                "call_id": c.id,
                "name": c.name,
                "arguments": canonical(c.arguments or {}),
            }
            for c in calls
        ]
        message.extra["openai_output"] = items
    elif origin == "bedrock":
        text_block = {"reasoningText": {"text": text, **({"signature": signature} if signature else {})}}
        content: list[dict[str, Any]] = [{"reasoningContent": text_block}]
        if message.content:
            content.append({"text": message.content})
        content += [
            {"toolUse": {"toolUseId": c.id, "name": c.name, "input": c.arguments or {}}} for c in calls
        ]
        message.extra["bedrock_content"] = content


def _rule(rule: str, detail: str, source: str, **evidence: Any) -> Finding:
    return Finding(
        "",
        "error",
        False,
        f"{detail} [{source}]",
        evidence={"rule": rule, "source": cite(source), **evidence},
    )


def broken_rules(
    fmt: str, view: RequestView, body: Any, seeded: Sequence[Message], origin: str
) -> list[Finding]:
    """The portability rules a request (read back as ``view``, its body as sent) breaks on the
    wire format ``fmt``, for a history made by ``origin``: call ids outside ``fmt``'s id rule,
    tool names in the history outside its name rule, the origin's reasoning sent to another
    wire (kept where it must be dropped) or left out when the history goes back to the origin's
    own wire (dropped where it must be kept)."""
    findings: list[Finding] = []
    id_rule = ID_RULES.get(fmt)
    names = rules_for(fmt)
    ids: list[str] = []
    called: list[str] = []
    for message in view.messages:
        ids += [c.wire_id for c in message.tool_calls if c.wire_id]
        called += [c.name for c in message.tool_calls]
        if message.tool_result is not None and message.tool_result.call_id:
            ids.append(message.tool_result.call_id)
    if id_rule is not None:
        for bad in sorted({i for i in ids if not id_rule.pattern.match(i)}):
            findings.append(
                _rule(
                    "id_pattern",
                    f"call id {bad!r} in the history breaks {fmt}'s id rule {id_rule.pattern.pattern}",
                    id_rule.source,
                    id=bad,
                )
            )
    for bad in sorted({n for n in called if not names.is_valid(n)}):
        findings.append(
            _rule(
                "name_pattern",
                f"tool name {bad!r} in the history breaks {fmt}'s name rule {names.pattern.pattern}",
                NAME_SOURCES.get(names.family, "O3"),
                name=bad,
            )
        )
    text = canonical(body)
    own = ORIGIN_FORMAT.get(origin) == fmt
    for message in seeded:
        kept = message.extra.get(SEEDED)
        if not isinstance(kept, dict):
            continue
        marker = kept.get("signature") or kept.get("text") or ""
        sent = bool(marker) and marker in text
        source = REASONING_SOURCE.get(origin, "X1")
        if own and not sent:
            findings.append(
                _rule(
                    "reasoning_dropped",
                    f"{origin}'s reasoning of a tool-call turn was dropped where it must be kept: the "
                    f"history goes back to {fmt}, which requires it with the calls",
                    source,
                )
            )
        elif not own and sent:
            findings.append(
                _rule(
                    "reasoning_kept",
                    f"{origin}'s reasoning was kept where it must be dropped: {fmt} is not the wire that "
                    "made it and cannot verify it",
                    source,
                )
            )
    return findings
