"""HTTP transport on httpx: one injected client per target, timeouts, keys, retries.

The only module that builds an :class:`httpx.Client`. Replay and record wrap
the real transport with a cassette transport (:mod:`harness.recording`), so
the rest of the harness cannot tell a live call from a replayed one.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from harness.errors import ConfigError, TransportError
from harness.model import Finding, WireRequest, WireResponse

RETRY_STATUSES = frozenset({429, 503, 529})


@dataclass
class Sent:
    """A request as sent (secrets already masked) and what came back."""

    request: dict[str, Any]
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


SECRET_HEADERS = frozenset(
    {"authorization", "api-key", "x-api-key", "x-goog-api-key", "cookie", "set-cookie", "proxy-authorization"}
)


def masked(headers: dict[str, str]) -> dict[str, str]:
    """Headers fit for a transcript: secret values replaced."""
    return {k: ("<scrubbed>" if k.lower() in SECRET_HEADERS else v) for k, v in headers.items()}


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

    def send(self, wire: WireRequest) -> Sent:
        headers = {"content-type": "application/json", **wire.headers, **self.auth_headers}
        if wire.stream:
            headers.setdefault("accept", "text/event-stream")
        record = {
            "method": wire.method,
            "url": self.url(wire.path),
            "headers": masked(headers),
            "body": wire.body,
        }
        findings: list[Finding] = []
        for attempt in range(self.retries + 1):
            response, elapsed = self._send_once(wire, headers)
            if response.status not in RETRY_STATUSES or attempt == self.retries:
                return Sent(record, response, elapsed, findings)
            wait = min(self._retry_after(response), self.max_backoff_s)
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
            raise TransportError(f"timed out talking to {request.url}: {exc}") from exc
        except httpx.TransportError as exc:
            raise TransportError(f"no response from {request.url}: {exc}") from exc
        elapsed = response.extensions.get("harness_elapsed_ms")
        if elapsed is None:
            elapsed = (time.perf_counter() - started) * 1000
        return WireResponse(
            response.status_code, body.decode("utf-8", errors="replace"), dict(response.headers)
        ), elapsed

    @staticmethod
    def _retry_after(response: WireResponse) -> float:
        for key, value in response.headers.items():
            if key.lower() == "retry-after-ms":
                return float(value) / 1000
            if key.lower() == "retry-after":
                try:
                    return float(value)
                except ValueError:
                    return 1.0
        return 1.0
