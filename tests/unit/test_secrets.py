"""Redaction by value: every form a server may echo a secret in (URL-quoted, base64 alone or inside
longer base64, JSON-escaped in part or whole, cut between the events of a stream) is redacted."""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, quote_plus

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import secrets
from harness.model import WireRequest
from harness.secrets import REDACTED, redact, redact_body, redact_bytes
from harness.servers.endpoints import live_endpoint
from harness.targets import Target
from harness.transport.cassette import CassetteTransport
from harness.transport.credentials import register_headers, register_url, safe_url
from harness.transport.send import Transport
from tests.helpers.echo_server import b64, json_escaped

KEY = "sk-live/TOP+SECRET=4242"


@pytest.fixture(autouse=True)
def _key() -> Iterator[None]:
    secrets.register(KEY)
    yield
    secrets.forget_all()


def stream(*pieces: str, field: str = "content") -> str:
    """A Chat Completions stream whose events carry ``pieces`` (JSON string text) as deltas."""
    return (
        "".join(
            f'data: {{"id":"c1","choices":[{{"index":0,"delta":{{"{field}":"{piece}"}}}}]}}\n\n'
            for piece in pieces
        )
        + "data: [DONE]\n\n"
    )


def joined(body: str, field: str = "content") -> str:
    """What a reader of the stream sees: the deltas' text joined (each event must still parse)."""
    events = [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: {")]
    return "".join(e["choices"][0]["delta"].get(field, "") for e in events)


@pytest.mark.parametrize(
    "form",
    [
        KEY,
        quote(KEY, safe=""),
        quote_plus(KEY),
        b64(KEY),
        b64(KEY).rstrip("="),
        base64.urlsafe_b64encode(KEY.encode()).decode(),
        json_escaped(KEY),  # every character \uXXXX
        json_escaped(KEY, every=2),  # mixed, and '/' as '\/'
        json_escaped(KEY).upper().replace("\\U", "\\u"),  # upper-case hex digits
        json.dumps(KEY).replace("/", "\\/")[1:-1],
    ],
)
def test_every_form_is_redacted_in_text_and_bytes(form: str) -> None:
    text = f"401: Incorrect API key provided: {form}."
    assert redact(text) == f"401: Incorrect API key provided: {REDACTED}."
    assert redact_bytes(text.encode()) == f"401: Incorrect API key provided: {REDACTED}.".encode()


@given(prefix=st.binary(max_size=12), suffix=st.binary(max_size=12))
def test_the_key_inside_any_base64_text_is_redacted(prefix: bytes, suffix: bytes) -> None:
    """``Bearer <key>``, ``Basic``, a JSON blob: whatever surrounds the key, at any of the three
    alignments, only the base64 characters its neighbours share in are left."""
    blob = base64.b64encode(prefix + KEY.encode() + suffix).decode()
    out = redact(blob)
    assert REDACTED in out
    left = out.replace(REDACTED, "")
    assert len(left) <= (len(prefix) + len(suffix)) * 4 / 3 + 4  # one shared character a side, padding


@pytest.mark.parametrize("scheme", ["Bearer", "Basic", "Token"])
def test_the_base64_of_an_authorization_value_keeps_only_its_scheme(scheme: str) -> None:
    encoded = b64(f"{scheme} {KEY}")
    head, tail = redact(encoded).split(REDACTED)
    assert encoded.startswith(head) and len(head) <= (len(scheme) + 1) * 4 / 3 + 1
    assert len(tail.rstrip("=")) <= 1


@pytest.mark.parametrize(
    "pieces",
    [
        ["key: " + KEY[:7], KEY[7:] + " is wrong"],  # cut in two
        [KEY[:3], KEY[3:9], KEY[9:15], KEY[15:]],  # in four
        [b64(KEY)[:10], b64(KEY)[10:]],
        [quote(KEY, safe="")[:9], quote(KEY, safe="")[9:]],  # inside a %XX escape
        [json_escaped(KEY[:5]), json_escaped(KEY[5:])],  # escaped, and cut
        [KEY[:4], json_escaped(KEY[4:], every=2)],
        [b64(f"Bearer {KEY}")[:20], b64(f"Bearer {KEY}")[20:]],
    ],
)
def test_a_key_cut_between_stream_events_is_redacted(pieces: list[str]) -> None:
    body = redact_body(stream(*pieces))
    text = joined(body)
    assert REDACTED in text
    assert KEY not in text and b64(KEY)[:-2] not in text and quote(KEY, safe="") not in text
    assert [piece for piece in pieces if piece in body] == []  # no event keeps its piece of it


@given(cuts=st.lists(st.integers(0, len(KEY)), max_size=5), before=st.text(max_size=8))
def test_a_key_cut_anywhere_reads_redacted_once_joined(cuts: list[int], before: str) -> None:
    text = before + KEY + " ok"
    points = sorted({0, len(text), *(c + len(before) for c in cuts)})
    pieces = [json.dumps(text[a:b])[1:-1] for a, b in itertools.pairwise(points)]
    assert joined(redact_body(stream(*pieces))) == redact(before) + REDACTED + " ok"


def test_a_tool_calls_arguments_cut_around_a_key_stay_json() -> None:
    arguments = json.dumps({"query": KEY})
    pieces = (json.dumps(part)[1:-1] for part in (arguments[:12], arguments[12:]))
    body = redact_body(stream(*pieces, field="arguments"))
    assert json.loads(joined(body, "arguments")) == {"query": REDACTED}


def test_a_body_without_a_secret_is_left_byte_for_byte() -> None:
    body = stream("sk-li", "ve/TOP", "caf\\u00e9 \\/ ok") + '{"content": "sk-", "content": "other"}'
    assert redact_body(body) == body


def test_nothing_registered_changes_nothing() -> None:
    secrets.forget_all()
    body = stream(KEY[:5], KEY[5:])
    assert redact_body(body) == body and redact(KEY) == KEY and redact_bytes(KEY.encode()) == KEY.encode()


def test_short_values_and_scrubbing_markers_are_not_secrets() -> None:
    secrets.forget_all()
    secrets.register("abc", None, "")
    register_url("https://h/v1?key=<scrubbed>&sig=<redacted>")
    assert secrets.known() == ()
    assert redact("abc <scrubbed> <redacted>") == "abc <scrubbed> <redacted>"


def test_credentials_in_a_url_are_registered_by_value() -> None:
    url = "https://user:hunter2222@h/v1?key=query-SECRET-1&api-version=2024-06-01"
    assert safe_url(url) == "https://h/v1?key=<scrubbed>&api-version=2024-06-01"
    echoed = f"you sent query-SECRET-1 as {b64('user:hunter2222')} on 2024-06-01"
    assert redact(echoed) == f"you sent {REDACTED} as {REDACTED} on 2024-06-01"


def test_a_credential_header_registers_the_credentials_after_its_scheme_too() -> None:
    """A provider's MCP connector is given the token of ``Bearer <token>`` on its own; the tail of
    a header that carries no credential is no secret."""
    secrets.forget_all()
    headers = {
        "Authorization": "Bearer tok-HEADER-77",
        "Proxy-Authorization": "Basic  dXNlcjpwYXNz ",
        "X-Team-Key": "plain-VALUE-9",
        "X-Title": "Tool Harness",
    }
    register_headers(headers)
    assert set(secrets.known()) >= {"Bearer tok-HEADER-77", "tok-HEADER-77", "dXNlcjpwYXNz", "plain-VALUE-9"}
    assert "Harness" not in secrets.known()
    assert redact('{"authorization_token": "tok-HEADER-77"}') == f'{{"authorization_token": "{REDACTED}"}}'


def test_a_live_endpoint_registers_its_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """The key, the Authorization value made of it, the value of a header named like a credential
    and a credential query value are secrets before anything is sent; a routing header is not."""
    secrets.forget_all()
    monkeypatch.setenv("LIVE_KEY", "sk-endpoint-0001")
    headers = {"x-team-token": "team-SECRET-77", "x-route": "canary-route"}
    target = Target.build("t", format="openai-chat", model="m", api_key_env="LIVE_KEY", headers=headers)
    live_endpoint(target, "https://h/?key=query-SECRET-2", limit="t").close()
    said = f"sk-endpoint-0001 query-SECRET-2 {b64('Bearer sk-endpoint-0001')} team-SECRET-77 canary-route"
    assert redact(said) == f"{REDACTED} {REDACTED} {REDACTED} {REDACTED} canary-route"


def test_recording_a_stream_with_a_cut_key_keeps_it_out_of_the_cassette_and_the_transcript(
    tmp_path: Path,
) -> None:
    """The cassette keeps the body as a whole redacted, and the harness reads the same body when
    recording as when replaying (so a replay sends the requests the recording sent)."""
    path = tmp_path / "c.yaml"
    raw = stream("key: " + KEY[:7], KEY[7:], json_escaped(KEY, every=2))

    def server(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=raw.encode())

    cassette = CassetteTransport(
        path, mode="record", target="t", scenario_id="s", inner=httpx.MockTransport(server)
    )
    recorded = Transport("https://api.example.com", client_transport=cassette).send(WireRequest("/v1/x", {}))
    cassette.save()
    text = path.read_text()
    assert KEY[7:] not in text and json_escaped(KEY, every=2) not in text
    secrets.forget_all()  # a replay knows no secret
    replay = CassetteTransport(path, mode="replay", target="t", scenario_id="s")
    replayed = Transport("http://replay.invalid", client_transport=replay).send(WireRequest("/v1/x", {}))
    assert replayed.response.body == recorded.response.body
    assert joined(recorded.response.body) == f"key: {REDACTED}{REDACTED}"
