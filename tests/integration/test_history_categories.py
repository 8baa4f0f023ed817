"""The history and negative categories recorded on the simulator in every wire format, then
replayed: the replay gives the same verdicts, every seeded history (cross-provider ones included)
succeeds on the conformant simulator, and every negative scenario gets one of the three verdicts
(refused clearly, failed, accepted silently), never an untested run."""

from __future__ import annotations

from pathlib import Path

from harness.api import run_targets as run
from harness.records import RunRecord
from harness.registry import ADAPTERS
from harness.runner import RunConfig
from harness.scenarios import load, select
from harness.targets import Target
from tests.helpers.cli import REPO

SUITE = select(load([REPO / "scenarios"]), ["history", "negative"])
VERDICTS = ("refused clearly (HTTP 4", "failed (HTTP 5", "accepted silently (HTTP ")


def verdicts(records: list[RunRecord]) -> dict[tuple[str, str], tuple[str, tuple[str, ...]]]:
    return {
        (r.target.name, r.scenario): (r.outcome, tuple(f"{c.id}={c.status}" for c in r.checks))
        for r in records
    }


def test_record_then_replay_the_new_categories(tmp_path: Path) -> None:
    assert len([s for s in SUITE if s.category == "history"]) >= 12
    assert len([s for s in SUITE if s.category == "negative"]) >= 12
    targets = [
        Target.build(f"sim-{fmt}", format=fmt, model="sim-conformant", base_url="sim")
        for fmt, _ in ADAPTERS.items()
    ]
    targets.append(
        Target.build(
            "sim-openai-chat-stream",
            format="openai-chat",
            model="sim-conformant",
            base_url="sim",
            stream=True,
        )
    )
    found = {}
    for mode in ("record", "replay"):
        config = RunConfig(mode=mode, cassettes=tmp_path / "c", results=tmp_path / f"{mode}.jsonl")
        records = run(targets, SUITE, config)
        assert len(records) == len(targets) * len(SUITE)
        assert [r for r in records if r.outcome == "error"] == []
        for record in records:
            if record.category == "history":
                failing = [
                    (c.id, [f.detail for f in c.findings]) for c in record.checks if c.status == "fail"
                ]
                assert record.outcome == "pass", (record.target.name, record.scenario, failing)
            checks = {c.id: c for c in record.checks}
            if record.category == "negative" and checks["expect.refused"].status != "n/a":
                (finding,) = checks["expect.refused"].findings
                assert finding.detail.startswith(VERDICTS), finding.detail
        found[mode] = verdicts(records)
    assert found["record"] == found["replay"]
