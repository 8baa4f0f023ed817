"""Every property test of the unit tier, at full strength. The unit tier runs each property on a
few examples (the ``unit`` hypothesis profile, ``tests/conftest.py``) to stay fast; here the same
tests run under the ``thorough`` profile, in a pytest of their own so that the profile is active
before their settings are built."""

from __future__ import annotations

import re
import subprocess
import sys

from hypothesis import settings

from tests.helpers.cli import REPO


def test_every_unit_property_holds_under_the_thorough_profile() -> None:
    full = settings.get_profile("thorough").max_examples
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "tests/unit",
            "-m",
            "hypothesis",
            "--hypothesis-profile=thorough",
            "--hypothesis-show-statistics",
            "-q",
            "-p",
            "no:randomly",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, out.stdout[-5000:] + out.stderr[-2000:]
    passed = re.search(r"(\d+) passed", out.stdout)
    assert passed, out.stdout[-2000:]
    # one block of statistics a property: each ran its full budget, or all there was to run
    blocks = re.split(r"^(?=tests/unit/\S+:$)", out.stdout.split(" Hypothesis Statistics ")[-1], flags=re.M)
    stopped = [b for b in blocks[1:] if f"max_examples={full}" in b or "nothing left to do" in b]
    assert len(stopped) == len(blocks) - 1 == int(passed[1]) > 0, out.stdout[-5000:]
