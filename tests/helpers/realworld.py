"""Access to the real recorded provider traffic kept in ``tests/data/realworld``.

The data is a verbatim copy of responses recorded by public projects in their own
test suites; ``tests/data/realworld/PROVENANCE.md`` names every source and its licence.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REALWORLD = Path(__file__).resolve().parents[1] / "data" / "realworld"


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
