"""Reading recording files (cassettes, and the MCP recordings beside them): bounded, guarded,
checked for the shape playback reads.

A recording is untrusted input like any file a user hands the harness, so reading one never
hangs, never runs away and never ends in a traceback: a FIFO or a device is refused before it is
opened for reading, a file past :data:`MAX_RECORDING_BYTES` before and while it is read, YAML
that nests too deep or expands too far (an alias bomb) once parsed, and a field playback would
trip over (``body.string: 5``) before any run uses it. Each refusal is a
:class:`~harness.errors.CassetteCorruptError` naming the file, the line where known, and what
is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness.cache import Refused, parsed
from harness.errors import CassetteCorruptError

MAX_RECORDING_BYTES = 128 * 1024 * 1024
"""Largest recording file read (a cassette, an MCP recording): room for four bodies of
:data:`harness.transport.send.MAX_RESPONSE_BYTES` each. Checked before reading and while reading."""
OVER_LIMIT_KEY = "over_limit"
"""In a recorded response: the bytes read before its body passed the limit (the body keeps its
first bytes only), so a replay fails the turn as the recording did."""


def load_recording(path: Path, kind: str, shape: Callable[[Any], None]) -> Any:
    """The data of a recording file (a cassette, or the MCP recording beside it) as vcrpy's YAML
    serializer reads it, read with bounds: a regular file of at most :data:`MAX_RECORDING_BYTES`,
    UTF-8 YAML nested no deeper than :data:`yamlio.MAX_DEPTH <harness.yamlio.MAX_DEPTH>` holding
    at most :data:`yamlio.MAX_NODES <harness.yamlio.MAX_NODES>` values once its aliases are
    expanded, and shaped as ``shape`` expects (it raises :class:`Shape`).

    The checked parse is kept in the cache folder (:func:`harness.cache.parsed`, under
    ``<kind>-checked``: entries of a parse that was not checked are not trusted), so a replay
    neither parses nor checks a recording it has read before.

    A missing file is a ``FileNotFoundError`` (the caller says what is missing); anything else
    wrong is a :class:`CassetteCorruptError` naming the file, and the line where known."""

    def parse(text: str) -> Any:
        data = _guarded_yaml(text)
        shape(data)
        return data

    try:
        return parsed(path, f"{kind}-checked", parse, limit=MAX_RECORDING_BYTES)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise
    except Refused as exc:
        raise CassetteCorruptError(str(path), str(exc)) from None
    except Unreadable as exc:
        raise CassetteCorruptError(str(path), str(exc), exc.line) from None
    except Shape as exc:
        raise CassetteCorruptError(str(path), str(exc), _line_of(path, exc.where)) from None
    except UnicodeDecodeError as exc:
        raise CassetteCorruptError(str(path), *_diagnosed(exc.object, exc)) from None
    except OSError as exc:  # no permission, an I/O error
        raise CassetteCorruptError(str(path), f"it cannot be read: {exc.strerror or exc}") from None


def load_cassette(path: Path) -> Any:
    """A cassette's data (:func:`load_recording` with :func:`cassette_shape`)."""
    return load_recording(path, "cassettes", cassette_shape)


class Unreadable(ValueError):
    """A recording that is not YAML the harness reads: ``line`` is 1-based, or ``None``."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


class Shape(ValueError):
    """A recording's field that is not what playback needs: ``where`` is its path in the data."""

    def __init__(self, where: list[str | int], message: str):
        super().__init__(message)
        self.where = where


def _guarded_yaml(text: str) -> Any:
    """``text`` read by vcrpy's YAML serializer (libyaml's, which refuses nesting past 1,000),
    then walked without recursion: nested deeper than :data:`yamlio.MAX_DEPTH`, more values than
    :data:`yamlio.MAX_NODES` once aliases are expanded (an alias bomb: a few lines that stand for
    10^9 values, which caching would write out whole), or an unpaired surrogate (YAML text cannot
    hold one; PyYAML's pure loader lets it through) is :class:`Unreadable`."""
    from vcr.serializers import yamlserializer

    from harness import yamlio

    try:
        data = yamlserializer.deserialize(text)
    except Exception as exc:  # a broken file fails in many ways
        raise Unreadable(*_diagnosed(text, exc)) from None
    nodes, stack = 0, [(data, 1)]
    while stack:
        value, depth = stack.pop()
        nodes += 1
        if nodes > yamlio.MAX_NODES:
            raise Unreadable(f"more than {yamlio.MAX_NODES:,} values once its aliases are expanded")
        if isinstance(value, str):
            if not value.isascii() and SURROGATE.search(value):
                raise Unreadable("an unpaired surrogate in a string (YAML text cannot hold one)")
        elif isinstance(value, dict | list | tuple):
            if depth > yamlio.MAX_DEPTH:
                raise Unreadable(f"nested deeper than {yamlio.MAX_DEPTH} levels")
            items = [*value.keys(), *value.values()] if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items)
    return data


SURROGATE = re.compile("[\ud800-\udfff]")


def _diagnosed(text: str | bytes, exc: Exception) -> tuple[str, int | None]:
    """What is wrong with a recording's text that vcrpy's reader refused, and its line: as the
    guarded reader of user files (:mod:`harness.yamlio`) says it when the text is small enough for
    it, else as the YAML parser said it."""
    from harness import yamlio

    if len(text) <= yamlio.MAX_FILE_BYTES:
        try:
            yamlio.loads(text)
        except yamlio.YamlError as error:
            return str(error), error.line
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8: byte offset {exc.start} is not valid UTF-8 (binary data?)", None
    mark = getattr(exc, "problem_mark", None)
    what = getattr(exc, "problem", None) or exc
    return f"invalid YAML: {what}", mark.line + 1 if mark is not None else None


def _line_of(path: Path, where: list[str | int]) -> int | None:
    """The line of the field at ``where`` in a recording (read again: this is the error path),
    or ``None`` when the file cannot say."""
    from harness import yamlio

    try:
        return yamlio.line_of(yamlio.load(path)[1], where)
    except (yamlio.YamlError, OSError):
        return None


NONE = type(None)
REQUEST_SHAPE: dict[str, tuple[tuple[type, ...], str]] = {
    "method": ((str,), "text"),
    "uri": ((str,), "text"),
    "body": ((str, bytes, NONE), "text or bytes"),
    "headers": ((dict, NONE), "a mapping"),
}
"""What vcrpy builds a recorded request from (no other field: it takes them as arguments)."""
RESPONSE_SHAPE: dict[str, tuple[tuple[type, ...], str]] = {
    "body": ((dict,), "a mapping"),
    "headers": ((dict, NONE), "a mapping"),
    "elapsed_ms": ((int, float, NONE), "a number"),
    OVER_LIMIT_KEY: ((int, NONE), "an integer"),
}

NOTED_SHAPE: dict[str, tuple[tuple[type, ...], str]] = {
    "endpoint": ((dict, NONE), "a mapping"),
    "incomplete": ((str, NONE), "text"),
}
"""What the harness notes in a cassette it records: what the server said about itself, and why a
recording stopped early."""


def cassette_shape(data: Any) -> None:
    """Check what playback reads of a cassette (:class:`Shape` for the first field that is wrong)."""
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise Shape([], "not a vcrpy cassette (no 'interactions' list)")
    check_field(data, "metadata", (dict, NONE), "a mapping", [], "the cassette")
    metadata = data.get("metadata") or {}
    check_field(metadata, "harness", (dict, NONE), "a mapping", ["metadata"], "metadata")
    noted = metadata.get("harness") or {}
    for key, (kinds, expected) in NOTED_SHAPE.items():
        check_field(noted, key, kinds, expected, ["metadata", "harness"], "metadata.harness")
    for index, item in enumerate(data["interactions"]):
        where: list[str | int] = ["interactions", index]
        request = item.get("request") if isinstance(item, dict) else None
        response = item.get("response") if isinstance(item, dict) else None
        if not isinstance(request, dict) or not {"method", "uri"} <= set(request):
            raise Shape(where, f"interaction {index} has no request method and uri")
        status = response.get("status") if isinstance(response, dict) else None
        if not isinstance(status, dict) or type(status.get("code")) is not int:
            raise Shape(where, f"interaction {index} has no response status code")
        assert isinstance(response, dict)
        if unknown := set(request) - set(REQUEST_SHAPE):
            raise Shape(
                [*where, "request"],
                f"interaction {index}: unknown request field(s) {sorted(map(str, unknown))}",
            )
        for part, entry, shape in (
            ("request", request, REQUEST_SHAPE),
            ("response", response, RESPONSE_SHAPE),
        ):
            what = f"interaction {index}: {part}"
            for key, (types, expected) in shape.items():
                check_field(
                    entry,
                    key,
                    types,
                    expected,
                    [*where, part],
                    what,
                    required=(part, key) == ("response", "body"),
                )
            for name, values in (entry.get("headers") or {}).items():
                if (
                    not isinstance(name, str)
                    or not isinstance(values, list)
                    or not all(isinstance(v, str) for v in values)
                ):
                    raise Shape(
                        [*where, part, "headers", name],
                        f"{what} header {name!r} is {described(values)}, expected a list of text",
                    )
        try:
            urlsplit(request["uri"])
        except ValueError as exc:
            raise Shape([*where, "request", "uri"], f"interaction {index}: request uri: {exc}") from None
        check_field(
            response["body"],
            "string",
            (str, bytes, NONE),
            "text or bytes",
            [*where, "response", "body"],
            f"interaction {index}: response body",
        )


def check_field(
    entry: dict[str, Any],
    key: str,
    types: tuple[type, ...],
    expected: str,
    where: list[str | int],
    what: str,
    *,
    required: bool = False,
) -> None:
    """:class:`Shape` unless ``entry[key]`` is one of ``types`` (``required``, or absent)."""
    if key not in entry:
        if required:
            raise Shape(where, f"{what} has no {key}")
        return
    value = entry[key]
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        raise Shape([*where, key], f"{what} {key} is {described(value)}, expected {expected}")


def described(value: Any) -> str:
    """What a YAML value is, in words, for messages that say what was found (``an integer (5)``)."""
    if value is None:
        return "null"
    if isinstance(value, dict | list | tuple | str | bytes):
        return {dict: "a mapping", str: "text", bytes: "bytes"}.get(type(value), "a list")
    kinds = {bool: "a boolean", int: "an integer", float: "a number"}
    return f"{kinds.get(type(value), type(value).__name__)} ({value!r})"
