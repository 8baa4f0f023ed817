"""report.html: the bundled suite replayed, written as one self-contained page, and opened in a
real headless Chromium (Debian's ``chromium``): the page renders its matrix, capability grid and
transcripts, its script runs without an error, its filters work, and nothing a provider sent
ever becomes markup.

Without Chromium the browser tests are skipped, unless ``HARNESS_REQUIRE_LIVE`` is set.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from markupsafe import escape
from msgspec.structs import replace

from harness import scenarios
from harness.api import run_targets, select_targets
from harness.checks.scoring import ErrorSummary
from harness.model import Finding
from harness.records import CheckResult, RunRecord
from harness.registry import WRITERS
from harness.reports import write_built
from harness.reports.html import clean, render
from harness.reports.json_report import build
from harness.reports.report import Baseline, Report
from harness.runner import RunConfig
from harness.targets import pick
from harness.targets_file import load_targets
from tests.helpers.cli import REPO
from tests.helpers.hostile import PLACES, TARGET, records

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
GENERATED = "2025-01-01T00:00:00+00:00"
EVIL_TARGET = 'sim"><img src=x onerror=alert(1)>'
EVIL_BODY = "<script>document.body.setAttribute('data-owned', 'yes')</script>"


def _need(found: bool, what: str) -> None:
    if not found:
        if os.environ.get("HARNESS_REQUIRE_LIVE"):
            pytest.fail(f"HARNESS_REQUIRE_LIVE is set but {what}")
        pytest.skip(what)


def need_chromium() -> None:
    _need(Path(CHROMIUM).is_file(), "chromium is not installed (apt-get install chromium)")


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Report, Path]:
    """The report of the default replay run (every target with cassettes, scenarios/), and its
    report.html."""
    out = tmp_path_factory.mktemp("html")
    config = RunConfig(cassettes=REPO / "cassettes", results=out / "results.jsonl")
    targets = select_targets(load_targets(), [], "replay", config.cassettes)
    records = run_targets(targets, scenarios.load([REPO / "scenarios"]), config)
    report = build(records, GENERATED)
    (path,) = write_built(report, records, out, ("html",))
    return report, path


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A page made from one real run whose target name, response body and finding are hostile
    markup, as a provider or a harness.toml could send them."""
    out = tmp_path_factory.mktemp("hostile")
    suite = scenarios.select(scenarios.load([REPO / "scenarios"]), ["weather.single.paris"])
    config = RunConfig(cassettes=REPO / "cassettes", results=out / "results.jsonl")
    (record,) = run_targets(pick(load_targets(), ["sim-openai"]), suite, config)
    evil = hostile_record(record)
    report = build([evil], GENERATED)
    report.baseline = Baseline("main <b>", 0.0, [], ["sim-openai: 90 -> 100 (+10)", EVIL_BODY])
    (path,) = write_built(report, [evil], out, ("html",))
    return path


def hostile_record(record: RunRecord) -> RunRecord:
    record = copy.deepcopy(record)
    response = record.transcript.exchanges[0].response
    assert response is not None
    response.body = EVIL_BODY
    finding = Finding("wire.odd", "warning", False, EVIL_BODY, 0, {"body": EVIL_BODY})
    checks = (*record.checks, CheckResult.of("protocol.wire", "protocol", 1.0, [finding]))
    return dataclasses.replace(
        record, target=dataclasses.replace(record.target, name=EVIL_TARGET), checks=checks
    )


INJECTED = (
    "<script>{own}</script>",
    '<img src=x onerror="{own}">',
    '<a href="javascript:{own}">link</a>',
    "</script><script>{own}</script>",
    '" onmouseover="{own}" x="',
    "' autofocus onfocus='{own_double}' x='",
    '<svg onload="{own}"></svg>',
    '<iframe srcdoc="<script>parent.{own}</script>">',
)
"""Markup a provider could send; each piece, when it runs, marks the page with its place."""


def inject(place: str) -> str:
    """Every piece of :data:`INJECTED`, marking ``place``."""
    own = f"document.documentElement.dataset.owned='{place}'"
    return " ".join(p.format(own=own, own_double=own.replace("'", '"')) for p in INJECTED)


CHECKER = """<script>
window.addEventListener("load", function () {
  document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  setTimeout(function () {
    var found = [];
    document.querySelectorAll("*").forEach(function (element) {
      Array.prototype.forEach.call(element.attributes, function (a) {
        if (/^on/i.test(a.name) || /^\\s*javascript:/i.test(a.value)) {
          found.push(element.tagName + " " + a.name);
        }
      });
      if (/^(IMG|IFRAME|OBJECT|EMBED)$/.test(element.tagName)) { found.push(element.tagName); }
    });
    found.push(document.scripts.length + " scripts");
    found.push(document.querySelectorAll("pre.json .j-str").length ? "highlighted" : "not highlighted");
    document.body.setAttribute("data-check", found.join("; "));
  }, 500);
});
</script>"""
"""Appended to the page by the test: opens every run and transcript (so the JSON highlighter goes
over every body), then lists every event-handler attribute, ``javascript:`` URL, image, frame
and script in the document."""


@pytest.fixture(scope="module")
def injected(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A page whose every provider-controlled string (text, tool name, argument key and value,
    call id, finish reason, provider error, tool result, wire bodies, finding detail and
    evidence, note, run error; :mod:`tests.helpers.hostile`), the target's name and model, and a
    baseline line hold :data:`INJECTED`, with :data:`CHECKER` appended."""
    out = tmp_path_factory.mktemp("injected")
    target = dataclasses.replace(TARGET, name=EVIL_TARGET, model=inject("model"))
    runs = records(inject, target)
    report = build(runs, GENERATED)
    report.baseline = Baseline(inject("baseline"), 0.0, [], [inject("baseline line")])
    (path,) = write_built(report, runs, out, ("html",))
    html = path.read_text(encoding="utf-8")
    assert html.count("</body>") == 1
    path.write_text(html.replace("</body>", CHECKER + "</body>"), encoding="utf-8")
    return path


def test_chromium_runs_no_script_a_provider_sent(injected: Path, tmp_path: Path) -> None:
    """Injected markup in every place a provider controls shows as text: no script of it runs,
    no element or attribute of it exists, and the page's own script (filters, JSON highlighting
    over every opened body) runs to its end without an error."""
    need_chromium()
    flags = ("--dump-dom", "--disable-background-networking")
    dom = chromium(injected.as_uri(), tmp_path, *flags, timeout=120).stdout  # a page broken by markup hangs
    html_tag = re.search(r"<html[^>]*>", dom)
    assert html_tag is not None and html_tag.group() == '<html lang="en">', "an injected script ran"
    assert 'data-check="3 scripts; highlighted"' in dom, re.findall(r'data-check="[^"]*"', dom)
    assert '<body data-ready="yes"' in dom and '<pre id="js-errors" class="hidden"></pre>' in dom
    for place in PLACES:
        assert f"&lt;script&gt;document.documentElement.dataset.owned='{place}'&lt;/script&gt;" in dom, place


def test_chromium_checker_sees_injected_markup(injected: Path, tmp_path: Path) -> None:
    """The clean verdict above is evidence: markup that does get into the page is seen."""
    need_chromium()
    broken = tmp_path / "broken.html"
    own = "document.documentElement.dataset.owned='control'"
    raw = INJECTED[1].format(own=own) + INJECTED[0].format(own=own)
    broken.write_text(
        injected.read_text(encoding="utf-8").replace("</body>", raw + "</body>"), encoding="utf-8"
    )
    flags = ("--dump-dom", "--disable-background-networking")
    dom = chromium(broken.as_uri(), tmp_path, *flags, timeout=120).stdout
    assert '<html lang="en" data-owned="control">' in dom
    assert 'data-check="IMG onerror; IMG; 4 scripts; highlighted"' in dom, re.findall(
        r'data-check="[^"]*"', dom
    )


def section(html: str, element_id: str) -> str:
    start = html.index(f'id="{element_id}"')
    return html[start : html.index("</table>", start)]


def test_the_html_writer_is_registered() -> None:
    assert "html" in WRITERS


def test_the_page_makes_no_network_reference(bundled: tuple[Report, Path]) -> None:
    html = bundled[1].read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]*\bsrc\s*=", html), "a script must be inline"
    assert not re.search(r"<link[^>]*\bhref\s*=", html), "styles must be inline"
    assert not re.search(r"<img[^>]*\bsrc\s*=\s*[\"']?(https?:)?//", html)
    assert not re.search(r"url\(\s*[\"']?(https?:)?//|@import", html)
    # The page grows with the runs it shows a transcript for (the runs that did not pass
    # cleanly); it must not grow faster than they do, nor past what a browser opens readily.
    shown = sum(1 for run in bundled[0].runs if not clean(run))
    assert len(html) < 2_000 * len(bundled[0].runs) + 16_000 * shown, "a run costs too much page"
    assert len(html) < 32_000_000, "the page must stay small enough to open"


def test_every_capability_cell_links_to_the_runs_that_decided_it(
    bundled: tuple[Report, Path],
) -> None:
    report, path = bundled
    html = path.read_text(encoding="utf-8")
    ids = set(re.findall(r'<details class="run[^"]*" id="([^"]+)"', html))
    assert len(ids) == len(report.runs)
    assert set(re.findall(r'href="#(run-[^"]+)"', html)) <= ids  # every link on the page goes to a run
    links = set(re.findall(r'href="#(run-[^"]+)"', section(html, "capability-grid")))
    assert links
    decided = {
        f"run-{run}"
        for cells in report.capabilities.targets.values()
        for c in cells.values()
        for run in c.runs
    }
    assert decided == links


def test_the_page_holds_every_section(bundled: tuple[Report, Path]) -> None:
    report, path = bundled
    html = path.read_text(encoding="utf-8")
    for element_id in ("matrix", "score-chart", "endpoint-faults", "capability-grid", "check-heatmap"):
        assert f'id="{element_id}"' in html, element_id
    assert 'id="modes"' in html and 'id="performance-table"' in html
    faults = html[html.index('id="endpoint-faults"') : html.index('id="capabilities"')]
    for name, target in report.summary.targets.items():
        for what, count in target.endpoint_faults.items():
            assert f"{what} in {count} run" in faults, (name, what)
    latencies = sorted(
        ms
        for r in report.runs
        if r.target == "sim-openai"
        for ms in r.recorded_latency_ms or ()
        if ms is not None
    )
    p50 = latencies[(len(latencies) + 1) // 2 - 1]
    row = re.search(r'data-target="sim-openai">(.*?)</tr>', section(html, "performance-table"), re.S)
    assert row is not None and f"{p50:.0f} ms" in row.group(1)


def test_a_drifted_run_shows_its_diff(bundled: tuple[Report, Path]) -> None:
    report, _ = bundled
    error = ErrorSummary("CassetteDriftError", "cassette", "diff:\n- 'Paris'\n+ 'Lyon'")
    run = replace(report.runs[0], outcome="error", passed=False, score=None, error=error)
    html = render(replace(report, runs=[run]), [])
    assert "the requests drifted from the cassette" in html
    assert "<pre class=\"drift\">diff:\n- 'Paris'\n+ 'Lyon'</pre>" in html


def test_simulated_targets_are_labelled_wherever_a_score_appears(
    bundled: tuple[Report, Path],
) -> None:
    report, path = bundled
    html = path.read_text(encoding="utf-8")
    matrix = section(html, "matrix")
    for name, target in report.summary.targets.items():
        row = re.search(rf'<tr class="filterable" data-target="{re.escape(name)}">(.*?)</tr>', matrix, re.S)
        assert row is not None, name
        assert ('class="badge sim"' in row.group(1)) is target.info.simulated, name
        if target.info.simulated:
            assert f"{name} (simulated)</text>" in html, "the score chart labels it too"
    assert str(escape(report.simulated_note)) in html


def test_provider_text_never_becomes_markup(hostile: Path) -> None:
    html = hostile.read_text(encoding="utf-8")
    assert html.count("<script") == 2, "only the page's own two scripts"
    assert "<img src=x" not in html and "<b>" not in html
    assert "&lt;script&gt;document.body.setAttribute(" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert 'id="baseline"' in html and "sim-openai: 90 -&gt; 100 (+10)" in html


def chromium(url: str, tmp: Path, *flags: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Headless Chromium on ``url`` with logging to stderr; the page's script gets virtual time."""
    command = [
        CHROMIUM,
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        f"--user-data-dir={tmp / 'chromium-profile'}",
        "--virtual-time-budget=10000",
        "--enable-logging=stderr",
        "--v=0",
        *flags,
        url,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def console_lines(stderr: str) -> list[str]:
    """What the page wrote to its console (uncaught errors included)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def test_chromium_renders_the_page_without_a_script_error(
    bundled: tuple[Report, Path], tmp_path: Path
) -> None:
    need_chromium()
    report, path = bundled
    dom = chromium(path.as_uri(), tmp_path, "--dump-dom")
    assert console_lines(dom.stderr) == []
    html = dom.stdout
    assert '<body data-ready="yes">' in html, "the page's script ran to its end"
    assert '<pre id="js-errors" class="hidden"></pre>' in html
    assert 'id="matrix"' in html and 'id="score-chart"' in html and 'id="check-heatmap"' in html
    assert 'id="capability-grid"' in html and 'class="cap cap-yes"' in html
    assert 'id="verification"' in html and "local-llamacpp-gemma3-270m" in section(html, "verification")
    assert 'class="transcript"' in html and 'class="exchange"' in html
    assert f"{len(report.runs)} of {len(report.runs)} runs shown" in html

    shot = tmp_path / "report.png"
    chromium(path.as_uri(), tmp_path, f"--screenshot={shot}", "--window-size=1400,2000")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


def test_chromium_filters_runs_by_target_and_outcome(bundled: tuple[Report, Path], tmp_path: Path) -> None:
    need_chromium()
    report, path = bundled
    dom = chromium(path.as_uri() + "?target=sim-openai&outcome=pass", tmp_path, "--dump-dom").stdout
    wanted = [r for r in report.runs if r.target == "sim-openai" and r.outcome == "pass"]
    assert f"{len(wanted)} of {len(report.runs)} runs shown" in dom
    assert re.search(r'class="run filterable outcome-pass" id="run-sim-openai/', dom)
    hidden = re.findall(r'class="run filterable outcome-\w+ hidden" id="run-([^/"]+)/', dom)
    assert len(hidden) == len(report.runs) - len(wanted)


def test_chromium_shows_provider_markup_as_text(hostile: Path, tmp_path: Path) -> None:
    need_chromium()
    dom = chromium(hostile.as_uri(), tmp_path, "--dump-dom")
    assert '<body data-ready="yes">' in dom.stdout, "the hostile body's script must not have run"
    assert "&lt;script&gt;document.body.setAttribute(" in dom.stdout
    assert console_lines(dom.stderr) == []


def test_chromium_error_box_catches_a_script_error(hostile: Path, tmp_path: Path) -> None:
    """The empty error box above is evidence: a failing script does fill it."""
    need_chromium()
    broken = tmp_path / "broken.html"
    html = hostile.read_text(encoding="utf-8")
    broken.write_text(html.replace("</body>", "<script>notDefined();</script></body>"), encoding="utf-8")
    dom = chromium(broken.as_uri(), tmp_path, "--dump-dom")
    assert re.search(r'<pre id="js-errors" class="">error: Uncaught ReferenceError: notDefined', dom.stdout)
    assert any("Uncaught ReferenceError" in line for line in console_lines(dom.stderr))
