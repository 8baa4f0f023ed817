"""The report's per-run summaries kept in a temporary file: a report over any number of runs
holds none of them in memory.

``report.runs`` is a :class:`RunSpool` when the report is built to be written (the command
line, :func:`harness.reports.write_reports`), and a plain list otherwise (``RunResult.report``).
Both are sequences of :class:`~harness.reports.report.RunSummary`, and writers only iterate them.
"""

from __future__ import annotations

import tempfile
from array import array
from collections.abc import Iterator, Sequence
from typing import overload

import msgspec

from harness.reports.report import RunSummary
from harness.reports.safe import encode

_DECODER = msgspec.json.Decoder(RunSummary)


class RunSpool(Sequence[RunSummary]):
    """Run summaries appended one at a time, each encoded once to a temporary file (deleted when
    the spool is), read back when asked for.

    Example::

        spool = RunSpool()
        spool.append(run_summary(record))
        assert spool[0].target == record.target.name and len(spool) == 1
    """

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the spool)
        self._ends = array("Q")

    def append(self, summary: RunSummary) -> None:
        self._file.seek(0, 2)
        self._file.write(encode(summary))
        self._ends.append(self._file.tell())

    def __len__(self) -> int:
        return len(self._ends)

    @overload
    def __getitem__(self, index: int) -> RunSummary: ...

    @overload
    def __getitem__(self, index: slice) -> list[RunSummary]: ...

    def __getitem__(self, index: int | slice) -> RunSummary | list[RunSummary]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("run summary index out of range")
        return _DECODER.decode(self._line(index))

    def __iter__(self) -> Iterator[RunSummary]:
        for index in range(len(self)):
            yield _DECODER.decode(self._line(index))

    def _line(self, index: int) -> bytes:
        start = self._ends[index - 1] if index else 0
        self._file.seek(start)
        return self._file.read(self._ends[index] - start)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<RunSpool of {len(self)} run summaries>"
