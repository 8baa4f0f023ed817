"""What a provider family accepts as a tool name, and where to find each family's rules.

Each adapter names its family's rules (``Adapter.name_rules``); this module holds the type, the
default (OpenAI's, which every OpenAI-compatible endpoint follows) and the lookup by family,
wire format or vendor alias, so a new wire format adds its rules in its own module. JSON Schema
keywords per family are in :mod:`harness.providers.schemas`.

Sources in :mod:`harness.providers.sources` ([O1][O3] OpenAI, [Q2][Q3] Groq; "obs." = observed
in error messages, not documented): ``openai`` (also Mistral, Groq, Ollama, vLLM, llama.cpp,
OpenRouter): ``^[a-zA-Z0-9_-]{1,64}$``, documented in the OpenAI and Groq SDKs.
"""

from __future__ import annotations

import functools
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


OPENAI = NameRules("openai", "a-zA-Z0-9_-", 64, source="OpenAI/Groq SDK FunctionDefinition docstrings")
"""The rules an adapter follows unless it names others (:attr:`Adapter.name_rules`)."""

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


def families() -> dict[str, NameRules]:
    """Every provider family's rules, as the registered adapters name them."""
    from harness.registry import ADAPTERS

    return _families(ADAPTERS.version)


@functools.lru_cache(maxsize=1)
def _families(version: int) -> dict[str, NameRules]:
    """The families of the adapters registered at ``version`` (rebuilt when one is added)."""
    from harness.registry import ADAPTERS

    found = {OPENAI.family: OPENAI}
    for _, adapter in ADAPTERS.items():
        found.setdefault(adapter.name_rules.family, adapter.name_rules)
    return found


def rules_for(family: str | NameRules) -> NameRules:
    """The rules of a provider family, of a wire format (``anthropic-messages``), or of a vendor
    alias (``mistral`` -> ``openai``)."""
    if isinstance(family, NameRules):
        return family
    from harness.registry import ADAPTERS

    if family in ADAPTERS:
        rules: NameRules = ADAPTERS.get(family).name_rules
        return rules
    known = families()
    key = FAMILY_ALIASES.get(family.lower(), family.lower())
    try:
        return known[key]
    except KeyError:
        raise UnknownNameError("provider family", family, [*known, *FAMILY_ALIASES]) from None
