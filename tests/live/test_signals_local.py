"""Live tier: a signal to the harness stops the real local model server it started.

``harness local serve`` and ``harness run --live`` on a local target start llama-cpp-python's
server in its own session, out of reach of the terminal's signals: SIGINT, SIGTERM (CI runners,
``timeout``) and SIGHUP must each stop it, and none may leave it running under init. Needs the
[local] extra (and minutes on a busy machine: each start loads the model).
"""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.cli import harness_process
from tests.helpers.processes import descendants, still_running, wait_for

pytestmark = pytest.mark.live

SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]
STARTUP_S = 300.0


@pytest.fixture(autouse=True)
def _needs_the_local_extra() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        if os.environ.get("HARNESS_REQUIRE_LIVE"):
            pytest.fail("HARNESS_REQUIRE_LIVE is set but llama_cpp is not installed")
        pytest.skip("needs the [local] extra: pip install -e '.[local]'")


class Started:
    """A harness command started in a test's folder, its output in ``output.log``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.process: subprocess.Popen[bytes] | None = None
        self.below: list[int] = []

    def start(self, *args: str | Path) -> subprocess.Popen[bytes]:
        with (self.folder / "output.log").open("wb") as output:
            self.process = harness_process(*args, output=output)
        return self.process

    def output(self) -> str:
        return (self.folder / "output.log").read_text(errors="replace")

    def model_server(self) -> list[int]:
        """Wait for the llama-cpp-python server below the harness; then everything below it."""
        assert self.process is not None
        pid = self.process.pid

        def server() -> bool:
            # llama_cpp.server, or its wrapper on a CPU with AMX (harness.servers.llama_cpp_serve)
            return any(re.search(rb"llama_cpp[._]serve", _cmdline(p)) for p in descendants(pid))

        wait_for(server, STARTUP_S, "the local model server to start")
        self.below = descendants(pid)
        return self.below


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@pytest.fixture
def started(tmp_path: Path) -> Iterator[Started]:
    """A :class:`Started`; whatever the test left running is killed after it."""
    command = Started(tmp_path)
    yield command
    if command.process is not None:
        command.process.kill()
        command.process.wait()
    for pid in still_running(command.below, within=0):
        os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_to_local_serve_stops_the_model_server(started: Started, sig: signal.Signals) -> None:
    process = started.start("local", "serve")
    below = started.model_server()
    wait_for(lambda: "Ctrl-C stops it." in started.output(), STARTUP_S, "the server to answer")
    process.send_signal(sig)
    assert process.wait(timeout=60) == 0, started.output()
    assert "stopped" in started.output()
    assert still_running(below, within=30) == [], "the local model server outlived the harness"


def test_sigterm_to_a_live_run_on_a_local_target_stops_the_model_server(
    started: Started, tmp_path: Path
) -> None:
    process = started.start(
        "run", "--live", "-t", "local-gemma3-270m", "-s", "weather.single.paris", "--repeat", "5",
        "--out", tmp_path / "out",
    )  # fmt: skip
    below = started.model_server()
    wait_for(lambda: "weather.single.paris" in started.output(), STARTUP_S, "a run to finish")
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=120) == 130, started.output()
    assert still_running(below, within=30) == [], "the local model server outlived the harness"
    assert list((tmp_path / "out").glob("runs/*/report.json")), "no report of the runs that finished"
