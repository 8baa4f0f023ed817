"""What each provider family accepts in a tool declaration: names, and (in
:mod:`harness.providers.schemas`) JSON Schema keywords.

Provider limits (sources in :mod:`harness.providers.sources`: [O1][O3] OpenAI, [A1][A2][A10]
Anthropic, [G2][G8] Gemini, [Q2][Q3] Groq; "obs." = observed in error messages, not documented):

* ``openai`` (also Mistral, Groq, Ollama, vLLM, llama.cpp, OpenRouter):
  ``^[a-zA-Z0-9_-]{1,64}$``, documented in the OpenAI and Groq SDKs.
* ``anthropic``: ``^[a-zA-Z0-9_-]{1,64}$`` (obs. 2025-03; 128 obs. since 2025-06): we keep 64.
* ``gemini``: starts with a letter or ``_``, then ``a-z A-Z 0-9 _ . : -``; 128 in the
  python-genai docstring (2026-05), 64 in 2025 server errors (obs.): we keep 64.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.errors import UnknownNameError


@dataclass(frozen=True)
class NameRules:
    """What one provider family accepts as a tool name.

    ``allowed`` is the body of a regex character class (``"a-zA-Z0-9_-"``).
    """

    family: str
    allowed: str
    max_len: int
    must_start_with_letter_or_underscore: bool = False
    source: str = ""

    @property
    def pattern(self) -> re.Pattern[str]:
        """The full-name regex, e.g. ``^[a-zA-Z0-9_-]{1,64}$``."""
        first = "[A-Za-z_]" if self.must_start_with_letter_or_underscore else f"[{self.allowed}]"
        return re.compile(f"^{first}[{self.allowed}]{{0,{self.max_len - 1}}}$")

    def allows(self, char: str) -> bool:
        return re.fullmatch(f"[{self.allowed}]", char) is not None

    def is_valid(self, name: str) -> bool:
        return self.pattern.fullmatch(name) is not None

    def sanitize(self, name: str) -> str:
        """Replace each forbidden character with ``_`` and fix the first character; no truncation."""
        clean = re.sub(f"[^{self.allowed}]", "_", name) or "_"
        if self.must_start_with_letter_or_underscore and not re.match("[A-Za-z_]", clean):
            clean = "_" + clean
        return clean


RULES: dict[str, NameRules] = {
    "openai": NameRules("openai", "a-zA-Z0-9_-", 64, source="OpenAI/Groq SDK FunctionDefinition docstrings"),
    "anthropic": NameRules("anthropic", "a-zA-Z0-9_-", 64, source="API error texts (obs.); 128 from 2025-06"),
    "gemini": NameRules(
        "gemini", "a-zA-Z0-9_.:-", 64, True, source="python-genai FunctionDeclaration docstring; 64 obs."
    ),
}

FAMILY_ALIASES: dict[str, str] = {
    "mistral": "openai",
    "groq": "openai",
    "ollama": "openai",
    "vllm": "openai",
    "llamacpp": "openai",
    "llama.cpp": "openai",
    "openrouter": "openai",
    "google": "gemini",
}


def rules_for(family: str | NameRules) -> NameRules:
    """The rules of a provider family or of one of its aliases (``mistral`` -> ``openai``)."""
    if isinstance(family, NameRules):
        return family
    key = FAMILY_ALIASES.get(family.lower(), family.lower())
    try:
        return RULES[key]
    except KeyError:
        raise UnknownNameError("provider family", family, [*RULES, *FAMILY_ALIASES]) from None
