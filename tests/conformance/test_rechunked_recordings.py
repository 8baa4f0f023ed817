"""Every committed streamed response, re-sliced into chunks of 1 to 16 bytes and at every line end,
assembles to the same calls, text and finish reason as in one piece (`harness audit --rechunk`);
every streamed real-world case (a binary event stream in its bytes) to its expected block."""

import json
from pathlib import Path
from typing import Any

import pytest

from harness.agent.rechunk import assembled, sweep
from harness.analysis.audit import audit_paths
from harness.providers import adapter_class
from tests.helpers.realworld import cases, wire_body

REPO = Path(__file__).resolve().parents[2]
FOLDERS = sorted(
    [
        *(REPO / "cassettes").glob("*stream*"),
        *(REPO / "examples" / "cassettes").glob("*stream*"),
        REPO / "tests" / "data" / "realworld",
    ]
)


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_every_recorded_stream_assembles_the_same_however_it_is_cut(folder: Path) -> None:
    entries = [e for e in audit_paths([folder], rechunk=16) if e.stream and e.wire_format]
    assert entries, f"no streamed response under {folder}"
    broken = [
        (e.source, f["detail"]) for e in entries for f in e.findings if f["check_id"] == "stream.rechunk"
    ]
    assert broken == []


STREAMS = [c for c in cases() if c["response"]["stream"] and c["response"]["status"] < 400]


@pytest.mark.parametrize("case", STREAMS, ids=[c["id"] for c in STREAMS])
def test_every_streamed_case_assembles_its_expected_block_however_it_is_cut(case: dict[str, Any]) -> None:
    adapter = adapter_class(case["wire_format"])()
    body = wire_body(case)
    data = body if isinstance(body, bytes) else body.encode("utf-8")
    expected = case["expected"]
    calls = tuple(
        (c["name"], json.dumps(c["arguments"], sort_keys=True), c["id"]) for c in expected["tool_calls"]
    )
    assert assembled(adapter.parse_chunks([data])) == (calls, expected["text"], expected["finish_reason"])
    assert sweep(data, adapter.parse_chunks, 16) == []
