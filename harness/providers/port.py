"""A history recorded in one wire format, written as a request in another.

Histories cross wires (a fallback from one provider to another, a switch of API): the
conversation of a request in format A (messages, tool calls and their results, tools,
``tool_choice``) is read by A's adapter (:meth:`~harness.providers.adapter.Adapter.read_request`)
into neutral messages and built by B's (:meth:`~harness.providers.adapter.Adapter.build_request`).
What B's rules do not accept is rewritten, and each rewrite is a finding, never silent:

* ``port.tool_renamed``: a tool name B's family forbids (Bedrock's ``^[a-zA-Z0-9_-]{1,64}$``
  and a dotted Gemini name, say) is sanitised, and cut with a hash suffix when it is too long
  or lands on another tool's name; calls and results in the history follow it.
* ``port.id_rewritten``: a call id used by two calls of the history (formats that synthesize
  ids, such as Gemini's, can repeat one) is made unique, so each result keeps its call. B's
  own id rule (Anthropic's, Bedrock's, Mistral's nine characters) is applied by B's builder,
  which says so (``wire.id_rewritten``).
* ``port.extra_dropped``: what A keeps for replay (reasoning artefacts, thought signatures,
  raw content blocks, response ids) means nothing to B and is left out.

The findings of reading A and of building B (a ``tool_choice`` B cannot send...) come with
them. The adapters stay pure: this module does no I/O.

Example::

    ported = port_request(body, "/v1/chat/completions", "openai-chat", "bedrock-converse",
                          RequestOptions("anthropic.claude-3-haiku"))
    send(ported.request.path, ported.request.body)
    for finding in ported.findings:
        print(finding.check_id, finding.detail)
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.model import Finding, Message, ToolChoice, ToolSpec, WireRequest
from harness.providers.adapter import Adapter, RequestOptions
from harness.providers.rules import NameRules


@dataclass(frozen=True)
class Ported:
    """A history written in another wire format: the request, the neutral conversation it was
    built from (with B's names and unique ids), the tool names rewritten (A's -> B's) and every
    finding (reading A, each rewrite, building B)."""

    request: WireRequest
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]
    tool_choice: ToolChoice
    names: dict[str, str]
    findings: tuple[Finding, ...]


def port_request(
    body: dict[str, Any], path: str, source: str, target: str, options: RequestOptions
) -> Ported:
    """The request ``body`` (sent to ``path``) of wire format ``source`` written in format
    ``target``; see the module's docstring for what is rewritten and how it is reported."""
    from harness.providers import adapter_class

    view = adapter_class(source)().read_request(body, path)
    ported = port_history(view.messages, view.tools, view.tool_choice, target, options, source=source)
    return dataclasses.replace(ported, findings=(*view.findings, *ported.findings))


def port_history(
    messages: Sequence[Message],
    tools: Sequence[ToolSpec],
    tool_choice: ToolChoice | None,
    target: str,
    options: RequestOptions,
    *,
    source: str | None = None,
) -> Ported:
    """Neutral ``messages``, ``tools`` and ``tool_choice`` (as a format's adapter read them, from
    format ``source``) written as a request in format ``target``."""
    from harness.providers import adapter_class

    adapter: Adapter = adapter_class(target)()
    findings: list[Finding] = []
    names = tool_names(
        [t.name for t in tools] + [c.name for m in messages for c in m.tool_calls], adapter.name_rules
    )
    for old, new in names.items():
        findings.append(
            _note(
                "tool_renamed",
                f"tool name {old!r} breaks {adapter.name_rules.family}'s rule "
                f"{adapter.name_rules.pattern.pattern}: written as {new!r}",
            )
        )
    ported, new_ids, dropped = rewrite(messages, names, keep_extra=source == target)
    if new_ids:
        findings.append(_note("id_rewritten", f"call ids used by more than one call made unique: {new_ids}"))
    if dropped:
        findings.append(
            _note(
                "extra_dropped",
                f"what {source or 'the source format'} keeps for replay is left out in {target}: "
                f"{sorted(dropped)}",
            )
        )
    new_tools = tuple(dataclasses.replace(t, name=names.get(t.name, t.name)) for t in tools)
    choice = tool_choice or ToolChoice()
    if choice.mode == "named" and choice.name in names:
        choice = ToolChoice("named", names[choice.name])
    request = adapter.build_request(ported, new_tools, choice, options)
    findings += request.findings
    return Ported(request, tuple(ported), new_tools, choice, names, tuple(findings))


def tool_names(names: Sequence[str], rules: NameRules) -> dict[str, str]:
    """The names that ``rules`` forbid, each with the name to write instead: sanitised, and cut
    with a ``_<sha256 head>`` suffix when too long or when it lands on another name (a name
    that needs no change keeps it)."""
    unique = sorted(set(names))
    taken = {n for n in unique if rules.is_valid(n)}
    renamed: dict[str, str] = {}
    for name in unique:
        if name in taken:
            continue
        new = rules.sanitize(name)
        if len(new) > rules.max_len or new in taken or not rules.is_valid(new):
            suffix = "_" + hashlib.sha256(name.encode()).hexdigest()[:8]
            new = new[: rules.max_len - len(suffix)] + suffix
        taken.add(new)
        renamed[name] = new
    return renamed


def rewrite(
    messages: Sequence[Message], names: dict[str, str], keep_extra: bool
) -> tuple[list[Message], list[str], set[str]]:
    """The messages with B's tool names, each call id unique in the history (a call reusing an
    earlier call's id gets ``<id>_<n>``, and the results after it that name the id follow it),
    and A's replay artefacts dropped unless ``keep_extra``; with the new ids and the dropped
    ``extra`` keys."""
    taken = {c.id for m in messages for c in m.tool_calls if c.id}
    seen: Counter[str] = Counter()
    current: dict[str, str] = {}  # an id of A -> the id its latest call is written with
    new_ids: list[str] = []
    dropped: set[str] = set()
    out = []
    for message in messages:
        calls = []
        for call in message.tool_calls:
            original = call_id = call.id
            if original:
                seen[original] += 1
                if seen[original] > 1:
                    call_id = f"{original}_{seen[original]}"
                    while call_id in taken:
                        call_id += "_"
                    taken.add(call_id)
                    new_ids.append(call_id)
                current[original] = call_id or original
            if call.extra and not keep_extra:
                dropped.update(call.extra)
            calls.append(
                dataclasses.replace(
                    call,
                    name=names.get(call.name, call.name),
                    id=call_id,
                    extra=call.extra if keep_extra else {},
                )
            )
        result = message.tool_result
        if result is not None:
            result = dataclasses.replace(
                result,
                name=names.get(result.name, result.name),
                call_id=current.get(result.call_id or "", result.call_id),
            )
        if message.extra and not keep_extra:
            dropped.update(message.extra)
        extra = message.extra if keep_extra else {}
        out.append(dataclasses.replace(message, tool_calls=calls, tool_result=result, extra=extra))
    return out, new_ids, dropped


def _note(code: str, detail: str) -> Finding:
    return Finding(f"port.{code}", "info", False, detail)
