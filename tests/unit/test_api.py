"""The library facade's keywords: ``select`` picks scenarios; its old name ``select_`` still
works for one release, with a DeprecationWarning."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import harness
from tests.helpers.cli import REPO


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    """Three real scenario files, of two categories."""
    for name in ("single/weather_paris.yaml", "single/time_tokyo.yaml", "parallel/weather_two_cities.yaml"):
        target = tmp_path / name
        target.parent.mkdir(exist_ok=True)
        shutil.copy(REPO / "scenarios" / name, target)
    return tmp_path


def test_select_keeps_the_scenarios_matching_an_id_glob_or_a_category(suite_dir: Path) -> None:
    every = [s.id for s in harness.load_scenarios(suite_dir)]
    assert len(every) == 3
    assert [s.id for s in harness.load_scenarios(suite_dir, select=["weather.*"])] == [
        i for i in every if i.startswith("weather.")
    ]
    assert [s.category for s in harness.load_scenarios(suite_dir, select=["parallel"])] == ["parallel"]


def test_select_underscore_is_a_deprecated_alias_of_select(suite_dir: Path) -> None:
    with pytest.warns(DeprecationWarning, match=r"select_=\.\.\.\) is deprecated: use select="):
        old = harness.load_scenarios(suite_dir, select_=["time.*"])
    assert old == harness.load_scenarios(suite_dir, select=["time.*"])
    assert [s.id for s in old] == ["time.single.tokyo"]
    with pytest.raises(TypeError, match="not both"):
        harness.load_scenarios(suite_dir, select=["time.*"], select_=["weather.*"])
