"""Hosted MCP beside the harness's own MCP loop, on real replayed runs: the bundled cassettes of
the simulated Responses and Anthropic targets (their MCP servers run by the harness's loop, and
handed to the provider's connector by ``hosted_mcp``), and a hosted target on a deviating
simulator whose connector calls a tool the request did not allow, recorded here. The report puts
each hosted target beside the target of its wire that runs MCP itself, and names the difference."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.records import to_builtins
from harness.results import read
from tests.helpers.cli import deviant_beside

OWN = ("sim-openai-responses-stream", "sim-anthropic")
HOSTED = ("sim-openai-responses-hosted-mcp-stream", "sim-anthropic-hosted-mcp")
DEVIANT = "responses-hosted-disallowed"
SCENARIOS = ("mcp.single.find_symbol", "mcp.mixed.find_and_remember", "mcp.two_servers.code_and_history")
CONFIG = f"""[targets.{DEVIANT}]
format = "openai-responses"
model = "sim-conformant"
base_url = "sim~hosted-disallowed-tool"
stream = true
hosted_mcp = {{}}
migrates_from = "sim-openai-responses-stream"
"""


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reports of the five targets replayed together (the deviant's cassettes recorded first)."""
    root = tmp_path_factory.mktemp("hosted")
    return deviant_beside(root, (*OWN, *HOSTED), DEVIANT, CONFIG, SCENARIOS)


def records(reports: Path) -> dict[tuple[str, str], dict[str, Any]]:
    found = {}
    for record in read(reports / "results.jsonl"):  # values shared by runs put back from the store
        data = to_builtins(record)
        found[(data["target"]["name"], data["scenario"])] = data
    return found


def test_hosted_runs_replay_with_the_provider_running_the_calls(replayed: Path) -> None:
    runs = records(replayed)
    for scenario in SCENARIOS:
        for own, hosted in zip(OWN, HOSTED, strict=True):
            mine, theirs = runs[(own, scenario)], runs[(hosted, scenario)]
            assert mine["outcome"] == theirs["outcome"] == "pass", (scenario, hosted)
            assert mine["transcript"]["executions"]  # the harness ran the MCP tools
            ran = [e["call"]["name"] for e in theirs["transcript"]["executions"]]
            assert not any(name.startswith("mcp__") for name in ran)  # ... and here the provider did
            hosted_calls = [
                h
                for e in theirs["transcript"]["exchanges"]
                for h in e["parsed"]["hosted"]
                if h["kind"] == "call"
            ]
            assert hosted_calls and all(h["output"] for h in hosted_calls)
            checks = {c["id"]: c["status"] for c in theirs["checks"]}
            assert checks["protocol.hosted_mcp"] == "pass" and checks["protocol.mcp_servers"] == "n/a"
            assert theirs["target"]["mode"].endswith("+hosted-mcp")
    # approvals: the Responses hosted target requires them; the loop approved each call it was asked about
    exchanges = runs[(HOSTED[0], SCENARIOS[0])]["transcript"]["exchanges"]
    assert [h["kind"] for h in exchanges[0]["parsed"]["hosted"]] == ["list_tools", "approval_request"]
    asked = exchanges[0]["parsed"]["hosted"][1]["id"]
    assert exchanges[1]["parsed"]["hosted"][0]["approval"] == asked
    assert {"type": "mcp_approval_response", "approval_request_id": asked, "approve": True} in exchanges[1][
        "request"
    ]["body"]["input"]


def test_the_report_shows_hosted_beside_the_own_loop_and_names_the_difference(replayed: Path) -> None:
    report = json.loads((replayed / "report.json").read_text())
    groups = report["migrations"]
    by_target = {row["target"]: group for group in groups for row in group["targets"]}
    for own, hosted in zip(OWN, HOSTED, strict=True):
        assert by_target[own] is by_target[hosted], (own, hosted)
    responses = by_target[OWN[0]]
    assert by_target[DEVIANT] is responses and responses["declared"]
    modes = {row["target"]: row["mode"] for row in responses["targets"]}
    assert modes[OWN[0]] == "native" and modes[HOSTED[0]] == modes[DEVIANT] == "native+hosted-mcp"
    assert responses["compared"] == len(SCENARIOS)
    changes = [c for c in responses["changes"] if c["check"] == "protocol.hosted_mcp"]
    assert changes and all(c["target"] == DEVIANT and c["cause"] == "endpoint" for c in changes)
    differing = {d["scenario"] for d in responses["differences"]}
    assert differing == set(SCENARIOS)  # each scenario's hosted call went past allowed_tools
    markdown = (replayed / "report.md").read_text()
    assert "openai-responses (hosted MCP)" in markdown and "harness's own loop" in markdown
