"""The names LiteLLM gives the endpoints and wire formats the harness speaks: its provider
names (``litellm.provider_list``) and its ``mode`` for a model served on a set of wire formats,
for ``harness capabilities --format litellm`` (:mod:`harness.analysis.capability_map`)."""

from __future__ import annotations

from collections.abc import Set

PROVIDERS = {
    "openai": "openai",
    "openai-responses": "openai",
    "azure-openai-v1": "azure",
    "azure-openai-chat": "azure",
    "mistral": "mistral",
    "ollama": "ollama_chat",
    "ollama-v1": "ollama_chat",
    "ollama-responses": "ollama_chat",
    "ollama-anthropic": "ollama_chat",
    "groq": "groq",
    "openrouter": "openrouter",
    "openrouter-responses": "openrouter",
    "openrouter-anthropic": "openrouter",
    "vllm": "hosted_vllm",
    "vllm-responses": "hosted_vllm",
    "lmstudio": "lm_studio",
    "lmstudio-responses": "lm_studio",
    "gemini-openai": "gemini",
    "gemini-interactions": "gemini",
    "vertex-openai": "vertex_ai",
    "cohere": "cohere_chat",
    "xai": "xai",
    "xai-anthropic": "xai",
    "bedrock": "bedrock",
    "bedrock-openai": "bedrock",
    "bedrock-mantle": "bedrock",
}
"""The harness's endpoint profile -> LiteLLM's provider name (``litellm.provider_list``) for
the same endpoint. A profile not named here is reached the way its wire format is
(:data:`FORMATS`): llama.cpp's servers, for one, as an OpenAI-compatible endpoint."""

FORMATS = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "anthropic-messages": "anthropic",
    "mistral-chat": "mistral",
    "ollama-chat": "ollama_chat",
    "cohere-chat": "cohere_chat",
    "gemini-generate": "gemini",
    "gemini-interactions": "gemini",
    "bedrock-converse": "bedrock",
}
"""A wire format -> the LiteLLM provider that speaks it, for a profile :data:`PROVIDERS` does
not name (an unknown format is reached as OpenAI-compatible, LiteLLM's ``openai/`` prefix)."""


def litellm_provider(profile: str | None, wire_format: str) -> str:
    """LiteLLM's provider for an endpoint of ``profile`` speaking ``wire_format``."""
    return (PROVIDERS.get(profile) if profile else None) or FORMATS.get(wire_format, "openai")


def litellm_mode(wire_formats: Set[str]) -> str:
    """LiteLLM's ``mode`` of a model measured on ``wire_formats``: ``responses`` when it was
    served on the Responses API alone, else ``chat``."""
    return "responses" if set(wire_formats) == {"openai-responses"} else "chat"
