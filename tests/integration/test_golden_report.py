"""The default run's report.json, held against a committed one: a change of behaviour shows here.

``tests/data/golden/report.json.gz`` is the report of the default ``harness run``
(the bundled suite replayed from the committed cassettes). The new report must
equal it apart from ``generated_at`` and fields added since (a field that
appears is reported, not failed). When a change of scores is intended, rewrite
the file with::

    python -m tests.integration.test_golden_report --update
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

from harness import scenarios
from harness.api import run_targets as run
from harness.api import select_targets
from harness.reports.json_report import build, write
from harness.runner import RunConfig
from harness.targets_file import load_targets
from tests.helpers.cli import REPO

GOLDEN = REPO / "tests" / "data" / "golden" / "report.json.gz"


def default_report(tmp: Path) -> dict[str, Any]:
    """The report of the default replay run, as ``harness run`` builds it."""
    config = RunConfig(cassettes=REPO / "cassettes", results=tmp / "results.jsonl")
    targets = select_targets(
        load_targets(REPO / "harness.toml" if (REPO / "harness.toml").exists() else None),
        [],
        "replay",
        config.cassettes,
    )
    records = run(targets, scenarios.load([REPO / "scenarios"]), config)
    written = write(build(records), records, tmp)  # the runs come from the spool, a run at a time
    report: dict[str, Any] = json.loads(written.read_text(encoding="utf-8"))
    report.pop("generated_at")
    return report


def differences(old: Any, new: Any, path: str = "$") -> tuple[list[str], list[str]]:
    """(changed or removed, added) paths between two JSON documents."""
    changed: list[str] = []
    added: list[str] = []
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key not in new:
                changed.append(f"{path}.{key}: removed")
            else:
                c, a = differences(old[key], new[key], f"{path}.{key}")
                changed += c
                added += a
        added += [f"{path}.{key}" for key in new if key not in old]
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for index, (o, n) in enumerate(zip(old, new, strict=True)):
            c, a = differences(o, n, f"{path}[{index}]")
            changed += c
            added += a
    elif old != new:
        changed.append(f"{path}: {json.dumps(old)[:120]} -> {json.dumps(new)[:120]}")
    return changed, added


def test_the_default_run_gives_the_committed_report(tmp_path: Path) -> None:
    golden = json.loads(gzip.decompress(GOLDEN.read_bytes()))
    golden.pop("generated_at")
    changed, _added = differences(golden, default_report(tmp_path))
    assert changed == [], "report.json changed:\n" + "\n".join(changed[:40])


if __name__ == "__main__" and "--update" in sys.argv:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        report = default_report(Path(tmp))
    report["generated_at"] = "(golden)"
    GOLDEN.write_bytes(gzip.compress(json.dumps(report, indent=2, sort_keys=True).encode(), mtime=0))
    print(f"wrote {GOLDEN}")
