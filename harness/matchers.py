"""Argument and text matchers for scenario expectations.

A value in an ``expect`` block is either a literal (matched exactly: scalars,
lists, and dicts that are not matchers) or a one-key dict naming a matcher::

    {exact: V}          equal to V (use it for a literal dict whose key looks like a matcher)
    {contains: S}       string containing S (case-insensitive), or list containing S
    {contains_any: [..]} / {contains_all: [..]} / {not_contains: S}
    {regex: P}          string matching the Python regex P (re.search; see below)
    {type: T}           JSON type: string, integer, number, boolean, object, array, null
    {any_of: [M, ..]}   at least one of the matchers
    {subset: {..}}      an object having at least these keys, each matching
    {any: true}         anything (the key must be present)
    {bfcl: {values: [..], type: T, items: T, required: B}}
                        BFCL's possible-answer semantics for one argument (see below)

Top-level call arguments are matched as a subset (extra arguments allowed)
unless the scenario says ``args_exact: true``. Each matcher explains a
mismatch in words; :func:`example` builds a value that matches, which the
reference simulator uses to answer like a conformant model.

A ``regex`` is written in Python's ``re`` syntax and checked when the scenario loads; it
is matched by the ``regex`` engine (PyPI), which can stop a match: a pattern that
backtracks without end (``^(a|a)+$`` against 40 ``a`` and a ``!``) is stopped after
:data:`REGEX_TIMEOUT_S` and reported as a mismatch saying so, never a hang.

``bfcl`` is exactly what BFCL's AST checker (``bfcl_eval/eval_checker/ast_eval/
ast_checker.py``, Python categories) does with one parameter of a possible answer:
``values`` lists every acceptable value and ``""`` among them means the argument may be
left out (unless ``required``: BFCL checks the function's required parameters first);
``type`` is the parameter's type in BFCL's function-doc dialect (``string``, ``integer``,
``float``, ``boolean``, ``array``, ``tuple``, ``dict``, ``any``) and ``items`` the type of
an array's items. The value must have that type (an int is taken for a ``float``; ``any``
is a string, as BFCL checks it), or the type of the first listed value (BFCL's "variable"
answers); strings, strings in lists and in dicts are compared after BFCL's normalisation
(:func:`bfcl_normalize`); dicts key by key, lists of dicts item by item.
"""

from __future__ import annotations

import difflib
import functools
import re
import re._constants as sre_constants  # type: ignore[import-not-found]  # public sre_* is deprecated
import re._parser as sre_parse  # type: ignore[import-not-found]
from collections.abc import Callable, Iterator
from typing import Any

REGEX_TIMEOUT_S = 1.0
"""Longest one ``regex`` matcher may take on one value: a scenario's pattern meets text a model
wrote, and a pattern that backtracks catastrophically would otherwise never return."""

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
        "bfcl",
    }
)


def is_matcher(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in MATCHERS


@functools.lru_cache(maxsize=1024)
def compile_regex(pattern: str) -> Any:
    """``pattern`` compiled for matching (once); ``re.error`` when it is not a valid Python regex
    (the ``re`` syntax scenarios are written in, which the engine must take too)."""
    import regex  # imported on the first pattern: most runs have none

    re.compile(pattern)
    try:
        return regex.compile(pattern)
    except regex.error as exc:
        raise re.error(f"{exc} (the regex engine refuses it)", pattern) from None


def regex_search(pattern: str, text: str) -> bool | None:
    """Whether ``pattern`` matches somewhere in ``text`` (``re.search``), or ``None`` when the match
    was stopped after :data:`REGEX_TIMEOUT_S`."""
    try:
        return compile_regex(pattern).search(text, timeout=REGEX_TIMEOUT_S) is not None
    except TimeoutError:
        return None


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


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
        found = regex_search(operand, actual) if isinstance(actual, str) else False
        if found is None:
            return [
                f"{path}: matching /{operand}/ was stopped after {REGEX_TIMEOUT_S:g} s (the pattern "
                f"backtracks without end on this text), so it does not match: {_short(actual)}"
            ]
        return [] if found else [f"{path}: expected to match /{operand}/, got {actual!r}"]
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
    if kind == "bfcl":
        return bfcl_problems(operand, actual, path)
    return []  # {any: true}: presence is checked by the caller


def subset(expected: dict[str, Any], actual: dict[str, Any], path: str = "$") -> list[str]:
    """Each expected key present in ``actual`` and matching; other keys allowed."""
    problems: list[str] = []
    for key, value in expected.items():
        if key not in actual:
            if not bfcl_may_omit(value):
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
            if not isinstance(operand, str):
                problems.append(f"regex takes a string (a Python regex), got {operand!r}")
            else:
                try:
                    compile_regex(operand)
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
        elif kind == "bfcl":
            problems.extend(bfcl_operand_problems(operand))
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
            return _example_object(expected)
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
        return _example_object(operand)
    if kind == "bfcl":
        return bfcl_example(operand)
    return "any"


def _example_object(expected: dict[str, Any]) -> dict[str, Any]:
    """An object matching ``expected``'s keys; an argument whose only right answer is to be
    left out (a ``bfcl`` matcher listing nothing but ``""``) is left out."""
    return {key: example(value) for key, value in expected.items() if not _only_omission(value)}


def regex_example(pattern: str) -> str:
    """The shortest simple string matching ``pattern`` (literals, classes, repeats, groups, branches)."""
    value = _emit(sre_parse.parse(pattern))
    if not regex_search(pattern, value):
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


# -- bfcl: BFCL's possible-answer semantics for one argument --------------------

BFCL_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
}
"""The Python type BFCL's checker wants for each type of its function-doc dialect
(``PYTHON_TYPE_MAPPING`` in ``ast_checker.py``): ``any`` is checked as a string and a
``tuple`` as a list (JSON has no tuples)."""

_BFCL_KEYS = {"values": list, "type": str, "items": str, "required": bool}
_BFCL_STRIPPED = re.compile(r"[ ,./\-_*^]")


def bfcl_normalize(text: str) -> str:
    """BFCL's ``standardize_string``: ASCII spaces and ``,./-_*^`` removed, lower-cased, and
    ``'`` turned into ``"``. Tabs and newlines stay: BFCL keeps them, so ``"New\\tYork"`` is not
    ``"new york"``. BFCL applies it so that "April 1, 2024" and "april 1 2024" both count."""
    return _BFCL_STRIPPED.sub("", text).lower().replace("'", '"')


def _bfcl_operand(value: Any) -> dict[str, Any] | None:
    """The operand of a ``bfcl`` matcher, or None when ``value`` is not one."""
    if is_matcher(value) and "bfcl" in value and isinstance(value["bfcl"], dict):
        operand: dict[str, Any] = value["bfcl"]
        return operand
    return None


def bfcl_may_omit(expected: Any) -> bool:
    """Whether an argument matched by ``expected`` may be left out of a call: a ``bfcl``
    matcher listing ``""`` that is not ``required`` (BFCL refuses a call missing a required
    parameter before it looks at the possible answer)."""
    operand = _bfcl_operand(expected)
    if operand is None or not isinstance(operand.get("values"), list):
        return False
    return "" in operand["values"] and not operand.get("required", False)


def _only_omission(expected: Any) -> bool:
    """A ``bfcl`` matcher whose one right answer is to leave the argument out."""
    operand = _bfcl_operand(expected)
    return bfcl_may_omit(expected) and operand is not None and all(v == "" for v in operand["values"])


def bfcl_operand_problems(operand: Any) -> list[str]:
    """What is wrong with a ``bfcl`` matcher's operand, for scenario validation."""
    if not isinstance(operand, dict):
        return [
            "bfcl takes an object: {values: [...], type: <BFCL type>, items?: <BFCL type>, required?: bool}"
        ]
    problems = [
        f"bfcl: unknown key {key!r}; known: {', '.join(_BFCL_KEYS)}"
        for key in operand
        if key not in _BFCL_KEYS
    ]
    for key in ("values", "type"):
        if key not in operand:
            problems.append(f"bfcl needs {key!r}")
    for key, kind in _BFCL_KEYS.items():
        if key in operand and not isinstance(operand[key], kind):
            problems.append(f"bfcl: {key!r} must be a {kind.__name__}, got {operand[key]!r}")
    for key in ("type", "items"):
        if isinstance(operand.get(key), str) and operand[key] not in BFCL_TYPES:
            problems.append(f"bfcl: unknown {key} {operand[key]!r}; BFCL's types: {', '.join(BFCL_TYPES)}")
    return problems


def bfcl_problems(operand: dict[str, Any], actual: Any, path: str = "$") -> list[str]:
    """Why ``actual`` is not an acceptable value of one BFCL parameter (empty when it is).

    The steps of BFCL's ``simple_function_checker`` for one parameter, in its order: an int
    where a float is wanted becomes a float; the type check (:func:`_bfcl_type`); then the
    value among ``values``, normalised for strings, key by key for dicts, item by item for
    lists of dicts, and plain Python ``in`` otherwise (so ``5.0`` equals ``5``)."""
    malformed = bfcl_operand_problems(operand)
    if malformed:
        return [f"{path}: {problem}" for problem in malformed]
    values: list[Any] = operand["values"]
    kind: str = operand["type"]
    wanted = BFCL_TYPES[kind]
    items = BFCL_TYPES.get(operand.get("items", "")) if kind in ("array", "tuple") else None
    value = float(actual) if kind == "float" and type(actual) is int else actual
    typed, variable = _bfcl_type(value, values, wanted, items)
    if not typed:
        shown = f"{kind} of {operand['items']}" if items is not None else kind
        return [f"{path}: expected BFCL type {shown}, got {type(actual).__name__} {actual!r}"]
    if _bfcl_value_ok(value, values, wanted, items, variable):
        return []
    return [f"{path}: {actual!r} is none of BFCL's acceptable values {values!r}"]


def _bfcl_type(value: Any, values: list[Any], wanted: type, items: type | None) -> tuple[bool, bool]:
    """BFCL's ``type_checker``: (type is right, the answer is a "variable").

    The value has the wanted type (each item of a list the items' type, against at least one
    listed list), or else the type of the first listed value other than ``""``: BFCL then takes
    the answer for a variable name and compares it as it is."""
    listed = next((type(v) for v in values if v != ""), None)
    variable = listed is not None and listed is not wanted
    same = type(value) is wanted  # kept apart: `type(x) is t` would narrow value to object
    if same:
        return (items is None or _bfcl_items_typed(value, values, items)), variable
    if listed is not None and type(value) is listed:
        return True, True
    return False, False


def _bfcl_items_typed(value: list[Any], values: list[Any], items: type) -> bool:
    """BFCL's one-level check of a list's items: each item has the items' type (or the type of
    the first value of a listed list), against at least one listed list; a listed value that is
    no list (``""``) lets any list through, as in BFCL."""
    return any(
        type(option) is not list or all(_bfcl_type(item, option, items, None)[0] for item in value)
        for option in values
    )


def _bfcl_value_ok(value: Any, values: list[Any], wanted: type, items: type | None, variable: bool) -> bool:
    """BFCL's value comparison once the type is right (a variable is compared as it is)."""
    if not variable:
        if wanted is dict:
            return any(_bfcl_dict_fits(value, option) for option in values if option != "")
        if wanted is list and items is dict:
            return any(_bfcl_dicts_fit(value, option) for option in values)
        if wanted is str:
            return bfcl_normalize(value) in [bfcl_normalize(v) for v in values if type(v) is str]
        if wanted is list:
            return _bfcl_list(value) in [
                _bfcl_list(option) for option in values if isinstance(option, list | str)
            ]
    return value in values


def _bfcl_list(items: Any) -> list[Any]:
    """A list with its strings normalised (BFCL's ``list_checker``; a listed string is taken
    character by character, and ``""`` as the empty list, as BFCL's indexing does)."""
    return [bfcl_normalize(item) if type(item) is str else item for item in items]


def _bfcl_dict_fits(value: dict[str, Any], option: Any) -> bool:
    """BFCL's ``dict_checker`` for one listed dict ``{key: [acceptable values]}``: no key
    beyond the listed ones, each value acceptable (strings normalised), and a listed key
    missing only if its values hold ``""``."""
    if not isinstance(value, dict) or not isinstance(option, dict):
        return False
    for key, item in value.items():
        if key not in option or not isinstance(option[key], list | str):
            return False
        if (bfcl_normalize(item) if type(item) is str else item) not in _bfcl_list(option[key]):
            return False
    return all(
        key in value or (isinstance(accepted, list | str) and "" in accepted)
        for key, accepted in option.items()
    )


def _bfcl_dicts_fit(value: list[Any], option: Any) -> bool:
    """BFCL's ``list_dict_checker`` for one listed list of dicts: as many dicts, each fitting
    the one at its place."""
    if not isinstance(option, list | str) or len(value) != len(option):
        return False
    return all(
        option_item != "" and _bfcl_dict_fits(item, option_item)
        for item, option_item in zip(value, option, strict=True)
    )


def bfcl_example(operand: dict[str, Any]) -> Any:
    """A value BFCL accepts for this parameter: the first listed value other than ``""``, with
    a listed dict's own lists of acceptable values resolved the same way."""
    value = next((v for v in operand.get("values", []) if v != ""), "")
    if operand.get("type") == "dict" and isinstance(value, dict):
        return _bfcl_dict_example(value)
    if operand.get("items") == "dict" and isinstance(value, list):
        return [_bfcl_dict_example(item) if isinstance(item, dict) else item for item in value]
    return value


def _bfcl_dict_example(option: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, accepted in option.items():
        chosen = [v for v in accepted if v != ""] if isinstance(accepted, list) else [accepted]
        if chosen:
            found[key] = chosen[0]
    return found


# -- problems of an expectation's matchers, found when a scenario loads -----------------------


def matcher_problems(expected: Any, schema: Any = None) -> Iterator[tuple[list[str | int], str]]:
    """Problems with an expectation's matchers, each with its path inside ``expected``: what
    :func:`~harness.matchers.check_matcher` finds (at the matcher), a one-key object whose key is
    close to a matcher's name (``regexp``: did you mean ``regex``?), and a literal object where
    the tool's schema expects no object."""
    yield from _matchers_in(expected, [])
    yield from _literal_problems(expected, schema, [])


def _matchers_in(value: Any, at: list[str | int]) -> Iterator[tuple[list[str | int], str]]:
    if is_matcher(value):
        yield from ((at, problem) for problem in check_matcher(value))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _matchers_in(item, [*at, key])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _matchers_in(item, [*at, index])


def _literal_problems(value: Any, schema: Any, at: list[str | int]) -> Iterator[tuple[list[str | int], str]]:
    if not isinstance(value, dict) or is_matcher(value):
        if is_matcher(value):
            ((kind, operand),) = value.items()
            if kind == "subset" and isinstance(operand, dict):
                yield from _literal_problems(operand, schema, at)
            elif kind == "any_of" and isinstance(operand, list):
                for option in operand:
                    yield from _literal_problems(option, schema, at)
        return
    if len(value) == 1:
        (key,) = value
        near = difflib.get_close_matches(str(key), sorted(MATCHERS), n=1, cutoff=0.75)
        if near:
            yield (
                at,
                f"unknown matcher {key!r}; did you mean {near[0]!r}? (for a literal object with this key, "
                f"write {{exact: {{{key}: ...}}}})",
            )
            return
    if isinstance(schema, dict) and "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if "object" not in types:
            yield (
                at,
                f"a literal object where the tool's schema expects {' or '.join(types)}: {value!r}; "
                f"matchers are {', '.join(sorted(MATCHERS))}",
            )
            return
    properties = schema.get("properties", {}) if isinstance(schema, dict) else {}
    for key, item in value.items():
        yield from _literal_problems(item, properties.get(key), [*at, key])


def exact_literal(value: Any) -> tuple[bool, Any]:
    """``(True, v)`` when ``value`` asks for exactly ``v`` (a literal, or ``{exact: v}``), else
    ``(False, None)`` (a matcher somewhere in it)."""
    if is_matcher(value):
        ((kind, operand),) = value.items()
        return (True, operand) if kind == "exact" else (False, None)
    if isinstance(value, dict | list):
        parts = [exact_literal(v) for v in (value.values() if isinstance(value, dict) else value)]
        if not all(exact for exact, _ in parts):
            return False, None
        literals = [v for _, v in parts]
        return True, dict(zip(value, literals, strict=True)) if isinstance(value, dict) else literals
    return True, value
