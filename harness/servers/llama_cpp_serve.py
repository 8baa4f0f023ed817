"""``python -m llama_cpp.server`` with ggml's extra buffer types off.

ggml repacks a model's weights into "extra buffer types" for faster CPU kernels; on a CPU with
AMX (Intel Sapphire Rapids and later) that includes its AMX kernels, which crash with a
segmentation fault under some hypervisors that advertise AMX (seen here: llama-cpp-python
0.3.36 and llama-server at model load, in ``ggml_backend_amx_mul_mat``). llama.cpp's
``use_extra_bufts`` model parameter turns them off (llama-server: ``--no-repack``), but
llama-cpp-python's server has no option for it, so this module sets it in the default model
parameters, then runs the server with the arguments it was given. Used by
:func:`harness.servers.local.local_server` on such a CPU only (:func:`amx_cpu`).
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from typing import Any


def amx_cpu(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this machine's CPU says it has AMX (Linux's ``amx_tile`` flag)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(line.startswith("flags") and " amx_tile" in line for line in text.splitlines())


def main(argv: list[str]) -> None:
    import llama_cpp.llama_cpp as low

    default = low.llama_model_default_params

    def without_extra_buffers() -> Any:
        params = default()
        params.use_extra_bufts = False
        return params

    low.llama_model_default_params = without_extra_buffers
    sys.argv = ["llama_cpp.server", *argv]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
