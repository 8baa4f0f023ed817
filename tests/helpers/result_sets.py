"""Two result sets that differ in known ways, made by replaying copies of the bundled sim cassettes
(so every record is a real run of the real pipeline; only the recorded model answers differ).

- ``base``: ``sim-mistral`` answers ``weather.single.paris`` with a useless final text (broken);
- ``new``: ``sim-mistral`` as recorded (fixed), ``sim-openai`` answers ``weather.single.paris``
  uselessly (newly broken) and has no cassette for ``time.single.tokyo`` (a new ``error``).
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterable
from pathlib import Path

import yaml

from harness.api import load_scenarios, run_targets
from harness.records import RunRecord
from harness.runner import RunConfig
from harness.targets import pick
from harness.targets_file import load_targets
from tests.helpers.cli import REPO

TARGETS = ("sim-mistral", "sim-openai")
SCENARIOS = ("time.single.tokyo", "todo.single.create", "weather.single.paris")
BROKEN = "weather.single.paris"
USELESS = "I could not find out."

Pair = tuple[str, str]


def useless_final_answer(cassette: Path) -> None:
    """Make the recorded final answer useless (an OpenAI-style body, as the sim-openai and
    sim-mistral recordings are): the requests stay the same, so replay does not drift; the
    scenario's ``final`` expectation fails."""
    data = yaml.safe_load(cassette.read_text())
    response = data["interactions"][-1]["response"]
    body = json.loads(response["body"]["string"])
    body["choices"][0]["message"]["content"] = USELESS
    response["body"]["string"] = json.dumps(body)
    response["headers"].pop("content-length", None)
    cassette.write_text(yaml.safe_dump(data))


def cassettes(root: Path, broken: Iterable[Pair] = (), missing: Iterable[Pair] = ()) -> Path:
    """A copy of the cassettes of :data:`TARGETS` x :data:`SCENARIOS` under ``root``, with the
    ``broken`` (target, scenario) answers made useless and the ``missing`` ones deleted."""
    for target in TARGETS:
        (root / target).mkdir(parents=True, exist_ok=True)
        for scenario in SCENARIOS:
            shutil.copy(REPO / "cassettes" / target / f"{scenario}.yaml", root / target / f"{scenario}.yaml")
    for target, scenario in broken:
        useless_final_answer(root / target / f"{scenario}.yaml")
    for target, scenario in missing:
        (root / target / f"{scenario}.yaml").unlink()
    return root


def replay(cassette_dir: Path, results: Path, targets: Iterable[str] = TARGETS) -> list[RunRecord]:
    """Replay :data:`SCENARIOS` against ``targets`` from ``cassette_dir``, writing ``results``."""
    known = load_targets()
    suite = load_scenarios(REPO / "scenarios", select=list(SCENARIOS))
    config = RunConfig(mode="replay", cassettes=cassette_dir, results=results)
    return sorted(run_targets([known[t] for t in targets], suite, config), key=lambda r: r.key)


def replay_bundled(targets: Iterable[str], cases: Iterable[str], results: Path) -> list[RunRecord]:
    """The bundled scenarios ``cases`` replayed on ``targets`` from the bundled cassettes, writing
    ``results``; no run may end in an error."""
    suite = load_scenarios(REPO / "scenarios", select=list(cases))
    config = RunConfig(mode="replay", cassettes=REPO / "cassettes", results=results)
    found = run_targets(pick(load_targets(), list(targets)), suite, config)
    assert [r for r in found if r.outcome == "error"] == [], (
        "a replay failed: is a cassette being re-recorded?"
    )
    return found


def base_and_new(root: Path) -> tuple[Path, Path]:
    """The results files of the base and the new set (see the module docstring)."""
    base = cassettes(root / "base-cassettes", broken=[("sim-mistral", BROKEN)])
    new = cassettes(
        root / "new-cassettes",
        broken=[("sim-openai", BROKEN)],
        missing=[("sim-openai", "time.single.tokyo")],
    )
    replay(base, root / "base.jsonl")
    replay(new, root / "new.jsonl")
    return root / "base.jsonl", root / "new.jsonl"


def snapshot(target: str, root: Path, attempts: int = 6) -> Path:
    """A copy of ``cassettes/<target>/`` that replays without a cassette error. The local
    targets' cassettes may be re-recorded while the tests run: a file caught half-written is
    copied again after a pause."""
    for attempt in range(attempts):
        shutil.rmtree(root / target, ignore_errors=True)
        shutil.copytree(REPO / "cassettes" / target, root / target)
        records = replay_all(target, root)
        if not any(r.error and r.error.cause == "cassette" for r in records):
            return root
        time.sleep(5 * (attempt + 1))
    raise AssertionError(f"cassettes/{target}/ kept failing to replay (being re-recorded?)")


def replay_all(target: str, cassette_dir: Path, results: Path | None = None) -> list[RunRecord]:
    """Every bundled scenario against ``target``."""
    known = load_targets()
    config = RunConfig(mode="replay", cassettes=cassette_dir, results=results)
    records = run_targets([known[target]], load_scenarios(REPO / "scenarios"), config)
    return sorted(records, key=lambda r: r.key)
