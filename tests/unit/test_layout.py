"""The package's layout stays as the house wants it: a short top level, and every module of it and
every package in the import-linter layers (a module left out of them would escape the contract)."""

from __future__ import annotations

import tomllib
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[2] / "harness"
TOP_LEVEL_LIMIT = 18
"""Modules at the top of harness/, besides the package's own __init__ and __main__."""


def layered() -> set[str]:
    config = tomllib.loads((HARNESS.parent / "pyproject.toml").read_text(encoding="utf-8"))
    (layers,) = [c["layers"] for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return {name.strip() for layer in layers for name in layer.split("|")}


def test_the_top_level_holds_only_the_core() -> None:
    modules = sorted(p.stem for p in HARNESS.glob("*.py") if p.stem not in ("__init__", "__main__"))
    assert len(modules) <= TOP_LEVEL_LIMIT, modules


def test_every_top_level_module_and_package_is_in_a_layer() -> None:
    names = {f"harness.{p.stem}" for p in HARNESS.glob("*.py") if p.stem != "__init__"}
    names |= {f"harness.{p.parent.name}" for p in HARNESS.glob("*/__init__.py")}
    assert names - layered() == set(), "add each to [tool.importlinter] layers in pyproject.toml"
