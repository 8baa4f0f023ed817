"""A provider's rate limits, shared by every run of an endpoint: the limits a target declares
(:class:`RateLimiter`) and the pace found by listening to the provider (:class:`Pace`)."""

from __future__ import annotations

import collections
import email.utils
import math
import re
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any


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


def retry_after(headers: Mapping[str, str], default: float = 1.0) -> float:
    """Seconds to wait before a retry, from ``retry-after-ms`` or ``retry-after`` (seconds or an
    HTTP date); ``default`` when absent or unreadable; never negative."""
    for key, value in headers.items():
        name = key.lower()
        if name == "retry-after-ms":
            try:
                seconds = float(value) / 1000
            except ValueError:
                return default
            return seconds if math.isfinite(seconds) and seconds >= 0 else default
        if name == "retry-after":
            try:
                seconds = float(value)
            except ValueError:
                try:
                    when = email.utils.parsedate_to_datetime(value)
                except (TypeError, ValueError):
                    return default
                if when.tzinfo is None:
                    when = when.replace(tzinfo=UTC)
                seconds = (when - datetime.now(UTC)).total_seconds()
                return max(0.0, seconds)
            return seconds if math.isfinite(seconds) and seconds >= 0 else default
    return default


BACKOFF_STATUSES = frozenset({429, 503, 529})
"""Statuses that say the provider is over its limit or overloaded: the pace backs off on each."""

_KINDS = ("requests", "tokens", "input-tokens", "output-tokens")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def reset_seconds(value: str, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> float | None:
    """Seconds until a rate limit resets, as a provider's header says it: a duration (OpenAI's
    ``1s``, ``6m0s``, ``12ms`` [O11]), seconds, or a time (Anthropic's RFC 3339
    ``2025-10-25T12:00:00Z`` [A13], an HTTP date); ``None`` when unreadable, negative or infinite."""
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        if (parts := _DURATION.findall(text)) and "".join(n + u for n, u in parts) == text:
            seconds = sum(float(n) * _UNIT_S[u] for n, u in parts)
        else:
            try:
                when = datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                try:
                    when = email.utils.parsedate_to_datetime(text)
                except (TypeError, ValueError, IndexError):
                    return None
            if when.tzinfo is None:
                when = when.replace(tzinfo=UTC)
            seconds = max(0.0, (when - now()).total_seconds())
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _number(value: str | None) -> float | None:
    """A header's count, or ``None`` when absent, unreadable, negative or infinite (Azure sends
    ``-1`` for a limit it does not report)."""
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


class Headroom:
    """What one response's rate-limit headers say (OpenAI's ``x-ratelimit-{limit,remaining,reset}-
    {requests,tokens}`` [O11], Anthropic's ``anthropic-ratelimit-{requests,tokens,input-tokens,
    output-tokens}-{limit,remaining,reset}`` [A13]): whether a budget is nearly spent (less than a
    tenth of it left, or nothing); from the requests budget, the rate it refills at (what is spent
    over the time until it is whole again: a bucket refilled evenly, as both providers describe
    theirs) and, when it is spent, how long until one request is back. Unreadable values
    (garbage, negative, infinite) say nothing."""

    NEAR = 0.1

    def __init__(self, headers: Mapping[str, str]):
        self.near = False
        self.wait_s: float | None = None
        self.refill: float | None = None  # requests a second
        lowered = {k.lower(): v for k, v in headers.items() if "ratelimit" in k.lower()}
        if not lowered:
            return
        for kind in _KINDS:
            openai, anthropic = ("x-ratelimit-", "{part}-" + kind), ("anthropic-ratelimit-", kind + "-{part}")
            for prefix, name in (openai, anthropic):
                limit = _number(lowered.get(prefix + name.format(part="limit")))
                left = _number(lowered.get(prefix + name.format(part="remaining")))
                if limit is None or left is None or limit <= 0:
                    continue
                if left < max(1.0, self.NEAR * limit):
                    self.near = True
                reset = lowered.get(prefix + name.format(part="reset")) if kind == "requests" else None
                seconds = reset_seconds(reset) if reset is not None else None
                if seconds and left < limit:
                    self.refill = (limit - left) / seconds
                    if left < 1:
                        self.wait_s = 1 / self.refill


class Pace:
    """The request rate one endpoint's provider accepts, found as the run goes (additive increase,
    multiplicative decrease), and the waits it asks of the whole target: on by default in live
    and record runs, under whatever :class:`RateLimiter` a target declares.

    No rate at first: requests go as fast as the runs send them. A response that says the
    provider is over its limit (HTTP 429, 503 or 529) or nearly there (:class:`Headroom`) sets
    the rate to ``decrease`` times the rate the pace was holding requests to (or, when it held
    none back in the last second, what was sent in that second), never above the rate the
    provider's headers say its budget refills at; one decrease per round: responses to requests
    sent before the last decrease do not count again. Each second without such a response adds
    a tenth of the rate before the last decrease (back there in two seconds, then on past it:
    the provider may allow more now), up to the refill rate the headers last gave, if any (a
    bucket the cut let fill a little then stays so: no sawtooth below a limit the provider states).
    ``Retry-After`` (or a spent requests budget) pauses every request of the target until
    then, at most ``max_pause_s``.

    Example::

        pace = Pace()
        while (seconds := pace.delay()) > 0:
            time.sleep(seconds)
        sent_at = pace.clock()
        ...  # send, then
        pace.observe(sent_at, response.status_code, response.headers)
    """

    def __init__(
        self, *, decrease: float = 0.8, max_pause_s: float = 30.0, clock: Callable[[], float] = time.monotonic
    ):
        self.decrease, self.max_pause_s, self.clock = decrease, max_pause_s, clock
        self._lock = threading.Lock()
        self.rate = math.inf  # requests a second
        self.lowest = math.inf
        self.backoffs = 0
        self.paused_s = 0.0
        self._ceiling = math.inf  # the rate before the last decrease
        self._refill = math.inf  # the refill rate the provider's headers last gave
        self._allowance = 1.0  # requests that may go now (a burst of at most a quarter second's)
        self._at = self._climbed_at = self._decreased_at = clock()
        self._paused_until = self._held_at = -math.inf
        self._sent: collections.deque[float] = collections.deque()  # send times in the last second

    def delay(self) -> float:
        """Seconds until a request may go; 0 means it goes now and is counted."""
        with self._lock:
            now = self.clock()
            if now < self._paused_until:
                return self._paused_until - now
            if self.rate != math.inf:
                self._allowance = min(max(1.0, self.rate / 4), self._allowance + (now - self._at) * self.rate)
                self._at = now
                if self._allowance < 1 - 1e-9:  # (not a rounding error's worth of a wait)
                    self._held_at = now
                    return (1 - self._allowance) / self.rate
                self._allowance = max(0.0, self._allowance - 1)
            sent = self._sent
            sent.append(now)
            while sent[0] < now - 1.0:
                sent.popleft()
            return 0.0

    def observe(self, sent_at: float, status: int, headers: Mapping[str, str]) -> None:
        """Learn from one response to a request sent at ``sent_at`` (this pace's clock)."""
        limited = status in BACKOFF_STATUSES
        room = Headroom(headers)
        pause = retry_after(headers, default=-1.0) if limited else -1.0
        if pause < 0 and room.wait_s is not None:
            pause = room.wait_s
        with self._lock:
            now = self.clock()
            if room.refill is not None:
                self._refill = room.refill
            if pause >= 0:
                until = now + min(pause, self.max_pause_s)
                if until > self._paused_until:
                    self.paused_s += until - max(now, self._paused_until)
                    self._paused_until = until
            if limited or room.near:
                if sent_at >= self._decreased_at:  # one decrease per round
                    if self._held_at >= now - 1.0:  # the pace holds requests back: it is the rate
                        ceiling = self.rate
                    else:  # what was sent in the last second
                        while self._sent and self._sent[0] < now - 1.0:
                            self._sent.popleft()
                        ceiling = min(self.rate, float(len(self._sent)))
                    if room.refill is not None:
                        ceiling = min(ceiling, room.refill)
                    self._ceiling = max(ceiling, 1.0 / 60)
                    self.rate = self._ceiling * self.decrease
                    self.lowest = min(self.lowest, self.rate)
                    self.backoffs += 1
                    self._decreased_at = self._climbed_at = now
                    self._allowance = min(self._allowance, 1.0)
            elif self.rate != math.inf:
                climbed = self.rate + (now - self._climbed_at) * self._ceiling / 10
                self.rate = max(self.rate, min(climbed, self._refill))
                self._climbed_at = now

    def summary(self) -> dict[str, Any]:
        """What the pace went through, for a run's metadata: its rate now and its lowest
        (requests a minute; ``None``: never limited), the backoffs and the seconds paused."""
        with self._lock:
            return {
                "requests_per_minute": None if self.rate == math.inf else round(self.rate * 60, 1),
                "lowest_per_minute": None if self.lowest == math.inf else round(self.lowest * 60, 1),
                "backoffs": self.backoffs,
                "paused_s": round(self.paused_s, 3),
            }
