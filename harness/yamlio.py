"""Reading the YAML files users write (scenarios, tool sets): parsed once, with line numbers, bounded.

libyaml's C parser is used where PyYAML has it (several times faster), the
pure parser otherwise. A file is composed into a node tree once and the data
built from it, so an error can name the line of any field (:func:`line_of`)
without parsing the text twice.

Every file is untrusted input, so reading it is bounded and never ends in a
traceback:

* **size**: a file over :data:`MAX_FILE_BYTES` is refused before it is parsed
  (a 22 MB file once took minutes);
* **nesting**: a document nested deeper than :data:`MAX_DEPTH` is refused (5,000
  nested lists crashed the recursive composers: RecursionError in Python, a
  segmentation fault in libyaml's);
* **aliases**: the document's size *after expanding aliases* is counted while it
  is composed and refused past :data:`MAX_NODES` nodes, which stops alias bombs
  ("billion laughs": a few lines that expand to 10^9 nodes) long before anything
  walks the data; a recursive alias (``&a [*a]``) is refused too;
* **encoding**: UTF-8, with or without a byte order mark; UTF-16 and UTF-32,
  other encodings (Latin-1, Windows-1252), binary files and control characters
  are each refused with a message naming the problem and where it is;
* **duplicate keys**: a key given twice in one mapping is refused with both lines
  (PyYAML keeps the last silently: a second ``id:`` would rename a scenario and
  its cassette); every duplicate of the document is listed.

The tree is composed here, iteratively, from the parser's events (so depth costs
no stack) instead of by PyYAML's recursive composer; the data is then built by
PyYAML's ``SafeConstructor``, which builds nested collections without recursion.
Every refusal is a :class:`YamlError` with the 1-based line where known.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # type: ignore[assignment]
"""libyaml's C loader where PyYAML was built with it, else the pure one."""

MAX_FILE_BYTES = 5 * 1024 * 1024
"""Largest file (or text, in characters) read: hand-written scenarios are kilobytes."""

MAX_DEPTH = 100
"""Deepest nesting of lists and mappings, counting through aliases (the document is depth 1)."""

MAX_NODES = 100_000
"""Most nodes (scalars, lists, mappings) a document may hold once its aliases are expanded."""

_UTF8_BOM = b"\xef\xbb\xbf"
_WIDE_BOMS = (  # UTF-32 first: its little-endian mark starts with UTF-16's
    (b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"),
    (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"),
    (b"\xff\xfe", "UTF-16 (little-endian)"),
    (b"\xfe\xff", "UTF-16 (big-endian)"),
)
# What YAML 1.1 allows in a stream (PyYAML's Reader); any other character is refused before
# parsing, with its line.
_NOT_PRINTABLE = re.compile("[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_RESAVE = "re-save the file as UTF-8"


class YamlError(ValueError):
    """A file that is not readable YAML: ``line`` is 1-based, or ``None``; ``pointer`` is the
    JSON pointer of the bad key where known. ``problems`` lists every error found (this one
    alone, or each duplicate key of a document)."""

    def __init__(self, message: str, line: int | None = None, *, pointer: str | None = None):
        super().__init__(message)
        self.line, self.pointer = line, pointer
        self.problems: list[YamlError] = [self]


def load(path: str | Path) -> tuple[Any, Node | None]:
    """The data of a YAML file and its node tree (for line numbers).

    A missing file, a folder, an unreadable file, a file over :data:`MAX_FILE_BYTES`
    and a file that is not UTF-8 text are each a :class:`YamlError` (see :func:`read_text`).
    """
    return loads(read_text(path))


def read_text(path: str | Path, limit: int | None = None) -> str:
    """The text of a UTF-8 file of at most ``limit`` bytes (default :data:`MAX_FILE_BYTES`; a
    leading byte order mark is dropped).

    Anything else is a :class:`YamlError` naming the problem: no such file, a folder, no
    permission, too large, UTF-16/UTF-32, another encoding (the byte offset of the first bad
    byte), binary data. At most one byte past the limit is read, so a huge file (or an
    endless device) costs nothing. Other readers of user files (``harness.toml``) use it too.
    """
    limit = MAX_FILE_BYTES if limit is None else limit
    try:
        with Path(path).open("rb") as stream:
            data = stream.read(limit + 1)
    except OSError as exc:
        raise YamlError(_os_problem(exc)) from None
    if len(data) > limit:
        raise _too_large(limit, "bytes")
    return _decode(data)


def loads(text: str | bytes) -> tuple[Any, Node | None]:
    """The data of a YAML text (or of the bytes of a file, which must be UTF-8) and its node tree.

    Example::

        data, node = yamlio.loads("a:\\n  - 1\\n")
        assert data == {"a": [1]} and yamlio.line_of(node, ["a", 0]) == 2
    """
    if len(text) > MAX_FILE_BYTES:
        raise _too_large(MAX_FILE_BYTES, "bytes" if isinstance(text, bytes) else "characters")
    if isinstance(text, bytes):
        text = _decode(text)
    text = text.removeprefix("\ufeff")
    _check_characters(text)
    loader: Any = _tracking(SafeLoader)(text)
    try:
        node = _compose(loader)
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = (exc.problem_mark or exc.context_mark) if isinstance(exc, yaml.MarkedYAMLError) else None
        line = mark.line + 1 if mark else None
        what = (exc.problem if isinstance(exc, yaml.MarkedYAMLError) else None) or exc
        if "nesting depth" in str(what):  # libyaml 0.2.6's own limit, met while reading ahead
            raise YamlError(_deeper_than_limit(""), line) from None
        raise YamlError(f"invalid YAML: {what}", line) from None
    except YamlError:
        raise
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, OverflowError) as exc:
        # PyYAML's constructors let some bad values through as plain exceptions: a date like
        # 2024-13-45, an int past Python's digit limit, ``!!bool maybe``, ``!!timestamp x``.
        raise _bad_value(loader.current, exc) from None
    finally:
        loader.dispose()
    return data, node


def _bad_value(node: Node | None, exc: Exception) -> YamlError:
    """The error for a value PyYAML's constructors failed on with a plain exception."""
    if node is None:
        return YamlError(f"invalid YAML: {exc}")
    kind = node.tag.rsplit(":", 1)[-1]
    if isinstance(node, ScalarNode):
        text = str(node.value)
        value = repr(text if len(text) <= 40 else text[:40] + "...")
    else:
        value = "this node"
    detail = f": {exc}" if isinstance(exc, ValueError) else ""
    return YamlError(f"invalid YAML: cannot read {value} as !!{kind}{detail}", node.start_mark.line + 1)


def line_of(node: Node | None, path: Sequence[object]) -> int | None:
    """The 1-based line of the node at ``path`` (or of its nearest existing parent)."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in path:
        if isinstance(node, MappingNode):
            node = next((v for k, v in node.value if k.value == part), None)
        elif isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = node.value[part]
        else:
            node = None
        if node is None:
            break
        line = node.start_mark.line + 1
    return line


def pointer(path: Sequence[object]) -> str:
    """The JSON pointer of ``path`` (``/`` for the document itself)."""
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path) if path else "/"


# -- reading bytes -------------------------------------------------------------


def _os_problem(exc: OSError) -> str:
    """What stopped a file from being read, in words (the caller names the file)."""
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, IsADirectoryError):
        return "is a folder, not a YAML file"
    if isinstance(exc, PermissionError):
        return "cannot be read: permission denied"
    return f"cannot be read: {exc.strerror or errno.errorcode.get(exc.errno or 0, str(exc))}"


def _too_large(limit: int, unit: str) -> YamlError:
    return YamlError(
        f"too large: more than {limit:,} {unit} (the limit, yamlio.MAX_FILE_BYTES, guards against "
        "runaway parsing); split it into several files"
    )


def _decode(data: bytes) -> str:
    """``data`` as text: UTF-8 (a leading byte order mark is dropped); anything else is refused
    with what it looks like and where, so the user knows what to fix."""
    if data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM) :]
    else:
        for bom, name in _WIDE_BOMS:
            if data.startswith(bom):
                raise YamlError(
                    f"not UTF-8: the file is {name} (it starts with a byte order mark); {_RESAVE}"
                )
    nul = data.find(b"\x00")
    if nul >= 0:
        wide = _wide_encoding(data)
        if wide:
            raise YamlError(
                f"not UTF-8: the file looks like {wide} (NUL bytes between characters); {_RESAVE}"
            )
        raise YamlError(
            f"not a text file: a NUL byte at byte offset {nul} (binary data?)", data.count(b"\n", 0, nul) + 1
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        guess = " (Latin-1 or Windows-1252 text?)" if _looks_latin1(data, exc.start) else ""
        raise YamlError(
            f"not UTF-8: byte 0x{data[exc.start]:02X} at byte offset {exc.start} (line {line}) is not valid "
            f"UTF-8{guess}; {_RESAVE}",
            line,
        ) from None


def _wide_encoding(data: bytes) -> str | None:
    """``UTF-16`` or ``UTF-32`` when the NUL bytes of ``data`` (without a byte order mark) fall
    where that encoding puts them for mostly-ASCII text, else ``None``."""
    head = data[: 4096 - 4096 % 4]
    quads = len(head) // 4
    if quads == 0:
        return None
    zeros = [head[k::4].count(0) for k in range(4)]  # NUL bytes at each position of a 4-byte group
    if sorted(zeros)[1] > quads // 2:  # three of four positions mostly NUL
        return "UTF-32"
    even, odd = zeros[0] + zeros[2], zeros[1] + zeros[3]
    return "UTF-16" if max(even, odd) > quads and min(even, odd) <= quads // 4 else None


def _looks_latin1(data: bytes, start: int) -> bool:
    """Whether the bad byte looks like a one-byte letter (é in Latin-1 ``café``): not followed by
    the continuation byte UTF-8 would need."""
    following = data[start + 1] if start + 1 < len(data) else 0x20
    return data[start] >= 0x80 and not 0x80 <= following <= 0xBF


def _check_characters(text: str) -> None:
    """Refuse characters YAML does not allow (NUL, other control characters, lone surrogates),
    naming the first and its line: the parser would name only a byte position."""
    bad = _NOT_PRINTABLE.search(text)
    if bad is None:
        return
    char, line = bad.group(), text.count("\n", 0, bad.start()) + 1
    column = bad.start() - (text.rfind("\n", 0, bad.start()) + 1) + 1
    if char == "\x00":
        raise YamlError(
            f"not a text file: a NUL character at line {line}, column {column} (binary data?)", line
        )
    what = "an unpaired surrogate" if "\ud800" <= char <= "\udfff" else "a control character"
    raise YamlError(
        f"invalid YAML: {what} (U+{ord(char):04X}) at line {line}, column {column}; YAML text allows "
        "neither control characters (but tab and line breaks) nor unpaired surrogates",
        line,
    )


# -- composing, bounded ----------------------------------------------------------


_TRACKING: dict[type[yaml.SafeLoader], type[yaml.SafeLoader]] = {}


def _tracking(base: type[yaml.SafeLoader]) -> type[yaml.SafeLoader]:
    """``base`` noting the node being built, so a bad value's error can name its line (made per
    base class so a test can swap :data:`SafeLoader` for the pure loader)."""
    if base in _TRACKING:
        return _TRACKING[base]

    class Tracking(base):  # type: ignore[valid-type,misc]
        current: Node | None = None

        def construct_object(self, node: Node, deep: bool = False) -> Any:
            self.current = node
            return super().construct_object(node, deep)

    _TRACKING[base] = Tracking
    return Tracking


class _Frame:
    """A list or mapping being composed: its node, the key waiting for its value, the expanded
    node count when it started, the deepest level reached inside it, and (for a mapping) the
    line of each scalar key seen so far."""

    __slots__ = ("anchor", "deepest", "key", "keys", "node", "start")

    def __init__(self, node: Node, anchor: str | None, start: int, depth: int):
        self.node, self.anchor, self.start, self.deepest = node, anchor, start, depth
        self.key: Node | None = None
        self.keys: dict[tuple[str, str], int] = {}


def _line(event: Event) -> int | None:
    mark = event.start_mark
    return mark.line + 1 if mark is not None else None


def _compose(loader: Any) -> Node | None:
    """The node tree of the stream's single document (``None`` for an empty stream)."""
    loader.get_event()  # StreamStartEvent
    if loader.check_event(StreamEndEvent):
        loader.get_event()
        return None
    start = loader.get_event()
    assert isinstance(start, DocumentStartEvent), start
    root = _compose_document(loader)
    end = loader.get_event()
    assert isinstance(end, DocumentEndEvent), end
    if not loader.check_event(StreamEndEvent):
        raise YamlError(
            "invalid YAML: expected a single document, but found another one", _line(loader.peek_event())
        )
    loader.get_event()
    return root


def _compose_document(loader: Any) -> Node:
    """One document's tree, built from events with an explicit stack and bounded as it grows:
    depth (through aliases too), nodes after expanding aliases, and no recursive alias."""
    stack: list[_Frame] = []
    duplicates: list[YamlError] = []
    anchors: dict[str, Node] = {}
    measured: dict[str, tuple[int, int]] = {}  # anchor -> (expanded nodes, height); absent while open
    expanded = aliases = 0
    while True:
        event = loader.get_event()
        depth = len(stack) + 1  # of the node this event starts
        start_mark: Any = event.start_mark  # the C parser's marks are typed apart from the pure one's
        node: Node
        if isinstance(event, (SequenceEndEvent, MappingEndEvent)):
            frame = stack.pop()
            node, node.end_mark, reach = frame.node, event.end_mark, frame.deepest
            if frame.anchor is not None:
                measured[frame.anchor] = (expanded - frame.start + 1, frame.deepest - len(stack))
        elif isinstance(event, AliasEvent):
            anchor = event.anchor
            if anchor not in anchors:
                raise YamlError(f"invalid YAML: found undefined alias *{anchor}", _line(event))
            if anchor not in measured:
                raise YamlError(
                    f"invalid YAML: alias *{anchor} is inside the node it names (a recursive alias)",
                    _line(event),
                )
            node = anchors[anchor]
            size, height = measured[anchor]
            aliases += 1
            expanded += size
            reach = depth + height - 1
            if expanded > MAX_NODES:
                raise _too_many_nodes(aliases, event)
            if reach > MAX_DEPTH:
                raise _too_deep(event, f" once alias *{anchor} is expanded")
        else:
            expanded += 1
            if expanded > MAX_NODES:
                raise _too_many_nodes(aliases, event)
            anchor = event.anchor
            if anchor is not None and anchor in anchors:
                raise YamlError(
                    f"invalid YAML: found duplicate anchor &{anchor} (first at line "
                    f"{anchors[anchor].start_mark.line + 1})",
                    _line(event),
                )
            tag = event.tag
            if isinstance(event, ScalarEvent):
                if tag is None or tag == "!":
                    tag = loader.resolve(ScalarNode, event.value, event.implicit)
                end_mark: Any = event.end_mark
                node = ScalarNode(tag, event.value, start_mark, end_mark, style=event.style)
                reach = depth
                if anchor is not None:
                    anchors[anchor], measured[anchor] = node, (1, 1)
            else:
                if depth > MAX_DEPTH:
                    raise _too_deep(event, "")
                if isinstance(event, SequenceStartEvent):
                    if tag is None or tag == "!":
                        tag = loader.resolve(SequenceNode, None, event.implicit)
                    node = SequenceNode(tag, [], start_mark, None, flow_style=event.flow_style)
                elif isinstance(event, MappingStartEvent):
                    if tag is None or tag == "!":
                        tag = loader.resolve(MappingNode, None, event.implicit)
                    node = MappingNode(tag, [], start_mark, None, flow_style=event.flow_style)
                else:  # the parser never sends anything else inside a document
                    raise YamlError(f"invalid YAML: unexpected {type(event).__name__}", _line(event))
                if anchor is not None:
                    anchors[anchor] = node
                stack.append(_Frame(node, anchor, expanded, depth))
                continue
        if not stack:
            if duplicates:
                duplicates[0].problems = duplicates
                raise duplicates[0]
            return node
        parent = stack[-1]
        if reach > parent.deepest:
            parent.deepest = reach
        if isinstance(parent.node, SequenceNode):
            parent.node.value.append(node)
        elif parent.key is None:
            parent.key = node
            duplicate = _duplicate_key(stack, node)
            if duplicate is not None:
                duplicates.append(duplicate)
        else:
            parent.node.value.append((parent.key, node))
            parent.key = None


def _duplicate_key(stack: list[_Frame], key: Node) -> YamlError | None:
    """The error for ``key``, just read in the mapping atop ``stack``, when that mapping already
    has it (scalar keys compared by resolved tag and text: ``id`` and ``"id"`` are one key;
    ``<<`` merge keys are YAML's own way to override, not duplicates)."""
    if not isinstance(key, ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
        return None
    frame, line, ident = stack[-1], key.start_mark.line + 1, (key.tag, key.value)
    if ident not in frame.keys:
        frame.keys[ident] = line
        return None
    first = frame.keys[ident]
    path: list[object] = []
    for outer in stack[:-1]:  # the place of the child being built in each enclosing node
        if isinstance(outer.node, SequenceNode):
            path.append(len(outer.node.value))
        else:
            path.append(outer.key.value if outer.key is not None else "?")
    path.append(key.value)
    return YamlError(
        f"duplicate key {key.value!r}: first at line {first}, again at line {line} (YAML keeps only "
        "the last; remove one)",
        line,
        pointer=pointer(path),
    )


def _too_many_nodes(aliases: int, event: Event) -> YamlError:
    through = f", through {aliases:,} alias(es)" if aliases else ""
    return YamlError(
        f"too large: the document holds more than {MAX_NODES:,} values once aliases are expanded{through} "
        "(the limit, yamlio.MAX_NODES, guards against alias bombs, 'billion laughs')",
        _line(event),
    )


def _too_deep(event: Event, how: str) -> YamlError:
    return YamlError(_deeper_than_limit(how), _line(event))


def _deeper_than_limit(how: str) -> str:
    return (
        f"too deeply nested: more than {MAX_DEPTH} levels of lists and mappings{how} (the limit, "
        "yamlio.MAX_DEPTH)"
    )


__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_NODES",
    "SafeLoader",
    "YamlError",
    "line_of",
    "load",
    "loads",
    "pointer",
    "read_text",
]
