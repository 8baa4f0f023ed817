"""The transport reads a body no further than its limit, decompressed a bounded piece at a time
(a 2 MB gzip that inflates to 2 GiB, the same compressed twice, an endless plain stream), and
joins a format's path to a base URL that carries a query (Azure's ``?api-version=``)."""

from __future__ import annotations

import gzip
import json
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import httpx
import pytest

from harness import secrets
from harness.errors import TransportError
from harness.model import OversizedResponse, WireRequest, WireResponse
from harness.providers import adapter_class
from harness.transport.cassette import CassetteTransport
from harness.transport.send import KEPT_BYTES, MAX_RESPONSE_BYTES, Timeouts, Transport
from tests.helpers.hostile_replies import MIB, Tripwire, bomb_size, gzip_bomb

WIRE = WireRequest("/v1/chat/completions", {"model": "m", "messages": []})
BOMB_TRIP = 128 * 1024
"""Compressed bytes a test lets the reader take (about 128 MiB inflated): the bound reads ~33 KB."""


class Lazy(httpx.SyncByteStream):
    """A response body made as it is read."""

    def __init__(self, chunks: Iterable[bytes]):
        self.chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks


def send(body: Iterable[bytes], encoding: str | None = None) -> WireResponse:
    headers = {"content-type": "application/json"} | ({"content-encoding": encoding} if encoding else {})
    transport = Transport(
        "http://test",
        client_transport=httpx.MockTransport(
            lambda request: httpx.Response(200, headers=headers, stream=Lazy(body))
        ),
    )
    return transport.send(WIRE).response


def bounded(run: Callable[[], WireResponse]) -> tuple[WireResponse, float, int]:
    """What ``run()`` returns, with the CPU seconds it took (the machine may be busy) and its peak of
    traced memory."""
    tracemalloc.start()
    started = time.process_time()
    try:
        result = run()
        return result, time.process_time() - started, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_gzip_bomb_is_read_no_further_than_the_limit() -> None:
    """2 MB of gzip that inflates to 2 GiB: about 33 KB of it is read, memory stays near the limit
    (6.2 GB before, the body held whole and written twice)."""
    response, seconds, peak = bounded(lambda: send(gzip_bomb(2048, trip_after=BOMB_TRIP), "gzip"))
    assert isinstance(response, OversizedResponse) and response.limit == MAX_RESPONSE_BYTES
    assert MAX_RESPONSE_BYTES < response.received <= MAX_RESPONSE_BYTES + 64 * 1024
    assert response.body == "\0" * KEPT_BYTES
    assert peak < MAX_RESPONSE_BYTES + 16 * MIB and seconds < 10, (peak, seconds)


def test_a_body_compressed_twice_is_inflated_a_piece_at_a_time() -> None:
    """``content-encoding: gzip, gzip``: 64 KiB of the outer layer hold 64 MiB of the inner one,
    which inflate to terabytes; each layer gives at most 64 KiB at a step."""
    inner = b"".join(gzip_bomb(64))  # 64 KiB of gzip, 64 MiB inflated
    outer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)

    def twice() -> Iterator[bytes]:
        for _ in range(64):  # 4 GiB once inflated twice
            yield outer.compress(inner)
        yield outer.flush()

    response, seconds, peak = bounded(lambda: send(twice(), "gzip, gzip"))
    assert isinstance(response, OversizedResponse)
    assert peak < MAX_RESPONSE_BYTES + 16 * MIB and seconds < 10, (peak, seconds)


def test_an_endless_plain_stream_is_cut_at_the_limit() -> None:
    def endless() -> Iterator[bytes]:
        sent = 0
        while True:
            if sent > 2 * MAX_RESPONSE_BYTES:
                raise Tripwire("the plain stream was read past twice the limit")
            yield b"data: {}\n\n" * 6554
            sent += 65540

    response = send(endless())
    assert isinstance(response, OversizedResponse) and response.body.startswith("data: {}\n\n")
    turn = adapter_class("openai-chat")().parse(response, stream=True)
    assert turn.error is not None and turn.error.code == "body_too_large"
    assert [f.check_id for f in turn.findings] == ["wire.body_too_large"]


@pytest.mark.parametrize("encoding", ["gzip", "x-gzip", "deflate", "deflate-raw", "identity", None])
def test_bodies_within_the_limit_are_read_whole_and_decoded(encoding: str | None) -> None:
    text = json.dumps({"choices": [], "n": list(range(30_000))}).encode()
    body = {
        "gzip": gzip.compress(text),
        "x-gzip": gzip.compress(text),
        "deflate": zlib.compress(text),
        "deflate-raw": zlib.compress(text)[2:-4],  # deflate without its zlib header, as some servers send it
    }.get(encoding or "", text)
    wire = "deflate" if encoding == "deflate-raw" else encoding
    response = send([body[i : i + 1000] for i in range(0, len(body), 1000)], wire)
    assert not isinstance(response, OversizedResponse) and response.body == text.decode()


def test_compressed_data_that_inflates_to_nothing_still_meets_the_deadline() -> None:
    """Empty deflate blocks, without end: nothing comes out, yet the total deadline holds (it is
    checked as each piece arrives, not as output comes)."""

    def empty_blocks() -> Iterator[bytes]:
        yield b"\x78\x9c"  # a zlib header, then empty stored blocks
        for _ in range(2_000_000):
            yield b"\x00\x00\x00\xff\xff" * 1000
        raise Tripwire("10 GB of empty blocks read: the deadline was never checked")

    sender = Transport(
        "http://test",
        client_transport=httpx.MockTransport(
            lambda request: httpx.Response(
                200, headers={"content-encoding": "deflate"}, stream=Lazy(empty_blocks())
            )
        ),
        timeouts=Timeouts(total_s=0.2),
    )
    with pytest.raises(TransportError, match=r"within the 0 s deadline \(0 bytes received\)"):
        sender.send(WIRE)


def test_a_corrupt_gzip_body_is_no_usable_response() -> None:
    with pytest.raises(TransportError, match=r"no usable response.*DecodingError"):
        send([b"\x1f\x8b\x08\x00not gzip at all"], "gzip")


def test_a_recorded_bomb_keeps_its_first_bytes_and_replays_the_same_finding(tmp_path: Path) -> None:
    """Record mode reads through the cassette: the bound holds there too, the cassette keeps the first
    bytes and how far reading went, and replay fails the turn as the live run did."""
    path = tmp_path / "c.yaml"
    headers = {"content-encoding": "gzip", "content-length": str(bomb_size(2048))}
    live = httpx.MockTransport(
        lambda request: httpx.Response(
            200, headers=headers, stream=Lazy(gzip_bomb(2048, trip_after=BOMB_TRIP))
        )
    )
    recorder = CassetteTransport(path, mode="record", target="t", scenario_id="s", inner=live)
    recorded, seconds, peak = bounded(
        lambda: Transport("http://test", client_transport=recorder).send(WIRE).response
    )
    recorder.save()
    assert peak < MAX_RESPONSE_BYTES + 16 * MIB and seconds < 10, (peak, seconds)
    assert path.stat().st_size < 5 * KEPT_BYTES
    replayer = CassetteTransport(path, mode="replay", target="t", scenario_id="s")
    replayed = Transport("http://test", client_transport=replayer).send(WIRE).response
    for response in (recorded, replayed):
        assert isinstance(response, OversizedResponse) and response.received == recorded.received
        assert response.body == "\0" * KEPT_BYTES
        turn = adapter_class("openai-chat")().parse(response, stream=False)
        assert turn.error is not None and turn.error.code == "body_too_large"


def test_a_recorded_body_past_the_limit_is_cut_when_played(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cassette from elsewhere may hold a body past the limit whole: played, it is the same
    finding (the limit is made small here so the cassette stays small)."""
    from harness.transport import send as transport

    path = tmp_path / "c.yaml"
    recorder = CassetteTransport(
        path,
        mode="record",
        target="t",
        scenario_id="s",
        inner=httpx.MockTransport(lambda r: httpx.Response(200, text="x" * 10_000)),
    )
    Transport("http://test", client_transport=recorder).send(WIRE)
    recorder.save()
    monkeypatch.setattr(transport, "MAX_RESPONSE_BYTES", 5_000)
    replayer = CassetteTransport(path, mode="replay", target="t", scenario_id="s")
    played = Transport("http://test", client_transport=replayer).send(WIRE).response
    assert isinstance(played, OversizedResponse) and (played.received, played.limit) == (10_000, 5_000)
    assert played.body == "x" * KEPT_BYTES


# -- base URLs with a query -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base_url", "path", "url"),
    [
        (
            "https://h/m/ok?api-version=2024-01-01",
            "/v1/messages",
            "https://h/m/ok/v1/messages?api-version=2024-01-01",
        ),
        (
            "https://h/m/ok/?api-version=1",
            "/v1/x:stream?alt=sse",
            "https://h/m/ok/v1/x:stream?alt=sse&api-version=1",
        ),
        ("https://h/base/", "/v1/chat", "https://h/base/v1/chat"),
        ("https://h/base#part", "/v1/chat", "https://h/base/v1/chat"),
    ],
)
def test_a_formats_path_joins_the_base_path_and_the_query_stays(base_url: str, path: str, url: str) -> None:
    assert Transport(base_url).url(path) == url


def test_the_query_goes_on_every_request_and_its_credentials_stay_scrubbed() -> None:
    seen: list[str] = []

    def server(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, json={"choices": []})

    sender = Transport(
        "https://h/deployments/d?api-version=2024-01-01&key=sk-QUERY-SECRET",
        client_transport=httpx.MockTransport(server),
    )
    try:
        sent = [sender.send(WIRE), sender.send(WIRE)]
    finally:
        secrets.forget_all()
    assert (
        seen == ["https://h/deployments/d/v1/chat/completions?api-version=2024-01-01&key=sk-QUERY-SECRET"] * 2
    )
    for one in sent:
        assert (
            one.request.url
            == "https://h/deployments/d/v1/chat/completions?api-version=2024-01-01&key=<scrubbed>"
        )
