"""``junit.xml``: one test suite per target, one test case per run, for CI dashboards; a passing
case is its name alone, a case that did not pass says why (its findings, the checks that did not
pass), so the file grows with what failed."""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from harness.analysis.gate import expectation
from harness.records import RunRecord
from harness.reports import write_redacted
from harness.reports.report import Report, RunSummary
from harness.reports.safe import visible


def render(report: Report) -> Iterator[str]:
    """The file's text, a test suite at a time: one ``testsuite`` per target, one ``testcase`` per
    run: an ``error`` run is an error, a failed run a failure; a run expected to fail (``xfail``
    in harness.toml) is skipped with its reason, and one that passed anyway (``xpass``) is a
    failure when the target is strict. The runs are read twice (counts, then cases), never held.

    XML 1.0 cannot hold most control characters, and UTF-8 no lone surrogate: each is written as
    its escape (``\\x00``, ``\\x1b``, ``\\ud83d``; :func:`~harness.reports.safe.visible`), so
    any text a provider sent leaves the file well-formed."""
    return map(visible, _pieces(report))


def _pieces(report: Report) -> Iterator[str]:
    runs = _by_target(report.runs)
    counts: dict[str, Counter[str]] = {}
    for run in runs:
        counts.setdefault(run.target, Counter())[_verdict(report, run)] += 1
    yield "<?xml version='1.0' encoding='utf-8'?>\n"
    if not counts:
        yield '<testsuites name="toolcall-harness" />'
        return
    yield '<testsuites name="toolcall-harness">'
    remaining = iter(runs)
    for target, verdicts in counts.items():
        info = report.summary.targets[target].info
        suite = ET.Element(
            "testsuite",
            name=target,
            tests=str(sum(verdicts.values())),
            failures=str(verdicts["failure"]),
            errors=str(verdicts["error"]),
            skipped=str(verdicts["skipped"]),
        )
        props = ET.SubElement(suite, "properties")
        for key in ("format", "model", "mode", "simulated"):
            ET.SubElement(props, "property", name=key, value=str(getattr(info, key)))
        ET.indent(suite, level=1)
        yield "\n  " + ET.tostring(suite, encoding="unicode").rsplit("</testsuite>", 1)[0].rstrip()
        for run in itertools.islice(remaining, sum(verdicts.values())):
            yield "\n    " + ET.tostring(_case(report, target, run), encoding="unicode")
        yield "\n  </testsuite>"
    yield "\n</testsuites>"


def _by_target(runs: Sequence[RunSummary]) -> Sequence[RunSummary]:
    """``runs`` with each target's runs together, targets in order of first appearance (a report
    built from sorted records already is: then nothing is copied)."""
    order: dict[str, int] = {}
    grouped = True
    for run in runs:
        if run.target not in order:
            order[run.target] = len(order)
        elif order[run.target] != len(order) - 1:
            grouped = False
    return runs if grouped else sorted(runs, key=lambda run: order[run.target])


def _case(report: Report, target: str, run: RunSummary) -> ET.Element:
    verdict = _verdict(report, run)
    name = run.scenario + (f"[{run.repeat}]" if run.repeat else "")
    case = ET.Element("testcase", name=name, classname=f"{target}.{run.category}")
    _outcome(case, report, run, verdict)
    expected = expectation(report.xfail, target, run.scenario, run.outcome)
    xpass = expected is not None and expected[0] == "xpass" and verdict == "passed"
    if verdict != "passed" or xpass:  # a passing case says nothing more: the file grows with failures
        unmet = {check: status for check, status in run.checks.items() if status not in ("pass", "n/a")}
        out = f"score {run.score} · checks not passed {unmet}"
        if xpass and expected is not None:
            out += f" · xpass (not strict): expected to fail ({expected[1]}) but passed"
        ET.SubElement(case, "system-out").text = out
    ET.indent(case, level=2)
    case.tail = None
    return case


def _verdict(report: Report, run: RunSummary) -> str:
    """``error``, ``failure``, ``skipped`` (xfail) or ``passed`` (an xpass that is not strict too)."""
    if run.error:
        return "error"
    expected = expectation(report.xfail, run.target, run.scenario, run.outcome)
    if expected is not None:
        kind, _, strict = expected
        return "skipped" if kind == "xfail" else ("failure" if strict else "passed")
    return "passed" if run.passed else "failure"


def _outcome(case: ET.Element, report: Report, run: RunSummary, verdict: str) -> None:
    """The child element that says how the run ended (none for a pass)."""
    expected = expectation(report.xfail, run.target, run.scenario, run.outcome)
    if verdict == "error" and run.error is not None:
        ET.SubElement(case, "error", type=run.error.kind, message=run.error.message[:500])
    elif verdict == "skipped" and expected is not None:
        ET.SubElement(case, "skipped", type="xfail", message=f"xfail: {expected[1]}"[:500])
    elif verdict == "failure" and expected is not None:
        message = f"XPASS(strict): expected to fail ({expected[1]}) but passed"
        ET.SubElement(case, "failure", type="xpass", message=message[:500])
    elif verdict == "failure":
        failed = [f for f in run.findings if f.severity == "error"]
        element = ET.SubElement(
            case,
            "failure",
            type="conformance",
            message="; ".join(f"{f.check_id}: {f.detail}" for f in failed)[:500],
        )
        element.text = "\n".join(f"{f.check_id} [{f.severity}] {f.detail}" for f in run.findings)


def write(report: Report, records: Iterable[RunRecord], out_dir: Path) -> Path:
    return write_redacted(out_dir / "junit.xml", render(report))
