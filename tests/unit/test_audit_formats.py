"""``harness audit`` format detection: each known format by positive evidence only.

A body of a format the harness does not read (a Cohere v1 chat stream, Anthropic Message
Batches objects and results, OpenAI Batch output) is an entry with an
``audit.format_unknown`` finding naming what was seen, never parsed as a lookalike. A Cohere
v2 chat stream used to be read as Anthropic, its tool calls silently lost; it is read as
``cohere-chat`` now. Bodies here are small and hand-written after each provider's documented
shapes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.analysis.audit import AuditEntry, audit_paths, detect_format, identify


def sse(*events: dict[str, Any], named: bool = True) -> str:
    """Events as an SSE body, named by their ``type`` like Anthropic and Cohere do."""
    return "".join((f"event: {e['type']}\n" if named else "") + f"data: {json.dumps(e)}\n\n" for e in events)


def jsonl(*lines: dict[str, Any]) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


COHERE_STREAM = sse(
    {
        "id": "c1",
        "type": "message-start",
        "delta": {"message": {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": []}},
    },
    {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "I will look up the weather."}}},
    {
        "type": "tool-call-start",
        "index": 0,
        "delta": {
            "message": {
                "tool_calls": {
                    "id": "get_weather_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": ""},
                }
            }
        },
    },
    {
        "type": "tool-call-delta",
        "index": 0,
        "delta": {"message": {"tool_calls": {"function": {"arguments": '{"city": "Paris"}'}}}},
    },
    {"type": "tool-call-end", "index": 0},
    {
        "type": "message-end",
        "delta": {"finish_reason": "TOOL_CALL", "usage": {"tokens": {"input_tokens": 9, "output_tokens": 5}}},
    },
)
COHERE_TEXT_STREAM = sse(
    {"id": "c2", "type": "message-start", "delta": {"message": {"role": "assistant"}}},
    {"type": "content-start", "index": 0, "delta": {"message": {"content": {"type": "text", "text": ""}}}},
    {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": "Sunny."}}}},
    {"type": "content-end", "index": 0},
    {"type": "message-end", "delta": {"finish_reason": "COMPLETE"}},
)
COHERE_RESPONSE = {
    "id": "c3",
    "finish_reason": "TOOL_CALL",
    "message": {
        "role": "assistant",
        "tool_plan": "I will look up the weather.",
        "tool_calls": [
            {
                "id": "get_weather_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    },
    "usage": {"tokens": {"input_tokens": 9, "output_tokens": 5}},
}
COHERE_V1_STREAM = jsonl(
    {"is_finished": False, "event_type": "stream-start", "generation_id": "g1"},
    {"is_finished": False, "event_type": "text-generation", "text": "Sunny."},
    {"is_finished": True, "event_type": "stream-end", "finish_reason": "COMPLETE"},
)
MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-x",
    "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}],
    "stop_reason": "tool_use",
    "usage": {"input_tokens": 9, "output_tokens": 5},
}
BATCH = {
    "id": "msgbatch_01",
    "type": "message_batch",
    "processing_status": "ended",
    "request_counts": {"processing": 0, "succeeded": 2, "errored": 0, "canceled": 0, "expired": 0},
    "results_url": "https://api.anthropic.com/v1/messages/batches/msgbatch_01/results",
}
BATCH_RESULTS = jsonl(
    {"custom_id": "req-1", "result": {"type": "succeeded", "message": MESSAGE}},
    {"custom_id": "req-2", "result": {"type": "errored", "error": {"type": "invalid_request_error"}}},
)
OPENAI_CHAT = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}],
}
OPENAI_BATCH_OUTPUT = jsonl(
    {"id": "batch_req_1", "custom_id": "req-1", "response": {"status_code": 200, "body": OPENAI_CHAT}},
)

RESPONSE = {"id": "resp_1", "object": "response", "status": "completed", "output": []}

UNKNOWN = {
    "cohere-v1-stream": (COHERE_V1_STREAM, "Cohere v1 chat stream"),
    "anthropic-batch": (json.dumps(BATCH), "Anthropic Message Batches object"),
    "anthropic-batch-results": (BATCH_RESULTS, "Anthropic Message Batches results"),
    "anthropic-batch-result-line": (json.dumps(json.loads(BATCH_RESULTS.splitlines()[0])), "Batches results"),
    "openai-batch-output": (OPENAI_BATCH_OUTPUT, "OpenAI Batch output"),
    "text-completion": (
        json.dumps({"object": "text_completion", "choices": [{"text": "hi"}]}),
        "text_completion",
    ),
    "message-lookalike": (json.dumps({"type": "message_something", "content": "x"}), "message_something"),
    "done-not-boolean": (json.dumps({"done": "yes", "message": {"content": "x"}}), "keys"),
    "candidates-not-a-list": (json.dumps({"candidates": "x"}), "keys"),
}


def audit_body(tmp_path: Path, body: str, url: str | None = None, forced: str | None = None) -> AuditEntry:
    """Audit one body: a raw body file, or a one-interaction cassette when a URL is given."""
    if url is None:
        path = tmp_path / "body.txt"
        path.write_text(body, encoding="utf-8")
    else:
        path = tmp_path / "cassette.yaml"
        interaction = {
            "request": {"method": "POST", "uri": url, "body": "{}", "headers": {}},
            "response": {"status": {"code": 200}, "headers": {}, "body": {"string": body}},
        }
        path.write_text(yaml.safe_dump({"interactions": [interaction], "version": 1}), encoding="utf-8")
    [entry] = audit_paths([path], wire_format=forced)
    return entry


def ids(entry: AuditEntry) -> set[str]:
    return {f["check_id"] for f in entry.findings}


@pytest.mark.parametrize(("body", "named"), UNKNOWN.values(), ids=list(UNKNOWN))
def test_a_format_the_harness_does_not_read_is_unknown_and_named(
    tmp_path: Path, body: str, named: str
) -> None:
    entry = audit_body(tmp_path, body)
    assert entry.wire_format is None and entry.detected_by is None
    [unknown] = [f for f in entry.findings if f["check_id"] == "audit.format_unknown"]
    assert named in unknown["detail"], unknown["detail"]
    assert not any(f["check_id"].startswith("wire.") for f in entry.findings), "parsed as a lookalike"
    assert entry.tool_calls == [] and entry.text is None


@pytest.mark.parametrize("url", [None, "https://api.cohere.com/v2/chat"], ids=["body", "url"])
def test_the_cohere_v2_stream_is_read_as_cohere_never_as_anthropic(tmp_path: Path, url: str | None) -> None:
    assert identify(url, COHERE_STREAM)[:2] == ("cohere-chat", "url" if url else "body")
    entry = audit_body(tmp_path, COHERE_STREAM, url=url)
    assert (entry.wire_format, entry.stream, entry.finish_reason) == ("cohere-chat", True, "TOOL_CALL")
    assert [(c["id"], c["name"], c["arguments"]) for c in entry.tool_calls] == [
        ("get_weather_1", "get_weather", {"city": "Paris"})
    ]
    assert entry.text is None  # the tool_plan is the model's plan, not its answer
    assert "audit.format_unknown" not in ids(entry)


def test_the_batches_urls_tell_no_format(tmp_path: Path) -> None:
    """``/v1/messages/batches`` is not the Messages endpoint, whatever its prefix."""
    for url, body in (
        ("https://api.anthropic.com/v1/messages/batches", json.dumps(BATCH)),
        ("https://api.anthropic.com/v1/messages/batches/msgbatch_01", json.dumps(BATCH)),
        ("https://api.anthropic.com/v1/messages/batches/msgbatch_01/results", BATCH_RESULTS),
    ):
        entry = audit_body(tmp_path, body, url=url)
        assert entry.wire_format is None and "audit.format_unknown" in ids(entry), url


def test_forcing_a_format_still_parses_with_it(tmp_path: Path) -> None:
    """The user's word wins over detection (and then the lookalike's findings are theirs to read)."""
    entry = audit_body(tmp_path, COHERE_STREAM, forced="anthropic-messages")
    assert (entry.wire_format, entry.detected_by) == ("anthropic-messages", "forced")
    assert "audit.format_unknown" not in ids(entry)


KNOWN = {
    "anthropic-message": (json.dumps(MESSAGE), "anthropic-messages"),
    "anthropic-stream": (
        sse(
            {"type": "message_start", "message": {**MESSAGE, "content": []}},
            {"type": "ping"},
            {"type": "message_stop"},
        ),
        "anthropic-messages",
    ),
    "anthropic-stream-unnamed": (
        sse({"type": "content_block_delta", "index": 0}, named=False),
        "anthropic-messages",
    ),
    "anthropic-error": (
        json.dumps({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        "anthropic-messages",
    ),
    "gemini": (json.dumps({"candidates": [{"content": {"parts": [{"text": "hi"}]}}]}), "gemini-generate"),
    "gemini-blocked": (json.dumps({"promptFeedback": {"blockReason": "SAFETY"}}), "gemini-generate"),
    "gemini-array": (json.dumps([{"candidates": []}, {"candidates": []}]), "gemini-generate"),
    "ollama": (
        json.dumps({"model": "m", "message": {"role": "assistant", "content": "hi"}, "done": True}),
        "ollama-chat",
    ),
    "openai": (json.dumps(OPENAI_CHAT), "openai-chat"),
    "openai-no-object": (json.dumps({"choices": []}), "openai-chat"),
    "openai-chunks": (
        sse(
            {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "h"}}]},
            named=False,
        )
        + "data: [DONE]\n\n",
        "openai-chat",
    ),
    "mistral": (json.dumps({**OPENAI_CHAT, "id": "0123456789abcdef0123456789abcdef"}), "mistral-chat"),
    "cohere-v2-tool-stream": (COHERE_STREAM, "cohere-chat"),
    "cohere-v2-text-stream": (COHERE_TEXT_STREAM, "cohere-chat"),
    "cohere-v2-stream-unnamed": (COHERE_STREAM.replace("event: ", ": "), "cohere-chat"),
    "cohere-v2-response": (json.dumps(COHERE_RESPONSE), "cohere-chat"),
    "openai-responses": (json.dumps(RESPONSE), "openai-responses"),
    "openai-responses-stream": (sse({"type": "response.created", "response": RESPONSE}), "openai-responses"),
    "openai-responses-error-event": (
        sse({"type": "error", "code": "server_error", "message": "x", "param": None, "sequence_number": 0}),
        "openai-responses",
    ),
    "openai-responses-error-event-nested": (
        sse({"type": "error", "error": {"type": "server_error", "message": "x"}, "sequence_number": 2}),
        "openai-responses",
    ),
    "openai-error-envelope": (
        json.dumps(
            {"error": {"message": "quota", "type": "insufficient_quota", "param": None, "code": None}}
        ),
        "openai-responses",
    ),
    # Gemini Interactions, shaped by the reference (no recorded traffic exists yet)
    "interactions": (
        json.dumps({"id": "v1_a", "object": "interaction", "status": "completed", "steps": []}),
        "gemini-interactions",
    ),
    "interactions-no-object": (
        json.dumps({"status": "requires_action", "steps": [{"type": "function_call"}]}),
        "gemini-interactions",
    ),
    "interactions-stream": (
        "".join(
            f"event: {e['event_type']}\ndata: {json.dumps(e)}\n\n"
            for e in (
                {"event_type": "interaction.created", "interaction": {"id": "v1_a", "status": "in_progress"}},
                {"event_type": "step.start", "index": 0, "step": {"type": "model_output"}},
                {"event_type": "step.delta", "index": 0, "delta": {"type": "text", "text": "hi"}},
                {"event_type": "step.stop", "index": 0},
                {"event_type": "interaction.completed", "interaction": {"id": "v1_a", "status": "completed"}},
            )
        ),
        "gemini-interactions",
    ),
    "interactions-error-event": (
        sse({"event_type": "error", "error": {"code": "not_found", "message": "gone"}}, named=False),
        "gemini-interactions",
    ),
}


@pytest.mark.parametrize(("body", "fmt"), KNOWN.values(), ids=list(KNOWN))
def test_each_known_format_by_positive_evidence(tmp_path: Path, body: str, fmt: str) -> None:
    assert detect_format(None, body) == (fmt, "body")
    entry = audit_body(tmp_path, body)
    assert entry.wire_format == fmt and "audit.format_unknown" not in ids(entry)
    assert not any(f["check_id"] == "wire.malformed_body" for f in entry.findings)


def test_the_first_telling_payload_decides() -> None:
    """A stream whose first payloads tell nothing (a keep-alive object) is told by a later one;
    a foreign payload decides as soon as it is seen."""
    chunk = {"object": "chat.completion.chunk", "choices": []}
    assert detect_format(None, sse({"status": "keep-alive"}, chunk, named=False)) == ("openai-chat", "body")
    assert detect_format(None, sse({"event_type": "stream-start"}, chunk, named=False)) == (None, None)


@pytest.mark.parametrize(
    ("url", "fmt"),
    [("https://api.cohere.com/v1/chat", None), ("https://api.cohere.com/v2/chat", "cohere-chat")],
)
def test_an_error_body_reports_its_error_known_format_or_not(
    tmp_path: Path, url: str, fmt: str | None
) -> None:
    path = tmp_path / "c.yaml"
    interaction = {
        "request": {"method": "POST", "uri": url, "body": "{}"},
        "response": {
            "status": {"code": 429},
            "body": {"string": json.dumps({"id": "e1", "message": "too many requests"})},
        },
    }
    path.write_text(yaml.safe_dump({"interactions": [interaction]}), encoding="utf-8")
    [entry] = audit_paths([path])
    assert entry.wire_format == fmt and ("audit.format_unknown" in ids(entry)) is (fmt is None)
    assert entry.error is not None and entry.error["message"] == "too many requests"


@pytest.mark.parametrize(
    "body",
    [
        "[" * 5000 + "]" * 5000,
        '{"a":' * 3000 + "1" + "}" * 3000,
        "data: " + "[" * 3000 + "\n\n",
        "\udcff\udc80",
    ],
    ids=["deep-array", "deep-object", "deep-sse", "surrogates"],
)
def test_bodies_that_break_decoders_audit_as_entries(tmp_path: Path, body: str) -> None:
    path = tmp_path / "body.txt"
    path.write_bytes(body.encode("utf-8", errors="surrogateescape"))
    [entry] = audit_paths([path])
    assert entry.wire_format is None and "audit.format_unknown" in ids(entry)
    json.dumps(entry.findings, ensure_ascii=False).encode("utf-8")
