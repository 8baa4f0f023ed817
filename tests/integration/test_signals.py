"""Signals to a running ``harness run``: SIGINT, SIGTERM and SIGHUP each stop everything the
harness started (MCP servers, forked workers) and the reports of the runs that finished are
written; a second signal exits at once, still leaving nothing behind; a forked worker dies with
its parent, even one killed by ``kill -9``.

Each test starts the real command on the simulator, with an MCP server hung in a call (the
fixture's ``flaky(mode=hang)``, or a hostile server that ignores SIGTERM) and a ``timeout_s`` of
117 s, takes the pids of everything below the harness, signals it, and looks for survivors.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers.cli import REPO, harness_process
from tests.helpers.processes import children, descendants, stderr_file, still_running, wait_for

HANG_TIMEOUT_S = 117  # the hung call would hold the run this long if a signal did not cut it
PROMPT_S = 30.0  # a generous bound on a loaded machine, far below HANG_TIMEOUT_S
FIXTURE = {
    "command": "{python}",
    "args": ["-m", "harness.servers.mcp_fixture.server"],
    "timeout_s": HANG_TIMEOUT_S,
}
STUBBORN = {
    "command": "{python}",
    "args": [str(REPO / "tests/helpers/hostile_mcp.py"), "stubborn"],
    "timeout_s": HANG_TIMEOUT_S,
}
SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


def scenario(name: str, server: dict[str, Any], tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"signal.{name}",
        "category": "mcp",
        "mcp_servers": {"codeindex": server},
        "tools": [{"mcp": "codeindex"}],
        "messages": [{"role": "user", "content": f"Signal test {name}: call {tool} with {args}."}],
        "expect": {"calls": [{"name": f"mcp__codeindex__{tool}", "args": args}]},
        "limits": {"max_turns": 2},
    }


QUICK = scenario("first_quick", FIXTURE, "flaky", {"mode": "ok"})
HANG = scenario("then_hang", FIXTURE, "flaky", {"mode": "hang"})
HANG_TOO = scenario("hang_too", FIXTURE, "flaky", {"mode": "hang"})
STUCK = scenario("stuck", STUBBORN, "echo", {"text": "hello"})


class Run:
    """``harness run --mode live`` on ``sim-openai``, started in a test's folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.process: subprocess.Popen[bytes] | None = None
        self.below: list[int] = []  # what was running below the harness when last looked at

    def start(self, scenarios: list[dict[str, Any]], *extra: str) -> subprocess.Popen[bytes]:
        (self.folder / "suite.yaml").write_text(yaml.safe_dump(scenarios, sort_keys=False))
        with (self.folder / "output.log").open("wb") as output:
            self.process = harness_process(
                "run", "--mode", "live", "-t", "sim-openai", "--scenarios", self.folder / "suite.yaml",
                "--out", self.folder / "out", *extra,
                output=output,
            )  # fmt: skip
        return self.process

    def hung(self, count: int = 1) -> list[int]:
        """Wait until ``count`` MCP servers below the harness are hung in a call (each says so
        on its stderr); then every process below the harness."""
        assert self.process is not None
        pid = self.process.pid
        wait_for(
            lambda: sum(b"hang requested" in stderr_file(p) for p in descendants(pid)) >= count,
            120,
            f"{count} MCP server(s) hung in a call",
        )
        self.below = descendants(pid)
        return self.below

    def ended(self, within: float = PROMPT_S) -> tuple[int, float]:
        """The harness's exit code and how long it took to exit from now."""
        assert self.process is not None
        begun = time.monotonic()
        code = self.process.wait(timeout=within)
        return code, time.monotonic() - begun

    def output(self) -> str:
        return (self.folder / "output.log").read_text(errors="replace")

    def reports(self) -> list[dict[str, Any]]:
        """The report.json of each run folder written."""
        return [json.loads(p.read_text()) for p in sorted((self.folder / "out").glob("runs/*/report.json"))]


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    """A :class:`Run`; whatever the test left running is killed after it."""
    started = Run(tmp_path)
    yield started
    if started.process is not None:
        started.process.kill()
        started.process.wait()
    for pid in still_running(started.below, within=0):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_cuts_a_hung_mcp_call_stops_its_server_and_writes_the_reports(
    run: Run, sig: signal.Signals
) -> None:
    process = run.start([QUICK, HANG], "--concurrency", "1")
    below = run.hung()
    process.send_signal(sig)
    code, took = run.ended()
    assert code == 130, run.output()
    assert took < PROMPT_S, took
    assert still_running(below, within=10) == [], "left running after the harness exited"
    assert f"interrupted ({sig.name})" in run.output()
    (report,) = run.reports()  # with the run that finished (runs go in id order)
    assert [run["scenario"] for run in report["runs"]] == ["signal.first_quick"]


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_stops_forked_workers_and_their_mcp_servers(run: Run, sig: signal.Signals) -> None:
    process = run.start([HANG, HANG_TOO], "--processes", "2", "--concurrency", "2")
    below = run.hung(count=2)
    workers = children(process.pid)
    assert len(workers) == 2 and len(below) == 4  # two workers, each with its hung server
    process.send_signal(sig)
    code, _ = run.ended()
    assert code == 130, run.output()
    assert still_running(below, within=10) == [], "left running after the harness exited"
    assert len(run.reports()) == 1


def test_a_second_signal_exits_at_once_and_kills_a_server_that_ignores_sigterm(
    run: Run,
) -> None:
    """The first signal stops the run in order, which gives the stuck server's shutdown the MCP
    SDK's grace (stdin closed, SIGTERM, seconds of waiting); the second cuts that short: no
    reports, and the server, which only SIGKILL ends, is killed on the way out."""
    process = run.start([STUCK])
    below = run.hung()
    process.send_signal(signal.SIGTERM)
    wait_for(lambda: "interrupted (SIGTERM)" in run.output(), 20, "the first signal handled")
    process.send_signal(signal.SIGINT)
    code, _ = run.ended(within=10)
    assert code == 130
    assert still_running(below, within=10) == [], "left running after the harness exited"
    assert run.reports() == []  # it left at once, without writing them


def test_kill_9_of_the_parent_ends_the_forked_workers_and_their_servers(run: Run) -> None:
    process = run.start([HANG, HANG_TOO], "--processes", "2", "--concurrency", "2")
    below = run.hung(count=2)
    process.kill()
    process.wait()
    assert still_running(below, within=10) == [], "the workers or their MCP servers outlived kill -9"


def test_kill_9_during_a_forked_replay_ends_the_workers(tmp_path: Path) -> None:
    """The bundled suite replayed on every recorded target: over a thousand runs, two workers."""
    with (tmp_path / "output.log").open("wb") as log:
        process = harness_process("run", "--processes", "2", "--out", tmp_path / "out", output=log)
    try:
        workers = wait_for(lambda: len(children(process.pid)) == 2 and children(process.pid), 60, "workers")
    finally:
        process.kill()
        process.wait()
    assert still_running(workers, within=5) == [], "the replay workers outlived their parent"
