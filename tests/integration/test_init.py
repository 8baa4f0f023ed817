"""``harness init`` in an empty folder, then the commands it prints, then the CI workflow's gate:
all green against the simulator, offline. It asks on a terminal, refuses without one, and never
writes over a file."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

from tests.helpers.cli import REPO

HARNESS = [sys.executable, "-m", "harness"]


def harness(
    *args: str, cwd: Path, stdin: int | None = subprocess.DEVNULL
) -> subprocess.CompletedProcess[str]:
    """``python -m harness ARGS`` in ``cwd`` with no terminal on stdin (as in CI)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"}
    return subprocess.run(
        [*HARNESS, *args], cwd=cwd, stdin=stdin, capture_output=True, text=True, timeout=300, env=env
    )


def printed_commands(stdout: str) -> list[list[str]]:
    """The commands ``harness init`` says to run next (the indented lines)."""
    return [shlex.split(line) for line in stdout.splitlines() if line.startswith("  harness ")]


def test_init_then_the_printed_commands_then_the_ci_gate_run_green(tmp_path: Path) -> None:
    made = harness("init", "--profile", "openai", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    commands = printed_commands(made.stdout)
    assert len(commands) == 3, made.stdout
    for words in commands:
        assert words[0] == "harness"
        ran = harness(*words[1:], cwd=tmp_path)
        assert ran.returncode == 0, f"{' '.join(words)}\n{ran.stdout[-2000:]}{ran.stderr[-2000:]}"
    report = json.loads((tmp_path / "reports" / "report.json").read_text())
    assert list(report["summary"]["targets"]) == ["sim-my-openai"]
    assert {run["target"] for run in report["runs"]} == {"sim-my-openai"}
    assert {run["category"] for run in report["runs"]} == {
        "single", "parallel", "sequential", "multi_turn", "error", "irrelevance", "tool_choice"
    }  # fmt: skip
    assert all(run["score"] == 100 for run in report["runs"]), [
        r for r in report["runs"] if r["score"] != 100
    ]
    assert (tmp_path / "harness-baseline.json").is_file()
    workflow = yaml.safe_load((tmp_path / ".github/workflows/harness.yml").read_text())
    (gate,) = [s["run"] for s in workflow["jobs"]["harness"]["steps"] if "--baseline" in s.get("run", "")]
    ran = harness(*shlex.split(gate)[1:], cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]


def test_without_a_terminal_the_profile_is_required(tmp_path: Path) -> None:
    made = harness("init", cwd=tmp_path)
    assert made.returncode == 2
    assert "--profile" in made.stderr and "openai" in made.stderr
    assert list(tmp_path.iterdir()) == []


def test_nothing_is_overwritten_and_each_file_that_exists_is_named(tmp_path: Path) -> None:
    (tmp_path / "harness.toml").write_text("# mine\n")
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "harness.yml").write_text("mine\n")
    made = harness("init", "--profile", "groq", cwd=tmp_path)
    assert made.returncode == 2
    assert "harness.toml" in made.stderr and "harness.yml" in made.stderr
    assert not (tmp_path / "scenarios").exists()
    assert (tmp_path / "harness.toml").read_text() == "# mine\n"


def test_on_a_terminal_it_asks_for_the_profile_and_the_model(tmp_path: Path) -> None:
    """A real pseudo-terminal on stdin: the two answers typed become the target."""
    import pty

    parent, child = pty.openpty()
    try:
        os.write(parent, b"mistral\nmistral-large-latest\n")
        made = harness("init", cwd=tmp_path, stdin=child)
    finally:
        os.close(child)
        os.close(parent)
    assert made.returncode == 0, made.stderr
    config = (tmp_path / "harness.toml").read_text()
    assert '[targets.my-mistral]\nprofile = "mistral"\nmodel = "mistral-large-latest"' in config
