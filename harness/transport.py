"""HTTP transport on httpx: endpoints, injected transports, timeouts, keys, retries.

The only module that builds an :class:`httpx.Client`. An :class:`Endpoint`
(made by :mod:`harness.endpoints`) carries one pooled transport for a whole
run; replay and record wrap it with a cassette transport
(:mod:`harness.recording`), so the rest of the harness cannot tell a live call
from a replayed one.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx

from harness.errors import ConfigError, TransportError
from harness.model import Finding, SentRequest, WireRequest, WireResponse

RETRY_STATUSES = frozenset({429, 503, 529})


@dataclass
class Endpoint:
    """Where one target's requests go for a run: the base URL, the headers sent with every
    request (the key among them), and the HTTP transport shared by all of the target's runs
    (``None`` in replay, where cassettes answer). Endpoints with the same ``limit`` share one
    concurrency limit (targets of one local model server)."""

    base_url: str
    headers: dict[str, str] = field(default_factory=dict)
    transport: httpx.BaseTransport | None = None
    limit: str = ""

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


@dataclass
class Sent:
    """A request as sent (secrets already masked) and what came back."""

    request: SentRequest
    response: WireResponse
    elapsed_ms: float | None
    findings: list[Finding] = field(default_factory=list)


def api_key(env_name: str | None) -> str | None:
    """The key from the environment variable the target names (never from a file)."""
    if not env_name:
        return None
    value = os.environ.get(env_name)
    if not value:
        raise ConfigError(f"the target needs an API key in the environment variable {env_name}")
    return value


SECRET_QUERY = frozenset({"key", "api_key", "apikey", "access_token", "token"})
SCRUBBED = "<scrubbed>"
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})

SECRET_HEADERS = frozenset(
    {"authorization", "api-key", "x-api-key", "x-goog-api-key", "cookie", "set-cookie", "proxy-authorization"}
)


def masked(headers: dict[str, str]) -> dict[str, str]:
    """Headers fit for a transcript: secret values replaced."""
    return {k: (SCRUBBED if k.lower() in SECRET_HEADERS else v) for k, v in headers.items()}


def scrub_uri(uri: str) -> str:
    """Mask secret query parameters (``key=``...); drop the port of loopback servers (random on
    each start), so re-recording a local server gives the same cassette."""
    parts = urlsplit(uri)
    if parts.hostname in LOOPBACK and parts.port:
        parts = parts._replace(netloc=f"{parts.hostname}:0")
    if parts.query:
        query = [(k, SCRUBBED if k.lower() in SECRET_QUERY else v) for k, v in parse_qsl(parts.query, True)]
        parts = parts._replace(query=urlencode(query, safe="<>"))
    return urlunsplit(parts)


class Transport:
    """Sends adapter requests to one endpoint.

    ``client_transport`` is injected (a cassette transport in replay and record
    mode, ``httpx.MockTransport`` in tests); retries on 429/503/529 follow
    ``retry-after`` with a cap, each retry noted as a finding.
    """

    def __init__(
        self,
        base_url: str,
        *,
        auth_headers: dict[str, str] | None = None,
        client_transport: httpx.BaseTransport | None = None,
        timeout_s: float = 120.0,
        retries: int = 2,
        max_backoff_s: float = 30.0,
        sleep: Callable[[float], None] | None = None,
    ):
        self.base_url = base_url.rstrip("/")
        self.auth_headers = auth_headers or {}
        self.retries = retries
        self.max_backoff_s = max_backoff_s
        self.sleep = sleep or time.sleep  # replay passes a no-op: recorded 429s need no waiting
        self.client = httpx.Client(transport=client_transport, timeout=httpx.Timeout(timeout_s, connect=10.0))

    def close(self) -> None:
        self.client.close()

    def url(self, path: str) -> str:
        return self.base_url + path

    def describe(self, wire: WireRequest, headers: dict[str, str]) -> SentRequest:
        """The request as transcripts keep it: secret headers and query parameters masked."""
        return SentRequest(wire.method, scrub_uri(self.url(wire.path)), masked(headers), wire.body)

    def send(self, wire: WireRequest) -> Sent:
        """Send, retrying 429/503/529 (each retry a finding); :class:`TransportError` when no
        response came back at all, carrying the request record for the transcript."""
        headers = {"content-type": "application/json", **wire.headers, **self.auth_headers}
        if wire.stream:
            headers.setdefault("accept", "text/event-stream")
        record = self.describe(wire, headers)
        findings: list[Finding] = []
        for attempt in range(self.retries + 1):
            try:
                response, elapsed = self._send_once(wire, headers)
            except TransportError as exc:
                exc.request = record
                raise
            if response.status not in RETRY_STATUSES or attempt == self.retries:
                return Sent(record, response, elapsed, findings)
            wait = min(retry_after(response.headers), self.max_backoff_s)
            findings.append(
                Finding(
                    "transport.retried",
                    "info",
                    False,
                    f"HTTP {response.status}; retried after {wait:.1f}s (attempt {attempt + 1})",
                )
            )
            self.sleep(wait)
        raise AssertionError("unreachable")

    def _send_once(self, wire: WireRequest, headers: dict[str, str]) -> tuple[WireResponse, float | None]:
        request = self.client.build_request(wire.method, self.url(wire.path), json=wire.body, headers=headers)
        started = time.perf_counter()
        try:
            response = self.client.send(request, stream=True)
            try:
                body = response.read()
            finally:
                response.close()
        except httpx.TimeoutException as exc:
            raise TransportError(f"timed out talking to {scrub_uri(str(request.url))}: {exc}") from exc
        except httpx.RequestError as exc:  # connection failures, undecodable bodies, redirect loops
            raise TransportError(f"no usable response from {scrub_uri(str(request.url))}: {exc}") from exc
        if "harness_elapsed_ms" in response.extensions:  # replayed: the recorded latency, or none
            elapsed = response.extensions["harness_elapsed_ms"]
        else:
            elapsed = (time.perf_counter() - started) * 1000
        text = body.decode("utf-8", errors="replace")
        return WireResponse(response.status_code, text, masked(dict(response.headers))), elapsed


def retry_after(headers: dict[str, str]) -> float:
    """Seconds to wait before a retry, from ``retry-after-ms`` or ``retry-after`` (1 s when
    absent or unreadable; never negative)."""
    for key, value in headers.items():
        scale = {"retry-after-ms": 1000.0, "retry-after": 1.0}.get(key.lower())
        if scale is None:
            continue
        try:
            seconds = float(value) / scale
        except ValueError:
            return 1.0
        return seconds if math.isfinite(seconds) and seconds >= 0 else 1.0
    return 1.0


class Borrowed(httpx.BaseTransport):
    """A transport lent to one client: closing the client leaves the shared transport open."""

    def __init__(self, inner: httpx.BaseTransport):
        self.inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self.inner.handle_request(request)

    def close(self) -> None:
        """The owner (an :class:`Endpoint`) closes the shared transport."""


def live_transport(*, keep_alive: bool = True) -> httpx.BaseTransport:
    """The real network transport (record and live modes): one per endpoint for a whole run, so
    the CA bundle is loaded once and, with ``keep_alive``, connections are reused."""
    if keep_alive:
        return httpx.HTTPTransport()
    return httpx.HTTPTransport(limits=httpx.Limits(max_keepalive_connections=0))
