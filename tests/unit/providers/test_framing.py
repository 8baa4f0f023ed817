"""The SSE decoder's plain path (most providers' streams, decoded without the line state machine)
gives exactly what the state machine gives, for any stream: plain, odd, or broken."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from harness.providers import framing
from tests.unit.providers.test_properties import BUDGET, JSON


def by_lines(text: str) -> framing.DecodedStream:
    """The state machine alone, a line at a time."""
    sse = framing._Sse()
    for line in framing.lines(text):
        sse.line(line)
    return sse.finish(text.endswith("\n"))


PAYLOAD = st.one_of(
    JSON.map(lambda value: json.dumps(value, ensure_ascii=False)),
    JSON.map(json.dumps),
    st.sampled_from(
        ["[DONE]", " [DONE] ", "", "{", "not json", '{"a": NaN}', '"\\ud83d"', "[" * 250 + "]" * 250, "1e999"]
    ),
)
LINE = st.one_of(
    PAYLOAD.map(lambda p: f"data: {p}"),
    PAYLOAD.map(lambda p: f"data:{p}"),
    st.sampled_from(
        ["event: delta", "event:", "event:  error ", ": ping", "id: 3", "retry: 10", "stray", " ", "data"]
    ),
)
EVENT = st.tuples(st.sampled_from(["", "event: message_start\n", "event:\n", "event: x \n"]), PAYLOAD).map(
    lambda pair: f"{pair[0]}data: {pair[1]}\n\n"
)
PLAIN = st.lists(EVENT, max_size=6).map("".join)
ODD = st.lists(LINE, max_size=8).flatmap(
    lambda lines: st.sampled_from(["\n", "\r\n", "\r"]).map(lambda end: end.join(lines) + end)
)


@BUDGET
@given(st.one_of(PLAIN, ODD, st.tuples(PLAIN, st.sampled_from(["", "\n", "x", "data: {}\n"])).map("".join)))
def test_the_plain_path_gives_what_the_state_machine_gives(text: str) -> None:
    assert repr(framing.decode_sse(text)) == repr(by_lines(text))


def test_a_plain_stream_takes_the_plain_path() -> None:
    text = 'data: {"a": 1}\n\nevent: e\ndata: [1]\n\ndata: [DONE]\n\n'
    plain = framing._plain_sse(text)
    assert plain is not None and repr(plain) == repr(by_lines(text))
    assert [(e.event, e.data) for e in plain.events] == [(None, {"a": 1}), ("e", [1])] and plain.done_sentinel
    for odd in (
        text.replace("\n", "\r\n"),
        ": ping\n\n" + text,
        text + "data: {}",
        text.replace("1]", "NaN]"),
    ):
        assert framing._plain_sse(odd) is None
