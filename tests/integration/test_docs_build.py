"""The documentation site builds with ``mkdocs build --strict``: every page in the nav, every link
and anchor between pages resolving (mkdocs.yml turns each of those warnings into a failure)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers.cli import REPO


def test_the_docs_build_strict(tmp_path: Path) -> None:
    site = tmp_path / "site"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(REPO / "mkdocs.yml"),
            "-d",
            str(site),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    pages = sorted(p.stem for p in (REPO / "docs").glob("*.md"))
    built = sorted("index" if p.parent == site else p.parent.name for p in site.glob("**/index.html"))
    assert [p for p in pages if p not in built] == []
