"""The capability grid, measured from real replayed runs (the committed cassettes): what Gemma 3
270M on llama-cpp-python was seen to do, what the simulator does, and the rules that keep the
grid from charging the model for what the harness or the endpoint did."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import msgspec
import pytest

from harness.analysis.capabilities import (
    COLUMNS,
    NOT_DELIVERED,
    SCHEMA_FEATURES,
    capabilities,
    render_capabilities_text,
)
from harness.model import (
    Exchange,
    Finding,
    Message,
    ParsedTurn,
    SentRequest,
    ToolChoice,
    ToolSpec,
    Transcript,
)
from harness.providers import RequestOptions, adapter_class, formats
from harness.providers.schemas import FEATURES
from harness.records import CheckResult, RunError, RunRecord
from harness.reports.json_report import build
from harness.runner.one import offered
from harness.targets_file import load_targets
from tests.helpers.result_sets import replay_bundled
from tests.helpers.transcripts import BILLING

GEMMA = "local-gemma3-270m"
GEMMA_STREAM = "local-gemma3-270m-stream"
TARGETS = [GEMMA, GEMMA_STREAM, "sim-openai", "sim-ollama", "sim-openai-prompted-json"]
CASES = [
    "weather.parallel.two_cities",
    "lookup.parallel.weather_and_time",
    "tool_choice.required.weather",
    "tool_choice.named.time",
    "tool_choice.none.weather",
    "weather.single.paris",
    "billing.single.create_invoice",
    "mcp.thirdparty.time_convert",
    "mcp.thirdparty.git_log",
]


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> list[RunRecord]:
    return replay_bundled(TARGETS, CASES, tmp_path_factory.mktemp("capabilities") / "r.jsonl")


@pytest.fixture(scope="module")
def grid(records: list[RunRecord]) -> dict[str, Any]:
    return capabilities(records)


def cell(grid: dict[str, Any], target: str, column: str) -> dict[str, Any]:
    found: dict[str, Any] = grid["targets"][target][column]
    return found


def test_the_grid_has_every_column_for_every_target_in_a_stable_order(grid: dict[str, Any]) -> None:
    assert [c["id"] for c in grid["columns"]] == [c.id for c in COLUMNS]
    assert list(grid["targets"]) == sorted(TARGETS)
    for cells in grid["targets"].values():
        assert list(cells) == [c.id for c in COLUMNS]
        for found in cells.values():
            assert found["value"] in ("yes", "no", "partial", "untested")
            assert found["detail"]
            assert found["runs"] == sorted(found["runs"])


def test_the_local_gemma_model_makes_no_parallel_calls(grid: dict[str, Any]) -> None:
    found = cell(grid, GEMMA, "parallel_calls")
    assert found["value"] == "no", found
    assert found["runs"] == [
        f"{GEMMA}/lookup.parallel.weather_and_time/0",
        f"{GEMMA}/weather.parallel.two_cities/0",
    ]


def test_required_tool_choice_is_refused_with_http_500_on_llama_cpp_python(grid: dict[str, Any]) -> None:
    assert cell(grid, GEMMA, "tool_choice_required") == {
        "value": "no",
        "detail": "refused (HTTP 500)",
        "runs": [f"{GEMMA}/tool_choice.required.weather/0"],
    }


def test_streamed_auto_tool_choice_is_an_empty_body(grid: dict[str, Any]) -> None:
    found = cell(grid, GEMMA_STREAM, "tool_choice_auto")
    assert found["value"] in ("no", "partial"), found
    assert "empty body" in found["detail"]
    assert f"{GEMMA_STREAM}/weather.single.paris/0" in found["runs"]
    streamed = cell(grid, GEMMA_STREAM, "streamed_calls")
    assert streamed["value"] in ("no", "partial") and "empty body" in streamed["detail"], streamed


def test_the_simulator_makes_native_and_parallel_calls(grid: dict[str, Any]) -> None:
    for column in ("native_calls", "parallel_calls", "mcp_tools", "tool_choice_required", "schema_ref"):
        assert cell(grid, "sim-openai", column)["value"] == "yes", column
    native = cell(grid, "sim-openai", "native_calls")
    assert native["runs"] and all(run.startswith("sim-openai/") for run in native["runs"])
    assert cell(grid, "sim-openai", "streamed_calls")["value"] == "untested"


def test_prompted_mode_says_so_and_offers_no_schema(grid: dict[str, Any]) -> None:
    native = cell(grid, "sim-openai-prompted-json", "native_calls")
    assert native["value"] == "untested" and "prompted" in native["detail"]
    assert cell(grid, "sim-openai-prompted-json", "schema_enum")["value"] == "untested"
    assert cell(grid, "sim-openai-prompted-json", "parallel_calls")["value"] == "yes"


def test_a_choice_the_wire_format_cannot_carry_is_not_honoured(grid: dict[str, Any]) -> None:
    found = cell(grid, "sim-ollama", "tool_choice_required")
    assert found["value"] == "no" and "no tool_choice field" in found["detail"]


def test_schema_features_follow_what_the_requests_carried(grid: dict[str, Any]) -> None:
    for feature in ("nested_objects", "object_arrays", "enum", "ref", "format", "optional", "nullable"):
        assert cell(grid, "sim-openai", f"schema_{feature}")["value"] == "yes", feature
    ref = cell(grid, GEMMA, "schema_ref")
    assert ref == {
        "value": "yes",
        "detail": "accepted in 1 run",
        "runs": [f"{GEMMA}/billing.single.create_invoice/0"],
    }


def test_runs_the_harness_could_not_test_decide_nothing(records: list[RunRecord]) -> None:
    broken = [
        dataclasses.replace(
            r, outcome="error", error=RunError("CassetteMissingError", "gone", cause="cassette")
        )
        for r in records
        if r.target.name == "sim-openai"
    ]
    alone = capabilities(broken)["targets"]["sim-openai"]
    assert {c["value"] for c in alone.values()} == {"untested"}
    rest = [r for r in records if r.target.name == "sim-openai"][1:]
    mixed = capabilities([broken[0], *rest])["targets"]["sim-openai"]
    assert mixed["native_calls"]["value"] == "yes"
    assert all(run_of(broken[0]) not in c["runs"] for c in mixed.values())


def run_of(record: RunRecord) -> str:
    return f"{record.target.name}/{record.scenario}/{record.repeat}"


def test_tools_the_endpoint_never_delivered_are_not_the_models_fault(records: list[RunRecord]) -> None:
    dropped = [undelivered(r) for r in records if r.target.name == GEMMA]
    cells = capabilities(dropped)["targets"][GEMMA]
    for column in ("native_calls", "parallel_calls"):
        assert cells[column]["value"] == "no"
        assert cells[column]["detail"].startswith(NOT_DELIVERED), cells[column]


def undelivered(record: RunRecord) -> RunRecord:
    """The run as if the endpoint had dropped the tools (as llama-server does without a tool
    template): ``protocol.tools_delivered`` failed."""
    finding = Finding(
        "protocol.tools_delivered", "error", False, "the server never showed the model the tools"
    )
    failed = CheckResult.of("protocol.tools_delivered", "protocol", 1.0, [finding])
    checks = tuple(failed if c.id == failed.id else c for c in record.checks)
    return dataclasses.replace(record, checks=checks)


def test_the_grid_does_not_depend_on_record_order(records: list[RunRecord]) -> None:
    forward = json.dumps(capabilities(records), sort_keys=False)
    assert json.dumps(capabilities(list(reversed(records))), sort_keys=False) == forward


def test_report_json_carries_the_grid(records: list[RunRecord], grid: dict[str, Any]) -> None:
    assert msgspec.to_builtins(build(records, "2025-01-01T00:00:00+00:00").capabilities) == grid


def test_the_grid_names_every_schema_feature_the_run_records() -> None:
    assert set(SCHEMA_FEATURES) == set(FEATURES)


@pytest.mark.parametrize("fmt", formats())
@pytest.mark.parametrize("choice", ["auto", "required", "none", "named:get_time"])
def test_the_first_request_is_recorded_as_neutral_facts(fmt: str, choice: str) -> None:
    """What the grid reads of a request is recorded when the run ends, read back from the request
    the format's adapter built: the tool_choice it carried and its schemas' features."""
    mode, _, name = choice.partition(":")
    tool_choice = ToolChoice(mode, name or None)  # type: ignore[arg-type]
    adapter = adapter_class(fmt)()
    tools = [ToolSpec("get_time", "The time.", BILLING)]
    built = adapter.build_request(
        [Message("user", "What time is it?")], tools, tool_choice, RequestOptions("m")
    )
    url = "http://127.0.0.1:1" + built.path.replace("{model}", "m")
    transcript = Transcript("t", "s")
    transcript.exchanges.append(Exchange(0, SentRequest("POST", url, {}, built.body), None, ParsedTurn()))
    facts = offered(fmt, transcript)
    assert facts is not None
    assert facts.schema_features == ("enum", "format", "nested_objects", "object_arrays", "optional", "ref")
    if any(f.check_id == "wire.tool_choice_unsupported" for f in built.findings):
        assert facts.tool_choice is None  # the format has no such field: nothing went on the wire
    elif any(f.check_id == "wire.tool_choice_named_emulated" for f in built.findings):
        assert facts.tool_choice == "required"  # Cohere: the named tool alone, with REQUIRED
    elif mode == "auto":
        assert facts.tool_choice in ("auto", None)  # auto may be said or left to the default
    else:
        assert facts.tool_choice == choice
    assert offered(fmt, Transcript("t", "s")) is None  # no request sent: nothing offered


def test_a_schema_nested_past_the_stack_is_recorded_without_features() -> None:
    """A user's agent may send any schema: one too deep to walk names no feature, and the run's
    record is still made."""
    deep: dict[str, Any] = {"type": "object"}
    node = deep
    for _ in range(5000):
        node["properties"] = {"a": {"type": "object"}}
        node = node["properties"]["a"]
    tool = {"type": "function", "function": {"name": "f", "parameters": deep}}
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "x"}],
        "tools": [tool],
        "tool_choice": "none",
    }
    transcript = Transcript("t", "s")
    sent = SentRequest("POST", "http://127.0.0.1:1/v1/chat/completions", {}, body)
    transcript.exchanges.append(Exchange(0, sent, None, ParsedTurn()))
    facts = offered("openai-chat", transcript)
    assert facts is not None and (facts.tool_choice, facts.schema_features) == ("none", ())


def test_text_grid_is_a_table_when_it_fits_80_columns(grid: dict[str, Any]) -> None:
    small = {"columns": grid["columns"], "targets": {n: grid["targets"][n] for n in (GEMMA, "sim-openai")}}
    text = render_capabilities_text(small, 80)
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines), text
    for column in COLUMNS:
        assert any(line.startswith(column.label) for line in lines), column.label
    parallel = next(line for line in lines if line.startswith("parallel calls"))
    assert parallel.split()[2:] == ["no", "yes"]
    assert f"{GEMMA} · tool_choice required: no, refused (HTTP 500)" in text


def test_text_grid_of_the_bundled_targets_is_stacked_at_80_columns(grid: dict[str, Any]) -> None:
    cells = list(grid["targets"].values())
    names = sorted(load_targets())
    many = {"columns": grid["columns"], "targets": {n: cells[i % len(cells)] for i, n in enumerate(names)}}
    text = render_capabilities_text(many, 80)
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines), text
    assert [line for line in lines if line and not line.startswith(" ")] == names
    assert any("tool_choice required" in line and "refused (HTTP 500)" in line for line in lines)


def test_text_grid_stays_within_a_narrow_terminal(grid: dict[str, Any]) -> None:
    text = render_capabilities_text(grid, 44)
    assert all(len(line) <= 44 for line in text.splitlines()), text
    assert "refused (HTTP 500)" in text
