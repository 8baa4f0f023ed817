"""The pooled live transport: one connection pool per endpoint for a whole run, proxies from the
environment."""

from __future__ import annotations

import contextlib
import itertools
import socket
import ssl
import threading
import weakref
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpcore
import httpx

from harness.transport.credentials import LOOPBACK


class Borrowed(httpx.BaseTransport):
    """A transport lent to one client: closing the client leaves the shared transport open."""

    def __init__(self, inner: httpx.BaseTransport):
        self.inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self.inner.handle_request(request)

    def close(self) -> None:
        """The owner (an :class:`Endpoint`) closes the shared transport."""


class _TrackingBackend(httpcore.SyncBackend):
    """httpcore's network backend, remembering its sockets so they can be cut from another thread
    (closing a socket does not wake a thread blocked reading it; shutting it down does)."""

    def __init__(self) -> None:
        self.sockets: weakref.WeakSet[socket.socket] = weakref.WeakSet()

    def connect_tcp(self, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
        stream = super().connect_tcp(*args, **kwargs)
        sock = getattr(stream, "_sock", None)
        if isinstance(sock, socket.socket):
            self.sockets.add(sock)
        return stream

    def cut(self) -> None:
        for sock in list(self.sockets):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


SHARD_CONNECTIONS = 50
"""Most kept-alive connections in one connection pool: httpcore's pool walks every connection and
every waiting request under one lock at each request and each response closed, so at 500
connections a request cost a third more CPU than in ten pools of 50 (measured with bare httpx,
500 threads, against a 100 ms endpoint)."""


class LiveTransport(httpx.BaseTransport):
    """The real network transport, with :meth:`cut` to end every request in flight at once
    (Ctrl-C). A ``signer`` authenticates each request as it goes out, its final method, URL,
    headers and body in hand (AWS SigV4: :mod:`harness.transport.aws`), after a cassette has
    recorded it. Past :data:`SHARD_CONNECTIONS` connections, requests are spread over several
    pools, each thread keeping to one (so it reuses its own connections)."""

    def __init__(
        self,
        *,
        keep_alive: bool = True,
        connections: int = 20,
        proxy: str | None = None,
        ssl_context: ssl.SSLContext | None = None,
        signer: Callable[[httpx.Request], None] | None = None,
    ) -> None:
        # as many kept-alive connections as requests can be in flight: httpx keeps 20 by default,
        # so 50 concurrent requests would reconnect for 30 of them, every time
        kept = max(1, connections) if keep_alive else 0
        shards = max(1, -(-kept // SHARD_CONNECTIONS))
        per = -(-kept // shards)
        # no pool is capped below the whole: threads are spread evenly, not their requests
        limits = httpx.Limits(max_connections=max(100, kept), max_keepalive_connections=per)
        self.ssl_context = ssl_context or httpx.create_ssl_context()  # loading the CA bundle: ~15 ms
        self.keep_alive, self.connections, self.proxy, self.signer = keep_alive, connections, proxy, signer
        self._backend = _TrackingBackend()
        self._shards = [
            httpx.HTTPTransport(limits=limits, proxy=proxy, verify=self.ssl_context) for _ in range(shards)
        ]
        for shard in self._shards:
            shard._pool._network_backend = self._backend
        self._mine = threading.local()
        self._next = itertools.count()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self.signer is not None:
            self.signer(request)
        shards = self._shards
        if len(shards) == 1:
            return shards[0].handle_request(request)
        shard = getattr(self._mine, "shard", None)
        if shard is None:  # this thread's pool, for the transport's life: the next in turn
            shard = self._mine.shard = shards[next(self._next) % len(shards)]
        return shard.handle_request(request)

    def close(self) -> None:
        for shard in self._shards:
            shard.close()

    def fresh(self) -> LiveTransport:
        """A new transport like this one, sharing no connection with it (a forked worker's own),
        but its SSL context (the CA bundle is not loaded again)."""
        return LiveTransport(
            keep_alive=self.keep_alive,
            connections=self.connections,
            proxy=self.proxy,
            ssl_context=self.ssl_context,
            signer=self.signer,
        )

    def cut(self) -> None:
        """Shut down every connection: requests in flight fail now, whoever is waiting on them."""
        self._backend.cut()


def env_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``HTTPS_PROXY``, ``HTTP_PROXY``, ``ALL_PROXY``,
    minus ``NO_PROXY``), as an ``httpx.Client`` would use it; never for a loopback server."""
    import urllib.request

    parts = urlsplit(url)
    if not parts.hostname or parts.hostname in LOOPBACK or urllib.request.proxy_bypass(parts.hostname):
        return None
    proxies = urllib.request.getproxies()
    return proxies.get(parts.scheme) or proxies.get("all")


def live_transport(
    base_url: str,
    *,
    keep_alive: bool = True,
    connections: int = 20,
    signer: Callable[[httpx.Request], None] | None = None,
) -> httpx.BaseTransport:
    """The real network transport to ``base_url`` (record and live modes): one per endpoint for a
    whole run, so the CA bundle is loaded once and, with ``keep_alive``, up to ``connections``
    connections (the target's concurrency) are reused; through the environment's proxy, if any;
    each request signed by ``signer`` as it goes out."""
    return LiveTransport(
        keep_alive=keep_alive, connections=connections, proxy=env_proxy(base_url), signer=signer
    )
