"""Re-chunked stream replay: a recorded stream, re-sliced, must assemble to the same turn.

Parsers of streamed tool calls break at chunk boundaries: a UTF-8 character, a CRLF, a line or
a frame cut in two. :func:`sweep` re-slices one recorded stream body every way up to a size
(every chunk size from 1 to ``max_size`` bytes, and at every line and frame end) and feeds each
slicing to a chunk parser; the calls (name, parsed arguments, id), text and finish reason it
assembles must equal what it assembles from the body in one piece. A difference names the chunk
size (or ``frames``) and the first offset where one cut alone changes the result.

``harness audit --rechunk N`` runs it on every streamed response of the files it audits, with
the harness's own adapter for the detected format (:meth:`Adapter.parse_chunks`); a user's
streaming client can be swept the same way with its own chunk parser.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from harness.model import ParsedTurn

ChunkParser = Callable[[Sequence[bytes]], ParsedTurn]
Assembled = tuple[tuple[tuple[str, str, str | None], ...], str | None, str | None]


def assembled(turn: ParsedTurn) -> Assembled:
    """What a stream must assemble to, whatever its slicing: calls, text, finish reason."""
    calls = tuple(
        (
            c.name,
            json.dumps(c.arguments, sort_keys=True) if c.arguments is not None else f"raw:{c.raw_arguments}",
            c.wire_id,
        )
        for c in turn.tool_calls
    )
    return calls, turn.text or None, turn.finish_reason


def slicings(data: bytes, max_size: int) -> Iterator[tuple[str, list[int]]]:
    """The cuts to try: every fixed chunk size 1..``max_size`` (``"7"``: cuts at 7, 14, ...), and
    ``"frames"``: a cut after every line end (so every frame of SSE and NDJSON ends a chunk)."""
    for size in range(1, max_size + 1):
        yield str(size), list(range(size, len(data), size))
    yield "frames", [i + 1 for i, byte in enumerate(data[:-1]) if byte == ord("\n")]


def cut(data: bytes, cuts: Sequence[int]) -> list[bytes]:
    edges = [0, *cuts, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(edges)]


@dataclass(frozen=True)
class Difference:
    """A slicing that changed what the parser assembled."""

    slicing: str  # a chunk size in bytes, or "frames"
    offset: int | None  # the first cut that alone changes the result (None: only cuts together do)
    expected: Assembled
    got: Assembled

    def describe(self) -> str:
        where = f"; the cut at byte {self.offset} alone changes it" if self.offset is not None else ""
        how = "at every line end" if self.slicing == "frames" else f"into {self.slicing}-byte chunks"
        return (
            f"re-sliced {how}, the stream assembles {_show(self.got)} instead of "
            f"{_show(self.expected)}{where}"
        )


def _show(value: Assembled) -> str:
    calls, text, finish = value
    shown: dict[str, Any] = {"calls": [f"{n}({a})" for n, a, _ in calls], "finish": finish}
    if text:
        shown["text"] = text if len(text) <= 60 else text[:57] + "..."
    return json.dumps(shown, ensure_ascii=False)


def sweep(body: str, parse: ChunkParser, max_size: int = 16) -> list[Difference]:
    """Every slicing of ``body`` (up to ``max_size``) whose assembly by ``parse`` differs from
    the body's in one piece."""
    data = body.encode("utf-8")
    expected = assembled(parse([data]))
    found = []
    for slicing, cuts in slicings(data, max_size):
        got = assembled(parse(cut(data, cuts)))
        if got != expected:
            offset = next((c for c in cuts if assembled(parse(cut(data, [c]))) != expected), None)
            found.append(Difference(slicing, offset, expected, got))
    return found
