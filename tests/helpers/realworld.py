"""Access to the real recorded traffic in ``../shared/realworld`` (read in place, never copied)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

REALWORLD = Path(
    os.environ.get("HARNESS_REALWORLD", Path(__file__).resolve().parents[3] / "shared" / "realworld")
)


def cases(*wire_formats: str) -> list[dict[str, Any]]:
    """Every case of the given wire formats (all when none are given), sorted by id."""
    found = []
    for path in sorted((REALWORLD / "cases").glob("*/*.json")):
        case = json.loads(path.read_text())
        if not wire_formats or case["wire_format"] in wire_formats:
            found.append(case)
    return found


def wire_quirks(case: dict[str, Any]) -> list[str]:
    """The case's quirks about the wire (not about how it was recorded), without ``:detail``."""
    return [
        q.split(":")[0] if not q.startswith("reasoning_field") else q
        for q in case["quirks"]
        if not q.startswith("recording:")
    ]
