"""What a provider, a tool or an MCP server sent, made fit for every report: shown, never obeyed.

Any string a run records may hold characters no report can carry as they are: lone surrogates
(a ``"\\ud83d"`` escape decodes to one; no UTF-8 encoder takes it), NUL and the other control
characters (XML 1.0 cannot hold them; an ANSI escape would drive the reader's terminal), and
any value may nest deeper than a writer can walk. Every writer passes such data through here:

- :func:`visible` writes each such character as its escape (``\\x1b``, ``\\ud83d``), so the
  report shows what came and stays valid UTF-8, XML and terminal text;
- :func:`encodable` and :func:`json_safe` do the same to the lone surrogates of a string or of
  JSON data (the JSON encoder escapes control characters itself), and :func:`encode` encodes
  report data with them when it must;
- :func:`bounded` replaces arrays and objects nested deeper than :data:`DEPTH_LIMIT` with a
  sentence saying so (real bodies nest below 20).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

import msgspec

DEPTH_LIMIT = 64
"""Levels of arrays and objects a report shows; anything deeper is elided, saying so."""

INVISIBLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
"""Characters a report writes as escapes: the C0 controls but tab, line feed and carriage return
(none is allowed in XML 1.0; ESC starts ANSI sequences), DEL and the C1 controls (CSI, U+009B,
is an ESC [ to many terminals), lone surrogates, and the non-characters U+FFFE and U+FFFF."""
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every :data:`INVISIBLE` character written as its escape (``\\x00``,
    ``\\x1b``, ``\\ud83d``): valid in UTF-8, XML 1.0 and HTML, inert in a terminal, and still
    saying what the provider sent.

    Example::

        assert visible("a\\x1b[31m\\ud83d") == "a\\\\x1b[31m\\\\ud83d"
    """
    return text if INVISIBLE.search(text) is None else INVISIBLE.sub(_escape, text)


def encodable(text: str) -> str:
    """``text`` with every lone surrogate written as its escape (``\\ud83d``), the way a file
    opened with ``errors="backslashreplace"`` writes it: the only characters UTF-8 cannot hold."""
    return text if text.isascii() or _SURROGATE.search(text) is None else _SURROGATE.sub(_escape, text)


def json_safe(value: Any) -> Any:
    """JSON data (nested no deeper than :func:`bounded` leaves it) with :func:`encodable`
    strings, keys too: what a JSON encoder can write as UTF-8. Other characters stay as they
    are (JSON escapes control characters)."""
    return strings_mapped(value, encodable)


def strings_mapped(value: Any, change: Callable[[str], str]) -> Any:
    """JSON data with ``change`` applied to every string, keys too (tuples become lists)."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {strings_mapped(k, change): strings_mapped(v, change) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [strings_mapped(v, change) for v in value]
    return value


def bounded(value: Any, limit: int = DEPTH_LIMIT) -> Any:
    """``value`` with every array or object nested more than ``limit`` levels deep replaced by a
    sentence saying so (a copy; tuples become lists, as in JSON). Walks no deeper than ``limit``,
    whatever the depth of ``value``."""

    def walk(node: Any, depth: int) -> Any:
        if not isinstance(node, dict | list | tuple):
            return node
        if depth == limit:
            return elided(node, limit)
        if isinstance(node, dict):
            return {k: walk(v, depth + 1) for k, v in node.items()}
        return [walk(v, depth + 1) for v in node]

    return walk(value, 0)


def elided(node: dict[Any, Any] | list[Any] | tuple[Any, ...], limit: int = DEPTH_LIMIT) -> str:
    """What a report shows in place of an array or object nested deeper than ``limit``."""
    kind = "an object" if isinstance(node, dict) else "an array"
    return f"<{kind} nested deeper than {limit} levels: not shown>"


def encode(value: Any, order: Literal["sorted"] | None = None) -> bytes:
    """Report data (a typed report section, or plain JSON data) as compact JSON (keys in
    ``order``), whatever its strings: when one holds a lone surrogate (which UTF-8 cannot
    encode), the data is encoded again as plain data with :func:`json_safe` strings."""
    try:
        return msgspec.json.encode(value, order=order, enc_hook=spooled)
    except UnicodeEncodeError:
        return msgspec.json.encode(json_safe(msgspec.to_builtins(value, enc_hook=spooled)), order=order)


def spooled(value: Any) -> Any:
    """A spooled report section as the dict (:class:`~harness.reports.spool.KeyedSpool`) or list
    (:class:`~harness.reports.spool.Spool`) it stands for, for msgspec to encode; every other type
    msgspec cannot encode (a spool of runs among them: read a run at a time, never made a list) is
    an error."""
    from harness.reports.spool import RunSpool, Spool  # which imports this module

    if isinstance(value, Mapping):
        return dict(value.items())
    if isinstance(value, Spool) and not isinstance(value, RunSpool):
        return list(value)
    raise NotImplementedError(f"cannot encode {type(value).__name__}")
