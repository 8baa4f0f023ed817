"""The simulator's scripted model: answers each scenario the way its ``expect`` block says.

It finds the scenario from the conversation's opening messages and plays the
expected calls, one per turn (all in one turn when the scenario expects
parallel calls or a one-turn batch), then a final answer built to satisfy the
``final`` matcher; then the same for each follow-up the conversation holds.
It never looks at the harness's checks: it is an independent, conformant
counterpart, and a simulated one: its scores are never a model's.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.matchers import example
from harness.scenarios import Scenario
from harness.tools.naming import HASH_LENGTHS, name_digest

if TYPE_CHECKING:
    from harness.servers.sim.hosted import Approved, Declared, Step


@dataclass
class Reply:
    """What the scripted model says this turn: calls, or a final text."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    text: str | None = None
    reasoning: str | None = None
    """The model's reasoning, written in the format's own artefact where the wire module has one
    (only ``reasoning-required`` sets it: :mod:`harness.servers.sim.wire_reasoning`)."""
    hosted: list[Step] = field(default_factory=list)
    """What the provider's MCP connector did before this reply (:mod:`harness.servers.sim.hosted`)."""


@dataclass
class Conversation:
    """The parts of a request the scripted model reads, whatever the wire format."""

    opening: list[tuple[str, str]]  # (role, text) of the system/user messages before any tool call
    assistant_turns: int
    tool_names: list[str]
    user_texts: list[str] = field(default_factory=list)  # every user text message, follow-ups included
    since_user: int = 0  # assistant turns after the last user text message: the step of this phase
    tool_schemas: dict[str, Any] = field(default_factory=dict)  # declared name -> its parameters schema
    hosted: dict[str, Declared] = field(default_factory=dict)  # hosted MCP servers the request declares
    listed: list[str] = field(default_factory=list)  # hosted servers the history already listed
    approved: list[Approved] = field(default_factory=list)  # approved hosted calls not yet run


def turns_since_user(roles: list[tuple[str, bool]]) -> int:
    """Assistant turns after the last user message that carries text, from each message's role
    and whether it is a user text (a tool result sent in a user message is not)."""
    since = 0
    for role, user_text in roles:
        if user_text:
            since = 0
        elif role in ("assistant", "model"):
            since += 1
    return since


def opening_key(opening: list[tuple[str, str]]) -> str:
    """What identifies a scenario's conversation: its opening user messages (system prompts
    are left out: prompted modes add the tool protocol to them)."""
    text = "\n".join(content.strip() for role, content in opening if role == "user")
    return hashlib.sha256(text.encode()).hexdigest()


class ScriptedModel:
    """Looks up scenarios by opening messages and scripts their turns."""

    def __init__(self, scenarios: list[Scenario]):
        self._failing: dict[tuple[float, str], frozenset[str]] = {}
        self.scenarios: dict[str, Scenario] = {}
        for scenario in scenarios:
            key = opening_key([(m.role, m.content or "") for m in scenario.messages])
            other = self.scenarios.get(key)
            if other is not None and other.id != scenario.id:
                raise ValueError(
                    f"scenarios {other.id} and {scenario.id} open with the same user messages; "
                    "the simulator could not tell them apart"
                )
            self.scenarios[key] = scenario

    def failing(self, share: float, seed: str) -> frozenset[str]:
        """The scenarios the ``fail-share`` deviation fails (:func:`harness.servers.sim.deviations.failing`),
        chosen once per share and seed."""
        from harness.servers.sim.deviations import failing

        key = (share, seed)
        if key not in self._failing:
            self._failing[key] = failing(self.scenarios.values(), share, seed)
        return self._failing[key]

    def find(self, conversation: Conversation) -> Scenario | None:
        return self.scenarios.get(opening_key(conversation.opening))

    def plan(self, scenario: Scenario) -> list[list[tuple[str, dict[str, Any]]]]:
        expected = scenario.expect.calls or ()
        calls = [(c.name, example(c.args)) for c in expected]
        if not calls or scenario.expects_no_call:
            return []
        at_once = scenario.expect.parallel or scenario.expect.batch == "one_turn"
        return [calls] if at_once else [[call] for call in calls]

    def reply(self, scenario: Scenario, conversation: Conversation) -> Reply:
        # the step within this phase is counted from the phase's own user message, so a phase that
        # went otherwise than scripted (a deviation, a model that answered early) never shifts the next
        turn = step(conversation)
        asked = [f.content for f in scenario.follow_ups if f.content in conversation.user_texts]
        phase = scenario.phase(len(asked))
        steps = self.plan(phase)
        if turn < len(steps):
            servers = [server.name for server in scenario.mcp_servers]
            offered = conversation.tool_names
            return Reply([(offered_name(name, offered, servers), args) for name, args in steps[turn]])
        final = phase.expect.final
        return Reply(text=str(example(final)) if final is not None else "Done.")


def step(conversation: Conversation) -> int:
    """The step of this phase: the assistant turns since the last user message with text. In
    prompted mode tool results come back as user text too (in the protocol's syntax), so there
    the step is the number of result messages since the last other user text."""
    protocol = prompted_protocol(conversation)
    if protocol is None:
        return conversation.since_user
    from harness.model import ToolResult

    rendered = protocol.render_results([ToolResult("CALL-ID", "NAME", "")])
    prefix = rendered[: rendered.index("CALL-ID")]  # how a results message starts
    count = 0
    for text in conversation.user_texts:
        count = count + 1 if text.startswith(prefix) else 0
    return count


def prompted_protocol(conversation: Conversation) -> Any:
    """The text protocol whose instructions the system prompt holds (prompted mode), or None."""
    from harness.providers.text_protocols import PROTOCOLS

    system = "\n".join(text for role, text in conversation.opening if role == "system")
    return next((p for p in PROTOCOLS.values() if p.instructions in system), None)


def offered_name(name: str, offered: list[str], servers: Iterable[str] = ()) -> str:
    """The name under which the request offers the tool a scenario calls ``name`` (a model calls
    what it is offered), read from the request's tools: the name itself; else the offered name
    carrying the hash suffix the harness gives a renamed tool (cut, reserved or colliding: see
    :func:`harness.tools.naming.name_digest`), for the tool's ``(server, tool)`` pair, an MCP
    tool's server being one of the scenario's ``servers``; else the name with the characters
    providers forbid replaced (``search.files`` -> ``search_files``)."""
    if not offered or name in offered:
        return name
    digests = [name_digest(server, tool) for server, tool in _pairs(name, servers)]
    for candidate in offered:
        suffix = candidate.rpartition("_")[2]
        if len(suffix) in HASH_LENGTHS and any(digest.startswith(suffix) for digest in digests):
            return candidate
    safe = re.sub(r"[^a-zA-Z0-9_-]", "_", name)
    return safe if safe in offered else name


def _pairs(name: str, servers: Iterable[str]) -> list[tuple[str, str]]:
    """The ``(server, tool)`` pairs a scenario's tool name can stand for: a declared tool's
    ``("", name)``, and ``mcp__<server>__<tool>`` or ``<server>.<tool>`` for each server."""
    pairs = [("", name)]
    for server in servers:
        for prefix in (f"mcp__{server}__", f"{server}."):
            if name.startswith(prefix):
                pairs.append((server, name.removeprefix(prefix)))
    return pairs


def names_in_prompt(conversation: Conversation) -> list[str]:
    """Tool names of a prompted-mode system prompt (its ``## <name>`` headings)."""
    system = "\n".join(text for role, text in conversation.opening if role == "system")
    return re.findall(r"^## (\S+)$", system, flags=re.MULTILINE)


def as_text(reply: Reply, conversation: Conversation) -> Reply:
    """In prompted mode (no native tools, a text protocol in the system prompt) a conformant
    model writes its calls in that protocol's syntax."""
    from harness.model import ToolCall

    if not reply.calls:
        return reply
    protocol = prompted_protocol(conversation)
    if protocol is None:
        return reply
    return Reply(text=protocol.render_calls([ToolCall(name, args) for name, args in reply.calls]))


def sim_id(*parts: Any, length: int = 9) -> str:
    """A deterministic alphanumeric id (9 characters satisfy every provider's rule)."""
    digest = hashlib.sha256(repr(parts).encode()).hexdigest()
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    number = int(digest, 16)
    out = []
    for _ in range(length):
        number, rest = divmod(number, len(alphabet))
        out.append(alphabet[rest])
    return "".join(out)


def signature(seed: str) -> str:
    """The opaque signature of a turn's reasoning (deterministic, as every reply is)."""
    return base64.b64encode(("sim-signature:" + sim_id(seed, "sig", length=24)).encode()).decode()
