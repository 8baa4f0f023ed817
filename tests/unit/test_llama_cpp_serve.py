"""On a CPU with AMX, both local model servers start with ggml's extra buffer types off (its AMX
kernels crash under some hypervisors); elsewhere they start as before. The live tier runs them."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.servers import llama_cpp_serve, local

FLAGS = "flags\t\t: fpu vme sse4_2 avx2 avx512f {}avx512_fp16\n"


@pytest.mark.parametrize(("extra", "amx"), [("amx_bf16 amx_tile amx_int8 ", True), ("", False)])
def test_amx_is_read_off_the_cpu_flags(tmp_path: Path, extra: str, amx: bool) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nmodel name\t: a CPU named amx_tile\n{FLAGS.format(extra)}")
    assert llama_cpp_serve.amx_cpu(cpuinfo) is amx
    assert llama_cpp_serve.amx_cpu(tmp_path / "missing") is False


@pytest.mark.parametrize("amx", [True, False])
def test_each_server_is_started_without_extra_buffers_only_on_an_amx_cpu(
    monkeypatch: pytest.MonkeyPatch, amx: bool
) -> None:
    monkeypatch.setattr(llama_cpp_serve, "amx_cpu", lambda: amx)
    monkeypatch.setattr("harness.servers.llamacpp.llama_server_binary", lambda: Path("/opt/llama-server"))
    model = local.MODELS["gemma3-270m"]
    python = local._command(model, "llama-cpp-python", Path("m.gguf"), 8000)
    server = local._command(model, "llama-server", Path("m.gguf"), 8000)
    assert python[2] == ("harness.servers.llama_cpp_serve" if amx else "llama_cpp.server")
    assert ("--no-repack" in server) is amx
