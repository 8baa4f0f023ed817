"""Hostile replies from a real loopback server, end to end through the harness's own loop: a gzip
bomb, numbers JSON cannot carry in object arguments, lone surrogates in every wire format, and a
base URL with a query. Each is the endpoint's fault, a finding on a scored run; none crashes the
harness, runs away with memory, or reaches disk unscrubbed."""

from __future__ import annotations

import json
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from harness.api import RunResult, load_scenarios, run
from harness.providers import formats
from harness.records import RunRecord, decode_record, record_line
from harness.runner import RunConfig
from harness.targets import Target
from harness.transport.send import MAX_RESPONSE_BYTES
from tests.helpers.cli import REPO
from tests.helpers.eventstream import EVENTSTREAM
from tests.helpers.hostile_replies import (
    MARK,
    MIB,
    Answer,
    Body,
    ScriptedServer,
    bomb_size,
    final_body,
    gzip_bomb,
    marked_as,
    reply_body,
    swapped,
)

PARIS = load_scenarios(REPO / "scenarios", select=["weather.single.paris"])


def answer(fmt: str, stream: bool, body: Body) -> Answer:
    if isinstance(body, bytes):  # an event stream
        return Answer(body, headers={"content-type": EVENTSTREAM})
    kind = (
        ("application/x-ndjson" if fmt == "ollama-chat" else "text/event-stream")
        if stream
        else "application/json"
    )
    return Answer(body.encode(), headers={"content-type": kind})


def one(target: Target, **options: Any) -> tuple[RunRecord, RunResult]:
    result = run(PARIS, [target], RunConfig(**options))
    (record,) = result.records
    assert decode_record(record_line(record)).key == record.key  # the results line is written and read back
    return record, result


def failed(record: RunRecord) -> set[str]:
    return {f.check_id for f in record.findings() if not f.passed}


def test_a_gzip_bomb_is_a_finding_recorded_small_and_replayed_alike(tmp_path: Path) -> None:
    """2 MB of gzip inflating to 2 GiB: before, 6.2 GB of memory for one run and the body written
    twice (cassette and results). The server stops after 128 KiB of it, so a client that inflated
    everything would fail here on a cut stream instead of running the machine out of memory."""
    headers = {
        "content-type": "application/json",
        "content-encoding": "gzip",
        "content-length": str(bomb_size(2048)),
    }
    cassettes = tmp_path / "c"
    with ScriptedServer(
        lambda n, target, body: Answer(gzip_bomb(2048, trip_after=128 * 1024), headers=headers)
    ) as server:
        target = Target.build("bomb", format="openai-chat", model="m", base_url=server.url + "/v1", retries=0)
        records = []
        for mode in ("live", "record", "replay"):
            tracemalloc.start()
            started = time.process_time()
            record, _ = one(target, mode=mode, cassettes=cassettes)
            seconds, peak = time.process_time() - started, tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            assert peak < MAX_RESPONSE_BYTES + 32 * MIB and seconds < 30, (mode, peak, seconds)
            records.append(record)
        assert len(server.seen) == 2  # live and record; replay sent nothing
    for record in records:
        assert record.error is None and record.outcome == "fail" and record.score is not None
        assert {"wire.body_too_large", "protocol.provider_error"} <= failed(record)
        assert len(record.transcript.exchanges[0].response.body) == 4096  # type: ignore[union-attr]
    (cassette,) = cassettes.rglob("*.yaml")
    assert cassette.stat().st_size < 64 * 1024


@pytest.mark.parametrize("fmt", ["anthropic-messages", "gemini-generate", "ollama-chat", "bedrock-converse"])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("literal", ["1e999", "NaN", "-Infinity"])
def test_a_number_json_cannot_carry_in_object_arguments_is_the_providers_finding(
    fmt: str, stream: bool, literal: str
) -> None:
    """Before: the value went back into the next request, ``ValueError: Out of range float values``,
    and the run was an ``error`` with cause ``harness``."""
    hostile = reply_body(fmt, stream, name="get_weather", arguments={"city": "paris", "n": MARK}, text=None)
    hostile = marked_as(hostile, literal)
    with ScriptedServer(
        [answer(fmt, stream, hostile), answer(fmt, stream, final_body(fmt, stream))]
    ) as server:
        target = Target.build("nf", format=fmt, model="m", base_url=server.url, stream=stream, retries=0)
        record, _ = one(target, mode="live")
    assert record.error is None and record.score is not None, record.error
    sent_back = server.seen[1].body
    (finding,) = [f for f in record.findings() if f.check_id == "wire.arguments_nonfinite_number"]
    assert finding.severity == "error" and "call 0 (get_weather)" in finding.detail
    assert json.loads(sent_back, parse_constant=lambda name: pytest.fail(f"{name} sent back"))
    assert [e.call.arguments for e in record.transcript.executions] == [{"city": "paris", "n": None}]


@pytest.mark.parametrize("fmt", formats())
@pytest.mark.parametrize("stream", [False, True])
def test_lone_surrogates_everywhere_in_a_reply_leave_a_scored_run_and_a_results_line(
    fmt: str, stream: bool
) -> None:
    """``\\ud83d`` in the text, the tool name, an argument and the call id at once."""
    clean = reply_body(
        fmt, stream, name="get_weather" + MARK, arguments={"city": "paris" + MARK}, text="hi" + MARK
    )
    with ScriptedServer([answer(fmt, stream, clean)]) as probe:  # to learn the call id the writer gives
        wire_id = (
            one(
                Target.build("s", format=fmt, model="m", base_url=probe.url, stream=stream, retries=0),
                mode="live",
            )[0]
            .transcript.exchanges[0]
            .parsed.tool_calls[0]
            .wire_id
        )
    assert wire_id
    hostile = swapped(swapped(clean, wire_id, wire_id + MARK), MARK, "\\ud83d")
    with ScriptedServer(
        [answer(fmt, stream, hostile), answer(fmt, stream, final_body(fmt, stream))]
    ) as server:
        target = Target.build("s", format=fmt, model="m", base_url=server.url, stream=stream, retries=0)
        record, _ = one(target, mode="live")
    assert record.error is None and record.score is not None, record.error
    assert "wire.invalid_unicode" in failed(record)
    line = record_line(record)
    line.decode("utf-8")  # valid UTF-8 throughout
    (call,) = record.transcript.exchanges[0].parsed.tool_calls
    # Cohere's ids start with the tool's name, so the marked name is in the id too
    assert call.name == "get_weather\ufffd" and call.wire_id == wire_id.replace(MARK, "\ufffd") + "\ufffd"
    assert (
        call.arguments == {"city": "paris\ufffd"} and record.transcript.exchanges[0].parsed.text == "hi\ufffd"
    )


@pytest.mark.parametrize(("fmt", "stream"), [("anthropic-messages", False), ("gemini-generate", True)])
def test_a_query_in_the_base_url_stays_on_every_request_after_the_formats_path(
    fmt: str, stream: bool, tmp_path: Path
) -> None:
    """``?api-version=`` (Azure's shape): the path was appended after it
    (``/m/ok?api-version=2024-01-01/v1/messages``)."""
    script = [
        answer(
            fmt, stream, reply_body(fmt, stream, name="get_weather", arguments={"city": "paris"}, text=None)
        ),
        answer(fmt, stream, final_body(fmt, stream)),
    ]
    secret = "sk-QUERY-SECRET-0042"
    for mode in ("record", "replay"):
        with ScriptedServer(script) as server:
            base = f"{server.url}/m/ok?api-version=2024-01-01&key={secret}"
            target = Target.build("q", format=fmt, model="m", base_url=base, stream=stream, retries=0)
            record, _ = one(target, mode=mode, cassettes=tmp_path)
            seen = [s.target for s in server.seen]
        assert record.error is None and not failed(record) & {"expect.calls", "protocol.wire"}, failed(record)
        if mode == "record":
            path = (
                "/m/ok/v1/messages"
                if fmt == "anthropic-messages"
                else "/m/ok/v1beta/models/m:streamGenerateContent"
            )
            extra = "alt=sse&" if stream else ""
            assert seen == [f"{path}?{extra}api-version=2024-01-01&key={secret}"] * 2
        else:
            assert seen == []
        urls = [e.request.url for e in record.transcript.exchanges]
        assert all("api-version=2024-01-01&key=<scrubbed>" in url for url in urls), urls
    written = [p.read_text() for p in tmp_path.rglob("*") if p.is_file()]
    assert written and not any(secret in text for text in written)
