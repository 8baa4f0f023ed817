"""Deviation profiles: the simulator answering wrongly on purpose, one way at a time.

The reference simulator is the harness's own oracle: the conformant profile
must score 100, and every protocol check must catch the deviation made for it
(``tests/integration/test_sim_deviations.py`` holds each to that). A profile
is chosen in the URL, ``/<format>~<deviation>/...``, or with a target whose
``base_url`` is ``sim~<deviation>``.

Reply deviations change what the scripted model says (any format); wire
deviations change how a response is written (each format's own, ``SimFormat.deviations``:
OpenAI Chat Completions' in :mod:`harness.servers.sim.wire`, the Responses API's in
:mod:`harness.servers.sim.wire_responses`). ``fail-share:<p>[:<seed>]`` makes
the simulator a model of known quality: it fails a share ``p`` of the scenarios, chosen by a hash
of each scenario id and the seed, so the headline can be held to the truth (``100 * (1 - p)``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from harness.scenarios import Scenario
from harness.servers.sim.formats import FORMATS
from harness.servers.sim.script import Conversation, Reply
from harness.servers.sim.wire import Response, SimFormat, SimRequest


def _unknown_tool(reply: Reply, conversation: Conversation) -> Reply:
    return Reply([("teleport", args) for _, args in reply.calls], reply.text) if reply.calls else reply


def breaking(schema: Any) -> Any:
    """Arguments that break ``schema``: an unexpected key and no required one where the schema has
    required keys or closes its object; else a declared property of the wrong type; else (a
    schema any object satisfies) no object at all."""
    if not isinstance(schema, dict) or schema.get("required") or schema.get("additionalProperties") is False:
        return {"unexpected": 3}
    for key, sub in (schema.get("properties") or {}).items():
        kind = str(sub.get("type", "")).lower() if isinstance(sub, dict) else ""
        if kind == "string":
            return {key: 3}
        if kind in ("integer", "number", "boolean", "array", "object"):
            return {key: "unexpected"}
    return ["unexpected"]


def _schema_violation(reply: Reply, conversation: Conversation) -> Reply:
    if not reply.calls:
        return reply
    return Reply(
        [(name, breaking(conversation.tool_schemas.get(name))) for name, _ in reply.calls], reply.text
    )


def _no_calls(reply: Reply, conversation: Conversation) -> Reply:
    return Reply(text=reply.text or "I answered without calling any tool.")


def _text_leak(reply: Reply, conversation: Conversation) -> Reply:
    if not reply.calls:
        return reply
    text = "\n".join(
        f"<tool_call>\n{json.dumps({'name': name, 'arguments': args})}\n</tool_call>"
        for name, args in reply.calls
    )
    return Reply(text=text)


def _hosted_disallowed(reply: Reply, conversation: Conversation) -> Reply:
    renamed = [
        dataclasses.replace(step, name=f"{step.name}_admin") if step.kind != "list_tools" else step
        for step in reply.hosted
    ]
    return dataclasses.replace(reply, hosted=renamed)


REPLY_DEVIATIONS: dict[str, Callable[[Reply, Conversation], Reply]] = {
    "unknown-tool": _unknown_tool,
    "schema-violation": _schema_violation,
    "no-calls": _no_calls,
    "text-leak": _text_leak,
    "hosted-disallowed-tool": _hosted_disallowed,
}
"""What the model says: a tool that was not offered, arguments against the schema, no call
at all (tool_choice ignored), calls written into the text (Hermes tags) instead of the
tool-call fields; and what the provider's MCP connector did (hosted MCP, Responses and
Anthropic alike): a call (or an approval request) to a tool outside ``allowed_tools``."""


NOISY_SHARE = 5
"""``noisy``: about one sending in this many is answered without a tool call."""

DEVIATIONS = sorted(
    {*REPLY_DEVIATIONS, *(name for fmt in FORMATS.values() for name in fmt.deviations)}
    | {"rate-limit", "noisy", "fail-share", "reasoning-required"}
)
"""The deviations of what is said, every served format's wire deviations included;
:data:`harness.servers.sim.faults.FAULTS` lists the endpoint faults. ``fail-share`` takes
parameters (see :func:`parse`); ``reasoning-required`` is a thinking model that refuses a turn
whose reasoning did not come back (:mod:`harness.servers.sim.wire_reasoning`)."""

PARAMETERS = {"fail-share": "fail-share:<share from 0 to 1>[:<seed>]"}
"""The deviations that take parameters after a colon, and how they are written."""


def parse(deviation: str) -> tuple[str, tuple[str, ...]]:
    """A deviation's name and parameters (``fail-share:0.3:7`` -> ``("fail-share", ("0.3",
    "7"))``); a :class:`ValueError` saying what is expected when it is not one."""
    name, *parameters = deviation.split(":")
    if name not in DEVIATIONS:
        raise ValueError(f"unknown deviation {name!r}; known: {', '.join(DEVIATIONS)}")
    if name in PARAMETERS:
        fail_share(tuple(parameters))
    elif parameters:
        raise ValueError(f"deviation {name!r} takes no parameters")
    return name, tuple(parameters)


def fail_share(parameters: tuple[str, ...]) -> tuple[float, str]:
    """The share and the seed of ``fail-share:<share>[:<seed>]`` (seed ``0`` by default)."""
    usage = f"expected {PARAMETERS['fail-share']}, e.g. fail-share:0.3"
    if not 1 <= len(parameters) <= 2:
        raise ValueError(f"fail-share: {usage}")
    try:
        share = float(parameters[0])
    except ValueError:
        raise ValueError(f"fail-share: {parameters[0]!r} is not a number; {usage}") from None
    if not 0 <= share <= 1:
        raise ValueError(f"fail-share: {share:g} is not between 0 and 1; {usage}")
    return share, parameters[1] if len(parameters) == 2 else "0"


def failing(scenarios: Iterable[Scenario], share: float, seed: str) -> frozenset[str]:
    """The scenarios ``fail-share`` fails: in each category, the first ones in the order of
    ``sha256(seed/id)``, as many as keep the running mean over categories of the failed share
    within half a scenario of ``share`` (error diffusion from category to category), so the
    headline of a conformant model under it is ``100 * (1 - share)`` to a fraction of a point
    whatever the category sizes. A scenario that asks the endpoint to refuse (``expect.refused``)
    is no task of the model's, and outside the headline: it is never among them."""
    by_category: dict[str, list[str]] = defaultdict(list)
    for scenario in scenarios:
        if scenario.expect.refused is None:
            by_category[scenario.category].append(scenario.id)
    chosen: set[str] = set()
    failed = 0.0  # the failed shares of the categories so far, summed
    for index, category in enumerate(sorted(by_category)):
        ids = sorted(by_category[category], key=lambda i: hashlib.sha256(f"{seed}/{i}".encode()).hexdigest())
        count = min(len(ids), max(0, round((share * (index + 1) - failed) * len(ids))))
        chosen.update(ids[:count])
        failed += count / len(ids)
    return frozenset(chosen)


def fail(reply: Reply, conversation: Conversation) -> Reply:
    """How a failed scenario goes wrong: every call goes to a tool that was not offered; where no
    call is right, the phase opens with a call to the first offered tool; and its answers are wrong
    (after a seeded history an answer may be due with no call before it)."""
    if reply.calls:
        return _unknown_tool(reply, conversation)
    if conversation.since_user == 0 and conversation.tool_names:
        return Reply([(conversation.tool_names[0], {})])
    return Reply([], WRONG_ANSWER) if reply.text is not None else reply


WRONG_ANSWER = "I could not find that out."
"""What a failed scenario answers where an answer is due: it holds nothing a scenario expects."""


def deviate(
    name: str,
    fmt: SimFormat,
    request: SimRequest,
    reply: Reply,
    conversation: Conversation,
    respond: Callable[[Reply], Response],
    sent: Counter[str],
) -> Response:
    """The response of deviation ``name`` in format ``fmt`` (a :class:`KeyError` when ``fmt`` has
    no such wire deviation); ``sent`` counts the sendings of each distinct request
    for the two that depend on it: ``rate-limit`` refuses each request once with a 429, then
    answers; ``noisy`` answers about one sending in :data:`NOISY_SHARE` without a tool call, as a
    sampling model does now and then (which sendings is fixed by the request and its count, so a
    run is reproducible)."""
    if name in ("rate-limit", "noisy"):
        key = json.dumps(request.body, sort_keys=True)
        sent[key] += 1
        if name == "rate-limit" and sent[key] == 1:
            body = json.dumps({"error": {"message": "rate limited", "type": "rate_limit_error"}})
            return Response(429, "application/json", body, {"retry-after": "0"})
        if name == "noisy" and reply.calls:
            draw = hashlib.sha256(f"{key}#{sent[key]}".encode()).digest()[0]
            if draw % NOISY_SHARE == 0:
                return respond(_no_calls(reply, conversation))
        return respond(reply)
    if name in REPLY_DEVIATIONS:
        return respond(REPLY_DEVIATIONS[name](reply, conversation))
    if name in fmt.deviations:
        return fmt.deviations[name](respond(reply))
    raise KeyError(name)
