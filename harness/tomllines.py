"""Where each key of a TOML text is: tomllib gives no line numbers, error messages need them.

:class:`TomlLines` makes one pass over a text tomllib already accepted and records the
line of every key, table header, inline-table key and array item, so that a
configuration error can say ``harness.toml:12: [targets.x] stream: ...``.
"""

from __future__ import annotations

import bisect
import contextlib
import re
from collections.abc import Sequence

Where = tuple[str | int, ...]
"""A key path: ``("targets", "x", "headers", "x-team")``, an array item by its index."""


class _Stop(Exception):
    """The line finder met TOML it does not follow: it keeps what it found so far."""


_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\", "e": "\x1b"}
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_BARE_VALUE = re.compile(r"[^,\]}\n#]+")
_TRIPLE_QUOTES = ('"' * 3, "'" * 3)


class TomlLines:
    """The line of every key of a TOML text (tomllib gives none), for error messages.

    One pass over the text, following table headers (``[targets.x]``, ``[targets."x"]``,
    ``[[profiles.p.quirks]]``), dotted keys (``x.model = ...``), inline tables and arrays
    (each nested key and item gets its own line) and skipping strings (multi-line ones too)
    and comments. It runs only on text tomllib accepted; should it still meet something it
    does not follow, it keeps what it found so far, and :meth:`line` falls back to the nearest
    enclosing key or table header.

    Example::

        lines = TomlLines('[targets.x]\\nmodel = "m"\\nstream = "no"\\n')
        assert lines.line(["targets", "x", "stream"]) == 3
        assert lines.line(["targets", "x", "timeout_s"]) == 1  # absent: its table's header
    """

    def __init__(self, text: str):
        self.text, self.pos = text, 0
        self.lines: dict[Where, int] = {}
        self._breaks = [i for i, c in enumerate(text) if c == "\n"]
        self._arrays: dict[Where, int] = {}
        with contextlib.suppress(_Stop, IndexError, ValueError):  # keep what was found
            self._document()

    def line(self, path: Sequence[str | int]) -> int | None:
        """The 1-based line of the key at ``path``, or of its nearest enclosing key or table."""
        key = tuple(path)
        while key:
            if key in self.lines:
                return self.lines[key]
            key = key[:-1]
        return None

    # The scanner: ``pos`` only moves forward, and every loop consumes at least one character
    # or stops (a character it does not expect raises _Stop).

    def _mark(self, path: Where, at: int) -> None:
        """``path`` (and each enclosing path not seen yet) is at the line of offset ``at``."""
        line = bisect.bisect_left(self._breaks, at) + 1
        for end in range(1, len(path) + 1):
            self.lines.setdefault(path[:end], line)

    def _document(self) -> None:
        table: Where = ()
        text = self.text
        while True:
            self._skip(newlines=True)
            if self.pos >= len(text):
                return
            start = self.pos
            if text[start] == "[":
                array = text.startswith("[[", start)
                self.pos += 2 if array else 1
                key = self._key()
                self._expect("]]" if array else "]")
                if array:
                    index = self._arrays.get(key, 0)
                    self._arrays[key] = index + 1
                    table = (*key, index)
                else:
                    table = key
                self._mark(table, start)
            else:
                key = self._key()
                self._expect("=")
                self._skip()
                self._mark((*table, *key), start)
                self._value((*table, *key))

    def _skip(self, newlines: bool = False) -> None:
        """Past blanks and comments (and line breaks when ``newlines``)."""
        text = self.text
        while self.pos < len(text):
            c = text[self.pos]
            if c in " \t\r" or (newlines and c == "\n"):
                self.pos += 1
            elif c == "#":
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            else:
                return

    def _expect(self, token: str) -> None:
        if not self.text.startswith(token, self.pos):
            raise _Stop
        self.pos += len(token)

    def _key(self) -> tuple[str, ...]:
        """A dotted key (``targets."x".model``) at ``pos``, as its parts; blanks around skipped."""
        parts: list[str] = []
        while True:
            self._skip()
            c = self.text[self.pos]
            if c == '"':
                parts.append(self._basic())
            elif c == "'":
                end = self.text.index("'", self.pos + 1)
                parts.append(self.text[self.pos + 1 : end])
                self.pos = end + 1
            else:
                match = _BARE_KEY.match(self.text, self.pos)
                if match is None:
                    raise _Stop
                parts.append(match.group())
                self.pos = match.end()
            self._skip()
            if not self.text.startswith(".", self.pos):
                return tuple(parts)
            self.pos += 1

    def _basic(self) -> str:
        """A one-line basic string at ``pos``, unescaped."""
        text, i = self.text, self.pos + 1
        while text[i] != '"':
            if text[i] == "\n":
                raise _Stop
            i += 2 if text[i] == "\\" else 1
        raw, self.pos = text[self.pos + 1 : i], i + 1
        return re.sub(r"\\(U[0-9A-Fa-f]{8}|u[0-9A-Fa-f]{4}|.)", _unescape, raw)

    def _value(self, path: Where) -> None:
        text = self.text
        if text.startswith(_TRIPLE_QUOTES, self.pos):
            self._multiline(text[self.pos : self.pos + 3])
        elif text[self.pos] == '"':
            self._basic()
        elif text[self.pos] == "'":
            self.pos = text.index("'", self.pos + 1) + 1
        elif text[self.pos] in "[{":
            self._collection(path, "]" if text[self.pos] == "[" else "}")
        else:
            match = _BARE_VALUE.match(text, self.pos)
            if match is None:
                raise _Stop
            self.pos = match.end()

    def _collection(self, path: Where, close: str) -> None:
        """An array (items at ``path + (index,)``) or an inline table (keys under ``path``)."""
        self.pos += 1
        index = 0
        while True:
            self._skip(newlines=True)
            if self.text[self.pos] == close:
                self.pos += 1
                return
            start = self.pos
            if close == "]":
                item: Where = (*path, index)
                index += 1
            else:
                item = (*path, *self._key())
                self._expect("=")
                self._skip()
            self._mark(item, start)
            self._value(item)
            self._skip(newlines=True)
            if self.text[self.pos] == ",":
                self.pos += 1
            elif self.text[self.pos] != close:
                raise _Stop

    def _multiline(self, quotes: str) -> None:
        """Past a multi-line string at ``pos`` (up to two quotes may end its content)."""
        text, i = self.text, self.pos + 3
        while True:
            end = text.index(quotes, i)
            escapes = 0
            while quotes[0] == '"' and text[end - 1 - escapes] == "\\":
                escapes += 1
            if escapes % 2 == 0:
                break
            i = end + 1
        end += 3
        extra = 0
        while end < len(text) and text[end] == quotes[0] and extra < 2:
            end, extra = end + 1, extra + 1
        self.pos = end


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    if code[0] in "uU" and len(code) > 1:
        return chr(int(code[1:], 16))
    return _ESCAPES.get(code, code)


def too_deep(text: str, limit: int) -> int | None:
    """The 1-based line where arrays and inline tables first nest deeper than ``limit``, or None.

    Run before parsing: tomllib parses nested values recursively, so a text nested thousands
    deep ends in a RecursionError that names no line. One pass, no recursion: strings (every
    kind), comments and table headers (``[a]``, ``[[a]]``) are skipped.
    """
    if text.count("[") + text.count("{") <= limit:  # too few to nest that deep: nothing to scan
        return None
    depth, line, i, n = 0, 1, 0, len(text)
    line_start = True  # only blanks since the last line break
    while i < n:
        c = text[i]
        if c == "\n":
            line, line_start = line + 1, True
            i += 1
            continue
        if c in " \t\r":
            i += 1
            continue
        header, line_start = line_start and depth == 0 and c == "[", False
        if c == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith(_TRIPLE_QUOTES, i):
            end = _string_end(text, i + 3, text[i : i + 3])
            line += text.count("\n", i, end)
            i = end
        elif c in "\"'":
            i = _string_end(text, i + 1, c)
        elif header:
            i += 1  # a table header: its brackets are not values
        elif c in "[{":
            depth += 1
            if depth > limit:
                return line
            i += 1
        else:
            if c in "]}":
                depth = max(depth - 1, 0)
            i += 1
    return None


def _string_end(text: str, i: int, quotes: str) -> int:
    """The offset just past the string whose content starts at ``i`` and ends with ``quotes``
    (a backslash escapes the next character in basic strings, not in literal ones)."""
    while i < len(text):
        if text.startswith(quotes, i):
            return i + len(quotes)
        i += 2 if text[i] == "\\" and quotes[0] == '"' else 1
    return i
