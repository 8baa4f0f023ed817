"""Everything the harness looks up by name, in one place, loaded on first use.

Wire-format adapters, endpoint profiles, checks and report writers are each a
:class:`Registry`. The built-in entries are listed here as ``"module:attribute"``
paths and imported only when first asked for (as
inspect_ai's provider registry does), so ``harness --help`` imports none of
them; code can add more with :meth:`Registry.register`. An unknown name is an
:class:`~harness.errors.UnknownNameError` that lists the known ones.

This module imports nothing above :mod:`harness.errors`: the paths are strings.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar, overload

from harness.errors import UnknownNameError

T = TypeVar("T")


def load_path(path: str) -> Any:
    """The object a ``"package.module:attribute"`` path names."""
    module, _, attribute = path.partition(":")
    value: Any = importlib.import_module(module)
    for part in attribute.split(".") if attribute else ():
        value = getattr(value, part)
    return value


class Registry(Generic[T]):
    """Names to values, in registration order; lazy entries are ``"module:attribute"`` paths.

    ``table`` names a ``"module:attribute"`` dict whose items are added on first use
    (the bundled endpoint profiles are such a table).
    """

    def __init__(self, kind: str, lazy: dict[str, str] | None = None, *, table: str | None = None):
        self.kind = kind
        self._entries: dict[str, T | str] = dict(lazy or {})
        self._table = table
        self.version = 0  # counts registrations: what is built from the entries can be kept until it moves

    def _load_table(self) -> None:
        if self._table is not None:
            table, self._table = self._table, None
            for name, value in load_path(table).items():
                self._entries.setdefault(name, value)

    @overload
    def register(self, name: str) -> Callable[[T], T]: ...
    @overload
    def register(self, name: str, value: T) -> T: ...
    def register(self, name: str, value: Any = None) -> Any:
        """Add ``value`` under ``name`` (or use as a decorator: ``@REGISTRY.register("x")``)."""
        if value is None:

            def decorator(item: T) -> T:
                self._entries[name] = item
                self.version += 1
                return item

            return decorator
        self._entries[name] = value
        self.version += 1
        return value

    def get(self, name: str) -> T:
        self._load_table()
        try:
            entry = self._entries[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, self._entries) from None
        if isinstance(entry, str):
            entry = self._entries[name] = load_path(entry)
        return entry  # type: ignore[return-value]

    def names(self) -> list[str]:
        self._load_table()
        return list(self._entries)

    def __contains__(self, name: object) -> bool:
        self._load_table()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def items(self) -> list[tuple[str, T]]:
        return [(name, self.get(name)) for name in self.names()]


ADAPTERS: Registry[Any] = Registry(
    "wire format",
    {
        "openai-chat": "harness.providers.openai:OpenAIChatAdapter",
        "mistral-chat": "harness.providers.mistral:MistralChatAdapter",
        "ollama-chat": "harness.providers.ollama:OllamaChatAdapter",
        "anthropic-messages": "harness.providers.anthropic:AnthropicMessagesAdapter",
        "gemini-generate": "harness.providers.gemini:GeminiGenerateAdapter",
        "cohere-chat": "harness.providers.cohere:CohereChatAdapter",
        "openai-responses": "harness.providers.openai_responses:OpenAIResponsesAdapter",
        "bedrock-converse": "harness.providers.bedrock:BedrockConverseAdapter",
        "gemini-interactions": "harness.providers.gemini_interactions:GeminiInteractionsAdapter",
    },
)
"""Wire format -> :class:`~harness.providers.adapter.Adapter` subclass."""

PROFILES: Registry[Any] = Registry("endpoint profile", table="harness.providers.profiles:PROFILES")
"""Profile name -> :class:`~harness.providers.profiles.Profile` (the bundled ones; a
``harness.toml`` adds its own per configuration, see :mod:`harness.targets`)."""

CHECKS: Registry[Any] = Registry(
    "check",
    {
        "expect.calls": "harness.checks.expectations:expected_calls",
        "expect.order": "harness.checks.expectations:call_order",
        "expect.parallel": "harness.checks.expectations:parallel_calls",
        "expect.extra_calls": "harness.checks.expectations:extra_calls",
        "expect.no_call": "harness.checks.expectations:no_call",
        "expect.final": "harness.checks.expectations:final_answer",
        "expect.turn_budget": "harness.checks.expectations:turn_budget",
        "expect.no_loop": "harness.checks.expectations:no_loop",
        "expect.recovery": "harness.checks.expectations:recovery",
        "expect.batch": "harness.checks.expectations:batch_mode",
        "expect.refused": "harness.checks.expectations:refused",
        "protocol.wire": "harness.checks.protocol:wire_format",
        "protocol.arguments_json": "harness.checks.protocol:arguments_json",
        "protocol.arguments_schema": "harness.checks.protocol:arguments_schema",
        "protocol.known_tool": "harness.checks.protocol:known_tool",
        "protocol.call_ids": "harness.checks.protocol:call_ids",
        "protocol.tool_choice": "harness.checks.protocol:tool_choice_honoured",
        "protocol.native_delivery": "harness.checks.protocol:native_delivery",
        "protocol.provider_error": "harness.checks.protocol:provider_error",
        "protocol.mcp_servers": "harness.checks.protocol:mcp_servers",
        "protocol.hosted_mcp": "harness.checks.hosted:hosted_mcp",
        "protocol.mcp_output_schema": "harness.checks.mcp:mcp_output_schema",
        "protocol.mcp_input_errors": "harness.checks.mcp:mcp_input_errors",
        "protocol.mcp_progress": "harness.checks.mcp:mcp_progress",
        "protocol.confirm_before": "harness.checks.mcp:confirm_before",
        "protocol.agent_conduct": "harness.checks.protocol:agent_conduct",
        "protocol.history_portability": "harness.checks.protocol:history_portability",
        "protocol.tools_delivered": "harness.checks.attribution:tools_delivered",
        "protocol.truncation": "harness.checks.attribution:truncation",
        "protocol.template_leak": "harness.checks.attribution:template_leak",
    },
)
"""Check id -> :class:`~harness.checks.Check`, in the order checks run and reports list them."""

WRITERS: Registry[Any] = Registry(
    "report format",
    {
        "json": "harness.reports.json_report:write",
        "markdown": "harness.reports.markdown:write",
        "junit": "harness.reports.junit:write",
        "html": "harness.reports.html:write",
    },
)
"""Report format -> writer ``(report, records, out_dir) -> path``."""
