"""Where finished runs go: the results file, a line per run as it ends, or memory."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, cast

from harness.errors import DiskFullError
from harness.records import RunRecord, decode_record
from harness.results import RecordLog
from harness.results.store import Store, resolve_with, store_path, stored_line
from harness.runner.plan import OnEnd, OnResult, RunEnd


class Results:
    """Where finished runs go: each appended to the results file as its line, what it shares with
    other runs to the store beside it (:mod:`harness.results.store`; then only its key and place
    are kept, in a :class:`RecordLog`), or, without a file, kept in memory. A full disk stops the
    run (``stop`` is set) with a :class:`DiskFullError`: the lines written stay."""

    def __init__(
        self,
        path: Path | None,
        resumed: bool,
        on_result: OnResult | None,
        replay: bool = False,
        stop: threading.Event | None = None,
        on_end: OnEnd | None = None,
    ):
        self.on_result, self.on_end = on_result, on_end
        # each line reaches the file as its run ends, so a killed run resumes where it stopped;
        # a replay's lines go a megabyte at a time (a replayed run lost with them costs nothing),
        # after the values they refer to (written to the store by target, 16 MB at most kept)
        self.buffering = 1 << 20
        self.flush_each = not replay
        self.waiting: list[bytes] = []  # lines not yet written, and their bytes
        self.held = 0
        self.lock = threading.Lock()
        self.kept: list[RunRecord] = []
        self.store = Store(store_path(path)) if path is not None else None
        # the records read back with the store written: its index of the values serves them
        self.log = RecordLog(path, self.store) if path is not None else None
        self.path, self.resumed, self.stop = path, resumed, stop
        self.out: IO[bytes] | None = None
        self.offset = self.number = 0
        self.full: DiskFullError | None = None  # once the disk is full, nothing more is written

    def __enter__(self) -> Results:
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.resumed and self.path.exists():  # the new lines follow the ones already there
                self._mend(RecordLog.open(self.path, warn=False))
            self.out = self.path.open("ab" if self.resumed else "wb")
            assert self.store is not None
            if not self.resumed:
                self.store.path.unlink(missing_ok=True)
            self.store.open()
        return self

    def _mend(self, done: RecordLog) -> None:
        """End a killed run's results file with a whole line, as :meth:`RecordLog.open` read it: a
        last line cut short goes (its run goes again), a whole one without its line end gets it."""
        assert self.path is not None
        self.offset, self.number = done.end, done.end_line
        with self.path.open("r+b") as tail:
            tail.truncate(done.end)
            if done.end and (tail.seek(done.end - 1), tail.read(1))[1] != b"\n":
                tail.write(b"\n")
                self.offset += 1

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if self.out is not None:
            try:
                assert self.store is not None
                if self.full is None:
                    self._flush()  # a replay's last lines are written here
                self.store.close()
                self.out.close()
            except OSError as error:
                if kind is None and DiskFullError.is_full(error):
                    raise self._full() from error
                if kind is None:  # else the run already ends with its own error
                    raise

    def _full(self) -> DiskFullError:
        """The disk is full: the run stops, and nothing more is written."""
        if self.stop is not None:
            self.stop.set()
        self.full = self.full or DiskFullError(str(self.path), "the lines written before it are kept")
        return self.full

    def keep(self, record: RunRecord) -> None:
        """A run finished in this process."""
        stored = stored_line(record) if self.out is not None else None  # encoded before the lock
        with self.lock:
            if stored is None:
                self.kept.append(record)
            else:
                self._write(*stored, record.key)
        if self.on_result is not None:
            self.on_result(record)
        if self.on_end is not None:
            self.on_end(RunEnd.of(record))

    def keys(self) -> list[tuple[str, str, int]]:
        """The key of every run kept so far."""
        with self.lock:
            return self.log.run_keys() if self.log is not None else [r.key for r in self.kept]

    @property
    def decodes(self) -> bool:
        """Whether each run a forked worker sends is decoded here (kept in memory, or given to
        ``on_result``): it then needs every value its line refers to, not only the new ones."""
        return self.out is None or self.on_result is not None

    def keep_line(self, line: bytes, end: RunEnd, shared: dict[bytes, bytes]) -> None:
        """A run a forked worker finished, as its results line, what the line refers to
        (:func:`~harness.results.store.stored_line`) and its end (key, outcome, score): decoded
        only when it is kept in memory or ``on_result`` wants it (``on_end`` needs only its end)."""
        key = end[:3]
        record = decode_record(resolve_with(line, shared)) if self.decodes else None
        with self.lock:
            if self.out is None:
                self.kept.append(cast(RunRecord, record))
            else:
                self._write(line, shared, key)
        if self.on_result is not None:
            self.on_result(cast(RunRecord, record))
        if self.on_end is not None:
            self.on_end(end)

    def _write(self, line: bytes, shared: dict[bytes, bytes], key: tuple[str, str, int]) -> None:
        assert self.out is not None and self.log is not None and self.store is not None
        if self.full is not None:  # a line after a failed one could leave a cut line mid-file
            raise self.full
        try:
            self.store.add(shared, key[0])
            self.waiting.append(line + b"\n")
            self.held += len(line) + 1
            if self.flush_each or self.held >= self.buffering or self.store.held >= 16 * self.buffering:
                self._flush()
        except OSError as error:
            if DiskFullError.is_full(error):
                raise self._full() from error
            raise
        self.number += 1
        self.log.add(key, self.offset, len(line) + 1, self.number)
        self.offset += len(line) + 1

    def _flush(self) -> None:
        """The values kept for the store, then the lines that refer to them (each whole: a line
        never reaches the file without its end, nor before its values)."""
        assert self.out is not None and self.store is not None
        self.store.flush()
        self.out.write(b"".join(self.waiting))
        self.out.flush()
        self.waiting.clear()
        self.held = 0

    def records(self) -> Sequence[RunRecord]:
        """The records, sorted by (target, scenario, repeat)."""
        return self.log if self.log is not None else sorted(self.kept, key=lambda r: r.key)
