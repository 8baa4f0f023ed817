"""The shared store of a results file: what its runs share, kept once.

A results line refers to a value many runs (or many turns of one run) hold alike (a check's
verdict, the tools offered, a message, a part of a request, a response body) by the hash of its
JSON, as ``{"$blob": "<hash>"}``; the value itself is kept in the store beside the results file
(``results.jsonl`` -> ``results.shared.jsonl.gz``), written once however many lines refer to it.
Reading a line puts every value back where its reference stands (:meth:`Store.resolve`), so the
record read is the one written, and ``harness report`` rebuilds every report from the two files.

A reference is told from the data by its space: the JSON the harness writes (msgspec's compact
form) never puts a space after a colon outside a string, and inside a string a quote is escaped,
so the bytes ``{"$blob": "`` are a reference and nothing else.

The store is gzip (RFC 1952) of JSON lines ``["<hash>",<json>]``, in members of about 64 KiB
each (a gzip file may hold many members, read as one: ``zcat`` shows every line), so a value is
read by decompressing its member alone. Values alike compress together: the store of the default
suite is a tenth of its values' size.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import zlib
from array import array
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import msgspec

from harness import secrets
from harness.errors import ConfigError
from harness.model import WireResponse
from harness.records import RunRecord, record_line

MARK = b'{"$blob": "'
HASH_BYTES = 8  # 16 hex characters
_REF = re.compile(rb'\{"\$blob": "([0-9a-f]{16})"\}')
MEMBER_BYTES = 64 << 10  # values gathered before they are compressed as one gzip member
_MEMBERS_CACHED = 32  # members kept decompressed for the next lines that refer to them
_VALUES_CACHED = 8 << 20  # bytes of values kept resolved: what many runs share stays at hand
_RECENT = 1 << 13  # places indexed in a dict before they are merged into the sorted arrays


_ENCODER = msgspec.json.Encoder()


def store_path(results: str | Path) -> Path:
    """The shared store of the results file ``results``."""
    path = Path(results)
    return path.with_name(f"{path.stem}.shared.jsonl.gz")


def digest(data: bytes) -> bytes:
    """The hash a value's JSON is referred to by (hex, ASCII)."""
    return hashlib.blake2b(data, digest_size=HASH_BYTES).hexdigest().encode()


def reference(key: bytes) -> bytes:
    """The reference to the value of hash ``key``, as a results line holds it."""
    return MARK + key + b'"}'


def resolve_with(line: bytes, values: dict[bytes, bytes]) -> bytes:
    """``line`` with every reference replaced by its value from ``values`` (hash -> JSON, holding
    every value the line refers to, as :func:`stored_line` gives them)."""
    if MARK not in line:
        return line
    return _REF.sub(lambda m: resolve_with(values[m[1]], values), line)


def _members(path: Path) -> Iterator[tuple[int, int, bytes]]:
    """Each whole gzip member of the store ``path``: its offset, its length and its lines (a last
    member cut short, a run killed while writing it, is not one), read a megabyte at a time."""
    if not path.exists():
        return
    with path.open("rb") as handle:
        offset, rest = 0, b""
        while True:
            inflater, pieces, taken = zlib.decompressobj(wbits=31), [], 0
            chunk = rest or handle.read(1 << 20)
            while chunk:
                try:
                    pieces.append(inflater.decompress(chunk))
                except zlib.error:
                    return
                taken += len(chunk) - len(inflater.unused_data)
                if inflater.eof:
                    break
                chunk = handle.read(1 << 20)
            if not inflater.eof:
                return
            yield offset, taken, b"".join(pieces)
            offset, rest = offset + taken, inflater.unused_data


def _number(key: bytes) -> int:
    """A value's hash (16 hex digits) as the number the index sorts; anything else (a damaged
    store) is a :class:`ConfigError`."""
    if len(key) == 2 * HASH_BYTES and key.isalnum():
        try:
            return int(key, 16)
        except ValueError:
            pass
    raise ConfigError(f"{key!r} is not the hash of a shared value (16 hex digits): the store is damaged")


class _Index:
    """Where each value of a store is: hash -> place (the member's number and the line's start in
    the member's text, as one int: ``member << 32 | start``; -1 for a value kept and not yet
    written), in 16 bytes a value, so that a store of any number of values is indexed in little
    memory: the places in two arrays sorted by hash, the latest ones in a dict of at most
    :data:`_RECENT` entries merged into them when it fills.

    Example::

        index = _Index()
        index.put(b"07a246329a475105", 3 << 32 | 40, replace=True)
        assert index.get(b"07a246329a475105") == 3 << 32 | 40 and index.get(b"0000000000000000") is None
    """

    def __init__(self) -> None:
        self._keys = array("Q")
        self._places = array("q")
        self._recent: dict[int, int] = {}

    def _find(self, key: int) -> int:
        at = bisect_left(self._keys, key)
        return at if at < len(self._keys) and self._keys[at] == key else -1

    def get(self, key: bytes) -> int | None:
        number = _number(key)
        found = self._recent.get(number)
        if found is not None:
            return found
        at = self._find(number)
        return None if at < 0 else self._places[at]

    def put(self, key: bytes, place: int, replace: bool) -> bool:
        """Set ``key``'s place, unless it has one and not ``replace``; whether it was set (one parse
        of the hash, one search)."""
        number = _number(key)
        if number in self._recent:
            if replace:
                self._recent[number] = place
            return replace
        at = self._find(number)
        if at >= 0:
            if replace:
                self._places[at] = place
            return replace
        self._recent[number] = place
        if len(self._recent) >= _RECENT:
            self.merge()
        return True

    def merge(self) -> None:
        """The recent places merged into the sorted arrays, in place (from the back, so each
        place moves once, a slice at a time): no second copy of the arrays is ever made."""
        recent = sorted(self._recent.items())
        keys, places = self._keys, self._places
        end = len(keys)  # the old places [0, end) not yet moved
        keys.frombytes(bytes(keys.itemsize * len(recent)))
        places.frombytes(bytes(places.itemsize * len(recent)))
        for j in range(len(recent) - 1, -1, -1):
            number, place = recent[j]
            at = bisect_left(keys, number, 0, end)
            if at < end:  # the old places above it move up by the j + 1 still to place
                keys[at + j + 1 : end + j + 1] = keys[at:end]
                places[at + j + 1 : end + j + 1] = places[at:end]
            keys[at + j], places[at + j] = number, place
            end = at
        self._recent.clear()


class Store:
    """The shared store of a results file, read (:meth:`resolve`) and, for the run writing it,
    appended to (:meth:`add`: each value once, however often it is given).

    Example::

        with Store(store_path("reports/results.jsonl")) as store:
            record = harness.records.decode_record(store.resolve(line, "reports/results.jsonl:1"))
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._index: _Index | None = None  # hash -> its place
        self._starts = array("q")  # each member's offset, by number: it ends where the next starts
        self._cache: OrderedDict[int, bytes] = OrderedDict()  # member number -> its lines
        self._values: OrderedDict[bytes, bytes] = OrderedDict()  # hash -> the value, resolved
        self._held_values = 0
        self._end = 0
        self._out: IO[bytes] | None = None
        self._pending: dict[str, list[bytes]] = {}  # group -> the lines of its values not yet written
        self._held = 0
        self._reader: IO[bytes] | None = None

    def _places(self) -> _Index:
        if self._index is None:
            self._index = _Index()
            try:
                for offset, length, text in _members(self.path):
                    self._note(offset, length, text)
            except ConfigError as exc:
                self._index, self._starts, self._end = None, array("q"), 0
                raise ConfigError(f"{self.path}: {exc}") from None
            self._index.merge()  # in the arrays alone: the dict costs four times their bytes a place
        return self._index

    def _note(self, offset: int, length: int, text: bytes, replace: bool = False) -> None:
        """Index the member at ``offset`` (its lines ``text``); a value already placed keeps its
        first place unless ``replace`` (it was kept, and is now written)."""
        assert self._index is not None
        member = len(self._starts) << 32
        self._starts.append(offset)
        self._end = offset + length
        start = 0
        while start < len(text):
            key = text[start + 2 : start + 2 + 2 * HASH_BYTES]
            self._index.put(key, member | start, replace)
            start = text.index(b"\n", start) + 1

    def open(self) -> Store:
        """Open the store to add values after the ones it holds (a last member cut short goes)."""
        self._places()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("ab") as handle:
            handle.truncate(self._end)
        self._out = self.path.open("ab", buffering=0)
        return self

    def add(self, values: dict[bytes, bytes], group: str = "") -> None:
        """Keep each value (hash -> JSON) the store does not hold yet, with the values of its
        ``group`` (the run's target: a report reads a target's runs together); written at
        :meth:`flush`."""
        places = self._places()
        pending = self._pending.setdefault(group, [])
        for key, data in values.items():
            if places.put(key, -1, replace=False):  # kept, not yet written
                line = b'["' + key + b'",' + data + b"]\n"
                pending.append(line)
                self._held += len(line)

    @property
    def held(self) -> int:
        """The bytes of the values kept and not yet written."""
        return self._held

    def flush(self) -> None:
        """Write the values :meth:`add` kept, each group's in members of their own (of about
        :data:`MEMBER_BYTES`): before any results line that refers to them is written."""
        if self._out is None:
            return
        assert self._index is not None
        for lines in self._pending.values():
            while lines:
                size = count = 0
                while count < len(lines) and size < MEMBER_BYTES:
                    size += len(lines[count])
                    count += 1
                text = b"".join(lines[:count])
                del lines[:count]
                deflater = zlib.compressobj(1, zlib.DEFLATED, 31)
                member = deflater.compress(text) + deflater.flush()
                self._out.write(member)
                self._note(self._end, len(member), text, replace=True)
        self._pending.clear()
        self._held = 0

    def close(self) -> None:
        if self._out is not None:
            self.flush()
            self._out.close()
            self._out = None
            assert self._index is not None
            self._index.merge()  # kept to read the values back: in the arrays alone
        self.close_reader()

    def close_reader(self) -> None:
        """Close the file values are read from (reopened by the next read); the index stays."""
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def value(self, key: bytes, where: str) -> bytes:
        """The JSON of the value of hash ``key`` (its references resolved); one the store lacks
        is a :class:`ConfigError` naming ``where`` it is referred to."""
        found = self._values.get(key)
        if found is not None:
            self._values.move_to_end(key)
            return found
        place = self._places().get(key)
        if place is None or place < 0:
            raise ConfigError(
                f"{where}: refers to a shared value ({key.decode()}) that {self.path} does not hold: "
                "a results file is read with the store written beside it"
            )
        member, start = place >> 32, place & 0xFFFFFFFF
        text = self._cache.get(member)
        if text is None:
            if self._reader is None:
                self._reader = self.path.open("rb")
            offset = self._starts[member]
            end = self._starts[member + 1] if member + 1 < len(self._starts) else self._end
            self._reader.seek(offset)
            text = zlib.decompress(self._reader.read(end - offset), wbits=31)
            self._cache[member] = text
            if len(self._cache) > _MEMBERS_CACHED:  # bounded: a run of any size reads in fixed memory
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(member)
        line = text[start + 2 * HASH_BYTES + 4 : text.index(b"\n", start) - 1]
        found = self.resolve(line, where)  # its own references too
        self._values[key] = found
        self._held_values += len(found)
        while self._held_values > _VALUES_CACHED:  # bounded: a run of any size reads in fixed memory
            self._held_values -= len(self._values.popitem(last=False)[1])
        return found

    def resolve(self, line: bytes, where: str) -> bytes:
        """``line`` with every reference replaced by its value."""
        if MARK not in line:
            return line
        return _REF.sub(lambda m: self.value(m[1], where), line)


def merge(stores: list[Path], out: Path) -> None:
    """The store of a merged results file ``out``: the members of ``stores`` one after the other
    (a value two of them hold is read from the first; written beside, then put in place: ``out``
    may be one of them)."""
    partial = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        with partial.open("wb") as merged:
            for path in stores:
                with path.open("rb") as source:
                    for offset, length, _ in _members(path):
                        source.seek(offset)
                        merged.write(source.read(length))
        os.replace(partial, out)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


_SHARED_FROM = 64  # a value shorter than this stays in its line: its reference would be as long


class _Sharer:
    """Values of one record encoded once each: a long one becomes a reference to its hash
    (:mod:`harness.results.store`), a short one stays as it is."""

    def __init__(self) -> None:
        self.values: dict[bytes, bytes] = {}

    def __call__(self, value: Any) -> Any:  # a msgspec.Raw, encoded where the value was
        data = secrets.redact_bytes(_ENCODER.encode(value))
        if len(data) < _SHARED_FROM:
            return msgspec.Raw(data)
        key = digest(data)
        self.values[key] = data
        return msgspec.Raw(reference(key))

    def body(self, body: Any) -> Any:
        """A request body with each of its long parts shared (the messages, the tools)."""
        if not isinstance(body, dict):
            return self(body)
        return {k: self(v) if isinstance(v, list | dict | str) else v for k, v in body.items()}


def stored_line(record: RunRecord) -> tuple[bytes, dict[bytes, bytes]]:
    """``record`` as a results line that refers to what runs share (its checks, its transcript and
    the parts of it: the tools offered, messages, exchanges, request parts, response bodies, parsed
    turns, tool runs) by hash, and those values (hash -> JSON) for the store beside the results
    file (:mod:`harness.results.store`): the line and the store give back :func:`record_line`'s record.
    Secrets are redacted as :func:`record_line` redacts them; a record with text that is not
    valid Unicode is written whole by it."""
    share = _Sharer()
    transcript = record.transcript
    try:
        stored = dataclasses.replace(
            record,
            checks=share(record.checks),
            transcript=share(
                dataclasses.replace(
                    transcript,
                    tools=share(transcript.tools),
                    messages=share(transcript.messages),
                    executions=share(transcript.executions),
                    endpoint=share(transcript.endpoint),
                    exchanges=[
                        share(
                            dataclasses.replace(
                                e,
                                request=dataclasses.replace(e.request, body=share.body(e.request.body)),
                                response=None
                                if e.response is None
                                else WireResponse(
                                    e.response.status,
                                    share(e.response.body),
                                    share(e.response.headers),
                                ),
                                parsed=share(e.parsed),
                            )
                        )
                        for e in transcript.exchanges
                    ],
                )
            ),
        )
        return secrets.redact_bytes(_ENCODER.encode(stored)), share.values
    except UnicodeEncodeError:
        return record_line(record), {}
