"""Tool names: what the model sees, per provider, and the way back.

MCP tool names (SEP-986: ``[A-Za-z0-9._-]{1,128}``, and servers do not always follow
it) are not valid function names everywhere, and two servers can offer tools with the
same name. A :class:`ToolNamer` is built once per run from every ``(server, tool)``
pair and gives each a provider-valid, unique exposed name:

* style ``"mcp"`` (default; ``"prefixed"`` is an alias): ``mcp__<server>__<tool>``;
* style ``"dotted"``: ``<server>.<tool>``, for providers whose rules allow ``.``.

Names are never parsed back: the table built here is the only way from an exposed name
to ``(server, tool)``, so the same pairs always give the same names (no salt, no input
order dependence; the hash suffix is SHA-256 based) and a recorded run replays.

Declared tools use style ``"plain"`` (:func:`declared_namer`): a name the provider
accepts is offered as it is (``math.factorial`` stays dotted for Gemini), any other is
sanitised or cut with a hash suffix (``math_factorial`` for OpenAI), and the scenario's
expectations still see the declared name.

The providers' naming rules are in :mod:`harness.providers.rules`.
"""

from __future__ import annotations

import functools
import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Literal

from harness.errors import ConfigError, UnknownNameError
from harness.providers.rules import NameRules, rules_for

Style = Literal["mcp", "prefixed", "dotted", "plain"]
"""``prefixed`` is another name for ``mcp`` (the scenario files' spelling)."""
OnForbidden = Literal["sanitise", "reject"]

HASH_LENGTHS = (8, 16, 32)
"""Hex digits of the suffix added to a truncated or colliding name (longer only on a clash)."""


def name_digest(server: str, tool: str) -> str:
    """The SHA-256 (hex) of ``(server, tool)`` whose head suffixes a renamed tool's exposed name
    (``server`` is ``""`` for a declared tool): how a reader of a request tells which tool a
    renamed name stands for, without the table."""
    return hashlib.sha256(f"{server}\x00{tool}".encode()).hexdigest()


def raw_name(style: str, server: str, tool: str) -> str:
    """The name of ``server``'s ``tool`` before sanitising, which scenarios use:
    ``mcp__<server>__<tool>``, ``<server>.<tool>`` (dotted), or the tool's own name (plain)."""
    if style == "plain":
        return tool
    return f"{server}.{tool}" if style == "dotted" else f"mcp__{server}__{tool}"


class ToolNamer:
    """A collision-free, reversible mapping between ``(server, tool)`` and exposed names.

    Each pair gets ``rules.sanitize(raw)``; when that is too long, is reserved (a
    built-in tool's name) or is shared with another pair, it is cut and given a
    ``_<hash>`` suffix. A name that needed no change keeps it even when a sanitised
    name lands on it. ``changes`` says, per exposed name, what was done; ``notes`` holds
    run-wide choices (the dotted style falling back to ``_``), so nothing is silent.

    Dotted style for a family that forbids ``.``: ``on_forbidden="reject"`` raises
    :class:`ConfigError`; ``"sanitise"`` (default) uses ``<server>_<tool>`` and says so in
    ``notes``.
    """

    def __init__(
        self,
        pairs: Iterable[tuple[str, str]],
        rules: NameRules | str = "openai",
        *,
        style: Style = "mcp",
        on_forbidden: OnForbidden = "sanitise",
        reserved: Iterable[str] = (),
    ) -> None:
        self.rules = rules_for(rules)
        self.style: Style = "mcp" if style == "prefixed" else style
        self.notes: list[str] = []
        self.changes: dict[str, str] = {}
        unique = sorted(set(pairs))
        for server, tool in unique:
            if not tool or (not server and self.style != "plain"):
                raise ConfigError(f"MCP server and tool names must not be empty: {(server, tool)!r}")
        if style == "dotted" and not self.rules.allows("."):
            rules = self.rules
            message = f"dotted tool names are not allowed by {rules.family} rules ({rules.pattern.pattern})"
            if on_forbidden == "reject":
                raise ConfigError(f"{message}; use style 'mcp' or sanitise")
            self.notes.append(f"{message}: '.' separator and dots in names replaced by '_'")
        self._forward = self._assign(unique, set(reserved))
        self._backward = {name: pair for pair, name in self._forward.items()}

    def raw(self, server: str, tool: str) -> str:
        """The name before sanitising, which scenarios use (:func:`raw_name`)."""
        return raw_name(self.style, server, tool)

    def _assign(self, pairs: list[tuple[str, str]], reserved: set[str]) -> dict[tuple[str, str], str]:
        raw = {pair: self.raw(*pair) for pair in pairs}
        plain = {pair: self.rules.sanitize(name) for pair, name in raw.items()}
        groups: dict[str, list[tuple[str, str]]] = {}
        for pair, name in plain.items():
            groups.setdefault(name, []).append(pair)
        names: dict[tuple[str, str], str] = {}
        reasons: dict[tuple[str, str], list[str]] = {}
        for name, members in groups.items():
            unchanged = [pair for pair in members if raw[pair] == name]
            keeper = unchanged[0] if len(unchanged) == 1 else None
            for pair in members:
                why = reasons[pair] = ["sanitised"] if name != raw[pair] else []
                if len(name) > self.rules.max_len:
                    why.append("truncated")
                if name in reserved:
                    why.append("reserved name")
                elif len(members) > 1 and pair != keeper:
                    why.append("collision")
                keep = why in ([], ["sanitised"])
                names[pair] = name if keep else self._suffixed(name, pair, HASH_LENGTHS[0])
        for length in HASH_LENGTHS[1:]:  # a suffixed name may, very rarely, hit another name
            counts = Counter([*names.values(), *reserved])
            clashing = [pair for pair, name in names.items() if counts[name] > 1 and reasons[pair]]
            if not clashing:
                break
            for pair in clashing:
                names[pair] = self._suffixed(plain[pair], pair, length)
        if len(set(names.values())) != len(names) or set(names.values()) & reserved:
            raise ConfigError("could not give every MCP tool a unique name")  # pragma: no cover
        self.changes = {names[pair]: ", ".join(why) for pair, why in sorted(reasons.items()) if why}
        return names

    def _suffixed(self, name: str, pair: tuple[str, str], length: int) -> str:
        suffix = "_" + name_digest(*pair)[:length]
        return name[: self.rules.max_len - len(suffix)] + suffix

    def exposed(self, server: str, tool: str) -> str:
        """The name the model sees for ``tool`` of ``server``."""
        try:
            return self._forward[(server, tool)]
        except KeyError:
            known = [f"{s}/{t}" for s, t in self._forward]
            raise UnknownNameError("MCP tool", f"{server}/{tool}", known) from None

    def resolve(self, exposed: str) -> tuple[str, str]:
        """``(server, tool)`` for a name the model used; :class:`UnknownNameError` if none."""
        try:
            return self._backward[exposed]
        except KeyError:
            raise UnknownNameError("MCP tool name", exposed, self._backward) from None

    def mapping(self) -> dict[str, tuple[str, str]]:
        """Exposed name -> ``(server, tool)``, for reports and recorded runs."""
        return dict(self._backward)

    def __contains__(self, exposed: object) -> bool:
        return exposed in self._backward

    def __iter__(self) -> Iterator[str]:
        return iter(self._backward)

    def __len__(self) -> int:
        return len(self._backward)


def declared_namer(names: Iterable[str], rules: NameRules | str) -> ToolNamer:
    """The namer of a run's declared tools (style ``"plain"``): each name offered unchanged when
    the provider's rules accept it, else made valid, reversibly. One namer per set of names and
    rules, shared by every run that offers them: read it, never change it."""
    return _declared_namer(tuple(sorted(set(names))), rules)


@functools.lru_cache(maxsize=1024)
def _declared_namer(names: tuple[str, ...], rules: NameRules | str) -> ToolNamer:
    return ToolNamer([("", name) for name in names], rules, style="plain")
