"""Sending a request: the endpoint, the bounded body reader, timeouts and retries.

An :class:`Endpoint` (made by :mod:`harness.servers.endpoints`) carries one pooled transport for a
whole run (:mod:`harness.transport.live`); replay and record wrap it with a cassette transport
(:mod:`harness.transport.cassette`), so the rest of the harness cannot tell a live call from a
replayed one. Requests go straight to the transport: no :class:`httpx.Client` is built.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from urllib.parse import urlsplit, urlunsplit

import httpx
import tenacity

from harness import secrets
from harness.errors import TransportError
from harness.model import (
    Attempt,
    Finding,
    OversizedResponse,
    SentRequest,
    WireRequest,
    WireResponse,
    is_binary,
)
from harness.transport.credentials import masked, safe_url, scrub_uri
from harness.transport.limits import Pace, RateLimiter, retry_after
from harness.transport.live import LiveTransport

RETRY_STATUSES = frozenset({429, 502, 503, 504, 529})
"""The HTTP statuses that mean "unavailable, try again": retried by default (:class:`RetryPolicy`),
and still one after the retries makes a run an ``error`` (:mod:`harness.checks.outcomes`)."""

MAX_RESPONSE_BYTES = 32 * 1024 * 1024
"""Largest response body read, counted once decompressed (gzip and deflate are inflated here, a
piece at a time): a whole reply or a stream. Real replies stay far below it (a 64k-token stream is
a few megabytes); a body past it, a 2 MB gzip that inflates to 2 GiB say, is not read further, and
the turn ends in a ``wire.body_too_large`` finding."""
KEPT_BYTES = 4096
"""Of a body past :data:`MAX_RESPONSE_BYTES`, what transcripts and cassettes keep: its first bytes."""
_PIECE = 64 * 1024
"""Most bytes one inflate step may produce: what bounds memory while a compressed body is read."""


@dataclass
class Endpoint:
    """Where one target's requests go for a run: the base URL, the headers sent with every
    request (the key among them), and the HTTP transport shared by all of the target's runs
    (``None`` in replay, where cassettes answer). Endpoints with the same ``limit`` share one
    concurrency limit (targets of one local model server). ``facts`` is what the server said
    about itself when the run began (see :mod:`harness.servers.probe`); cassettes keep it."""

    base_url: str
    headers: dict[str, str] = field(default_factory=dict)
    transport: httpx.BaseTransport | None = None
    limit: str = ""
    facts: dict[str, Any] = field(default_factory=dict)
    limiter: RateLimiter | None = None  # the target's requests / tokens per minute (live, record)
    pace: Pace | None = None  # the pace the provider accepts, found as the run goes (live, record)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def cut(self) -> None:
        """End every request in flight on this endpoint now (an interrupted run)."""
        if isinstance(self.transport, LiveTransport):
            self.transport.cut()

    def share(self, parts: int) -> Endpoint:
        """This endpoint for one of ``parts`` forked worker processes: its own connections, its
        share of the rate limits and a pace of its own (each finds its share of the provider's)."""
        transport = self.transport.fresh() if isinstance(self.transport, LiveTransport) else self.transport
        limiter = self.limiter.share(parts) if self.limiter is not None else None
        pace = Pace() if self.pace is not None else None
        return dataclasses.replace(self, transport=transport, limiter=limiter, pace=pace)


class Played(NamedTuple):
    """A recorded answer played without httpx's objects: status, headers (lower-case names),
    body, the recorded latency, and the bytes read when the body was past the limit."""

    status: int
    headers: dict[str, str]
    content: bytes
    elapsed_ms: float | None
    over_limit: int | None = None


class Body(NamedTuple):
    """A response body as read: all of it, or, when it passed :data:`MAX_RESPONSE_BYTES`, its first
    :data:`KEPT_BYTES` and ``over_limit``, the bytes read (decompressed) before reading stopped."""

    content: bytes
    over_limit: int | None = None


OVER_LIMIT = "harness_over_limit"
"""The extension of an ``httpx.Response`` (a cassette's) whose body was cut at the limit: the bytes read."""


def read_body(response: httpx.Response, *, deadline: Callable[[int], None] | None = None) -> Body:
    """The body of ``response``, decompressed and read no further than :data:`MAX_RESPONSE_BYTES`,
    a whole reply or a stream alike. ``deadline`` is called with the bytes read so far after each
    piece that arrives (it raises to stop the read).

    gzip and deflate are inflated here, at most 64 KiB at a step, rather than by httpx, whose
    decoder inflates each network read whole: 64 KiB of gzip can hold 64 MiB, and a body
    compressed twice (``content-encoding: gzip, gzip``) gigabytes."""
    chunks, received = [], 0
    for chunk in _decoded(response):
        chunks.append(chunk)
        received += len(chunk)
        if received > MAX_RESPONSE_BYTES:  # keep the first bytes, without joining the rest
            head = bytearray()
            for piece in chunks:
                head += piece[: KEPT_BYTES - len(head)]
                if len(head) == KEPT_BYTES:
                    break
            return Body(bytes(head), received)
        if deadline is not None:
            deadline(received)
    return Body(b"".join(chunks))


def _decoded(response: httpx.Response) -> Iterator[bytes]:
    """The body's bytes as they arrive, content-decoded a bounded piece at a time, and ``b""`` for
    a piece that decoded to nothing (so a deadline is checked however little comes out). A body
    already read whole, as ``httpx.Response(content=...)`` reads it, is given as it is."""
    try:
        yield response.content
        return
    except httpx.ResponseNotRead:
        pass
    chunks: Iterator[bytes] = response.iter_raw()
    codings = [c.strip().lower() for c in response.headers.get("content-encoding", "").split(",")]
    for coding in reversed(codings):  # listed in the order applied: undone from the last
        if coding in ("gzip", "x-gzip"):
            chunks = _inflate(chunks, zlib.MAX_WBITS | 16)
        elif coding == "deflate":
            chunks = _inflate(chunks, zlib.MAX_WBITS, raw_fallback=True)
        # identity, and codings httpx would not decode either, pass as they are
    yield from chunks


def _inflate(chunks: Iterator[bytes], wbits: int, *, raw_fallback: bool = False) -> Iterator[bytes]:
    """``chunks`` inflated, never more than :data:`_PIECE` bytes at a step (``b""`` for a chunk
    that gave nothing); reading ends with the compressed data (bytes after it are ignored, as
    httpx ignores them). ``deflate`` may come without its zlib header (``raw_fallback``, as
    httpx allows). A corrupt stream is an ``httpx.DecodingError``."""
    inflater, first = zlib.decompressobj(wbits), True
    try:
        for chunk in chunks:
            data, gave = chunk, False
            while data and not inflater.eof:
                try:
                    piece = inflater.decompress(data, _PIECE)
                except zlib.error:
                    if not (first and raw_fallback):
                        raise
                    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
                    piece = inflater.decompress(data, _PIECE)
                first, data = False, inflater.unconsumed_tail
                if piece:
                    gave = True
                    yield piece
            if not gave:
                yield b""
            if inflater.eof:
                break
        if tail := inflater.flush():
            yield tail
    except zlib.error as exc:
        raise httpx.DecodingError(str(exc)) from exc


@functools.lru_cache(maxsize=256)
def _httpx_url(url: str) -> httpx.URL:
    """``url`` parsed for httpx (immutable: shared by every run that sends to it)."""
    return httpx.URL(url)


def json_body(value: Any) -> bytes:
    """A request body as the harness sends it: JSON as ``httpx.Request(json=...)`` encodes it (so
    bodies recorded through httpx match byte for byte)."""
    return _BODY.encode(value).encode("utf-8")


_BODY = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
"""httpx's ``json=`` encoder, made once (``json.dumps`` with options makes one per call)."""


@dataclass
class _Log:
    """What one send went through: every attempt, and a finding per retry."""

    attempts: list[Attempt] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


CLIENT_HEADERS = {
    "accept": "*/*",
    "accept-encoding": "gzip, deflate",
    "connection": "keep-alive",
    "user-agent": f"python-httpx/{httpx.__version__}",
}
"""What an ``httpx.Client`` would add to each request (the harness sends without one)."""


@dataclass
class Sent:
    """A request as sent (secrets already masked) and what came back, with every attempt."""

    request: SentRequest
    response: WireResponse
    elapsed_ms: float | None
    findings: list[Finding] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)


@dataclass(frozen=True)
class RetryPolicy:
    """How a request is retried: ``attempts`` in all, waits growing exponentially from
    ``initial_wait_s`` with full jitter up to ``max_wait_s``; a ``Retry-After`` (seconds or an
    HTTP date) or ``retry-after-ms`` header is honoured up to ``max_wait_s``. Retried: HTTP
    429, 502, 503, 504 and 529, refused and reset connections, timeouts, short bodies."""

    attempts: int = 3
    initial_wait_s: float = 1.0
    max_wait_s: float = 30.0
    statuses: frozenset[int] = RETRY_STATUSES


@dataclass(frozen=True)
class Timeouts:
    """Per request: to connect, between two reads, and in all (a server dripping a byte every
    few seconds is cut at ``total_s``); ``None`` for no limit."""

    connect_s: float = 10.0
    read_s: float = 120.0
    total_s: float | None = 300.0


class _Deadline(tenacity.stop.stop_base):
    """A tenacity stop condition: the run's deadline has passed."""

    def __init__(self, deadline: float | None):
        self.deadline = deadline

    def __call__(self, retry_state: tenacity.RetryCallState) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline


class _Interrupted(tenacity.stop.stop_base):
    """A tenacity stop condition: the run was interrupted (Ctrl-C); no more tries."""

    def __init__(self, event: threading.Event):
        self.event = event

    def __call__(self, retry_state: tenacity.RetryCallState) -> bool:
        return self.event.is_set()


class _Retryable(TransportError):
    """A transport fault worth another try (refused, reset, timed out, cut short)."""


class Transport:
    """Sends adapter requests to one endpoint.

    ``client_transport`` is injected (a cassette transport in replay and record
    mode, ``httpx.MockTransport`` in tests). Retries follow a :class:`RetryPolicy`
    (tenacity), each retry a ``transport.retried`` finding and every attempt kept;
    ``deadline`` (a ``time.monotonic()`` value) bounds the whole run.
    """

    def __init__(
        self,
        base_url: str,
        *,
        auth_headers: dict[str, str] | None = None,
        client_transport: httpx.BaseTransport | None = None,
        timeouts: Timeouts | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], object] | None = None,
        deadline: float | None = None,
        interrupted: threading.Event | None = None,
        limiter: RateLimiter | None = None,
        pace: Pace | None = None,
    ):
        self.base_url, self.query = _split_query(base_url)
        self.limiter, self.pace = limiter, pace
        self.auth_headers = auth_headers or {}
        self.timeouts = timeouts or Timeouts()
        self.retry = retry or RetryPolicy()
        self.sleep = sleep or time.sleep  # replay passes a no-op: recorded 429s need no waiting
        self.deadline = deadline
        self.interrupted = interrupted or threading.Event()
        # requests go straight to the transport, without an httpx.Client around it: a client's
        # URL and header merging, cookie extraction and redirect bookkeeping cost about as much
        # CPU as a replayed exchange, and the harness needs none of them (no cookies, no
        # redirects followed, one base URL)
        self._inner = client_transport or httpx.HTTPTransport()
        # a cassette can answer a request it holds byte for byte without httpx's objects
        # (harness.transport.cassette.CassetteTransport.recorded); other transports have no such method
        self._recorded: Callable[[str, str, bytes], Played | None] | None = getattr(
            client_transport, "recorded", None
        )
        self._shown: dict[str, str] = {}
        self._timeout = httpx.Timeout(self.timeouts.read_s, connect=self.timeouts.connect_s).as_dict()

    @functools.cached_property
    def _retrying(self) -> tenacity.Retrying:
        """Tenacity's retry loop, built when a send first needs a retry (most runs never do), then
        shared by every later send of the run."""
        return tenacity.Retrying(
            stop=tenacity.stop_any(
                tenacity.stop_after_attempt(max(1, self.retry.attempts)),
                _Deadline(self.deadline),
                _Interrupted(self.interrupted),
            ),
            wait=self._wait,
            retry=tenacity.retry_if_exception_type(_Retryable)
            | tenacity.retry_if_result(lambda sent: sent[0].status in self.retry.statuses),
            sleep=self._pause,
            reraise=True,
            retry_error_callback=lambda state: state.outcome.result() if state.outcome else None,
        )

    def close(self) -> None:
        self._inner.close()

    def url(self, path: str) -> str:
        """The URL of ``path`` (the format's, with its own query, if any) under the base URL, the
        base URL's query (Azure's ``?api-version=...``) kept on every request."""
        if not self.query:
            return self.base_url + path
        return f"{self.base_url}{path}{'&' if '?' in path else '?'}{self.query}"

    def _scrubbed(self, url: str) -> str:
        """``url`` as transcripts show it (:func:`scrub_uri`); each turn of a run asks again for the
        same few URLs (kept for the run only: the secrets it redacts are registered as runs go)."""
        shown = self._shown.get(url)
        if shown is None:
            shown = self._shown[url] = scrub_uri(url)
        return shown

    def describe(self, wire: WireRequest, headers: dict[str, str]) -> SentRequest:
        """The request as transcripts keep it: secret headers and query parameters masked, known
        secrets redacted."""
        return SentRequest(
            wire.method, self._scrubbed(self.url(wire.path)), masked(headers), secrets.redact_data(wire.body)
        )

    def send(self, wire: WireRequest) -> Sent:
        """Send with retries; :class:`TransportError` when no usable response came back at all
        (carrying the request record and every attempt)."""
        headers = {"content-type": "application/json", **wire.headers, **self.auth_headers}
        if wire.stream:
            headers.setdefault("accept", "text/event-stream")
        record = self.describe(wire, headers)
        log = _Log()
        try:
            try:  # the first attempt outside tenacity: most sends need no retry, nor its bookkeeping
                first: tuple[WireResponse, float | None] | _Retryable = self._send_once(wire, headers, log)
            except _Retryable as exc:
                first = exc
            if isinstance(first, tuple) and first[0].status not in self.retry.statuses:
                response, elapsed = first
            else:  # tenacity takes it from there, the first attempt played back as its own first
                response, elapsed = self._retrying(self._attempt, iter([first]), wire, headers, log)
        except TransportError as exc:
            exc.request = record
            exc.attempts = log.attempts
            exc.findings = log.findings
            raise
        return Sent(record, response, elapsed, log.findings, log.attempts)

    def _attempt(
        self,
        done: Iterator[tuple[WireResponse, float | None] | _Retryable],
        wire: WireRequest,
        headers: dict[str, str],
        log: _Log,
    ) -> tuple[WireResponse, float | None]:
        """One attempt for tenacity: the outcome of an attempt already made, else a new one."""
        outcome = next(done, None)
        if isinstance(outcome, _Retryable):
            raise outcome
        return outcome if outcome is not None else self._send_once(wire, headers, log)

    def _wait(self, state: tenacity.RetryCallState) -> float:
        """Seconds before the next attempt: exponential with full jitter, a ``Retry-After`` honoured,
        never past the run's deadline; noted as a ``transport.retried`` finding."""
        assert state.outcome is not None
        log: _Log = state.args[3]
        computed = tenacity.wait_random_exponential(
            multiplier=self.retry.initial_wait_s, max=self.retry.max_wait_s
        )(state)
        if not state.outcome.failed:
            response: WireResponse = state.outcome.result()[0]
            computed = min(retry_after(response.headers, default=computed), self.retry.max_wait_s)
        if self.deadline is not None:
            computed = max(0.0, min(computed, self.deadline - time.monotonic()))
        last = log.attempts[-1]
        what = f"HTTP {last.status}" if last.status else str(last.error)
        log.findings.append(
            Finding(
                "transport.retried",
                "info",
                False,
                f"{what}; retried after {computed:.1f}s "
                f"(attempt {len(log.attempts)} of {self.retry.attempts})",
            )
        )
        log.attempts[-1] = dataclasses.replace(last, waited_s=round(computed, 3))
        return float(computed)

    def _pause(self, seconds: float) -> None:
        self.sleep(seconds)

    def _send_once(
        self, wire: WireRequest, headers: dict[str, str], log: _Log
    ) -> tuple[WireResponse, float | None]:
        attempts = log.attempts
        url = self.url(wire.path)
        if self.limiter is not None:  # every attempt counts against the provider's limits
            while (seconds := self.limiter.delay()) > 0 and not self.interrupted.is_set():
                self.sleep(seconds)
        pace = self.pace
        if pace is not None:  # and the pace the provider is found to accept
            while (seconds := pace.delay()) > 0 and not self.interrupted.is_set():
                self.sleep(seconds)
        if self.interrupted.is_set():
            attempts.append(Attempt(None, "interrupted", 0.0))
            raise TransportError(f"interrupted before sending to {safe_url(url)}")
        content = json_body(wire.body)
        if self._recorded is not None and (played := self._recorded(wire.method, url, content)):
            body = Body(played.content, played.over_limit)
            return _answer(played.status, body, played.headers, played.elapsed_ms, attempts)
        sent = httpx.Headers(CLIENT_HEADERS)
        sent.update(headers)  # as httpx.Client merges them: a target's own User-Agent replaces the default
        request = httpx.Request(
            wire.method, _httpx_url(url), content=content, headers=sent, extensions={"timeout": self._timeout}
        )
        started = time.perf_counter()
        sent_at = pace.clock() if pace is not None else 0.0
        total = self.timeouts.total_s
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            total = left if total is None else min(total, left)
        try:
            response = self._inner.handle_request(request)
            response.request = request
            try:
                body = self._read(response, started, total)
            finally:
                response.close()
            if over := response.extensions.get(OVER_LIMIT):  # cut when it was recorded
                body = Body(body.content, over)
        except TransportError as exc:
            attempts.append(Attempt(None, str(exc), _ms(started)))
            raise
        except httpx.TimeoutException as exc:
            message = f"timed out talking to {safe_url(url)}: {type(exc).__name__}"
            attempts.append(Attempt(None, message, _ms(started)))
            raise _Retryable(message) from exc
        except (httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError, httpx.WriteError) as exc:
            message = (
                f"no usable response from {safe_url(url)}: {type(exc).__name__}: {secrets.redact(str(exc))}"
            )
            attempts.append(Attempt(None, message, _ms(started)))
            raise _Retryable(message) from exc
        except httpx.RequestError as exc:  # undecodable bodies, redirect loops, unsupported protocol
            message = (
                f"no usable response from {safe_url(url)}: {type(exc).__name__}: {secrets.redact(str(exc))}"
            )
            attempts.append(Attempt(None, message, _ms(started)))
            raise TransportError(message) from exc
        if "harness_elapsed_ms" in response.extensions:  # replayed: the recorded latency, or none
            elapsed = response.extensions["harness_elapsed_ms"]
        else:
            elapsed = _ms(started)
        received = dict(response.headers)
        if pace is not None:
            pace.observe(sent_at, response.status_code, received)
        return _answer(response.status_code, body, received, elapsed, attempts)

    @staticmethod
    def _read(response: httpx.Response, started: float, total: float | None) -> Body:
        """The body, bounded (:func:`read_body`), or a :class:`TransportError` once ``total``
        seconds have passed (a server that drips a byte at a time never trips the read timeout)."""
        if total is None:
            return read_body(response)

        def deadline(received: int) -> None:
            if time.perf_counter() - started > total:
                raise TransportError(
                    f"no complete response from {safe_url(str(response.url))} within the {total:.0f} s "
                    f"deadline ({received} bytes received)"
                )

        return read_body(response, deadline=deadline)


def _answer(
    status: int, body: Body, headers: dict[str, str], elapsed: float | None, attempts: list[Attempt]
) -> tuple[WireResponse, float | None]:
    """A response as the adapters read it (secrets redacted from the whole body, as a cassette
    keeps it: :func:`harness.secrets.redact_body`; secret headers masked; a binary body as base64:
    :meth:`WireResponse.text_of`), its attempt noted:
    played from a cassette or received. A body past :data:`MAX_RESPONSE_BYTES` (cut while read,
    or played whole from a cassette) is an :class:`OversizedResponse` keeping its first
    :data:`KEPT_BYTES`."""
    attempts.append(Attempt(status, None, elapsed))
    content, over = body
    if over is None and len(content) > MAX_RESPONSE_BYTES:
        content, over = content[:KEPT_BYTES], len(content)
    content_type = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
    if is_binary(content_type):  # bytes (an AWS event stream): carried as base64, secrets redacted first
        text = WireResponse.text_of(secrets.redact_bytes(content), content_type)
    else:
        text = secrets.redact_body(content.decode("utf-8", errors="replace"))
    if over is not None:
        return OversizedResponse(status, text, masked(headers), over, MAX_RESPONSE_BYTES), elapsed
    return WireResponse(status, text, masked(headers)), elapsed


def _split_query(base_url: str) -> tuple[str, str]:
    """A base URL without its trailing slash and its query (kept apart, so a format's path joins
    the path, not the query), and the query; a fragment is dropped (it never goes on the wire)."""
    parts = urlsplit(base_url)
    return urlunsplit(parts._replace(query="", fragment="")).rstrip("/"), parts.query


def _why(exc: Exception) -> str:
    return f"{type(exc).__name__}: {secrets.redact(str(exc))}"


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
