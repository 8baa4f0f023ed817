"""Provider error envelopes: every known shape of an error body, read into a ProviderError.

OpenAI-style ``{"error": {...}}``, Mistral's flat ``{"object": "error", ...}``,
FastAPI's ``{"detail": ...}``, Gemini's ``status`` codes and errors embedded in
2xx bodies and stream chunks. Used by the adapters and by ``harness audit``.
"""

from __future__ import annotations

import json
from typing import Any

from harness.model import Finding, ProviderError, deviation
from harness.providers._json import JsonProblem, constant_findings, decode, unicode_findings


def error_code(error: dict[str, Any]) -> str | None:
    """The error code, in order: string ``code``, Gemini ``status``, ``type``, integer ``code``."""
    code = error.get("code")
    if isinstance(code, str) and code:
        return code
    for key in ("status", "type"):
        if isinstance(error.get(key), str) and error[key]:
            return str(error[key])
    if isinstance(code, int):
        return str(code)
    return None


def provider_error(error: Any, status: int, *, embedded: bool = False) -> ProviderError:
    """A :class:`ProviderError` from any known error envelope.

    ``embedded`` is true for errors inside a 2xx body or a stream: their own
    status (``status_code``, or an integer ``code``) wins over the HTTP one.
    """
    if isinstance(error, str):
        return ProviderError(status, error)
    if not isinstance(error, dict):
        return ProviderError(status, json.dumps(error))
    if embedded:
        for key in ("status_code", "code"):
            value = error.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                status = value
                break
    detail = {k: v for k, v in error.items() if k not in ("message", "code", "type", "status")}
    message = error.get("message")
    return ProviderError(
        status, str(message) if message is not None else json.dumps(error), error_code(error), detail
    )


def error_from_body(status: int, text: str, findings: list[Finding] | None = None) -> ProviderError:
    """The error of an HTTP >= 400 response, whatever its envelope.

    A body that is JSON but nested too deep to read is kept as text, with a ``wire.body_too_deep``
    finding appended to ``findings`` when a list is given.
    """
    try:
        decoded = decode(text)
    except JsonProblem as exc:
        if exc.kind == "too_deep" and findings is not None:
            findings.append(
                deviation("body_too_deep", f"HTTP {status} error body is {exc.message}; kept as text")
            )
        return ProviderError(status, text.strip() or f"HTTP {status} with an empty body")
    if findings is not None:
        findings += unicode_findings(decoded.repaired, f"the HTTP {status} error body")
        findings += constant_findings(decoded.constants, f"the HTTP {status} error body")
    body = decoded.value
    if isinstance(body, list) and body and isinstance(body[0], dict):  # Gemini sometimes wraps in a list
        body = body[0]
    if isinstance(body, dict):
        if "error" in body:
            return provider_error(body["error"], status)
        if "detail" in body:  # FastAPI-style envelope
            detail = body["detail"]
            return ProviderError(status, detail if isinstance(detail, str) else json.dumps(detail))
        if "message" in body:  # Mistral's flat {"object": "error", ...}
            return provider_error(body, status)
    return ProviderError(status, text.strip() or f"HTTP {status} with an empty body")


def embedded_error(body: dict[str, Any], status: int) -> ProviderError | None:
    """An error object inside a 2xx body or stream chunk, if there is one."""
    if body.get("error"):
        return provider_error(body["error"], status, embedded=True)
    if body.get("object") == "error":
        return provider_error(body, status, embedded=True)
    return None
