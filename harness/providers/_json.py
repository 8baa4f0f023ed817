"""JSON as a wire parser must take it: bounded depth, valid Unicode, every oddity named.

Python's :mod:`json` accepts things a provider's bytes may hold but the rest of the
harness cannot carry: nesting so deep that decoding (or any later recursive walk: a
``json.dumps``, a deep copy, the results file) overflows the stack, integers too long
to convert, the non-standard ``NaN`` and ``Infinity``, and lone surrogate escapes
(``"\\ud83d"``) that decode to a ``str`` no UTF-8 encoder takes (httpx and the results
file crash on them). :func:`decode` turns each into a :class:`JsonProblem` of a named
kind, or repairs it and says so in :class:`Decoded`, so the adapters can report the
specific finding instead of crashing. Private to :mod:`harness.providers`; no I/O.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

from harness.model import Finding, deviation

MAX_DEPTH = 200
"""Deepest nesting of arrays and objects accepted anywhere on the wire. Real bodies stay
below 20; Python's decoder itself gives up near 1,000, at a depth that depends on the stack."""
SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
REPLACEMENT = "\ufffd"
_fast = msgspec.json.Decoder()
ProblemKind = Literal["syntax", "too_deep", "number"]


class JsonProblem(ValueError):
    """Text that is not JSON the harness can take: ``kind`` is ``syntax`` (not JSON at all),
    ``too_deep`` (nested deeper than :data:`MAX_DEPTH`) or ``number`` (an integer literal too
    long for Python to convert)."""

    def __init__(self, kind: ProblemKind, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass
class Decoded:
    """A decoded value and what was repaired or accepted on the way."""

    value: Any
    repaired: int = 0
    """Strings (values or keys) whose lone surrogates were replaced by U+FFFD."""
    constants: list[str] = field(default_factory=list)
    """The non-standard constants (``NaN``, ``Infinity``, ``-Infinity``) the text used."""


def json_type(value: Any) -> str:
    """The JSON type name of a decoded value (``null``, ``boolean``, ``integer``, ``number``,
    ``string``, ``array``, ``object``), for findings that say what a field held."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def clean_text(text: str) -> tuple[str, int]:
    """``text`` with every lone surrogate (an invalid UTF-8 byte decoded with
    ``surrogateescape``, or a half pair) replaced by U+FFFD, and how many there were."""
    if text.isascii() or SURROGATE.search(text) is None:
        return text, 0
    return SURROGATE.subn(REPLACEMENT, text)


def decode(text: str) -> Decoded:
    """Decode JSON text; raise :class:`JsonProblem` for text the harness cannot take.

    Lone surrogate escapes are repaired (counted in ``repaired``); ``NaN`` and ``Infinity``
    are accepted as Python does, and listed in ``constants``.

    Text nested no deeper than :data:`MAX_DEPTH` goes through msgspec's decoder first (a fifth
    of :mod:`json`'s time on a stream's small chunks). msgspec refuses everything that needs
    the care below (a lone surrogate, raw or escaped, ``NaN``, a number out of range, text that
    is not JSON), and :mod:`json` decides all of that.
    """
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        try:
            return Decoded(_fast.decode(text))
        except (msgspec.MsgspecError, UnicodeEncodeError):  # a raw lone surrogate cannot be encoded
            pass
    constants: list[str] = []

    def constant(name: str) -> float:
        constants.append(name)
        return float(name)

    try:  # the hook costs a decoder per call: only text that may hold a constant pays for it
        constants_possible = "NaN" in text or "Infinity" in text
        value = json.loads(text, parse_constant=constant) if constants_possible else json.loads(text)
    except RecursionError:
        raise JsonProblem("too_deep", f"nested deeper than Python's decoder can go (> {MAX_DEPTH})") from None
    except json.JSONDecodeError as exc:
        raise JsonProblem(
            "syntax", f"{exc.msg}: line {exc.lineno} column {exc.colno} (char {exc.pos})"
        ) from None
    except ValueError as exc:  # an integer literal longer than int() converts (4,300 digits)
        raise JsonProblem("number", f"a number cannot be converted: {exc}") from None
    decoded = Decoded(value, constants=constants)
    deep = text.count("[") + text.count("{") > MAX_DEPTH
    broken = ("\\u" in text and _ESCAPED_SURROGATE.search(text) is not None) or (
        not text.isascii() and SURROGATE.search(text) is not None
    )
    if isinstance(value, str) and broken:  # a bare string: repaired here, no container to repair in
        decoded.value, decoded.repaired = SURROGATE.subn(REPLACEMENT, value)
        decoded.repaired = min(decoded.repaired, 1)
    elif deep or broken:
        decoded.repaired = _walk(value, repair=broken)
    return decoded


def checked(value: Any) -> tuple[Any, int]:
    """An already decoded value (a request body, a value found in model text) checked the way
    :func:`decode` checks text: :class:`JsonProblem` ``too_deep`` when nested deeper than
    :data:`MAX_DEPTH`; lone surrogates repaired in a copy (the value given is never changed),
    with the number of strings repaired."""
    if isinstance(value, str):
        fixed, count = SURROGATE.subn(REPLACEMENT, value)
        return fixed, min(count, 1)
    if _walk(value, repair=False) == 0:
        return value, 0
    fixed = copy.deepcopy(value)  # safe: the walk above bounded the depth
    return fixed, _walk(fixed, repair=True)


def _walk(value: Any, *, repair: bool) -> int:
    """Check the depth of the arrays and objects of ``value`` iteratively and count (and, with
    ``repair``, repair in place) the strings holding lone surrogates; raise ``too_deep`` past
    :data:`MAX_DEPTH`."""
    broken = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise JsonProblem("too_deep", f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, dict):
            bad_keys = [k for k in node if isinstance(k, str) and SURROGATE.search(k)]
            broken += len(bad_keys)
            if bad_keys and repair:
                items = [
                    (SURROGATE.sub(REPLACEMENT, k) if isinstance(k, str) else k, v) for k, v in node.items()
                ]
                node.clear()
                node.update(items)
            children: Any = node.items()
        elif isinstance(node, list):
            children = enumerate(node)
        else:
            continue
        for key, item in list(children):
            if isinstance(item, str):
                if SURROGATE.search(item):
                    broken += 1
                    if repair:
                        node[key] = SURROGATE.sub(REPLACEMENT, item)
            elif isinstance(item, dict | list):
                stack.append((item, depth + 1))
    return broken


def finite(value: Any) -> tuple[Any, list[str]]:
    """``value`` (decoded JSON, its depth already bounded) with every number JSON cannot carry
    replaced by ``None``: NaN, Infinity, and a literal past the range of a double (``1e999``
    decodes to infinity), which no JSON encoder can send back or store. Returns the value (a copy
    when anything was replaced) and the JSON pointers of what was replaced."""
    if isinstance(value, float) and not math.isfinite(value):
        return None, ["/"]
    found: list[tuple[Any, ...]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        node, path = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, item in items:
            if isinstance(item, float) and not math.isfinite(item):
                found.append((*path, key))
            elif isinstance(item, dict | list):
                stack.append((item, (*path, key)))
    if not found:
        return value, []
    fixed = copy.deepcopy(value)  # safe: the depth is bounded
    for *parents, last in found:
        node = fixed
        for key in parents:
            node = node[key]
        node[last] = None
    return fixed, sorted(
        "/" + "/".join(str(k).replace("~", "~0").replace("/", "~1") for k in p) for p in found
    )


def unicode_findings(repaired: int, what: str) -> list[Finding]:
    """``wire.invalid_unicode`` when ``repaired`` strings of ``what`` held lone surrogates."""
    if not repaired:
        return []
    return [
        deviation(
            "invalid_unicode",
            f"{what}: {repaired} string(s) held lone surrogates (invalid UTF-8 or an unpaired "
            "\\ud800-\\udfff escape), which cannot be encoded; replaced with U+FFFD",
        )
    ]


def constant_findings(constants: Sequence[str], what: str) -> list[Finding]:
    """``wire.json_nonstandard_number`` when JSON text used ``NaN`` or ``Infinity`` (not JSON)."""
    if not constants:
        return []
    return [
        deviation(
            "json_nonstandard_number",
            f"{what}: the JSON text uses {sorted(set(constants))}, which JSON does not allow; read as floats",
        )
    ]
