"""Re-chunked stream replay: the sweep catches a parser that breaks at chunk boundaries, and the
harness's own incremental reader assembles every slicing as the whole body."""

import json
from collections.abc import Sequence

from harness.agent.rechunk import sweep
from harness.model import ParsedTurn, ToolCall
from harness.providers import adapter_class
from harness.providers.framing import StreamReader, decode_stream

ARGS = json.dumps({"city": "Zürich 🌤", "note": "a\\r\\nb"})
CHUNKS = [
    {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
    {
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": ""},
                        }
                    ]
                },
            }
        ]
    },
    {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": ARGS[:9]}}]}}]},
    {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": ARGS[9:]}}]}}]},
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
]
BODY = "".join(f"data: {json.dumps(c, ensure_ascii=False)}\r\n\r\n" for c in CHUNKS) + "data: [DONE]\r\n\r\n"


def naive(chunks: Sequence[bytes]) -> ParsedTurn:
    """A deliberately naive client: each chunk decoded on its own and split into lines on its
    own, a line cut by a chunk boundary dropped."""
    calls: dict[int, dict[str, str]] = {}
    finish = None
    for chunk in chunks:
        for line in chunk.decode("utf-8", "replace").splitlines():
            if not line.startswith("data: {"):
                continue
            try:
                event = json.loads(line[6:])
            except ValueError:
                continue
            choice = event["choices"][0]
            finish = choice.get("finish_reason") or finish
            for delta in choice["delta"].get("tool_calls", []):
                call = calls.setdefault(delta["index"], {"name": "", "arguments": "", "id": ""})
                call["id"] = delta.get("id", call["id"])
                call["name"] += delta.get("function", {}).get("name") or ""
                call["arguments"] += delta.get("function", {}).get("arguments") or ""
    tool_calls = []
    for index, call in sorted(calls.items()):
        try:
            arguments = json.loads(call["arguments"])
        except ValueError:
            arguments = None
        tool_calls.append(ToolCall(call["name"], arguments, call["arguments"], call["id"], call["id"], index))
    return ParsedTurn(tool_calls=tool_calls, finish_reason=finish)


def test_the_sweep_catches_a_parser_that_breaks_at_chunk_boundaries() -> None:
    differences = sweep(BODY, naive, max_size=8)
    assert differences and {d.slicing for d in differences} >= {"1", "2", "3"}
    one = next(d for d in differences if d.slicing == "1")
    assert one.offset is not None and 0 < one.offset < len(BODY.encode())
    assert one.expected[0][0][0] == "get_weather" and one.got != one.expected
    assert "into 1-byte chunks" in one.describe() and f"byte {one.offset}" in one.describe()
    assert not [d for d in differences if d.slicing == "frames"]  # whole frames were never the problem


def test_the_adapter_assembles_every_slicing_as_the_whole_body() -> None:
    adapter = adapter_class("openai-chat")()
    assert sweep(BODY, adapter.parse_chunks, max_size=40) == []
    whole = adapter.parse_chunks([BODY.encode()])
    assert whole.tool_calls[0].arguments == json.loads(ARGS) and whole.finish_reason == "tool_calls"


def test_the_reader_holds_a_cr_until_it_knows_whether_lf_follows() -> None:
    reader = StreamReader()
    for piece in (b'data: {"a": 1}\r', b"\n\r", b'\ndata: {"a": 2}\r\n\r\n'):
        reader.feed(piece)
    assert reader.close() == decode_stream('data: {"a": 1}\r\n\r\ndata: {"a": 2}\r\n\r\n')
