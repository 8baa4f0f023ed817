"""Results files: read in bounded memory whatever they hold, kept as a :class:`RecordLog` (a run
of any size holds no transcript in memory), merged from shards, and the run folders they live in.

Every reader of a results file goes through :func:`open_results` and one line reader: a path that
is no regular file, a NUL byte, an over-long line, bytes that are not UTF-8, JSON nested too deep
and a last line cut short (a warning: :class:`~harness.errors.CutLineWarning`) are each told by
file and line, never a crash or an unbounded read. Lines are decoded by
:data:`harness.records.DECODER`; both results formats of :data:`harness.records.READABLE` are
read.
"""

from __future__ import annotations

import heapq
import itertools
import json
import os
import socket
import stat
import sys
import time
import warnings
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, BinaryIO, overload

import msgspec

from harness.errors import ConfigError, CutLineWarning, DiskFullError
from harness.records import DECODER, READABLE, RESULT_SCHEMA, RunRecord
from harness.results.store import Store, store_path
from harness.results.store import merge as merge_stores


def read(path: str | Path) -> Iterator[RunRecord]:
    """The records of a results file, in file order; a bad line (a last line cut short among
    them) is a :class:`ConfigError` naming its line and what is wrong with it."""
    with open_results(path) as handle, Store(store_path(path)) as store:
        for number, _, line in _lines(handle, path):
            if line.strip():
                yield _decode_checked(store.resolve(line, f"{path}:{number}"), path, number)


def read_sorted(path: str | Path) -> list[RunRecord]:
    """The records of a results file sorted by (target, scenario, repeat)."""
    return sorted(read(path), key=lambda r: r.key)


# -- reading a results file: whatever the file holds, a clear error and bounded memory ---------

MAX_LINE_BYTES = 256 << 20
"""The longest results line read (one run's record with its whole transcript, rarely past a
megabyte): a longer one is refused, so a file that holds no lines cannot take all memory."""

_PIECE = 1 << 20  # a line is read at most this much at a time


def open_results(path: str | Path) -> BinaryIO:
    """``path`` opened to read, when it is a regular file: anything else (a folder, a device such
    as ``/dev/zero``, a FIFO, which would block its reader) is a :class:`ConfigError`. The file is
    opened without waiting for a writer, then checked."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device"
        raise ConfigError(f"{path}: {kind}, not a regular file: results are read from a file on disk")
    return os.fdopen(fd, "rb")


def _lines(handle: BinaryIO, path: str | Path) -> Iterator[tuple[int, int, bytes]]:
    """Each line of an open results file: its number, its offset and its bytes (with its line end
    when it has one), read a megabyte at a time. A line longer than :data:`MAX_LINE_BYTES` or
    holding a NUL byte (JSON text holds none: a file of zeros, as a crash or a failed copy leaves)
    is a :class:`ConfigError` as soon as it is seen, without reading the rest of it."""
    offset = 0
    for number in itertools.count(1):
        pieces = [handle.readline(_PIECE)]
        if not pieces[0]:
            return
        while len(pieces[-1]) == _PIECE and not pieces[-1].endswith(b"\n"):  # a line longer than a piece
            _refuse_nul(pieces, path, number)
            if len(pieces) * _PIECE >= MAX_LINE_BYTES:
                raise ConfigError(
                    f"{path}:{number}: a line longer than {MAX_LINE_BYTES >> 20} MiB: not a results line"
                )
            pieces.append(handle.readline(_PIECE))
        _refuse_nul(pieces, path, number)
        line = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        yield number, offset, line
        offset += len(line)


def _refuse_nul(pieces: list[bytes], path: str | Path, number: int) -> None:
    """A :class:`ConfigError` when the last piece read of line ``number`` holds a NUL byte."""
    column = pieces[-1].find(b"\0")
    if column >= 0:
        column += (len(pieces) - 1) * _PIECE + 1
        raise ConfigError(
            f"{path}:{number}: a NUL byte at column {column}: not a results file (JSON text holds "
            "none; a file of zeros is what a crash or a failed copy leaves)"
        )


def _decode_checked(line: bytes, path: str | Path, number: int) -> RunRecord:
    """The record of line ``number`` of ``path``; anything wrong with it is a
    :class:`ConfigError` naming the file, the line and what was expected."""
    record: RunRecord = _decoded(DECODER, line, path, number)
    if record.schema not in READABLE:
        raise _other_format(path, number, record.schema)
    return record


def _decoded(decoder: msgspec.json.Decoder[Any], line: bytes, path: str | Path, number: int) -> Any:
    """What ``decoder`` reads from a results line; its faults, the decoder's own among them (a
    byte that is not UTF-8, JSON nested past Python's recursion limit), as a :class:`ConfigError`."""
    where = f"{path}:{number}"
    try:
        return decoder.decode(line)
    except msgspec.ValidationError as exc:
        try:
            version = _version(line)
        except RecursionError:  # a value the type refused at once, nested too deep to look into
            raise _too_deep(where) from None
        if version not in READABLE:
            raise ConfigError(
                f"{where}: not a harness results line of format {RESULT_SCHEMA!r} "
                f"(found {version!r}); run the scenarios again with this harness to rebuild it"
            ) from None
        raise ConfigError(f"{where}: invalid results line: {exc}") from None
    except msgspec.DecodeError as exc:
        raise ConfigError(f"{where}: not a JSON line: {exc}") from None
    except UnicodeDecodeError:
        raise _not_utf8(line, where) from None
    except RecursionError:
        raise _too_deep(where) from None


def _too_deep(where: str) -> ConfigError:
    return ConfigError(f"{where}: JSON nested too deep to read (past Python's recursion limit)")


def _not_utf8(line: bytes, where: str) -> ConfigError:
    """The error of a line that is not UTF-8, naming the first byte that is not."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as exc:
        what = f"byte 0x{line[exc.start]:02x} at column {exc.start + 1} is not UTF-8 ({exc.reason})"
    else:
        what = "text that is not UTF-8"
    return ConfigError(f"{where}: {what}: a results file is UTF-8 JSON")


def _other_format(path: str | Path, number: int, schema: str) -> ConfigError:
    readable = " and ".join(repr(v) for v in sorted(READABLE, reverse=True))
    return ConfigError(
        f"{path}:{number}: results format {schema!r}; this harness reads {readable} "
        "(run the scenarios again with this harness to rebuild it)"
    )


def _version(line: bytes) -> Any:
    """The ``schema`` a line names, if it names one (a line nested too deep: RecursionError)."""
    try:
        data = msgspec.json.decode(line)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None
    return data.get("schema") if isinstance(data, dict) else None


Key = tuple[str, str, int]


class _Named(msgspec.Struct):
    name: str


class _Head(msgspec.Struct):
    """The few fields of a results line that place it; the rest is skipped, not decoded."""

    target: _Named
    scenario: str
    repeat: Annotated[int, msgspec.Meta(ge=0, lt=1 << 32)]  # as a log keeps it (an unsigned int)
    schema: str = RESULT_SCHEMA


_headDECODER = msgspec.json.Decoder(_Head)


def _checked_key(line: bytes, path: str | Path, number: int) -> Key:
    """The (target, scenario, repeat) of a results line, without decoding the rest of it, its
    format checked as :func:`_decode_checked` checks it."""
    head: _Head = _decoded(_headDECODER, line, path, number)
    if head.schema not in READABLE:
        raise _other_format(path, number, head.schema)
    return (head.target.name, head.scenario, head.repeat)


def _cut_short(line: bytes) -> bool:
    """Whether a last line without its line end was cut short: it does not end its JSON (a line
    that is bad in another way is refused as such, not left out)."""
    try:
        _headDECODER.decode(line)
    except msgspec.MsgspecError:
        return True
    except (UnicodeDecodeError, RecursionError):
        pass
    return False


class RecordLog(Sequence[RunRecord]):
    """Records as written to a results file, sorted by (target, scenario, repeat): in memory only
    each one's key and place in the file (28 bytes: the names numbered, each kept once), each
    record read back when it is asked for. A run of any size holds no transcript in memory;
    every pass over it reads the file again (a pass costs about as much as decoding the records).

    Example::

        records = harness.RecordLog.open("reports/results.jsonl")
        print(len(records), records[0].score)
    """

    def __init__(self, path: str | Path, store: Store | None = None) -> None:
        self.path = Path(path)
        self._numbers: dict[str, int] = {}  # each target and scenario name, numbered
        self._names: list[str] = []  # the names by number
        self._keys = array("I")  # the target, scenario (by number) and repeat of each record
        self._offsets = array("q")  # each record's line: its offset in the file
        self._lines = array("I")  # and its length and number, in key order
        self._sorted = True
        self.end = self.end_line = 0  # the file read up to: its offset and the number of its last line
        self.cut: int | None = None  # the number of a last line left out, cut short
        # what the lines refer to (harness.results.store): the writer's own, when it reads them back
        self._store = store or Store(store_path(self.path))

    def add(self, key: Key, offset: int, length: int, number: int) -> None:
        """Note a record: its key, and its line's offset, length and number in the file."""
        if self._keys and key < self._key(len(self) - 1):
            self._sorted = False
        target, scenario, repeat = key
        self._keys.extend((self._number(target), self._number(scenario), repeat))
        self._offsets.append(offset)
        self._lines.extend((length, number))

    def _number(self, name: str) -> int:
        found = self._numbers.get(name)
        if found is None:
            found = self._numbers[name] = len(self._names)
            self._names.append(name)
        return found

    def _key(self, index: int) -> Key:
        target, scenario, repeat = self._keys[3 * index : 3 * index + 3]
        return self._names[target], self._names[scenario], repeat

    def _place(self, index: int) -> tuple[int, int, int]:
        """Record ``index``'s line: its offset, length and number."""
        return self._offsets[index], self._lines[2 * index], self._lines[2 * index + 1]

    @property
    def store(self) -> Store:
        """The shared store the records' lines refer to (:mod:`harness.results.store`)."""
        return self._store

    @classmethod
    def open(cls, path: str | Path, *, warn: bool = True, store: Store | None = None) -> RecordLog:
        """Every record of a results file; a line that is not a harness results line is a
        :class:`ConfigError` naming it, except a last line cut short (no line end: a killed
        run's), which is left out (its number is ``cut``) with a :class:`CutLineWarning` saying so,
        unless ``warn`` is false (a resumed run, which runs it again). ``end`` is the offset the
        lines kept end at, ``end_line`` the number of the last of them. ``store``: the store the
        lines refer to, already indexed (the one a run wrote), not read again."""
        log = cls(path, store)
        with open_results(path) as handle:
            for number, offset, line in _lines(handle, path):
                if line.strip():
                    if not line.endswith(b"\n") and _cut_short(line):  # the last line
                        log._leave_out(number, len(line), warn)
                        break
                    log.add(_checked_key(line, path, number), offset, len(line), number)
                log.end, log.end_line = offset + len(line), number
        return log

    def _leave_out(self, number: int, size: int, warn: bool) -> None:
        self.cut = number
        if warn:
            warnings.warn(
                CutLineWarning(
                    f"{self.path}:{number}: the last line is cut short ({size} bytes without a line "
                    f"end: a run killed while writing it?): 1 line left out, {len(self)} run(s) read"
                ),
                stacklevel=3,
            )

    def _order(self) -> None:
        """The records in key order: each key sorted as one int (the ranks of its names, its repeat
        and, lowest, its index: a stable sort), about 40 bytes a record while it sorts (a tuple
        of names for each was about 100)."""
        if not self._sorted:
            names = self._names
            rank = array("I", [0]) * len(names)
            for place, number in enumerate(sorted(range(len(names)), key=names.__getitem__)):
                rank[number] = place
            keys, width = self._keys, len(names)
            packed = sorted(
                (rank[keys[3 * i]] * width + rank[keys[3 * i + 1]]) << 64 | keys[3 * i + 2] << 32 | i
                for i in range(len(self))
            )
            order = array("I", (key & 0xFFFFFFFF for key in packed))
            del packed  # freed before the arrays are made again
            offsets, lines = self._offsets, self._lines
            self._keys = array("I", (keys[3 * i + k] for i in order for k in range(3)))
            self._offsets = array("q", (offsets[i] for i in order))
            self._lines = array("I", (lines[2 * i + k] for i in order for k in range(2)))
            self._sorted = True

    def __len__(self) -> int:
        return len(self._keys) // 3

    @overload
    def __getitem__(self, index: int) -> RunRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[RunRecord]: ...

    def __getitem__(self, index: int | slice) -> RunRecord | list[RunRecord]:
        if isinstance(index, slice):
            return list(self._read(range(len(self))[index]))
        return next(self._read([range(len(self))[index]]))

    def __iter__(self) -> Iterator[RunRecord]:
        return self._read(range(len(self)))

    def __add__(self, other: Iterable[RunRecord]) -> list[RunRecord]:
        """Records joined to other records, as a list (as runs returned lists before)."""
        return [*self, *other]

    def __radd__(self, other: Iterable[RunRecord]) -> list[RunRecord]:
        return [*other, *self]

    def run_keys(self) -> list[Key]:
        """Every record's key, in order, without reading the records."""
        return list(self.iter_keys())

    def iter_keys(self) -> Iterator[Key]:
        """Every record's key, in order, one at a time (no list of them all is made)."""
        self._order()
        return map(self._key, range(len(self)))

    def lines(self) -> Iterator[tuple[Key, bytes]]:
        """Each record's key and results line as written (its references to the store beside it
        kept: :mod:`harness.results.store`), in order: nothing decoded, but a line
        that is not UTF-8 (which :meth:`open` does not read all of) is a :class:`ConfigError`."""
        self._order()
        with open_results(self.path) as handle:
            for index in range(len(self)):
                offset, length, number = self._place(index)
                handle.seek(offset)
                line = handle.read(length)
                if not line.isascii():
                    try:
                        line.decode("utf-8")
                    except UnicodeDecodeError:
                        raise _not_utf8(line, f"{self.path}:{number}") from None
                yield self._key(index), line

    def where(self, keep: Callable[[Key], bool]) -> RecordLog:
        """The records whose key ``keep`` accepts (nothing is read to choose them)."""
        self._order()
        chosen = RecordLog(self.path, self._store)  # read once
        for index in range(len(self)):
            key = self._key(index)
            if keep(key):
                chosen.add(key, *self._place(index))
        return chosen

    def _read(self, indexes: Iterable[int]) -> Iterator[RunRecord]:
        self._order()
        try:
            with open_results(self.path) as handle:
                for index in indexes:
                    offset, length, number = self._place(index)
                    handle.seek(offset)
                    line = self._store.resolve(handle.read(length), f"{self.path}:{number}")
                    yield _decode_checked(line, self.path, number)
        finally:
            self._store.close_reader()


def select(records: Iterable[RunRecord], keep: Callable[[Key], bool]) -> Iterable[RunRecord]:
    """The records whose key ``keep`` accepts; from a :class:`RecordLog`, only those are read."""
    if isinstance(records, RecordLog):
        return records.where(keep)
    return [r for r in records if keep(r.key)]


def run_manifest(results: Path) -> dict[str, Any]:
    """The manifest (``run.json``) of the run that wrote ``results``: beside it, else that of the
    newest run folder under ``runs/`` beside it holding the same bytes (``harness run`` publishes
    a finished run's results to its ``--out``); ``{}`` when there is none or it cannot be read."""
    import filecmp

    def read(folder: Path) -> dict[str, Any]:
        try:
            manifest = json.loads((folder / "run.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return manifest if isinstance(manifest, dict) else {}

    runs = results.parent / "runs"
    folders = sorted(runs.iterdir(), reverse=True) if runs.is_dir() else []  # run ids start with the time
    same = (
        f
        for f in folders
        if (f / results.name).is_file() and filecmp.cmp(f / results.name, results, shallow=False)
    )
    return read(results.parent) or read(next(same, results.parent))


def shard_manifests(shards: Sequence[str | Path]) -> list[dict[str, Any]]:
    """The run manifest of each shard (a results file or its folder: :func:`run_manifest`), in
    order."""
    return [run_manifest(Path(s) / "results.jsonl" if Path(s).is_dir() else Path(s)) for s in shards]


def merge_results(shards: Sequence[str | Path], out: str | Path) -> RecordLog:
    """The records of several ``harness run --shard K/N`` jobs (each a results file or the folder
    holding ``results.jsonl``), written together to ``out`` sorted by (target, scenario, repeat).
    A run found in two shards is a :class:`ConfigError` naming both: they were not shards of
    one run.

    Example::

        records = harness.results.merge_results(["shard-1", "shard-2", "shard-3"], "reports/results.jsonl")
    """
    seen: dict[tuple[str, str, int], Path] = {}
    logs = []
    for shard in shards:
        path = Path(shard) / "results.jsonl" if Path(shard).is_dir() else Path(shard)
        if not path.exists():  # a path that is no regular file is refused when it is read
            raise ConfigError(f"{shard}: no results.jsonl (a shard is a results file or its folder)")
        log = RecordLog.open(path)
        for key in log.run_keys():
            if key in seen:
                target, scenario, repeat = key
                raise ConfigError(
                    f"{target} {scenario} (repeat {repeat}) is in both {seen[key]} and {path}: "
                    "these are not shards of one run"
                )
            seen[key] = path
        logs.append(log)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    written = RecordLog(out)
    # into a file beside ``out``, which replaces it once whole: ``out`` may be one of the shards,
    # whose lines are still being read
    partial = Path(out).with_name(f".{Path(out).name}.{os.getpid()}.tmp")  # as _replace names it
    try:
        with partial.open("wb") as merged:  # each line copied as it is: no record is decoded here
            lines = heapq.merge(*(log.lines() for log in logs), key=lambda item: item[0])
            for number, (key, line) in enumerate(lines, 1):
                line = line if line.endswith(b"\n") else line + b"\n"
                written.add(key, merged.tell(), len(line), number)
                merged.write(line)
        stores = [store_path(log.path) for log in logs if store_path(log.path).exists()]
        if stores:  # before the lines that refer to it
            merge_stores(stores, store_path(out))
        os.replace(partial, out)
    except BaseException as exc:
        partial.unlink(missing_ok=True)
        if DiskFullError.is_full(exc):
            raise DiskFullError(out, f"{out} is as it was") from exc
        raise
    return written


# -- a run folder: results kept apart until the run ends, resumable ------------------------


KEEP_RUNS = 5
"""Finished run folders kept under ``<out>/runs/`` (the newest ones) unless told otherwise
(``--keep-runs``, ``[history] keep_runs``; 0 keeps every one)."""
LOCK_FILE = "run.lock"
"""In a run folder: the OS lock its run holds while it lives, and who holds it."""


@dataclass
class RunFolder:
    """``<out>/runs/<run id>/``: a run's own results file (appended to as runs end), its manifest
    (``run.json``: what was asked for, and whether it finished) and, when it ends, its reports.

    Only when the run ends are its results and reports published to ``<out>/`` (each file a hard
    link to the run folder's, replaced atomically: no byte is copied), so ``<out>/results.jsonl``
    and the reports beside it always describe the same complete run; a run killed half-way leaves
    them as they were, and ``--resume`` continues it.

    The run that creates or resumes a folder holds an OS lock on its ``run.lock`` until it
    finishes or its process ends (killed or not): a second process that wants the folder is
    refused at once, with the holder named.
    """

    path: Path
    manifest: dict[str, Any]
    lock: int | None = field(default=None, repr=False)  # the locked file descriptor

    @property
    def results(self) -> Path:
        return self.path / "results.jsonl"

    @property
    def run_id(self) -> str:
        return self.path.name

    @classmethod
    def create(cls, out: Path, manifest: dict[str, Any]) -> RunFolder:
        """A new run folder, locked: its id is the UTC second and random bits, so runs started in
        the same second (by processes in other PID namespaces too) never share a folder."""

        from datetime import UTC, datetime  # looked up when called: a test freezes the clock

        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        runs = out / "runs"
        runs.mkdir(parents=True, exist_ok=True)
        for _ in range(16):
            path = runs / f"{stamp}-{_token()}"
            try:
                path.mkdir()  # atomic: one process gets this name
            except FileExistsError:
                continue
            folder = cls(path, {**manifest, "run_id": path.name, "status": "running", "started": stamp})
            folder.lock = _take(path)
            folder.save()
            return folder
        raise ConfigError(f"{runs}: no free run id after 16 tries")

    @classmethod
    def resume(cls, out: Path, run_id: str | None = None) -> RunFolder:
        """The run to continue, locked: ``run_id``, or the newest one that did not finish; one
        another process holds, or a ``harness merge`` run (there is nothing to run again), is a
        :class:`ConfigError` naming it."""
        runs = out / "runs"
        candidates = sorted(runs.iterdir(), reverse=True) if runs.is_dir() else []
        for path in candidates:
            manifest_path = path / "run.json"
            if not manifest_path.is_file() or (run_id and path.name != run_id):
                continue
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            if "merged_from" in manifest:  # made by `harness merge`: nothing of it can run again
                if run_id:
                    raise ConfigError(f"--resume: {path} holds a merged run, not one to resume")
                continue
            if run_id or manifest.get("status") != "complete":
                lock = _take(path)
                _unlink_published(path)
                return cls(path, manifest, lock)
        which = f"run {run_id!r}" if run_id else "an unfinished run"
        raise ConfigError(f"--resume: no {which} under {runs}")

    def done(self) -> RecordLog:
        """The runs already written (a resumed run skips them); a last line cut short (the run
        killed while writing it) is left out (``cut``): its run goes again."""
        return RecordLog.open(self.results, warn=False) if self.results.exists() else RecordLog(self.results)

    def save(self) -> None:
        _replace(self.path / "run.json", json.dumps(self.manifest, indent=2, sort_keys=True).encode() + b"\n")

    def finish(self, status: str, reports: list[Path], out: Path, keep: int | None = None) -> list[Path]:
        """Mark the run ``complete`` or ``interrupted``; a complete run's results and reports are
        published to ``out``, and the finished run folders beyond the newest ``keep`` (this one
        among them; ``None``: :data:`KEEP_RUNS`; 0: none is removed) are removed. Returns the
        published paths. The folder is then let go."""
        keep = KEEP_RUNS if keep is None else keep
        self.manifest["status"] = status
        self.save()
        published = []
        if status == "complete":
            if keep > 0:
                self._prune(keep)
            for path in [self.results, *self.beside(), *reports]:
                target = out / path.name
                _publish(path, target)
                published.append(target)
                _publish_files(path, out)
        self.release()
        return published

    def beside(self) -> list[Path]:
        """What the results file refers to, published with it (its shared store, when it has one)."""
        shared = store_path(self.results)
        return [shared] if shared.exists() else []

    def release(self) -> None:
        """Let the folder go (its process ending does the same)."""
        if self.lock is not None:
            os.close(self.lock)
            self.lock = None

    def _prune(self, keep: int) -> None:
        """Remove the oldest finished run folders beyond the newest ``keep`` (unfinished ones
        stay: resumable; one a run holds, resumed by its id, stays too)."""
        import shutil

        finished = []
        for path in sorted(self.path.parent.iterdir()):
            manifest = path / "run.json"
            if path != self.path and manifest.is_file() and _status(manifest) == "complete":
                finished.append(path)
        for path in finished[: max(0, len(finished) - (keep - 1))]:
            try:
                lock = _take(path)
            except ConfigError:
                continue
            shutil.rmtree(path, ignore_errors=True)
            os.close(lock)


def _token() -> str:
    """Random bits for a run id."""
    return os.urandom(4).hex()


def _take(folder: Path) -> int:
    """An exclusive OS lock on the run of ``folder`` (its :data:`LOCK_FILE`, which says who holds
    it), as an open file descriptor: closing it, or the process ending, lets it go. Another
    process holding it is a :class:`ConfigError` naming that process."""
    from datetime import UTC, datetime

    fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _lock(fd)
    except OSError:
        holder = ""
        for _ in range(20):  # the holder writes who it is just after it takes the lock
            os.lseek(fd, 0, os.SEEK_SET)
            holder = os.read(fd, 300).decode("utf-8", "replace").strip()
            if holder:
                break
            time.sleep(0.01)
        os.close(fd)
        holder = holder or "a process that is starting"
        raise ConfigError(
            f"run {folder.name} is in use by another harness ({holder}): wait for it to end (a killed "
            f"run lets it go at once), or start or resume another run; its folder is {folder}"
        ) from None
    since = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    os.ftruncate(fd, 0)
    os.write(fd, f"pid {os.getpid()} on {socket.gethostname()} since {since}\n".encode())
    return fd


def _lock(fd: int) -> None:
    """Take the lock of ``fd`` at once or raise :class:`OSError`."""
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, 1 << 20, os.SEEK_SET)  # a byte past what the file says (readers are not held up)
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        os.lseek(fd, 0, os.SEEK_SET)
    else:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _status(manifest: Path) -> str | None:
    status = json.loads(manifest.read_text(encoding="utf-8")).get("status")
    return status if isinstance(status, str) else None


def _publish(path: Path, target: Path) -> None:
    """``target`` made the same file as ``path`` atomically: a hard link (no byte copied), or a
    copy where the file system has none."""
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    temporary.unlink(missing_ok=True)
    try:
        os.link(path, temporary)
    except OSError:
        _replace(target, path.read_bytes())
        return
    os.replace(temporary, target)


def _unlink_published(folder: Path) -> None:
    """Give the files of a resumed run folder their own copies where they are still the published
    ones (a complete run resumed by its id): its writes then never reach ``<out>/`` before it ends."""
    for path in folder.iterdir():
        if path.is_file() and path.stat().st_nlink > 1:
            _replace(path, path.read_bytes())


def _publish_files(report: Path, out: Path) -> None:
    """Publish the folder of files a report loads beside it (``report.html`` and its
    ``report-files/``) by links, swapped in whole: the page and its files stay of one run."""
    import shutil

    folder = report.with_name(f"{report.stem}-files")
    if not folder.is_dir():
        return
    target, temporary = out / folder.name, out / f".{folder.name}.{os.getpid()}.tmp"
    old = out / f".{folder.name}.{os.getpid()}.old"
    shutil.rmtree(temporary, ignore_errors=True)
    try:  # hard links, as the files beside it: no byte copied
        shutil.copytree(folder, temporary, copy_function=os.link)
    except OSError:
        shutil.rmtree(temporary, ignore_errors=True)
        shutil.copytree(folder, temporary)
    if target.exists():
        os.replace(target, old)
    os.replace(temporary, target)
    shutil.rmtree(old, ignore_errors=True)


def _replace(path: Path, data: bytes) -> None:
    """Write ``path`` atomically (a reader never sees half a file; a write that fails, the disk
    full, leaves the file as it was and nothing beside it)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        if DiskFullError.is_full(exc):
            raise DiskFullError(path) from exc
        raise
