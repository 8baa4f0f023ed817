"""The reasoning each wire format's provider needs back with a turn's tool results, and how to
tell whether a message (parsed from a response, or read back from a request) carries it.

Used by the user's agent's conduct check (what the endpoint returned against what the agent sent
back) and by the simulator's ``reasoning-required`` deviation (a provider that refuses the turn).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness.model import Message


def _kept(key: str, kind: str) -> Callable[[Message], bool]:
    """A message whose replayed blocks (``extra[key]``) hold one of type ``kind``."""
    return lambda m: any(kind in str(b.get("type", "")) or kind in b for b in m.extra.get(key) or ())


@dataclass(frozen=True)
class Artefact:
    """A format's reasoning artefact: its name, whether a message carries it, and the source."""

    name: str
    carried: Callable[[Message], bool]
    sources: tuple[str, ...]


ARTEFACTS: dict[str, Artefact] = {
    "openai-chat": Artefact("reasoning_content", lambda m: bool(m.extra.get("reasoning_content")), ("X1",)),
    "anthropic-messages": Artefact(
        "thinking block with its signature", _kept("anthropic_content", "thinking"), ("A16",)
    ),
    "bedrock-converse": Artefact(
        "reasoningContent with its signature", _kept("bedrock_content", "reasoningContent"), ("B15",)
    ),
    "gemini-generate": Artefact(
        "thoughtSignature", lambda m: any("thoughtSignature" in c.extra for c in m.tool_calls), ("G19",)
    ),
    "gemini-interactions": Artefact(
        "thought step with its signature",
        lambda m: any(
            s.get("type") == "thought" and s.get("signature") for s in m.extra.get("interactions_steps") or ()
        ),
        ("G19", "GI1"),
    ),
    "openai-responses": Artefact("reasoning item", _kept("openai_output", "reasoning"), ("RS20",)),
    "cohere-chat": Artefact("tool_plan", lambda m: bool(m.extra.get("cohere_tool_plan")), ("CO8",)),
}
"""Format -> the reasoning its provider needs back on a turn with calls."""
