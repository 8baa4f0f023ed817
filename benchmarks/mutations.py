"""Mutation run: real response bodies, broken in every deterministic way, fed to the adapters.

Every response body of ``tests/data/realworld/cases`` is mutated (a key dropped, a value
given another JSON type, the body truncated, nested 2,000 deep, invalid UTF-8 or a lone
surrogate escape injected, SSE frames split at random offsets, chunks duplicated or
dropped, the stream flag flipped) and parsed by the case's own adapter and by the same
adapter in prompted mode. A parser must turn each fault into a specific finding: no
exception may escape, none may reach the generic guard of ``Adapter.parse`` (its finding
carries ``evidence["guard"]``), and every string handed out must encode as UTF-8.

A binary body (AWS's event stream, kept as base64) is mutated in its bytes (cut anywhere, a
byte changed, messages duplicated or dropped) and in the JSON payload of each of its messages,
each message framed again with true CRCs, so a payload's faults reach the parser rather than
stopping at the framing.

Prints the mutations per kind, the findings per id, and the failures (all three must
be 0; the exit status says so too)::

    python benchmarks/mutations.py [--per-kind N] [--show 5]

``tests/unit/providers/test_mutations.py`` runs a few thousand of the same mutations.
"""

from __future__ import annotations

import argparse
import base64
import collections
import dataclasses
import json
import random
import re
import struct
import sys
import time
import traceback
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.model import ParsedTurn, WireResponse
from harness.providers import adapter_class
from harness.providers.adapter import Adapter
from harness.providers.prompted import prompted

REPO = Path(__file__).resolve().parents[1]
CASES = REPO / "tests" / "data" / "realworld" / "cases"
DEPTH = 2000
PROTOCOLS = ("json", "xml", "xml-name-attr", "hermes")
SAMPLES: tuple[tuple[str, Any], ...] = (
    ("str", "text"),
    ("int", 7),
    ("float", 2.5),
    ("bool", True),
    ("null", None),
    ("list", ["x", 1]),
    ("dict", {"k": "v"}),
)
BAD_BYTES = (b"\xff", b"\xc3", b"\x80", b"\xed\xa0\x80", b"\xf0\x9f\x98", b"\xc0\xaf")
SURROGATES = ("\ud83d", "\udc80", "\udfff", "\ud800x")
KINDS = (
    "drop_key",
    "retype",
    "truncate",
    "deep_nesting",
    "deep_string",
    "invalid_utf8",
    "lone_surrogate",
    "split_frames",
    "duplicate_chunk",
    "drop_chunk",
    "stream_flag_flipped",
)
Path_ = tuple[str | int, ...]


@dataclass(frozen=True)
class Mutation:
    """One mutated response of one case."""

    case: str
    kind: str
    detail: str
    wire_format: str
    stream: bool
    response: WireResponse


@dataclass
class _Payload:
    """A JSON payload inside a body: the line it fills (or the whole body) and its value; in a
    binary body, the message it fills (``line``) among the body's ``messages``."""

    line: int | None  # None: the whole body is this payload
    prefix: str
    suffix: str
    value: Any
    messages: list[tuple[bytes, bytes]] | None = None


def messages_of(data: bytes) -> list[tuple[bytes, bytes]]:
    """The (headers, payload) of each message of an AWS event stream (a real one: whole, true CRCs)."""
    found, at = [], 0
    while at + 12 <= len(data):
        total, headers = struct.unpack_from(">II", data, at)
        found.append((data[at + 12 : at + 12 + headers], data[at + 12 + headers : at + total - 4]))
        at += total
    return found


def framed(messages: list[tuple[bytes, bytes]]) -> bytes:
    """Messages as an AWS event stream, every CRC true."""
    out = b""
    for headers, payload in messages:
        prelude = struct.pack(">II", 16 + len(headers) + len(payload), len(headers))
        prelude += struct.pack(">I", zlib.crc32(prelude))
        message = prelude + headers + payload
        out += message + struct.pack(">I", zlib.crc32(message))
    return out


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def load_cases() -> list[dict[str, Any]]:
    """Every real case of a wire format the harness has an adapter for, sorted by file name."""
    from harness.providers import formats

    known = set(formats())
    found = (json.loads(p.read_text(encoding="utf-8")) for p in sorted(CASES.glob("*/*.json")))
    return [case for case in found if case["wire_format"] in known]


def _payloads(body: str) -> tuple[list[str], list[_Payload]]:
    """The body's lines and the JSON payloads in it: the whole body, or one per SSE data / NDJSON line."""
    try:
        return [body], [_Payload(None, "", "", json.loads(body))]
    except ValueError:
        pass
    lines = body.splitlines(keepends=True)
    found = []
    for number, line in enumerate(lines):
        content = line.rstrip("\r\n")
        prefix = ""
        if content.startswith("data:"):
            prefix = "data: " if content.startswith("data: ") else "data:"
            content = content[len(prefix) :]
        try:
            value = json.loads(content)
        except ValueError:
            continue
        found.append(_Payload(number, prefix, line[len(line.rstrip("\r\n")) :], value))
    return lines, found


def _paths(value: Any) -> list[Path_]:
    """Every path below the root of a JSON value, in document order."""
    found: list[Path_] = []
    stack: list[tuple[Path_, Any]] = [((), value)]
    while stack:
        path, node = stack.pop()
        children: list[tuple[str | int, Any]] = []
        if isinstance(node, dict):
            children = list(node.items())
        elif isinstance(node, list):
            children = list(enumerate(node))
        for key, child in reversed(children):
            found.append((*path, key))
            stack.append(((*path, key), child))
    return found


def _get(value: Any, path: Path_) -> Any:
    for step in path:
        value = value[step]
    return value


def _replaced(value: Any, path: Path_, new: Any, *, drop: bool = False) -> Any:
    """A copy of ``value`` with the node at ``path`` replaced (or its key dropped)."""
    if not path:
        return new
    copy = json.loads(json.dumps(value))
    parent = _get(copy, path[:-1])
    if drop:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return copy


def _dumps(value: Any, raw: dict[str, str] | None = None) -> str:
    """JSON text (lone surrogates escaped); each sentinel string in ``raw`` becomes its raw text."""
    text = json.dumps(value)
    for sentinel, replacement in (raw or {}).items():
        text = text.replace(json.dumps(sentinel), replacement)
    return text


def _with_payload(lines: list[str], payload: _Payload, text: str) -> str:
    if payload.messages is not None:  # a binary body: the message framed again around the new payload
        raw = text.encode("utf-8", errors="surrogateescape")
        changed = [(h, raw if i == payload.line else p) for i, (h, p) in enumerate(payload.messages)]
        return _b64(framed(changed))
    if payload.line is None:
        return text
    changed = list(lines)
    changed[payload.line] = payload.prefix + text + payload.suffix
    return "".join(changed)


def _label(path: Path_) -> str:
    return "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path) or "$"


def _frames(body: str) -> list[str]:
    """An SSE or NDJSON body cut after each blank line (SSE) or each line (NDJSON)."""
    if re.search(r"^(data|event):", body, re.M):
        return [f for f in re.split(r"(?<=\n\n)", body) if f]
    return body.splitlines(keepends=True)


def _binary_payloads(body: str) -> tuple[list[str], list[_Payload]]:
    """The JSON payload of each message of a binary body (an AWS event stream, as base64)."""
    messages = messages_of(base64.b64decode(body))
    found = []
    for number, (_, payload) in enumerate(messages):
        try:
            found.append(_Payload(number, "", "", json.loads(payload), messages))
        except ValueError:
            continue
    return [], found


def _candidates(case: dict[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """Every mutation of a case as ``(kind, detail, maker)``; ``maker()`` gives (body, stream)."""
    response = case["response"]
    body: str = response["body"]
    stream: bool = response["stream"]
    binary = response.get("body_encoding") == "base64"
    lines, payloads = _binary_payloads(body) if binary else _payloads(body)
    rng = random.Random(case["id"])

    for number, payload in enumerate(payloads):
        where = f"payload {number}"
        paths = _paths(payload.value)
        for path in paths:
            parent = _get(payload.value, path[:-1])
            original = _get(payload.value, path)
            if isinstance(parent, dict):
                yield "drop_key", f"{where} {_label(path)}", (lines, payload, path, None, "drop")
            for name, sample in SAMPLES:
                if type(sample) is not type(original):
                    yield "retype", f"{where} {_label(path)} -> {name}", (lines, payload, path, sample, "set")
            if isinstance(original, str):
                for surrogate in SURROGATES:
                    new = original[: len(original) // 2] + surrogate + original[len(original) // 2 :]
                    yield (
                        "lone_surrogate",
                        f"{where} {_label(path)} {surrogate!r}",
                        (
                            lines,
                            payload,
                            path,
                            new,
                            "set",
                        ),
                    )
                yield (
                    "deep_string",
                    f"{where} {_label(path)}",
                    (
                        lines,
                        payload,
                        path,
                        "[" * DEPTH + "]" * DEPTH,
                        "set",
                    ),
                )
            if isinstance(parent, dict) and isinstance(path[-1], str):
                key = path[-1] + SURROGATES[0]
                yield "lone_surrogate", f"{where} key {_label(path)}", (lines, payload, path, key, "rekey")
            if isinstance(original, dict | list):
                yield "deep_nesting", f"{where} {_label(path)}", (lines, payload, path, None, "deep")
        yield "deep_nesting", f"{where} root in a list", (lines, payload, (), None, "wrap_list")
        yield "deep_nesting", f"{where} root in an object", (lines, payload, (), None, "wrap_object")

    if binary:
        yield from _binary_candidates(body, payloads, stream, rng)
        return
    for fraction in range(1, 16):
        offset = len(body) * fraction // 16
        yield "truncate", f"at {offset}/{len(body)}", ("text", body[:offset], stream)
    for offset in sorted(rng.sample(range(1, max(len(body), 2)), min(8, max(len(body) - 1, 1)))):
        yield "truncate", f"at {offset}/{len(body)}", ("text", body[:offset], stream)

    raw = body.encode("utf-8")
    for bad in BAD_BYTES:
        for _ in range(3):
            offset = rng.randrange(len(raw) + 1)
            text = (raw[:offset] + bad + raw[offset:]).decode("utf-8", errors="surrogateescape")
            yield "invalid_utf8", f"{bad!r} at {offset}", ("text", text, stream)

    yield "stream_flag_flipped", f"stream={not stream}", ("text", body, not stream)

    if not stream:
        return
    for round_ in range(24):
        cuts = sorted(rng.sample(range(1, len(body)), min(1 + round_ % 4, len(body) - 1)))
        separator = ("\n\n", "\n", "\r\n", "\n\n\n")[round_ % 4]
        pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
        yield "split_frames", f"{separator!r} at {cuts}", ("text", separator.join(pieces), stream)
    frames = _frames(body)
    for number in range(len(frames)):
        duplicated = [*frames[: number + 1], frames[number], *frames[number + 1 :]]
        yield "duplicate_chunk", f"frame {number}", ("text", "".join(duplicated), stream)
        yield (
            "drop_chunk",
            f"frame {number}",
            ("text", "".join(frames[:number] + frames[number + 1 :]), stream),
        )


def _binary_candidates(
    body: str, payloads: list[_Payload], stream: bool, rng: random.Random
) -> Iterator[tuple[str, str, Any]]:
    """The byte-level mutations of a binary body: cut anywhere, invalid UTF-8 in a payload, a
    byte changed (a CRC that no longer holds), messages duplicated or dropped."""
    data = base64.b64decode(body)
    messages = payloads[0].messages if payloads else messages_of(data)
    assert messages is not None
    for fraction in range(1, 16):
        offset = len(data) * fraction // 16
        yield "truncate", f"at byte {offset}/{len(data)}", ("text", _b64(data[:offset]), stream)
    for bad in BAD_BYTES:
        for _ in range(3):
            number = rng.randrange(len(messages))
            headers, payload = messages[number]
            offset = rng.randrange(len(payload) + 1)
            changed = list(messages)
            changed[number] = (headers, payload[:offset] + bad + payload[offset:])
            detail = f"{bad!r} at {offset} of message {number}"
            yield "invalid_utf8", detail, ("text", _b64(framed(changed)), stream)
    yield "stream_flag_flipped", f"stream={not stream}", ("text", body, not stream)
    for _ in range(24):
        offset = rng.randrange(len(data))
        flipped = data[:offset] + bytes([data[offset] ^ 0x5A]) + data[offset + 1 :]
        yield "split_frames", f"byte {offset} changed", ("text", _b64(flipped), stream)
    for number in range(len(messages)):
        duplicated = [*messages[: number + 1], messages[number], *messages[number + 1 :]]
        yield "duplicate_chunk", f"message {number}", ("text", _b64(framed(duplicated)), stream)
        dropped = messages[:number] + messages[number + 1 :]
        yield "drop_chunk", f"message {number}", ("text", _b64(framed(dropped)), stream)


def _make(maker: Any, stream: bool) -> tuple[str, bool]:
    """The body (and stream flag) a mutation maker describes."""
    if maker[0] == "text":
        return maker[1], maker[2]
    lines, payload, path, new, how = maker
    value = payload.value
    if how == "drop":
        text = _dumps(_replaced(value, path, None, drop=True))
    elif how == "set":
        text = _dumps(_replaced(value, path, new))
    elif how == "rekey":
        copy = _replaced(value, (), json.loads(json.dumps(value)))
        parent = _get(copy, path[:-1])
        parent[new] = parent.pop(path[-1])
        text = _dumps(copy)
    elif how == "deep":
        sentinel = "\x00deep\x00"
        text = _dumps(_replaced(value, path, sentinel), {sentinel: "[" * DEPTH + "]" * DEPTH})
    elif how == "wrap_list":
        text = "[" * DEPTH + _dumps(value) + "]" * DEPTH
    else:
        text = '{"a":' * DEPTH + _dumps(value) + "}" * DEPTH
    return _with_payload(lines, payload, text), stream


def mutations(case: dict[str, Any], per_kind: int | None = None) -> Iterator[Mutation]:
    """The mutations of one case; with ``per_kind``, a fixed-seed sample of that many per kind."""
    by_kind: dict[str, list[tuple[str, Any]]] = collections.defaultdict(list)
    for kind, detail, maker in _candidates(case):
        by_kind[kind].append((detail, maker))
    response = case["response"]
    headers = {"content-type": response["content_type"]} if response.get("content_type") else {}
    for kind in KINDS:
        chosen = by_kind.get(kind, [])
        if per_kind is not None and len(chosen) > per_kind:
            rng = random.Random(f"{case['id']}:{kind}")
            chosen = [chosen[i] for i in sorted(rng.sample(range(len(chosen)), per_kind))]
        for detail, maker in chosen:
            body, stream = _make(maker, response["stream"])
            wire = WireResponse(response["status"], body, headers)
            yield Mutation(case["id"], kind, detail, case["wire_format"], stream, wire)


def strings(value: Any) -> Iterator[str]:
    """Every string inside a parsed turn (dataclasses, dicts with their keys, lists, tuples)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            yield node
        elif dataclasses.is_dataclass(node) and not isinstance(node, type):
            stack.extend(getattr(node, f.name) for f in dataclasses.fields(node))
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list | tuple | set | frozenset):
            stack.extend(node)


def not_utf8(value: Any) -> list[str]:
    """The strings of ``value`` that cannot be encoded as UTF-8 (lone surrogates)."""
    bad = []
    for text in strings(value):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            bad.append(text)
    return bad


def guard_hits(turn: ParsedTurn) -> list[str]:
    """The details of findings made by the generic guard of ``Adapter.parse`` (a parser crashed)."""
    return [f.detail for f in turn.findings if f.evidence and "guard" in f.evidence]


@dataclass
class Outcome:
    """What parsing one mutation gave: a turn, or the exception that escaped."""

    turn: ParsedTurn | None
    exception: str | None = None


def adapters_for(wire_format: str, number: int) -> list[Adapter]:
    """The case's adapter, and the same adapter in prompted mode (the protocol rotates)."""
    native = adapter_class(wire_format)()
    return [native, prompted(native, PROTOCOLS[number % len(PROTOCOLS)])]


def run(mutation: Mutation, adapter: Adapter) -> Outcome:
    try:
        return Outcome(adapter.parse(mutation.response, stream=mutation.stream))
    except Exception as exc:  # the very thing this run looks for
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return Outcome(None, f"{type(exc).__name__}: {exc} at {Path(where.filename).name}:{where.lineno}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-kind", type=int, default=None, help="sample this many per kind and case")
    parser.add_argument("--show", type=int, default=5, help="failures to print in full")
    args = parser.parse_args()
    per_kind: collections.Counter[str] = collections.Counter()
    per_finding: collections.Counter[str] = collections.Counter()
    failures: list[str] = []
    guard = exceptions = bad_unicode = parses = 0
    started = time.perf_counter()
    number = 0
    for case in load_cases():
        for mutation in mutations(case, args.per_kind):
            per_kind[mutation.kind] += 1
            for adapter in adapters_for(mutation.wire_format, number):
                parses += 1
                outcome = run(mutation, adapter)
                label = f"{mutation.case} {mutation.kind} {mutation.detail[:80]} ({adapter.format})"
                if outcome.turn is None:
                    exceptions += 1
                    failures.append(f"exception: {outcome.exception}: {label}")
                    continue
                hits = guard_hits(outcome.turn)
                if hits:
                    guard += 1
                    failures.append(f"guard: {hits[0][:200]}: {label}")
                if not_utf8(outcome.turn):
                    bad_unicode += 1
                    failures.append(f"not UTF-8: {label}")
                per_finding.update({f.check_id for f in outcome.turn.findings})
            number += 1
    elapsed = time.perf_counter() - started
    total = sum(per_kind.values())
    print(f"{total} mutations of {len(load_cases())} real bodies, {parses} parses in {elapsed:.1f} s")
    print("\nmutations per kind:")
    for kind in KINDS:
        print(f"  {kind:24} {per_kind[kind]:7}")
    print("\nturns with each finding id:")
    for check_id, count in sorted(per_finding.items(), key=lambda item: (-item[1], item[0])):
        print(f"  {check_id:56} {count:7}")
    print(f"\ngeneric-guard hits: {guard}\nexceptions: {exceptions}\nnon-UTF-8 strings: {bad_unicode}")
    for failure in failures[: args.show]:
        print("  " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
