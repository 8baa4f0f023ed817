"""ToolNamer: provider-valid, unique, reversible and deterministic MCP tool names."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest

from harness.errors import ConfigError, UnknownNameError
from harness.providers.rules import NameRules, families, rules_for
from harness.tools.naming import ToolNamer

ROOT = Path(__file__).resolve().parents[3]
RULES = families()

NASTY_PAIRS = [
    ("codeindex", "find_symbol"),
    ("codeindex", "search.files"),
    ("codeindex", "search_files"),
    ("fs", "grep-files/v2"),
    ("fs", "grep-files:v2"),
    ("my server", "read file"),
    ("a", "b__c"),
    ("a__b", "c"),
    ("9lives", "x"),
    ("long", "t" * 100),
    ("long", "t" * 99),
    ("ünïcode", "wörk"),
]


@pytest.mark.parametrize("family", sorted(RULES))
@pytest.mark.parametrize("style", ["mcp", "dotted"])
def test_every_name_is_valid_unique_and_round_trips(family: str, style: str) -> None:
    namer = ToolNamer(NASTY_PAIRS, family, style=style)  # type: ignore[arg-type]
    names = [namer.exposed(server, tool) for server, tool in NASTY_PAIRS]
    assert len(set(names)) == len(names)
    for (server, tool), name in zip(NASTY_PAIRS, names, strict=True):
        assert namer.rules.is_valid(name), name
        assert namer.resolve(name) == (server, tool)
    assert len(namer) == len(NASTY_PAIRS)


def test_plain_names_are_kept() -> None:
    namer = ToolNamer([("codeindex", "find_symbol")])
    assert namer.exposed("codeindex", "find_symbol") == "mcp__codeindex__find_symbol"
    assert namer.changes == {}
    assert namer.notes == []


def test_invalid_characters_are_replaced_per_family() -> None:
    pairs = [("codeindex", "search.files"), ("fs", "grep-files/v2")]
    openai = ToolNamer(pairs, "openai")
    assert openai.exposed("codeindex", "search.files") == "mcp__codeindex__search_files"
    assert openai.exposed("fs", "grep-files/v2") == "mcp__fs__grep-files_v2"
    assert openai.changes["mcp__codeindex__search_files"] == "sanitised"
    gemini = ToolNamer(pairs, "gemini")
    assert gemini.exposed("codeindex", "search.files") == "mcp__codeindex__search.files"  # '.' allowed
    assert gemini.exposed("fs", "grep-files/v2") == "mcp__fs__grep-files_v2"


def test_over_long_names_are_cut_with_a_stable_hash() -> None:
    namer = ToolNamer([("long", "t" * 100)], "anthropic")
    name = namer.exposed("long", "t" * 100)
    assert len(name) == 64
    assert name.startswith("mcp__long__ttt")
    assert name[-9] == "_" and all(c in "0123456789abcdef" for c in name[-8:])
    assert namer.changes[name] == "truncated"
    assert namer.resolve(name) == ("long", "t" * 100)


def test_collision_after_sanitising_keeps_the_untouched_name() -> None:
    namer = ToolNamer([("s", "a.b"), ("s", "a_b")], "openai")
    assert namer.exposed("s", "a_b") == "mcp__s__a_b"
    dotted = namer.exposed("s", "a.b")
    assert dotted.startswith("mcp__s__a_b_") and dotted != "mcp__s__a_b"
    assert namer.changes[dotted] == "sanitised, collision"


def test_collision_between_two_changed_names_suffixes_both() -> None:
    namer = ToolNamer([("s", "a.b"), ("s", "a/b")], "openai")
    names = {namer.exposed("s", "a.b"), namer.exposed("s", "a/b")}
    assert len(names) == 2 and all(n.startswith("mcp__s__a_b_") for n in names)


def test_separator_ambiguity_is_a_collision() -> None:
    namer = ToolNamer([("a", "b__c"), ("a__b", "c")])  # both would be mcp__a__b__c
    first, second = namer.exposed("a", "b__c"), namer.exposed("a__b", "c")
    assert first != second
    assert namer.resolve(first) == ("a", "b__c") and namer.resolve(second) == ("a__b", "c")


def test_reserved_names_are_avoided() -> None:
    namer = ToolNamer([("codeindex", "find_symbol")], reserved=["mcp__codeindex__find_symbol"])
    name = namer.exposed("codeindex", "find_symbol")
    assert name != "mcp__codeindex__find_symbol"
    assert namer.changes[name] == "reserved name"


def test_gemini_names_start_with_a_letter_or_underscore() -> None:
    namer = ToolNamer([("9lives", "x")], "gemini", style="dotted")
    assert namer.exposed("9lives", "x") == "_9lives.x"


def test_dotted_style_kept_where_allowed_and_sanitised_visibly_elsewhere() -> None:
    gemini = ToolNamer([("git", "status")], "gemini", style="dotted")
    assert gemini.exposed("git", "status") == "git.status"
    assert gemini.notes == []
    openai = ToolNamer([("git", "status")], "openai", style="dotted")
    assert openai.exposed("git", "status") == "git_status"
    assert "dotted tool names are not allowed by openai" in openai.notes[0]
    with pytest.raises(ConfigError, match="dotted tool names are not allowed by anthropic"):
        ToolNamer([("git", "status")], "anthropic", style="dotted", on_forbidden="reject")


def test_prefixed_is_an_alias_of_mcp_style() -> None:
    assert ToolNamer([("s", "t")], style="prefixed").exposed("s", "t") == "mcp__s__t"


def test_unknown_names_raise() -> None:
    namer = ToolNamer([("s", "t")])
    with pytest.raises(UnknownNameError, match="mcp__s__t"):
        namer.resolve("mcp__s__u")
    with pytest.raises(UnknownNameError):
        namer.exposed("s", "u")
    with pytest.raises(UnknownNameError, match="provider family"):
        rules_for("acme")
    with pytest.raises(ConfigError):
        ToolNamer([("s", "")])


def test_family_aliases() -> None:
    assert rules_for("mistral") is RULES["openai"]
    assert rules_for("Groq") is RULES["openai"]
    assert rules_for("gemini").max_len == 64
    custom = NameRules("wide", "a-zA-Z0-9_.-", 128)
    assert ToolNamer([("s", "t" * 100)], custom).exposed("s", "t" * 100) == "mcp__s__" + "t" * 100


def test_name_rules_patterns() -> None:
    assert RULES["openai"].pattern.pattern == "^[a-zA-Z0-9_-][a-zA-Z0-9_-]{0,63}$"
    assert RULES["openai"].is_valid("a" * 64) and not RULES["openai"].is_valid("a" * 65)
    assert not RULES["openai"].is_valid("a.b") and RULES["gemini"].is_valid("a.b:c-d")
    assert not RULES["gemini"].is_valid("1abc") and RULES["openai"].is_valid("1abc")


def test_order_of_pairs_does_not_matter() -> None:
    shuffled = list(NASTY_PAIRS)
    random.Random(7).shuffle(shuffled)
    assert ToolNamer(shuffled).mapping() == ToolNamer(NASTY_PAIRS).mapping()


def test_a_suffixed_name_never_takes_an_existing_name() -> None:
    h8 = hashlib.sha256(b"s\x00a.b").hexdigest()[:8]
    trap = ("s", f"a_b_{h8}")  # exactly what ("s", "a.b") would get with an 8-digit suffix
    namer = ToolNamer([("s", "a.b"), ("s", "a_b"), trap])
    assert namer.exposed(*trap) == f"mcp__s__a_b_{h8}"
    dotted = namer.exposed("s", "a.b")
    assert dotted == "mcp__s__a_b_" + hashlib.sha256(b"s\x00a.b").hexdigest()[:16]
    assert len(set(namer)) == 3
