"""``junit.xml``: one test suite per target, one test case per run, for CI dashboards."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness import secrets
from harness.records import RunRecord
from harness.reports import expectation


def render(report: dict[str, Any]) -> ET.ElementTree:
    """One ``testsuite`` per target, one ``testcase`` per run: an ``error`` run is an error, a
    failed run a failure; a run expected to fail (``xfail`` in harness.toml) is skipped with its
    reason, and one that passed anyway (``xpass``) is a failure when the target is strict."""
    root = ET.Element("testsuites", name="toolcall-harness")
    by_target: dict[str, list[dict[str, Any]]] = {}
    for run in report["runs"]:
        by_target.setdefault(run["target"], []).append(run)
    for target, runs in by_target.items():
        info = report["summary"]["targets"][target]["info"]
        verdicts = [_verdict(report, run) for run in runs]
        suite = ET.SubElement(
            root,
            "testsuite",
            name=target,
            tests=str(len(runs)),
            failures=str(verdicts.count("failure")),
            errors=str(verdicts.count("error")),
            skipped=str(verdicts.count("skipped")),
        )
        props = ET.SubElement(suite, "properties")
        for key in ("format", "model", "mode", "simulated"):
            ET.SubElement(props, "property", name=key, value=str(info[key]))
        for run, verdict in zip(runs, verdicts, strict=True):
            name = run["scenario"] + (f"[{run['repeat']}]" if run["repeat"] else "")
            case = ET.SubElement(suite, "testcase", name=name, classname=f"{target}.{run['category']}")
            _outcome(case, report, run, verdict)
            out = f"score {run['score']} · checks {run['checks']}"
            expected = expectation(report, target, run["scenario"], run["outcome"])
            if expected is not None and expected[0] == "xpass" and verdict == "passed":
                out += f" · xpass (not strict): expected to fail ({expected[1]}) but passed"
            ET.SubElement(case, "system-out").text = out
    ET.indent(root)
    return ET.ElementTree(root)


def _verdict(report: dict[str, Any], run: dict[str, Any]) -> str:
    """``error``, ``failure``, ``skipped`` (xfail) or ``passed`` (an xpass that is not strict too)."""
    if run["error"]:
        return "error"
    expected = expectation(report, run["target"], run["scenario"], run["outcome"])
    if expected is not None:
        kind, _, strict = expected
        return "skipped" if kind == "xfail" else ("failure" if strict else "passed")
    return "passed" if run["passed"] else "failure"


def _outcome(case: ET.Element, report: dict[str, Any], run: dict[str, Any], verdict: str) -> None:
    """The child element that says how the run ended (none for a pass)."""
    expected = expectation(report, run["target"], run["scenario"], run["outcome"])
    if verdict == "error":
        ET.SubElement(case, "error", type=run["error"]["kind"], message=run["error"]["message"][:500])
    elif verdict == "skipped" and expected is not None:
        ET.SubElement(case, "skipped", type="xfail", message=f"xfail: {expected[1]}"[:500])
    elif verdict == "failure" and expected is not None:
        message = f"XPASS(strict): expected to fail ({expected[1]}) but passed"
        ET.SubElement(case, "failure", type="xpass", message=message[:500])
    elif verdict == "failure":
        failed = [f for f in run["findings"] if f["severity"] == "error"]
        element = ET.SubElement(
            case,
            "failure",
            type="conformance",
            message="; ".join(f"{f['check_id']}: {f['detail']}" for f in failed)[:500],
        )
        element.text = "\n".join(f"{f['check_id']} [{f['severity']}] {f['detail']}" for f in run["findings"])


def write(report: dict[str, Any], records: Iterable[RunRecord], out_dir: Path) -> Path:
    path = out_dir / "junit.xml"
    root = render(report).getroot()
    assert root is not None
    text = ET.tostring(root, encoding="unicode", xml_declaration=True)
    path.write_text(secrets.redact(text), encoding="utf-8")
    return path
