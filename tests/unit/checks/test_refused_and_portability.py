"""expect.refused on constructed responses (a clear 4xx, a 5xx, a silent 200), what each does to
the headline, and protocol.history_portability on requests that break a moved history's rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.checks import RunContext, run_checks
from harness.checks.outcomes import outcome_of, untestable
from harness.checks.scoring import ENDPOINT_CHECKS, run_success
from harness.model import Exchange, SentRequest, ToolChoice, Transcript, WireResponse
from harness.providers import RequestOptions, adapter_class
from harness.providers.profiles import Profile
from harness.scenarios import Scenario, load_file
from harness.tools.seeded import as_offered

NEGATIVE = """\
id: neg.one
category: negative
tools: [get_weather]
messages:
  - {role: user, content: "Weather?"}
  - {role: tool, call_id: c9, content: "x"}
expect:
  refused: {status: 4xx}
"""
OPENAI_400 = json.dumps(
    {
        "error": {
            "message": "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
            "message with 'tool_calls'.",
            "type": "invalid_request_error",
            "code": None,
        }
    }
)
ANSWER = json.dumps(
    {
        "id": "x",
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "It is 18C."}, "finish_reason": "stop"}
        ],
    }
)


def load(tmp_path: Path, text: str) -> Scenario:
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    (scenario,) = load_file(path)
    return scenario


def run(scenario: Scenario, status: int, body: str, fmt: str = "openai-chat") -> dict[str, Any]:
    adapter = adapter_class(fmt)()
    wire = adapter.build_request(
        list(scenario.messages), [t.spec for t in scenario.tools], ToolChoice(), RequestOptions("m")
    )
    response = WireResponse(status, body, {"content-type": "application/json"})
    exchange = Exchange(
        0, SentRequest("POST", wire.path, {}, wire.body), response, adapter.parse(response, stream=False)
    )
    transcript = Transcript("t", scenario.id, tools=[t.spec for t in scenario.tools], exchanges=[exchange])
    transcript.stop_reason = "provider_error" if exchange.parsed.error else "final"
    checks = run_checks(RunContext(transcript, scenario, profile=Profile(fmt, fmt)))
    error = untestable(transcript, simulated=False)
    by_id = {c.id: c for c in checks}
    return {"checks": by_id, "success": run_success(checks), "outcome": outcome_of(error, checks)}


def test_a_clear_4xx_is_conformance_and_a_success(tmp_path: Path) -> None:
    got = run(load(tmp_path, NEGATIVE), 400, OPENAI_400)
    refused = got["checks"]["expect.refused"]
    assert refused.status == "pass" and refused.findings[0].detail.startswith("refused clearly (HTTP 400)")
    assert got["checks"]["protocol.provider_error"].status == "pass"
    assert got["checks"]["protocol.tools_delivered"].status == "n/a"
    assert got["success"] and got["outcome"] == "pass"


def test_a_5xx_is_the_endpoint_failing(tmp_path: Path) -> None:
    got = run(load(tmp_path, NEGATIVE), 500, json.dumps({"error": {"message": "internal error"}}))
    refused = got["checks"]["expect.refused"]
    assert refused.status == "fail" and refused.findings[0].detail.startswith("failed (HTTP 500)")
    assert refused.findings[0].evidence == {"verdict": "failed", "status": 500}
    assert got["checks"]["protocol.provider_error"].status == "fail"  # charged to the endpoint
    assert not got["success"] and got["outcome"] == "fail"


def test_a_silent_200_is_a_warning_the_verdict_names(tmp_path: Path) -> None:
    """Providers disagree on what they refuse (OpenAI takes a duplicate call id Anthropic refuses):
    silent acceptance is a warning with its verdict, not a fault of the endpoint."""
    got = run(load(tmp_path, NEGATIVE), 200, ANSWER)
    refused = got["checks"]["expect.refused"]
    assert refused.status == "warn" and refused.findings[0].detail.startswith("accepted silently (HTTP 200)")
    assert refused.findings[0].evidence == {"verdict": "accepted", "status": 200}
    assert "expect.refused" in ENDPOINT_CHECKS  # a 5xx is the endpoint's fault


def test_an_unavailable_endpoint_is_never_scored(tmp_path: Path) -> None:
    got = run(load(tmp_path, NEGATIVE), 503, json.dumps({"error": {"message": "overloaded"}}))
    assert got["outcome"] == "error"


@pytest.mark.parametrize(
    ("wanted", "status", "passes"),
    [
        ("{status: 400}", 400, True),
        ("{status: 422}", 400, False),
        ("{status: 4xx, message: 'preceeding message'}", 400, True),
        ("{status: 4xx, message: 'no such call'}", 400, False),
    ],
)
def test_a_status_and_a_message_pattern_narrow_the_refusal(
    tmp_path: Path, wanted: str, status: int, passes: bool
) -> None:
    scenario = load(tmp_path, NEGATIVE.replace("{status: 4xx}", wanted))
    assert (run(scenario, status, OPENAI_400)["checks"]["expect.refused"].status == "pass") is passes


def test_a_4xx_elsewhere_is_still_a_provider_error(tmp_path: Path) -> None:
    plain = load(
        tmp_path,
        NEGATIVE.replace('  - {role: tool, call_id: c9, content: "x"}\n', "").replace(
            "  refused: {status: 4xx}\n", "  no_call: true\n"
        ),
    )
    got = run(plain, 400, OPENAI_400)
    assert got["checks"]["protocol.provider_error"].status == "fail" and not got["success"]


KIMI = """\
id: moved.kimi
category: history
history_from: kimi
tools:
  - name: files.list
    description: List files.
    parameters: {type: object, properties: {}}
    result: "a.txt"
messages:
  - {role: user, content: "Files?"}
  - role: assistant
    content: null
    reasoning: {text: "List the folder first."}
    calls: [{id: "functions.files.list:0", name: files.list, args: {}}]
  - {role: tool, call_id: "functions.files.list:0", content: "a.txt"}
expect: {no_call: true}
"""


def portability(scenario: Scenario, fmt: str, body: dict[str, Any]) -> list[str]:
    exchange = Exchange(
        0,
        SentRequest("POST", "/x", {}, body),
        WireResponse(200, ANSWER),
        adapter_class(fmt)().parse(WireResponse(200, ANSWER), stream=False),
    )
    transcript = Transcript("t", scenario.id, exchanges=[exchange])
    results = {c.id: c for c in run_checks(RunContext(transcript, scenario, profile=Profile(fmt, fmt)))}
    check = results["protocol.history_portability"]
    return [f.detail for f in check.findings if not f.passed]


def test_the_harness_loop_keeps_every_rule_on_every_wire(tmp_path: Path) -> None:
    scenario = load(tmp_path, KIMI)
    for fmt in ("openai-chat", "anthropic-messages", "mistral-chat", "bedrock-converse", "gemini-generate"):
        adapter = adapter_class(fmt)()
        renamed = adapter.name_rules.sanitize("files.list")
        messages = list(as_offered(scenario.messages, {renamed: "files.list"}))
        spec = [t.spec for t in scenario.tools]
        wire = adapter.build_request(messages, spec, ToolChoice(), RequestOptions("m"))
        assert portability(scenario, fmt, wire.body) == [], fmt


def test_a_foreign_id_to_anthropic_is_named_with_its_source(tmp_path: Path) -> None:
    scenario = load(tmp_path, KIMI)
    body = {
        "model": "m",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "Files?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "functions.files.list:0", "name": "files_list", "input": {}}
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "functions.files.list:0", "content": "a"}],
            },
        ],
    }
    (found,) = portability(scenario, "anthropic-messages", body)
    assert "'functions.files.list:0'" in found and "^[a-zA-Z0-9_-]+$" in found and found.endswith("[A15]")


def test_a_dotted_name_to_bedrock_and_kept_reasoning_are_named(tmp_path: Path) -> None:
    scenario = load(tmp_path, KIMI)
    body = {
        "messages": [
            {"role": "user", "content": [{"text": "Files?"}]},
            {
                "role": "assistant",
                "content": [
                    {"reasoningContent": {"reasoningText": {"text": "List the folder first."}}},
                    {"toolUse": {"toolUseId": "t1", "name": "files.list", "input": {}}},
                ],
            },
            {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "a"}]}}]},
        ]
    }
    found = portability(scenario, "bedrock-converse", body)
    assert any("tool name 'files.list'" in f and f.endswith("[B6]") for f in found), found
    assert any("kept where it must be dropped" in f and f.endswith("[X1]") for f in found), found


def test_reasoning_dropped_on_its_own_wire_is_named(tmp_path: Path) -> None:
    scenario = load(tmp_path, KIMI)
    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "Files?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "functions.files.list:0",
                        "type": "function",
                        "function": {"name": "files_list", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "functions.files.list:0", "content": "a.txt"},
        ],
    }
    (found,) = portability(scenario, "openai-chat", body)
    assert "dropped where it must be kept" in found and found.endswith("[X1]")
