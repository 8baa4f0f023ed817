"""Live speed: two-turn runs against a scripted uvicorn endpoint with 100 ms latency, beside a bare
shared ``httpx.Client`` sending as many requests from as many threads, in the same sitting.

    python benchmarks/live_pace.py [--runs 2000] [--rounds 3] [--concurrency 500]

Efficiency is the ideal wall (every batch of ``concurrency`` runs taking exactly its turns'
latency) over the measured wall; CPU per exchange is this process's and its children's CPU over
the exchanges sent. The medians of ``--rounds`` interleaved rounds are shown (one round moves by a
third from the next). :mod:`speed` runs this as its ``live`` part.
"""

from __future__ import annotations

import argparse
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

LATENCY_SERVER = """
import asyncio, json, sys, uvicorn
def completion(message, finish):
    return {"id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": "bench",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
CALL = completion({"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function",
    "function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})}}]}, "tool_calls")
TEXT = completion({"role": "assistant", "content": "It is 18 C and raining lightly in Paris."}, "stop")
async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    body, more = b"", True
    while more:
        message = await receive()
        body, more = body + message.get("body", b""), message.get("more_body", False)
    await asyncio.sleep(float(sys.argv[2]))
    last = (json.loads(body or b"{}").get("messages") or [{}])[-1]
    data = json.dumps(TEXT if last.get("role") == "tool" else CALL).encode()
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": data})
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", backlog=2048,
            timeout_keep_alive=300)  # idle between rounds: no connection closed under the client
"""
"""A scripted OpenAI-format endpoint on uvicorn (asyncio): a call, then a text answer once a tool
result is sent; every answer after the given latency."""

GOALS = {50: 0.6, 500: 0.7}
"""Efficiency goal by concurrency (the speed issues' goals); others are shown without a verdict."""


def line(goal: str, figure: str, anchor: str, met: bool | None) -> None:
    verdict = "" if met is None else ("  [met]" if met else "  [NOT MET]")
    print(f"  {goal:<44} {figure:<34} {anchor}{verdict}")


def cpu_now() -> float:
    """CPU seconds of this process and its finished children."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def live(count: int, rounds: int, concurrency: int = 50) -> None:
    """``count`` two-turn runs, ``concurrency`` at once, one process and two worker processes,
    beside bare httpx sending as many requests from ``concurrency`` threads."""
    import httpx

    from harness import scenarios
    from harness.api import run_targets
    from harness.runner import RunConfig
    from harness.targets import Target

    latency = 0.1
    print(
        f"live: {count} two-turn runs, 100 ms latency, {concurrency} concurrent "
        "(a uvicorn endpoint in its own process)"
    )
    port = free_port()
    scratch = tempfile.TemporaryDirectory()
    server = subprocess.Popen(
        [sys.executable, "-c", LATENCY_SERVER, str(port), str(latency)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=0.2)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        (paris,) = [s for s in scenarios.load([REPO / "scenarios"]) if s.id == "weather.single.paris"]
        target = Target.build(
            "live-bench", format="openai-chat", model="sim-conformant", base_url=base, concurrency=concurrency
        )
        results = Path(scratch.name) / "results.jsonl"
        # as the harness keeps them
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        measured: dict[str, list[tuple[float, float]]] = {"bare": [], "threads": [], "processes": []}
        # the harness's read timeout: httpx's 5 s default cuts requests queued behind 500 others on
        # a loaded machine
        timeout = httpx.Timeout(120.0, connect=10.0)
        with ThreadPoolExecutor(concurrency) as pool:
            for _ in range(rounds):  # interleaved, so that each sees the machine as the others do
                for processes, key in ((1, "threads"), (2, "processes")):
                    config = RunConfig(  # records to a results file, as `harness run` writes them
                        mode="live",
                        results=results,
                        repeats=count,
                        concurrency=concurrency,
                        processes=processes,
                    )
                    cpu, wall = cpu_now(), time.perf_counter()
                    records = run_targets([target], [paris], config)
                    measured[key].append((cpu_now() - cpu, time.perf_counter() - wall))
                    outcomes = {r.outcome for r in records}
                    if "error" in outcomes:
                        print(f"  ({key}: some runs ended in error: {sorted(outcomes)})")
                exchanges = sum(len(r.transcript.exchanges) for r in records)
                body = records[0].transcript.exchanges[0].request.body

                # a client of its own each round, opened after the harness's worker processes were
                # forked (one kept across rounds failed at 500 on a socket gone under it: EBADF)
                with httpx.Client(limits=limits, timeout=timeout) as client:

                    def send(_: int, body: Any = body, client: httpx.Client = client) -> None:
                        client.post(f"{base}/v1/chat/completions", json=body).read()

                    list(pool.map(send, range(concurrency)))  # warm: connections open
                    cpu, wall = time.process_time(), time.perf_counter()
                    list(pool.map(send, range(exchanges)))
                    measured["bare"].append((time.process_time() - cpu, time.perf_counter() - wall))
        turns = max(len(r.transcript.exchanges) for r in records)
        ideal = -(-count // concurrency) * turns * latency
    finally:
        server.terminate()
        server.wait(10)
        scratch.cleanup()
    median = {
        key: (statistics.median(c for c, _ in got), statistics.median(w for _, w in got))
        for key, got in measured.items()
    }
    bare_cpu, bare_wall = median["bare"]
    bare, bare_ideal = bare_cpu * 1000 / exchanges, -(-exchanges // concurrency) * latency
    print(
        f"  medians of {rounds} rounds; bare httpx: {exchanges} requests in {bare_wall:.2f} s "
        f"(ideal {bare_ideal:.2f} s)"
    )
    goal = GOALS.get(concurrency)
    for key, how in (("threads", "one process, threads"), ("processes", "2 worker processes (--processes)")):
        cpu, wall = median[key]
        per = cpu * 1000 / exchanges
        print(
            f"  harness, {how}: {len(records)} runs, {exchanges} exchanges in {wall:.2f} s "
            f"(ideal {ideal:.2f} s)"
        )
        line(
            f"efficiency at least {goal}" if goal else "efficiency",
            f"{ideal / wall:.2f}",
            f"bare httpx: {bare_ideal / bare_wall:.2f}",
            None if goal is None else ideal / wall >= goal,
        )
        line(
            "CPU per exchange at most 1.5x bare httpx",
            f"{per / bare:.2f}x ({per:.2f} ms)",
            f"bare httpx: {bare:.2f} ms",
            per / bare <= 1.5,
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3, help="Rounds; the medians are shown.")
    parser.add_argument("--concurrency", type=int, default=500)
    args = parser.parse_args()
    live(args.runs, args.rounds, args.concurrency)


if __name__ == "__main__":
    main()
