"""Report sections kept in a temporary file: a report over any number of runs holds neither its
per-run summaries, nor its per-target sections, nor its migration groups' differences in memory.

When the report is built to be written (the command line, :func:`harness.reports.write_reports`),
``report.runs`` is a :class:`RunSpool`, each migration group's ``differences`` a :class:`Spool`
(a verdict per target for each scenario that differs), and, over records read from a results file (a
:class:`~harness.results.RecordLog`, a target's runs together), ``report.summary.targets`` and
``report.capabilities.targets`` are :class:`KeyedSpool` s. Otherwise (``RunResult.report``) they
are a plain list and dicts. A spool is a sequence or a mapping like them, and writers only read
them.
"""

from __future__ import annotations

import tempfile
from array import array
from collections.abc import Iterable, Iterator, MutableMapping, Sequence
from typing import IO, Any, Generic, TypeVar, overload

import msgspec

from harness.reports.report import RunSummary
from harness.reports.safe import encode

T = TypeVar("T")


class _File:
    """Values encoded one after another into a temporary file (deleted with it), read back by
    their place."""

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None  # opened by the first value: an empty spool holds no file

    def _write(self, value: Any) -> int:
        """Write ``value``; returns where it ends."""
        if self._file is None:
            self._file = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the spool)
        self._file.seek(0, 2)
        self._file.write(encode(value))
        return self._file.tell()

    def _read(self, start: int, end: int) -> bytes:
        assert self._file is not None  # a place was given: a value was written
        self._file.seek(start)
        return self._file.read(end - start)


class Spool(_File, Sequence[T], Generic[T]):
    """Values of type ``kind`` appended one at a time, each encoded once to a temporary file
    (deleted when the spool is), read back when asked for.

    Example::

        differences = Spool(ScenarioDifference, group_differences)
        assert list(differences) == group_differences
    """

    def __init__(self, kind: type[T], values: Iterable[T] = ()) -> None:
        super().__init__()
        self._decoder = msgspec.json.Decoder(kind)
        self._ends = array("Q")
        for value in values:
            self.append(value)

    def append(self, value: T) -> None:
        self._ends.append(self._write(value))

    def __len__(self) -> int:
        return len(self._ends)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("spool index out of range")
        return self._decoder.decode(self._line(index))

    def __iter__(self) -> Iterator[T]:
        for index in range(len(self)):
            yield self._decoder.decode(self._line(index))

    def _line(self, index: int) -> bytes:
        return self._read(self._ends[index - 1] if index else 0, self._ends[index])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {len(self)}>"


class RunSpool(Spool[RunSummary]):
    """Run summaries appended one at a time (``report.runs``: never made a list, see
    :func:`~harness.reports.safe.spooled`).

    Example::

        spool = RunSpool()
        spool.append(run_summary(record))
        assert spool[0].target == record.target.name and len(spool) == 1
    """

    def __init__(self) -> None:
        super().__init__(RunSummary)


class KeyedSpool(_File, MutableMapping[str, T], Generic[T]):
    """Values of type ``kind`` set by name, once each, names in ascending order (as report.json
    lists them), each encoded once to a temporary file and read back when asked for (the last one
    read kept: a writer reads a target's section for each of its runs).

    Example::

        targets = KeyedSpool(TargetSummary)
        targets["sim-openai"] = summary
        assert targets["sim-openai"] == summary and list(targets) == ["sim-openai"]
    """

    def __init__(self, kind: type[T]) -> None:
        super().__init__()
        self._decoder = msgspec.json.Decoder(kind)
        self._places: dict[str, tuple[int, int]] = {}
        self._end = 0
        self._last: tuple[str, T] | None = None

    def __setitem__(self, name: str, value: T) -> None:
        last = next(reversed(self._places), None)
        if last is not None and name <= last:
            raise ValueError(f"{name!r} set after {last!r}: a spool takes each name once, in ascending order")
        start, self._end = self._end, self._write(value)
        self._places[name] = (start, self._end)

    def __getitem__(self, name: str) -> T:
        if self._last is not None and self._last[0] == name:
            return self._last[1]
        value = self._decoder.decode(self._read(*self._places[name]))
        self._last = (name, value)
        return value

    def __delitem__(self, name: str) -> None:
        raise TypeError("a spool's values are kept until it is deleted")

    def __iter__(self) -> Iterator[str]:
        return iter(self._places)

    def __len__(self) -> int:
        return len(self._places)

    def __contains__(self, name: object) -> bool:
        return name in self._places

    def __repr__(self) -> str:
        return f"<KeyedSpool of {len(self)}>"
