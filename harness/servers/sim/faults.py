"""Transport and HTTP faults: the simulator failing the way networks and gateways fail.

Reply and wire deviations (:mod:`harness.servers.sim.deviations`) make the scripted model
answer wrongly; these make the *endpoint* fail, so the harness's own handling can
be held to its promises: retries with backoff that honour ``Retry-After``, a
deadline on a server that drips bytes, a reset or a truncated body retried and
then reported as an ``error`` run (never scored), an HTML error page or an empty
200 reported as the provider's fault. Chosen like any deviation, with
``base_url = "sim~<fault>"``; ``requests-per-minute:<N>`` takes the limit after a colon.
"""

from __future__ import annotations

import email.utils
import json
import math
import socket
import struct
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from harness.servers.sim.wire import Response

DRIP_INTERVAL_S = 0.5
DRIP_FOR_S = 120.0
SLOW_S = 30.0


def _once(key: str, seen: set[str]) -> bool:
    """True the first time ``key`` is seen (the fault hits each distinct request once)."""
    if key in seen:
        return False
    seen.add(key)
    return True


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    body = json.dumps({"error": {"message": message, "type": "sim_fault", "code": status}})
    return Response(status, "application/json", body, headers or {})


def retry_after_date(handler: Any, key: str, seen: set[str]) -> Response | None:
    """429 with ``Retry-After`` as an HTTP date one second ahead, once per request; then the answer."""
    if not _once(key, seen):
        return None
    when = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=1), usegmt=True)
    return _error(429, "rate limited (Retry-After as an HTTP date)", {"retry-after": when})


def retry_after_seconds(handler: Any, key: str, seen: set[str]) -> Response | None:
    """429 with ``Retry-After: 1`` once per request; then the answer."""
    return _error(429, "rate limited", {"retry-after": "1"}) if _once(key, seen) else None


def unavailable(handler: Any, key: str, seen: set[str]) -> Response | None:
    """503 every time: after the retries the run is an ``error``, not a score."""
    return _error(503, "service unavailable", {"retry-after": "0"})


def bad_gateway_html(handler: Any, key: str, seen: set[str]) -> Response | None:
    """A proxy's HTML error page with HTTP 500 (not retried: a finding about the provider)."""
    page = "<html><head><title>500 Internal Server Error</title></head><body><h1>Oops</h1></body></html>"
    return Response(500, "text/html", page)


def invalid_json(handler: Any, key: str, seen: set[str]) -> Response | None:
    """HTTP 200 whose body is not JSON."""
    return Response(200, "application/json", '{"id": "sim-fault", "items": [')


def empty_200(handler: Any, key: str, seen: set[str]) -> Response | None:
    """HTTP 200 with an empty body."""
    return Response(200, "application/json", "")


def empty_stream(handler: Any, key: str, seen: set[str]) -> Response | None:
    """HTTP 200, an event stream with nothing in it."""
    return Response(200, "text/event-stream", "")


def reset(handler: Any, key: str, seen: set[str]) -> Response | None:
    """The connection is reset before any byte of a response (RST, not a clean close)."""
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.connection.close()
    handler.close_connection = True
    return NO_RESPONSE


def truncated(handler: Any, key: str, seen: set[str]) -> Response | None:
    """Headers promise a body the server never finishes sending (the connection then closes)."""
    handler.send_response(200)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", "1000")
    handler.end_headers()
    handler.wfile.write(b'{"id": "sim-fault", "ite')
    handler.wfile.flush()
    handler.close_connection = True
    return NO_RESPONSE


def drip(handler: Any, key: str, seen: set[str]) -> Response | None:
    """A byte every half second, never a whole response: only a total deadline stops it."""
    handler.send_response(200)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", "100000")
    handler.end_headers()
    started = time.monotonic()
    try:
        while time.monotonic() - started < DRIP_FOR_S:
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(DRIP_INTERVAL_S)
    except OSError:  # the client gave up: that is the point
        pass
    handler.close_connection = True
    return NO_RESPONSE


def slow(handler: Any, key: str, seen: set[str]) -> Response | None:
    """No byte at all for longer than any sensible read timeout."""
    time.sleep(SLOW_S)
    return _error(504, "too slow")


def requests_per_minute(handler: Any, key: str, seen: set[str]) -> Response | None:
    """Every request counted against ``<N>`` a minute (:class:`RequestBudget`): 429 with
    ``Retry-After`` above it; the answer, with the budget's ``x-ratelimit-*`` headers, below it."""
    budget: RequestBudget = handler.budget
    return budget.take()


class RequestBudget:
    """``requests-per-minute:<N>``: a provider's request limit as a token bucket (as Anthropic
    describes its own [A13]): the minute's ``N`` requests refill continuously, at most one
    second's worth (``N / 60``, at least 1) held for a burst. A request over it gets 429 with
    ``Retry-After`` (whole seconds until a request is back, at least 1); every response carries
    OpenAI's ``x-ratelimit-{limit,remaining,reset}-requests`` [O11] for that bucket (its size,
    what is left, and the time until it is full again)."""

    def __init__(self, per_minute: float, clock: Callable[[], float] = time.monotonic):
        self.rate = per_minute / 60
        self.size = max(1.0, self.rate)
        self.clock = clock
        self._left, self._at = self.size, clock()
        self._lock = threading.Lock()

    @classmethod
    def parse(cls, parameters: tuple[str, ...]) -> RequestBudget:
        """The budget of ``requests-per-minute:<N>``; a :class:`ValueError` saying what is expected."""
        usage = "expected requests-per-minute:<requests a minute>, e.g. requests-per-minute:600"
        try:
            (per_minute,) = (float(p) for p in parameters)
        except ValueError:
            raise ValueError(f"requests-per-minute: {usage}") from None
        if not (math.isfinite(per_minute) and per_minute > 0):
            raise ValueError(f"requests-per-minute: {per_minute:g} is not a positive number; {usage}")
        return cls(per_minute)

    def take(self) -> Response | None:
        """One request: refused (429) when the bucket is empty; else counted, and ``None`` (the
        answer is sent, with :attr:`headers` on it)."""
        with self._lock:
            now = self.clock()
            self._left = min(self.size, self._left + (now - self._at) * self.rate)
            self._at = now
            if self._left < 1:
                wait = math.ceil((1 - self._left) / self.rate)
                headers = {"retry-after": str(wait), **self._headers()}
                return _error(429, "rate limited: requests per minute", headers)
            self._left -= 1
            return None

    def headers(self) -> dict[str, str]:
        """The ``x-ratelimit-*`` headers of the budget as it is now."""
        with self._lock:
            return self._headers()

    def _headers(self) -> dict[str, str]:
        return {
            "x-ratelimit-limit-requests": str(math.floor(self.size)),
            "x-ratelimit-remaining-requests": str(math.floor(self._left)),
            "x-ratelimit-reset-requests": f"{(self.size - self._left) / self.rate:.3f}s",
        }


NO_RESPONSE = Response(0, "", "")
"""Returned by faults that already wrote (or cut) the connection themselves."""

FAULTS: dict[str, Callable[[Any, str, set[str]], Response | None]] = {
    "retry-after-seconds": retry_after_seconds,
    "retry-after-date": retry_after_date,
    "unavailable": unavailable,
    "html-error": bad_gateway_html,
    "invalid-json": invalid_json,
    "empty-200": empty_200,
    "empty-stream": empty_stream,
    "reset": reset,
    "truncated": truncated,
    "drip": drip,
    "slow": slow,
    "requests-per-minute": requests_per_minute,
}
"""Fault name -> what the endpoint does instead of answering (``None``: answer normally)."""
