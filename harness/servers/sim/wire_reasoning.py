"""``reasoning-required``: a thinking model that needs its reasoning back with the tool results.

Under this deviation the scripted model reasons before its calls, in each format's own artefact
(DeepSeek's and Kimi's ``reasoning_content`` on Chat Completions, Anthropic ``thinking`` blocks
and Bedrock ``reasoningContent`` with a signature; the Gemini, Gemini Interactions, Responses and
Cohere wires write theirs in every profile), and a request whose history drops a turn's
reasoning is answered as that provider answers it: refused with its status and words, each
cited; Cohere, which documents the pass-back but no refusal [CO8], answers worse instead (its
final answer says what it lost, which fails the scenario's ``final``).

Only the model's own turns of the current phase (after the last user message, past the turns
the scenario seeded) are checked, as the providers check the turn in progress; a request that
continues a conversation the server stored (``previous_response_id``) resends none.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.model import Message
from harness.providers.adapter import RequestView
from harness.providers.reasoning import ARTEFACTS
from harness.servers.sim.wire_strict import Refusal

DEVIATION = "reasoning-required"
REASONING = "Which tool answers this, and with which arguments?"
"""The scripted model's reasoning before its calls."""
LOST = "I lost my plan for these tool results, so I cannot say what they mean."
"""The final answer of a model whose plan did not come back (the degraded answer)."""


@dataclass(frozen=True)
class Rule:
    """What a format needs back on a turn with calls, and how its provider answers when it is not:
    ``status`` 0 means the request is answered, worse (no refusal is documented)."""

    status: int
    message: str
    sources: tuple[str, ...]
    last_only: bool = False
    """Only the last assistant message is checked (Claude: "a final assistant message must start
    with a thinking block")."""


_GEMINI = (
    "Function call is missing a thought_signature in functionCall parts. This is required for tools "
    "to work correctly, and missing thought_signature may lead to degraded model performance. "
    "Additional data, function call `default_api:{name}` , position {position}. Please refer to "
    "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)
RULES: dict[str, Rule] = {
    "openai-chat": Rule(
        400,
        "The reasoning_content in the thinking mode must be passed back to the API.",
        ("X1", "X2"),
    ),
    "anthropic-messages": Rule(
        400,
        "{where}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When "
        "`thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding "
        "the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking "
        "blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our "
        "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
        ("A16", "A18"),
        last_only=True,
    ),
    "bedrock-converse": Rule(
        400,
        "The model returned the following errors: {where}.content.0.type: Expected `thinking` or "
        "`redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` "
        "message must start with a thinking block (preceeding the lastmost set of `tool_use` and "
        "`tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid "
        "this requirement, disable `thinking`.",
        ("B15", "B17"),
        last_only=True,
    ),
    "gemini-generate": Rule(
        400,
        _GEMINI,
        ("G19", "G21"),
    ),
    "gemini-interactions": Rule(
        400,
        _GEMINI,
        ("G19", "G21"),
    ),
    "openai-responses": Rule(
        400,
        "Item '{item}' of type 'function_call' was provided without its required 'reasoning' item.",
        ("RS20",),
    ),
    "cohere-chat": Rule(0, LOST, ("CO8",)),
}
"""Format -> the reasoning its provider needs back and its answer when it is dropped."""


@dataclass(frozen=True)
class Dropped:
    """A model turn sent back without its reasoning: the rule, the message's index, the turn."""

    rule: Rule
    index: int
    message: Message


def dropped(fmt_name: str, view: RequestView, seeded: int) -> Dropped | None:
    """The first of the model's own turns with calls in the current phase that came back without
    its reasoning (``seeded``: the assistant turns the scenario wrote, never checked)."""
    rule = RULES.get(fmt_name)
    if rule is None:
        return None
    messages = list(view.messages)
    start = max((i for i, m in enumerate(messages) if m.role == "user" and m.content), default=-1)
    turns = [(i, m) for i, m in enumerate(messages) if m.role == "assistant"]
    own = [(i, m) for n, (i, m) in enumerate(turns) if n >= seeded and i > start and m.tool_calls]
    if rule.last_only:
        own = own[-1:] if turns and own and own[-1][0] == turns[-1][0] else []
    carried = ARTEFACTS[fmt_name].carried
    return next((Dropped(rule, i, m) for i, m in own if not carried(m)), None)


def refusal(fmt_name: str, found: Dropped) -> Refusal:
    """The provider's refusal of a request that dropped ``found``'s reasoning."""
    rule = found.rule
    call = found.message.tool_calls[0]
    message = rule.message.format(
        where=f"messages.{found.index}",
        name=call.name,
        position=found.index + 1,
        item=call.extra.get("item_id") or call.wire_id or call.id,
    )
    return Refusal(f"reasoning.{fmt_name}", rule.status, message, rule.sources)
