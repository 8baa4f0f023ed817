"""What the harness makes of an MCP server's stray stdout and of the SDK's logs about it: one
line, registered secrets redacted, no traceback quoting the values a server sent."""

from __future__ import annotations

import logging
import sys

import pytest
from mcp import types

from harness import secrets
from harness.tools.mcp.manager import EXCERPT_CHARS, _SDKLogFilter, _stray_line

SECRET = "mcp-secret-5b1d0e9a"


def parse_error(line: str) -> Exception:
    """The error the SDK's stdio transport hands over for a stdout line that is not JSON-RPC."""
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError as exc:
        return exc
    raise AssertionError(f"{line!r} parsed")


@pytest.fixture(autouse=True)
def registered() -> None:
    secrets.register(SECRET)


def test_a_stray_line_is_quoted_redacted_and_short() -> None:
    described = _stray_line(parse_error(f"token={SECRET}"))
    assert SECRET not in described
    assert described.startswith("'token=<redacted>'") and "Invalid JSON" in described
    cut = _stray_line(parse_error(f"{'x' * 75}{SECRET}"))  # redacted before it is cut short
    assert SECRET[:5] not in cut and len(cut) < EXCERPT_CHARS + 60


def test_a_json_line_of_the_wrong_shape_says_why() -> None:
    described = _stray_line(parse_error('{"jsonrpc": "2.0", "method": 42}'))
    assert "Field required" in described and "Input should be a valid string" in described


def record(message: str, *args: object, error: BaseException | None = None) -> logging.LogRecord:
    exc_info = (type(error), error, error.__traceback__) if error is not None else None
    return logging.LogRecord("mcp.client.session", logging.WARNING, __file__, 1, message, args, exc_info)


def test_the_sdk_parse_failure_log_is_dropped_for_the_issue_the_manager_records() -> None:
    error = parse_error(SECRET)
    assert not _SDKLogFilter().filter(record("Failed to parse JSONRPC message from server", error=error))


def test_other_sdk_logs_become_one_redacted_line() -> None:
    error = parse_error(f'{{"jsonrpc": "2.0", "method": "{SECRET}", "params": 3}}')
    kept = record("Failed to validate notification: %s", SECRET, error=error)
    assert _SDKLogFilter().filter(kept)
    handler = logging.StreamHandler(sys.stdout)
    text = handler.format(kept)
    assert SECRET not in text and "Traceback" not in text and "input_value" not in text
    assert text.startswith("Failed to validate notification: <redacted> (ValidationError: ")
    assert "\n" not in text
