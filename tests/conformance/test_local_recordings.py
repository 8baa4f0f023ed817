"""Attribution held to recorded real responses: the committed cassettes of the same Gemma 3 270M
weights on two real servers (llama-cpp-python and llama.cpp's llama-server), replayed.

On llama-server the tools never reach the model (its fallback chat template has no place for
them), on Chat Completions, Anthropic Messages and the Responses API alike; every run must say so with the
server's own evidence, and charge nothing to the model.
On llama-cpp-python, streamed ``auto`` turns come back as an empty body exactly when the model
chose to call: the model must not be charged for that either.
"""

from __future__ import annotations

import dataclasses

import pytest

from harness import scenarios
from harness.api import run_targets
from harness.checks import RunContext, run_checks
from harness.checks.scoring import asks_refusal
from harness.records import RunRecord
from harness.runner import RunConfig
from harness.targets import pick
from harness.targets_file import load_targets
from tests.helpers.cli import REPO

LLAMA_SERVER = ["local-llamacpp-gemma3-270m", "local-llamacpp-gemma3-270m-stream"]
LLAMA_SERVER_ANTHROPIC = [
    "local-llamacpp-gemma3-270m-anthropic",
    "local-llamacpp-gemma3-270m-anthropic-stream",
]
LLAMA_SERVER_RESPONSES = [
    "local-llamacpp-gemma3-270m-responses",
    "local-llamacpp-gemma3-270m-responses-stream",
]
LLAMA_CPP_PYTHON = ["local-gemma3-270m", "local-gemma3-270m-stream"]


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], RunRecord]:
    out = tmp_path_factory.mktemp("local")
    records = run_targets(
        pick(
            load_targets(), LLAMA_SERVER + LLAMA_SERVER_ANTHROPIC + LLAMA_SERVER_RESPONSES + LLAMA_CPP_PYTHON
        ),
        scenarios.load([REPO / "scenarios"]),
        RunConfig(results=out / "results.jsonl"),
    )
    assert all(r.error is None for r in records), [r.error for r in records if r.error]
    return {(r.target.name, r.scenario): r for r in records}


def status(record: RunRecord) -> dict[str, str]:
    return {c.id: c.status for c in record.checks}


def details(record: RunRecord, check_id: str) -> list[str]:
    return [f.detail for c in record.checks if c.id == check_id for f in c.findings if not f.passed]


@pytest.mark.parametrize(
    ("targets", "probed_on"),
    [
        (LLAMA_SERVER, "prompt tokens"),
        (LLAMA_SERVER_ANTHROPIC, "with one tool on /v1/messages"),
        (LLAMA_SERVER_RESPONSES, "with one tool on /v1/responses"),
    ],
    ids=["chat", "messages", "responses"],
)
def test_every_llama_server_run_charges_the_dropped_tools_to_the_server(
    replayed: dict[tuple[str, str], RunRecord], targets: list[str], probed_on: str
) -> None:
    """On either wire of the server: the probe's evidence, asked on that wire, names the endpoint
    in every run; the cut turns and the leaked ChatML are found and charged to no one's model."""
    runs = [r for (target, _), r in replayed.items() if target in targets]
    assert len(runs) == 2 * len(scenarios.load([REPO / "scenarios"]))
    runs = [r for r in runs if not asks_refusal(r)]  # the tools are not asked of a refusal's one request
    for record in runs:
        facts = record.transcript.endpoint
        assert facts["server"] == "llama-server" and facts["tools_delivered"] is False
        assert len(facts["model_sha256"]) == 64
        (dropped,) = details(record, "protocol.tools_delivered")
        assert "/props chat_template_caps.supports_tools = false" in dropped and probed_on in dropped
        assert "'tools_dropped_without_tool_template'" in dropped
        assert record.score == 0.0
        assert all(c.status != "fail" for c in record.checks if c.kind == "expectation"), record.key
        assert status(record).get("expect.final") != "pass"  # no echo passes as an answer
    truncated = [r for r in runs if status(r)["protocol.truncation"] == "fail"]
    leaked = [r for r in runs if status(r)["protocol.template_leak"] == "fail"]
    assert len(truncated) > len(runs) / 2 and len(leaked) > len(runs) / 2
    assert any("<|im_end|> (ChatML)" in d for r in leaked for d in details(r, "protocol.template_leak"))


def test_each_kind_of_evidence_names_the_endpoint(replayed: dict[tuple[str, str], RunRecord]) -> None:
    """The same recorded run, with what the server said about itself, with only the probe's
    prompt tokens, and with nothing but the forced tool_choice answered with 200 and no call."""
    record = replayed["local-llamacpp-gemma3-270m", "tool_choice.required.weather"]
    scenario = next(s for s in scenarios.load([REPO / "scenarios"]) if s.id == record.scenario)
    profile = load_targets()[record.target.name].profile
    facts = record.transcript.endpoint
    tokens = {k: v for k, v in facts.items() if k != "props"}
    tokens["evidence"] = facts["evidence"].split("; ", 1)[1]  # the probe's token counts alone
    for kept, expected in (
        (facts, "/props chat_template_caps.supports_tools = false"),
        (tokens, "prompt tokens"),
        ({}, "tool_choice 'required' was answered with HTTP 200 and no call in turn 0"),
    ):
        transcript = dataclasses.replace(record.transcript, endpoint=kept)
        checks = run_checks(RunContext(transcript, scenario, profile=profile))
        (found,) = [f.detail for c in checks if c.id == "protocol.tools_delivered" for f in c.findings]
        assert expected in found, found


def test_an_empty_stream_is_never_charged_to_the_model(replayed: dict[tuple[str, str], RunRecord]) -> None:
    empty = [
        r
        for (target, _), r in replayed.items()
        if target == "local-gemma3-270m-stream"
        and any(f.check_id == "wire.empty_stream" for f in r.findings())
    ]
    assert empty
    for record in empty:
        (finding,) = [f for f in record.findings() if f.check_id == "wire.empty_stream"]
        assert "'stream_auto_tool_choice_empty'" in finding.detail
        # the phase the empty stream ended charges nothing (an earlier phase the model answered may)
        starts = record.transcript.phases or [0]
        phase = max(i for i, start in enumerate(starts) if start <= (finding.turn_index or 0))
        label = ("opening" if phase == 0 else f"follow-up {phase}") if len(starts) > 1 else ""
        charged = [
            f.detail
            for c in record.checks
            if c.id in ("expect.calls", "expect.final")
            for f in c.findings
            if not f.passed and f.severity == "error" and f.detail.startswith(label)
        ]
        assert charged == [], record.scenario


def test_the_server_that_drops_the_tools_never_outscores_the_one_that_delivers_them(
    replayed: dict[tuple[str, str], RunRecord],
) -> None:
    """llama-server drops the tools: every run is the endpoint's failure, no success, no call turn.
    llama-cpp-python delivers them: the model makes the expected call in some runs (and then loops,
    so it completes none either): the same weights, told apart by what the endpoint let them do."""

    def runs(target: str) -> list[RunRecord]:  # the model's tasks: a refusal tests the endpoint alone
        return [r for (name, _), r in replayed.items() if name == target and not asks_refusal(r)]

    def success(target: str) -> float:
        return sum(r.score or 0.0 for r in runs(target)) / len(runs(target))

    def status(record: RunRecord, check_id: str) -> str:
        return next(c.status for c in record.checks if c.id == check_id)

    dropping, delivering = runs("local-llamacpp-gemma3-270m"), runs("local-gemma3-270m")
    assert success("local-llamacpp-gemma3-270m") <= success("local-gemma3-270m")
    assert all(status(r, "protocol.tools_delivered") == "fail" for r in dropping)
    assert not any(r.transcript.calls for r in dropping)
    assert sum(status(r, "expect.calls") == "pass" for r in delivering) > 0
