"""The adaptive pace (AIMD): backs off on 429 and on rate-limit headers, pauses the whole target
for a Retry-After, climbs back; hostile header values change nothing they should not."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from harness.model import WireRequest
from harness.transport.limits import Headroom, Pace, reset_seconds
from harness.transport.send import RetryPolicy, Transport

WIRE = WireRequest("/v1/chat/completions", {"model": "m", "messages": []})


class Clock:
    """A clock the test moves by hand (``sleep`` moves it)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def burst(pace: Pace, count: int) -> float:
    """Send ``count`` requests now; the time they were sent."""
    for _ in range(count):
        assert pace.delay() == 0
    return pace.clock()


def test_no_limit_until_the_provider_says_so() -> None:
    pace = Pace(clock=Clock())
    burst(pace, 1000)
    pace.observe(pace.clock(), 200, {"content-type": "application/json"})
    assert pace.rate == math.inf
    assert pace.summary() == {
        "requests_per_minute": None,
        "lowest_per_minute": None,
        "backoffs": 0,
        "paused_s": 0.0,
    }


def test_a_429_with_retry_after_pauses_the_whole_target_and_cuts_the_rate() -> None:
    clock = Clock()
    pace = Pace(clock=clock)
    sent = burst(pace, 40)  # 40 sent within the last second
    pace.observe(sent, 429, {"retry-after": "2"})
    assert pace.rate == pytest.approx(40 * 0.8)
    assert pace.delay() == pytest.approx(2.0)  # any request of the target, not only the refused one
    clock.sleep(1.5)
    assert pace.delay() == pytest.approx(0.5)
    clock.sleep(0.5)
    assert pace.delay() == 0
    assert pace.summary()["paused_s"] == pytest.approx(2.0)
    assert pace.summary()["backoffs"] == 1


def test_paced_requests_are_spaced_at_the_rate() -> None:
    clock = Clock()
    pace = Pace(clock=clock)
    sent = burst(pace, 10)
    pace.observe(sent, 429, {})  # no Retry-After: no pause, a rate of 8 a second
    for _ in range(20):
        while (wait := pace.delay()) > 0:
            clock.sleep(wait)
    assert clock.now - sent == pytest.approx(20 / 8, rel=0.1)


def test_one_decrease_per_round() -> None:
    clock = Clock()
    pace = Pace(clock=clock)
    sent = burst(pace, 100)
    clock.sleep(0.01)
    for _ in range(50):  # the whole round comes back refused: one decrease, not fifty
        pace.observe(sent, 429, {})
    assert pace.rate == pytest.approx(80)
    assert pace.backoffs == 1
    clock.sleep(0.5)
    later = pace.clock()
    pace.observe(later, 429, {})  # a request sent after the decrease: a new round
    assert pace.backoffs == 2
    assert pace.lowest == pytest.approx(64)  # the rate it held requests to, cut again


def test_it_climbs_back_additively() -> None:
    clock = Clock()
    pace = Pace(clock=clock)
    sent = burst(pace, 20)
    pace.observe(sent, 429, {})
    assert pace.rate == pytest.approx(16)
    for _ in range(30):  # three seconds of answers without a sign of the limit
        clock.sleep(0.1)
        pace.observe(clock(), 200, {})
    assert pace.rate == pytest.approx(16 + 3 * 20 / 10)  # a tenth of the rate before the cut a second
    assert pace.summary()["lowest_per_minute"] == pytest.approx(16 * 60)


def test_the_refill_rate_the_headers_give_caps_the_cut() -> None:
    pace = Pace(clock=Clock())
    sent = burst(pace, 100)  # far faster than the provider refills
    headers = {
        "x-ratelimit-limit-requests": "60",
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "6s",  # 60 spent, back in 6 s: 10 a second
    }
    pace.observe(sent, 200, headers)
    assert pace.rate == pytest.approx(10 * 0.8)
    assert pace.delay() == pytest.approx(0.1)  # and the spent budget: one request back in 0.1 s


def test_it_climbs_no_higher_than_the_refill_rate_the_headers_give() -> None:
    clock = Clock()
    pace = Pace(clock=clock)
    sent = burst(pace, 100)
    spent = {
        "x-ratelimit-limit-requests": "60",
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "6s",
    }
    pace.observe(sent, 429, spent)
    assert pace.rate == pytest.approx(8)
    roomy = {
        "x-ratelimit-limit-requests": "60",
        "x-ratelimit-remaining-requests": "30",
        "x-ratelimit-reset-requests": "3s",
    }
    for _ in range(100):  # ten seconds without a sign of the limit
        clock.sleep(0.1)
        pace.observe(clock(), 200, roomy)
    assert pace.rate == pytest.approx(10)  # 30 spent, back in 3 s: 10 a second, and no more


@pytest.mark.parametrize(
    "value",
    [
        "soon",
        "",
        "-5",
        "nan",
        "inf",
        "1e309",
        "Thu, 01 Jan 1970 00:00:00 GMT",  # in the past: no wait
        "Fri, 31 Dec 10000 23:59:59 GMT",  # past what datetime holds
        "\x00\xff",
    ],
)
def test_hostile_retry_after_still_backs_off_without_a_bogus_pause(value: str) -> None:
    clock = Clock()
    pace = Pace(clock=clock)
    sent = burst(pace, 10)
    pace.observe(sent, 429, {"retry-after": value})
    assert pace.backoffs == 1
    assert pace.delay() < 1.0  # at most the pacing gap, never a pause from nonsense


@pytest.mark.parametrize(
    "value",
    ["99999999999", "1e12", format_datetime(datetime(9999, 12, 31, tzinfo=UTC), usegmt=True)],
)
def test_a_huge_retry_after_pauses_at_most_max_pause(value: str) -> None:
    pace = Pace(clock=Clock(), max_pause_s=30)
    sent = burst(pace, 10)
    pace.observe(sent, 429, {"Retry-After": value})
    assert pace.delay() == pytest.approx(30)


def test_an_http_date_retry_after_pauses_until_then() -> None:
    pace = Pace(clock=Clock())
    sent = burst(pace, 10)
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=10), usegmt=True)
    pace.observe(sent, 429, {"retry-after": when})
    assert 8 <= pace.delay() <= 10


def test_retry_after_on_a_success_is_not_a_pause() -> None:
    pace = Pace(clock=Clock())
    sent = burst(pace, 10)
    pace.observe(sent, 200, {"retry-after": "20"})
    assert pace.delay() == 0
    assert pace.backoffs == 0


@pytest.mark.parametrize(
    ("headers", "near"),
    [
        ({"x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "59"}, False),
        ({"x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "5"}, True),
        ({"X-RateLimit-Limit-Tokens": "150000", "X-RateLimit-Remaining-Tokens": "100"}, True),
        ({"anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "49"}, False),
        (
            {
                "anthropic-ratelimit-input-tokens-limit": "40000",
                "anthropic-ratelimit-input-tokens-remaining": "0",
            },
            True,
        ),
        # hostile or meaningless values say nothing
        ({"x-ratelimit-limit-tokens": "-1", "x-ratelimit-remaining-tokens": "-1"}, False),  # Azure's
        ({"x-ratelimit-limit-requests": "0", "x-ratelimit-remaining-requests": "0"}, False),
        ({"x-ratelimit-limit-requests": "lots", "x-ratelimit-remaining-requests": "few"}, False),
        ({"x-ratelimit-limit-requests": "inf", "x-ratelimit-remaining-requests": "nan"}, False),
        ({"x-ratelimit-limit-requests": "1e400", "x-ratelimit-remaining-requests": "1"}, False),
        ({"x-ratelimit-remaining-requests": "0"}, False),  # no limit to measure it by
    ],
)
def test_rate_limit_headers_near_the_limit(headers: dict[str, str], near: bool) -> None:
    assert Headroom(headers).near is near
    pace = Pace(clock=Clock())
    sent = burst(pace, 10)
    pace.observe(sent, 200, headers)
    assert pace.backoffs == (1 if near else 0)


@pytest.mark.parametrize(
    ("reset", "wait"),
    [("1s", 0.1), ("12ms", 0.0012), ("1m0s", 6.0), ("2.5", 0.25), ("soon", None), ("-1s", None)],
)
def test_a_spent_requests_budget_pauses_for_one_request(reset: str, wait: float | None) -> None:
    headers = {
        "x-ratelimit-limit-requests": "10",
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": reset,
    }
    room = Headroom(headers)
    assert room.near
    assert room.wait_s == (None if wait is None else pytest.approx(wait))


def test_reset_values_as_providers_write_them() -> None:
    now = datetime(2025, 10, 25, 12, 0, 0, tzinfo=UTC)
    at = lambda: now  # noqa: E731
    assert reset_seconds("6m0s", at) == 360
    assert reset_seconds("1h2m3.5s", at) == 3723.5
    assert reset_seconds("20ms", at) == pytest.approx(0.02)
    assert reset_seconds("2025-10-25T12:00:30Z", at) == 30  # Anthropic's RFC 3339
    assert reset_seconds("2025-10-25T12:00:30.5+00:00", at) == 30.5
    assert reset_seconds("Sat, 25 Oct 2025 12:01:00 GMT", at) == 60
    assert reset_seconds("2025-10-25T11:00:00Z", at) == 0  # past: no wait
    for hostile in ("", "soon", "-3", "nan", "inf", "1e999", "6m-1s", "5x", "9999-99-99T99:99:99Z"):
        assert reset_seconds(hostile, at) is None, hostile


def test_a_429_on_one_run_pauses_another_runs_send() -> None:
    """Two runs' transports share their target's pace: the Retry-After one of them receives holds
    the other's next request too, and the limit it signals slows both."""
    clock = Clock()
    pace = Pace(clock=clock)
    refused = httpx.MockTransport(lambda r: httpx.Response(429, headers={"retry-after": "3"}))
    one = Transport("http://test", client_transport=refused, retry=RetryPolicy(attempts=1), pace=pace)
    assert one.send(WIRE).response.status == 429
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        clock.sleep(seconds)

    answered = httpx.MockTransport(lambda r: httpx.Response(200, json={}))
    other = Transport("http://test", client_transport=answered, sleep=sleep, pace=pace)
    assert other.send(WIRE).response.status == 200
    assert sum(waits) == pytest.approx(3.0)
    assert pace.summary()["backoffs"] == 1
