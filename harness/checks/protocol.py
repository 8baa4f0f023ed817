"""Protocol checks: does every model turn follow the tool-calling protocol?

They look at the wire (what the adapter noticed), at each call's arguments
(valid JSON, valid against the tool's schema), names and ids, at whether the
``tool_choice`` was honoured, and at calls leaked into text.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable

from harness.checks import RunContext, check, passed, with_quirk
from harness.model import Finding, Severity
from harness.validation import argument_errors

SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}


@check(kind="protocol")
def wire_format(context: RunContext) -> list[Finding]:
    """Every deviation from the provider's wire format that the adapter noticed while
    building requests and parsing responses (ids, argument encoding, finish reasons,
    stream framing, endpoint quirks). A user's client library may break on any of them.
    A deviation seen in several turns is reported once, with the turns listed."""
    t = context.transcript
    if not t.exchanges:
        return []
    noticed = [f for f in t.findings if f.check_id.startswith(("wire.", "transport."))]
    noticed += [f for turn in t.turns for f in turn.findings]
    merged: dict[tuple[str, str], Finding] = {}
    turns: dict[tuple[str, str], list[int]] = {}
    for finding in (f for f in noticed if not f.passed):
        key = (finding.check_id, finding.detail)
        merged.setdefault(key, finding)
        if finding.turn_index is not None and finding.turn_index not in turns.setdefault(key, []):
            turns[key].append(finding.turn_index)
    deviations = []
    for key, finding in merged.items():
        seen = turns.get(key, [])
        if len(seen) > 1:
            finding = dataclasses.replace(
                finding, detail=f"{finding.detail} (turns {', '.join(map(str, seen))})"
            )
        deviations.append(with_quirk(context, finding))
    if not any(f.severity != "info" for f in deviations):
        deviations.insert(
            0, passed("protocol.wire", f"{len(t.exchanges)} exchange(s) follow the wire format")
        )
    return sorted(deviations, key=lambda f: (SEVERITY_RANK[f.severity], f.turn_index or 0))


@check(kind="protocol")
def arguments_json(context: RunContext) -> list[Finding]:
    """Each call's arguments parse as a JSON object. Invalid JSON cannot be executed: the
    agent must fail or guess."""
    calls = context.transcript.calls
    if not calls:
        return []
    bad = [
        Finding(
            "", "error", False, f"call {c.name!r}: {c.parse_error}", turn, {"raw_arguments": c.raw_arguments}
        )
        for turn, c in calls
        if c.parse_error
    ]
    return bad or [passed("", f"{len(calls)} call(s) have JSON object arguments")]


OBJECT = '{"type": "object"}'
"""The schema of a tool that declares no parameters."""


@check(kind="protocol")
def arguments_schema(context: RunContext) -> list[Finding]:
    """Each call's arguments are valid against the tool's JSON Schema (every error listed):
    missing required fields, wrong types, values outside an enum, unexpected keys."""
    specs = {spec.name: spec for spec in context.transcript.tools}
    findings: list[Finding] = []
    checked = 0
    for turn, call in context.transcript.calls:
        spec = specs.get(call.name)
        if spec is None or call.arguments is None:
            continue
        checked += 1
        schema = spec.schema_text if spec.parameters else OBJECT
        errors = argument_errors(schema, call.arguments)  # formats ("date"...) too
        if errors:
            messages = [f"{_pointer(e.absolute_path)}: {e.message}" for e in errors]
            findings.append(
                Finding(
                    "",
                    "error",
                    False,
                    f"call {call.name!r} arguments break its schema: " + "; ".join(messages),
                    turn,
                    {"arguments": call.arguments, "errors": messages},
                )
            )
    if not checked:
        return []
    return findings or [passed("", f"{checked} call(s) match their tool's schema")]


def _pointer(path: Iterable[object]) -> str:
    """A JSON pointer into the arguments (``/lines/0/quantity``; ``/`` for the whole object)."""
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path)


@check(kind="protocol")
def known_tool(context: RunContext) -> list[Finding]:
    """Every called tool was offered. A hallucinated tool name cannot be executed."""
    offered = {spec.name for spec in context.transcript.tools}
    calls = context.transcript.calls
    if not calls:
        return []
    bad = [
        Finding("", "error", False, f"call to unknown tool {c.name!r}; offered: {sorted(offered)}", turn)
        for turn, c in calls
        if c.name not in offered
    ]
    return bad or [passed("", "every called tool was offered")]


@check(kind="protocol")
def call_ids(context: RunContext) -> list[Finding]:
    """Call ids the provider sent are unique across the conversation, so each tool result
    links to exactly one call."""
    ids = [c.wire_id for _, c in context.transcript.calls if c.wire_id]
    if not ids:
        return []
    duplicates = sorted(i for i, n in Counter(ids).items() if n > 1)
    if duplicates:
        return [Finding("", "error", False, f"call ids reused within the conversation: {duplicates}")]
    return [passed("", f"{len(ids)} call id(s), all unique")]


@check(kind="protocol")
def tool_choice_honoured(context: RunContext) -> list[Finding]:
    """The first turn honours ``tool_choice``: ``required`` makes a call, ``none`` makes none,
    a named choice calls that tool and only it. Not asked of a request the scenario expects the
    endpoint to refuse (``expect.refused``): its tool_choice may be the malformed part."""
    choice = context.scenario.tool_choice
    t = context.transcript
    if choice.mode == "auto" or not t.exchanges or t.exchanges[0].parsed.error is not None:
        return []
    if context.scenario.expect.refused is not None:
        return []
    calls = t.exchanges[0].parsed.tool_calls
    names = [c.name for c in calls]
    severity: Severity = "error" if context.native_tool_choice else "warning"
    if choice.mode == "required" and not calls:
        problem = "tool_choice 'required' but the first turn made no call"
    elif choice.mode == "none" and calls:
        problem = f"tool_choice 'none' but the first turn called {names}"
    elif choice.mode == "named" and (not calls or any(n != choice.name for n in names)):
        problem = f"tool_choice named {choice.name!r} but the first turn called {names or 'nothing'}"
    else:
        return [passed("", f"tool_choice {choice.label()!r} honoured")]
    return [Finding("", severity, False, problem, 0)]


@check(kind="protocol")
def native_delivery(context: RunContext) -> list[Finding]:
    """In native mode a tool call must arrive in the tool-call fields, not written into the
    text (``<tool_call>``, ``[TOOL_CALLS]``, ``<|python_tag|>``, bare JSON...): an agent
    reading only the native fields would miss it. A call the provider rejected and echoed
    back (Groq's ``failed_generation``) counts too."""
    if context.protocol is not None or not context.transcript.exchanges:
        return []
    from harness.providers.text_protocols import detect_leaks

    names = [spec.name for spec in context.transcript.tools]
    findings: list[Finding] = []
    for exchange in context.transcript.exchanges:
        error = exchange.parsed.error
        generated = error.detail.get("failed_generation") if error else None
        for leak in detect_leaks(generated if isinstance(generated, str) else None, tool_names=names):
            findings.append(
                Finding(
                    "",
                    "error",
                    False,
                    f"the provider rejected a tool call the model wrote as text "
                    f"({leak.marker}, in failed_generation): {leak.snippet!r}",
                    exchange.turn,
                )
            )
        for leak in detect_leaks(exchange.parsed.text, tool_names=names):
            findings.append(
                Finding(
                    "",
                    "error",
                    False,
                    f"a tool call leaked into the text ({leak.marker}): {leak.snippet!r}",
                    exchange.turn,
                    {"text": exchange.parsed.text},
                )
            )
    return findings or [passed("", "no tool call written into text")]


@check(kind="protocol", weight=2.0)
def provider_error(context: RunContext) -> list[Finding]:
    """The provider answered every request without an error. An error status, an error
    inside a 200 body or stream, an empty stream, or no response at all is a finding; its
    turn points at the request and response that show it. An error that says the model or
    server lacks tool support (Ollama, vLLM, OpenRouter, llama.cpp wordings) says so too. A 4xx
    to a request the scenario expects refused (``expect.refused``) is the answer wanted. A
    user's agent whose request the endpoint refused (a 4xx) is the agent's fault: noted here,
    failed by ``protocol.agent_conduct``."""
    from harness.providers.profiles import capability_error

    t = context.transcript
    if not t.exchanges:
        return []
    findings = []
    refusal = context.scenario.expect.refused is not None
    for exchange in t.exchanges:
        error = exchange.parsed.error
        status = exchange.response.status if exchange.response is not None else 0
        if error is not None and refusal and exchange.turn == 0 and 400 <= status < 500:
            findings.append(
                passed("", f"HTTP {status}: the refusal the scenario expects (see expect.refused)")
            )
        elif error is not None and t.agent and error.refused_request:
            findings.append(
                Finding(
                    "",
                    "info",
                    False,
                    f"HTTP {error.status}: the endpoint refused the agent's request; the agent's fault "
                    "(protocol.agent_conduct names the rule), not the endpoint's",
                    exchange.turn,
                )
            )
        elif error is not None:
            lacking = capability_error(error)
            if lacking is not None:
                findings.append(lacking.at(exchange.turn))
            code = f" {error.code}" if error.code else ""
            findings.append(
                Finding(
                    "",
                    "error",
                    False,
                    f"HTTP {error.status}{code}: {error.message or '(empty error message)'}",
                    exchange.turn,
                    {"error_detail": error.detail} if error.detail else None,
                )
            )
    return findings or [passed("", f"{len(t.exchanges)} request(s) answered without error")]


@check(kind="protocol", weight=2.0)
def mcp_servers(context: RunContext) -> list[Finding]:
    """The scenario's MCP servers started, answered and stopped cleanly. A server that
    would not start, crashed, timed out, broke the protocol or left a process behind is
    a finding with its stderr; the run itself goes on. Not for hosted MCP: the provider ran them."""
    if not context.scenario.mcp_servers or context.hosted:
        return []
    found = [f for f in context.transcript.findings if f.check_id.startswith("mcp.")]
    issues = [f for f in found if f.severity != "info"]
    servers = ", ".join(s.name for s in context.scenario.mcp_servers)
    return issues or [passed("", f"MCP server(s) {servers} ran without issue"), *found]


@check(kind="protocol", weight=2.0)
def agent_conduct(context: RunContext) -> list[Finding]:
    """For a user's agent under test: what it did agrees with the wire. Every call the model made
    was executed by the agent's tools, every result was sent back to the model unchanged in the
    next request, and the agent ran no tool nobody called. A dropped tool result breaks most
    providers' next request; a changed one misleads the model."""
    t = context.transcript
    if not t.agent:
        return []
    found = [f for f in t.findings if f.check_id.startswith("agent.")]
    done = f"the agent ran the {len(t.calls)} call(s) on the wire and sent each result back"
    return found if any(not f.passed for f in found) else [passed("", done), *found]


@check(kind="protocol", weight=2.0)
def history_portability(context: RunContext) -> list[Finding]:
    """A history made on another provider (the scenario's ``history_from``) is sent as the target's
    wire accepts it: call ids and tool names within its patterns (``functions.Bash:0`` is refused
    by Anthropic), the origin's reasoning dropped on another wire and kept on its own (a thinking
    block, a thought signature, a reasoning item or ``reasoning_content``). Each broken rule is
    named with its source. The harness's own loop rewrites ids and names and drops or keeps the
    reasoning; a user's agent must do the same."""
    from harness.providers import adapter_class
    from harness.providers.portability import broken_rules

    origin = context.scenario.data.get("history_from")
    t = context.transcript
    if not origin or context.profile is None or context.protocol is not None or not t.exchanges:
        return []
    adapter = adapter_class(context.profile.format)(context.profile)
    found: dict[str, Finding] = {}
    for exchange in t.exchanges:
        body = exchange.request.body
        view = adapter.read_request(body if isinstance(body, dict) else {}, exchange.request.url)
        for finding in broken_rules(context.profile.format, view, body, context.scenario.messages, origin):
            found.setdefault(finding.detail, finding.at(exchange.turn))
    if found:
        return list(found.values())
    return [passed("", f"the {origin} history kept {context.profile.format}'s id, name and reasoning rules")]
