"""Wire JSON goes through msgspec's decoder first; what msgspec refuses goes to :mod:`json`.
For any text, plain, odd or broken, the answer (value, repairs, constants, or the problem named)
is what :mod:`json` alone gives."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.providers import _json
from tests.unit.providers.test_properties import BUDGET, JSON


class _Refusing:
    def decode(self, text: str) -> Any:
        raise msgspec.DecodeError("refused: json decides")


def outcome(text: str) -> str:
    try:
        decoded = _json.decode(text)
    except _json.JsonProblem as problem:
        return f"problem {problem.kind}"
    return repr((decoded.value, decoded.repaired, decoded.constants))


TEXT = st.one_of(
    JSON.map(lambda value: json.dumps(value, ensure_ascii=False)),
    JSON.map(json.dumps),
    st.sampled_from(
        [
            "",
            "{",
            "not json",
            '{"a": NaN, "b": -Infinity}',
            '"NaN"',
            '"\\ud83d"',
            '{"\\udc80": 1}',
            '"\udc80"',
            "[" * 250 + "]" * 250,
            "[" * 150 + "]" * 150,
            "1e999",
            "1" * 5000,
            "-0",
            " [1.5, 2] ",
        ]
    ),
)


@BUDGET
@given(TEXT)
def test_msgspec_first_gives_what_json_alone_gives(text: str) -> None:
    fast = outcome(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_json, "_fast", _Refusing())
        assert fast == outcome(text)


def test_a_raw_lone_surrogate_is_repaired_not_refused() -> None:
    decoded = _json.decode('{"a": "\udc80"}')
    assert decoded.value == {"a": "\ufffd"} and decoded.repaired == 1
