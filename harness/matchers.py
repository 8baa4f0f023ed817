"""Argument and text matchers for scenario expectations.

A value in an ``expect`` block is either a literal (matched exactly: scalars,
lists, and dicts that are not matchers) or a one-key dict naming a matcher::

    {exact: V}          equal to V (use it for a literal dict whose key looks like a matcher)
    {contains: S}       string containing S (case-insensitive), or list containing S
    {contains_any: [..]} / {contains_all: [..]} / {not_contains: S}
    {regex: P}          string matching the Python regex P (re.search)
    {type: T}           JSON type: string, integer, number, boolean, object, array, null
    {any_of: [M, ..]}   at least one of the matchers
    {subset: {..}}      an object having at least these keys, each matching
    {any: true}         anything (the key must be present)

Top-level call arguments are matched as a subset (extra arguments allowed)
unless the scenario says ``args_exact: true``. Each matcher explains a
mismatch in words; :func:`example` builds a value that matches, which the
reference simulator uses to answer like a conformant model.
"""

from __future__ import annotations

import re
import re._constants as sre_constants  # type: ignore[import-not-found]  # public sre_* is deprecated
import re._parser as sre_parse  # type: ignore[import-not-found]
from collections.abc import Callable
from typing import Any

JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}
MATCHERS = frozenset(
    {
        "exact",
        "contains",
        "contains_any",
        "contains_all",
        "not_contains",
        "regex",
        "type",
        "any_of",
        "subset",
        "any",
    }
)


def is_matcher(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in MATCHERS


def _text(value: Any) -> str | None:
    return value.lower() if isinstance(value, str) else None


def _contains(haystack: Any, needle: Any) -> bool:
    if isinstance(haystack, str):
        return isinstance(needle, str) and needle.lower() in haystack.lower()
    if isinstance(haystack, list):
        return any(match(needle, item) == [] for item in haystack)
    return False


def match(expected: Any, actual: Any, path: str = "$") -> list[str]:
    """Every reason ``actual`` does not match ``expected`` (empty when it matches)."""
    if not is_matcher(expected):
        if isinstance(expected, dict):
            if not isinstance(actual, dict):
                return [f"{path}: expected an object, got {actual!r}"]
            problems = [f"{path}: unexpected key {k!r}" for k in actual if k not in expected]
            return problems + subset(expected, actual, path)
        if isinstance(expected, list):
            if not isinstance(actual, list) or len(actual) != len(expected):
                return [f"{path}: expected a list of {len(expected)}, got {actual!r}"]
            return [
                p
                for i, (e, a) in enumerate(zip(expected, actual, strict=True))
                for p in match(e, a, f"{path}[{i}]")
            ]
        if (expected == actual and type(expected) is type(actual)) or (
            isinstance(expected, int | float)
            and isinstance(actual, int | float)
            and not isinstance(expected, bool)
            and not isinstance(actual, bool)
            and expected == actual
        ):
            return []
        return [f"{path}: expected {expected!r}, got {actual!r}"]
    ((kind, operand),) = expected.items()
    if kind == "exact":
        return (
            []
            if actual == operand and type(actual) is type(operand)
            else [f"{path}: expected exactly {operand!r}, got {actual!r}"]
        )
    if kind == "contains":
        return (
            [] if _contains(actual, operand) else [f"{path}: expected to contain {operand!r}, got {actual!r}"]
        )
    if kind == "contains_any":
        return (
            []
            if any(_contains(actual, o) for o in operand)
            else [f"{path}: expected to contain one of {operand!r}, got {actual!r}"]
        )
    if kind == "contains_all":
        missing = [o for o in operand if not _contains(actual, o)]
        return [] if not missing else [f"{path}: missing {missing!r} in {actual!r}"]
    if kind == "not_contains":
        return [f"{path}: must not contain {operand!r}, got {actual!r}"] if _contains(actual, operand) else []
    if kind == "regex":
        if isinstance(actual, str) and re.search(operand, actual):
            return []
        return [f"{path}: expected to match /{operand}/, got {actual!r}"]
    if kind == "type":
        types = operand if isinstance(operand, list) else [operand]
        return (
            []
            if any(JSON_TYPES[t](actual) for t in types)
            else [f"{path}: expected type {operand}, got {type(actual).__name__} {actual!r}"]
        )
    if kind == "any_of":
        return (
            []
            if any(match(o, actual, path) == [] for o in operand)
            else [f"{path}: matches none of {operand!r}, got {actual!r}"]
        )
    if kind == "subset":
        if not isinstance(actual, dict):
            return [f"{path}: expected an object, got {actual!r}"]
        return subset(operand, actual, path)
    return []  # {any: true}: presence is checked by the caller


def subset(expected: dict[str, Any], actual: dict[str, Any], path: str = "$") -> list[str]:
    """Each expected key present in ``actual`` and matching; other keys allowed."""
    problems: list[str] = []
    for key, value in expected.items():
        if key not in actual:
            problems.append(f"{path}.{key}: missing (expected {value!r})")
        else:
            problems.extend(match(value, actual[key], f"{path}.{key}"))
    return problems


def args_match(expected: dict[str, Any], actual: dict[str, Any] | None, *, exact: bool = False) -> list[str]:
    """Match a call's arguments: a subset by default, every key when ``exact``."""
    if actual is None:
        return ["$: arguments could not be parsed"]
    return match(expected, actual) if exact else subset(expected, actual)


def check_matcher(expected: Any) -> list[str]:
    """Problems with a matcher itself (bad regex, unknown type), for scenario validation."""
    problems: list[str] = []
    if is_matcher(expected):
        ((kind, operand),) = expected.items()
        if kind == "regex":
            try:
                re.compile(operand)
            except re.error as exc:
                problems.append(f"invalid regex {operand!r}: {exc}")
        elif kind == "type":
            for name in operand if isinstance(operand, list) else [operand]:
                if name not in JSON_TYPES:
                    problems.append(f"unknown type {name!r}; known: {', '.join(JSON_TYPES)}")
        elif kind in ("contains_any", "contains_all", "any_of") and not isinstance(operand, list):
            problems.append(f"{kind} takes a list")
        elif kind == "subset" and not isinstance(operand, dict):
            problems.append("subset takes an object")
        operands = operand if isinstance(operand, list) else [operand]
        if kind in ("any_of",):
            problems.extend(p for o in operands for p in check_matcher(o))
        if kind == "subset" and isinstance(operand, dict):
            problems.extend(p for o in operand.values() for p in check_matcher(o))
    elif isinstance(expected, dict):
        problems.extend(p for o in expected.values() for p in check_matcher(o))
    elif isinstance(expected, list):
        problems.extend(p for o in expected for p in check_matcher(o))
    return problems


# -- examples: a value that matches, for the reference simulator -------------

_TYPE_EXAMPLES: dict[str, Any] = {
    "string": "example",
    "integer": 1,
    "number": 1,
    "boolean": True,
    "object": {},
    "array": [],
    "null": None,
}


def example(expected: Any) -> Any:
    """A value that matches ``expected`` (deterministic)."""
    if not is_matcher(expected):
        if isinstance(expected, dict):
            return {k: example(v) for k, v in expected.items()}
        if isinstance(expected, list):
            return [example(v) for v in expected]
        return expected
    ((kind, operand),) = expected.items()
    if kind == "exact":
        return operand
    if kind in ("contains", "contains_any"):
        first = operand if kind == "contains" else operand[0]
        return first
    if kind == "contains_all":
        return " ".join(str(o) for o in operand)
    if kind == "not_contains":
        return ""
    if kind == "regex":
        return regex_example(operand)
    if kind == "type":
        return _TYPE_EXAMPLES[operand[0] if isinstance(operand, list) else operand]
    if kind == "any_of":
        return example(operand[0])
    if kind == "subset":
        return {k: example(v) for k, v in operand.items()}
    return "any"


def regex_example(pattern: str) -> str:
    """The shortest simple string matching ``pattern`` (literals, classes, repeats, groups, branches)."""
    value = _emit(sre_parse.parse(pattern))
    if not re.search(pattern, value):
        raise ValueError(f"cannot build an example for regex {pattern!r}")
    return value


def _emit(parsed: Any) -> str:
    out = []
    for op, arg in parsed:
        if op is sre_constants.LITERAL:
            out.append(chr(arg))
        elif op is sre_constants.IN:
            out.append(_emit_class(arg))
        elif op is sre_constants.ANY:
            out.append("x")
        elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
            low, _high, item = arg
            out.append(_emit(item) * low)
        elif op is sre_constants.SUBPATTERN:
            out.append(_emit(arg[-1]))
        elif op is sre_constants.BRANCH:
            out.append(_emit(arg[1][0]))
        elif op is sre_constants.AT:
            continue
        else:
            raise ValueError(f"unsupported regex construct {op}")
    return "".join(out)


def _emit_class(items: Any) -> str:
    for op, arg in items:
        if op is sre_constants.LITERAL:
            return chr(arg)
        if op is sre_constants.RANGE:
            return chr(arg[0])
        if op is sre_constants.CATEGORY:
            return {sre_constants.CATEGORY_DIGIT: "0", sre_constants.CATEGORY_SPACE: " "}.get(arg, "a")
    raise ValueError("unsupported character class")
