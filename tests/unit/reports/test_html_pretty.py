"""report.html indents JSON bodies with msgspec (the standard library's indenting encoder is pure
Python, the most of the page's writing time): the text is the standard encoder's, whatever the
value, and what msgspec cannot read back is indented by the standard encoder."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.reports.html import pretty
from harness.reports.safe import DEPTH_LIMIT


class Odd:
    def __str__(self) -> str:
        return "odd"


@pytest.mark.parametrize(
    "value",
    [
        {"a": [], "b": {}, "c": [1, {"d": None, "e": True}], "f": "é\n\t\"'\\"},
        {1: 2.5, "x": [1e100, -0.0, 1.5e-7, 10**30]},
        [float("nan"), float("inf")],  # not JSON: msgspec refuses it, the standard encoder writes it
        {"lone": "\ud83d"},  # UTF-8 cannot hold it
        {"odd": Odd()},  # written as its str()
        "text",
        None,
    ],
)
def test_pretty_is_the_standard_encoder_s_text(value: Any) -> None:
    assert pretty(value) == json.dumps(value, indent=1, ensure_ascii=False, default=str)


def test_pretty_elides_what_is_nested_too_deep() -> None:
    value: Any = "bottom"
    for _ in range(DEPTH_LIMIT + 5):
        value = [value]
    assert f"nested deeper than {DEPTH_LIMIT} levels: not shown" in pretty(value)
