"""``junit.xml``: one test suite per target, one test case per run, for CI dashboards."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from harness import secrets
from harness.records import RunRecord


def render(report: dict[str, Any]) -> ET.ElementTree:
    root = ET.Element("testsuites", name="toolcall-harness")
    by_target: dict[str, list[dict[str, Any]]] = {}
    for run in report["runs"]:
        by_target.setdefault(run["target"], []).append(run)
    for target, runs in by_target.items():
        info = report["summary"]["targets"][target]["info"]
        suite = ET.SubElement(
            root,
            "testsuite",
            name=target,
            tests=str(len(runs)),
            failures=str(sum(1 for r in runs if not r["passed"] and not r["error"])),
            errors=str(sum(1 for r in runs if r["error"])),
        )
        props = ET.SubElement(suite, "properties")
        for key in ("format", "model", "mode", "simulated"):
            ET.SubElement(props, "property", name=key, value=str(info[key]))
        for run in runs:
            name = run["scenario"] + (f"[{run['repeat']}]" if run["repeat"] else "")
            case = ET.SubElement(suite, "testcase", name=name, classname=f"{target}.{run['category']}")
            if run["error"]:
                ET.SubElement(case, "error", type=run["error"]["kind"], message=run["error"]["message"][:500])
            elif not run["passed"]:
                failed = [f for f in run["findings"] if f["severity"] == "error"]
                element = ET.SubElement(
                    case,
                    "failure",
                    type="conformance",
                    message="; ".join(f"{f['check_id']}: {f['detail']}" for f in failed)[:500],
                )
                element.text = "\n".join(
                    f"{f['check_id']} [{f['severity']}] {f['detail']}" for f in run["findings"]
                )
            ET.SubElement(case, "system-out").text = f"score {run['score']} · checks {run['checks']}"
    ET.indent(root)
    return ET.ElementTree(root)


def write(report: dict[str, Any], records: list[RunRecord], out_dir: Path) -> Path:
    path = out_dir / "junit.xml"
    root = render(report).getroot()
    assert root is not None
    text = ET.tostring(root, encoding="unicode", xml_declaration=True)
    path.write_text(secrets.redact(text), encoding="utf-8")
    return path
