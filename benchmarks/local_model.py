"""Facts about the real local model target (llama-cpp-python + Gemma 3 270M), measured live.

Prints: server start time; requests per second for a small tool-calling
request; the time to record the whole bundled suite against the local target;
and, running the suite twice at temperature 0, how many scenarios made the
same calls both times. Needs the [local] extra. Takes several minutes.

    python benchmarks/local_model.py [--target local-gemma3-270m] [--requests 20]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from harness import scenarios
from harness.api import run_targets as run
from harness.records import RunRecord
from harness.runner import RunConfig
from harness.servers.local import local_server
from harness.targets_file import load_targets

REPO = Path(__file__).resolve().parents[1]
REQUEST = {
    "model": "gemma3-270m",
    "messages": [{"role": "user", "content": "What's the weather in Paris?"}],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather for a city.",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
            },
        }
    ],
    "tool_choice": "auto",
    "temperature": 0.0,
    "seed": 42,
    "max_tokens": 64,
}


def calls_of(record: RunRecord) -> list[list[tuple[str, str]]]:
    """The calls of each turn of a run (names and canonical arguments)."""
    return [
        [(c.name, json.dumps(c.arguments, sort_keys=True)) for c in e.parsed.tool_calls]
        for e in record.transcript.exchanges
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", default="local-gemma3-270m")
    parser.add_argument("--requests", type=int, default=20)
    args = parser.parse_args()
    target = load_targets()[args.target]
    suite = scenarios.load([REPO / "scenarios"])

    started = time.perf_counter()
    with local_server(target.local_model or "gemma3-270m") as server:
        print(f"server start (weights assembled, model loaded): {time.perf_counter() - started:.1f} s")
        latencies = []
        with httpx.Client(timeout=120) as client:
            client.post(server.base_url + "/v1/chat/completions", json=REQUEST)  # warm-up
            for _ in range(args.requests):
                t = time.perf_counter()
                client.post(server.base_url + "/v1/chat/completions", json=REQUEST).raise_for_status()
                latencies.append(time.perf_counter() - t)
    total = sum(latencies)
    print(
        f"requests/s, one at a time ({args.requests} requests): {args.requests / total:.2f} "
        f"(median {statistics.median(latencies) * 1000:.0f} ms, max {max(latencies) * 1000:.0f} ms)"
    )

    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        config = RunConfig(mode="record", cassettes=Path(tmp) / "c", results=Path(tmp) / "1.jsonl")
        first = run([target], suite, config)
        recording = time.perf_counter() - t
        exchanges = sum(len(r.transcript.exchanges) for r in first)
        print(
            f"record the suite ({len(suite)} scenarios, {exchanges} requests) on {args.target}: "
            f"{recording:.0f} s"
        )
        second = run([target], suite, RunConfig(mode="live", results=Path(tmp) / "2.jsonl"))
    again = {r.scenario: calls_of(r) for r in second}
    same = [r.scenario for r in first if calls_of(r) == again[r.scenario]]
    print(f"same calls in two runs at temperature 0: {len(same)} of {len(first)} scenarios")
    differing = sorted(set(again) - set(same))
    if differing:
        print("  differing:", ", ".join(differing))


if __name__ == "__main__":
    main()
