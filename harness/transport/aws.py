"""AWS Signature Version 4 for live requests, by botocore's own signer (the ``[bedrock]`` extra).

A Bedrock endpoint takes a Bedrock API key as a bearer token, or a request signed with SigV4 from
the standard AWS credential chain (environment, shared config and credentials files, SSO, the
instance's role) [B8][B9]. Signing needs the final method, URL, headers and body, so it happens
where requests are sent: :class:`~harness.transport.live.LiveTransport` calls the signer on each
request as it goes out, after a cassette has recorded it, so nothing signed is ever kept. The
signature, the date and the session token go in headers; the credentials are registered as
secrets first, so an echo of them is redacted wherever it appears. No signer is written here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx

from harness import secrets
from harness.errors import ConfigError, TransportError

Signer = Callable[[httpx.Request], None]
"""Adds the headers that authenticate a request, in place."""

REGION = re.compile(r"\.([a-z]{2}(?:-[a-z]+)+-\d+)\.(?:amazonaws\.com|api\.aws)$")
"""The region in an AWS endpoint's host (``bedrock-runtime.us-east-1.amazonaws.com``)."""
SIGNED = ("Authorization", "X-Amz-Date", "X-Amz-Security-Token")


def region_of(base_url: str, session: Any) -> str:
    """The region of ``base_url``'s host, else the environment's (``AWS_REGION``, as the AWS SDKs
    read it), else botocore's configuration (``AWS_DEFAULT_REGION``, a profile)."""
    found = REGION.search(urlsplit(base_url).hostname or "")
    region = (
        found.group(1) if found else os.environ.get("AWS_REGION") or session.get_config_variable("region")
    )
    if not region:
        raise ConfigError(
            f"no AWS region to sign requests to {base_url} for: use a regional endpoint "
            "(https://bedrock-runtime.<region>.amazonaws.com) or set AWS_REGION"
        )
    return str(region)


def sigv4_signer(service: str, base_url: str, *, session: Any = None) -> Signer:
    """A signer for ``service`` (``bedrock``) from the AWS credential chain, as botocore resolves it.

    A :class:`~harness.errors.ConfigError` says what is missing: botocore (the ``[bedrock]`` extra),
    credentials, or a region."""
    try:
        import botocore.session
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
    except ImportError:
        raise ConfigError(
            "signing AWS requests needs botocore: pip install 'toolcall-harness[bedrock]', or set a "
            "Bedrock API key in AWS_BEARER_TOKEN_BEDROCK"
        ) from None
    session = session or botocore.session.Session()
    credentials = session.get_credentials()
    if credentials is None:
        raise ConfigError(
            "no AWS credentials to sign with (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile, "
            "SSO or an instance role) and no Bedrock API key in AWS_BEARER_TOKEN_BEDROCK"
        )
    region = region_of(base_url, session)

    def sign(request: httpx.Request) -> None:
        try:
            frozen = credentials.get_frozen_credentials()  # refreshed when temporary ones expire
            secrets.register(frozen.access_key, frozen.secret_key, frozen.token)
            signed = AWSRequest(
                method=request.method,
                url=str(request.url),
                data=request.content,
                headers={"Content-Type": request.headers.get("content-type", "application/json")},
            )
            SigV4Auth(frozen, service, region).add_auth(signed)
        except Exception as exc:  # botocore's, refreshing credentials: the run cannot send
            raise TransportError(
                f"signing the request failed: {type(exc).__name__}: {secrets.redact(str(exc))}"
            ) from exc
        for name in SIGNED:
            if name in signed.headers:
                request.headers[name] = signed.headers[name]

    return sign
