"""Typed records of a run, and the results file: each record serialised once, read back typed.

A :class:`RunRecord` is everything one run of one scenario against one target
produced: the transcript (every exchange with its wire request and response),
the check results, the score, and the figures reports show. ``results.jsonl``
holds one record per line, written as each run ends by :func:`record_line`; its JSON
Schema ships in the package (``schemas/results.schema.json``, generated from
these types) and every line carries the format version in ``schema``.

Reports are built from records alone: whatever a report shows is computed
during the run and stored here.

Encoding and decoding use msgspec: it encodes these dataclasses directly
(no intermediate dicts) and validates every field when reading a file back.
"""

from __future__ import annotations

import itertools
import os
import stat
import sys
import warnings
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Literal, overload

import msgspec

from harness import secrets
from harness.errors import ConfigError, CutLineWarning
from harness.model import Finding, Transcript, Usage

RESULT_SCHEMA = "harness.result/3"
"""The format version of a results line written now. Version 3 changed what a run's ``score``
means (100 when the run succeeded, 0 when not: see :mod:`harness.checks.scoring`)."""
READABLE = frozenset({RESULT_SCHEMA, "harness.result/2"})
"""The results formats this harness reads. A version 2 line has the same fields; its ``score`` was
the old partial credit, so everything that scores reads a run's success from its checks
(:func:`harness.checks.scoring.record_score`), never from ``score``, and a version 2 file gives the same
reports as a version 3 one. Older or newer files are refused with their version named."""

Status = Literal["pass", "warn", "fail", "n/a"]
Kind = Literal["protocol", "expectation"]
Outcome = Literal["pass", "fail", "error"]
"""``pass``: no check failed. ``fail``: the model's or the provider's behaviour broke a check.
``error``: the harness could not test (no response, the endpoint unavailable after retries, a
refused key, a missing or unreadable cassette, a fault of the harness); never scored."""
Cause = Literal["transport", "endpoint", "config", "cassette", "harness"]


@dataclass(frozen=True)
class TargetInfo:
    """What reports show about the target a run used.

    Example::

        print(record.target.name, record.target.model, record.target.simulated)
    """

    name: str
    format: str
    model: str
    simulated: bool
    stream: bool
    mode: str
    profile: str
    description: str = ""
    reference: str | None = None  # the target this one is verified against (harness verify)


@dataclass(frozen=True)
class RunError:
    """Why the harness could not test: its ``cause`` (the ``transport`` gave no response, the
    ``endpoint`` stayed unavailable after retries, the ``config`` is wrong (a refused key), a
    ``cassette`` is missing, drifted, incomplete or unreadable, or the ``harness`` failed),
    what kind of error, and the message."""

    kind: str
    message: str
    traceback: str | None = None
    cause: Cause = "harness"

    def summary(self) -> dict[str, str]:
        """Kind, cause and message, as reports show them (the traceback stays in the results file)."""
        return {"kind": self.kind, "cause": self.cause, "message": self.message}


def status_of(findings: Iterable[Finding]) -> Status:
    """``fail`` for a failed error, ``warn`` for a failed warning, ``pass``, or ``n/a`` (no finding,
    or only findings of what the run never reached: shown, not scored)."""
    found = False
    failed: set[str] = set()
    for finding in findings:
        if finding.evidence and finding.evidence.get("not_reached"):
            continue
        found = True
        if not finding.passed:
            failed.add(finding.severity)
    if not found:
        return "n/a"
    if "error" in failed:
        return "fail"
    if "warning" in failed:
        return "warn"
    return "pass"


@dataclass(frozen=True)
class CheckResult:
    """One check's verdict on one run: its findings and the status they give.

    Example::

        failing = [c.id for c in record.checks if c.status == "fail"]
    """

    id: str
    kind: Kind
    weight: float
    status: Status
    findings: tuple[Finding, ...] = ()

    @classmethod
    def of(cls, check_id: str, kind: Kind, weight: float, findings: Iterable[Finding]) -> CheckResult:
        """The result of ``findings``, each listed once: a finding found twice (same id, verdict,
        detail and turn, from two phases or two sources of one run) is one finding."""
        seen: set[tuple[str, str, bool, str, int | None]] = set()
        found = []
        for finding in findings:
            key = (finding.check_id, finding.severity, finding.passed, finding.detail, finding.turn_index)
            if key not in seen:
                seen.add(key)
                found.append(finding)
        return cls(check_id, kind, weight, status_of(found), tuple(found))


@dataclass(frozen=True)
class PromptSize:
    """What the tool definitions cost in the first request: the text protocol's system prompt
    (prompted mode) or the JSON tool declarations (native); tokens estimated."""

    characters: int
    estimated_tokens: int


@dataclass(frozen=True)
class RunRecord:
    """One run of one scenario against one target, scored.

    Example::

        for record in harness.read_results("reports/results.jsonl"):
            print(record.target.name, record.scenario, record.score, record.passed)
    """

    target: TargetInfo
    scenario: str
    category: str
    repeat: int
    mode: str
    score: float | None
    passed: bool
    error: RunError | None
    checks: tuple[CheckResult, ...]
    usage: Usage
    transcript: Transcript
    tool_prompt: PromptSize | None = None
    outcome: Outcome = "pass"
    tool_choice: str = "auto"  # the scenario's: auto, required, none or named:<tool>
    schema: str = RESULT_SCHEMA

    @property
    def key(self) -> tuple[str, str, int]:
        """(target, scenario, repeat): what identifies a run in a results file."""
        return (self.target.name, self.scenario, self.repeat)

    def findings(self) -> Iterator[Finding]:
        """Every finding of every check, in check order."""
        for check in self.checks:
            yield from check.findings


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(RunRecord)


def record_line(record: RunRecord) -> bytes:
    """``record`` as a results file line (without its newline), secrets redacted: the one place
    records are serialised.

    A string that is not valid Unicode (a lone surrogate a provider sent as ``"\\ud83d"``) must
    not lose the run: such characters are written as U+FFFD (the adapters note them as findings)."""
    try:
        line = _encoder.encode(record)
    except UnicodeEncodeError:
        line = _encoder.encode(_valid_unicode(msgspec.to_builtins(record)))
    return secrets.redact_bytes(line)


def decode_record(line: bytes) -> RunRecord:
    """A record from one results file line."""
    return _decoder.decode(line)


def _valid_unicode(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {_valid_unicode(k): _valid_unicode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):  # to_builtins keeps a record's tuples (its checks, their findings)
        return [_valid_unicode(v) for v in value]
    return value


def encode(value: Any) -> bytes:
    """Any record type as compact JSON."""
    return _encoder.encode(value)


def to_builtins(value: Any) -> Any:
    """Any record type as plain JSON data (dicts, lists, scalars), for reports that embed it."""
    return msgspec.to_builtins(value)


def read(path: str | Path) -> Iterator[RunRecord]:
    """The records of a results file, in file order; a bad line (a last line cut short among
    them) is a :class:`ConfigError` naming its line and what is wrong with it."""
    with open_results(path) as handle:
        for number, _, line in _lines(handle, path):
            if line.strip():
                yield _decode_checked(line, path, number)


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
    record: RunRecord = _decoded(_decoder, line, path, number)
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
    repeat: int
    schema: str = RESULT_SCHEMA


_head_decoder = msgspec.json.Decoder(_Head)


def _checked_key(line: bytes, path: str | Path, number: int) -> Key:
    """The (target, scenario, repeat) of a results line, without decoding the rest of it (the
    names interned: a log of many runs holds each name once), its format checked as
    :func:`_decode_checked` checks it."""
    head: _Head = _decoded(_head_decoder, line, path, number)
    if head.schema not in READABLE:
        raise _other_format(path, number, head.schema)
    return (sys.intern(head.target.name), sys.intern(head.scenario), head.repeat)


def _cut_short(line: bytes) -> bool:
    """Whether a last line without its line end was cut short: it does not end its JSON (a line
    that is bad in another way is refused as such, not left out)."""
    try:
        _head_decoder.decode(line)
    except msgspec.MsgspecError:
        return True
    except (UnicodeDecodeError, RecursionError):
        pass
    return False


class RecordLog(Sequence[RunRecord]):
    """Records as written to a results file, sorted by (target, scenario, repeat): in memory only
    each one's key and place in the file (about 100 bytes), each record read back when it is
    asked for. A run of any size holds no transcript in memory; every pass over it reads the
    file again (a pass costs about as much as decoding the records).

    Example::

        records = harness.RecordLog.open("reports/results.jsonl")
        print(len(records), records[0].score)
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._keys: list[Key] = []
        self._places = array("q")  # offset, length and line number of each record, in key order
        self._sorted = True
        self.end = self.end_line = 0  # the file read up to: its offset and the number of its last line
        self.cut: int | None = None  # the number of a last line left out, cut short

    def add(self, key: Key, offset: int, length: int, number: int) -> None:
        """Note a record: its key, and its line's offset, length and number in the file."""
        if self._keys and key < self._keys[-1]:
            self._sorted = False
        self._keys.append(key)
        self._places.extend((offset, length, number))

    @classmethod
    def open(cls, path: str | Path, *, warn: bool = True) -> RecordLog:
        """Every record of a results file; a line that is not a harness results line is a
        :class:`ConfigError` naming it, except a last line cut short (no line end: a killed
        run's), which is left out (its number is ``cut``) with a :class:`CutLineWarning` saying so,
        unless ``warn`` is false (a resumed run, which runs it again). ``end`` is the offset the
        lines kept end at, ``end_line`` the number of the last of them."""
        log = cls(path)
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
        if not self._sorted:
            order = sorted(range(len(self._keys)), key=self._keys.__getitem__)
            places = self._places
            self._keys = [self._keys[i] for i in order]
            self._places = array("q", (places[3 * i + k] for i in order for k in range(3)))
            self._sorted = True

    def __len__(self) -> int:
        return len(self._keys)

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
        self._order()
        return list(self._keys)

    def lines(self) -> Iterator[tuple[Key, bytes]]:
        """Each record's key and results line as written, in order: nothing decoded, but a line
        that is not UTF-8 (which :meth:`open` does not read all of) is a :class:`ConfigError`."""
        self._order()
        with open_results(self.path) as handle:
            for index, key in enumerate(self._keys):
                offset, length, number = self._places[3 * index : 3 * index + 3]
                handle.seek(offset)
                line = handle.read(length)
                if not line.isascii():
                    try:
                        line.decode("utf-8")
                    except UnicodeDecodeError:
                        raise _not_utf8(line, f"{self.path}:{number}") from None
                yield key, line

    def where(self, keep: Callable[[Key], bool]) -> RecordLog:
        """The records whose key ``keep`` accepts (nothing is read to choose them)."""
        self._order()
        chosen = RecordLog(self.path)
        for index, key in enumerate(self._keys):
            if keep(key):
                chosen.add(key, *self._places[3 * index : 3 * index + 3])
        return chosen

    def _read(self, indexes: Iterable[int]) -> Iterator[RunRecord]:
        self._order()
        with open_results(self.path) as handle:
            for index in indexes:
                offset, length, number = self._places[3 * index : 3 * index + 3]
                handle.seek(offset)
                yield _decode_checked(handle.read(length), self.path, number)


def json_schema() -> dict[str, Any]:
    """The JSON Schema of one results line, generated from :class:`RunRecord`."""
    schema: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(msgspec.json.schema(RunRecord)))
    for definition in schema["$defs"].values():  # the types' docstrings, without their code examples
        if "description" in definition:
            definition["description"] = definition["description"].split("Example::")[0].strip()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = f"toolcall harness results line ({RESULT_SCHEMA})"
    return schema


def select(records: Iterable[RunRecord], keep: Callable[[Key], bool]) -> Iterable[RunRecord]:
    """The records whose key ``keep`` accepts; from a :class:`RecordLog`, only those are read."""
    if isinstance(records, RecordLog):
        return records.where(keep)
    return [r for r in records if keep(r.key)]
