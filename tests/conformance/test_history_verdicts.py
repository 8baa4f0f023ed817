"""What each real server does with each history shape, held to its committed recordings: the table
in docs/targets.md ("What each server does with each history shape") is what a replay of the
llama-cpp-python and llama-server cassettes of the history and negative scenarios shows."""

from __future__ import annotations

import re

import pytest

from harness import scenarios
from harness.api import run_targets
from harness.records import RunRecord
from harness.runner import RunConfig
from harness.targets import pick
from harness.targets_file import load_targets
from tests.helpers.cli import REPO

SERVERS = {"llama-cpp-python": "local-gemma3-270m", "llama-server": "local-llamacpp-gemma3-270m"}
SECTION = "### What each server does with each history shape"


def verdict(record: RunRecord) -> str:
    """The first answer to the seeded history: accepted, refused (4xx) or failed (5xx)."""
    first = record.transcript.exchanges[0].response
    status = first.status if first is not None else 0
    if 200 <= status < 300:
        return "accepted"
    return f"refused ({status})" if 400 <= status < 500 else f"failed ({status})"


def documented() -> dict[str, dict[str, str]]:
    """Scenario id -> server -> verdict, as the docs' table says."""
    text = (REPO / "docs" / "targets.md").read_text(encoding="utf-8")
    table = text[text.index(SECTION) :].split("\n\n")[2]
    header, _, *rows = table.splitlines()
    servers = [cell.strip(" `") for cell in header.strip("|").split("|")][1:]
    found = {}
    for row in rows:
        scenario, *cells = (cell.strip(" `") for cell in row.strip("|").split("|"))
        found[scenario] = dict(zip(servers, cells, strict=True))
    return found


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    suite = scenarios.select(scenarios.load([REPO / "scenarios"]), ["history", "negative"])
    records = run_targets(
        pick(load_targets(), list(SERVERS.values())),
        suite,
        RunConfig(results=tmp_path_factory.mktemp("verdicts") / "results.jsonl"),
    )
    assert not [r.key for r in records if r.error], "every recorded run replays"
    by_target = {target: server for server, target in SERVERS.items()}
    found: dict[str, dict[str, str]] = {}
    for record in records:
        found.setdefault(record.scenario, {})[by_target[record.target.name]] = verdict(record)
    return found


def test_the_documented_table_is_what_the_recordings_show(replayed: dict[str, dict[str, str]]) -> None:
    assert documented() == replayed


def test_every_history_shape_has_a_verdict_per_server(replayed: dict[str, dict[str, str]]) -> None:
    assert len(replayed) >= 24 and all(set(v) == set(SERVERS) for v in replayed.values())
    assert all(
        re.fullmatch(r"accepted|refused \(4\d\d\)|failed \(5\d\d\)", v)
        for r in replayed.values()
        for v in r.values()
    )
