"""Mistral chat completions (``mistral-chat``): OpenAI-shaped, with its own rules.

Differences from OpenAI, each a mapping here rather than a copy of the adapter:
``tool_choice: required`` is sent as ``any``; tool results carry ``name``
beside ``tool_call_id``; call ids are exactly nine characters from
``[a-zA-Z0-9]`` (ids that break the rule are noted on parse, and rewritten
deterministically before they are replayed to Mistral); arguments may be a
string or an object. Reading a request back takes ``any`` (and ``required``) as
required and checks the id rule on the calls of its history.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from harness.model import ChoiceMode, Finding, Message, ParsedTurn, ToolCall, ToolChoice, deviation
from harness.providers._calls import ids_rewritten, synthesize_id
from harness.providers._chat_request import OPENAI_CHOICES
from harness.providers.openai import OpenAIChatAdapter, result_content

ID_RULE = re.compile(r"^[a-zA-Z0-9]{9}$")
RESPONSE_ID = re.compile(r"^[0-9a-f]{32}$")  # its response ids; OpenAI-style servers use chatcmpl-...


class MistralChatAdapter(OpenAIChatAdapter):
    """Mistral La Plateforme chat completions."""

    format = "mistral-chat"
    simulator = "harness.servers.sim.wire:MISTRAL"
    default_path = "/v1/chat/completions"
    argument_wire_type = "any"
    request_choices: ClassVar[Mapping[str, ChoiceMode]] = {**OPENAI_CHOICES, "any": "required"}
    request_id_rule = ID_RULE
    request_id_rule_name = "Mistral's rule (exactly 9 characters from a-z, A-Z, 0-9)"
    replays_reasoning_fields = False  # another wire's reasoning is dropped

    @classmethod
    def claims_url(cls, host: str, path: str) -> bool:
        return host == "api.mistral.ai"

    @classmethod
    def claims_payload(cls, data: dict[str, Any]) -> bool:
        """An OpenAI chat payload with Mistral's 32-hex-digit id (its chunks are otherwise OpenAI's)."""
        return super().claims_payload(data) and bool(RESPONSE_ID.match(str(data.get("id", ""))))

    def map_tool_choice(self, choice: ToolChoice) -> Any:
        if choice.mode == "required":
            return "any"
        return super().map_tool_choice(choice)

    def map_tool_result(self, message: Message) -> dict[str, Any]:
        assert message.tool_result is not None
        return {
            "role": "tool",
            "tool_call_id": mistral_id(message.tool_result.call_id),
            "name": message.tool_result.name,
            "content": result_content(message.tool_result),
        }

    def map_call(self, call: ToolCall) -> dict[str, Any]:
        wire = super().map_call(call)
        wire["id"] = mistral_id(call.id)
        return wire

    def map_messages(self, messages: Sequence[Message], findings: list[Finding]) -> list[dict[str, Any]]:
        bad = {c.id for m in messages for c in m.tool_calls if c.id and not ID_RULE.match(c.id)}
        findings.extend(ids_rewritten(list(bad), "Mistral's 9-character rule"))
        return super().map_messages(messages, findings)

    def parse_body(self, body: dict[str, Any]) -> ParsedTurn:
        return self._check_ids(super().parse_body(body))

    def parse_stream(self, stream: Any) -> ParsedTurn:
        return self._check_ids(super().parse_stream(stream))

    @staticmethod
    def _check_ids(turn: ParsedTurn) -> ParsedTurn:
        bad = [c.wire_id for c in turn.tool_calls if c.wire_id and not ID_RULE.match(c.wire_id)]
        if bad:
            turn.findings.append(
                deviation(
                    "id_format",
                    f"call ids {bad} break Mistral's rule (exactly 9 characters from a-z, A-Z, 0-9)",
                )
            )
        return turn


def mistral_id(call_id: str | None) -> str | None:
    """The id unchanged when it follows Mistral's rule, else a deterministic 9-character one."""
    if call_id is None or ID_RULE.match(call_id):
        return call_id
    return synthesize_id("id", call_id, 0)
