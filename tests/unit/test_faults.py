"""Faults are classified, retried where sensible, and never scored; secrets never reach disk."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import httpx
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from harness import secrets
from harness.analysis.gate import gate
from harness.checks.outcomes import untestable
from harness.errors import (
    CassetteCorruptError,
    CassetteError,
    CassetteIncompleteError,
    ConfigError,
    TransportError,
)
from harness.model import Attempt, Finding, ParsedTurn, ProviderError, WireRequest, WireResponse
from harness.records import CheckResult, RunError
from harness.reports.json_report import build
from harness.transport.cassette import CassetteTransport, cassette_path
from harness.transport.credentials import safe_url, scrub_uri
from harness.transport.send import RetryPolicy, Transport, retry_after
from tests.helpers.transcripts import transcript
from tests.unit.test_records import record

WIRE = WireRequest("/v1/chat/completions", {"model": "m", "messages": []})


@pytest.fixture(autouse=True)
def _no_secrets_left() -> Iterator[None]:
    yield
    secrets.forget_all()


def transport(handler: object, **kwargs: object) -> tuple[Transport, list[float]]:
    waits: list[float] = []
    return (
        Transport(
            "http://test",
            client_transport=httpx.MockTransport(handler),  # type: ignore[arg-type]
            sleep=waits.append,
            **kwargs,  # type: ignore[arg-type]
        ),
        waits,
    )


def test_retry_after_in_seconds_milliseconds_and_http_dates() -> None:
    assert retry_after({"Retry-After": "7"}) == 7
    assert retry_after({"retry-after-ms": "250"}) == 0.25
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 <= retry_after({"retry-after": when}) <= 30
    past = format_datetime(datetime.now(UTC) - timedelta(seconds=30), usegmt=True)
    assert retry_after({"retry-after": past}) == 0
    assert retry_after({"retry-after": "soon"}, default=3.0) == 3.0
    assert retry_after({}, default=2.0) == 2.0


def test_a_429_is_retried_with_its_retry_after_and_every_attempt_is_kept() -> None:
    answers = iter([httpx.Response(429, headers={"retry-after": "4"}, json={}), httpx.Response(200, json={})])
    sender, waits = transport(lambda request: next(answers))
    sent = sender.send(WIRE)
    assert sent.response.status == 200 and waits == [4.0]
    assert [a.status for a in sent.attempts] == [429, 200] and sent.attempts[0].waited_s == 4.0
    assert [f.check_id for f in sent.findings] == ["transport.retried"]


def test_backoff_grows_with_jitter_and_is_capped() -> None:
    sender, waits = transport(
        lambda request: httpx.Response(503, json={}),
        retry=RetryPolicy(attempts=5, initial_wait_s=1, max_wait_s=3),
    )
    sent = sender.send(WIRE)
    assert sent.response.status == 503 and len(sent.attempts) == 5 and len(waits) == 4
    assert all(0 <= w <= 3 for w in waits)


def test_a_reset_is_retried_then_reported_with_every_attempt() -> None:
    def reset(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadError("Connection reset by peer", request=request)

    sender, waits = transport(reset, retry=RetryPolicy(attempts=3, initial_wait_s=0.5))
    with pytest.raises(TransportError) as error:
        sender.send(WIRE)
    assert len(error.value.attempts) == 3 and len(waits) == 2
    assert all(a.status is None and "ReadError" in (a.error or "") for a in error.value.attempts)
    assert "http://test/v1/chat/completions" in str(error.value)


def test_a_targets_own_headers_replace_the_defaults_whatever_their_case() -> None:
    """Headers merge as httpx.Client merged them: a target's ``User-Agent`` or ``Accept`` replaces
    the default one, never goes out beside it."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={})

    sender, _ = transport(handler)
    sender.send(WireRequest("/v1/x", {}, headers={"User-Agent": "mine/1", "Accept": "text/plain"}))
    sent = seen[0].headers
    assert sent.get_list("user-agent") == ["mine/1"] and sent.get_list("accept") == ["text/plain"]
    assert sent["accept-encoding"]  # the defaults it did not replace are kept


def test_a_500_is_not_retried() -> None:
    sender, waits = transport(lambda request: httpx.Response(500, json={"error": {"message": ""}}))
    sent = sender.send(WIRE)
    assert sent.response.status == 500 and waits == [] and len(sent.attempts) == 1


def test_messages_keep_the_real_port_and_hide_credentials() -> None:
    url = "http://user:hunter22@127.0.0.1:8123/v1?key=abc123456&model=m"
    assert safe_url(url) == "http://127.0.0.1:8123/v1?key=<scrubbed>&model=m"
    assert scrub_uri(url).startswith("http://127.0.0.1:0/v1")  # cassettes: the random port dropped
    assert secrets.redact("login hunter22 ok") == "login <redacted> ok"


def test_a_query_in_the_base_url_follows_the_request_path() -> None:
    """``base_url = "https://h/?key=..."``: the request goes to ``/v1/...?key=...``, not to ``/``
    with the path glued to the key."""
    assert Transport("http://h/?key=k1&x=1").url("/v1/chat") == "http://h/v1/chat?key=k1&x=1"
    assert Transport("http://h?key=k1").url("/v1/m:stream?alt=sse") == "http://h/v1/m:stream?alt=sse&key=k1"
    assert Transport("http://h/v1/").url("/chat") == "http://h/v1/chat"


def test_secrets_are_redacted_by_value_in_responses_and_requests() -> None:
    secrets.register("sk-test-SECRET-0001")

    def echo(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            401,
            headers={"x-echo": "key sk-test-SECRET-0001"},
            json={"error": {"message": "Incorrect API key provided: Bearer sk-test-SECRET-0001"}},
        )

    sender, _ = transport(echo, auth_headers={"Authorization": "Bearer sk-test-SECRET-0001"})
    body = {"messages": [{"role": "user", "content": "my key is sk-test-SECRET-0001"}]}
    sent = sender.send(WireRequest("/v1/x?code=sk-test-SECRET-0001", body))
    text = repr(sent)
    assert "sk-test-SECRET-0001" not in text and "<redacted>" in text


def turn_error(status: int, message: str = "x", attempts: int = 1) -> object:
    t = transcript(ParsedTurn(error=ProviderError(status, message)))
    t.exchanges[0].response = WireResponse(status, "{}")
    t.exchanges[0].attempts = [Attempt(status) for _ in range(attempts)] if attempts > 1 else []
    return t


def test_an_error_inside_a_200_is_the_providers_answer_not_untestable() -> None:
    t = transcript(ParsedTurn(error=ProviderError(503, "upstream overloaded")))
    assert untestable(t, simulated=False) is None  # a finding, scored


@pytest.mark.parametrize(
    ("status", "cause", "kind"),
    [
        (429, "endpoint", "EndpointUnavailable"),
        (503, "endpoint", "EndpointUnavailable"),
        (401, "config", "AuthenticationError"),
        (500, None, None),  # the provider answered: a finding, scored
        (400, None, None),
    ],
)
def test_what_makes_a_run_untestable(status: int, cause: str | None, kind: str | None) -> None:
    error = untestable(turn_error(status, attempts=3), simulated=False)  # type: ignore[arg-type]
    found = (error.cause, error.kind) if error is not None else (None, None)
    assert found == (cause, kind)


def test_no_response_at_all_is_a_transport_error() -> None:
    t = transcript(ParsedTurn(error=ProviderError(0, "refused", "transport_error")))
    t.exchanges[0].response = None
    error = untestable(t, simulated=False)
    assert error is not None and error.cause == "transport"


def test_errors_are_never_scored_and_set_their_own_exit_code() -> None:
    cassette = record(
        score=None,
        passed=False,
        outcome="error",
        error=RunError("CassetteMissingError", "m", cause="cassette"),
    )
    transport_error = record(
        score=None, passed=False, outcome="error", error=RunError("TransportError", "t", cause="transport")
    )
    report = build([record()])
    assert report.summary.targets["sim-openai"].score == 100
    assert gate(report, [record(), cassette])[0] == 3
    assert gate(report, [record(), transport_error])[0] == 4
    assert gate(report, [record()], min_score=100.0)[0] == 0
    missed = Finding("expect.calls", "error", False, "no call")
    half = build(
        [
            record(),
            record(
                scenario="t.other", checks=(CheckResult.of("expect.calls", "expectation", 3.0, [missed]),)
            ),
        ]
    )
    assert half.summary.targets["sim-openai"].score == 50
    assert gate(half, [record()], min_score=60)[0] == 1


@pytest.mark.parametrize("name", ["/abs/path", "../up", ".hidden", "a/b", "a\\b", ""])
def test_names_that_become_paths_are_checked(tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigError, match="cannot name a cassette"):
        cassette_path(tmp_path, name, "s.id")
    with pytest.raises(ConfigError, match="cannot name a cassette"):
        cassette_path(tmp_path, "t", name)


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ("interactions: [\n", 2, "invalid YAML"),
        ("interactions:\n- request: {method: POST}\n  response: {}\n", 2, "no request method and uri"),
        ("just text\n", 1, "no 'interactions' list"),
        ("interactions: []\nversion: 1\n", None, "holds no interaction"),
    ],
)
def test_an_unreadable_cassette_names_its_file_and_line(
    tmp_path: Path, text: str, line: int | None, what: str
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(CassetteCorruptError) as error:
        CassetteTransport(path, mode="replay", target="t", scenario_id="s")
    assert what in str(error.value) and error.value.line == line and str(path) in str(error.value)


def test_an_incomplete_recording_is_not_called_drift(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    answers = iter([httpx.Response(200, json={"n": 1})])

    def server(request: httpx.Request) -> httpx.Response:
        return next(answers)

    recording = CassetteTransport(
        path, mode="record", target="t", scenario_id="s", inner=httpx.MockTransport(server)
    )
    httpx.Client(transport=recording).post("http://x/v1", json={"turn": 0})
    recording.mark_incomplete("turn 1 got no response while recording: reset")
    recording.save()
    replay = httpx.Client(transport=CassetteTransport(path, mode="replay", target="t", scenario_id="s"))
    assert replay.post("http://x/v1", json={"turn": 0}).json() == {"n": 1}
    with pytest.raises(CassetteIncompleteError, match=r"incomplete recording.*reset"):
        replay.post("http://x/v1", json={"turn": 1})


CASSETTE_TEXT = st.one_of(
    st.text(max_size=400),
    st.builds(
        lambda items: yaml.safe_dump({"interactions": items, "version": 1}),
        st.lists(
            st.dictionaries(
                st.sampled_from(["request", "response", "x"]),
                st.recursive(
                    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda inner: (
                        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
                    ),
                    max_leaves=10,
                ),
                max_size=3,
            ),
            max_size=3,
        ),
    ),
)


@given(CASSETTE_TEXT)
def test_any_cassette_file_loads_or_is_a_cassette_error(text: str) -> None:
    """The cassette reader never crashes: a file either replays or is a CassetteError naming it."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "c.yaml"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            replay = CassetteTransport(path, mode="replay", target="t", scenario_id="s")
        except CassetteError as error:
            assert str(path) in str(error)
            return
        with httpx.Client(transport=replay) as client, contextlib.suppress(CassetteError):
            client.post("http://x/v1", json={"a": 1})
