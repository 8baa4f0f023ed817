"""Every committed streamed response, re-sliced into chunks of 1 to 16 bytes and at every line end,
assembles to the same calls, text and finish reason as in one piece (`harness audit --rechunk`)."""

from pathlib import Path

import pytest

from harness.analysis.audit import audit_paths

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
