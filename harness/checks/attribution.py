"""Who caused it: turns the endpoint cut short, text a server's chat template leaked, answers that
only echo the prompt, and what the model never got the chance to do.

A conformance harness exists to get attribution right. A turn that ended at the
token limit is not an answer; ``<|im_end|>`` in the text is the server's template
showing through, not the model's words; a "final answer" that repeats the user's
message answered nothing; and after the provider failed a turn, the checks about
what the model would have done next are *not reached*: shown, never scored.
"""

from __future__ import annotations

import re

from harness.checks import RunContext, check, passed
from harness.model import Finding, ParsedTurn, Transcript
from harness.providers import truncation_reasons

CONTROL_TOKENS: tuple[tuple[str, str], ...] = (
    ("<|im_start|>", "ChatML"),
    ("<|im_end|>", "ChatML"),
    ("<|begin_of_text|>", "Llama 3"),
    ("<|start_header_id|>", "Llama 3"),
    ("<|end_header_id|>", "Llama 3"),
    ("<|eot_id|>", "Llama 3"),
    ("<|eom_id|>", "Llama 3"),
    ("<start_of_turn>", "Gemma"),
    ("<end_of_turn>", "Gemma"),
    ("[INST]", "Mistral"),
    ("[/INST]", "Mistral"),
    ("</s>", "Llama 2 / Mistral"),
    ("<|endoftext|>", "GPT-2 / Qwen / Phi"),
    ("<|end|>", "Phi-3"),
    ("<|assistant|>", "Phi-3 / Zephyr"),
    ("<|user|>", "Phi-3 / Zephyr"),
    ("<|system|>", "Phi-3 / Zephyr"),
    ("<\uff5cend\u2581of\u2581sentence\uff5c>", "DeepSeek"),  # full-width bars, as DeepSeek writes them
)
"""Chat-template control tokens that must never reach a client's text, with the template family
that defines them (each model's tokenizer_config.json chat_template [T1])."""

NOT_REACHED = "not_reached"


def not_reached(detail: str) -> Finding:
    """A finding for a check the run never reached (the endpoint failed first): shown, not scored."""
    return Finding("", "info", False, f"not reached: {detail}", evidence={NOT_REACHED: True})


def endpoint_failure(transcript: Transcript) -> tuple[int, str] | None:
    """The turn at which the endpoint failed the run, and how, when it did (an HTTP error, an error
    inside a 200, an empty or broken stream, no response)."""
    if transcript.stop_reason not in ("provider_error", "transport_error") or not transcript.exchanges:
        return None
    last = transcript.exchanges[-1]
    error = last.parsed.error
    if error is None:
        return None
    status = f"HTTP {error.status}" if error.status else "no response"
    if transcript.agent and error.refused_request:
        return (
            last.turn,
            f"the endpoint refused the agent's request of turn {last.turn} "
            f"({status}: {error.message or 'no message'})",
        )
    return (
        last.turn,
        f"the endpoint failed turn {last.turn} ({status}: {error.message or error.code or 'no message'})",
    )


def tools_withheld(context: RunContext) -> str | None:
    """Why the offered tools never reached the model, when the run shows they did not: the
    server's own capability report or a prompt-token probe, kept with the run (see
    :mod:`harness.servers.probe`), or a forced ``tool_choice`` the profile says the endpoint honours,
    answered with HTTP 200 and no call. A native call proves delivery. Native mode only (in
    prompted mode the harness writes the tools into the prompt itself). Not asked of a scenario
    whose request must be refused (``expect.refused``)."""
    if "withheld" in context.cache:
        withheld: str | None = context.cache["withheld"]
        return withheld
    t = context.transcript
    withheld = None
    refusal = context.scenario.expect.refused is not None  # its request is meant to be refused
    if context.protocol is None and t.tools and t.exchanges and not t.calls and not refusal:
        facts = t.endpoint
        choice = context.scenario.tool_choice
        first = t.exchanges[0].parsed
        if facts.get("tools_delivered") is False:
            server = " ".join(str(facts[k]) for k in ("server", "version") if facts.get(k)) or "the endpoint"
            evidence = facts.get("evidence", "no evidence kept")
            withheld = f"{server} never showed the model the tools ({evidence})"
        elif choice.mode in ("required", "named") and context.native_tool_choice and first.error is None:
            withheld = (
                f"tool_choice {choice.label()!r} was answered with HTTP 200 and no call in turn 0: "
                "the endpoint did not put the tools in front of the model"
            )
    context.cache["withheld"] = withheld
    return withheld


@check(kind="protocol", weight=3.0)
def tools_delivered(context: RunContext) -> list[Finding]:
    """The endpoint put the offered tools in front of the model. A server whose chat template
    cannot render tools accepts them with HTTP 200 and drops them; the model is then not charged
    with not calling (its checks are *not reached*) and the run scores 0: nothing about tool
    calling was tested, and the target as served cannot call tools."""
    from harness.checks import with_quirk

    withheld = tools_withheld(context)
    facts = context.transcript.endpoint
    if withheld:
        kept = {k: v for k, v in facts.items() if k != "evidence"} or None
        finding = Finding("protocol.tools_delivered", "error", False, withheld, 0, kept)
        return [with_quirk(context, finding)]
    if facts.get("tools_delivered") and context.protocol is None and context.transcript.tools:
        return [passed("", f"the endpoint delivers tools ({facts.get('evidence')})")]
    return []


def is_truncated(turn: ParsedTurn, limit: int | None = None) -> bool:
    """The turn ended at the token limit: a finish reason some wire format's adapter says so of
    (``Adapter.truncation_reasons``), or an output as long as the ``limit`` the request sent,
    whatever its finish reason says (llama-server's ``/v1/responses`` answers ``status:
    completed`` with ``output_tokens`` equal to the limit)."""
    if turn.finish_reason in truncation_reasons():
        return True
    produced = turn.usage.output_tokens if turn.usage is not None else None
    return limit is not None and produced is not None and produced >= limit


@check(kind="protocol", weight=2.0)
def truncation(context: RunContext) -> list[Finding]:
    """No turn was cut at the token limit (``finish_reason: length``, Anthropic ``max_tokens``,
    Gemini ``MAX_TOKENS``, or as many output tokens as the request allowed whatever the finish
    reason says). A truncated turn is never a final answer, and a truncated call may not parse:
    raise the target's ``max_tokens`` or look at what the server does with it."""
    exchanges = [
        e for e in context.transcript.exchanges if e.parsed.error is None
    ]  # a failed turn ended early anyway
    if not exchanges:
        return []
    cut = [
        Finding("", "error", False, _cut(e.turn, e.parsed, context.max_tokens), e.turn)
        for e in exchanges
        if is_truncated(e.parsed, context.max_tokens)
    ]
    return cut or [passed("", f"{len(exchanges)} turn(s) ended on their own")]


def _cut(turn: int, parsed: ParsedTurn, limit: int | None) -> str:
    reason = parsed.finish_reason
    if is_truncated(parsed):
        return f"turn {turn} was cut at the token limit (finish_reason {reason!r})"
    return (
        f"turn {turn} was cut at the token limit: it used all {limit} output tokens the request "
        f"allowed, yet its finish_reason {reason!r} says it ended on its own (the endpoint did not "
        "report the cut)"
    )


@check(kind="protocol")
def template_leak(context: RunContext) -> list[Finding]:
    """No chat-template control token (``<|im_end|>``, ``<|eot_id|>``, ``<end_of_turn>``,
    ``[INST]``, ``</s>``...) in the text: the server's template showing through, which a client
    would show its users and which breaks text protocols."""
    exchanges = context.transcript.exchanges
    texts = [(e.turn, e.parsed.text) for e in exchanges if e.parsed.text]
    if not texts:
        return []
    found = []
    for turn, text in texts:
        tokens = sorted({(token, family) for token, family in CONTROL_TOKENS if token in (text or "")})
        if tokens:
            shown = ", ".join(f"{token} ({family})" for token, family in tokens)
            found.append(
                Finding("", "error", False, f"turn {turn} text holds chat-template tokens: {shown}", turn)
            )
    return found or [passed("", "no chat-template token in the text")]


_SPACE = re.compile(r"\s+")


def _plain(text: str) -> str:
    for token, _ in CONTROL_TOKENS:
        text = text.replace(token, " ")
    return _SPACE.sub(" ", text).strip().lower()


def echo_of_prompt(text: str, prompts: list[str], *, rest: float = 0.2) -> str | None:
    """The prompt message ``text`` only repeats, if it does: once every prompt message it contains
    is taken out, less than ``rest`` of it (and under 40 characters) remains; or ``text`` is itself
    a piece of one prompt message, at least half of it (a model that restates the question:
    "What does reverse-charge VAT mean on an invoice?" from "In general terms, what does ...")."""
    plain = _plain(text)
    if not plain:
        return None
    cleaned = [_plain(p) for p in prompts if p and p.strip()]
    for prompt in cleaned:
        if len(plain) >= 12 and plain in prompt and 2 * len(plain) >= len(prompt):
            return prompt
    remaining = plain
    echoed = None
    for prompt in sorted(cleaned, key=len, reverse=True):
        if len(prompt) >= 12 and prompt in remaining:
            remaining = remaining.replace(prompt, " ")
            echoed = echoed or prompt
    leftover = _SPACE.sub(" ", remaining).strip()
    if echoed and len(leftover) < max(40.0, rest * len(plain)) and len(leftover) < 40:
        return echoed
    return None
    remaining = plain
    echoed = None
    for prompt in sorted((_plain(p) for p in prompts if p and p.strip()), key=len, reverse=True):
        if len(prompt) >= 12 and prompt in remaining:
            remaining = remaining.replace(prompt, " ")
            echoed = echoed or prompt
    leftover = _SPACE.sub(" ", remaining).strip()
    if echoed and len(leftover) < max(40.0, rest * len(plain)) and len(leftover) < 40:
        return echoed
    return None
