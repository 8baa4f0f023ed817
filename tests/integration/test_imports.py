"""The harness in a fresh interpreter: what importing a part pulls in, and what does not depend
on the process (hash seeds)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from harness.tools.naming import ToolNamer
from tests.helpers.realworld import REALWORLD
from tests.unit.tools.test_naming import NASTY_PAIRS

RAW = REALWORLD / "raw"
ROOT = Path(__file__).resolve().parents[2]


def test_auditing_loads_no_transport_and_no_tool_runner() -> None:
    """In a fresh interpreter: an audit imports neither an HTTP client nor the agent loop that runs tools."""
    code = (
        "import sys; from harness.analysis.audit import audit_paths; audit_paths([sys.argv[1]]); "
        "print([m for m in sys.modules if m.split('.')[0] in ('httpx', 'vcr', 'mcp') "
        "or m.startswith(('harness.agent', 'harness.tools', 'harness.transport', 'harness.runner', "
        "'harness.transport.cassette'))])"
    )
    out = subprocess.run([sys.executable, "-c", code, str(RAW)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_same_names_in_another_process() -> None:
    """No salted hash(): a fresh interpreter with another hash seed gives the same table."""
    code = (
        "import json, sys; from harness.tools.naming import ToolNamer; "
        "pairs = [tuple(p) for p in json.loads(sys.argv[1])]; "
        "print(json.dumps(ToolNamer(pairs, 'openai').mapping(), sort_keys=True))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-c", code, json.dumps(NASTY_PAIRS)]
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    here = {name: list(pair) for name, pair in ToolNamer(NASTY_PAIRS, "openai").mapping().items()}
    assert json.loads(out) == here
