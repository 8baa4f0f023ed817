"""The simulator as a provider's hosted MCP connector (OpenAI Responses' ``mcp`` tool, Anthropic's
MCP connector).

**Scripted, not connected.** A real provider connects to the server's URL, lists its tools and
calls them. The simulator connects to nothing: a hosted server is one the request declares
(``server_label`` / ``name``) and the scenario names in its toolset, its listing is the tools the
scenario offers from it (those the request allows), and each call's output is a scripted text
saying so (:data:`SCRIPTED`). What it plays faithfully is the wire: a listing before the first
call to a server, an approval request when the request asks for approval and has not given it,
the call with its output, then the model going on in the same response, as a provider does
after running a hosted tool. Replays need nothing at all: the cassettes hold it.

A scripted call whose tool the request does not allow is not made (a conformant model cannot
call a tool it was never shown): the reply says so instead.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from harness.scenarios import Scenario
from harness.servers.sim.script import Conversation, Reply, ScriptedModel, _pairs, sim_id

SCRIPTED = "simulated hosted MCP result: the reference simulator ran no MCP server (scripted output)"
"""The start of every hosted call's output: no server ran, and the output says so."""


@dataclass(frozen=True)
class Declared:
    """A hosted MCP server as the request declares it: its allowed tools (``None``: all) and
    whether each call needs the client's approval."""

    allowed: tuple[str, ...] | None = None
    approval: bool = False


@dataclass(frozen=True)
class Approved:
    """A call the client approved and the simulator has not run yet: its approval request's id."""

    id: str
    server: str
    name: str
    arguments: dict[str, Any]


@dataclass
class Step:
    """One thing the connector did: ``list_tools`` (``tools``), ``call`` (``output``; ``approval``
    names the request it answers) or ``approval_request``."""

    kind: str
    server: str
    id: str
    name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    tools: list[str] = field(default_factory=list)
    output: str | None = None
    approval: str | None = None


def split(name: str, servers: dict[str, Declared]) -> tuple[str, str] | None:
    """``(server, tool)`` when ``name`` is a scenario's name for a tool of a declared server
    (``mcp__<server>__<tool>`` or ``<server>.<tool>``), else ``None``."""
    return next(((server, tool) for server, tool in _pairs(name, servers) if server), None)


def listed(scenario: Scenario, server: str, declared: Declared, script: list[str]) -> list[str]:
    """The tools the connector finds on ``server``: those the scenario offers from it (else those
    its script calls), less those the request does not allow."""
    offered = dict(scenario.mcp_tools).get(server)
    names = list(offered) if offered is not None else list(dict.fromkeys(script))
    return [n for n in names if declared.allowed is None or n in declared.allowed]


def output(server: str, name: str, arguments: dict[str, Any]) -> str:
    """A hosted call's scripted output: :data:`SCRIPTED`, and the call it stands for."""
    return f"{SCRIPTED}; {server}.{name}({json.dumps(arguments, sort_keys=True)})"


def play(
    model: ScriptedModel, scenario: Scenario, conversation: Conversation, reply: Reply, seed: str
) -> Reply:
    """The reply with the hosted calls the connector ran in front of it: each scripted turn of
    hosted calls is run (or waits for approval) and the script goes on, until a turn that holds
    a client call or a final answer."""
    servers = conversation.hosted
    if not servers:
        return reply
    steps: list[Step] = []
    seen = set(conversation.listed)
    script = [n for step in model.plan(scenario) for n, _ in step]

    def listing(server: str) -> None:
        if server not in seen:
            seen.add(server)
            names = [tool for s, tool in filter(None, (split(n, servers) for n in script)) if s == server]
            tools = listed(scenario, server, servers[server], names)
            steps.append(Step("list_tools", server, "mcpl_" + sim_id(seed, server, length=24), tools=tools))

    for approved in conversation.approved:
        listing(approved.server)
        call_id = "mcp_" + sim_id(seed, "approved", approved.id, length=24)
        text = output(approved.server, approved.name, approved.arguments)
        steps.append(
            Step(
                "call",
                approved.server,
                call_id,
                approved.name,
                approved.arguments,
                output=text,
                approval=approved.id,
            )
        )
    position = conversation.since_user
    while reply.calls:
        hosted = [(split(n, servers), a) for n, a in reply.calls]
        if not all(where is not None for where, _ in hosted):
            break
        asked = False
        for number, (where, arguments) in enumerate(hosted):
            assert where is not None
            server, name = where
            listing(server)
            if name not in listed(scenario, server, servers[server], [name]):
                return Reply(text=f"The tool {name!r} of MCP server {server!r} is not available to me.")
            key = (seed, position, number)
            if servers[server].approval:
                request_id = "mcpr_" + sim_id(*key, "approval", length=24)
                steps.append(Step("approval_request", server, request_id, name, dict(arguments)))
                asked = True
            else:
                call_id = "mcp_" + sim_id(*key, "call", length=24)
                text = output(server, name, arguments)
                steps.append(Step("call", server, call_id, name, dict(arguments), output=text))
        if asked:
            return Reply(hosted=steps)
        position += 1
        following = dataclasses.replace(conversation, since_user=position)
        reply = model.reply(scenario, following)
    return dataclasses.replace(reply, hosted=steps + reply.hosted)
