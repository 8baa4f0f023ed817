"""Replay speed: CPU time the harness spends per replayed interaction, on the bundled suite.

DESIGN.md's budget is <= 1 ms of CPU per replayed interaction. Prints two
figures and their ratio to the budget: the whole pipeline (cassette load,
matching, parsing, the agent loop, checks, scoring, result writing) and the
replay itself (cassette load, request matching, response playback, through
httpx), each per interaction. Run it twice to see the spread.

    python benchmarks/replay.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import httpx

from harness import scenarios
from harness.api import run_targets as run
from harness.recording import CassetteTransport
from harness.runner import RunConfig
from harness.targets import load_targets

REPO = Path(__file__).resolve().parents[1]
BUDGET_MS = 1.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    suite = scenarios.load([REPO / "scenarios"])
    targets = [t for name, t in sorted(load_targets().items()) if (REPO / "cassettes" / name).is_dir()]
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            cpu, wall = time.process_time(), time.perf_counter()
            records = run(
                targets,
                suite,
                RunConfig(cassettes=REPO / "cassettes", results=Path(tmp) / "r.jsonl", concurrency=1),
            )
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            interactions = sum(len(r.transcript.exchanges) for r in records)
            per = cpu * 1000 / interactions
            print(
                f"round {round_ + 1}: {len(records)} runs, {interactions} interactions, {cpu:.2f} s CPU, "
                f"{wall:.2f} s wall: {per:.2f} ms CPU per interaction "
                f"({per / BUDGET_MS:.2f}x the {BUDGET_MS} ms budget; the whole pipeline)"
            )
    replay_only()


def replay_only() -> None:
    """Every recorded request of the bundled cassettes sent again through a cassette transport."""
    import yaml

    paths = sorted(p for p in (REPO / "cassettes").rglob("*.yaml") if not p.name.endswith(".mcp.yaml"))
    requests = []
    for path in paths:
        data = yaml.load(path.read_text(), Loader=yaml.CSafeLoader)
        requests.append(
            (
                path,
                [
                    (i["request"]["method"], i["request"]["uri"], i["request"]["body"])
                    for i in data["interactions"]
                ],
            )
        )
    cpu = time.process_time()
    count = 0
    for path, interactions in requests:
        transport = CassetteTransport(path, mode="replay", target="t", scenario_id=path.stem)
        with httpx.Client(transport=transport) as client:
            for method, uri, body in interactions:
                client.request(method, uri, content=body.encode() if isinstance(body, str) else body).read()
                count += 1
    per = (time.process_time() - cpu) * 1000 / count
    print(
        f"replay only: {len(paths)} cassettes, {count} interactions: {per:.2f} ms CPU per interaction "
        f"({per / BUDGET_MS:.2f}x the {BUDGET_MS} ms budget)"
    )


if __name__ == "__main__":
    main()
