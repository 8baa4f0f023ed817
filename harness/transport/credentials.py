"""Keys and credentials: read from the environment, registered as secrets, masked in what is kept."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from harness import secrets
from harness.errors import ConfigError


def api_key(env_name: str | None) -> str | None:
    """The key from the environment variable the target names (never from a file); registered
    as a secret, so it is redacted wherever it appears."""
    if not env_name:
        return None
    value = os.environ.get(env_name)
    if not value:
        raise ConfigError(f"the target needs an API key in the environment variable {env_name}")
    secrets.register(value)
    return value


SECRET_QUERY = frozenset(
    {
        "key",
        "api_key",
        "apikey",
        "access_token",
        "token",
        "code",
        "sig",
        "signature",
        "x-amz-signature",
        "x-amz-credential",
        "x-amz-security-token",
        "x-goog-signature",
        "x-goog-credential",
        "password",
        "secret",
        "client_secret",
        "auth",
    }
)
"""Query parameters that carry credentials (API keys, OAuth codes, signed-URL signatures)."""
SCRUBBED = "<scrubbed>"
MARKERS = frozenset({SCRUBBED, secrets.REDACTED})
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})

SECRET_HEADERS = frozenset(
    {"authorization", "api-key", "x-api-key", "x-goog-api-key", "cookie", "set-cookie", "proxy-authorization"}
)
CREDENTIAL_WORDS = ("auth", "key", "token", "secret", "password", "signature", "credential", "cookie")
"""Words that mark a header of a target's own as a credential (``x-team-token``): its value is a
secret (:func:`secret_header`)."""


def masked(headers: dict[str, str]) -> dict[str, str]:
    """Headers fit for a transcript: secret headers' values replaced, known secrets redacted."""
    return {k: (SCRUBBED if k.lower() in SECRET_HEADERS else secrets.redact(v)) for k, v in headers.items()}


def register_url(uri: str) -> None:
    """Register the credentials in ``uri`` as secrets: its userinfo password (and
    ``user:password``) and the values of its credential query parameters (:data:`SECRET_QUERY`),
    so a server's echo of them is redacted too, not only the URL's own parameters by name."""
    parts = urlsplit(uri)
    if parts.password:
        secrets.register(parts.password, f"{parts.username}:{parts.password}")
    if parts.query:  # a URL scrubbed already holds markers, not secrets
        query = parse_qsl(parts.query, True)
        secrets.register(*(v for k, v in query if k.lower() in SECRET_QUERY and v not in MARKERS))


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*\s+(\S.*)")
"""A credential header's value: an authentication scheme, then its credentials (RFC 9110 11.4)."""


def register_headers(headers: Mapping[str, str]) -> None:
    """Register the header values an MCP server is given as secrets, and, of a credential header
    (:func:`secret_header`), the credentials after its scheme too (``Bearer <token>``: the token,
    which Anthropic's MCP connector is given on its own)."""
    secrets.register(*headers.values())
    for name, value in headers.items():
        if secret_header(name) and (found := _SCHEME.fullmatch(value.strip())):
            secrets.register(found[1].strip())


def secret_header(name: str) -> bool:
    """Whether a header's name says it carries a credential (its value is registered as a secret
    when a target sends it): :data:`SECRET_HEADERS` and names with a :data:`CREDENTIAL_WORDS` word."""
    lower = name.lower()
    return lower in SECRET_HEADERS or any(word in lower for word in CREDENTIAL_WORDS)


def safe_url(uri: str) -> str:
    """``uri`` fit for a message: userinfo dropped and secret query parameters masked (their
    values registered as secrets, :func:`register_url`); the host and port kept."""
    register_url(uri)
    parts = urlsplit(uri)
    if parts.username or parts.password:
        host = parts.hostname or ""
        parts = parts._replace(netloc=host + (f":{parts.port}" if parts.port else ""))
    if parts.query:
        query = [(k, SCRUBBED if k.lower() in SECRET_QUERY else v) for k, v in parse_qsl(parts.query, True)]
        parts = parts._replace(query=urlencode(query, safe="<>"))
    return secrets.redact(urlunsplit(parts))


def scrub_uri(uri: str) -> str:
    """:func:`safe_url`, and the port of loopback servers dropped (random on each start), so
    re-recording a local server gives the same cassette."""
    parts = urlsplit(safe_url(uri))
    if parts.hostname in LOOPBACK and parts.port:
        parts = parts._replace(netloc=f"{parts.hostname}:0")
    return urlunsplit(parts)
