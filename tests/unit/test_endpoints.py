"""Endpoints: what a live target's requests carry."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from harness import secrets
from harness.errors import ConfigError
from harness.servers.endpoints import live_endpoint
from harness.targets import Target
from harness.targets_file import load_config
from harness.transport.live import LiveTransport


def test_a_live_endpoint_sends_the_targets_own_headers() -> None:
    """A target's ``headers`` (its profile's, its own merged over them) go with every request,
    beside the key's header."""
    url = "http://127.0.0.1:9"  # a loopback server: no key needed
    target = Target.build("t", format="openai-chat", model="m", base_url=url, headers={"x-route": "canary"})
    endpoint = live_endpoint(target, url, limit="t")
    endpoint.close()
    assert endpoint.headers == {"x-route": "canary"}


# -- AWS Bedrock: a Bedrock API key, else SigV4 from the AWS credential chain -----------------------

BEDROCK = "https://bedrock-runtime.eu-west-3.amazonaws.com"
FAKE = {  # AWS's documented example credentials: no real account
    "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
    "AWS_SESSION_TOKEN": "FQoGZXIvYXdzEXAMPLEsessiontoken0123456789",
}


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """An environment with no AWS configuration of this machine's and no instance metadata."""
    for name in [*FAKE, "AWS_BEARER_TOKEN_BEDROCK", "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION"]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return monkeypatch


def test_a_bedrock_api_key_is_a_bearer_token(aws: pytest.MonkeyPatch) -> None:
    aws.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-fake-0123")
    endpoint = live_endpoint(Target.build("b", profile="bedrock", model="m"), BEDROCK, limit="b")
    endpoint.close()
    assert endpoint.headers == {"Authorization": "Bearer bedrock-api-key-fake-0123"}
    assert isinstance(endpoint.transport, LiveTransport) and endpoint.transport.signer is None
    assert "bedrock-api-key-fake-0123" not in secrets.redact("echo bedrock-api-key-fake-0123")


def test_without_a_key_each_request_is_signed_by_botocore(aws: pytest.MonkeyPatch) -> None:
    """SigV4 from the credential chain, the region the base URL's; the credentials become secrets."""
    pytest.importorskip("botocore")
    for name, value in FAKE.items():
        aws.setenv(name, value)
    endpoint = live_endpoint(Target.build("b", profile="bedrock", model="m"), BEDROCK, limit="b")
    endpoint.close()
    assert endpoint.headers == {}
    assert isinstance(endpoint.transport, LiveTransport) and endpoint.transport.signer is not None
    assert endpoint.share(2).transport.signer is endpoint.transport.signer  # type: ignore[union-attr]
    request = httpx.Request("POST", BEDROCK + "/model/m/converse", content=b'{"messages":[]}')
    request.headers["content-type"] = "application/json"
    endpoint.transport.signer(request)
    assert re.fullmatch(
        r"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/\d{8}/eu-west-3/bedrock/aws4_request, "
        r"SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature=[0-9a-f]{64}",
        request.headers["authorization"],
    ), request.headers["authorization"]
    assert re.fullmatch(r"\d{8}T\d{6}Z", request.headers["x-amz-date"])
    assert request.headers["x-amz-security-token"] == FAKE["AWS_SESSION_TOKEN"]
    for value in FAKE.values():  # registered: an echo of them is redacted wherever it appears
        assert value not in secrets.redact(f"echo {value}")


def test_without_a_key_or_credentials_the_target_is_refused(aws: pytest.MonkeyPatch) -> None:
    pytest.importorskip("botocore")
    with pytest.raises(ConfigError, match="AWS_BEARER_TOKEN_BEDROCK"):
        live_endpoint(Target.build("b", profile="bedrock", model="m"), BEDROCK, limit="b")
    for name, value in FAKE.items():
        aws.setenv(name, value)
    with pytest.raises(ConfigError, match="AWS_REGION"):  # a host that names no region, and none set
        live_endpoint(Target.build("b", profile="bedrock", model="m"), "https://bedrock.example", limit="b")


def test_a_profile_that_does_not_sign_still_needs_its_key(aws: pytest.MonkeyPatch) -> None:
    aws.delenv("GROQ_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="GROQ_API_KEY"):
        live_endpoint(Target.build("g", profile="groq", model="m"), "https://api.groq.com/openai", limit="g")


def test_a_declared_profile_may_sign_too(aws: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A gateway in front of Bedrock, declared in harness.toml with ``sigv4_service``."""
    pytest.importorskip("botocore")
    for name, value in FAKE.items():
        aws.setenv(name, value)
    config = tmp_path / "harness.toml"
    config.write_text(
        '[profiles.gateway]\nformat = "openai-chat"\nbase_url = "https://bedrock-mantle.eu-west-3.api.aws"\n'
        'api_key_env = "AWS_BEARER_TOKEN_BEDROCK"\nsigv4_service = "bedrock"\n\n'
        '[targets.g]\nprofile = "gateway"\nmodel = "openai.gpt-oss-120b"\n'
    )
    target = load_config(config).targets["g"]
    endpoint = live_endpoint(target, target.resolved_base_url(), limit="g")
    endpoint.close()
    assert isinstance(endpoint.transport, LiveTransport) and endpoint.transport.signer is not None


def test_many_connections_are_spread_over_pools_a_thread_keeping_to_one() -> None:
    """Past 50 connections a live transport keeps several pools (httpcore's pool costs more CPU a
    request the more connections it holds); each thread sends through one pool."""
    import threading

    from harness.transport.live import SHARD_CONNECTIONS

    assert len(LiveTransport(connections=SHARD_CONNECTIONS)._shards) == 1
    assert len(LiveTransport(connections=20, keep_alive=False)._shards) == 1
    wide = LiveTransport(connections=500)
    assert len(wide._shards) == 10
    seen: dict[str, list[int]] = {}

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200)

    for index, shard in enumerate(wide._shards):  # each pool answers with its own number
        shard.handle_request = lambda request, index=index: (  # type: ignore[method-assign]
            seen.setdefault(threading.current_thread().name, []).append(index) or answer(request)
        )
    request = httpx.Request("POST", "http://127.0.0.1:1/v1/chat/completions")

    def send() -> None:
        for _ in range(3):
            wide.handle_request(request)

    threads = [threading.Thread(target=send, name=f"t{i}") for i in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(len(set(pools)) == 1 for pools in seen.values())  # a thread keeps to its pool
    assert sorted(pools[0] for pools in seen.values()) == list(range(10))  # threads spread evenly
