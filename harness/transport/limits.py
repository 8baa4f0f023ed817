"""A provider's rate limits, shared by every run of an endpoint."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable


class RateLimiter:
    """A provider's requests-per-minute and tokens-per-minute limits for one endpoint, shared by
    all of its runs (a provider limits the key, not one run).

    :meth:`delay` says how long a request must wait (0: it may go now, and is counted);
    :meth:`charge` takes the tokens a response reports. Both budgets refill continuously, a
    minute's budget spread over the minute (a burst of at most one second's requests), and
    tokens may run into debt, which the next request waits out: the usage of a response is
    known only once it is back.

    Example::

        limiter = RateLimiter(requests_per_minute=500, tokens_per_minute=200_000)
        while (seconds := limiter.delay()) > 0:
            time.sleep(seconds)
    """

    def __init__(
        self,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.rpm, self.tpm = requests_per_minute, tokens_per_minute
        self._clock = clock
        self._lock = threading.Lock()
        self._at = clock()
        self._requests = self._request_cap = max(1.0, self.rpm / 60) if self.rpm else math.inf
        self._tokens = self._token_cap = self.tpm / 60 if self.tpm else math.inf

    def _refill(self) -> None:
        now = self._clock()
        elapsed, self._at = now - self._at, now
        if self.rpm:
            self._requests = min(self._request_cap, self._requests + elapsed * self.rpm / 60)
        if self.tpm:
            self._tokens = min(self._token_cap, self._tokens + elapsed * self.tpm / 60)

    def delay(self) -> float:
        """Seconds until a request may go; 0 means it goes now and is counted."""
        with self._lock:
            self._refill()
            wait = 0.0
            if self.rpm and self._requests < 1:
                wait = (1 - self._requests) * 60 / self.rpm
            if self.tpm and self._tokens < 0:
                wait = max(wait, -self._tokens * 60 / self.tpm)
            if wait == 0 and self.rpm:
                self._requests -= 1
            return wait

    def share(self, parts: int) -> RateLimiter:
        """A limiter for one of ``parts`` processes splitting this one's budget evenly."""
        return RateLimiter(
            self.rpm / parts if self.rpm else None, self.tpm / parts if self.tpm else None, self._clock
        )

    def charge(self, tokens: int) -> None:
        """Take ``tokens`` (a response's reported usage) from the token budget."""
        if self.tpm and tokens > 0:
            with self._lock:
                self._refill()
                self._tokens -= tokens
