"""Re-chunked stream replay: a recorded stream, re-sliced, must assemble to the same turn.

Parsers of streamed tool calls break at chunk boundaries: a UTF-8 character, a CRLF, a line or
a frame cut in two. :func:`sweep` re-slices one recorded stream body every way up to a size
(every chunk size from 1 to ``max_size`` bytes, and at every line and frame end) and feeds each
slicing to a chunk parser; the calls (name, parsed arguments, id), text and finish reason it
assembles must equal what it assembles from the body in one piece. A difference names the chunk
size (or ``frames``) and the first offset where one cut alone changes the result.

``harness audit --rechunk N`` runs it on every streamed response of the files it audits, with
the harness's own adapter for the detected format (:meth:`Adapter.parse_chunks`); a user's
stream parser can be swept the same way with :func:`sweep`.

The user's whole agent is swept too (``harness run --rechunk N``, replay):
:func:`sweep_agent` replays each of its runs again at every slicing, its own httpx client
receiving each recorded stream in those pieces (:func:`sliced_streams`), and compares what the
agent did (the recorded requests it sent, the tools it ran with which arguments, what it
returned or raised) with its run on the streams in one piece.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import httpx

from harness.agent.external import WIRE_LOCK, AgentFunction, AgentTask, agent_cassette, call_agent
from harness.model import Finding, ParsedTurn, ToolExecution
from harness.providers.framing import STREAM_TYPES

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


def slicing_names(max_size: int) -> list[str]:
    """The slicings to try: every fixed chunk size 1..``max_size`` (``"7"``: cuts at 7, 14, ...),
    and ``"frames"``: a cut after every line end (so every frame of SSE and NDJSON ends a chunk)."""
    return [*map(str, range(1, max_size + 1)), "frames"]


def cuts_of(data: bytes, slicing: str) -> list[int]:
    """Where ``slicing`` (a name from :func:`slicing_names`) cuts ``data``."""
    if slicing == "frames":
        return [i + 1 for i, byte in enumerate(data[:-1]) if byte == ord("\n")]
    size = int(slicing)
    return list(range(size, len(data), size))


def slicings(data: bytes, max_size: int) -> Iterator[tuple[str, list[int]]]:
    """Each slicing up to ``max_size`` with its cuts of ``data``."""
    for slicing in slicing_names(max_size):
        yield slicing, cuts_of(data, slicing)


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
        return (
            f"re-sliced {_how(self.slicing)}, the stream assembles {_show(self.got)} instead of "
            f"{_show(self.expected)}{where}"
        )


def _how(slicing: str) -> str:
    return "at every line end" if slicing == "frames" else f"into {slicing}-byte chunks"


def _show(value: Assembled) -> str:
    calls, text, finish = value
    shown: dict[str, Any] = {"calls": [f"{n}({a})" for n, a, _ in calls], "finish": finish}
    if text:
        shown["text"] = text if len(text) <= 60 else text[:57] + "..."
    return json.dumps(shown, ensure_ascii=False)


def sweep(body: str | bytes, parse: ChunkParser, max_size: int = 16) -> list[Difference]:
    """Every slicing of ``body`` (text, or the bytes of a binary stream) up to ``max_size`` whose
    assembly by ``parse`` differs from the body's in one piece."""
    data = body if isinstance(body, bytes) else body.encode("utf-8")
    expected = assembled(parse([data]))
    found = []
    for slicing, cuts in slicings(data, max_size):
        got = assembled(parse(cut(data, cuts)))
        if got != expected:
            offset = next((c for c in cuts if assembled(parse(cut(data, [c]))) != expected), None)
            found.append(Difference(slicing, offset, expected, got))
    return found


# -- the user's agent, fed re-sliced streams -------------------------------------------------

Chunker = Callable[[int, bytes], Sequence[bytes]]
"""(the streamed response's index in the run, its body) -> the pieces the client receives."""

MAX_OFFSET_TRIES = 400
"""Agent runs spent looking for the one cut that alone changes what the agent does."""


def _pieces(module: Any) -> type:
    """A response stream of the given pieces, for ``module`` (``httpx`` or its fork ``httpx2``,
    whose responses insist on their own stream classes)."""

    class Pieces(module.SyncByteStream, module.AsyncByteStream):  # type: ignore[misc, name-defined]
        def __init__(self, pieces: Sequence[bytes]) -> None:
            self._pieces = pieces

        def __iter__(self) -> Iterator[bytes]:
            yield from self._pieces

        async def __aiter__(self) -> AsyncIterator[bytes]:
            for piece in self._pieces:
                yield piece

    return Pieces


def _httpx_modules() -> list[Any]:
    """httpx, and its interoperable fork httpx2 when installed (the openai SDK uses it)."""
    modules: list[Any] = [httpx]
    with contextlib.suppress(ImportError):
        import httpx2  # type: ignore[import-not-found]

        modules.append(httpx2)
    return modules


@contextmanager
def sliced_streams(chunker: Chunker | None) -> Iterator[list[bytes]]:
    """Inside a replaying agent cassette: each streamed response an httpx (or httpx2) client,
    sync or async, receives arrives in the pieces ``chunker`` cuts (whole when it is None).
    Yields the streamed bodies, in the order they were received.

    vcrpy's httpx stub hands a recorded body over in one piece; this wraps the stub (the
    transports' handle methods vcrpy patched) and re-streams the body it returns."""
    bodies: list[bytes] = []
    lock = threading.Lock()

    def streamed(response: Any) -> bool:
        kind = response.headers.get("content-type", "").lower()
        return any(t in kind for t in STREAM_TYPES)

    def reslice(response: Any, data: bytes, pieces: type) -> Any:
        with lock:
            index = len(bodies)
            bodies.append(data)
        response.stream = pieces(chunker(index, data) if chunker else [data])
        return response

    def wrap(module: Any) -> tuple[Callable[..., Any], Callable[..., Any]]:
        handle, handle_async = (
            module.HTTPTransport.handle_request,
            module.AsyncHTTPTransport.handle_async_request,
        )
        pieces = _pieces(module)

        def sliced(self: Any, request: Any) -> Any:
            response = handle(self, request)
            return reslice(response, b"".join(response.stream), pieces) if streamed(response) else response

        async def sliced_async(self: Any, request: Any) -> Any:
            response = await handle_async(self, request)
            if not streamed(response):
                return response
            return reslice(response, b"".join([p async for p in response.stream]), pieces)

        return sliced, sliced_async

    with contextlib.ExitStack() as patches:
        for module in _httpx_modules():
            sliced, sliced_async = wrap(module)
            patches.enter_context(mock.patch.object(module.HTTPTransport, "handle_request", sliced))
            patches.enter_context(
                mock.patch.object(module.AsyncHTTPTransport, "handle_async_request", sliced_async)
            )
        yield bodies


@dataclass(frozen=True)
class Behaviour:
    """What one replayed agent run did, as the sweep compares it."""

    played: tuple[int, ...]  # the recorded interactions its requests matched
    unrecorded: int  # requests it sent that the cassette does not hold
    tools: tuple[str, ...]  # each tool it ran: name(arguments) -> result
    returned: str
    raised: str | None


def behave(
    fn: AgentFunction,
    task: tuple[AgentTask, list[ToolExecution]],
    path: Path,
    target: str,
    chunker: Chunker | None,
) -> tuple[Behaviour, list[bytes]]:
    """Replay one run of the agent with its streams cut by ``chunker``: what it did, and the
    streamed bodies it received."""
    agent_task, executed = task
    with (
        WIRE_LOCK.exclusive(),
        agent_cassette(path, "replay", "all", target, agent_task.scenario_id) as cassette,
        sliced_streams(chunker) as bodies,
    ):
        returned: Any = None
        raised = None
        try:
            returned = call_agent(fn, agent_task)
        except Exception as exc:  # what the agent raised is part of what it did
            raised = f"{type(exc).__name__}: {exc}"
        played = tuple(sorted(i for i, count in cassette.play_counts.items() if count))
        unrecorded = len(cassette.harness_wire.unanswered())
    tools = tuple(
        f"{e.call.name}({json.dumps(e.call.arguments, sort_keys=True)}) -> {e.result.content}"
        for e in executed
    )
    return Behaviour(played, unrecorded, tools, repr(returned), raised), bodies


def sweep_agent(
    fn: AgentFunction,
    new_task: Callable[[], tuple[AgentTask, list[ToolExecution]]],
    path: Path,
    target: str,
    max_size: int = 16,
) -> Finding | None:
    """Replay the agent's run at every slicing up to ``max_size`` of every stream it receives;
    an ``agent.stream_rechunk`` finding when one makes it do something else (None when it
    received no stream), naming the cassette, the slicings and the first cut that alone
    changes it. ``new_task`` gives a fresh task (and its tools' log) for each replay."""
    expected, bodies = behave(fn, new_task(), path, target, None)
    if not bodies:
        return None
    size = f"{len(bodies)} streamed response(s), re-sliced into 1..{max_size}-byte chunks and at line ends"
    differing: list[tuple[str, Behaviour]] = []
    for slicing in slicing_names(max_size):
        got, _ = behave(fn, new_task(), path, target, _slicer(slicing))
        if got != expected:
            differing.append((slicing, got))
    if not differing:
        return Finding("agent.stream_rechunk", "info", True, f"the agent did the same with its {size}")
    slicing, got = differing[0]
    where = _first_cut(fn, new_task, path, target, bodies, slicing, expected)
    at = f"; the cut at byte {where[1]} of streamed response {where[0] + 1} alone changes it" if where else ""
    others = ", ".join(s for s, _ in differing[1:])
    also = f" (and at slicings {others})" if others else ""
    return Finding(
        "agent.stream_rechunk",
        "error",
        False,
        f"{path}: re-sliced {_how(slicing)}{also}, the agent {_difference(expected, got)}{at}: "
        "its stream parser depends on where the network cuts the stream",
        None,
        {"slicings": [s for s, _ in differing], "expected": asdict(expected), "got": asdict(got)},
    )


def _slicer(slicing: str) -> Chunker:
    return lambda _, data: cut(data, cuts_of(data, slicing))


def _first_cut(
    fn: AgentFunction,
    new_task: Callable[[], tuple[AgentTask, list[ToolExecution]]],
    path: Path,
    target: str,
    bodies: list[bytes],
    slicing: str,
    expected: Behaviour,
) -> tuple[int, int] | None:
    """(streamed response, byte offset) of the first cut of ``slicing`` that alone changes what
    the agent does (None: only cuts together do, or not found in :data:`MAX_OFFSET_TRIES`)."""
    tries = itertools.count()
    for index, data in enumerate(bodies):
        for offset in cuts_of(data, slicing):
            if next(tries) == MAX_OFFSET_TRIES:
                return None

            def one(i: int, body: bytes, index: int = index, offset: int = offset) -> Sequence[bytes]:
                return cut(body, [offset]) if i == index else [body]

            if behave(fn, new_task(), path, target, one)[0] != expected:
                return index, offset
    return None


def _difference(expected: Behaviour, got: Behaviour) -> str:
    """The first way ``got`` differs from ``expected``, in words."""
    if got.raised != expected.raised and got.raised:
        return f"raised {got.raised}"
    if got.tools != expected.tools:
        ran, instead = next((g, e) for g, e in itertools.zip_longest(got.tools, expected.tools) if g != e)
        return f"ran {ran or 'no further tool'} instead of {instead or 'nothing more'}"
    if got.unrecorded:
        return f"sent {got.unrecorded} request(s) the cassette does not hold"
    if got.played != expected.played:
        return f"sent other requests (played interactions {list(got.played)}, not {list(expected.played)})"
    return f"returned {got.returned[:120]} instead of {expected.returned[:120]}"
