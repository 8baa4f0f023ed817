"""A Bedrock target without an API key signs each request with SigV4 (botocore's signer) as it goes
out: a loopback server checks the signature against what it received, the cassette keeps none of
it, and the replay needs no credential at all."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.api import load_scenarios, run
from harness.runner import RunConfig
from harness.targets import Target
from tests.helpers.cli import REPO
from tests.helpers.hostile_replies import Answer, ScriptedServer, final_body, reply_body

botocore_auth = pytest.importorskip("botocore.auth")
from botocore.awsrequest import AWSRequest  # noqa: E402
from botocore.credentials import Credentials  # noqa: E402

FAKE = {  # AWS's documented example credentials: no real account
    "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
    "AWS_SESSION_TOKEN": "FQoGZXIvYXdzEXAMPLEsessiontoken0123456789",
}
PARIS = load_scenarios(REPO / "scenarios", select=["weather.single.paris"])


def expected_signature(url: str, body: bytes, headers: dict[str, str]) -> str:
    """The signature botocore computes for the request as the server received it."""
    names = re.search(r"SignedHeaders=([^,]+)", headers["authorization"]).group(1).split(";")  # type: ignore[union-attr]
    request = AWSRequest(method="POST", url=url, data=body, headers={n: headers[n] for n in names})
    request.context["timestamp"] = headers["x-amz-date"]
    credentials = Credentials(
        FAKE["AWS_ACCESS_KEY_ID"], FAKE["AWS_SECRET_ACCESS_KEY"], FAKE["AWS_SESSION_TOKEN"]
    )
    signer = botocore_auth.SigV4Auth(credentials, "bedrock", "eu-west-3")
    signature: str = signer.signature(
        signer.string_to_sign(request, signer.canonical_request(request)), request
    )
    return signature


def test_requests_are_signed_as_sent_and_nothing_signed_is_kept(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("AWS_BEARER_TOKEN_BEDROCK", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in {**FAKE, "AWS_REGION": "eu-west-3", "AWS_EC2_METADATA_DISABLED": "true"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    call = reply_body("bedrock-converse", False, name="get_weather", arguments={"city": "Paris"}, text=None)
    final = final_body("bedrock-converse", False)
    script = [Answer(str(call).encode()), Answer(str(final).encode())]  # whole bodies: text
    cassettes = tmp_path / "cassettes"
    with ScriptedServer(script) as server:
        target = Target.build(
            "bedrock-signed",
            profile="bedrock",
            model="us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            base_url=server.url,
            api_key_env="AWS_BEARER_TOKEN_BEDROCK",  # named, and unset: SigV4 from the chain
            retries=0,
        )
        result = run(
            PARIS, [target], RunConfig(mode="record", cassettes=cassettes, results=tmp_path / "r.jsonl")
        )
        seen = list(server.seen)
    (record,) = result.records
    assert record.error is None and record.transcript.executions[0].call.arguments == {"city": "Paris"}
    assert len(seen) == 2
    for request in seen:
        assert request.target == "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"
        assert request.headers["x-amz-security-token"] == FAKE["AWS_SESSION_TOKEN"]
        signature = expected_signature(server.url + request.target, request.body, request.headers)
        assert request.headers["authorization"].endswith(f"Signature={signature}")
    written = "".join(p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file())
    assert written and not any(value in written for value in FAKE.values())
    assert "AWS4-HMAC-SHA256" not in written and "x-amz-date" not in written.lower()
    for name in FAKE:
        monkeypatch.delenv(name)
    replayed = run(
        PARIS, [target], RunConfig(mode="replay", cassettes=cassettes, results=tmp_path / "p.jsonl")
    )
    assert [r.score for r in replayed.records] == [record.score] and replayed.records[0].error is None
