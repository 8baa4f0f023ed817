"""The AWS event stream reader behind the bedrock-converse stream: held to botocore's
``EventStreamBuffer`` on the real recorded streams, to its own one-shot decode for any slicing of
any bytes, and to a finding (never an exception) for every broken frame."""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.agent.rechunk import cut
from harness.providers._bedrock_eventstream import (
    MAX_HEADERS,
    Decoded,
    EventStreamReader,
    decode,
    starts_eventstream,
)
from tests.helpers.eventstream import event, header, message, string_header
from tests.helpers.realworld import all_cases

botocore_eventstream = pytest.importorskip("botocore.eventstream")

STREAMS = [c for c in all_cases() if c["response"].get("body_encoding") == "base64"]
BODIES = [base64.b64decode(c["response"]["body"]) for c in STREAMS]
BUDGET = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
"""The tier's hypothesis profile sizes these (tests/conftest.py); large bodies are no health problem."""


def botocore_messages(data: bytes) -> tuple[list[tuple[dict[str, Any], bytes]], Exception | None]:
    """What botocore's reader gives for ``data``: the messages before it stops, and why it stopped
    (``None``: it ran out of whole messages)."""
    buffer = botocore_eventstream.EventStreamBuffer()
    buffer.add_data(data)
    found = []
    try:
        for item in buffer:
            found.append((item.headers, item.payload))
    except Exception as exc:  # botocore raises on what the harness reports as problems
        return found, exc
    return found, None


def ours(decoded: Decoded) -> list[tuple[dict[str, Any], bytes]]:
    return [(m.headers, m.payload) for m in decoded.messages]


def fed(data: bytes, cuts: list[int]) -> Decoded:
    """``data`` fed to the incremental reader in the pieces ``cuts`` make."""
    reader = EventStreamReader()
    for piece in cut(data, sorted(set(cuts))):
        reader.feed(piece)
    return reader.close()


# -- the real recorded streams ---------------------------------------------------------------


def test_there_are_real_streams() -> None:
    assert len(STREAMS) >= 10


@pytest.mark.parametrize("data", BODIES, ids=[c["id"] for c in STREAMS])
def test_real_streams_decode_as_botocore_decodes_them(data: bytes) -> None:
    decoded = decode(data)
    assert decoded.problems == []
    assert ours(decoded) == botocore_messages(data)[0] != []
    assert starts_eventstream(data)


@pytest.mark.parametrize("data", BODIES, ids=[c["id"] for c in STREAMS])
def test_real_streams_read_the_same_one_byte_at_a_time(data: bytes) -> None:
    assert fed(data, list(range(1, len(data)))) == decode(data)


# -- any slicing of any bytes --------------------------------------------------------------------


@st.composite
def hostile(draw: st.DrawFn) -> bytes:
    """A real stream, or random bytes, maybe broken: a byte changed, cut short, bytes added."""
    data = draw(st.sampled_from(BODIES) | st.binary(max_size=300))
    damage = draw(st.sampled_from(["none", "flip", "cut", "append", "flip-cut"]))
    if damage in ("flip", "flip-cut") and data:
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
    if damage in ("cut", "flip-cut") and data:
        data = data[: draw(st.integers(0, len(data)))]
    if damage == "append":
        data += draw(st.binary(max_size=40))
    return data


@BUDGET
@given(data=hostile(), cuts=st.lists(st.integers(0, 20_000), max_size=60))
def test_any_slicing_reads_as_the_whole_body(data: bytes, cuts: list[int]) -> None:
    assert fed(data, [c % (len(data) + 1) for c in cuts]) == decode(data)


@BUDGET
@given(data=hostile())
def test_what_is_read_before_a_problem_is_what_botocore_reads(data: bytes) -> None:
    """botocore stops (raising) at a broken message; the messages before it are the same as ours
    before our first problem, and a stream botocore reads through has no problem of ours but a cut
    message at its end."""
    decoded = decode(data)
    theirs, stopped = botocore_messages(data)
    first = decoded.problems[0].offset if decoded.problems else len(data) + 1
    before = [(m.headers, m.payload) for m in decoded.messages if m.offset < first]
    if stopped is None:
        assert before == theirs
        assert all(p.kind == "truncated" for p in decoded.problems)
    else:
        assert before == theirs[: len(before)] and decoded.problems


# -- each broken frame is a problem, never an exception ---------------------------------------

HELLO = event("messageStart", {"role": "assistant"})
STOP = event("messageStop", {"stopReason": "end_turn"})


def kinds(decoded: Decoded) -> list[str]:
    return [p.kind for p in decoded.problems]


def test_a_prelude_crc_that_lies_stops_the_reading() -> None:
    broken = message(string_header(":event-type", "x"), b"{}", prelude_crc=0)
    decoded = decode(HELLO + broken + STOP)
    assert kinds(decoded) == ["prelude_crc_mismatch"] and len(decoded.messages) == 1
    assert decoded.problems[0].offset == len(HELLO)
    assert f"at byte {len(HELLO)}" in decoded.problems[0].describe()


def test_a_message_crc_that_lies_drops_that_message_only() -> None:
    broken = message(string_header(":event-type", "x"), b"{}", crc=0)
    decoded = decode(HELLO + broken + STOP)
    assert kinds(decoded) == ["message_crc_mismatch"]
    assert [m.headers[":event-type"] for m in decoded.messages] == ["messageStart", "messageStop"]


@pytest.mark.parametrize("keep", [3, 11, 12, 20, len(STOP) - 1])
def test_a_cut_message_is_reported_with_what_it_said_it_had(keep: int) -> None:
    decoded = fed(HELLO + STOP[:keep], [5, len(HELLO) + 1])
    assert kinds(decoded) == ["truncated"] and len(decoded.messages) == 1
    detail = decoded.problems[0].detail
    assert f"ends {keep} byte(s) into it" in detail
    assert (f"of the {len(STOP)} it says it has" in detail) == (keep >= 4)


@pytest.mark.parametrize(
    ("headers", "kind"),
    [
        (header("a", 42), "header_malformed"),  # an unknown value type
        (header("a", 7, struct.pack(">H", 50) + b"short"), "header_malformed"),  # runs past the section
        (bytes([9]) + b"abc", "header_malformed"),  # a name longer than the section
        (header("n", 4, b"\x00\x01"), "header_malformed"),  # an int32 of two bytes
        (string_header("a", "1") + string_header("a", "2"), "duplicate_header"),
    ],
    ids=["unknown-type", "string-past-end", "name-past-end", "short-int", "duplicate"],
)
def test_malformed_headers_drop_their_message(headers: bytes, kind: str) -> None:
    decoded = decode(HELLO + message(headers, b"{}") + STOP)
    assert kinds(decoded) == [kind] and len(decoded.messages) == 2


def test_every_header_type_is_read() -> None:
    headers = (
        header("t", 0)
        + header("f", 1)
        + header("b", 2, b"\xff")
        + header("s", 3, b"\x01\x00")
        + header("i", 4, struct.pack(">i", -7))
        + header("l", 5, struct.pack(">q", 2**40))
        + header("y", 6, b"\x00\x03\x00\xff\x01")
        + string_header("u", "é")
        + header("ts", 8, struct.pack(">q", 1_700_000_000_000))
        + header("id", 9, bytes(range(16)))
    )
    [read] = decode(message(headers, b"")).messages
    assert read.headers == {
        "t": True,
        "f": False,
        "b": -1,
        "s": 256,
        "i": -7,
        "l": 2**40,
        "y": b"\x00\xff\x01",
        "u": "é",
        "ts": 1_700_000_000_000,
        "id": bytes(range(16)),
    }
    assert botocore_messages(message(headers, b""))[0][0][0]["u"] == "é"


@pytest.mark.parametrize(
    ("total", "headers_length", "kind"),
    [
        (8, 0, "bad_lengths"),
        (40, 30, "bad_lengths"),
        (MAX_HEADERS + 100, MAX_HEADERS + 1, "headers_too_long"),
    ],
)
def test_lengths_that_cannot_be_stop_the_reading(total: int, headers_length: int, kind: str) -> None:
    prelude = struct.pack(">II", total, headers_length)
    data = prelude + struct.pack(">I", zlib.crc32(prelude)) + b"\x00" * 8
    decoded = decode(HELLO + data)
    assert kinds(decoded) == [kind] and len(decoded.messages) == 1


def test_a_payload_past_the_limit_stops_the_reading_before_it_is_buffered() -> None:
    prelude = struct.pack(">II", 0xFFFFFFF0, 0)
    head = prelude + struct.pack(">I", zlib.crc32(prelude))
    reader = EventStreamReader()
    reader.feed(head)
    reader.feed(b"\x00" * 1000)  # ignored: nothing after the bad prelude is read
    assert kinds(reader.close()) == ["payload_too_long"]


def test_text_is_not_an_event_stream() -> None:
    assert not starts_eventstream(b'data: {"a": 1}\n\n') and not starts_eventstream(b"")
    assert starts_eventstream(HELLO)
