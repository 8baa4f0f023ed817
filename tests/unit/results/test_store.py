"""The shared store of a results file (:mod:`harness.results.store`): results lines refer to what runs
share, each value is kept once, and reading gives back the records written, whatever the data
holds (text that looks like a reference among it)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.model import Finding
from harness.records import CheckResult, RunRecord, record_line
from harness.results import RecordLog, merge_results, read, store
from harness.results.store import HASH_BYTES, MARK, Store, store_path, stored_line
from harness.runner.sink import Results
from tests.unit.test_records import record


def written(path: Path, records: list[RunRecord]) -> None:
    """``records`` written as a run writes them: the results file and its store."""
    with Results(path, False, None, replay=True) as results:
        for one in records:
            results.keep(one)


def store_lines(path: Path) -> list[bytes]:
    return gzip.decompress(store_path(path).read_bytes()).splitlines()


def test_runs_that_share_values_refer_to_them_and_read_back_whole(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    records = [record(repeat=k) for k in range(50)]  # the same transcript and checks fifty times
    written(path, records)
    assert list(read(path)) == records == list(RecordLog.open(path))
    lines = path.read_bytes().splitlines()
    assert all(MARK in line for line in lines)
    whole = sum(len(record_line(r)) + 1 for r in records)
    assert path.stat().st_size + store_path(path).stat().st_size < whole / 3
    keys = [line[2:18] for line in store_lines(path)]
    assert len(keys) == len(set(keys))  # each value once
    assert len(lines[1]) < len(record_line(records[1])) / 3  # its own fields and references


def test_data_that_looks_like_a_reference_is_data(tmp_path: Path) -> None:
    """A reference is ``{"$blob": "<hash>"}`` with a space no compact JSON has: the same key in a
    body, or the same text in a string, is kept as it is."""
    path = tmp_path / "results.jsonl"
    fake = "0123456789abcdef"
    hostile = record()
    hostile.transcript.exchanges[0].request.body.update(
        {"$blob": fake, "x": {"$blob": fake}, "text": f'{{"$blob": "{fake}"}}'}
    )
    hostile.transcript.exchanges[0].response.body = f'{{"$blob": "{fake}"}} {MARK.decode()}'  # type: ignore[union-attr]
    written(path, [hostile])
    (back,) = read(path)
    assert back == hostile and record_line(back) == record_line(hostile)


def test_a_results_file_without_its_store_is_refused_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    written(path, [record(), record(repeat=1)])
    store_path(path).unlink()
    with pytest.raises(
        ConfigError, match=r"results.jsonl:1: refers to a shared value \([0-9a-f]{16}\) that "
    ):
        list(read(path))


def test_a_store_cut_short_by_a_kill_keeps_its_whole_members_and_resumes(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    written(path, [record()])
    shared = store_path(path)
    whole = shared.read_bytes()
    shared.write_bytes(whole + whole[:20])  # a member begun, not finished
    with Results(path, True, None) as results:  # resumed: the cut member goes, new values follow
        results.keep(record(repeat=1, score=1.0))
    assert shared.read_bytes().startswith(whole)
    assert [r.score for r in read(path)] == [87.5, 1.0]


def test_shards_merge_with_their_stores(tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "results.jsonl", tmp_path / "b" / "results.jsonl"
    written(first, [record(repeat=0)])
    written(second, [record(repeat=1, score=3.0)])
    merged = merge_results([first, second], tmp_path / "out" / "results.jsonl")
    assert [r.repeat for r in merged] == [0, 1] and [r.score for r in merged][1] == 3.0


def test_a_store_line_is_json_readable_by_any_tool(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    written(path, [record()])
    for line in store_lines(path):
        key, value = json.loads(line)
        assert len(key) == 16 and value is not None
    with Store(store_path(path)) as store:
        assert store.resolve(path.read_bytes().splitlines()[0], "x") == record_line(record())


def test_a_record_with_text_that_is_not_unicode_is_written_whole() -> None:
    broken = record(scenario="t.\ud83d")
    line, values = stored_line(broken)
    assert values == {} and line == record_line(broken)


hashes = st.binary(min_size=HASH_BYTES, max_size=HASH_BYTES).map(lambda b: b.hex().encode())
places = st.one_of(
    st.just(-1),
    st.tuples(st.integers(0, 2**31 - 1), st.integers(0, 2**32 - 1)).map(lambda p: p[0] << 32 | p[1]),
)


@settings(max_examples=200, deadline=None)
@given(
    steps=st.lists(st.tuples(hashes, places, st.booleans()), max_size=60),
    absent=st.lists(hashes, max_size=5),
    recent=st.integers(1, 8),
)
def test_the_index_finds_every_place_as_a_dict_would(
    steps: list[tuple[bytes, int, bool]], absent: list[bytes], recent: int
) -> None:
    """The compact index (sorted arrays and a small dict merged into them when it fills) answers
    as a dict does: every place set, the last one set for a hash set twice (a kept value written)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store, "_RECENT", recent)
        index: store._Index = store._Index()
        expected: dict[bytes, int] = {}
        for key, place, replace in steps:  # set, or set unless it has a place (put)
            was = key in expected
            assert index.put(key, place, replace) == (replace or not was)
            if replace or not was:
                expected[key] = place
            assert index.get(key) == expected[key]
        assert all(index.get(key) == place for key, place in expected.items())
        assert all(index.get(key) is None for key in absent if key not in expected)


def test_a_damaged_store_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    written(path, [record()])
    damaged = gzip.decompress(store_path(path).read_bytes()).replace(b'["', b'["-', 1)
    store_path(path).write_bytes(gzip.compress(damaged))
    with pytest.raises(
        ConfigError, match=r"results\.shared\.jsonl\.gz: .* is not the hash of a shared value"
    ):
        list(RecordLog.open(path))


def test_a_store_of_more_values_than_the_index_keeps_recent_reads_back_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "_RECENT", 3)  # every few values merged into the sorted arrays
    path = tmp_path / "results.jsonl"
    records = [  # checks of their own each
        record(
            repeat=k,
            checks=(
                CheckResult.of(
                    "expect.calls", "expectation", 3.0, [Finding("expect.calls", "info", True, f"ok {k}")]
                ),
            ),
        )
        for k in range(40)
    ]
    written(path, records)
    assert len(store_lines(path)) >= 40
    assert list(RecordLog.open(path)) == records


def test_a_run_reads_its_records_back_through_the_store_it_wrote_after_a_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The records a run returns read their values through the index the run's store was
    written with (nothing read twice), over the members a resumed run found and the ones it
    added, the last of them ended by the file's end; the log the command opens again over the
    whole file reads through it alike."""
    monkeypatch.setattr(store, "MEMBER_BYTES", 256)  # a member every value or two
    monkeypatch.setattr(store, "_RECENT", 3)
    path = tmp_path / "results.jsonl"

    def own(k: int) -> RunRecord:
        finding = Finding("expect.calls", "info", True, f"ok {k}")
        return record(repeat=k, checks=(CheckResult.of("expect.calls", "expectation", 3.0, [finding]),))

    before, after = [own(k) for k in range(0, 30, 2)], [own(k) for k in range(1, 30, 2)]
    written(path, before)
    members = len(list(store._members(store_path(path))))
    with Results(path, True, None, replay=True) as results:
        for one in after:
            results.keep(one)
    ran = results.records()
    assert isinstance(ran, RecordLog) and len(list(store._members(store_path(path)))) > members > 1
    assert list(ran) == sorted(after, key=lambda r: r.key)
    scanned: list[Path] = []
    monkeypatch.setattr(store, "_members", lambda p: scanned.append(p) or iter(()))
    again = RecordLog.open(path, store=ran.store)
    assert list(again) == sorted(before + after, key=lambda r: r.key)
    assert scanned == []  # the store was not read again to index it
