"""Expectation checks: did the run do what the scenario's ``expect`` block asks?

Expected calls are matched to actual calls as a maximum bipartite matching
(each actual call serves at most one expected call), so order is judged
separately from presence. A mismatch shows the closest actual call, the
matcher's reasons and a deepdiff of expected and actual arguments.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from typing import Any

from harness.checks import RunContext, check, passed
from harness.checks.attribution import echo_of_prompt, endpoint_failure, is_truncated, not_reached
from harness.matchers import args_match
from harness.model import Finding, HostedCall, ToolCall
from harness.scenarios import ExpectedCall
from harness.tools.naming import raw_name

Actual = tuple[int, ToolCall]


def _fits(expected: ExpectedCall, call: ToolCall) -> bool:
    return call.name == expected.name and not args_match(
        expected.args, call.arguments, exact=expected.args_exact
    )


def _logical(context: RunContext) -> list[Actual]:
    """The run's calls under the names the scenario uses (MCP tools may be offered renamed), and the
    calls the provider's MCP connector ran (hosted MCP), in turn order."""
    t = context.transcript
    calls = [(turn, dataclasses.replace(call, name=t.logical(call.name))) for turn, call in t.calls]
    hosted = [(turn, _hosted(call, context.scenario.mcp_naming)) for turn, call in t.hosted_calls]
    # in one turn the connector's calls come first: the provider ran them before it answered
    return sorted(hosted + calls, key=lambda actual: actual[0]) if hosted else calls


def _hosted(call: HostedCall, naming: str) -> ToolCall:
    """A call the provider's MCP connector ran, as a call under the scenario's name for its tool
    (``mcp__<server>__<tool>``, or ``<server>.<tool>`` when its ``mcp_naming`` is ``dotted``)."""
    return ToolCall(
        raw_name(naming, call.server, call.name), call.arguments, call.raw_arguments, call.id, call.id
    )


def in_order(expected: tuple[ExpectedCall, ...], actual: list[Actual]) -> dict[int, int]:
    """Expected index -> actual index, greedily in the listed order (each after the previous)."""
    found: dict[int, int] = {}
    start = 0
    for e, want in enumerate(expected):
        a = next((i for i in range(start, len(actual)) if _fits(want, actual[i][1])), None)
        if a is not None:
            found[e], start = a, a + 1
    return found


def assign(expected: tuple[ExpectedCall, ...], actual: list[Actual]) -> dict[int, int]:
    """Expected index -> actual index, as many as possible: in the listed order when that
    matches them all, else a maximum matching (Kuhn's augmenting paths)."""
    ordered = in_order(expected, actual)
    if len(ordered) == len(expected):
        return ordered
    owner: dict[int, int] = {}

    def place(e: int, seen: set[int]) -> bool:
        for a, (_, call) in enumerate(actual):
            if a in seen or not _fits(expected[e], call):
                continue
            seen.add(a)
            if a not in owner or place(owner[a], seen):
                owner[a] = e
                return True
        return False

    for e in range(len(expected)):
        place(e, set())
    return {e: a for a, e in owner.items()}


def _call_text(name: str, args: Any) -> str:
    shown = ", ".join(f"{k}={v!r}" for k, v in args.items()) if isinstance(args, dict) else repr(args)
    return f"{name}({shown})"


def _diff(expected: dict[str, Any], actual: dict[str, Any] | None) -> str:
    from deepdiff import DeepDiff

    return DeepDiff(expected, actual, verbose_level=2).pretty() or "(no structural difference)"


Matching = tuple[tuple[ExpectedCall, ...], list[Actual], dict[int, int]]


def _matching(context: RunContext) -> Matching:
    """Expected calls, actual calls (by scenario names) and their matching, computed once per run."""
    if "matching" not in context.cache:
        expected = context.scenario.expect.calls or ()
        actual = _logical(context)
        context.cache["matching"] = (expected, actual, assign(expected, actual))
    matching: Matching = context.cache["matching"]
    return matching


@check(kind="expectation", weight=3.0)
def expected_calls(context: RunContext) -> list[Finding]:
    """Each expected call was made, with arguments matching the scenario's matchers.
    This is the heart of a scenario: did the model call the right tool the right way?"""
    expected, actual, matched = _matching(context)
    if not expected:
        return []
    findings = []
    used = set(matched.values())
    failure = endpoint_failure(context.transcript)
    for e, want in enumerate(expected):
        if e in matched:
            turn, call = actual[matched[e]]
            findings.append(passed("", f"{_call_text(call.name, call.arguments)} in turn {turn}"))
            continue
        if failure is not None:
            findings.append(not_reached(f"{failure[1]} before a call to {want.name!r}"))
            continue
        same_name = [(turn, c) for i, (turn, c) in enumerate(actual) if c.name == want.name and i not in used]
        if not same_name:
            made = [c.name for _, c in actual] or "no call"
            findings.append(
                Finding("", "error", False, f"expected a call to {want.name!r}; calls made: {made}")
            )
            continue
        turn, closest = same_name[0]
        problems = args_match(want.args, closest.arguments, exact=want.args_exact)
        findings.append(
            Finding(
                "",
                "error",
                False,
                f"expected {_call_text(want.name, want.args)}; closest call "
                f"{_call_text(closest.name, closest.arguments)} in turn {turn}: {'; '.join(problems)}",
                turn,
                {
                    "expected": want.args,
                    "actual": closest.arguments,
                    "deepdiff": _diff(want.args, closest.arguments),
                },
            )
        )
    return findings


@check(kind="expectation")
def call_order(context: RunContext) -> list[Finding]:
    """With ``order: strict`` (the default) the expected calls happen in the listed order:
    sequential tasks whose later calls depend on earlier results."""
    expected, actual, matched = _matching(context)
    if context.scenario.expect.order != "strict" or len(expected) < 2 or len(matched) < 2:
        return []
    failure = endpoint_failure(context.transcript)
    if failure is not None and len(matched) < len(expected):
        return [not_reached(failure[1])]
    if len(in_order(expected, actual)) >= len(matched):
        return [passed("", "expected calls made in order")]
    made = [actual[matched[e]][1].name for e in sorted(matched, key=matched.__getitem__)]
    return [
        Finding("", "error", False, f"calls made in the order {made}, expected {[c.name for c in expected]}")
    ]


@check(kind="expectation", weight=2.0)
def parallel_calls(context: RunContext) -> list[Finding]:
    """With ``parallel: true`` every expected call arrives in one model turn: parallel tool
    calling, which saves round trips and which some providers or models lack."""
    expected, actual, matched = _matching(context)
    if not context.scenario.expect.parallel or not expected:
        return []
    failure = endpoint_failure(context.transcript)
    if failure is not None and not matched:
        return [not_reached(failure[1])]
    turns = sorted({actual[a][0] for a in matched.values()})
    if len(matched) == len(expected) and len(turns) == 1:
        return [passed("", f"{len(expected)} calls in turn {turns[0]}")]
    by_turn = {t: [c.name for turn, c in actual if turn == t] for t in sorted({t for t, _ in actual})}
    return [
        Finding("", "error", False, f"expected {len(expected)} calls in one turn; calls by turn: {by_turn}")
    ]


@check(kind="expectation")
def extra_calls(context: RunContext) -> list[Finding]:
    """No calls beyond the expected ones (unless ``allow_extra``): extra calls cost time and
    money, and may have side effects."""
    expected, actual, matched = _matching(context)
    if not expected or context.scenario.expect.allow_extra:
        return []
    used = set(matched.values())
    extra = [(turn, c) for i, (turn, c) in enumerate(actual) if i not in used]
    if not extra:
        return [passed("", "no unexpected calls")]
    return [
        Finding("", "warning", False, f"unexpected call {_call_text(c.name, c.arguments)}", turn)
        for turn, c in extra
    ]


@check(kind="expectation", weight=3.0)
def no_call(context: RunContext) -> list[Finding]:
    """When no tool fits the request (or ``tool_choice`` is ``none``) the model answers
    without calling one: irrelevance detection."""
    if not context.scenario.expects_no_call:
        return []
    calls = _logical(context)
    failure = endpoint_failure(context.transcript)
    if failure is not None and failure[0] == 0:
        return [not_reached(failure[1])]
    if not calls:
        return [passed("", "no tool called")]
    return [
        Finding("", "error", False, f"expected no call; got {_call_text(c.name, c.arguments)}", turn)
        for turn, c in calls
    ]


@check(kind="expectation", weight=2.0)
def final_answer(context: RunContext) -> list[Finding]:
    """The run ends with a text answer matching the scenario's ``final`` matcher: the user
    gets an answer built from the tool results."""
    from harness.matchers import match

    matcher = context.scenario.expect.final
    t = context.transcript
    if matcher is None or not t.exchanges:
        return []
    failure = endpoint_failure(t)
    if failure is not None:
        return [not_reached(failure[1])]
    last = t.exchanges[-1]
    if last.parsed.tool_calls:
        return [
            Finding(
                "", "error", False, f"no final answer: the run stopped ({t.stop_reason}) after a tool call"
            )
        ]
    text = last.parsed.text or ""
    if not text.strip():
        return [Finding("", "error", False, "no final answer: the last turn has no text", last.turn)]
    if is_truncated(last.parsed, context.max_tokens):
        return [
            Finding(
                "",
                "error",
                False,
                f"no final answer: the last turn was cut at the token limit ({last.parsed.finish_reason!r})",
                last.turn,
                {"text": text},
            )
        ]
    prompts = [m.content or "" for m in context.scenario.messages if m.role in ("system", "user")]
    echoed = echo_of_prompt(text, prompts)
    if echoed is not None:
        return [
            Finding(
                "",
                "error",
                False,
                f"the final answer only repeats the prompt ({echoed[:80]!r}): it answers nothing",
                last.turn,
                {"text": text},
            )
        ]
    problems = match(matcher, text)
    if problems:
        return [
            Finding(
                "",
                "error",
                False,
                f"final answer does not match: {'; '.join(problems)}",
                len(t.exchanges) - 1,
                {"text": text, "matcher": matcher},
            )
        ]
    return [passed("", "final answer matches")]


@check(kind="expectation")
def turn_budget(context: RunContext) -> list[Finding]:
    """The run finished within ``limits.max_turns`` model turns."""
    t = context.transcript
    if not t.exchanges or context.scenario.expect.refused is not None:
        return []
    if t.stop_reason == "max_turns":
        return [Finding("", "error", False, f"no final answer within {context.scenario.max_turns} turns")]
    return [passed("", f"{len(t.exchanges)} of {context.scenario.max_turns} turns used")]


@check(kind="expectation")
def no_loop(context: RunContext) -> list[Finding]:
    """The model does not repeat a successful call with the same arguments: a loop that
    an agent would otherwise run until its budget is gone."""
    t = context.transcript
    if not t.calls:
        return []
    loops = [f for f in t.findings if f.check_id == "loop.repeated_call"]
    return loops or [passed("", "no repeated identical call")]


@check(kind="expectation", weight=2.0)
def recovery(context: RunContext) -> list[Finding]:
    """After a tool returns an error the model goes on: it retries, tries another way or tells
    the user, and the provider accepts the error result it was sent."""
    t = context.transcript
    failed = [e for e in t.executions if e.result.is_error]
    if not failed:
        return []
    last = max(e.turn for e in failed)
    after = [x for x in t.exchanges if x.turn > last]
    if after and after[0].parsed.error is None:
        return [passed("", f"the model continued after the tool error in turn {last}")]
    reason = (
        "the provider rejected the request carrying the error result"
        if after
        else f"the run stopped: {t.stop_reason}"
    )
    return [Finding("", "error", False, f"no recovery after the tool error in turn {last}: {reason}", last)]


@check(kind="expectation", weight=2.0)
def batch_mode(context: RunContext) -> list[Finding]:
    """A batch of N items is handled the way the scenario states: ``one_turn`` (N calls in one
    model turn, over a global tool set) or ``per_item`` (one call per turn, a loop bounded by
    ``limits.max_turns``). Doing it the other way is a finding about the model, not a crash:
    agents built for one mode break, slow down or overspend in the other. Judged on the items
    that were handled (a missing item is ``expected_calls``' finding)."""
    mode = context.scenario.expect.batch
    expected, actual, matched = _matching(context)
    if mode is None:
        return []
    failure = endpoint_failure(context.transcript)
    if len(matched) < 2:
        return [not_reached(failure[1])] if failure is not None else []
    per_turn = Counter(actual[a][0] for a in matched.values())
    shape = ", ".join(f"turn {turn}: {count}" for turn, count in sorted(per_turn.items()))
    if mode == "one_turn" and len(per_turn) == 1:
        return [passed("", f"{len(matched)} items in one turn")]
    if mode == "per_item" and max(per_turn.values()) == 1:
        return [passed("", f"{len(matched)} items, one per turn")]
    wanted = (
        f"one turn with {len(expected)} calls (a global tool set)"
        if mode == "one_turn"
        else "a per-item loop, one call per turn"
    )
    return [
        Finding(
            "",
            "error",
            False,
            f"the batch's items came as {shape} (calls per turn); the scenario tests {wanted}",
        )
    ]


@check(kind="expectation", weight=3.0)
def refused(context: RunContext) -> list[Finding]:
    """A request that must be refused (a malformed history, a ``tool_choice`` naming no offered
    tool) is refused clearly: an HTTP 4xx, its message matching the scenario's pattern when it
    gives one. A 5xx is the endpoint failing instead of refusing; a 2xx is silent acceptance, a
    warning: an agent that sent the request never learns it was wrong, though the format's own
    vendor may accept it too (providers disagree: OpenAI takes a duplicate call id that Anthropic
    refuses). The verdict says which."""
    wanted = context.scenario.expect.refused
    t = context.transcript
    if wanted is None or not t.exchanges or t.exchanges[0].response is None:
        return []  # no response at all: the run could not test the endpoint
    first = t.exchanges[0]
    assert first.response is not None
    status = first.response.status
    message = first.parsed.error.message if first.parsed.error is not None else ""
    said = f": {message[:200]}" if message else ""
    if status >= 500:
        why = f"failed (HTTP {status}): the endpoint failed instead of refusing the request{said}"
        return [Finding("", "error", False, why, 0, {"verdict": "failed", "status": status})]
    if status < 400:
        what = (
            "an error inside a 2xx body, not a clear 4xx"
            if first.parsed.error
            else "the request was answered"
        )
        why = f"accepted silently (HTTP {status}): {what}; stricter providers refuse it"
        return [Finding("", "warning", False, why, 0, {"verdict": "accepted", "status": status})]
    expected = wanted.get("status", "4xx")
    if isinstance(expected, int) and status != expected:
        why = f"refused with HTTP {status}, not the {expected} the scenario expects{said}"
        return [Finding("", "error", False, why, 0, {"verdict": "refused", "status": status})]
    pattern = wanted.get("message")
    if pattern and not re.search(pattern, message):
        why = f"refused (HTTP {status}), but the message does not match {pattern!r}{said}"
        return [Finding("", "error", False, why, 0, {"verdict": "refused", "status": status})]
    return [passed("", f"refused clearly (HTTP {status}){said}")]
