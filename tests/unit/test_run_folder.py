"""Run folders (``<out>/runs/<id>/``) and the results sink: a killed run's file is mended for
its resume."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.records import RecordLog
from harness.runner import _Results
from tests.unit.test_records import record
from tests.unit.test_results_input import whole


@pytest.mark.parametrize(
    ("tail", "kept"),
    [(b"", 2), (whole(2)[:300], 2), (whole(2)[:-1], 3)],
    ids=["two lines", "a third cut short", "a third without its line end"],
)
def test_a_resumed_run_appends_after_the_last_whole_line(tmp_path: Path, tail: bytes, kept: int) -> None:
    path = tmp_path / "results.jsonl"
    path.write_bytes(whole(0) + whole(1) + tail)
    with _Results(path, True, None) as results:
        results.keep(record(repeat=9))
    log = RecordLog.open(path)
    assert [key[2] for key in log.run_keys()] == [*range(kept), 9]
    assert path.read_bytes() == b"".join(whole(k) for k in range(kept)) + whole(9)
    assert [r.repeat for r in results.records()] == [9] and results.records()[0] == record(repeat=9)
