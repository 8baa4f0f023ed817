"""Endpoint profiles: vendors that speak an existing wire format, with their quirks as data.

Adding a vendor is adding a record here, never a copy of an adapter. Quirks
either change how requests are built (``assistant_content_null``,
``send_parallel_tool_calls``, ``stream_usage``) or are documented deviations
the report names when the run meets them.
"""

from __future__ import annotations

from harness.errors import UnknownNameError
from harness.providers.base import Profile, Quirk

ALL_CHOICES = frozenset({"auto", "required", "none", "named"})

PROFILES: dict[str, Profile] = {
    p.name: p
    for p in [
        Profile(
            "openai", "openai-chat", "https://api.openai.com", "OPENAI_API_KEY", "OpenAI Chat Completions"
        ),
        Profile(
            "mistral",
            "mistral-chat",
            "https://api.mistral.ai",
            "MISTRAL_API_KEY",
            "Mistral La Plateforme",
            quirks=(
                Quirk(
                    "user_after_tool_rejected",
                    "La Plateforme rejects a user message right after tool results (400, code 3230)",
                ),
            ),
        ),
        Profile(
            "ollama",
            "ollama-chat",
            "http://localhost:11434",
            None,
            "Ollama native /api/chat",
            tool_choice=frozenset({"auto"}),
        ),
        Profile(
            "llama-cpp-python",
            "openai-chat",
            "",
            None,
            "llama-cpp-python's OpenAI-compatible server (chat_format chatml-function-calling)",
            tool_choice=frozenset({"auto", "none", "named"}),
            assistant_content_null=False,
            send_parallel_tool_calls=False,
            stream_usage=False,
            quirks=(
                Quirk(
                    "assistant_content_null_rejected",
                    "llama-cpp-python rejects an assistant message with content: null and tool_calls "
                    "(OpenAI accepts null): HTTP 500 with a validation error for every message type "
                    "(0.3.36; HTTP 400 on other builds); the profile sends an empty string instead",
                    workaround='content sent as ""',
                ),
                Quirk(
                    "tool_choice_required_500",
                    "tool_choice 'required' gives HTTP 500 with an empty error message",
                ),
                Quirk(
                    "stream_auto_tool_choice_empty",
                    "stream: true with tool_choice 'auto' gives HTTP 200 and an empty SSE body "
                    "(server log: 'Automatic streaming tool choice is not supported')",
                ),
                Quirk(
                    "stream_named_repeats_id",
                    "streaming with a named tool_choice repeats the call's id and name in every chunk and "
                    "adds a legacy function_call field beside tool_calls",
                ),
            ),
        ),
    ]
}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise UnknownNameError("endpoint profile", name, PROFILES) from None


def default_profile(fmt: str) -> Profile:
    """The vendor that defines a format is its default profile."""
    return next((p for p in PROFILES.values() if p.format == fmt), Profile(fmt, fmt))
