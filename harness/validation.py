"""Tool arguments against the tool's JSON Schema: one validator per schema, shared by the
``protocol.arguments_schema`` check, ``validate_arguments`` tools and vendor verification; and
a schema against the JSON Schema meta-schema and its own ``$ref`` s, shared by the scenario
loader and the providers' declaration checks. Light to import: loading scenarios imports it.

A tool schema's ``$ref`` s are resolved inside the schema only: the validators get an empty
registry, so a remote or ``file://`` reference is never fetched, and :func:`ref_problems`
refuses such a reference (and a dangling or looping one) when the tool is declared."""

from __future__ import annotations

import difflib
import functools
import hashlib
import importlib.util
import json
import os
import pickle
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from importlib import resources
from typing import Any, TypeVar
from urllib.parse import unquote

from harness import cache
from harness.model import canonical

T = TypeVar("T")


def argument_errors(schema: dict[str, Any] | str, arguments: Any, *, formats: bool = True) -> list[Any]:
    """Every way ``arguments`` break a tool's ``schema`` (JSON Schema draft 2020-12; ``format``
    checked too unless ``formats`` is false), as ``jsonschema`` errors in path order (shared:
    read them, never change them). ``schema`` is the schema or its JSON text (a spec's
    ``schema_text``: nothing to encode per call). Validation is a pure function of the schema
    and the arguments' JSON, so each pair is validated once: every target a scenario runs on
    tends to send the same arguments."""
    text = schema if isinstance(schema, str) else canonical(schema)
    try:
        key = json.dumps(arguments)
    except (TypeError, ValueError):  # not JSON (a caller's own value): validated as it is
        return _sorted(_validator(text, formats).iter_errors(arguments))
    return list(_errors(text, formats, key))


@functools.lru_cache(maxsize=4096)
def _errors(schema: str, formats: bool, arguments: str) -> tuple[Any, ...]:
    return tuple(_sorted(_validator(schema, formats).iter_errors(json.loads(arguments))))


def _sorted(errors: Any) -> list[Any]:
    return sorted(errors, key=lambda e: list(e.absolute_path))


@functools.lru_cache(maxsize=1024)
def _validator(schema: str, formats: bool) -> Any:
    from jsonschema import Draft202012Validator
    from referencing import Registry

    checker = Draft202012Validator.FORMAT_CHECKER if formats else None
    return Draft202012Validator(json.loads(schema), format_checker=checker, registry=Registry())


def did_you_mean(word: str, known: Sequence[str], cutoff: float = 0.6) -> str:
    """``"; did you mean 'x'?"`` for the known name closest to a misspelt ``word`` (difflib), or ``""``."""
    near = _closest(word, known, cutoff)
    return f"; did you mean {near!r}?" if near else ""


def _closest(word: str, known: Sequence[str], cutoff: float = 0.6) -> str | None:
    near = difflib.get_close_matches(word, [k for k in known if isinstance(k, str)], n=1, cutoff=cutoff)
    return near[0] if near else None


Explained = tuple[list[str | int], str]


def explain(errors: Iterable[Any]) -> list[Explained]:
    """Each ``jsonschema`` error of a user's file in words, at the field it is about: an unknown
    key at the key itself (with the closest known one), a value outside an enum with the closest
    allowed one, a string too long with its length; a subschema's ``x-why`` (why the rule exists)
    is added to its errors. A required key missing because it is misspelt is one error, the
    misspelling's (``unknown key 'nam'; ...; did you mean 'name'? (it is required)``)."""
    found = [word for error in errors for word in _words(error)]
    missing = {(tuple(path), needs) for path, _, needs, _ in found if needs is not None}
    misspelt = {(tuple(path[:-1]), near) for path, _, _, near in found if near is not None} & missing
    return [
        (path, message + (" (it is required)" if (tuple(path[:-1]), near) in misspelt else ""))
        for path, message, needs, near in found
        if (tuple(path), needs) not in misspelt
    ]


def _words(error: Any) -> Iterator[tuple[list[str | int], str, str | None, str | None]]:
    """One error in words: its path and message, the required key it says is missing, and the
    known key an unknown key is close to (each None when not)."""
    path: list[str | int] = list(error.absolute_path)
    schema: dict[str, Any] = error.schema if isinstance(error.schema, dict) else {}
    value, kind = error.instance, error.validator
    why = f" ({schema['x-why']})" if "x-why" in schema else ""
    if kind == "additionalProperties" and isinstance(value, dict):
        known = list(schema.get("properties", {}))
        patterns = list(schema.get("patternProperties", {}))
        for key in value:
            if key not in known and not any(re.search(p, str(key)) for p in patterns):
                near = _closest(str(key), known)
                hint = f"; did you mean {near!r}?" if near else ""
                yield (
                    [*path, key],
                    f"unknown key {key!r}; known keys here: {', '.join(known) or '(none)'}{hint}",
                    None,
                    near,
                )
    elif kind == "required" and isinstance(value, dict):
        needs = next(
            (k for k in error.validator_value if k not in value and error.message.startswith(repr(k))), None
        )
        yield path, error.message + why, needs, None
    elif kind == "enum" and isinstance(value, str):
        yield path, f"{error.message}{did_you_mean(value, error.validator_value)}{why}", None, None
    elif kind in ("oneOf", "anyOf"):  # the alternatives' own errors say more than "none is valid"
        context = list(error.context or ())
        allowed = [o for sub in context if sub.validator == "enum" for o in sub.validator_value]
        inner = [sub for sub in context if sub.validator not in ("type", "enum", "const")]
        if isinstance(value, str) and allowed:
            choices = ", ".join(map(repr, allowed))
            hint = did_you_mean(value, allowed)
            yield path, f"{value!r} is not one of {choices} (nor another form allowed here){hint}", None, None
        elif inner:
            yield from ((at, message, None, None) for at, message in explain(inner))
        else:
            yield path, error.message + why, None, None
    elif kind == "maxLength" and isinstance(value, str):
        yield path, f"too long: {len(value)} characters, at most {error.validator_value}{why}", None, None
    else:
        yield path, error.message + why, None, None


def judged(kind: str, schema: bytes, item: Any, judge: Callable[[], list[T]]) -> list[T]:
    """``judge()``: what is wrong with ``item`` under ``schema``, not sought again by a later
    command once one found nothing. That verdict is kept in the cache (``<kind>/``), found by the
    schema, the installed jsonschema and ``item`` pickled (its types too: a date is not its
    text), so an unchanged scenario or tool set is not judged at every start: building the
    validators and validating was two thirds of loading the bundled scenarios (0.2 of 0.3 s)."""
    stamp = _jsonschema_stamp()
    try:
        key = stamp + hashlib.sha256(schema).digest() + pickle.dumps(item, protocol=5) if stamp else None
        seen = key is not None and cache.known(kind, key)
    except (pickle.PicklingError, AttributeError, TypeError, ValueError, RuntimeError):
        key, seen = None, False  # not picklable, too deep, or no cache folder (no home): judged
    if seen:
        return []
    found = judge()
    if key is not None and not found:
        cache.note(kind, key)
    return found


JUDGES = ("jsonschema/validators.py", "jsonschema_specifications/_core.py", "referencing/_core.py")
"""What judges a schema: jsonschema, the meta-schemas it ships apart, and its reference resolver."""
FORMAT_PACKAGES = (
    *("fqdn", "idna", "rfc3987", "rfc3986_validator", "rfc3987_syntax", "rfc3339_validator"),
    *("webcolors", "jsonpointer", "uri_template", "isoduration"),
)
"""Packages whose presence adds a ``format`` jsonschema checks (the meta-schema check does)."""


@functools.cache
def _jsonschema_stamp() -> bytes | None:
    """What judged a kept verdict, found without importing it: each of :data:`JUDGES`' size and
    time (a new version is a new file), and which :data:`FORMAT_PACKAGES` are installed. None
    when a judge is not a file (imported from a zip): no verdict is kept then."""
    parts = []
    for judge in JUDGES:
        package, module = judge.split("/")
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.origin:
            return None
        try:
            seen = os.stat(os.path.join(os.path.dirname(spec.origin), module))
        except OSError:
            return None
        parts.append(f"{seen.st_size} {seen.st_mtime_ns}")
    parts += [name for name in FORMAT_PACKAGES if importlib.util.find_spec(name) is not None]
    return (";".join(parts) + "|").encode()


@functools.cache
def bundled_schema_bytes(name: str) -> bytes:
    """``harness/schemas/<name>.schema.json`` as shipped (``scenario``, ``toolset``, ``config``):
    what :func:`judged` keys its verdicts by."""
    return resources.files("harness").joinpath(f"schemas/{name}.schema.json").read_bytes()


@functools.cache
def bundled_schema(name: str) -> dict[str, Any]:
    """A bundled schema, parsed (shared: read it, never change it)."""
    return json.loads(bundled_schema_bytes(name))  # type: ignore[no-any-return]


@functools.cache
def bundled_validator(name: str, definition: str | None = None) -> Any:
    """A draft 2020-12 validator of a bundled schema, or of one of its ``$defs``."""
    import jsonschema

    schema = bundled_schema(name)
    if definition is not None:
        schema = {"$ref": f"#/$defs/{definition}", "$defs": schema["$defs"]}
    return jsonschema.Draft202012Validator(schema)


def in_path_order(errors: Iterable[Any]) -> list[Any]:
    """jsonschema errors sorted by where they are (the order a file lists them in)."""
    return sorted(errors, key=lambda e: [str(p) for p in e.absolute_path])


def draft_2020_12_error(schema: dict[str, Any]) -> Any:
    """The first way ``schema`` breaks the JSON Schema draft 2020-12 meta-schema (a
    ``jsonschema.SchemaError``: read it, never change it), or None. Checked once per schema (by
    its canonical JSON): a declared tool's schema is checked when its scenario loads, then again
    for every Anthropic target, at half a millisecond a check."""
    try:
        text = canonical(schema)
    except (TypeError, ValueError):  # a value JSON cannot hold (a YAML date): checked as it is
        return _check(schema)
    return _meta_error(text)


@functools.lru_cache(maxsize=4096)
def _meta_error(schema_text: str) -> Any:
    def check() -> list[Any]:
        error = _check(json.loads(schema_text))
        return [] if error is None else [error]

    found = judged("schema-meta", b"draft 2020-12", schema_text, check)
    return found[0] if found else None


def _check(schema: Any) -> Any:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        return error
    return None


# -- references -------------------------------------------------------------------------------

_SCHEMA = (
    *("not", "if", "then", "else", "items", "contains", "additionalProperties", "propertyNames"),
    *("unevaluatedItems", "unevaluatedProperties", "additionalItems"),
)
_SCHEMAS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_IN_PLACE = frozenset({"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas"})
"""Keywords whose subschemas apply to the same value (no step into it): a ``$ref`` cycle through
them alone never ends."""

Path = tuple[str | int, ...]


def _subschemas(schema: dict[str, Any], at: Path) -> Iterator[tuple[Path, Any, bool]]:
    """Each subschema of ``schema`` (at ``at``): its path, itself, and whether it applies to the
    same value (``allOf``...) rather than to a part of it (``properties``...)."""
    for key, value in schema.items():
        in_place = key in _IN_PLACE
        if key in _SCHEMA and isinstance(value, dict | bool):
            yield (*at, key), value, in_place
        elif key in _SCHEMAS and isinstance(value, list):
            yield from (((*at, key, i), item, in_place) for i, item in enumerate(value))
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            yield from (((*at, key, name), item, in_place) for name, item in value.items())


def _target(root: Any, ref: str, anchors: dict[str, Path]) -> Path | None:
    """The path of the schema a local ``$ref`` (``#/$defs/x``, ``#name``) names, or None."""
    fragment = unquote(ref[1:])
    if fragment and not fragment.startswith("/"):
        return anchors.get(fragment)
    node, path = root, []
    for raw in fragment.split("/")[1:] if fragment else []:
        part = raw.replace("~1", "/").replace("~0", "~")
        step: str | int = int(part) if isinstance(node, list) and part.isdigit() else part
        if (isinstance(node, dict) and step in node) or (isinstance(step, int) and step < len(node)):
            node = node[step]
        else:
            return None
        path.append(step)
    return tuple(path) if isinstance(node, dict | bool) else None


def ref_problems(schema: Any) -> list[tuple[Path, str]]:
    """Every ``$ref`` of a tool's JSON Schema that validation could not follow, each with the path
    of the ``$ref`` and what is wrong: one naming a file or a URL (never fetched), one pointing
    nowhere in the schema, and a loop of references that never steps into the value (``x`` ->
    ``y`` -> ``x``; recursion through ``properties`` or ``items`` is fine). Without them every
    run of the tool would end in the validator's internal error."""
    nodes: dict[Path, dict[str, Any]] = {}
    pending: list[tuple[Path, Any]] = [((), schema)]
    while pending:  # every schema object reachable by keywords (no recursion: depth costs no stack)
        at, node = pending.pop()
        if isinstance(node, dict) and at not in nodes:
            nodes[at] = node
            pending.extend((path, sub) for path, sub, _ in _subschemas(node, at))
    anchors = {
        node[key]: at
        for at, node in nodes.items()
        for key in ("$anchor", "$dynamicAnchor")
        if isinstance(node.get(key), str)
    }
    problems: list[tuple[Path, str]] = []
    edges: dict[Path, list[Path]] = {at: [] for at in nodes}
    for at in sorted(nodes, key=lambda p: [str(x) for x in p]):
        node = nodes[at]
        edges[at] += [
            path for path, sub, in_place in _subschemas(node, at) if in_place and isinstance(sub, dict)
        ]
        for key in ("$ref", "$dynamicRef"):
            ref = node.get(key)
            if not isinstance(ref, str):
                continue
            if not ref.startswith("#"):
                problems.append(
                    (
                        (*at, key),
                        f"{ref!r} is not inside this schema: only local references "
                        "('#/$defs/<name>') are resolved; the harness never fetches a file or a URL",
                    )
                )
                continue
            target = _target(schema, ref, anchors)
            if target is None:
                problems.append(((*at, key), f"{ref!r} points to nothing in this schema"))
            else:
                edges[at].append(target)
    problems += _ref_loops(nodes, edges)
    return problems


def _ref_loops(nodes: dict[Path, dict[str, Any]], edges: dict[Path, list[Path]]) -> list[tuple[Path, str]]:
    """Each loop of ``$ref`` s (through in-place keywords) that validation would follow forever,
    reported once at the ``$ref`` that closes it."""
    state: dict[Path, int] = {}  # 1: on the current walk, 2: done
    loops: list[tuple[Path, str]] = []
    for start in edges:
        if start in state:
            continue
        walk: list[Path] = [start]
        todo: list[Iterator[Path]] = [iter(edges[start])]
        state[start] = 1
        while todo:
            step = next(todo[-1], None)
            if step is None:
                state[walk.pop()] = 2
                todo.pop()
            elif state.get(step) == 1:
                cycle = walk[walk.index(step) :]
                hops = " -> ".join("#" + "".join(f"/{p}" for p in node) for node in [*cycle, step])
                refs = [
                    (n, k) for n in reversed(cycle) for k in ("$ref", "$dynamicRef") if k in nodes.get(n, {})
                ]
                closing, key = refs[0]  # a loop holds a reference: keywords alone make a tree
                loops.append(((*closing, key), f"references loop without end: {hops}"))
            elif step not in state:
                state[step] = 1
                walk.append(step)
                todo.append(iter(edges.get(step, [])))
    return loops
