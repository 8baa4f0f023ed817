"""CONTRIBUTING.md's "Add a wire format" list holds: a throwaway format, registered at run time
through its one registry entry, is picked up by the rest of the harness with no other edit: the
simulator serves it, its tool name rules apply (to declared and MCP tools), audit recognises its
traffic, a run records what its requests offered for the capability grid, and the truncation
check reads its finish reasons."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from harness.analysis.audit import audit_paths, identify
from harness.analysis.capabilities import capabilities
from harness.checks.attribution import is_truncated
from harness.model import (
    Exchange,
    Message,
    ParsedTurn,
    SentRequest,
    ToolCall,
    ToolChoice,
    ToolSpec,
    Transcript,
    Usage,
    WireResponse,
)
from harness.providers import RequestOptions, formats
from harness.providers.rules import families, rules_for
from harness.records import Offered, RunRecord, TargetInfo
from harness.runner.one import offered
from harness.servers.sim.formats import FORMATS
from harness.targets import Target
from harness.tools.mcp.session import MCPSession
from harness.tools.mcp.types import MCPUse
from tests.helpers.fake_format import FAKE_SIM, FakeChatAdapter, registered
from tests.helpers.transcripts import BILLING


@pytest.fixture
def fake() -> Iterator[type[FakeChatAdapter]]:
    """The fake format, registered for one test."""
    with registered() as adapter:
        yield adapter


REPLY = {
    "id": "fake-1",
    "object": "fake.reply",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi."}, "finish_reason": "ran_out"}],
}


def test_the_registry_and_the_simulator_serve_it(fake: type[FakeChatAdapter]) -> None:
    assert "fake-chat" in formats()
    assert FORMATS["fake-chat"] is FAKE_SIM and list(FORMATS)[-1] == "fake-chat"
    target = Target.build("fake-sim", format="fake-chat", model="sim", base_url="sim")
    assert isinstance(target.adapter(), FakeChatAdapter) and target.sim_route == "fake-chat"


def test_its_tool_name_rules_apply(fake: type[FakeChatAdapter]) -> None:
    assert fake.family == "fake"
    assert rules_for("fake-chat") is rules_for("fake") is families()["fake"] is fake.name_rules
    [finding] = fake().tool_findings([ToolSpec("Get.Time", "", {"type": "object", "properties": {}})])
    assert "fake's tool name rule" in finding.detail


def test_mcp_tools_are_named_by_its_rules(fake: type[FakeChatAdapter], tmp_path: Path) -> None:
    recording = tmp_path / "s.mcp.yaml"
    tools = [{"name": "Search.Files", "description": "", "input_schema": {"type": "object"}}]
    recording.write_text(
        yaml.safe_dump({"scenario": "s", "servers": {"Code": tools}, "calls": [], "issues": []})
    )
    use = MCPUse("s", tools=(("Code", None),))
    session = MCPSession("t", use, "fake-chat", recording, live=False, record=False, reserved=[]).start()
    [tool] = session.tools()
    assert session.family == "fake" and tool.spec.name == "mcp___ode___earch__iles"  # a-z and _ only


def test_audit_recognises_its_traffic(fake: type[FakeChatAdapter], tmp_path: Path) -> None:
    assert identify("https://api.example/fake/v1/talk", "")[:2] == ("fake-chat", "url")
    body = tmp_path / "reply.json"
    body.write_text(json.dumps(REPLY))
    [entry] = audit_paths([body])
    assert (entry.wire_format, entry.detected_by, entry.text) == ("fake-chat", "body", "Hi.")
    assert identify(None, json.dumps({**REPLY, "object": "chat.completion"}))[0] == "openai-chat"


def test_a_run_records_what_its_request_offered_for_the_grid(fake: type[FakeChatAdapter]) -> None:
    adapter = fake()
    tools = [ToolSpec("get_time", "The time.", BILLING)]
    built = adapter.build_request(
        [Message("user", "Time?")], tools, ToolChoice("required"), RequestOptions("m")
    )
    assert built.path == "/fake/v1/talk"
    transcript = Transcript("fake-sim", "s", tools=tools)
    sent = SentRequest("POST", "http://127.0.0.1:1" + built.path, {}, built.body)
    turn = ParsedTurn(tool_calls=[ToolCall("get_time", {}, "{}", "c1", "c1")])
    transcript.exchanges.append(Exchange(0, sent, WireResponse(200, ""), turn))
    facts = offered("fake-chat", transcript)
    assert facts == Offered(
        "required", ("enum", "format", "nested_objects", "object_arrays", "optional", "ref")
    )
    info = TargetInfo("fake-sim", "fake-chat", "m", True, False, "native", "fake-chat")
    record = RunRecord(info, "s", "tool_choice", 0, "live", 100.0, True, None, (), Usage(), transcript)
    grid = capabilities([dataclasses.replace(record, tool_choice="required", offered=facts)])
    cells = grid["targets"]["fake-sim"]
    assert cells["tool_choice_required"]["value"] == "yes" and cells["schema_ref"]["value"] == "yes"


def test_its_finish_reasons_say_when_a_turn_was_cut(fake: type[FakeChatAdapter]) -> None:
    turn = fake().parse(WireResponse(200, json.dumps(REPLY)), stream=False)
    assert turn.finish_reason == "ran_out" and is_truncated(turn)


def test_once_taken_away_nothing_of_it_remains() -> None:
    assert "fake-chat" not in formats() and "fake-chat" not in FORMATS and "fake" not in families()
    assert not is_truncated(ParsedTurn(finish_reason="ran_out"))
