"""``harness audit`` on the real recordings: cassettes and raw bodies read in place, by the adapters."""

from __future__ import annotations

import base64
import gzip
import json
import re
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from harness.analysis.audit import AuditEntry, audit_paths, detect_format, render_table, to_json
from harness.errors import ConfigError, UnknownNameError
from harness.providers import formats
from harness.transport.cassette import CassetteTransport
from tests.helpers.realworld import REALWORLD, all_cases, cases, wire_body

ALL = cases()
RAW = REALWORLD / "raw"
# Every vcrpy / pytest-recording / ruby VCR YAML recording (one is a slice kept in a folder of its own name).
# raw/<wire format>/ holds the recordings of a format the harness may not read yet: left out until its
# adapter is registered (the other raw folders are named by provider)
UNREAD = {d for d in RAW.iterdir() if d.name in {c["wire_format"] for c in all_cases()} - set(formats())}
RAW_FILES = sorted(p for p in RAW.rglob("*") if p.is_file() and not UNREAD & set(p.parents))
RAW_CASSETTES = [p for p in RAW_FILES if p.suffix in (".yaml", ".yml")]


def cassette(path: Path, interactions: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump({"interactions": interactions, "version": 1}, allow_unicode=True))
    return path


def interaction(
    url: str | None,
    request: Any,
    status: int,
    body: Any,
    content_type: str | None = None,
    method: str | None = "POST",
) -> dict[str, Any]:
    return {
        "request": {
            "method": method,
            "uri": url,
            "headers": {},
            "body": None if request is None else json.dumps(request),
        },
        "response": {
            "status": {"code": status, "message": ""},
            "headers": {"Content-Type": [content_type]} if content_type else {},
            "body": body,
        },
    }


def case_cassette(tmp_path: Path, case: dict[str, Any]) -> Path:
    """The case as a vcrpy cassette (a binary body as bytes: ``!!binary``)."""
    request, response = case["request"], case["response"]
    return cassette(
        tmp_path / "case.yaml",
        [
            interaction(
                request["url"],
                request["body"],
                response["status"],
                {"string": wire_body(case)},
                response["content_type"],
                request["method"],
            )
        ],
    )


def observed(entry: AuditEntry) -> dict[str, Any]:
    """An entry in the shape of a case's ``expected`` block."""
    calls = [{"id": c["id"], "name": c["name"], "arguments": c["arguments"]} for c in entry.tool_calls]
    return {
        "tool_calls": calls,
        "text": entry.text,
        "finish_reason": entry.finish_reason,
        "error": entry.error,
    }


def ids(entry: AuditEntry) -> set[str]:
    return {f["check_id"] for f in entry.findings}


def case_by_id(case_id: str) -> dict[str, Any]:
    return next(c for c in ALL if c["id"] == case_id)


def test_the_real_recordings_are_there() -> None:
    assert len(ALL) >= 51 and len(RAW_CASSETTES) >= 18, (
        f"tests/data/realworld is missing or incomplete: {RAW}"
    )


# -- 1. every real case, as a vcrpy cassette --------------------------------------------------------


@pytest.mark.parametrize("case", ALL, ids=[c["id"] for c in ALL])
def test_every_case_as_a_cassette_audits_to_its_expected_block(tmp_path: Path, case: dict[str, Any]) -> None:
    [entry] = audit_paths([case_cassette(tmp_path, case)])
    assert entry.wire_format == case["wire_format"]
    assert entry.detected_by == ("url" if case["request"]["url"] else "body")
    assert entry.stream == case["response"]["stream"]
    assert entry.status == case["response"]["status"]
    assert observed(entry) == case["expected"]
    assert not any(f["check_id"].startswith("audit.") for f in entry.findings)


@pytest.mark.parametrize("case", [c for c in ALL if c["response"]["status"] < 400], ids=lambda c: c["id"])
def test_every_successful_body_alone_tells_its_format(tmp_path: Path, case: dict[str, Any]) -> None:
    """Without URL or headers (a raw body file), the body's shape still tells the format and the framing."""
    path = tmp_path / "body.txt"
    body = wire_body(case)
    path.write_bytes(body if isinstance(body, bytes) else body.encode())
    [entry] = audit_paths([path])
    assert (entry.wire_format, entry.detected_by) == (case["wire_format"], "body")
    assert entry.stream == case["response"]["stream"]
    assert entry.status is None and entry.method is None and entry.url is None
    assert observed(entry) == case["expected"]


# -- 2. the upstream recordings, read in place -------------------------------------------------------


# Calls to other APIs that a recording of a format holds beside it (README: only the interactions of the
# recording's own format become cases): OpenAI's Conversations API around a Responses conversation.
OTHER_APIS = re.compile(r"/v1/conversations(/|$)")
# A background Responses request is polled with GET /v1/responses/<id>.
POLLED = re.compile(r"/v1/responses/[^/?]+")


def other_api(entry: AuditEntry) -> bool:
    return entry.url is not None and OTHER_APIS.search(entry.url) is not None


@pytest.mark.parametrize("path", RAW_CASSETTES, ids=lambda p: p.name[:70])
def test_every_raw_cassette_interaction_gets_a_format(path: Path) -> None:
    entries = audit_paths([path])
    assert entries and [e.interaction for e in entries] == list(range(len(entries)))
    for entry in (e for e in entries if not other_api(e)):
        polled = entry.method == "GET" and POLLED.search(entry.url or "") is not None
        if entry.method == "GET" and not polled:  # a file the test downloaded to send to the model
            assert entry.wire_format is None and "audit.format_unknown" in ids(entry)
            continue
        assert entry.wire_format is not None and entry.detected_by == "url", entry.findings
        assert (entry.method == "POST" or polled) and entry.url and entry.status is not None
        assert not ids(entry) & {
            "audit.format_unknown",
            "wire.malformed_body",
            "audit.unreadable",
            "wire.body_not_json",
            "wire.stream_payload_not_json",
            "wire.empty_body",
        }
    json.dumps(to_json(entries))


def raw_file_of(case: dict[str, Any]) -> Path | None:
    """The upstream recording a case came from (raw files are named ``<project>__<file name>``)."""
    name = Path(case["source"]["path"]).name
    found = [
        p
        for p in RAW.iterdir()
        if p.is_dir() and p not in UNREAD
        for p in p.iterdir()
        if p.name.endswith("__" + name)
    ]
    return found[0] if found and (found[0].is_dir() or found[0].suffix in (".yaml", ".yml")) else None


CASSETTE_CASES = [c for c in ALL if raw_file_of(c) is not None]


@pytest.mark.parametrize("case", CASSETTE_CASES, ids=[c["id"] for c in CASSETTE_CASES])
def test_raw_cassette_interaction_matches_its_case(case: dict[str, Any]) -> None:
    """The upstream cassette itself (``parsed_body``, ruby ``!binary``, a slice) gives the case's result."""
    path = raw_file_of(case)
    assert path is not None
    entry = audit_paths([path])[case["source"]["interaction"]]
    assert entry.wire_format == case["wire_format"]
    assert entry.stream == case["response"]["stream"]
    assert observed(entry) == case["expected"]


def test_cassette_cases_cover_every_yaml_recording() -> None:
    assert len(CASSETTE_CASES) >= 35
    assert {raw_file_of(c) for c in CASSETTE_CASES} >= {p for p in RAW_CASSETTES if p.parent.parent == RAW}


def test_known_facts_of_the_raw_recordings() -> None:
    [first, second] = audit_paths([RAW / "anthropic" / "pydantic-ai__test_multiple_parallel_tool_calls.yaml"])
    assert [c["name"] for c in first.tool_calls] == ["retrieve_entity_info"] * 4
    assert [c["arguments"]["name"] for c in first.tool_calls] == ["Alice", "Bob", "Charlie", "Daisy"]
    assert first.finish_reason == "tool_use" and not first.stream
    assert first.url is not None and first.url.endswith("/v1/messages?beta=true")
    assert second.tool_calls == [] and second.finish_reason == "end_turn"

    ruby = audit_paths([next(RAW.glob("anthropic/ruby_llm__*.yml"))])  # ruby VCR, bodies in !binary
    assert [len(e.tool_calls) for e in ruby] == [1, 0, 1, 0] and all(e.stream for e in ruby)
    assert ruby[1].text and "Berlin" in ruby[1].text

    [auth] = audit_paths([next(RAW.glob("mistral/ruby_llm__chat_error_handling*.yml"))])
    assert (auth.wire_format, auth.status, auth.error) == (
        "mistral-chat",
        401,
        {"status": 401, "code": None, "message": "Invalid API Key"},
    )

    groq = audit_paths([RAW / "groq" / "pydantic-ai__test_tool_use_failed_error.yaml"])
    assert groq[0].error is not None
    assert (groq[0].error["status"], groq[0].error["code"]) == (400, "tool_use_failed")

    compat = audit_paths([next(RAW.glob("gemini/pydantic-ai__test_compatible_api_*.yaml"))])
    assert compat[0].wire_format == "openai-chat"  # Gemini's OpenAI-compatible endpoint
    assert compat[0].tool_calls[0]["id"] == "" and "wire.empty_id" in ids(compat[0])

    folder = audit_paths([RAW / "ollama-openai"])  # a folder: every file under it, sorted
    assert [(Path(e.source).name, e.interaction) for e in folder] == [
        ("pydantic-ai__test_ollama_cloud_tool_output.yaml", 0),
        ("pydantic-ai__test_ollama_cloud_tool_output.yaml", 1),
        ("interaction_0.yml", 0),
    ]  # a bare list of interactions sliced out of a ruby VCR cassette
    assert folder[2].stream and folder[2].tool_calls[0]["name"] == "weather"


def test_every_raw_file_audits_without_exception() -> None:
    """Developer notes and httprr traces are not bodies: they become entries that say so."""
    entries = audit_paths(RAW_FILES)
    assert len({e.source for e in entries}) == len(RAW_FILES)
    unknown = {
        Path(e.source).name
        for e in entries
        if e.wire_format is None and not other_api(e) and e.method != "GET"
    }
    assert all(name.endswith((".httprr", ".md", ".txt")) for name in unknown), unknown
    assert all("audit.format_unknown" in ids(e) for e in entries if e.wire_format is None)


# -- 3. raw bodies: SSE, NDJSON, JSON array ------------------------------------------------------------


def test_a_stream_request_answered_with_an_error_status_is_one_json_body(tmp_path: Path) -> None:
    """The request asked for a stream; the 400 that answers it is a JSON error body, not a stream."""
    error = {"error": {"message": "bad temperature", "type": "invalid_request_error", "code": "bad"}}
    request = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    url = "https://api.openai.com/v1/chat/completions"
    path = cassette(tmp_path / "c.yaml", [interaction(url, request, 400, {"string": json.dumps(error)})])
    [entry] = audit_paths([path])
    assert (entry.wire_format, entry.stream, entry.status) == ("openai-chat", False, 400)
    assert entry.error == {"status": 400, "code": "bad", "message": "bad temperature"}
    streamed = cassette(tmp_path / "s.yaml", [interaction(url, request, 200, {"string": json.dumps(error)})])
    assert [e.stream for e in audit_paths([streamed])] == [True]  # a 2xx keeps the request's word


def test_raw_sse_body_forced_and_unforced(tmp_path: Path) -> None:
    case = case_by_id("openai/pydantic-ai__test_complex_agent_run__0")
    path = tmp_path / "stream.sse"
    path.write_text(case["response"]["body"])
    [unforced] = audit_paths([path])
    [forced] = audit_paths([path], wire_format="openai-chat")
    assert (unforced.detected_by, forced.detected_by) == ("body", "forced")
    for entry in (unforced, forced):
        assert entry.wire_format == "openai-chat" and entry.stream
        assert observed(entry) == case["expected"]
    [as_mistral] = audit_paths([path], wire_format="mistral-chat")  # forcing overrides detection
    assert as_mistral.wire_format == "mistral-chat"
    assert [c["name"] for c in as_mistral.tool_calls] == ["get_country", "get_product_name"]
    assert "wire.id_format" in ids(as_mistral)  # OpenAI's call_... ids break Mistral's rule


def test_raw_ndjson_body_forced_and_unforced() -> None:
    path = RAW / "ollama-native" / "prism__stream-with-tools-1.json"  # read in place
    case = case_by_id("ollama/prism__stream-with-tools-1-json__0")
    for forced in (None, "ollama-chat"):
        [entry] = audit_paths([path], wire_format=forced)
        assert entry.wire_format == "ollama-chat" and entry.stream
        assert entry.detected_by == ("forced" if forced else "body")
        assert observed(entry) == case["expected"]
        assert entry.tool_calls[0]["raw_arguments"] == {"expression": "20+22"}


def test_gemini_json_array_body(tmp_path: Path) -> None:
    case = case_by_id("gemini/langchaingo__TestGoogleAIToolCallResponse__1")
    path = tmp_path / "gemini.json"
    path.write_text(case["response"]["body"])
    [entry] = audit_paths([path])
    assert (entry.wire_format, entry.stream) == ("gemini-generate", True)
    assert "wire.stream_json_array" in ids(entry) and observed(entry) == case["expected"]


def test_detect_format_url_rules() -> None:
    assert detect_format("https://api.anthropic.com/v1/messages?beta=1", "") == ("anthropic-messages", "url")
    assert detect_format("https://x/v1beta/models/g:streamGenerateContent", "")[0] == "gemini-generate"
    interactions = "https://generativelanguage.googleapis.com/v1beta/interactions"
    assert detect_format(interactions, "") == ("gemini-interactions", "url")
    assert detect_format(interactions + "/", "")[0] == "gemini-interactions"
    vertex = "https://aiplatform.googleapis.com/v1beta1/projects/p/locations/global/interactions"
    assert detect_format(vertex, "")[0] == "gemini-interactions"
    assert detect_format("https://example.com/interactions", "")[0] is None  # no API version: anyone's
    assert detect_format("http://localhost:11434/api/chat", "")[0] == "ollama-chat"
    assert detect_format("https://api.mistral.ai/v1/chat/completions", "")[0] == "mistral-chat"
    assert detect_format("https://openrouter.ai/api/v1/chat/completions", "")[0] == "openai-chat"
    assert detect_format("https://example.com/other", '{"choices": []}') == ("openai-chat", "body")
    assert detect_format(None, "hello") == (None, None)


# -- cassette layouts ------------------------------------------------------------------------------------


OPENAI_BODY = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
        }
    ],
}
URL = "https://api.openai.com/v1/chat/completions"
LEAKED = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
WEATHER_TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}


@pytest.mark.parametrize(
    "body",
    [
        {"string": json.dumps(OPENAI_BODY)},
        {"string": json.dumps(OPENAI_BODY).encode()},  # vcrpy: bytes, written as !!binary
        {"string": gzip.compress(json.dumps(OPENAI_BODY).encode())},  # recorded without decompression
        {"encoding": "UTF-8", "base64_string": base64.b64encode(json.dumps(OPENAI_BODY).encode()).decode()},
        json.dumps(OPENAI_BODY),
    ],
    ids=["string", "binary", "gzip", "base64_string", "plain"],
)
def test_vcrpy_body_layouts(tmp_path: Path, body: Any) -> None:
    path = cassette(tmp_path / "c.yaml", [interaction(URL, {"model": "m"}, 200, body, "application/json")])
    if isinstance(body.get("string") if isinstance(body, dict) else None, bytes):
        assert "!!binary" in path.read_text()
    [entry] = audit_paths([path])
    assert entry.tool_calls == [
        {
            "id": "call_1",
            "name": "get_weather",
            "arguments": {"city": "Paris"},
            "raw_arguments": '{"city": "Paris"}',
            "parse_error": None,
        }
    ]


def test_pytest_recording_parsed_body_and_ruby_vcr_layout(tmp_path: Path) -> None:
    pydantic = tmp_path / "p.yaml"
    pydantic.write_text(
        yaml.safe_dump(
            {
                "interactions": [
                    {
                        "request": {
                            "method": "POST",
                            "uri": URL,
                            "parsed_body": {"model": "m", "stream": False},
                        },
                        "response": {"status": {"code": 200}, "parsed_body": OPENAI_BODY},
                    }
                ]
            }
        )
    )
    ruby = tmp_path / "r.yml"
    ruby.write_text(
        "---\nhttp_interactions:\n- request:\n    method: post\n    uri: " + URL + "\n"
        "    body:\n      encoding: UTF-8\n      string: '{}'\n"
        "  response:\n    status:\n      code: 200\n"
        "    body:\n      encoding: ASCII-8BIT\n      string: !binary |-\n        "
        + base64.b64encode(json.dumps(OPENAI_BODY).encode()).decode()
        + "\n"
        "  recorded_at: Mon, 08 Jun 2026 18:54:37 GMT\nrecorded_with: VCR 6.4.0\n"
    )
    for entry in audit_paths([pydantic, ruby]):
        assert (entry.method, entry.wire_format, entry.status) == ("POST", "openai-chat", 200)
        assert [c["name"] for c in entry.tool_calls] == ["get_weather"]


def test_a_harness_recorded_cassette_audits(tmp_path: Path) -> None:
    """Our own cassettes, written by vcrpy through the recording transport (a mock server, no network)."""

    def server(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=OPENAI_BODY)

    path = tmp_path / "ours.yaml"
    transport = CassetteTransport(
        path, mode="record", target="t", scenario_id="s", inner=httpx.MockTransport(server)
    )
    with httpx.Client(transport=transport) as client:
        client.post(URL, json={"model": "m", "tools": [WEATHER_TOOL]})
    transport.save()
    [entry] = audit_paths([path])
    assert (entry.wire_format, entry.stream, entry.status) == ("openai-chat", False, 200)
    assert entry.tool_calls[0]["arguments"] == {"city": "Paris"} and entry.findings == []


# -- 4. leaks -----------------------------------------------------------------------------------------


def test_a_call_leaked_into_the_text_is_a_native_delivery_error(tmp_path: Path) -> None:
    body = {
        "id": "chatcmpl-2",
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": LEAKED}}
        ],
    }
    path = cassette(
        tmp_path / "leak.yaml",
        [
            interaction(
                URL,
                {"model": "m", "tools": [WEATHER_TOOL]},
                200,
                {"string": json.dumps(body)},
                "application/json",
            )
        ],
    )
    [entry] = audit_paths([path])
    assert entry.tool_calls == [] and entry.text == LEAKED
    [leak] = [f for f in entry.findings if f["check_id"] == "protocol.native_delivery"]
    assert leak["severity"] == "error" and "tool_call" in leak["detail"]


PYTHONIC = '[get_weather(city="Paris")]'  # found only when the request names the tool
PER_FORMAT = {
    "anthropic-messages": (
        "https://api.anthropic.com/v1/messages",
        [{"name": "get_weather", "input_schema": {}}],
        {
            "type": "message",
            "role": "assistant",
            "stop_reason": "end_turn",
            "content": [{"type": "text", "text": PYTHONIC}],
        },
    ),
    "gemini-generate": (
        "https://g/v1beta/models/m:generateContent",
        [{"functionDeclarations": [{"name": "get_weather"}]}],
        {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": PYTHONIC}]}, "finishReason": "STOP"}
            ]
        },
    ),
    "gemini-interactions": (
        "https://g/v1beta/interactions",
        [{"type": "function", "name": "get_weather", "parameters": {}}],
        {
            "id": "v1_a",
            "status": "completed",
            "steps": [{"type": "model_output", "content": [{"type": "text", "text": PYTHONIC}]}],
        },
    ),
    "ollama-chat": (
        "http://localhost:11434/api/chat",
        [WEATHER_TOOL],
        {"message": {"role": "assistant", "content": PYTHONIC}, "done": True},
    ),
    "openai-chat": (URL, [WEATHER_TOOL], {"choices": [{"index": 0, "message": {"content": PYTHONIC}}]}),
}


@pytest.mark.parametrize("fmt", sorted(PER_FORMAT))
def test_leak_detection_uses_the_tool_names_of_every_request_format(tmp_path: Path, fmt: str) -> None:
    url, tools, body = PER_FORMAT[fmt]
    with_tools, without = (
        cassette(
            tmp_path / f"{name}.yaml",
            [interaction(url, {"model": "m", "tools": offered}, 200, {"string": json.dumps(body)})],
        )
        for name, offered in (("with", tools), ("without", []))
    )
    [named], [unnamed] = audit_paths([with_tools]), audit_paths([without])
    assert named.wire_format == fmt and named.text == PYTHONIC and named.tool_calls == []
    assert "protocol.native_delivery" in ids(named) and "protocol.native_delivery" not in ids(unnamed)


@pytest.mark.parametrize("case", ALL, ids=[c["id"] for c in ALL])
def test_real_cases_report_a_leak_only_when_the_case_notes_one(tmp_path: Path, case: dict[str, Any]) -> None:
    [entry] = audit_paths([case_cassette(tmp_path, case)])
    leaked = any(q.startswith(("tool_markup_in_text", "tool_call_json_in_text")) for q in case["quirks"])
    assert ("protocol.native_delivery" in ids(entry)) == leaked


# -- bad input ------------------------------------------------------------------------------------------


def test_bad_input_becomes_entries_not_exceptions(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"\x00\xff not a recording")
    empty = tmp_path / "empty.yaml"
    empty.write_text("interactions: []\nversion: 1\n")
    bad64 = tmp_path / "bad64.yaml"
    bad64.write_text(
        yaml.safe_dump({"interactions": [{"request": {}, "response": {"body": {"base64_string": "!"}}}]})
    )
    half = cassette(tmp_path / "half.yaml", [{"request": {"method": "POST", "uri": URL}}])
    entries = {Path(e.source).name: e for e in audit_paths([garbage, empty, bad64, half])}
    assert "audit.format_unknown" in ids(entries["garbage.bin"])
    assert "audit.empty_cassette" in ids(entries["empty.yaml"])
    assert "audit.unreadable" in ids(entries["bad64.yaml"])
    assert entries["half.yaml"].error is not None and "wire.empty_body" in ids(entries["half.yaml"])


def test_an_error_body_of_unknown_format_still_reports_the_error(tmp_path: Path) -> None:
    body = {"error": {"message": "rate limited", "type": "rate_limit"}}
    path = cassette(
        tmp_path / "e.yaml", [interaction("https://example.com/x", None, 429, {"string": json.dumps(body)})]
    )
    [entry] = audit_paths([path])
    assert entry.wire_format is None and "audit.format_unknown" in ids(entry)
    assert entry.error == {"status": 429, "code": "rate_limit", "message": "rate limited"}


def test_an_adapter_crash_is_a_finding_and_the_other_interactions_still_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.providers.anthropic import AnthropicMessagesAdapter

    def crash(self: Any, body: dict[str, Any]) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(AnthropicMessagesAdapter, "parse_body", crash)
    anthropic = {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "hi"}]}
    path = cassette(
        tmp_path / "c.yaml",
        [
            interaction(
                "https://api.anthropic.com/v1/messages", None, 200, {"string": json.dumps(anthropic)}
            ),
            interaction(URL, None, 200, {"string": json.dumps(OPENAI_BODY)}),
        ],
    )
    crashed, fine = audit_paths([path])
    assert "wire.malformed_body" in ids(crashed) and "boom" in crashed.findings[0]["detail"]
    assert fine.tool_calls[0]["name"] == "get_weather"


def test_missing_path_and_unknown_format_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.yaml"):
        audit_paths([tmp_path / "nope.yaml"])
    with pytest.raises(UnknownNameError):
        audit_paths([RAW], wire_format="no-such-format")


# -- rendering ----------------------------------------------------------------------------------------


def test_render_table_and_json() -> None:
    from rich.console import Console

    entries = audit_paths([RAW / "mistral", RAW / "anthropic"])
    table = render_table(entries)
    assert table.row_count == sum(max(1, len(e.tool_calls)) for e in entries)
    console = Console(width=300, record=True)
    console.print(table)
    out = console.export_text()
    assert "[auto-mistral].yaml:1" in out  # no rich markup eaten from file names
    assert 'retrieve_entity_info({"name": "Alice"})' in out and "Invalid API Key" in out
    assert "1 warning, 1 info: wire.tool_call_delta_without_index" in out
    data = json.loads(json.dumps(to_json(entries)))
    assert set(data[0]) >= {
        "source",
        "interaction",
        "method",
        "url",
        "wire_format",
        "stream",
        "status",
        "tool_calls",
        "text",
        "finish_reason",
        "error",
        "findings",
    }


# -- 5. no network, no tool ---------------------------------------------------------------------------


def test_auditing_sends_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[str] = []

    def refuse(name: str) -> Any:
        def blocked(*args: Any, **kwargs: Any) -> Any:
            attempts.append(name)
            raise AssertionError(f"audit tried the network: {name}")

        return blocked

    monkeypatch.setattr(httpx.Client, "send", refuse("httpx.Client.send"))
    monkeypatch.setattr(httpx.AsyncClient, "send", refuse("httpx.AsyncClient.send"))
    monkeypatch.setattr(httpx.HTTPTransport, "handle_request", refuse("httpx.HTTPTransport"))
    monkeypatch.setattr(socket.socket, "connect", refuse("socket.connect"))
    monkeypatch.setattr(socket, "create_connection", refuse("socket.create_connection"))
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": LEAKED}}]}
    leak = cassette(
        tmp_path / "leak.yaml",
        [interaction(URL, {"tools": [WEATHER_TOOL]}, 200, {"string": json.dumps(body)})],
    )
    entries = audit_paths([RAW, leak])
    assert len(entries) >= 50 and any(e.tool_calls for e in entries)
    assert "protocol.native_delivery" in ids(entries[-1])
    assert attempts == []
