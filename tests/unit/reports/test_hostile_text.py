"""Every report writer is total: whatever string a provider, a tool or an MCP server sent (any
Unicode, lone surrogates, NUL, ANSI escapes, markup), each report is written and is valid:
report.json parses, junit.xml parses, report.html holds only the page's own markup, report.md's
tables keep their columns, and no control character reaches a report or the console raw.

The property runs a fixed budget of examples, derandomized so CI sees the same ones every run;
the inputs that once crashed a writer are pinned as its examples.
"""

from __future__ import annotations

import gc
import json
import re
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from harness.cli.console import console, escape, print_table
from harness.model import Finding, WireResponse
from harness.records import CheckResult, RunRecord, record_line
from harness.reports import write_reports
from harness.reports.html import FILES, read_details
from harness.reports.markdown import step_summary
from harness.reports.safe import DEPTH_LIMIT, INVISIBLE
from harness.results import RecordLog, read
from tests.helpers import hostile

BUDGET = settings(
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

LONE_SURROGATE = "\ud83d"
ANSI = "\x1b[2J\x1b]0;owned\x07\x9b31m"
MARKUP = "<script>alert(1)</script><img src=x onerror=alert(1)>\"'|\n# heading [x](https://example.com) `code"
MARKDOWN = MarkdownIt("commonmark").enable("table")
WRITTEN = ("report.json", "report.md", "report.html", "junit.xml")

hostile_text = st.one_of(
    st.text(st.characters(codec=None, exclude_categories=()), max_size=30),  # surrogates, controls
    st.lists(
        st.sampled_from(
            [LONE_SURROGATE, "\x00", "\x1b[2J", "\x9b", "\ufffe", "|", "\n", "<", "]", "`", "\\"]
        ),
        max_size=8,
    ).map("".join),
)
"""Any code point, and often the ones that broke a writer or a format."""


def records(strings: list[str]) -> list[RunRecord]:
    """The records of :mod:`tests.helpers.hostile`, the ``strings`` in its places in turn."""
    return hostile.records(lambda place: strings[hostile.PLACES.index(place) % len(strings)])


class Tags(HTMLParser):
    """The start tags of a page, with their attribute names."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[str]]] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, [name for name, _ in attrs]))


@pytest.fixture(scope="module")
def plain() -> tuple[set[tuple[str, tuple[str, ...]]], int]:
    """The tags (and attribute names) of report.html and the number of headings of report.md,
    for the same records holding plain text."""
    with tempfile.TemporaryDirectory() as tmp:
        write_reports(records(["plain"]), Path(tmp), ("markdown", "html"), "now")
        page = (Path(tmp) / "report.html").read_text(encoding="utf-8")
        tags = Tags(page + "".join(read_details(Path(tmp) / FILES).values())).tags
        markdown = MARKDOWN.parse((Path(tmp) / "report.md").read_text(encoding="utf-8"))
    return {(tag, tuple(attrs)) for tag, attrs in tags}, _kinds(markdown).count("heading_open")


def _kinds(tokens: list[Token]) -> list[str]:
    return [t.type for token in tokens for t in (token, *(token.children or []))]


def check_markdown(markdown: str, headings: int) -> None:
    """The Markdown, as a CommonMark reader with tables takes it: no HTML, link or image in it,
    only its own headings, and every row of every table has as many cell borders as its header
    (no text ends a cell)."""
    kinds = _kinds(MARKDOWN.parse(markdown))
    assert not {"html_inline", "html_block", "link_open", "image"} & set(kinds)
    assert kinds.count("heading_open") == headings
    columns = None
    for line in markdown.splitlines():
        if not line.startswith("|"):
            columns = None
            continue
        cells = len(re.findall(r"(?<!\\)\|", line))
        columns = columns or cells
        assert cells == columns, line


@BUDGET
@given(strings=st.lists(hostile_text, min_size=1, max_size=len(hostile.PLACES)))
@example(strings=[LONE_SURROGATE])
@example(strings=["\x00" + ANSI])
@example(strings=[MARKUP])
@example(strings=["a\ud83db", "\udfff", "name\x00", "\x1b[2J", "|", "x\ny", "\ufffe"])
def test_every_writer_takes_any_provider_string(
    strings: list[str], plain: tuple[set[tuple[str, tuple[str, ...]]], int]
) -> None:
    page_tags, headings = plain
    with tempfile.TemporaryDirectory() as tmp:
        report, paths = write_reports(records(strings), Path(tmp), generated_at="now")
        assert [p.name for p in paths] == list(WRITTEN)
        texts = {p.name: p.read_bytes().decode("utf-8") for p in paths}  # valid UTF-8, each
        details = "".join(read_details(Path(tmp) / FILES).values())  # report.html's runs, opened
    assert len(json.loads(texts["report.json"])["runs"]) == 2
    assert len(ET.fromstring(texts["junit.xml"].encode()).findall("testsuite/testcase")) == 2
    for name in WRITTEN[1:]:
        assert INVISIBLE.search(texts[name]) is None, name
    assert INVISIBLE.search(details) is None
    tags = Tags(texts["report.html"]).tags
    assert [tag for tag, _ in tags].count("script") == 2
    tags += Tags(details).tags
    assert {(tag, tuple(attrs)) for tag, attrs in tags} <= page_tags, "only the page's own markup"
    check_markdown(texts["report.md"], headings)
    summary = step_summary(report, "reports")
    assert INVISIBLE.search(summary) is None
    check_markdown(summary, 1)


@pytest.mark.parametrize("text", [LONE_SURROGATE + ANSI + "\x00", MARKUP])
def test_the_console_shows_provider_text_with_its_control_characters_escaped(
    text: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The score table (a model name an endpoint reported) and a run's error message, printed as
    ``harness run`` prints them."""
    monkeypatch.setenv("COLUMNS", "100")
    target = replace(hostile.TARGET, model=text)
    with tempfile.TemporaryDirectory() as tmp:
        report, _ = write_reports(hostile.records(lambda place: text, target), Path(tmp), ("json",), "now")
    print_table(report)
    run = report.runs[1]
    assert run.error is not None
    console(stderr=True).print(f"[red]{escape(run.target)}:[/red] {escape(run.error.message)}")
    out, err = capsys.readouterr()
    assert INVISIBLE.search(out + err) is None
    if text != MARKUP:
        assert "\\x1b[2J\\x1b]0;owned\\x07\\x9b31m" in out and "\\ud83d\\x1b[2J" in err
    else:
        assert "<script>alert(1)</script>" in err  # shown as written


def nested(depth: int) -> dict[str, Any]:
    """``{"a": [{"a": [...]}]}``, ``depth`` objects deep, built without recursion (and without the
    garbage collector going over the growing value again and again)."""
    value: Any = "bottom"
    gc.disable()
    try:
        for _ in range(depth):
            value = {"a": [value]}
    finally:
        gc.enable()
    return value  # type: ignore[no-any-return]


def test_json_nested_100000_deep_is_written_bounded_in_time() -> None:
    """A reply nested 100,000 deep (as a cassette may hold it) is shown as it came, saying why;
    a value that deep in a record (a finding's evidence, a call's arguments) is shown to
    :data:`~harness.reports.safe.DEPTH_LIMIT` levels and elided below, saying so."""
    failed, untested = hostile.records(lambda place: "x")
    first, second = failed.transcript.exchanges
    first.response = WireResponse(200, "[" * 100_000 + "]" * 100_000)
    second.response = WireResponse(500, '{"a":' * 100_000 + "1" + "}" * 100_000)
    first.parsed.tool_calls[0].arguments = nested(100_000)
    finding = Finding("wire.deep", "error", False, "deep", 0, {"value": nested(100_000)})
    deep = replace(
        failed, checks=(*failed.checks, CheckResult.of("protocol.deep", "protocol", 1.0, [finding]))
    )
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        write_reports([deep, untested], Path(tmp), generated_at="now")
        elapsed = time.perf_counter() - started
        page = "".join(read_details(Path(tmp) / FILES).values())  # report.html's runs, opened
        report = json.loads((Path(tmp) / "report.json").read_text(encoding="utf-8"))
    assert elapsed < 5, f"{elapsed:.1f} s"
    assert page.count("(JSON nested too deep to indent: shown as it came)") == 2
    elided = f" nested deeper than {DEPTH_LIMIT} levels: not shown"
    assert page.count(elided + "&gt;") == 2  # the call's arguments, the finding's evidence
    shown = json.dumps(report["runs"][0]["findings"]) + json.dumps(report["runs"][0]["calls"])
    assert shown.count(elided + ">") == 2


def test_a_failed_run_explained_to_pytest_shows_control_characters_as_escapes() -> None:
    """What the pytest plugin prints for a failed run (and Allure keeps as its message)."""
    from harness.pytest_plugin import explain

    failed, untested = hostile.records(lambda place: LONE_SURROGATE + ANSI + "\x00")
    for record in (failed, untested):
        text = explain(record)
        assert INVISIBLE.search(text) is None
        assert "\\ud83d\\x1b[2J\\x1b]0;owned\\x07\\x9b31m\\x00" in text


def test_a_run_holding_lone_surrogates_is_recorded_read_back_and_published(tmp_path: Path) -> None:
    """A lone surrogate in a finding's detail (held in the record's tuple of checks) reaches the
    results file as the records codec writes it, and every report is written from that file."""
    path = tmp_path / "results.jsonl"
    path.write_bytes(b"".join(record_line(r) + b"\n" for r in records([LONE_SURROGATE + "x"])))
    back = list(read(path))
    assert [f.detail for f in back[0].findings()] == ["?x", "?x", "?x"]
    _, paths = write_reports(RecordLog.open(path), tmp_path / "out", generated_at="now")
    assert [p.name for p in paths] == list(WRITTEN)
