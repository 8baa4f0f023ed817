"""Access to the real recorded provider traffic kept in ``tests/data/realworld``.

The data is a verbatim copy of responses recorded by public projects in their own
test suites; ``tests/data/realworld/PROVENANCE.md`` names every source and its licence.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

REALWORLD = Path(__file__).resolve().parents[1] / "data" / "realworld"


UNRECORDED: dict[str, str] = {
    "gemini-interactions": "built from the published reference; no public recording of it exists yet",
}
"""Registered wire formats with no recorded traffic in the corpus yet, and why: the tests that hold
every format to its real cases skip these (and fail once cases arrive, so the entry goes)."""


def all_cases() -> list[dict[str, Any]]:
    """Every case of the corpus, of any wire format, sorted by id."""
    return [json.loads(path.read_text()) for path in sorted((REALWORLD / "cases").glob("*/*.json"))]


def cases(*wire_formats: str) -> list[dict[str, Any]]:
    """The cases of the given wire formats, or (none given) of every format the harness has an
    adapter for: a format's cases are tested as soon as its adapter is registered."""
    from harness.providers import formats

    wanted = set(wire_formats or formats())
    return [case for case in all_cases() if case["wire_format"] in wanted]


def wire_quirks(case: dict[str, Any]) -> list[str]:
    """The case's quirks about the wire (not about how it was recorded), without ``:detail``."""
    return [
        q.split(":")[0] if not q.startswith("reasoning_field") else q
        for q in case["quirks"]
        if not q.startswith("recording:")
    ]


def wire_body(case: dict[str, Any]) -> str | bytes:
    """A case's body as it went on the wire: the bytes of a binary one (the case keeps their base64)."""
    response = case["response"]
    if response.get("body_encoding") == "base64":
        return base64.b64decode(response["body"])
    body: str = response["body"]
    return body
