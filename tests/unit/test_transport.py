"""The transport joins a format's path to a base URL that carries a query (Azure's
``?api-version=``): the path before the query, the query on every request."""

from __future__ import annotations

import httpx
import pytest

from harness import secrets
from harness.model import WireRequest
from harness.transport import Transport

WIRE = WireRequest("/v1/chat/completions", {"model": "m", "messages": []})


@pytest.mark.parametrize(
    ("base_url", "path", "url"),
    [
        (
            "https://h/m/ok?api-version=2024-01-01",
            "/v1/messages",
            "https://h/m/ok/v1/messages?api-version=2024-01-01",
        ),
        (
            "https://h/m/ok/?api-version=1",
            "/v1/x:stream?alt=sse",
            "https://h/m/ok/v1/x:stream?alt=sse&api-version=1",
        ),
        ("https://h/base/", "/v1/chat", "https://h/base/v1/chat"),
        ("https://h/base#part", "/v1/chat", "https://h/base/v1/chat"),
    ],
)
def test_a_formats_path_joins_the_base_path_and_the_query_stays(base_url: str, path: str, url: str) -> None:
    assert Transport(base_url).url(path) == url


def test_the_query_goes_on_every_request_and_its_credentials_stay_scrubbed() -> None:
    seen: list[str] = []

    def server(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, json={"choices": []})

    sender = Transport(
        "https://h/deployments/d?api-version=2024-01-01&key=sk-QUERY-SECRET",
        client_transport=httpx.MockTransport(server),
    )
    try:
        sent = [sender.send(WIRE), sender.send(WIRE)]
    finally:
        secrets.forget_all()
    assert (
        seen == ["https://h/deployments/d/v1/chat/completions?api-version=2024-01-01&key=sk-QUERY-SECRET"] * 2
    )
    for one in sent:
        assert (
            one.request.url
            == "https://h/deployments/d/v1/chat/completions?api-version=2024-01-01&key=<scrubbed>"
        )
