"""Endpoints: what a live target's requests carry."""

from __future__ import annotations

from harness.servers.endpoints import live_endpoint
from harness.targets import Target


def test_a_live_endpoint_sends_the_targets_own_headers() -> None:
    """A target's ``headers`` (its profile's, its own merged over them) go with every request,
    beside the key's header."""
    url = "http://127.0.0.1:9"  # a loopback server: no key needed
    target = Target.build("t", format="openai-chat", model="m", base_url=url, headers={"x-route": "canary"})
    endpoint = live_endpoint(target, url, limit="t")
    endpoint.close()
    assert endpoint.headers == {"x-route": "canary"}
